/* Extreme eigenvalues of a diagonal-plus-rank-one matrix diag(dg) + ρ u uᵀ
 * from the secular equation f(λ) = 1 + ρ Σ u_i²/(dg_i - λ) = 0 (Golub 1973).
 * f increases between consecutive poles from -∞ to +∞, so each interval holds
 * one root. Iterates use a shifted variable t = λ - p_lo (p_lo the pole at the
 * left end of the bracket), which keeps the digits of a root that sits next to
 * its pole. Each step fits ψ_left + ψ_right by a + b/(p - λ) terms matched in
 * value and slope at the current point (R.-C. Li's "middle way", the idea of
 * LAPACK's dlaed4) and solves the resulting quadratic; a step that leaves the
 * current bracket is replaced by bisection. */
#include "quad.h"
#include <float.h>
#include <math.h>

/* The secular terms split at the bracket: poles dg_i <= p_lo (left, ψ1 < 0) and
 * dg_i >= p_hi (right, ψ2 > 0); with no right end (largest root) all are left.
 * Values and slopes at λ = p_lo + t. Returns f. */
static double secular_eval(double *psi1, double *dpsi1, double *psi2, double *dpsi2, const double *dg,
                           const double *u, double rho, double p_lo, double t, int n)
{
    double s1 = 0, ds1 = 0, s2 = 0, ds2 = 0;
    for (int i = 0; i < n; i++) {
        if (u[i] == 0) continue;
        double del = (dg[i] - p_lo) - t;  /* dg_i - λ */
        double w = rho * u[i] * u[i], q = w / del;
        if (dg[i] <= p_lo) {
            s1 += q;
            ds1 += q / del;
        } else {
            s2 += q;
            ds2 += q / del;
        }
    }
    *psi1 = s1, *dpsi1 = ds1, *psi2 = s2, *dpsi2 = ds2;
    return 1 + s1 + s2;
}

/* Root t ∈ (tl, th) of f(p_lo + t); delta = p_hi - p_lo, or INFINITY for the
 * largest root (no right pole; then th is a finite upper bound with f >= 0). */
static double secular_root(const double *dg, const double *u, double rho, int n, double p_lo, double delta,
                           double tl, double th)
{
    double t = 0.5 * (tl + th);
    for (int it = 0; it < 200; it++) {
        double s1, ds1, s2, ds2;
        double f = secular_eval(&s1, &ds1, &s2, &ds2, dg, u, rho, p_lo, t, n);
        if (f == 0) return t;
        if (f < 0) tl = t;
        else th = t;
        /* f is zero within its rounding error: done. */
        if (fabs(f) <= 4 * n * DBL_EPSILON * (1 + fabs(s1) + fabs(s2))) return t;
        /* Model: 1 + a + b1/(p_lo - λ) + b2/(p_hi - λ) with b1 = ψ1'·(p_lo-λ)², etc. */
        double b1 = ds1 * t * t;                 /* p_lo - λ = -t */
        double c = 1 + s1 + b1 / t;              /* 1 + a1 + a2 after the next line */
        double tn;
        if (isinf(delta)) {
            /* c - b1/t' = 0 */
            tn = c > 0 ? b1 / c : NAN;
        } else {
            double r = delta - t;                /* p_hi - λ */
            double b2 = ds2 * r * r;
            c += s2 - b2 / r;
            /* c t² - (cδ + b1 + b2) t + b1 δ = 0, the root in (0, δ) */
            double B = -(c * delta + b1 + b2), C = b1 * delta;
            double disc = sqrt(fmax(B * B - 4 * c * C, 0));
            tn = B < 0 ? 2 * C / (-B + disc) : (c != 0 ? (-B - disc) / (2 * c) : NAN);
        }
        if (!(tn > tl && tn < th)) tn = 0.5 * (tl + th);
        double tol = 2 * DBL_EPSILON * (fabs(p_lo) + fabs(tn));
        if (fabs(tn - t) <= tol || th - tl <= tol) return tn;
        t = tn;
    }
    return t;
}

void dpr1_extreme_eigs(double *lmin, double *lmax, const double *dg, const double *u, double rho, int n)
{
    /* Poles with u_i ≠ 0 take part in the secular equation; the others are
     * eigenvalues themselves (deflation). */
    double p1 = INFINITY, p2 = INFINITY, pn = -INFINITY, dmin = INFINITY, dmax = -INFINITY, unorm2 = 0;
    int active = 0;
    for (int i = 0; i < n; i++) {
        if (rho == 0 || u[i] == 0) {
            dmin = fmin(dmin, dg[i]);
            dmax = fmax(dmax, dg[i]);
            continue;
        }
        active++;
        unorm2 += u[i] * u[i];
        if (dg[i] < p1) {
            p2 = p1;
            p1 = dg[i];
        } else if (dg[i] < p2) {
            p2 = dg[i];
        }
        if (dg[i] > pn) pn = dg[i];
    }
    if (active == 0) {
        *lmin = dmin;
        *lmax = dmax;
        return;
    }
    double top = pn + secular_root(dg, u, rho, n, pn, INFINITY, 0, rho * unorm2);
    double bottom;
    if (active == 1) bottom = top;           /* one active pole: its eigenvalue is top */
    else if (p2 == p1) bottom = p1;          /* a repeated pole is an eigenvalue */
    else bottom = p1 + secular_root(dg, u, rho, n, p1, p2 - p1, 0, p2 - p1);
    /* Deflated poles are eigenvalues too. */
    *lmin = fmin(bottom, dmin);
    *lmax = fmax(top, dmax);
}
