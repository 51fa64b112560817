/* The paper's rotated generator (appendix "Configurations for Figure 4"):
 * angles, Q by Givens rotations of two rows, q = Q e₁, H and τ. */
#include "quad.h"
#include <cblas.h>
#include <math.h>
#include <string.h>

size_t quad_nangles(int d) { return d < 2 ? 0 : (size_t)d * (d - 1) / 2; }

void quad_draw_angles(double *theta, gsl_rng *rng, int d)
{
    size_t k = 0;
    for (int i = 0; i < d; i++)
        for (int j = i + 1; j < d; j++) theta[k++] = rng_uniform_in(rng, -M_PI / 2, M_PI / 2);
}

/* Q ← P_ij Q with P[i][i] = c, P[i][j] = s, P[j][i] = -s, P[j][j] = c:
 * only rows i and j of Q change. */
static void rotate_rows(double *Q /* (d,d) */, int i, int j, double c, double s, int d)
{
    double *qi = Q + (size_t)i * d, *qj = Q + (size_t)j * d;
    for (int k = 0; k < d; k++) {
        double a = qi[k], b = qj[k];
        qi[k] = c * a + s * b;
        qj[k] = -s * a + c * b;
    }
}

void quad_rotation(double *Q, const double *theta, double R, int d)
{
    memset(Q, 0, (size_t)d * d * sizeof(double));
    for (int i = 0; i < d; i++) Q[(size_t)i * d + i] = 1;
    size_t k = 0;
    for (int i = 0; i < d; i++)
        for (int j = i + 1; j < d; j++, k++) {
            double a = R * theta[k];
            rotate_rows(Q, i, j, cos(a), sin(a), d);
        }
}

/* Q e₁ = P_last ⋯ P_first e₁: the same row operations on one column. */
void quad_first_column(double *q, const double *theta, double R, int d)
{
    memset(q, 0, (size_t)d * sizeof(double));
    q[0] = 1;
    size_t k = 0;
    for (int i = 0; i < d; i++)
        for (int j = i + 1; j < d; j++, k++) {
            double a = R * theta[k], c = cos(a), s = sin(a);
            double x = q[i], y = q[j];
            q[i] = c * x + s * y;
            q[j] = -s * x + c * y;
        }
}

void quad_hessian_dense(double *H, const double *Q, double kappa, int d)
{
    /* QΛ: column 0 of Q scaled by κ, then (QΛ) Qᵀ. */
    double *QL = xmalloc((size_t)d * d * sizeof(double));
    memcpy(QL, Q, (size_t)d * d * sizeof(double));
    for (int i = 0; i < d; i++) QL[(size_t)i * d] *= kappa;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, d, d, d, 1.0, QL, d, Q, d, 0.0, H, d);
    free(QL);
}

void quad_hessian_from_q(double *H, const double *q, double kappa, int d)
{
    for (int i = 0; i < d; i++)
        for (int j = 0; j < d; j++) H[(size_t)i * d + j] = (i == j) + (kappa - 1) * q[i] * q[j];
}

double quad_tau(const double *q, double kappa, int d)
{
    double l1 = 0, l2 = 0;
    for (int i = 0; i < d; i++) {
        l1 += fabs(q[i]);
        l2 += q[i] * q[i];
    }
    /* ‖q‖₁² >= ‖q‖², so τ <= 1; the clamp only removes round-off */
    return fmin(1.0, (d + (kappa - 1) * l2) / (d + (kappa - 1) * l1 * l1));
}
