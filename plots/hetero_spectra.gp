# Block heterogeneity (hetero): the density of the eigenvalues of the
# Algorithm 3 blocks, one curve per block type, of the tiny Transformer (top)
# and the MLP (bottom) at initialisation, --checkpoint (1%) and the end of
# training. x: log10(|lambda| / lambda_ref), lambda_ref the largest |lambda| of
# the model's blocks at that point; each curve has area 1 over its type's
# eigenvalues above 1e-14 lambda_ref (smaller ones are zero to round-off).
# Variables: res (a hetero output folder), out (PNG path).
set terminal pngcairo size 1500,820 font ",9"
set output out
set datafile separator ","
colors = "#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf #000000 #aec7e8"
do for [i=1:12] { d = i > 6 ? 2 : 1; set linetype i lc rgb word(colors, i) lw 1.6 dashtype d }
stepof(model, point) = system(sprintf("awk -F, '$1 == \"%s\" && $2 == \"%s\" {print $3; exit}' %s/summary.csv", model, point, res))
sdof(model, point) = system(sprintf("awk -F, '$1 == \"%s\" && $2 == \"%s\" {printf \"%%.2f\", $6; exit}' %s/summary.csv", model, point, res))
set multiplot layout 2,3 title "Eigenvalue densities of the Algorithm 3 blocks by block type (log scale)\n{/*0.85 S = sd over the blocks of log_{10} |{/Symbol l}|_{max}(H_{bb}), decades: the spread the blocks' learning rates must cover}"
set xrange [-14:0.5]
set xlabel "log_{10}(|{/Symbol l}| / |{/Symbol l}|_{ref})"
set ylabel "density per type"
set grid xtics lc rgb "#e0e0e0"
set key top left font ",7" opaque
names = "tt mlp"
titles = "Transformer MLP"
points = "init checkpoint end"
ptitles = "initialisation|checkpoint|end"
do for [m=1:2] {
  do for [p=1:3] {
    f = sprintf("%s/density_%s_%s.csv", res, word(names, m), word(points, p))
    stats f skip 1 nooutput
    ncol = STATS_columns
    set title sprintf("%s, %s (step %s): S = %s", word(titles, m) . (m == 2 ? " (mlp_fc: hidden layer, mlp_proj: classifier)" : ""), word(points, p), stepof(word(names, m), word(points, p)), sdof(word(names, m), word(points, p))) noenhanced
    plot for [i=2:ncol] f using 1:i with lines lt (i - 1) title columnhead(i) noenhanced
  }
}
unset multiplot
