/* hview — naming and cutting one block of a saved Hessian, for the heatmap
 * program: the parameter layout read back from a run's tensors.csv, a block
 * named the way partitions name theirs, and the lines inside it. */
#ifndef HVIEW_H
#define HVIEW_H

#include "hessian/hessian.h"

/* A layout-only model (tensor table and P; no parameters, no functions) from a
 * tensors.csv "index,name,role,offset,rows,cols,heads,layer" as fig6 and
 * hessian_blocks write it. User error on a malformed file. Free with model_free. */
model *layout_read(const char *path);

/* The parameters a spec names, as a block (start, n, stride; tensor, or -1 for a
 * range across tensors):
 *   NAME            a whole tensor, e.g. h0.attn.query, fc1
 *   NAME[head h]    one head of a query/key/value tensor
 *   NAME[row r]     an output neuron (a token of embed/output, a position of pos)
 *   NAME[col c]     an input neuron (strided: every cols-th entry)
 *   i0:i1           the indices i0..i1-1
 * (the names partition_alg3 and friends give their blocks). User error otherwise. */
block block_named(const model *layout, const char *spec);

/* The lines to draw inside block b (stride 1; none for a strided block), as
 * partitions of b's indices: major = tensor boundaries for a range across
 * tensors, heads for a query/key/value tensor, rows for another matrix (only
 * if it has at most max_lines rows); minor = rows inside the heads of a
 * query/key/value tensor or head. NULL where there are none. */
void block_lines(const model *layout, const block *b, int max_lines, partition **major, partition **minor);

/* 1 if every index of `inner` is an index of `outer`; then pos[e] (inner->n) =
 * the position of inner's entry e in outer. */
int block_inside(const block *outer, const block *inner, size_t *pos);

#endif
