/* The spread of Adam's v̂ inside groups (vspread_util.h). */
#include "experiments/vspread_util.h"
#include "core/core.h"
#include "harness/groups.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

group_spread group_spread_of(const double *x, const index_groups *g)
{
    /* sums of deviations from a member (the first of each group, the first of all): a constant group
     * has a within-group sum of squares of exactly 0, and no cancellation between large sums */
    group_spread r = {0};
    size_t N = g->off[g->ngroups];
    double within = 0, total = 0, sum = 0, x0 = N ? x[g->idx[0]] : 0;
    for (int k = 0; k < g->ngroups; k++) {
        size_t n = group_size(g, k);
        if (!n) continue;
        const size_t *idx = g->idx + g->off[k];
        double ref = x[idx[0]], s = 0, s2 = 0;
        for (size_t e = 0; e < n; e++) s += x[idx[e]] - ref, s2 += (x[idx[e]] - ref) * (x[idx[e]] - ref);
        within += s2 - s * s / n;
        r.within_df += n - 1;
    }
    for (size_t i = 0; i < N; i++) sum += x[g->idx[i]] - x0, total += (x[g->idx[i]] - x0) * (x[g->idx[i]] - x0);
    total -= N ? sum * sum / N : 0;
    r.total_df = N ? N - 1 : 0;
    r.within_sd = r.within_df ? sqrt(fmax(within, 0) / r.within_df) : NAN;
    r.total_sd = r.total_df ? sqrt(fmax(total, 0) / r.total_df) : NAN;
    return r;
}

double additive_r2(const double *x, int rows, int cols)
{
    /* deviations from x[0]: a constant x has a total sum of squares of exactly 0 */
    double *rm = xcalloc((size_t)rows, sizeof(double)), *cm = xcalloc((size_t)cols, sizeof(double));
    double grand = 0, x0 = x[0];
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            double v = x[(size_t)i * cols + j] - x0;
            rm[i] += v / cols, cm[j] += v / rows, grand += v / ((double)rows * cols);
        }
    double ss = 0, res = 0;
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++) {
            double v = x[(size_t)i * cols + j] - x0, fit = rm[i] + cm[j] - grand;
            ss += (v - grand) * (v - grand);
            res += (v - fit) * (v - fit);
        }
    free(rm);
    free(cm);
    return ss > 0 ? 1 - res / ss : NAN;
}

void group_lr_log2_ratio(double *r, const double *vhat, const index_groups *g, double eps)
{
    for (int k = 0; k < g->ngroups; k++) {
        size_t n = group_size(g, k);
        const size_t *idx = g->idx + g->off[k];
        double mean = 0;
        for (size_t e = 0; e < n; e++) mean += vhat[idx[e]] / n;
        double mini = sqrt(mean) + eps;   /* Adam-mini's denominator: one per block */
        for (size_t e = 0; e < n; e++) r[idx[e]] = log2(mini / (sqrt(vhat[idx[e]]) + eps));
    }
}
