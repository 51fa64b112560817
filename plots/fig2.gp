# Paper Fig. 2: |H| of the 8-neuron MLP at one checkpoint, pooled, log colour,
# with the hidden-neuron block boundaries.
# Variables: res (results folder), tag (init | mid | end | pNNN), out (PNG path).
load res.'/plotvars_'.tag.'.gp'
set terminal pngcairo size 640,700 font ",9"
set output out
set title title_text."\n{/*0.9 ".sub1."}\n{/*0.85 ".sub2."}"
set size ratio -1
set xrange [-0.5:npx-0.5]
set yrange [npx-0.5:-0.5]
set xlabel sprintf("parameter index / %d", factor)
set ylabel sprintf("parameter index / %d", factor)
set logscale cb
set cbrange [cbmin:cbmax]
set format cb "10^{%L}"
set cblabel "|H| (pooled)"
set palette defined (0 "#000004", 1 "#3b0f70", 2 "#8c2981", 3 "#de4968", 4 "#fe9f6d", 5 "#fcfdbf")
set datafile separator ","
unset key
clamp(v) = v < cbmin ? cbmin : v
plot res.'/heat_'.tag.'.csv' matrix using 1:2:(clamp($3)) with image, \
     res.'/bounds.csv' using 1:(-0.5):(0):(npx) every ::1 with vectors nohead lc rgb "#00c8ff" lw 0.8 dt 2, \
     res.'/bounds.csv' using (-0.5):1:(npx):(0) every ::1 with vectors nohead lc rgb "#00c8ff" lw 0.8 dt 2
