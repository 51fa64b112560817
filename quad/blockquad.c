/* The block-diagonal random quadratic of paper Fig. 3: Haar-random
 * orthogonal blocks with eigenvalues drawn from small sets. */
#include "quad.h"
#include <cblas.h>
#include <lapacke.h>
#include <string.h>

/* Q from the QR factorisation of a Gaussian matrix, with each column's sign
 * chosen so that diag(R) > 0: then Q is Haar distributed (Mezzadri 2007). */
void haar_orthogonal(double *Q, gsl_rng *rng, int n)
{
    size_t nn = (size_t)n * n;
    double *tau = xmalloc((size_t)n * sizeof(double));
    for (size_t i = 0; i < nn; i++) Q[i] = rng_gaussian(rng, 1.0);
    int info = LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, n, n, Q, n, tau);
    if (info != 0) DIE("LAPACKE_dgeqrf failed (info %d)", info);
    /* signs of diag(R) before dorgqr overwrites R */
    double *sign = xmalloc((size_t)n * sizeof(double));
    for (int j = 0; j < n; j++) sign[j] = Q[(size_t)j * n + j] < 0 ? -1.0 : 1.0;
    info = LAPACKE_dorgqr(LAPACK_ROW_MAJOR, n, n, n, Q, n, tau);
    if (info != 0) DIE("LAPACKE_dorgqr failed (info %d)", info);
    /* A = QR = (Q S)(S R) with S = diag(sign): scale column j of Q by sign_j */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) Q[(size_t)i * n + j] *= sign[j];
    free(sign);
    free(tau);
}

void sym_from_eig(double *H, const double *Q, const double *lambda, int n)
{
    double *QL = xmalloc((size_t)n * n * sizeof(double));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) QL[(size_t)i * n + j] = Q[(size_t)i * n + j] * lambda[j];
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0, QL, n, Q, n, 0.0, H, n);
    /* exact symmetry (the product is symmetric only to round-off) */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) {
            double m = 0.5 * (H[(size_t)i * n + j] + H[(size_t)j * n + i]);
            H[(size_t)i * n + j] = H[(size_t)j * n + i] = m;
        }
    free(QL);
}

void block_quadratic(double *H, double *lambda, gsl_rng *rng, const int *sizes, const double *const *sets,
                     const int *set_len, int nb)
{
    int n = 0;
    for (int l = 0; l < nb; l++) n += sizes[l];
    memset(H, 0, (size_t)n * n * sizeof(double));
    int off = 0;
    for (int l = 0; l < nb; l++) {
        int m = sizes[l];
        double *Q = xmalloc((size_t)m * m * sizeof(double)), *Hl = xmalloc((size_t)m * m * sizeof(double));
        for (int i = 0; i < m; i++) lambda[off + i] = sets[l][rng_int(rng, (unsigned long)set_len[l])];
        haar_orthogonal(Q, rng, m);
        sym_from_eig(Hl, Q, lambda + off, m);
        for (int i = 0; i < m; i++)
            memcpy(H + (size_t)(off + i) * n + off, Hl + (size_t)i * m, (size_t)m * sizeof(double));
        free(Q);
        free(Hl);
        off += m;
    }
}
