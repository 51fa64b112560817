/* The block-diagonal random quadratic of paper Fig. 3: Haar-random
 * orthogonal blocks with eigenvalues drawn from small sets; its unrotated
 * (diagonal) version and coordinate permutations, for the claims' controls. */
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

/* Block l's eigenvalues, drawn i.i.d. uniformly from sets[l]. */
static void draw_eigenvalues(double *lambda, gsl_rng *rng, int m, const double *set, int set_len)
{
    for (int i = 0; i < m; i++) lambda[i] = set[rng_int(rng, (unsigned long)set_len)];
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
        draw_eigenvalues(lambda + off, rng, m, sets[l], set_len[l]);
        haar_orthogonal(Q, rng, m);
        sym_from_eig(Hl, Q, lambda + off, m);
        for (int i = 0; i < m; i++)
            memcpy(H + (size_t)(off + i) * n + off, Hl + (size_t)i * m, (size_t)m * sizeof(double));
        free(Q);
        free(Hl);
        off += m;
    }
}

void diag_quadratic(double *H, double *lambda, gsl_rng *rng, const int *sizes, const double *const *sets,
                    const int *set_len, int nb)
{
    int n = 0;
    for (int l = 0; l < nb; l++) n += sizes[l];
    memset(H, 0, (size_t)n * n * sizeof(double));
    int off = 0;
    for (int l = 0; l < nb; l++) {
        draw_eigenvalues(lambda + off, rng, sizes[l], sets[l], set_len[l]);
        off += sizes[l];
    }
    for (int i = 0; i < n; i++) H[(size_t)i * n + i] = lambda[i];
}

void random_permutation(int *perm, gsl_rng *rng, int n)
{
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_int(rng, (unsigned long)i + 1), t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
}

void quad_permute(double *Hp, double *wp, const double *H, const double *w, const int *perm, int n)
{
    for (int i = 0; i < n; i++) {
        wp[i] = w[perm[i]];
        for (int j = 0; j < n; j++) Hp[(size_t)i * n + j] = H[(size_t)perm[i] * n + perm[j]];
    }
}
