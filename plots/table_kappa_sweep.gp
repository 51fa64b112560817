# The kappa table over training (table_kappa's sweep.csv): per checkpoint, the share of the
# measurable blocks of query, key, value, attn.proj, mlp.fc_1 and mlp.proj whose
# kappa(D M_b)/kappa(M_b) > 1 (top) and the median log10 of that ratio (bottom), for H (left)
# and its Gauss-Newton part G (right), D from the paper's Fig. 4 recipe and from AdamW's v-hat;
# dashed: the control (the same on the blocks' diagonal parts, tau = 1). With several runs
# (one per seed) the line is the mean over the seeds and the band their range.
# Variables: dirs (space-separated run folders holding sweep.csv), label (title text), out.
set terminal pngcairo size 1100,800 font ",10"
set output out
files = ""
do for [d in dirs] { files = files." ".d."/sweep.csv" }
nruns = words(dirs)
# rows "step mean min max" of column c for one reading, over the runs
agg(r, c) = sprintf("< awk -F, -v r=%s -v c=%d 'FNR > 1 && $4 == r { k = $1; n[k]++; s[k] += $c; \
  if (!(k in lo) || $c < lo[k]) lo[k] = $c; if (!(k in hi) || $c > hi[k]) hi[k] = $c } \
  END { for (k in n) print k, s[k] / n[k], lo[k], hi[k] }' %s | sort -g", r, c, files)
set multiplot layout 2,2 title sprintf("kappa(D M_b) vs kappa(M_b) on the blocks of the paper's table, over training (%s)", label)
set logscale x
set xrange [0.8:1250]
set xtics ("1" 1, "2" 2, "5" 5, "10 (1%%)" 10, "50" 50, "100" 100, "1000" 1000)
set grid ytics lc rgb "#dddddd"
set key opaque box font ",8" samplen 2 width -2
set style fill transparent solid 0.2 noborder
rec = "fig4 adam"
col = "#d95f02 #1b9e77"
name(k) = k == 1 ? "Fig. 4 recipe D = 1/|M_b x|" : "AdamW's v-hat"
do for [mat in "H G"] {
    set title sprintf("%s: share of blocks with kappa(D %s_b) > kappa(%s_b)", mat, mat, mat)
    set yrange [-0.03:1.03]
    set ylabel "share of blocks with ratio > 1"
    set xlabel ""
    set key at graph 0.98, graph 0.86 right top   # above AdamW's curve once it has fallen, below the recipe's
    set arrow 1 from graph 0, first 0.5 to graph 1, first 0.5 nohead dt 2 lc rgb "#555555"
    plot for [k=1:2] agg(word(rec, k).".".mat, 6) using 1:3:4 with filledcurves lc rgb word(col, k) notitle, \
         for [k=1:2] agg(word(rec, k).".".mat, 6) using 1:2 with linespoints pt 7 ps 0.8 lw 2 lc rgb word(col, k) \
             title name(k), \
         for [k=1:2] agg(word(rec, k).".".mat, 9) using 1:2 with lines dt 2 lw 1.5 lc rgb word(col, k) \
             title (k == 1 ? "control: diagonal parts (tau = 1)" : "")
    unset arrow 1
}
do for [mat in "H G"] {
    set title sprintf("%s: median over blocks of log10 kappa(D %s_b)/kappa(%s_b)", mat, mat, mat)
    set yrange [*:*]
    set ylabel "median log10 ratio (decades)"
    set xlabel "training step (of 1,000)"
    set key at graph 0.98, graph 0.55 right top   # between the two curves
    set arrow 2 from graph 0, first 0 to graph 1, first 0 nohead dt 2 lc rgb "#555555"
    plot for [k=1:2] agg(word(rec, k).".".mat, 7) using 1:3:4 with filledcurves lc rgb word(col, k) notitle, \
         for [k=1:2] agg(word(rec, k).".".mat, 7) using 1:2 with linespoints pt 7 ps 0.8 lw 2 lc rgb word(col, k) \
             title name(k)
    unset arrow 2
}
unset multiplot
