/* κ of a symmetric block with its null space deflated, κ(D H) on the same
 * complement, and the Fig. 4 recipe for D (hessian.h, "κ with the null space
 * deflated"). */
#include "hessian.h"
#include "core/core.h"
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define EPS_MACH 2.220446049250313e-16

/* The row space of V (k×n) and its orthogonal complement, by SVD: the first
 * `rank` rows of the returned n×n orthogonal matrix span the rows of V (rank
 * by the tolerance n·ε·σmax), the others their complement. */
static double *row_space(int k, int n, const double *V, int *rank)
{
    double *VT = xmalloc((size_t)n * n * sizeof(double));
    *rank = 0;
    if (k == 0) {
        memset(VT, 0, (size_t)n * n * sizeof(double));
        for (int i = 0; i < n; i++) VT[(size_t)i * n + i] = 1;
        return VT;
    }
    int ns = k < n ? k : n;
    double *A = xmalloc((size_t)k * n * sizeof(double)), *s = xmalloc((size_t)ns * sizeof(double));
    double *U = xmalloc((size_t)k * k * sizeof(double));
    memcpy(A, V, (size_t)k * n * sizeof(double));
    int info = LAPACKE_dgesdd(LAPACK_ROW_MAJOR, 'A', k, n, A, n, s, U, k, VT, n);
    if (info != 0) DIE("LAPACKE_dgesdd failed (info %d)", info);
    double tol = n * EPS_MACH * s[0];
    while (*rank < ns && s[*rank] > tol) (*rank)++;
    free(A), free(s), free(U);
    return VT;
}

int orthonormal_rows(int k, int n, const double *V, double *out)
{
    int rank;
    double *VT = row_space(k, n, V, &rank);
    memcpy(out, VT, (size_t)rank * n * sizeof(double));
    free(VT);
    return rank;
}

/* C = Xᵀ A X for symmetric A (n×n) and X (n×m), both row-major. */
static double *congruence(int n, int m, const double *A, const double *X)
{
    double *AX = xmalloc((size_t)n * m * sizeof(double)), *C = xmalloc((size_t)m * m * sizeof(double));
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, m, n, 1, A, n, X, m, 0, AX, m);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, m, n, 1, X, m, AX, m, 0, C, m);
    free(AX);
    return C;
}

/* Eigenvalues (ascending) and eigenvectors (columns of A, row-major) of symmetric A (n×n), in place. */
static void sym_eig(int n, double *A, double *w)
{
    int info = LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', n, A, n, w);
    if (info != 0) DIE("LAPACKE_dsyev failed (info %d)", info);
}

static const spectrum NO_SPECTRUM = {NAN, NAN, NAN, NAN, NAN, -1};

deflation deflate(int n, const double *A, int k, const double *N, double tol)
{
    deflation df = {.n = n, .resid = 0, .s = NO_SPECTRUM, .Q = NULL};
    double *w = xmalloc((size_t)n * sizeof(double));
    sym_eigvals(n, A, w);
    df.absmax = fmax(fabs(w[0]), fabs(w[n - 1]));
    /* the given directions, orthonormal, and how far from null they are */
    double *VT = row_space(k, n, N, &df.nknown);
    double *Av = xmalloc((size_t)n * sizeof(double));
    for (int j = 0; j < df.nknown; j++) {
        cblas_dgemv(CblasRowMajor, CblasNoTrans, n, n, 1, A, n, VT + (size_t)j * n, 1, 0, Av, 1);
        double r = sqrt(frobenius_sq(n, Av)) / df.absmax;
        if (df.absmax > 0 && r > df.resid) df.resid = r;
    }
    /* Q0: the complement, as columns (n × m0) */
    int m0 = n - df.nknown;
    double *Q0 = xmalloc((size_t)n * (m0 ? m0 : 1) * sizeof(double));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m0; j++) Q0[(size_t)i * m0 + j] = VT[(size_t)(df.nknown + j) * n + i];
    free(VT), free(Av);
    df.m = 0;
    if (m0 > 0 && df.absmax > 0) {
        /* A on the complement, in its eigenbasis; eigenvalues at or below tol·|λ|max are null too */
        double *A1 = congruence(n, m0, A, Q0), *mu = xmalloc((size_t)m0 * sizeof(double));
        sym_eig(m0, A1, mu);
        int *keep = xmalloc((size_t)m0 * sizeof(int));
        for (int j = 0; j < m0; j++)
            if (fabs(mu[j]) > tol * df.absmax) keep[df.m++] = j;
            else df.nnum++;
        if (df.m > 0) {
            df.Q = xcalloc((size_t)n * df.m, sizeof(double));
            df.mu = xmalloc((size_t)df.m * sizeof(double));
            for (int c = 0; c < df.m; c++) {
                df.mu[c] = mu[keep[c]];
                for (int i = 0; i < n; i++) {
                    double s = 0;
                    for (int j = 0; j < m0; j++) s += Q0[(size_t)i * m0 + j] * A1[(size_t)j * m0 + keep[c]];
                    df.Q[(size_t)i * df.m + c] = s;
                }
            }
            df.s = spectrum_of(df.m, df.mu);
        }
        free(A1), free(mu), free(keep);
    } else {
        df.nnum = m0; /* A = 0: every direction is null */
    }
    free(Q0), free(w);
    return df;
}

void deflation_free(deflation *df)
{
    free(df->Q);
    free(df->mu);
    df->Q = NULL;
    df->mu = NULL;
}

/* The nonzero eigenvalues of D A are those of (QᵀAQ)(QᵀDQ) for Q spanning the
 * complement of A's null space: D A v = λ v with λ ≠ 0 puts v in D·range(A) =
 * D Q, and v = D Q y gives (QᵀAQ)(QᵀDQ) y = λ y. With QᵀDQ = L Lᵀ (Cholesky,
 * SPD as d > 0) they are the eigenvalues of the symmetric Lᵀ (QᵀAQ) L, and
 * QᵀAQ = diag(μ) in the basis deflate() keeps. */
spectrum deflated_scaled_spectrum(const deflation *df, const double *d)
{
    int n = df->n, m = df->m;
    if (m == 0) return NO_SPECTRUM;
    double *DQ = xmalloc((size_t)n * m * sizeof(double)), *B = xmalloc((size_t)m * m * sizeof(double));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) DQ[(size_t)i * m + j] = d[i] * df->Q[(size_t)i * m + j];
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, m, n, 1, df->Q, m, DQ, m, 0, B, m);
    int info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', m, B, m);
    if (info < 0) DIE("LAPACKE_dpotrf: argument %d", -info);
    if (info > 0) { /* d spreads beyond round-off over the complement: D H_b is singular to working precision */
        free(DQ), free(B);
        return (spectrum){.lmin = NAN, .lmax = NAN, .absmin = NAN, .absmax = NAN, .kappa = INFINITY, .nneg = -1};
    }
    /* M = Lᵀ diag(μ) L, L lower triangular in B */
    double *M = xcalloc((size_t)m * m, sizeof(double)), *w = xmalloc((size_t)m * sizeof(double));
    for (int i = 0; i < m; i++)
        for (int j = i; j < m; j++) {
            double s = 0;
            for (int k = j; k < m; k++) s += B[(size_t)k * m + i] * df->mu[k] * B[(size_t)k * m + j];
            M[(size_t)i * m + j] = M[(size_t)j * m + i] = s;
        }
    sym_eigvals(m, M, w);
    spectrum s = spectrum_of(m, w);
    free(DQ), free(B), free(M), free(w);
    return s;
}

double fig4_ratio(int n, const double *A, const deflation *df, int draws, gsl_rng *r, int *skipped)
{
    double *x = xmalloc((size_t)n * sizeof(double)), *g = xmalloc((size_t)n * sizeof(double));
    double *ratio = xmalloc((size_t)(draws > 0 ? draws : 1) * sizeof(double));
    double sigma = pow(n, -0.25); /* x_i ~ N(0, 1/√n): variance 1/√n (the scale of x cancels in the ratio) */
    int got = 0;
    *skipped = 0;
    for (int t = 0; t < draws; t++) {
        for (int i = 0; i < n; i++) x[i] = rng_gaussian(r, sigma);
        cblas_dgemv(CblasRowMajor, CblasNoTrans, n, n, 1, A, n, x, 1, 0, g, 1);
        int zero = 0;
        for (int i = 0; i < n; i++) {
            if (g[i] == 0) zero = 1;
            g[i] = 1 / fabs(g[i]);
        }
        if (zero || df->m == 0) {
            (*skipped)++;
            continue;
        }
        ratio[got++] = deflated_scaled_spectrum(df, g).kappa / df->s.kappa;
    }
    double med = got ? median_of(ratio, got) : NAN;
    free(x), free(g), free(ratio);
    return med;
}

/* On diag(h) the Fig. 4 recipe's g = diag(h) x gives D diag(h) = diag(sign(h_i)/|x_i|),
 * so each draw's κ is max|x|/min|x| whatever h is (x's scale cancels: N(0, 1) here); with
 * a given D, κ(D diag(h)) = max|d h|/min|d h|. */
diag_ratios diag_part_ratios(int n, const double *A, const double *d, int draws, gsl_rng *r)
{
    double hmin = INFINITY, hmax = 0, dmin = INFINITY, dmax = 0;
    for (int i = 0; i < n; i++) {
        double h = fabs(A[(size_t)i * n + i]), dh = d[i] * h;
        hmin = fmin(hmin, h), hmax = fmax(hmax, h), dmin = fmin(dmin, dh), dmax = fmax(dmax, dh);
    }
    diag_ratios o = {.kappa = hmin > 0 ? hmax / hmin : INFINITY};
    o.ratio_d = dmin > 0 ? dmax / dmin / o.kappa : NAN;
    double *k = xmalloc((size_t)(draws > 0 ? draws : 1) * sizeof(double));
    for (int t = 0; t < draws; t++) {
        double xmin = INFINITY, xmax = 0;
        for (int i = 0; i < n; i++) {
            double x = fabs(rng_gaussian(r, 1));
            xmin = fmin(xmin, x), xmax = fmax(xmax, x);
        }
        k[t] = xmax / xmin;
    }
    o.ratio_fig4 = draws > 0 && hmin > 0 ? median_of(k, draws) / o.kappa : NAN;
    free(k);
    return o;
}
