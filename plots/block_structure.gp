# Block structure of the tiny Transformer's Hessian through early training
# (block_structure): the off-diagonal excess of each Fig. 6 block's claimed
# split against the training step, mean over the runs with their min-max band,
# and the same statistic on the permuted H_tt (the negative control, grey).
# Left: class 2 of the paper (attn.proj, mlp.fc_1, mlp.proj by output neurons),
# the claim block_structure.neurons_together; right: the other blocks.
# Variables: bands (a bands.csv of block_structure --bands-of), runs_text
# (e.g. "5 seeds"), out (PNG path); llama = 1 (optional): the Llama-style
# model's tensor names (block_structure --model llama) in the legends.
if (!exists("llama")) llama = 0
# the legend of each Fig. 6 block: the GPT's tensor and split, or the Llama's
lbl(gpt, ll) = llama ? ll : gpt
set terminal pngcairo size 1100,540 font ",9"
set output out
set datafile separator ","
set multiplot layout 1,2 title "Off-diagonal excess of the Fig. 6 splits through training (".runs_text.": mean, band min-max; grey: permuted H)\n{/*0.85 e = (s - q)/(1 - q): s = share of H_{tt}'s off-diagonal squared mass inside the blocks, q = the same for random blocks; 0 random, 1 block-diagonal}"
set xlabel "training step (AdamW, 1,000 steps; 10 = 1%)"
set ylabel "off-diagonal excess e"
set yrange [-0.1:1.05]
set grid ytics lc rgb "#e0e0e0"
set key outside bottom center horizontal maxcols 3 font ",8"   # below: no band under it
set bmargin 7
sel(name, col) = strcol(1) eq name ? column(col) : NaN
thr = 0.5

set title "class 2: by output neurons (the claim: all three >= 0.5 at one step)"
plot bands using 3:(sel("attn_proj", 11)):(sel("attn_proj", 12)) with filledcurves lc rgb "#d0d0d0" fs transparent solid 0.5 notitle, \
     bands using 3:(sel("mlp_fc1", 11)):(sel("mlp_fc1", 12)) with filledcurves lc rgb "#d0d0d0" fs transparent solid 0.5 notitle, \
     bands using 3:(sel("mlp_proj", 11)):(sel("mlp_proj", 12)) with filledcurves lc rgb "#d0d0d0" fs transparent solid 0.5 notitle, \
     bands using 3:(sel("attn_proj", 10)) with lines lc rgb "#a0a0a0" lw 1 notitle, \
     bands using 3:(sel("mlp_fc1", 10)) with lines lc rgb "#a0a0a0" lw 1 notitle, \
     bands using 3:(sel("mlp_proj", 10)) with lines lc rgb "#a0a0a0" lw 1 title "permuted H (mean, min-max)", \
     bands using 3:(sel("attn_proj", 6)):(sel("attn_proj", 7)) with filledcurves lc rgb "#1f77b4" fs transparent solid 0.25 notitle, \
     bands using 3:(sel("mlp_fc1", 6)):(sel("mlp_fc1", 7)) with filledcurves lc rgb "#d62728" fs transparent solid 0.25 notitle, \
     bands using 3:(sel("mlp_proj", 6)):(sel("mlp_proj", 7)) with filledcurves lc rgb "#2ca02c" fs transparent solid 0.25 notitle, \
     bands using 3:(sel("attn_proj", 5)):xtic(2) with linespoints lc rgb "#1f77b4" lw 2 pt 7 ps 0.6 title lbl("attn.proj (16 neurons)", "o\\_proj"), \
     bands using 3:(sel("mlp_fc1", 5)) with linespoints lc rgb "#d62728" lw 2 pt 7 ps 0.6 title lbl("mlp.fc\\_1 (32 neurons)", "gate\\_proj"), \
     bands using 3:(sel("mlp_proj", 5)) with linespoints lc rgb "#2ca02c" lw 2 pt 7 ps 0.6 title lbl("mlp.proj (16 neurons)", "down\\_proj"), \
     thr with lines lc rgb "#606060" dt 2 title "rule: 0.5"

set title "the other blocks (query/key by heads, value by neurons, embed/output by tokens)"
plot bands using 3:(sel("query", 6)):(sel("query", 7)) with filledcurves lc rgb "#9467bd" fs transparent solid 0.2 notitle, \
     bands using 3:(sel("key", 6)):(sel("key", 7)) with filledcurves lc rgb "#8c564b" fs transparent solid 0.2 notitle, \
     bands using 3:(sel("value", 6)):(sel("value", 7)) with filledcurves lc rgb "#ff7f0e" fs transparent solid 0.2 notitle, \
     bands using 3:(sel("embed", 6)):(sel("embed", 7)) with filledcurves lc rgb "#17becf" fs transparent solid 0.2 notitle, \
     bands using 3:(sel("output", 6)):(sel("output", 7)) with filledcurves lc rgb "#7f7f7f" fs transparent solid 0.2 notitle, \
     bands using 3:(sel("query", 5)):xtic(2) with linespoints lc rgb "#9467bd" lw 2 pt 7 ps 0.6 title lbl("query (4 heads)", "q\\_proj (heads)"), \
     bands using 3:(sel("key", 5)) with linespoints lc rgb "#8c564b" lw 2 pt 7 ps 0.6 title lbl("key (4 heads)", "k\\_proj (kv heads)"), \
     bands using 3:(sel("value", 5)) with linespoints lc rgb "#ff7f0e" lw 2 pt 7 ps 0.6 title lbl("value (16 neurons)", "v\\_proj (neurons)"), \
     bands using 3:(sel("embed", 5)) with linespoints lc rgb "#17becf" lw 2 pt 7 ps 0.6 title lbl("embed (8 tokens)", "embed\\_tokens (tokens)"), \
     bands using 3:(sel("output", 5)) with linespoints lc rgb "#7f7f7f" lw 2 pt 7 ps 0.6 title lbl("output (8 tokens)", "lm\\_head (tokens)"), \
     thr with lines lc rgb "#606060" dt 2 title "rule: 0.5"
unset multiplot
