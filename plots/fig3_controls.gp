# The negative controls of Fig. 3's claims, as loss curves (log y): (1) a homogeneous H
# (three blocks from {1,2,3}): GD at 2/(L+mu) vs Adam; (2) a diagonal block with eigenvalues
# from all three sets: GD vs Adam; (3) blockwise GD on H's blocks and on a random partition
# of the coordinates vs Adam. In each the claim must not hold. Variables: res, out.
set terminal pngcairo size 1400,480 font ",10"
set output out
set datafile separator ","
set key autotitle columnhead
lrs = res.'/lrs.csv'
lr_of(p, m) = system(sprintf("awk -F, '$1==\"%s\" && $2==\"%s\"{printf \"%%.3g\", $3; exit}' %s", p, m, lrs))
set logscale y
set format y "10^{%T}"
set yrange [1e-20:*]
set xlabel "iteration t"
set grid ytics lc rgb "#dddddd"
set key bottom left opaque box
set multiplot layout 1,3 title "Negative controls of Fig. 3's claims (Adam: {/Symbol b}_1 = 0, {/Symbol b}_2 {/Symbol \256} 1, best lr of its grid)"
set title "(1) homogeneous H: Adam must not beat GD"
set ylabel "loss f(w_t)"
plot res.'/loss_homogeneous.csv' using 1:2 with lines lw 2.5 lc rgb "#377eb8" title "GD, 2/(L+{/Symbol m}) = ".lr_of("homogeneous", "gd"), \
     '' using 1:3 with lines lw 2.5 lc rgb "#d95f02" title "Adam, lr ".lr_of("homogeneous", "adam")
set title "(2) diagonal block, eigenvalues from all sets: GD must not beat Adam"
unset ylabel
plot res.'/loss_diag_spread.csv' using 1:2 with lines lw 2.5 lc rgb "#377eb8" title "GD, 2/(L+{/Symbol m}) = ".lr_of("diag_spread", "gd"), \
     '' using 1:3 with lines lw 2.5 lc rgb "#d95f02" title "Adam, lr ".lr_of("diag_spread", "adam")
set title "(3) random partition: its blockwise GD must not beat Adam"
plot res.'/loss_full.csv' using 1:6 with lines lw 2.5 lc rgb "#7b3294" title "blockwise GD, random partition", \
     '' using 1:3 with lines lw 1.5 dt 2 lc rgb "#1b9e77" title "blockwise GD, H's blocks (the claim)", \
     '' using 1:4 with lines lw 2.5 lc rgb "#d95f02" title "Adam, lr ".lr_of("full", "adam")
unset multiplot
