/* Groups of parameter indices and what the extensions hetero and vspread measure
 * on them: the spectra of a Hessian's diagonal blocks and their spread over the
 * blocks, and the spread of Adam's v̂ inside groups (harness.h, last section). */
#include "harness.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- groups ---------------------------------------------------------------------------------- */

index_groups *groups_of_partition(const partition *p)
{
    index_groups *g = xcalloc(1, sizeof *g);
    g->ngroups = p->nblocks;
    g->off = xmalloc(((size_t)p->nblocks + 1) * sizeof(size_t));
    g->off[0] = 0;
    for (int k = 0; k < p->nblocks; k++) g->off[k + 1] = g->off[k] + p->b[k].n;
    g->idx = xmalloc((g->off[p->nblocks] ? g->off[p->nblocks] : 1) * sizeof(size_t));
    for (int k = 0; k < p->nblocks; k++)
        for (size_t e = 0; e < p->b[k].n; e++) g->idx[g->off[k] + e] = p->b[k].start + e * p->b[k].stride;
    return g;
}

index_groups *groups_shuffled(const index_groups *g, gsl_rng *rng)
{
    size_t N = g->off[g->ngroups];
    index_groups *s = xcalloc(1, sizeof *s);
    s->ngroups = g->ngroups;
    s->off = xmalloc(((size_t)g->ngroups + 1) * sizeof(size_t));
    memcpy(s->off, g->off, ((size_t)g->ngroups + 1) * sizeof(size_t));
    s->idx = xmalloc((N ? N : 1) * sizeof(size_t));
    memcpy(s->idx, g->idx, N * sizeof(size_t));
    for (size_t i = N; i > 1; i--) {   /* Fisher–Yates over the members */
        size_t j = rng_int(rng, i), t = s->idx[i - 1];
        s->idx[i - 1] = s->idx[j];
        s->idx[j] = t;
    }
    return s;
}

void groups_free(index_groups *g)
{
    if (!g) return;
    free(g->off);
    free(g->idx);
    free(g);
}

int block_types(int *type, char (*names)[BLOCK_TYPE_LEN], int max_types, const model *m, const partition *p)
{
    int *split = xmalloc((size_t)m->ntensors * sizeof(int)), n = 0;
    for (int t = 0; t < m->ntensors; t++) split[t] = partition_split_of(p, m, t);
    for (int k = 0; k < p->nblocks; k++) {
        int t = p->b[k].tensor;
        if (split[t] < 0) DIE("tensor %s: no split of it matches the partition", m->tensors[t].name);
        char name[BLOCK_TYPE_LEN];
        snprintf(name, sizeof name, "%s %s", role_name(m->tensors[t].role),
                 split_meaning(&m->tensors[t], (split_kind)split[t]));
        int i = 0;
        while (i < n && strcmp(names[i], name) != 0) i++;
        if (i == n) {
            if (n == max_types) DIE("more than %d block types", max_types);
            memcpy(names[n++], name, sizeof name);
        }
        type[k] = i;
    }
    free(split);
    return n;
}

/* ---- block spectra and their spread ---------------------------------------------------------- */

double *index_submatrix(const double *H, size_t P, const size_t *idx, size_t n)
{
    double *A = xmalloc(checked_mul(checked_mul(n, n, "sub-matrix"), sizeof(double), "sub-matrix"));
    for (size_t a = 0; a < n; a++) {
        const double *row = H + idx[a] * P;
        for (size_t b = 0; b < n; b++) A[a * n + b] = row[idx[b]];
    }
    return A;
}

void group_eigvals(double *w, const double *H, size_t P, const index_groups *g, int k)
{
    size_t n = group_size(g, k);
    double *A = index_submatrix(H, P, g->idx + g->off[k], n);
    sym_eigvals((int)n, A, w);
    free(A);
}

void group_log_absmax(double *h, double *eig, const double *H, size_t P, const index_groups *g, double zero_rel)
{
    size_t total = g->off[g->ngroups];
    double *w = eig ? eig : xmalloc((total ? total : 1) * sizeof(double));
    double *fro = xmalloc(((size_t)g->ngroups + 1) * sizeof(double));
    double sum = 0;
    for (int k = 0; k < g->ngroups; k++) {
        double *wk = w + g->off[k];
        group_eigvals(wk, H, P, g, k);
        fro[k] = frobenius_sq(group_size(g, k), wk);   /* ‖H_bb‖_F² = Σ λ² */
        sum += fro[k];
    }
    for (int k = 0; k < g->ngroups; k++) {
        spectrum s = spectrum_of((int)group_size(g, k), w + g->off[k]);
        h[k] = fro[k] > zero_rel * zero_rel * sum && s.absmax > 0 ? log10(s.absmax) : NAN;
    }
    free(fro);
    if (w != eig) free(w);
}

spread_stats spread_of(const double *x, const int *type, int n)
{
    spread_stats s = {.n = 0, .mean = NAN, .sd = NAN, .iqr = NAN, .eta2 = NAN};
    double *v = xmalloc(((size_t)n + 1) * sizeof(double));
    int ntypes = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(x[i])) continue;
        v[s.n++] = x[i];
        if (type && type[i] + 1 > ntypes) ntypes = type[i] + 1;
    }
    if (s.n == 0) {
        free(v);
        return s;
    }
    double mean = 0;
    for (int i = 0; i < s.n; i++) mean += v[i] / s.n;
    double ss = 0;
    for (int i = 0; i < s.n; i++) ss += (v[i] - mean) * (v[i] - mean);
    s.mean = mean;
    s.sd = s.n > 1 ? sqrt(ss / (s.n - 1)) : NAN;
    s.iqr = quantile(v, (size_t)s.n, 0.75) - quantile(v, (size_t)s.n, 0.25);
    if (type && ss > 0) {
        /* η² = SS_between / SS_total: the share of the variance that the type means explain */
        double *tsum = xcalloc((size_t)ntypes, sizeof(double));
        int *tcount = xcalloc((size_t)ntypes, sizeof(int));
        for (int i = 0; i < n; i++)
            if (isfinite(x[i])) tsum[type[i]] += x[i], tcount[type[i]]++;
        double between = 0;
        for (int t = 0; t < ntypes; t++)
            if (tcount[t]) between += tcount[t] * (tsum[t] / tcount[t] - mean) * (tsum[t] / tcount[t] - mean);
        s.eta2 = between / ss;
        free(tsum);
        free(tcount);
    }
    free(v);
    return s;
}

/* The groups of g whose keep[k] is set, in order. */
static index_groups *groups_kept(const index_groups *g, const int *keep)
{
    index_groups *s = xcalloc(1, sizeof *s);
    s->off = xmalloc(((size_t)g->ngroups + 1) * sizeof(size_t));
    s->idx = xmalloc((g->off[g->ngroups] ? g->off[g->ngroups] : 1) * sizeof(size_t));
    s->off[0] = 0;
    for (int k = 0; k < g->ngroups; k++) {
        if (!keep[k]) continue;
        memcpy(s->idx + s->off[s->ngroups], g->idx + g->off[k], group_size(g, k) * sizeof(size_t));
        s->off[s->ngroups + 1] = s->off[s->ngroups] + group_size(g, k);
        s->ngroups++;
    }
    return s;
}

hetero_stats block_heterogeneity(double *h, double *eig, double *control_h, const double *H, size_t P,
                                 const index_groups *g, const int *type, int reps, gsl_rng *rng, double zero_rel)
{
    if (reps < 1) DIE("block_heterogeneity: reps = %d", reps);
    hetero_stats st = {0};
    group_log_absmax(h, eig, H, P, g, zero_rel);
    st.real = spread_of(h, type, g->ngroups);
    int n = g->ngroups;
    int *keep = xmalloc(((size_t)n + 1) * sizeof(int)), *ktype = xmalloc(((size_t)n + 1) * sizeof(int));
    for (int k = 0; k < n; k++) {
        keep[k] = isfinite(h[k]);
        if (keep[k]) ktype[st.kept++] = type ? type[k] : 0;
    }
    st.zero = n - st.kept;
    index_groups *kept = groups_kept(g, keep);
    double *hr = xmalloc(((size_t)st.kept + 1) * sizeof(double)), *hc = xmalloc(((size_t)st.kept + 1) * sizeof(double));
    for (int d = 0; d <= reps; d++) {   /* reps draws for the baseline, one more for the control */
        index_groups *s = groups_shuffled(kept, rng);
        group_log_absmax(d < reps ? hr : hc, NULL, H, P, s, zero_rel);
        groups_free(s);
        if (d == reps) break;
        spread_stats sr = spread_of(hr, type ? ktype : NULL, st.kept);
        st.rand_sd += sr.sd / reps;
        st.rand_eta2 += sr.eta2 / reps;
    }
    st.control_sd = spread_of(hc, NULL, st.kept).sd;
    for (int k = 0, j = 0; k < n; k++) control_h[k] = keep[k] ? hc[j++] : NAN;
    free(hc);
    free(hr);
    groups_free(kept);
    free(ktype);
    free(keep);
    return st;
}

/* ---- v̂ inside groups ------------------------------------------------------------------------- */

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
