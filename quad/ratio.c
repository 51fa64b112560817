/* D_Adam from g = Hx and r = κ(D_Adam H)/κ(H) two ways, fast from
 * q (H = I + (κ-1) q qᵀ) and dense from H (the reference the tests use). */
#include "quad.h"
#include <cblas.h>
#include <math.h>
#include <stdlib.h>

/* D_Adam = diag(1/|g|), Adam's diagonal from the gradient g = Hx (paper Fig. 4),
 * scaled by max|g| (κ of DH does not depend on the scale of D). Returns 0 if
 * some g_i is 0 or its entry is not finite. */
static int inverse_gradient_diag(double *dg /* (d) */, const double *g, int d)
{
    double gmax = 0;
    for (int i = 0; i < d; i++) gmax = fmax(gmax, fabs(g[i]));
    if (!(gmax > 0) || !isfinite(gmax)) return 0;
    for (int i = 0; i < d; i++) {
        dg[i] = gmax / fabs(g[i]);
        if (!isfinite(dg[i]) || !isfinite(dg[i] * dg[i])) return 0;
    }
    return 1;
}

int quad_ratio_fast(quad_ratio *r, const double *q, double kappa, const double *x, double *work, int d)
{
    double *g = work + d;
    /* g = x + (κ-1) q (qᵀx) */
    double qx = 0;
    for (int i = 0; i < d; i++) qx += q[i] * x[i];
    for (int i = 0; i < d; i++) g[i] = x[i] + (kappa - 1) * q[i] * qx;
    return quad_ratio_scaled(r, q, kappa, g, work, d);
}

int quad_ratio_scaled(quad_ratio *r, const double *q, double kappa, const double *s, double *work, int d)
{
    double *dg = work, *v = work + d;
    if (!inverse_gradient_diag(dg, s, d)) return 0;  /* s may be v itself: read before v is overwritten */
    double qq = 0;
    for (int i = 0; i < d; i++) qq += q[i] * q[i];
    double rho = kappa - 1;
    double lmin, lmax, smin2, smax2;
    /* a: D + ρ u uᵀ, u = D^½ q */
    for (int i = 0; i < d; i++) v[i] = sqrt(dg[i]) * q[i];
    dpr1_extreme_eigs(&lmin, &lmax, dg, v, rho, d);
    double ka = lmax / lmin;
    /* b: H² = I + (2ρ + ρ²‖q‖²) q qᵀ, so (DH)(DH)ᵀ = D H² D = D² + ρ₂ w wᵀ, w = Dq */
    double rho2 = 2 * rho + rho * rho * qq;
    for (int i = 0; i < d; i++) {
        v[i] = dg[i] * q[i];
        dg[i] = dg[i] * dg[i];
    }
    dpr1_extreme_eigs(&smin2, &smax2, dg, v, rho2, d);
    double kb = sqrt(smax2 / smin2);
    double kh = 1 + rho * qq;  /* κ(H): eigenvalues 1 + ρ‖q‖² and 1 */
    r->a = ka / kh;
    r->b = kb / kh;
    return 1;
}

int quad_ratio_dense_scaled(quad_ratio *r, const double *H, const double *s, int d)
{
    size_t dd = (size_t)d * d;
    double *dg = xmalloc((size_t)d * sizeof(double));
    int ok = inverse_gradient_diag(dg, s, d);
    if (ok) {
        double *A = xmalloc(dd * sizeof(double)), *B = xmalloc(dd * sizeof(double));
        for (int i = 0; i < d; i++)
            for (int j = 0; j < d; j++) {
                A[(size_t)i * d + j] = sqrt(dg[i]) * H[(size_t)i * d + j] * sqrt(dg[j]);  /* D^½ H D^½ */
                B[(size_t)i * d + j] = dg[i] * H[(size_t)i * d + j];                      /* DH */
            }
        spectrum sh = sym_spectrum(d, H);
        double kh = sh.lmax / sh.lmin;
        r->a = kappa_spd(d, A) / kh;
        r->b = kappa_svd(d, d, B) / kh;
        free(A);
        free(B);
    }
    free(dg);
    return ok;
}

int quad_ratio_dense(quad_ratio *r, const double *H, const double *x, int d)
{
    double *g = xmalloc((size_t)d * sizeof(double));
    cblas_dgemv(CblasRowMajor, CblasNoTrans, d, d, 1.0, H, d, x, 1, 0.0, g, 1);
    int ok = quad_ratio_dense_scaled(r, H, g, d);
    free(g);
    return ok;
}
