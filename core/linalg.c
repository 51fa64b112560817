/* Dense spectra with LAPACKE; κ three ways; τ. Inputs are never modified. */
#include "core.h"
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double *copy_matrix(size_t m, size_t n, const double *A)
{
    double *B = xmalloc(checked_mul(m * n, sizeof(double), "matrix copy"));
    memcpy(B, A, m * n * sizeof(double));
    return B;
}

void sym_eigvals(int n, const double *A, double *w)
{
    sym_eigvals_range(n, A, 1, n, w);
}

int sym_eigvals_range(int n, const double *A, int il, int iu, double *w)
{
    if (n < 1 || il < 1 || iu > n || il > iu) DIE("sym_eigvals_range: bad range %d..%d of %d", il, iu, n);
    double *B = copy_matrix(n, n, A);
    int found = 0;
    int *isuppz = xmalloc(2 * (size_t)n * sizeof(int));
    char range = (il == 1 && iu == n) ? 'A' : 'I';
    /* jobz 'N': eigenvalues only; abstol 0 lets LAPACK pick its default. */
    int info = LAPACKE_dsyevr(LAPACK_ROW_MAJOR, 'N', range, 'U', n, B, n, 0.0, 0.0, il, iu,
                              0.0, &found, w, NULL, 1, isuppz);
    free(isuppz);
    free(B);
    if (info != 0) DIE("LAPACKE_dsyevr failed (info %d)", info);
    return found;
}

void singular_values(int m, int n, const double *A, double *s)
{
    double *B = copy_matrix(m, n, A);
    /* Row-major A (m×n) is column-major Aᵀ (n×m): same singular values. */
    int info = LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'N', n, m, B, n, s, NULL, 1, NULL, 1);
    free(B);
    if (info != 0) DIE("LAPACKE_dgesdd failed (info %d)", info);
}

spectrum spectrum_of(int n, const double *w)
{
    spectrum s = {.lmin = w[0], .lmax = w[0], .absmin = fabs(w[0]), .absmax = fabs(w[0])};
    for (int i = 0; i < n; i++) {
        double a = fabs(w[i]);
        if (w[i] < s.lmin) s.lmin = w[i];
        if (w[i] > s.lmax) s.lmax = w[i];
        if (a < s.absmin) s.absmin = a;
        if (a > s.absmax) s.absmax = a;
        if (w[i] < 0) s.nneg++;
    }
    s.kappa = s.absmin > 0 ? s.absmax / s.absmin : INFINITY;
    return s;
}

spectrum sym_spectrum(int n, const double *A)
{
    double *w = xmalloc((size_t)n * sizeof(double));
    sym_eigvals(n, A, w);
    spectrum s = spectrum_of(n, w);
    free(w);
    return s;
}

double kappa_spd(int n, const double *A)
{
    spectrum s = sym_spectrum(n, A);
    if (s.lmin <= 0) die_user("kappa_spd: matrix is not positive definite (smallest eigenvalue %g)", s.lmin);
    return s.lmax / s.lmin;
}

double kappa_svd(int m, int n, const double *A)
{
    int k = m < n ? m : n;
    double *s = xmalloc((size_t)k * sizeof(double));
    singular_values(m, n, A, s);
    double kappa = s[k - 1] > 0 ? s[0] / s[k - 1] : INFINITY;
    free(s);
    return kappa;
}

double tau_ratio(int n, const double *A)
{
    double diag = 0, total = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double a = fabs(A[(size_t)i * n + j]);
            total += a;
            if (i == j) diag += a;
        }
    return total > 0 ? diag / total : 1.0;
}

double frobenius_sq(size_t count, const double *a)
{
    double s = 0;
    for (size_t i = 0; i < count; i++) s += a[i] * a[i];
    return s;
}

double max_abs(size_t count, const double *a)
{
    double m = 0;
    for (size_t i = 0; i < count; i++) if (fabs(a[i]) > m) m = fabs(a[i]);
    return m;
}

double max_abs_diff(size_t count, const double *a, const double *b)
{
    double m = 0;
    for (size_t i = 0; i < count; i++) m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

double rel_max_diff(size_t count, const double *a, const double *b)
{
    double scale = max_abs(count, b), d = max_abs_diff(count, a, b);
    return scale > 0 ? d / scale : d;
}

double rel_l2_diff(size_t count, const double *a, const double *b)
{
    double num = 0, den = frobenius_sq(count, b);
    for (size_t i = 0; i < count; i++) num += (a[i] - b[i]) * (a[i] - b[i]);
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double quantile(const double *v, size_t n, double p)
{
    if (n == 0) return NAN;
    double *c = xmalloc(n * sizeof(double));
    memcpy(c, v, n * sizeof(double));
    qsort(c, n, sizeof(double), cmp_double);
    double pos = p * (n - 1);
    size_t lo = (size_t)floor(pos), hi = lo + 1 < n ? lo + 1 : lo;
    double q = c[lo] + (pos - lo) * (c[hi] - c[lo]);
    free(c);
    return q;
}

double median_of(const double *x, int n)
{
    if (n <= 0 || !x) return NAN;
    for (int i = 0; i < n; i++)
        if (isnan(x[i])) return NAN;
    double *c = xmalloc((size_t)n * sizeof(double));
    memcpy(c, x, (size_t)n * sizeof(double));
    qsort(c, (size_t)n, sizeof(double), cmp_double);
    double m = n % 2 ? c[n / 2] : 0.5 * c[n / 2 - 1] + 0.5 * c[n / 2];
    free(c);
    return m;
}
