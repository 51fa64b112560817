# How wrong SLQ is per block, against the exact block spectra (make
# spectra-check): median (solid) and worst (dashed) over every block, both
# models and all checkpoints, of the relative error of lambda max (top) and of
# the Wasserstein-1 distance between the SLQ and the exact spectral measure,
# over |lambda|max (bottom), against the Lanczos steps m, one colour per probe
# count n_v; one column per partition (Algorithm 3 blocks, Algorithm 2 tensors,
# the whole model). Errors of 0 are drawn at 1e-17.
# Variables: res (a spectra_check output folder), out (PNG path).
set terminal pngcairo size 1500,820 font ",9"
set output out
set datafile separator ","
set logscale y
set logscale x 2
set format y "10^{%L}"
set grid lc rgb "#e0e0e0"
colors = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b"
parts = "alg3 alg2 whole"
ptitles = "Algorithm 3 blocks|Algorithm 2 tensors|the whole model"
nvs = system(sprintf("head -1 %s/curves_alg3.csv | tr ',' '\\n' | grep '^lmax_median_nv' | sed 's/lmax_median_nv//' | tr '\\n' ' '", res))
nn = words(nvs)
set multiplot layout 2,3 title "SLQ against the exact block spectra: median (solid) and worst (dashed) over blocks, models and checkpoints"
do for [row=1:2] {
  do for [p=1:3] {
    f = sprintf("%s/curves_%s.csv", res, word(parts, p))
    if (system(sprintf("test -s %s && echo 1 || echo 0", f)) eq "1") {
      set title sprintf("%s: %s", system(sprintf("echo '%s' | cut -d'|' -f%d", ptitles, p)), row == 1 ? "|{/Symbol l}_{max} error| / |{/Symbol l}|_{max}" : "W_1(SLQ, exact) / |{/Symbol l}|_{max}")
      set xlabel "Lanczos steps m"
      set key bottom left font ",8"
      base = row == 1 ? 1 : 1 + 2 * nn
      plot for [i=1:nn] f using 1:(column(base + i)) with linespoints lw 1.6 pt 7 ps 0.6 lc rgb word(colors, i) title sprintf("n_v = %s", word(nvs, i)), \
           for [i=1:nn] f using 1:(column(base + nn + i)) with lines lw 1 dt 2 lc rgb word(colors, i) notitle
    } else {
      set multiplot next
    }
  }
}
unset multiplot
