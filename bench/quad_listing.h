/* quad_listing.h — the paper's generate_Hb listing (appendix "Configurations
 * for Figure 4") transcribed line by line into C, O(d⁵): a fresh dense P for
 * every pair (i, j) and Q = P @ Q as a full matrix product (numpy's @ is BLAS
 * dgemm, so is ours). Reference for bench/bench_quad.c and tests/test_quad.c;
 * never used by the toolkit itself.
 *
 *   def generate_Hb(theta, kappa, d):
 *       Q = np.eye(d)
 *       for i in range(d):
 *           for j in range(i+1,d):
 *               P = np.eye(d)
 *               P[i,i] = math.cos(theta[i,j]); P[i,j] = math.sin(theta[i,j])
 *               P[j,i] = -math.sin(theta[i,j]); P[j,j] = math.cos(theta[i,j])
 *               Q = P @ Q
 *       Lambda = np.eye(d); Lambda[0,0] = kappa
 *       return Q @ Lambda @ Q.transpose()
 */
#ifndef QUAD_LISTING_H
#define QUAD_LISTING_H

#include "core/core.h"
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void listing_eye(double *A, int d)
{
    memset(A, 0, (size_t)d * d * sizeof(double));
    for (int i = 0; i < d; i++) A[(size_t)i * d + i] = 1;
}

/* P = np.eye(d) with the four entries of the (i, j) rotation by angle t. */
static void listing_givens(double *P /* (d,d) */, int i, int j, double t, int d)
{
    listing_eye(P, d);
    P[(size_t)i * d + i] = cos(t);
    P[(size_t)i * d + j] = sin(t);
    P[(size_t)j * d + i] = -sin(t);
    P[(size_t)j * d + j] = cos(t);
}

/* theta: the paper's d×d array (only i < j is read). Writes Q and H. */
static void listing_generate_Hb(double *H /* (d,d) */, double *Q /* (d,d) */, const double *theta /* (d,d) */,
                                double kappa, int d)
{
    size_t dd = (size_t)d * d;
    double *P = xmalloc(dd * sizeof(double)), *T = xmalloc(dd * sizeof(double));
    listing_eye(Q, d);
    for (int i = 0; i < d; i++)
        for (int j = i + 1; j < d; j++) {
            listing_givens(P, i, j, theta[(size_t)i * d + j], d);
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d, d, d, 1.0, P, d, Q, d, 0.0, T, d);
            memcpy(Q, T, dd * sizeof(double));
        }
    /* Q @ Lambda @ Q.T, as two dense products like numpy does */
    listing_eye(P, d);
    P[0] = kappa;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d, d, d, 1.0, Q, d, P, d, 0.0, T, d);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, d, d, d, 1.0, T, d, Q, d, 0.0, H, d);
    free(P);
    free(T);
}

/* The paper's d×d theta from our packed (i, j>i) angles scaled by R. */
static void listing_theta(double *theta /* (d,d) */, const double *packed, double R, int d)
{
    memset(theta, 0, (size_t)d * d * sizeof(double));
    size_t k = 0;
    for (int i = 0; i < d; i++)
        for (int j = i + 1; j < d; j++) theta[(size_t)i * d + j] = R * packed[k++];
}

#endif
