/* stream — the block analysis of H streamed panel by panel, never holding H.
 *
 * The full-H path (hessian_full, then block_extract / mass_ratio / block_analyze /
 * heatmap_pool) needs P² doubles. Everything it reports is a sum or a maximum
 * over the rows of H, so it can be accumulated while the engine produces the
 * rows panel by panel: the diagonal blocks H_bb of a partition, ‖H‖_F² and the
 * mass ratio, the row masses ‖H_{i,:}‖², the tensor-by-tensor masses, and a
 * pooled |H| heatmap. Memory: one panel + Σ n_b² (only with keep_blocks) + the
 * heatmap + a few arrays of P (row masses, the parameter → (block, position)
 * map); nothing of size P².
 *
 * Two kinds of panels (one kind per stream):
 *  - full: row i of H complete (hess_cols, hvp). Every ordered pair (i, j) is
 *    counted from row i.
 *  - lower (the model's hess_cols_lower, the symmetric fast path): a panel at j0 is valid only at indices >= j0. The stream reads only j >= i of
 *    row i and counts each unordered pair {i, j} once, mirrored: H_bb gets
 *    (a, b) and (b, a), row masses get H_ij² on rows i and j (i ≠ j), tensor
 *    masses and the heatmap are symmetric.
 *
 * Fixed summation order (what makes the results reproducible):
 *  - A row's own sums — ‖H_{i,:}‖² (sequential over j = 0..P-1, exactly like
 *    frobenius_sq), its sum per tensor and its sum (or max) of |H_ij| per heatmap
 *    pixel column (sequential over the tensor's / pixel's j), its in-block sum
 *    when blocks are not kept (four lanes, entry e in lane e mod 4, combined as
 *    (l0 + l1) + (l2 + l3)) — depend only on that row. Four rows run side by
 *    side, each its own chains, so the grouping changes nothing.
 *  - Cross-row sums (tensor masses, mean-pooled heatmap cells) are chains in row
 *    order inside their group (a tensor's rows, a heatmap pixel row's rows): the
 *    chain of a group takes the row sums in ascending row order, starting from
 *    0; a row that arrives before its predecessors waits (a pending row, its few
 *    sums only) until they come, by add or by merge.
 *  - Maxima are exact in any order.
 *  So a full-panel stream gives bitwise the same results whatever the panel
 *  width, the panel order, or the split into merged streams. Row masses are
 *  bitwise frobenius_sq of H's rows, kept blocks bitwise block_extract, hence
 *  hstream_block_metrics bitwise block_analyze on the same rows.
 *  A lower-panel stream fed in ascending order (hstream_run) is bitwise
 *  independent of the panel width too, and its row masses are bitwise
 *  frobenius_sq of the mirrored rows (the mirrored part of row i is summed first,
 *  in ascending order, then row i continues the same chain). Under merge its
 *  kept blocks, tensor masses, ‖H‖_F² and heatmaps stay bitwise; its row masses
 *  (and what uses them: block_metrics.row_mass, block masses without kept
 *  blocks) are sums of the two streams' column chains, equal to round-off
 *  (~1e-16 relative), not bitwise.
 *  Against the full-H path, the cross-row sums (mass ratio, ‖H‖_F², mean heatmap)
 *  are regrouped (per row first, then across rows): equal to round-off, not
 *  bitwise; everything else is bitwise when the stream is fed the same rows.
 *  The regrouped sums are the more accurate ones: mass_ratio's single sequential
 *  sum over P² terms is off by 1e-12 relative already at P = 2,640 (against the
 *  same sum in long double), the stream's by 2e-16 (bench_hstream prints both;
 *  on the MLP up to 2e-14, where the lower panels' H and the full path's differ
 *  by H's asymmetry).
 *  Lower panels against hessian_full(lower): the stream takes H_ij from row
 *  min(i, j), hessian_full keeps a panel's own entries at j0 <= j < i, so the two
 *  differ by H's asymmetry (~1e-16 of max|H|), not by the stream.
 *
 * Results need every row 0..P-1 fed exactly once (user error otherwise). The
 * result getters finish the stream lazily on first call (mirroring kept blocks
 * of lower panels, the symmetric tensor masses and heatmap): not thread-safe.
 */
#ifndef HSTREAM_H
#define HSTREAM_H

#include "hessian/hessian.h"

typedef struct hstream hstream;

typedef struct {
    const partition *p;     /* the blocks whose diagonal blocks H_bb are kept: a partition
                               covering 0..P-1 exactly once (strided blocks allowed); copied */
    int keep_blocks;        /* 1: keep every H_bb (n_b × n_b) */
    int heat_pixels;        /* > 0: a pooled |H| heatmap of at most this many pixels per side,
                               like heatmap_pool(H, P, P, P, heat_pixels, heat_pool, ...) */
    pool_kind heat_pool;    /* POOL_MAX or POOL_MEAN */
} hstream_opts;

/* Bytes a stream for m with options o holds, plus one panel of `panel` columns
 * (two with the hvp path's unit directions: pass 2·panel). Counts the worst
 * pending rows of an ascending contiguous column range. */
double hstream_bytes(const model *m, const hstream_opts *o, int panel);

/* Prints and checks its memory (memory_check): the stream plus one panel of the
 * default width. User error if o->p does not cover 0..P-1 exactly once. */
hstream *hstream_new(const model *m, const hstream_opts *o);
/* Rows j0..j0+k-1 of H (= columns, by symmetry) given as k×P row-major;
 * `lower`: only the entries at indices >= j0 are valid. User error if a row was
 * fed already or lies outside 0..P-1, or if the panel kind differs from earlier ones. */
void hstream_add(hstream *s, size_t j0, int k, const double *rows, int lower);
/* Drive the model: panels of o->panel columns, as hessian_full makes them (the
 * model's hess_cols_lower when o->symmetric and the model has it, else
 * hess_cols, else hvp on unit vectors), fed to hstream_add in ascending order.
 * Checks the memory with the real panel width. */
void hstream_run(hstream *s, model *m, const hessian_opts *o);
/* The same for columns j0..j1-1 only (one rank's share; merge the streams after). */
void hstream_run_cols(hstream *s, model *m, size_t j0, size_t j1, const hessian_opts *o);
/* The panels at columns first, first + step, first + 2·step, ... (each o->panel
 * wide, step >= o->panel): rank r of N with first = r·panel, step = N·panel
 * takes every N-th panel, which balances columns of unequal cost. Rows that
 * arrive before their chain's predecessors wait as pending rows (T + 1 doubles
 * each, plus a mean-pooled heatmap's pixel columns) until a merge brings those. */
void hstream_run_strided(hstream *s, model *m, size_t first, size_t step, const hessian_opts *o);
/* Combine partial results (column ranges computed separately, e.g. by MPI ranks):
 * a += b. Sums and maxima only; exact for disjoint rows (see the order above).
 * User error unless a and b were made with the same model size, partition and
 * options, have the same panel kind and share no row. */
void hstream_merge(hstream *a, const hstream *b);

/* A stream as bytes (malloc'ed; *bytes its length), to send to another process:
 * its fed rows, their kept block rows, row masses and the ordered accumulators'
 * chains and pending rows — about (n_b + 3) doubles per fed row plus 2P. */
void *hstream_pack(const hstream *s, size_t *bytes);
/* a += the packed stream: the same as hstream_merge with the stream that was
 * packed (bitwise), without unpacking it into a second stream. User error on
 * bytes that are not a packed stream of the same model, partition and options. */
void hstream_merge_packed(hstream *a, const void *bytes, size_t len);

/* Rows fed so far (P when complete). */
size_t hstream_rows_fed(const hstream *s);

/* ---- results (user error until all P rows are fed) ---- */
double hstream_total_fro2(const hstream *s);                 /* ‖H‖_F² = Σ of the tensor masses */
double hstream_mass_ratio(const hstream *s);                 /* Σ_b ‖H_bb‖_F² / ‖H‖_F² — equals mass_ratio(H, P, p) */
double hstream_block_fro2(const hstream *s, int b);          /* ‖H_bb‖_F²: frobenius_sq of the kept block, else
                                                                the sum of its rows' in-block masses */
const double *hstream_block(const hstream *s, int b);        /* H_bb (n_b × n_b, row-major in the block's index
                                                                order) if kept, else NULL */
const double *hstream_row_mass(const hstream *s);            /* (P) ‖H_{i,:}‖² per parameter */
const double *hstream_tensor_mass(const hstream *s);         /* (ntensors × ntensors) Σ of H_ij² over i in tensor a,
                                                                j in tensor b */
const double *hstream_heatmap(const hstream *s, size_t *pr, size_t *pc, size_t *factor); /* same as heatmap_pool
                                                                of the full H; NULL without heat_pixels */
/* = block_analyze(H, P, &p->b[b], d), from the kept block and the row masses
 * (user error without keep_blocks). */
block_metrics hstream_block_metrics(const hstream *s, int b, const double *d);
void hstream_free(hstream *s);

#endif
