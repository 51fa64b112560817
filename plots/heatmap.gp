# One block of an exact Hessian at full resolution (tools/heatmap):
# |H| in log colour, in the style of fig6.gp; solid lines: heads (or output
# neurons, or tensor boundaries for an index range), dotted: the output neurons
# inside the heads.
# Arguments (gnuplot -c heatmap.gp RES OUT, as heatmap runs it: data, never
# code): the heatmap output folder and the PNG path. The folder's name is used
# only through variables (no eval of it), so no character in it can run anything.
res = ARG1
out = ARG2
load res.'/plotvars.gp'
big = (npr > npc ? npr : npc)
side = big + 160 > 620 ? big + 160 : 620
set terminal pngcairo size side, side + 60 font ",9"
set output out
set title title_text."\n{/*0.9 ".sub1."}\n{/*0.85 ".sub2."}"
set size ratio -1
set xrange [-0.5:npc-0.5]
set yrange [npr-0.5:-0.5]
set xlabel (factor > 1 ? sprintf("column in the block / %d", factor) : "column in the block")
set ylabel (factor > 1 ? sprintf("row in the block / %d", factor) : "row in the block")
set logscale cb
set cbrange [cbmin:cbmax]
set format cb "10^{%L}"
set cblabel (factor > 1 ? "|H| (pooled)" : "|H|")
set palette maxcolors 64
set palette defined (0 "#000004", 1 "#3b0f70", 2 "#8c2981", 3 "#de4968", 4 "#fe9f6d", 5 "#fcfdbf")
set datafile separator ","
unset key
clamp(v) = v < cbmin ? cbmin : v
heat = res.'/heat.csv'
cmin = res.'/bounds_cols_minor.csv'
rmin = res.'/bounds_rows_minor.csv'
cmaj = res.'/bounds_cols_major.csv'
rmaj = res.'/bounds_rows_major.csv'
cmd = "plot heat matrix using 1:2:(clamp($3)) with image"
minor_style = " with vectors nohead lc rgb '#30ffffff' lw 0.8 dt (2,2)"
major_style = " with vectors nohead lc rgb '#00c8ff' lw 1.0"
if (has_cmin) cmd = cmd.", cmin using 1:(-0.5):(0):(npr) every ::1".minor_style
if (has_rmin) cmd = cmd.", rmin using (-0.5):1:(npc):(0) every ::1".minor_style
if (has_cmaj) cmd = cmd.", cmaj using 1:(-0.5):(0):(npr) every ::1".major_style
if (has_rmaj) cmd = cmd.", rmaj using (-0.5):1:(npc):(0) every ::1".major_style
eval(cmd)
