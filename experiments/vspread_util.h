/* vspread_util — what vspread measures (vspread_util.c): the spread of v̂
 * (paper App. "Why using average v": "G usually has similar entries within a
 * row ... its mean value can be a good representative of the whole row"):
 * x_i = log10(√v̂_i + ε), the log of Adam's denominator, and its pooled spread
 * inside groups (rows, columns, heads, random groups). */
#ifndef VSPREAD_UTIL_H
#define VSPREAD_UTIL_H

#include "harness/groups.h"

/* The spread of x (indexed by g's indices) inside g's groups: the pooled
 * within-group sd, √(Σ_k Σ_{i∈k} (x_i − x̄_k)² / Σ_k (n_k − 1)), and the sd of
 * all members (divisor N − 1); NAN when a divisor is 0. For groups laid at
 * random (groups_shuffled) the pooled within-group variance has mean exactly
 * the members' variance, so within_sd/total_sd is 1 for random groups (in the
 * mean of its square) and 0 for groups with constant x. */
typedef struct {
    double within_sd, total_sd;
    size_t within_df, total_df;
} group_spread;
group_spread group_spread_of(const double *x, const index_groups *g);
/* R² of the two-way additive fit x_ij ≈ a_i + b_j of x (rows×cols, row-major):
 * 1 when log v̂ = log α_i + log β_j, i.e. v̂ = αβᵀ as for G = e zᵀ with e and
 * z independent; NAN for constant x. */
double additive_r2(const double *x, int rows, int cols);
/* For every member i of group k: log2 of Adam's learning-rate factor over
 * Adam-mini's, r_i = log2((√mean_{j∈k} v̂_j + ε) / (√v̂_i + ε)), into r[i]
 * (r indexed like vhat; entries outside g untouched). */
void group_lr_log2_ratio(double *r, const double *vhat, const index_groups *g, double eps);

#endif
