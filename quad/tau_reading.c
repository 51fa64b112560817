/* Fig. 4 read against each matrix's own τ (not against R): the three sentences
 * of Sec. 2.1 the sweep can test, per curve (quad.h, "read against τ"). */
#include "quad.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

void quad_matrix_stat(double *out, const quad_sweep_result *s, const double *r, int use_mean)
{
    int np = s->npoints;
    double *v = xmalloc((size_t)np * sizeof(double));
    for (size_t m = 0; m < (size_t)s->nthetas * s->nr; m++) {
        int n = 0;
        double sum = 0;
        for (int p = 0; p < np; p++) {
            double x = r[m * np + p];
            if (isfinite(x)) v[n++] = x, sum += x;
        }
        out[m] = n == 0 ? NAN : use_mean ? sum / n : quantile(v, (size_t)n, 0.5);
    }
    free(v);
}

/* Indices 0..n-1 sorted by key ascending (ties by index, so the order is deterministic). */
static int by_key(const void *a, const void *b, void *key)
{
    const double *k = key;
    int i = *(const int *)a, j = *(const int *)b;
    if (k[i] != k[j]) return k[i] < k[j] ? -1 : 1;
    return (i > j) - (i < j);
}
static void order_by(int *idx, const double *key, int n)
{
    for (int i = 0; i < n; i++) idx[i] = i;
    qsort_r(idx, (size_t)n, sizeof *idx, by_key, (void *)key);
}

/* Median of rm over the matrices idx[lo..hi-1]. */
static double median_over(const double *rm, const int *idx, int lo, int hi)
{
    double *v = xmalloc((size_t)(hi - lo > 0 ? hi - lo : 1) * sizeof(double));
    for (int i = lo; i < hi; i++) v[i - lo] = rm[idx[i]];
    double med = quantile(v, (size_t)(hi - lo), 0.5);
    free(v);
    return med;
}

/* The share of log r's variance left at fixed tau that R explains: the matrices are cut
 * into nbins bins of equal count by tau; in each bin log r, log tau and R are centred (a
 * bin's own level), and the pooled within-bin fit of log r on log tau (the slope left
 * inside a bin) is compared with the fit on log tau and R: the partial R² of R,
 * (SSE_tau − SSE_tau,R) / SSE_tau. 0 when r depends on the matrix only through tau; near
 * 1 when, at fixed tau, R fixes what is left of r. Inputs sorted by tau. */
static double within_bin_partial_r2(const double *logr, const double *logt, const double *R, int n, int nbins)
{
    double syy = 0, s11 = 0, s12 = 0, s22 = 0, sy1 = 0, sy2 = 0;
    for (int b = 0; b < nbins; b++) {
        int lo = (int)((long)n * b / nbins), hi = (int)((long)n * (b + 1) / nbins);
        if (hi - lo < 3) continue;
        double my = 0, m1 = 0, m2 = 0;
        for (int i = lo; i < hi; i++) my += logr[i], m1 += logt[i], m2 += R[i];
        my /= hi - lo, m1 /= hi - lo, m2 /= hi - lo;
        for (int i = lo; i < hi; i++) {
            double y = logr[i] - my, x1 = logt[i] - m1, x2 = R[i] - m2;
            syy += y * y, s11 += x1 * x1, s12 += x1 * x2, s22 += x2 * x2, sy1 += y * x1, sy2 += y * x2;
        }
    }
    if (!(syy > 0 && s22 > 0)) return NAN;
    double sse_tau = s11 > 0 ? syy - sy1 * sy1 / s11 : syy;
    double det = s11 * s22 - s12 * s12;
    double sse_both = det > 1e-12 * s11 * s22 ? syy - (sy1 * (s22 * sy1 - s12 * sy2) + sy2 * (s11 * sy2 - s12 * sy1)) / det
                                              : sse_tau; /* R a linear function of tau inside the bins: no more */
    return sse_tau > 0 ? fmax(0, (sse_tau - sse_both) / sse_tau) : 0;
}

/* Spearman between tau and r over log-tau bins: the nlog bins of log10 tau over [log_lo, 0]
 * (the first open below, the last closed at tau = 1); a non-empty bin gives one point, the
 * median tau and the median r of its matrices, so every level of tau counts once however
 * many matrices land there. idx orders the m matrices by tau. */
static double binned_rho(const double *t, const double *r, const int *idx, int m, int nlog, double log_lo)
{
    double *bt = xmalloc((size_t)nlog * sizeof(double)), *br = xmalloc((size_t)nlog * sizeof(double));
    int nb = 0, i = 0;
    for (int b = 0; b < nlog && i < m; b++) {
        double hi = pow(10, log_lo * (1 - (double)(b + 1) / nlog));
        int lo = i;
        while (i < m && (t[idx[i]] < hi || b == nlog - 1)) i++;
        if (i == lo) continue;
        double *tv = xmalloc((size_t)(i - lo) * sizeof(double));
        for (int j = lo; j < i; j++) tv[j - lo] = t[idx[j]];
        bt[nb] = quantile(tv, (size_t)(i - lo), 0.5);
        br[nb] = median_over(r, idx, lo, i);
        free(tv);
        nb++;
    }
    double rho = nb >= 3 ? spearman(bt, br, nb) : NAN;
    free(bt), free(br);
    return rho;
}

quad_tau_reading quad_read_against_tau(const double *tau, const double *rm, const double *R, int n,
                                       const quad_tau_options *o)
{
    quad_tau_reading q = {.rho = NAN, .rho_bins = NAN, .r_diag = NAN, .r_dense = NAN, .r2_R = NAN, .n = 0};
    /* the matrices whose r is finite and positive (every x skipped: NaN) */
    double *t = xmalloc((size_t)(n > 0 ? n : 1) * sizeof(double)), *r = xmalloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    double *Rk = xmalloc((size_t)(n > 0 ? n : 1) * sizeof(double));
    int m = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(rm[i]) && rm[i] > 0 && isfinite(tau[i])) t[m] = tau[i], r[m] = rm[i], Rk[m] = R[i], m++;
    q.n = m;
    if (m >= 3) {
        q.rho = spearman(t, r, m);
        int *idx = xmalloc((size_t)m * sizeof(int));
        order_by(idx, t, m);
        q.rho_bins = binned_rho(t, r, idx, m, o->nlog, o->log_lo);
        /* near-diagonal: tau >= diag_tau; dense: the lowest dense_share of the matrices by tau */
        int first_diag = m;
        while (first_diag > 0 && t[idx[first_diag - 1]] >= o->diag_tau) first_diag--;
        if (first_diag < m) q.r_diag = median_over(r, idx, first_diag, m);
        int ndense = (int)ceil(o->dense_share * m);
        if (ndense >= 1) q.r_dense = median_over(r, idx, 0, ndense < m ? ndense : m);
        double *lr = xmalloc((size_t)m * sizeof(double)), *lt = xmalloc((size_t)m * sizeof(double));
        double *Rs = xmalloc((size_t)m * sizeof(double));
        for (int i = 0; i < m; i++) lr[i] = log(r[idx[i]]), lt[i] = log(t[idx[i]]), Rs[i] = Rk[idx[i]];
        q.r2_R = within_bin_partial_r2(lr, lt, Rs, m, o->nbins);
        free(lr), free(lt), free(Rs), free(idx);
    }
    q.level = q.r_diag < 1 && q.r_dense > 1;  /* NaN compares false: not shown */
    free(t), free(r), free(Rk);
    return q;
}
