# Block heterogeneity (hetero): log10 |lambda|max(H_bb) of every Algorithm 3
# block in the model's parameter order, at initialisation, --checkpoint (1%)
# and the end of training, for the tiny Transformer (top) and the MLP
# (bottom); grey: the same at the checkpoint for the blocks of a random
# permutation of the same parameters with the same sizes (the control).
# Tick labels name the block type where it changes (not for the one-block
# LayerNorm and bias tensors between them).
# Variables: res (a hetero output folder), out (PNG path).
set terminal pngcairo size 1400,900 font ",9"
set output out
set datafile separator ","
f = res."/blocks.csv"
sel(model, point, col) = (strcol(1) eq model && strcol(2) eq point) ? column(col) : NaN
sdof(model, point, col) = system(sprintf("awk -F, '$1 == \"%s\" && $2 == \"%s\" {printf \"%%.2f\", $%d; exit}' %s/summary.csv", model, point, col, res))
# tics: the type's name at the first block of each run of that type
tics(model) = system(sprintf("awk -F, '$1 == \"%s\" && $2 == \"end\" { if ($6 != prev && $6 != \"bias tensor\" && $6 != \"norm tensor\") printf \"%%s\\\"%%s\\\" %%s\", (n++ ? \", \" : \"\"), $6, $4; prev = $6 }' %s", model, f))
nblocks(model) = system(sprintf("awk -F, '$1 == \"%s\" && $2 == \"end\"' %s | wc -l", model, f))
set multiplot layout 2,1 title "log_{10} |{/Symbol l}|_{max} of every Algorithm 3 block (one learning rate each) against random blocks of the same sizes"
set ylabel "log_{10} |{/Symbol l}|_{max}(H_{bb})"
set grid ytics lc rgb "#e0e0e0"
set key outside right top font ",8"
set xtics rotate by -45 font ",7" noenhanced
names = "tt mlp"
titles = "Transformer MLP"
do for [m=1:2] {
  mdl = word(names, m)
  eval sprintf("set xtics (%s)", tics(mdl))
  set title sprintf("%s: S = sd of these values: init %s, checkpoint %s, end %s (random blocks: %s, %s, %s)", word(titles, m), \
      sdof(mdl, "init", 6), sdof(mdl, "checkpoint", 6), sdof(mdl, "end", 6), sdof(mdl, "init", 9), sdof(mdl, "checkpoint", 9), sdof(mdl, "end", 9))
  set xlabel "block (parameter order)"
  set xrange [-1:nblocks(mdl)]
  plot f using 4:(sel(mdl, "checkpoint", 13)) with points pt 7 ps 0.5 lc rgb "#b0b0b0" title "random blocks (checkpoint)", \
       f using 4:(sel(mdl, "init", 12)) with linespoints pt 7 ps 0.5 lw 1 lc rgb "#1f77b4" title "initialisation", \
       f using 4:(sel(mdl, "checkpoint", 12)) with linespoints pt 7 ps 0.5 lw 1 lc rgb "#ff7f0e" title "checkpoint (1%)", \
       f using 4:(sel(mdl, "end", 12)) with linespoints pt 7 ps 0.5 lw 1 lc rgb "#2ca02c" title "end"
}
unset multiplot
