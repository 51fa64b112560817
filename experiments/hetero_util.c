/* Block heterogeneity of a Hessian (hetero_util.h): the spectra of its
 * diagonal blocks and their spread over the blocks, against random blocks. */
#include "experiments/hetero_util.h"
#include "core/core.h"
#include "harness/groups.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
