# Block heterogeneity past exact (make spectra-big): the paper's picture of
# "different parameter blocks have different Hessian eigenvalue distributions"
# at P = 1.06M by SLQ, next to the exact one at small size (P = 2,640).
# Top: densities of log10(|lambda|/lambda_ref) per Algorithm 3 block type,
# exact small (left) and SLQ big (right; every head block, 32 evenly spaced
# blocks of every other type). Bottom left: log10 |lambda|max per block by type,
# small exact and big SLQ. Bottom right: log10 |lambda|max per tensor
# (Algorithm 2) of the big model by SLQ, in parameter order.
# Variables: small (exact spectra folder), big (SLQ, alg3), tensors (SLQ, alg2), out.
set terminal pngcairo size 1500,1000 font ",9"
set output out
set datafile separator ","
get(dir, key) = system(sprintf("awk -F, '$1 == \"%s\" {print $2; exit}' %s/summary.csv", key, dir))
colors = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf #000000 #aec7e8"
do for [i=1:12] { set linetype i lc rgb word(colors, i) lw 1.6 }
set multiplot layout 2,2 title sprintf("Block heterogeneity: exact at P = %s against SLQ (n_v = %s x m = %s per block) at P = %s", \
    get(small, "P"), get(big, "probes"), get(big, "steps"), get(big, "P"))
set xrange [-8:0.5]
set xlabel "log_{10}(|{/Symbol l}| / |{/Symbol l}|_{ref})"
set ylabel "density per type"
set key top left font ",7" opaque
set grid xtics lc rgb "#e0e0e0"
do for [k=1:2] {
  d = k == 1 ? small : big
  f = d."/density_types.csv"
  stats f skip 1 nooutput
  ncol = STATS_columns
  set title sprintf("%s, P = %s, %s blocks: S = sd of log_{10} |{/Symbol l}|_{max} = %.2f decades", k == 1 ? "exact" : "SLQ", \
      get(d, "P"), get(d, "blocks"), real(get(d, "spread_sd_log10_abs_lambda_max")))
  plot for [i=2:ncol] f using 1:i with lines lt (i - 1) title columnhead(i) noenhanced
}
unset xrange
set title "log_{10} |{/Symbol l}|_{max}(H_{bb}) per Algorithm 3 block, by type"
set xlabel "block type"
set ylabel "log_{10} |{/Symbol l}|_{max}"
tics = system(sprintf("awk -F, 'NR > 1 { printf \"%%s\\\"%%s\\\" %%s\", (n++ ? \", \" : \"\"), $2, $1 }' %s/types.csv", small))
eval sprintf("set xtics (%s) rotate by -35 font \",7\" noenhanced", tics)
set key top right
plot small."/blocks.csv" using ($5 - 0.15):22 every ::1 with points pt 7 ps 0.6 lc rgb "#1f77b4" title sprintf("exact, P = %s", get(small, "P")), \
     big."/blocks.csv" using ($5 + 0.15):22 every ::1 with points pt 7 ps 0.6 lc rgb "#ff7f0e" title sprintf("SLQ, P = %s", get(big, "P"))
set title sprintf("log_{10} |{/Symbol l}|_{max} per tensor (Algorithm 2), SLQ, P = %s: S = %.2f decades", get(tensors, "P"), \
    real(get(tensors, "spread_sd_log10_abs_lambda_max")))
set xlabel "tensor (parameter order)"
set xtics auto norotate font ",8"
unset key
plot tensors."/blocks.csv" using 1:22 every ::1 with linespoints pt 7 ps 0.6 lc rgb "#ff7f0e"
unset multiplot
