# Why mean(v) works (vspread): Adam's per-coordinate learning-rate factor over
# Adam-mini's per-block one, log2((sqrt(mean_b v-hat) + eps)/(sqrt(v-hat_i) + eps)),
# per block type at each checkpoint of AdamW training: box from the 25th to
# the 75th percentile, whiskers 5th to 95th, line at the median; 0 is equal,
# the band +-1 is within a factor 2 (the claim's "close"). Biases are left
# out (Adam-mini keeps Adam's v for them).
# Variables: res (a vspread output folder), out (PNG path).
set terminal pngcairo size 1500,520 font ",9"
set output out
set datafile separator ","
f = res."/lr_ratio.csv"
steps = system(sprintf("awk -F, 'NR > 1 && $1 != prev {printf \"%%s \", $1; prev = $1}' %s", f))
nsteps = words(steps)
ntypes = int(system(sprintf("awk -F, 'NR > 1 {n++} END {print n}' %s", f))) / nsteps
at_step(s) = sprintf("< awk -F, '$1 == %s' %s", s, f)
sharesof(s) = system(sprintf("awk -F, '$1 == %s {n += $3; w += $3 * $9} END {printf \"%%.2f\", w / n}' %s", s, f))
set multiplot layout 1,nsteps title "Adam's learning rate over Adam-mini's (per-block mean of v-hat), per block type, along AdamW training\n{/*0.85 log_2 ratio: 0 equal, within the band: within a factor 2}"
set yrange [-3:6]
set xrange [-0.7:ntypes - 0.3]
set xtics rotate by -50 font ",7" noenhanced
set grid ytics lc rgb "#e0e0e0"
set style fill solid 0.35 border
set boxwidth 0.6
set ylabel "log_2(lr_{Adam} / lr_{Adam-mini})"
do for [k=1:nsteps] {
  s = word(steps, k)
  set title sprintf("step %s: %s within a factor 2", s, sharesof(s))
  plot -1 with filledcurves y1=1 lc rgb "#e8f0e8" notitle, \
       at_step(s) using 0:5:4:8:7:xtic(2) with candlesticks whiskerbars lc rgb "#1f77b4" notitle, \
       at_step(s) using 0:6:6:6:6 with candlesticks lc rgb "#000000" lw 2 notitle
  unset ylabel
}
unset multiplot
