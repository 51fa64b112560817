# Paper Fig. 6: |H_tt| of one parameter block of the 1-layer Transformer at 1%
# of training, log colour, with the claimed split's boundaries (solid: heads,
# output neurons or tokens) and, for query/key/value, the output neurons inside
# each head (dotted).
# Variables: res (results folder), blk (query | key | value | attn_proj |
# mlp_fc1 | mlp_proj | embed | output), out (PNG path).
load res.'/plotvars_'.blk.'.gp'
set terminal pngcairo size 620,680 font ",9"
set output out
set title title_text."\n{/*0.9 ".sub1."}\n{/*0.85 ".sub2."}"
set size ratio -1
set xrange [-0.5:npx-0.5]
set yrange [npx-0.5:-0.5]
set xlabel (factor > 1 ? sprintf("parameter index in the block / %d", factor) : "parameter index in the block (row-major (out, in))")
set ylabel (factor > 1 ? sprintf("parameter index in the block / %d", factor) : "parameter index in the block")
set logscale cb
set cbrange [cbmin:cbmax]
set format cb "10^{%L}"
set cblabel (factor > 1 ? "|H| (max-pooled)" : "|H|")
set palette maxcolors 64
set palette defined (0 "#000004", 1 "#3b0f70", 2 "#8c2981", 3 "#de4968", 4 "#fe9f6d", 5 "#fcfdbf")
set datafile separator ","
unset key
clamp(v) = v < cbmin ? cbmin : v
major = res.'/bounds_'.blk.'_major.csv'
minor = res.'/bounds_'.blk.'_minor.csv'
if (has_minor) {
plot res.'/heat_'.blk.'.csv' matrix using 1:2:(clamp($3)) with image, \
     minor using 1:(-0.5):(0):(npx) every ::1 with vectors nohead lc rgb "#30ffffff" lw 0.8 dt (2,2), \
     minor using (-0.5):1:(npx):(0) every ::1 with vectors nohead lc rgb "#30ffffff" lw 0.8 dt (2,2), \
     major using 1:(-0.5):(0):(npx) every ::1 with vectors nohead lc rgb "#00c8ff" lw major_lw, \
     major using (-0.5):1:(npx):(0) every ::1 with vectors nohead lc rgb "#00c8ff" lw major_lw
} else {
plot res.'/heat_'.blk.'.csv' matrix using 1:2:(clamp($3)) with image, \
     major using 1:(-0.5):(0):(npx) every ::1 with vectors nohead lc rgb "#6000c8ff" lw major_lw, \
     major using (-0.5):1:(npx):(0) every ::1 with vectors nohead lc rgb "#6000c8ff" lw major_lw
}
