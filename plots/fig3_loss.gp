# Paper Fig. 3(b)/(d): loss f(w) = w'Hw/2 against iteration, log y. Thin grey lines:
# every Adam run of the learning-rate grid; thick: GD at 2/(L+mu), blockwise GD,
# the best Adam of the grid and Adam-mini (best of its grid).
# Variables: res, problem ('full' or 'h1'), out.
set terminal pngcairo size 900,600 font ",11"
set output out
set datafile separator ","
set key autotitle columnhead
file = res.'/loss_'.problem.'.csv'
grid = res.'/grid_'.problem.'_adam.csv'
lrs = res.'/lrs.csv'
ngrid = int(system(sprintf("head -1 %s | awk -F, '{print NF - 1}'", grid)))
lr_of(m) = system(sprintf("awk -F, '$1==\"%s\" && $2==\"%s\"{printf \"%%.3g\", $3}' %s", problem, m, lrs))
set logscale y
set format y "10^{%T}"
set yrange [1e-20:*]
set xlabel "iteration t"
set ylabel "loss f(w_t) = w_t'Hw_t / 2"
set grid ytics lc rgb "#dddddd"
set key bottom right opaque box
if (problem eq 'full') {
    set title "Fig. 3(b): the full three-block problem (Adam, Adam-mini: {/Symbol b}_1 = 0, {/Symbol b}_2 {/Symbol \256} 1)"
    plot for [i=2:ngrid+1] grid using 1:i with lines lw 0.6 lc rgb "#c8c8c8" notitle, \
         NaN with lines lw 0.6 lc rgb "#c8c8c8" title "Adam, every lr of the grid", \
         file using 1:2 with lines lw 2.5 lc rgb "#377eb8" title "GD, lr = 2/(L+{/Symbol m}) = ".lr_of("gd"), \
         file using 1:3 with lines lw 2.5 lc rgb "#1b9e77" title "blockwise GD, lr_l = 2/(L_l+{/Symbol m}_l)", \
         file using 1:4 with lines lw 2.5 lc rgb "#d95f02" title "Adam, best lr = ".lr_of("adam"), \
         file using 1:5 with lines lw 2 dt 2 lc rgb "#7b3294" title "Adam-mini (3 blocks), best lr = ".lr_of("adam_mini")
} else {
    set title "Fig. 3(d): the sub-problem H_1 alone (Adam, Adam-mini: {/Symbol b}_1 = 0, {/Symbol b}_2 {/Symbol \256} 1)"
    plot for [i=2:ngrid+1] grid using 1:i with lines lw 0.6 lc rgb "#c8c8c8" notitle, \
         NaN with lines lw 0.6 lc rgb "#c8c8c8" title "Adam, every lr of the grid", \
         file using 1:2 with lines lw 2.5 lc rgb "#377eb8" title "GD, lr = 2/(L+{/Symbol m}) = ".lr_of("gd"), \
         file using 1:3 with lines lw 2.5 lc rgb "#d95f02" title "Adam, best lr = ".lr_of("adam"), \
         file using 1:4 with lines lw 2 dt 2 lc rgb "#7b3294" title "Adam-mini (1 block), best lr = ".lr_of("adam_mini")
}
