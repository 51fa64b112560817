# The MLP's Hessian through training against the softmax factor p(1-p)
# (mlp_steps; paper Fig. 2(a), App. "More Discussions" after Collobert 2004).
# (a) the hidden-neuron blocks' off-diagonal excess e against the step (the
#     claims "block-diagonal after 1 step" and "appears within the first 10
#     steps"), grey: the same blocks on a random permutation;
# (b) p(1-p) (mean over the evaluation batch and the classes) over its value at
#     step 0 (the claim "p(1-p) shrinks");
# (c) the off-block mass 1 - e (over its mean for random blocks), log scale
#     (the claim "falls with p(1-p)"; the squared-loss twin is its control);
# (d) e at initialisation for tanh and ReLU, cross-entropy and squared loss
#     (the claim "the softmax factor makes H block-diagonal"; ReLU the control).
# Red: 100 classes, blue: 10; solid: cross-entropy, dashed: squared-loss twin.
# Variables: runs (run folders, space-separated: one line per run), runs_text
# (e.g. "seed 1", "5 seeds (1-5)"), out (PNG path).
set terminal pngcairo size 1200,900 font ",9"
set output out
set datafile separator ","
set multiplot layout 2,2 title "The MLP's Hessian through training and the softmax factor p(1-p) (8 tanh neurons, Adam lr 1e-4, 7,900 steps; synthetic 3x32x32 images; ".runs_text.")\n{/*0.85 e = (s - q)/(1 - q): s = share of the hidden layer's off-diagonal squared Hessian mass inside the neuron blocks, q = the same for random blocks; 0 random, 1 block-diagonal}"
xs(s) = s == 0 ? 0.5 : s
sel(c, l, col) = (column(1) == c && strcol(2) eq l) ? column(col) : NaN
set logscale x
set xrange [0.4:12000]
set xtics ("0" 0.5, "1" 1, "2" 2, "5" 5, "10" 10, "100" 100, "1000" 1000, "7900" 7900)
set grid xtics ytics lc rgb "#e0e0e0"
set xlabel "training step"
red = "#c0392b"; redl = "#e6a198"; blue = "#1f5fa8"; bluel = "#97b6dc"

set title "(a) off-diagonal excess e of the hidden-neuron blocks"
set ylabel "e"
set yrange [-0.1:1.05]
unset key   # the key of (a), (b) and (c) stands in (b), where no curve runs under it
plot for [d in runs] d."/steps.csv" using (xs($3)):(sel(100, "xent", 11)) with linespoints lc rgb red lw 2 pt 7 ps 0.5, \
     for [d in runs] d."/steps.csv" using (xs($3)):(sel(100, "squared", 11)) with linespoints lc rgb redl lw 1.5 dt 2 pt 6 ps 0.5, \
     for [d in runs] d."/steps.csv" using (xs($3)):(sel(10, "xent", 11)) with linespoints lc rgb blue lw 2 pt 7 ps 0.5, \
     for [d in runs] d."/steps.csv" using (xs($3)):(sel(10, "squared", 11)) with linespoints lc rgb bluel lw 1.5 dt 2 pt 6 ps 0.5, \
     for [d in runs] d."/steps.csv" using (xs($3)):(strcol(2) eq "xent" ? $13 : NaN) with points lc rgb "#a0a0a0" pt 1 ps 0.5, \
     0.5 with lines lc rgb "#606060" dt 3

set title "(b) p(1-p) over its value at step 0 (claim, 100 classes: <= 0.5 at the end)"
set ylabel "p(1-p) / p(1-p) at step 0"
set yrange [0:1.1]
set key bottom left at graph 0.02, 0.08 font ",8"
plot for [d in runs] d."/steps.csv" using (xs($3)):(sel(100, "xent", 7)) with linespoints lc rgb red lw 2 pt 7 ps 0.5 notitle, \
     for [d in runs] d."/steps.csv" using (xs($3)):(sel(100, "squared", 7)) with linespoints lc rgb redl lw 1.5 dt 2 pt 6 ps 0.5 notitle, \
     for [d in runs] d."/steps.csv" using (xs($3)):(sel(10, "xent", 7)) with linespoints lc rgb blue lw 2 pt 7 ps 0.5 notitle, \
     for [d in runs] d."/steps.csv" using (xs($3)):(sel(10, "squared", 7)) with linespoints lc rgb bluel lw 1.5 dt 2 pt 6 ps 0.5 notitle, \
     NaN with linespoints lc rgb red lw 2 pt 7 title "100 classes, cross-entropy", \
     NaN with linespoints lc rgb redl lw 1.5 dt 2 pt 6 title "100 classes, squared loss", \
     NaN with linespoints lc rgb blue lw 2 pt 7 title "10 classes, cross-entropy", \
     NaN with linespoints lc rgb bluel lw 1.5 dt 2 pt 6 title "10 classes, squared loss", \
     NaN with points lc rgb "#a0a0a0" pt 1 title "(a): the blocks on a random permutation", \
     0.5 with lines lc rgb "#606060" dt 3 title "rule: 0.5"

set title "(c) off-block mass 1 - e (claim, 10 classes: falls with p(1-p); control: squared twin)"
set ylabel "1 - e (off-block mass over its mean for random blocks)"
set logscale y
set yrange [*:*]
plot for [d in runs] d."/steps.csv" using (xs($3)):(sel(100, "xent", 12)) with linespoints lc rgb red lw 2 pt 7 ps 0.5 notitle, \
     for [d in runs] d."/steps.csv" using (xs($3)):(sel(100, "squared", 12)) with linespoints lc rgb redl lw 1.5 dt 2 pt 6 ps 0.5 notitle, \
     for [d in runs] d."/steps.csv" using (xs($3)):(sel(10, "xent", 12)) with linespoints lc rgb blue lw 2 pt 7 ps 0.5 notitle, \
     for [d in runs] d."/steps.csv" using (xs($3)):(sel(10, "squared", 12)) with linespoints lc rgb bluel lw 1.5 dt 2 pt 6 ps 0.5 notitle
unset logscale

set title "(d) e at step 0, the same weights (claim: cross-entropy - squared >= 0.1; control: ReLU)"
set ylabel "e at step 0"
set xlabel "activation and loss (CE: cross-entropy, sq: squared loss)"
set yrange [-0.1:1.05]
set xrange [0.3:10.7]
set xtics ("tanh CE" 1, "tanh sq" 2, "ReLU CE" 3.3, "ReLU sq" 4.3, "tanh CE" 6.7, "tanh sq" 7.7, "ReLU CE" 9, "ReLU sq" 10) font ",8"
set label 1 "100 classes" at 2.65,1.0 center
set label 2 "10 classes" at 8.35,1.0 center
xpos(c, a, l) = (c == 10 ? 5.7 : 0) + (a eq "relu" ? 3.3 : 1) + (l eq "squared" ? 1 : 0)
plot for [d in runs] d."/init.csv" using (xpos($1, strcol(2), strcol(3))):4:(column(1) == 100 ? 0xc0392b : 0x1f5fa8) with points pt 7 ps 1.2 lc rgb variable notitle
unset multiplot
