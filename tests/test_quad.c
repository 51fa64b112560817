/* Tests of quad/: the rotated generator against the paper's dense listing,
 * H = I + (κ-1)qqᵀ, τ, the secular solver and r against dense LAPACK, the
 * sweep, the block quadratic, the optimizer driver and its extending lr grid
 * on quadratics, and the claims' statistics (Fig. 4's per-curve trend and its
 * shuffled control, Fig. 3's loss gap) with each control failing its rule. */
#include "check.h"
#include "bench/quad_listing.h"
#include "core/core.h"
#include "core/model.h"
#include "experiments/fig3_util.h"
#include "harness/lr_grid.h"
#include "optim/optim.h"
#include "quad/quad.h"
#include "verdict/verdict.h"
#include <stdlib.h>

/* max |QᵀQ - I| */
static double orthogonality_error(const double *Q, int d)
{
    double *G = xmalloc((size_t)d * d * sizeof(double));
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, d, d, d, 1.0, Q, d, Q, d, 0.0, G, d);
    for (int i = 0; i < d; i++) G[(size_t)i * d + i] -= 1;
    double e = max_abs(checked_mul(d, d, "G"), G);
    free(G);
    return e;
}

static void test_q_orthogonal(void)
{
    int d = 100;
    gsl_rng *rng = rng_new(11);
    double *theta = xmalloc(quad_nangles(d) * sizeof(double)), *Q = xmalloc((size_t)d * d * sizeof(double));
    quad_draw_angles(theta, rng, d);
    int in_range = 1;
    for (size_t k = 0; k < quad_nangles(d); k++) in_range &= fabs(theta[k]) <= M_PI / 2;
    CHECK(in_range && quad_nangles(d) == 4950, "angles in [-pi/2, pi/2], %zu of them", quad_nangles(d));
    double Rs[3] = {0.3, 1.0, 0.02};
    for (int k = 0; k < 3; k++) {
        quad_rotation(Q, theta, Rs[k], d);
        double e = orthogonality_error(Q, d);
        CHECK(e < 1e-12, "|Q'Q - I| = %.3g at d = 100, R = %g", e, Rs[k]);
    }
    /* R = 0: no rotation at all */
    quad_rotation(Q, theta, 0.0, d);
    CHECK(orthogonality_error(Q, d) == 0, "Q = I at R = 0");
    free(theta);
    free(Q);
    rng_free(rng);
}

/* The rotation order and sides equal the paper's dense listing (Q = P @ Q). */
static void test_listing_equal(void)
{
    gsl_rng *rng = rng_new(5);
    int ds[3] = {2, 3, 7};
    for (int k = 0; k < 3; k++) {
        int d = ds[k];
        size_t dd = (size_t)d * d;
        double *theta = xmalloc(quad_nangles(d) * sizeof(double)), *T = xmalloc(dd * sizeof(double));
        double *Q = xmalloc(dd * sizeof(double)), *H = xmalloc(dd * sizeof(double));
        double *Ql = xmalloc(dd * sizeof(double)), *Hl = xmalloc(dd * sizeof(double));
        quad_draw_angles(theta, rng, d);
        double R = 0.8, kappa = 37;
        listing_theta(T, theta, R, d);
        listing_generate_Hb(Hl, Ql, T, kappa, d);
        quad_rotation(Q, theta, R, d);
        quad_hessian_dense(H, Q, kappa, d);
        CHECK(max_abs_diff(dd, Q, Ql) < 1e-14, "d=%d: Q differs from the listing by %.3g", d,
              max_abs_diff(dd, Q, Ql));
        CHECK(max_abs_diff(dd, H, Hl) < 1e-12 * kappa, "d=%d: H differs from the listing by %.3g", d,
              max_abs_diff(dd, H, Hl));
        if (d >= 3) {
            /* the test can fail: the reversed order (Q = Q @ P) is a different matrix */
            double *Qr = xmalloc(dd * sizeof(double)), *P = xmalloc(dd * sizeof(double));
            listing_eye(Qr, d);
            for (int i = 0; i < d; i++)
                for (int j = i + 1; j < d; j++) {
                    listing_givens(P, i, j, T[(size_t)i * d + j], d);
                    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d, d, d, 1.0, Qr, d, P, d, 0.0, Hl, d);
                    memcpy(Qr, Hl, dd * sizeof(double));
                }
            CHECK(max_abs_diff(dd, Q, Qr) > 1e-3, "d=%d: Q @ P order should differ (%.3g)", d,
                  max_abs_diff(dd, Q, Qr));
            free(Qr);
            free(P);
        }
        free(theta), free(T), free(Q), free(H), free(Ql), free(Hl);
    }
    /* d = 2 by hand: Q = [[c, s], [-s, c]], so q = (c, -s) */
    double th = 0.4, q[2], Q2[4];
    quad_first_column(q, &th, 1.0, 2);
    quad_rotation(Q2, &th, 1.0, 2);
    CHECK(q[0] == cos(0.4) && q[1] == -sin(0.4) && Q2[1] == sin(0.4) && Q2[2] == -sin(0.4),
          "d=2 by hand: q = (%g, %g), Q01 = %g", q[0], q[1], Q2[1]);
    rng_free(rng);
}

/* H = I + (κ-1) q qᵀ with q the first column of Q; eigenvalues {κ, 1, …, 1}; τ. */
static void test_rank_one_form(void)
{
    gsl_rng *rng = rng_new(7);
    int d = 40;
    size_t dd = (size_t)d * d;
    double *theta = xmalloc(quad_nangles(d) * sizeof(double)), *Q = xmalloc(dd * sizeof(double));
    double *H = xmalloc(dd * sizeof(double)), *H1 = xmalloc(dd * sizeof(double)), *q = xmalloc(d * sizeof(double));
    double *w = xmalloc(d * sizeof(double));
    quad_draw_angles(theta, rng, d);
    double Rs[4] = {0, 0.1, 0.5, 1};
    for (int k = 0; k < 4; k++) {
        double kappa = 500;
        quad_rotation(Q, theta, Rs[k], d);
        quad_first_column(q, theta, Rs[k], d);
        double e = 0;
        for (int i = 0; i < d; i++) e = fmax(e, fabs(q[i] - Q[(size_t)i * d]));
        CHECK(e < 1e-14, "R=%g: q = Q e1 to %.3g", Rs[k], e);
        quad_hessian_dense(H, Q, kappa, d);
        quad_hessian_from_q(H1, q, kappa, d);
        CHECK(max_abs_diff(dd, H, H1) < 1e-12 * kappa, "R=%g: H = I + (k-1)qq' to %.3g", Rs[k],
              max_abs_diff(dd, H, H1));
        sym_eigvals(d, H, w);
        double e1 = 0;
        for (int i = 0; i < d - 1; i++) e1 = fmax(e1, fabs(w[i] - 1));
        CHECK(e1 < 1e-12 * kappa && fabs(w[d - 1] - kappa) < 1e-12 * kappa,
              "R=%g: eigenvalues {%g, 1...}: max|w-1| %.3g, top %.17g", Rs[k], kappa, e1, w[d - 1]);
        double t = quad_tau(q, kappa, d), td = tau_ratio(d, H);
        CHECK_CLOSE(t, td, 1e-12, "closed-form tau vs dense tau");
        if (Rs[k] == 0) CHECK(t == 1 && td == 1, "tau = 1 at R = 0 (got %.17g, dense %.17g)", t, td);
        else CHECK(t < 1, "tau < 1 at R = %g (got %g)", Rs[k], t);
    }
    free(theta), free(Q), free(H), free(H1), free(q), free(w);
    rng_free(rng);
}

/* diag(dg) + ρ u uᵀ: extreme eigenvalues against LAPACK. */
static void check_dpr1(const double *dg, const double *u, double rho, int n, const char *what)
{
    double *A = xcalloc((size_t)n * n, sizeof(double)), *w = xmalloc(n * sizeof(double));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) A[(size_t)i * n + j] = (i == j ? dg[i] : 0) + rho * u[i] * u[j];
    sym_eigvals(n, A, w);
    double lmin, lmax;
    dpr1_extreme_eigs(&lmin, &lmax, dg, u, rho, n);
    /* LAPACK's own error is ~n·ε·‖A‖; compare relative to the eigenvalue and to ‖A‖ */
    double scale = fmax(fabs(w[n - 1]), fabs(w[0]));
    CHECK(fabs(lmin - w[0]) <= 1e-10 * fabs(w[0]) + 1e-13 * scale, "%s: lmin %.17g vs LAPACK %.17g", what, lmin, w[0]);
    CHECK(fabs(lmax - w[n - 1]) <= 1e-12 * scale, "%s: lmax %.17g vs LAPACK %.17g", what, lmax, w[n - 1]);
    free(A);
    free(w);
}

static void test_secular(void)
{
    gsl_rng *rng = rng_new(3);
    for (int trial = 0; trial < 200; trial++) {
        int n = 1 + (int)rng_int(rng, 60);
        double dg[60], u[60], rho = pow(10, rng_uniform_in(rng, -3, 4));
        for (int i = 0; i < n; i++) {
            dg[i] = pow(10, rng_uniform_in(rng, -2, 3));
            u[i] = rng_gaussian(rng, 1.0);
        }
        if (trial % 5 == 1) u[rng_int(rng, n)] = 0;           /* deflated pole */
        if (trial % 7 == 2 && n > 2) dg[1] = dg[0];           /* repeated pole */
        if (trial % 11 == 3) u[0] *= 1e-9;                    /* nearly deflated */
        char what[64];
        snprintf(what, sizeof what, "random trial %d (n %d, rho %.3g)", trial, n, rho);
        check_dpr1(dg, u, rho, n, what);
    }
    /* by hand: n = 2, dg = (1, 3), u = (1, 1)/√2·√2, ρ = 1: [[2,1],[1,4]] → 3 ∓ √2 */
    double dg[3] = {1, 3, 5}, u[3] = {1, 1, 0}, lmin, lmax;
    dpr1_extreme_eigs(&lmin, &lmax, dg, u, 1.0, 2);
    CHECK(fabs(lmin - (3 - sqrt(2))) < 1e-15 && fabs(lmax - (3 + sqrt(2))) < 1e-14, "2x2 by hand: %.17g %.17g",
          lmin, lmax);
    /* the deflated pole 5 is the largest eigenvalue */
    dpr1_extreme_eigs(&lmin, &lmax, dg, u, 1.0, 3);
    CHECK(lmax == 5 && fabs(lmin - (3 - sqrt(2))) < 1e-15, "deflated pole: %.17g %.17g", lmin, lmax);
    /* ρ = 0: the diagonal */
    dpr1_extreme_eigs(&lmin, &lmax, dg, u, 0.0, 3);
    CHECK(lmin == 1 && lmax == 5, "rho = 0: %g %g", lmin, lmax);
    rng_free(rng);
}

/* r by the fast path equals r from dense LAPACK, both methods. */
static void test_ratio_fast_vs_dense(void)
{
    gsl_rng *rng = rng_new(9);
    int ds[5] = {2, 5, 10, 30, 60};
    double kappas[4] = {1, 10, 500, 5000};
    double worst_a = 0, worst_b = 0;
    for (int a = 0; a < 5; a++)
        for (int b = 0; b < 4; b++)
            for (int rep = 0; rep < 3; rep++) {
                int d = ds[a];
                double kappa = kappas[b], R = rep == 0 ? 0 : rng_uniform_in(rng, 0, 1);
                double *theta = xmalloc((quad_nangles(d) + 1) * sizeof(double)), *q = xmalloc(d * sizeof(double));
                double *x = xmalloc(d * sizeof(double)), *H = xmalloc((size_t)d * d * sizeof(double));
                double *work = xmalloc(2 * d * sizeof(double));
                quad_draw_angles(theta, rng, d);
                quad_first_column(q, theta, R, d);
                quad_hessian_from_q(H, q, kappa, d);
                for (int i = 0; i < d; i++) x[i] = rng_gaussian(rng, 1.0);
                quad_ratio rf, rd;
                int okf = quad_ratio_fast(&rf, q, kappa, x, work, d), okd = quad_ratio_dense(&rd, H, x, d);
                CHECK(okf && okd, "both paths succeed");
                worst_a = fmax(worst_a, fabs(rf.a - rd.a) / rd.a);
                worst_b = fmax(worst_b, fabs(rf.b - rd.b) / rd.b);
                if (R == 0) {
                    /* H diagonal: DH = diag(1/|x_i|), so r = (max|x|/min|x|)/κ both ways */
                    double mx = 0, mn = INFINITY;
                    for (int i = 0; i < d; i++) mx = fmax(mx, fabs(x[i])), mn = fmin(mn, fabs(x[i]));
                    CHECK_CLOSE(rf.a, mx / mn / kappa, 1e-12, "R = 0 closed form, method a");
                    CHECK_CLOSE(rf.b, mx / mn / kappa, 1e-12, "R = 0 closed form, method b");
                }
                free(theta), free(q), free(x), free(H), free(work);
            }
    CHECK(worst_a < 1e-9, "fast vs dense r, method a: worst relative difference %.3g", worst_a);
    CHECK(worst_b < 1e-9, "fast vs dense r, method b: worst relative difference %.3g", worst_b);
    /* guard: g_i = 0 (x_1 = 0 on a diagonal H) skips the point */
    double q[3] = {1, 0, 0}, x[3] = {1, 0, 2}, work[6];
    quad_ratio r = {-1, -1};
    CHECK(quad_ratio_fast(&r, q, 10, x, work, 3) == 0 && r.a == -1, "g_i = 0 is reported, r untouched");
    rng_free(rng);
}

static void test_stats(void)
{
    double v[4] = {4, 1, 3, 2};
    CHECK(quantile(v, 4, 0.5) == 2.5 && quantile(v, 4, 0.25) == 1.75 &&
          quantile(v, 4, 1) == 4, "numpy-style quantiles of {1,2,3,4}");
    CHECK(v[0] == 4, "input not modified");
    double x[5] = {1, 2, 3, 4, 5}, y[5] = {10, 20, 25, 26, 100}, z[5] = {5, 4, 3, 2, 1};
    CHECK(spearman(x, y, 5) == 1 && spearman(x, z, 5) == -1, "spearman ±1 on monotone data");
    /* by hand: y = (1, 3, 2, 5, 4): d² = 0+1+1+1+1 = 4, ρ = 1 - 6·4/(5·24) = 0.8 */
    double y2[5] = {1, 3, 2, 5, 4};
    CHECK_CLOSE(spearman(x, y2, 5), 0.8, 1e-15, "spearman by hand");
    /* ties get average ranks: x = (1,1,2) has ranks (1.5,1.5,3) */
    double t1[3] = {1, 1, 2}, t2[3] = {1, 2, 3};
    CHECK_CLOSE(spearman(t1, t2, 3), sqrt(0.75), 1e-15, "spearman with ties");
}

/* The sweep does not depend on the number of threads; R = 0 rows have τ = 1. */
static void test_sweep(void)
{
    quad_sweep_config c = {.d = 6, .kappa = 50, .nthetas = 5, .npoints = 7, .nr = 4, .seed = 42, .threads = 1};
    quad_sweep_result *s1 = quad_sweep_run(&c);
    c.threads = 3;
    quad_sweep_result *s2 = quad_sweep_run(&c);
    size_t nm = 5 * 4, ns = nm * 7;
    CHECK(memcmp(s1->tau, s2->tau, nm * sizeof(double)) == 0 && memcmp(s1->ra, s2->ra, ns * sizeof(double)) == 0 &&
          memcmp(s1->rb, s2->rb, ns * sizeof(double)) == 0, "1 and 3 threads give identical results");
    quad_sweep_row rows[4];
    quad_sweep_summary(rows, s1);
    CHECK(rows[0].R == 0 && rows[3].R == 1 && rows[0].tau_mean == 1 && rows[0].tau_min == 1, "R grid and tau(R=0) = 1");
    CHECK(rows[2].tau_mean < 1 && rows[1].n == 35, "tau < 1 at R > 0, %ld samples", rows[1].n);
    CHECK(rows[1].ra_q1 <= rows[1].ra_median && rows[1].ra_median <= rows[1].ra_q3, "quartiles ordered");
    /* a different seed gives different draws */
    c.seed = 43;
    quad_sweep_result *s3 = quad_sweep_run(&c);
    CHECK(memcmp(s1->tau, s3->tau, nm * sizeof(double)) != 0, "seed changes the draws");
    quad_sweep_free(s1);
    quad_sweep_free(s2);
    quad_sweep_free(s3);
}

static void test_block_quadratic(void)
{
    gsl_rng *rng = rng_new(1);
    int n = 30;
    double *Q = xmalloc((size_t)n * n * sizeof(double));
    haar_orthogonal(Q, rng, n);
    CHECK(orthogonality_error(Q, n) < 1e-13, "Haar Q orthogonal: %.3g", orthogonality_error(Q, n));
    /* Haar: E[Q_ij] = 0, E[Q_ij²] = 1/n; averaged over 200 draws of Q_00 and Q_01 */
    double m = 0, m2 = 0;
    int trials = 400;
    for (int t = 0; t < trials; t++) {
        haar_orthogonal(Q, rng, n);
        m += Q[0] / trials;
        m2 += Q[0] * Q[0] / trials;
    }
    /* without the sign fix Q_00 is biased negative (LAPACK's Householder makes R_00 ≤ 0) */
    CHECK(fabs(m) < 4 * sqrt(1.0 / n / trials), "mean of Q_00 %.4g should be ~0", m);
    CHECK(fabs(m2 - 1.0 / n) < 0.3 / n, "E[Q_00^2] %.4g vs 1/n = %.4g", m2, 1.0 / n);
    free(Q);

    int sizes[3] = {3, 4, 5}, len[3] = {3, 3, 3};
    double s1[3] = {1, 2, 3}, s2[3] = {99, 100, 101}, s3[3] = {4998, 4999, 5000};
    const double *sets[3] = {s1, s2, s3};
    int N = 12;
    double *H = xmalloc((size_t)N * N * sizeof(double)), lambda[12], w[12];
    block_quadratic(H, lambda, rng, sizes, sets, len, 3);
    int off_ok = 1, sym_ok = 1, in_set = 1;
    int blk[12] = {0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 2};
    for (int i = 0; i < N; i++) {
        in_set &= lambda[i] == sets[blk[i]][0] || lambda[i] == sets[blk[i]][1] || lambda[i] == sets[blk[i]][2];
        for (int j = 0; j < N; j++) {
            if (blk[i] != blk[j]) off_ok &= H[i * N + j] == 0;
            sym_ok &= H[i * N + j] == H[j * N + i];
        }
    }
    CHECK(off_ok && sym_ok && in_set, "block structure %d, symmetry %d, eigenvalues from the sets %d", off_ok, sym_ok,
          in_set);
    /* the spectrum of H is the drawn eigenvalues */
    double sorted[12];
    memcpy(sorted, lambda, sizeof sorted);
    for (int i = 1; i < N; i++)
        for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
            double t = sorted[j];
            sorted[j] = sorted[j - 1], sorted[j - 1] = t;
        }
    sym_eigvals(N, H, w);
    CHECK(max_abs_diff(N, w, sorted) < 1e-9, "eigenvalues of H are the drawn ones (%.3g)", max_abs_diff(N, w, sorted));
    free(H);
    rng_free(rng);
}

/* GD at 2/(L+μ) contracts at (κ-1)/(κ+1) per step on a diagonal quadratic:
 * on the extreme eigenvectors each coordinate is multiplied by ∓(κ-1)/(κ+1). */
static void test_gd_rate(void)
{
    int n = 5;
    double H[25] = {0}, lam[5] = {2, 7, 30, 55, 200}, w0[5] = {1, 0, 0, 0, -3}, loss[21];
    for (int i = 0; i < n; i++) H[i * n + i] = lam[i];
    double kappa = 100, c = (kappa - 1) / (kappa + 1), lr = quad_optimal_lr(H, n);
    CHECK_CLOSE(lr, 2.0 / 202, 1e-15, "2/(L+mu)");
    optim_config cfg = optim_defaults(OPTIM_GD);
    quad_train(loss, H, w0, n, OPTIM_GD, &cfg, NULL, lr, 20);
    double worst = 0;
    for (int t = 0; t < 20; t++) worst = fmax(worst, fabs(loss[t + 1] / loss[t] - c * c));
    CHECK(worst < 1e-12, "loss ratio per step = ((k-1)/(k+1))^2 = %.15g, worst deviation %.3g", c * c, worst);
    /* any start: no faster than ... and never slower than c² per step */
    double w1[5] = {0.3, -1, 2, 0.5, 1}, l1[21];
    quad_train(l1, H, w1, n, OPTIM_GD, &cfg, NULL, lr, 20);
    int ok = 1;
    for (int t = 0; t < 20; t++) ok &= l1[t + 1] <= c * c * l1[t] * (1 + 1e-12);
    CHECK(ok, "loss contracts by at least c^2 from any start");
    /* a step beyond 2/L diverges: the run stops and the rest is NaN */
    double big[201];
    long done = quad_train(big, H, w1, n, OPTIM_GD, &cfg, NULL, 4.0 / 200, 200);  /* ×9 per step */
    CHECK(done < 200 && isnan(big[200]) && !isnan(big[done]), "divergence stops the run at step %ld", done);
}

/* Adam with β2 = 1 is the running mean of g² (bias-corrected m as usual). */
static void reference_adam_limit(double *loss, const double *H, const double *w0, int n, double beta1, double lr,
                                 long steps)
{
    double w[8], m[8] = {0}, sum2[8] = {0}, g[8];
    memcpy(w, w0, n * sizeof(double));
    loss[0] = quad_loss(H, w, n);
    for (long t = 1; t <= steps; t++) {
        for (int i = 0; i < n; i++) {
            g[i] = 0;
            for (int j = 0; j < n; j++) g[i] += H[i * n + j] * w[j];
        }
        for (int i = 0; i < n; i++) {
            sum2[i] += g[i] * g[i];
            m[i] = beta1 * m[i] + (1 - beta1) * g[i];
            double mhat = m[i] / (1 - pow(beta1, t)), vhat = sum2[i] / t;  /* (1/t) Σ_s g_s² */
            w[i] -= lr * mhat / sqrt(vhat);
        }
        loss[t] = quad_loss(H, w, n);
    }
}

static void test_adam_limit(void)
{
    int n = 6;
    gsl_rng *rng = rng_new(21);
    double H[36], Q[36], lam[6] = {1, 2, 3, 10, 40, 90}, w0[6];
    haar_orthogonal(Q, rng, n);
    sym_from_eig(H, Q, lam, n);
    for (int i = 0; i < n; i++) w0[i] = rng_gaussian(rng, 1.0);
    double betas[2] = {0, 0.6};
    for (int b = 0; b < 2; b++) {
        double got[51], want[51];
        optim_config cfg = optim_defaults(OPTIM_ADAM);
        cfg.beta1 = betas[b], cfg.beta2 = 1, cfg.eps = 0;
        quad_train(got, H, w0, n, OPTIM_ADAM, &cfg, NULL, 0.05, 50);
        reference_adam_limit(want, H, w0, n, betas[b], 0.05, 50);
        double e = 0;
        for (int t = 0; t <= 50; t++) e = fmax(e, fabs(got[t] - want[t]) / want[0]);
        CHECK(e < 1e-12, "beta1 = %g, beta2 -> 1: Adam equals the running-mean formula (%.3g)", betas[b], e);
        /* and differs from beta2 = 0.999 (the test can tell the two apart) */
        cfg.beta2 = 0.999;
        quad_train(got, H, w0, n, OPTIM_ADAM, &cfg, NULL, 0.05, 50);
        e = 0;
        for (int t = 0; t <= 50; t++) e = fmax(e, fabs(got[t] - want[t]) / want[0]);
        CHECK(e > 1e-6, "beta2 = 0.999 differs from the limit (%.3g)", e);
    }
    rng_free(rng);
}

/* Adam-mini with one entry per block is Adam; with the blocks of a block-diagonal
 * H, blockwise GD runs each block at its own optimal step. */
static void test_mini_and_blockwise(void)
{
    gsl_rng *rng = rng_new(8);
    int sizes[3] = {4, 5, 3}, len[3] = {3, 3, 3}, n = 12;
    double s1[3] = {1, 2, 3}, s2[3] = {99, 100, 101}, s3[3] = {4998, 4999, 5000};
    const double *sets[3] = {s1, s2, s3};
    double H[144], lambda[12], w0[12], a[101], b[101];
    block_quadratic(H, lambda, rng, sizes, sets, len, 3);
    for (int i = 0; i < n; i++) w0[i] = rng_gaussian(rng, 1.0);
    partition *ones = quad_partition(NULL, 0, n), *p3 = quad_partition(sizes, 3, n);
    optim_config cfg = optim_defaults(OPTIM_ADAM);
    cfg.beta1 = 0.9, cfg.beta2 = 0.999;
    quad_train(a, H, w0, n, OPTIM_ADAM, &cfg, NULL, 1e-2, 100);
    quad_train(b, H, w0, n, OPTIM_ADAM_MINI, &cfg, ones, 1e-2, 100);
    double e = 0;
    for (int t = 0; t <= 100; t++) e = fmax(e, fabs(a[t] - b[t]) / a[0]);
    CHECK(e < 1e-13 && ones->nblocks == n, "Adam-mini with one-entry blocks equals Adam (%.3g)", e);
    /* β2 → 1 at a step where the run stays stable (at lr 1e-2 it turns unstable
     * near step 80 and round-off differences of the two paths then grow) */
    cfg.beta1 = 0, cfg.beta2 = 1;
    quad_train(a, H, w0, n, OPTIM_ADAM, &cfg, NULL, 1e-3, 100);
    quad_train(b, H, w0, n, OPTIM_ADAM_MINI, &cfg, ones, 1e-3, 100);
    e = 0;
    for (int t = 0; t <= 100; t++) e = fmax(e, fabs(a[t] - b[t]) / a[0]);
    CHECK(e < 1e-13, "... also in the beta2 -> 1 limit (%.3g)", e);
    quad_train(b, H, w0, n, OPTIM_ADAM_MINI, &cfg, p3, 1e-2, 100);
    CHECK(fabs(a[100] - b[100]) > 1e-6 * a[0], "three blocks differ from Adam");

    /* block optimal steps from the drawn eigenvalues */
    double lr[3];
    quad_block_optimal_lr(lr, H, n, p3);
    int off = 0, ok = 1;
    for (int l = 0; l < 3; l++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int i = off; i < off + sizes[l]; i++) lo = fmin(lo, lambda[i]), hi = fmax(hi, lambda[i]);
        ok &= fabs(lr[l] - 2 / (lo + hi)) < 1e-12 * lr[l];
        off += sizes[l];
    }
    CHECK(ok, "block steps 2/(L_l+mu_l): %g %g %g", lr[0], lr[1], lr[2]);
    /* blockwise GD on blockdiag(H_l) = GD on each H_l with its own step */
    optim_config bg = optim_defaults(OPTIM_BLOCK_GD);
    bg.block_lr = lr;
    quad_train(a, H, w0, n, OPTIM_BLOCK_GD, &bg, p3, 1.0, 30);
    double sum[31] = {0};
    optim_config gd = optim_defaults(OPTIM_GD);
    off = 0;
    for (int l = 0; l < 3; l++) {
        int m = sizes[l];
        double Hl[25], part[31];
        for (int i = 0; i < m; i++)
            for (int j = 0; j < m; j++) Hl[i * m + j] = H[(off + i) * n + off + j];
        quad_train(part, Hl, w0 + off, m, OPTIM_GD, &gd, NULL, lr[l], 30);
        for (int t = 0; t <= 30; t++) sum[t] += part[t];
        off += m;
    }
    e = 0;
    for (int t = 0; t <= 30; t++) e = fmax(e, fabs(a[t] - sum[t]) / a[0]);
    CHECK(e < 1e-13, "blockwise GD = per-block GD (%.3g)", e);
    partition_free(ones);
    partition_free(p3);
    rng_free(rng);
}

/* The grid keeps every run in ascending lr order; the best has the lowest mean
 * log10 loss; a best at an edge extends the grid until it is bracketed (by a
 * worse or a diverged run) or a bound stops it. */
static void test_grid(void)
{
    int n = 3;
    double H[9] = {4, 1, 0, 1, 3, 0, 0, 0, 1}, w0[3] = {1, -1, 2};
    optim_config cfg = optim_defaults(OPTIM_GD);
    quad_grid *g = quad_grid_search(H, w0, n, OPTIM_GD, &cfg, NULL, 1e-3, 1, 7, 1e-6, 10, 200);
    CHECK(g->grid.n == 7 && fabs(g->grid.lr[0] - 1e-3) < 1e-18 && fabs(g->grid.lr[6] - 1) < 1e-15 &&
          fabs(g->grid.lr[3] - sqrt(1e-3)) < 1e-15, "planned grid: %d points %g .. %g, middle %g", g->grid.n,
          g->grid.lr[0], g->grid.lr[6], g->grid.lr[3]);
    int ok = g->best >= 0;
    for (int k = 0; k < g->grid.n && ok; k++) ok &= !(g->grid.score[k] < g->grid.score[g->best]);
    CHECK(ok && g->status == GRID_INTERIOR, "best is the lowest score (lr %g), interior", g->grid.lr[g->best]);
    CHECK(isnan(g->grid.score[6]) && isnan(g->final_loss[6]), "lr = 1 > 2/L diverges: NaN score and final loss");
    double c[201];
    quad_train(c, H, w0, n, OPTIM_GD, &cfg, NULL, g->grid.lr[2], 200);
    CHECK(memcmp(c, g->loss + 2 * 201, sizeof c) == 0 && g->grid.score[2] == quad_mean_log_loss(c, 200),
          "grid curve 2 is the run at lr %g and its score", g->grid.lr[2]);
    quad_grid_free(g);
    /* a first grid below the optimum (≈ 0.36) extends upward: 0.1, then 1 diverges and brackets 0.1 */
    g = quad_grid_search(H, w0, n, OPTIM_GD, &cfg, NULL, 1e-4, 1e-2, 3, 1e-6, 10, 200);
    CHECK(g->grid.n == 5 && g->status == GRID_INTERIOR && fabs(g->grid.lr[g->best] - 0.1) < 1e-12 &&
          fabs(g->grid.lr[4] - 1) < 1e-12, "grid extends up to a bracketed best (%d runs, best %g, %s)", g->grid.n,
          g->grid.lr[g->best], grid_status_name(g->status));
    for (int k = 0; k < g->grid.n; k++) {
        quad_train(c, H, w0, n, OPTIM_GD, &cfg, NULL, g->grid.lr[k], 200);
        ok &= memcmp(c, g->loss + (size_t)k * 201, sizeof c) == 0;
    }
    CHECK(ok, "after extension every curve is still the run at its lr");
    quad_grid_free(g);
    /* the same with the upper bound at the first grid's edge: stopped there */
    g = quad_grid_search(H, w0, n, OPTIM_GD, &cfg, NULL, 1e-4, 1e-2, 3, 1e-6, 1e-2, 200);
    CHECK(g->grid.n == 3 && g->status == GRID_EDGE_AT_BOUND && g->best == 2, "bound stops the grid: %s",
          grid_status_name(g->status));
    quad_grid_free(g);
}

/* ---- the claims' statistics ------------------------------------------------------------ */

/* Fig. 4's per-curve criterion on curves with a known trend, with an arm like the
 * one the sweep shows at d >= 50, and with τ shuffled; the share of falling curves. */
/* quad_ratio_scaled: D = diag(1/|s|) for any s, against the dense path; with s = Hx it is
 * quad_ratio_fast; at R = 0 (H = diag(κ, 1, ..., 1)) the closed form. */
static void test_ratio_scaled(void)
{
    gsl_rng *rng = rng_new(31);
    int ds[3] = {3, 10, 40};
    double worst = 0;
    for (int a = 0; a < 3; a++)
        for (int rep = 0; rep < 4; rep++) {
            int d = ds[a];
            double kappa = rep % 2 ? 500 : 7, R = rep < 2 ? 0 : rng_uniform_in(rng, 0.2, 1);
            double *theta = xmalloc((quad_nangles(d) + 1) * sizeof(double)), *q = xmalloc(d * sizeof(double));
            double *z = xmalloc(d * sizeof(double)), *H = xmalloc((size_t)d * d * sizeof(double));
            double *A = xmalloc((size_t)d * d * sizeof(double)), *B = xmalloc((size_t)d * d * sizeof(double));
            double *work = xmalloc(2 * d * sizeof(double));
            quad_draw_angles(theta, rng, d);
            quad_first_column(q, theta, R, d);
            quad_hessian_from_q(H, q, kappa, d);
            for (int i = 0; i < d; i++) z[i] = rng_gaussian(rng, 1.0);
            quad_ratio r;
            CHECK(quad_ratio_scaled(&r, q, kappa, z, work, d), "scaled ratio computed");
            for (int i = 0; i < d; i++)
                for (int j = 0; j < d; j++) {
                    A[i * d + j] = H[i * d + j] / sqrt(fabs(z[i]) * fabs(z[j])); /* D^1/2 H D^1/2 */
                    B[i * d + j] = H[i * d + j] / fabs(z[i]);                    /* DH */
                }
            spectrum sh = sym_spectrum(d, H);
            double kh = sh.lmax / sh.lmin, ra = kappa_spd(d, A) / kh, rb = kappa_svd(d, d, B) / kh;
            worst = fmax(worst, fmax(fabs(r.a - ra) / ra, fabs(r.b - rb) / rb));
            if (R == 0) { /* DH = diag(κ/|z_1|, 1/|z_2|, ...) */
                double mx = kappa / fabs(z[0]), mn = mx;
                for (int i = 1; i < d; i++) mx = fmax(mx, 1 / fabs(z[i])), mn = fmin(mn, 1 / fabs(z[i]));
                CHECK_CLOSE(r.a, mx / mn / kappa, 1e-12, "R = 0: r of a random D in closed form");
            }
            free(theta), free(q), free(z), free(H), free(A), free(B), free(work);
        }
    CHECK(worst < 1e-9, "scaled vs dense r: worst relative difference %.3g", worst);
    /* s = Hx: the Adam recipe */
    double q[3] = {0.6, 0.8, 0}, x[3] = {0.3, -1.1, 0.7}, g[3], work[6];
    for (int i = 0; i < 3; i++) g[i] = x[i] + 49 * q[i] * (q[0] * x[0] + q[1] * x[1] + q[2] * x[2]);
    quad_ratio rf, rs;
    CHECK(quad_ratio_fast(&rf, q, 50, x, work, 3) && quad_ratio_scaled(&rs, q, 50, g, work, 3) &&
          fabs(rf.a - rs.a) < 1e-12 * rf.a && fabs(rf.b - rs.b) < 1e-12 * rf.b, "fast = scaled at s = Hx");
    rng_free(rng);
}

/* Fig. 4's control, D = diag(1/|z|) with z independent of H: it leaves the main draws as they
 * are, does not depend on the threads, and is not constant by construction: on the paper's
 * matrices at κ = 500, d = 50 its r falls as τ -> 1 too (the rule passes it: for a rank-one H
 * with a large κ, κ(DH) grows with the mean of 1/|z| once q spreads), while at κ = 2 D's own
 * spread rules κ(DH) at every τ and it does not fall. */
static double control_rho(int d, double kappa, unsigned long seed)
{
    quad_sweep_config c = {.d = d, .kappa = kappa, .nthetas = 4, .npoints = 25, .nr = 21, .seed = seed,
                           .threads = 2, .control = 1, .control_seed = seed + 1000};
    quad_sweep_result *s = quad_sweep_run(&c);
    quad_sweep_row rows[21];
    quad_sweep_summary(rows, s);
    double tau[21], v[21];
    for (int k = 0; k < 21; k++) tau[k] = rows[k].tau_mean, v[k] = rows[k].ca_median;
    quad_sweep_free(s);
    return quad_trend_rho(tau, v, NULL, 21);
}

static void test_random_d_control(void)
{
    quad_sweep_config c = {.d = 6, .kappa = 50, .nthetas = 5, .npoints = 7, .nr = 4, .seed = 42, .threads = 1};
    quad_sweep_result *plain = quad_sweep_run(&c);
    c.control = 1, c.control_seed = 7;
    quad_sweep_result *s1 = quad_sweep_run(&c);
    c.threads = 3;
    quad_sweep_result *s3 = quad_sweep_run(&c);
    size_t ns = 5 * 4 * 7;
    CHECK(!plain->ca && memcmp(plain->ra, s1->ra, ns * sizeof(double)) == 0 &&
          memcmp(plain->rb, s1->rb, ns * sizeof(double)) == 0, "the control leaves the main draws as they are");
    CHECK(memcmp(s1->ca, s3->ca, ns * sizeof(double)) == 0 && memcmp(s1->cb, s3->cb, ns * sizeof(double)) == 0,
          "control: 1 and 3 threads give identical results");
    CHECK(memcmp(s1->ca, s1->ra, ns * sizeof(double)) != 0, "control r differs from D_Adam's");
    quad_sweep_free(plain), quad_sweep_free(s1), quad_sweep_free(s3);
    for (unsigned long seed = 1; seed <= 2; seed++) {
        double big = control_rho(50, 500, seed), small = control_rho(50, 2, seed);
        CHECK(big <= QUAD_FALLS_RHO, "random D, d 50, kappa 500 (seed %lu): falls as tau -> 1 (rho %.3f)", seed, big);
        CHECK(small > QUAD_FALLS_RHO, "random D, d 50, kappa 2 (seed %lu): does not fall (rho %.3f)", seed, small);
    }
}

static void test_trend(void)
{
    enum { N = 51 };
    double tau[N], s[N], v[N];
    int rev[N];
    for (int k = 0; k < N; k++) {
        tau[k] = 1 - 0.97 * k / (N - 1);     /* falls from 1 as R grows */
        s[k] = 1 / tau[k];                   /* r grows as tau falls: it falls as tau -> 1 */
        rev[k] = N - 1 - k;
    }
    CHECK_CLOSE(quad_trend_rho(tau, s, NULL, N), -1, 1e-14, "r = 1/tau: rho = -1");
    CHECK_CLOSE(quad_trend_rho(tau, tau, NULL, N), 1, 1e-14, "r = tau: rho = +1");
    CHECK_CLOSE(quad_trend_rho(tau, s, rev, N), 1, 1e-14, "tau reversed across R: rho = +1");
    for (int k = 0; k < N; k++) v[k] = tau[rev[k]];
    CHECK(quad_trend_rho(tau, s, rev, N) == spearman(v, s, N), "perm pairs tau[perm[k]] with s[k]");
    /* Fig. 4's arm: tau falls to its minimum at R* (k = 10) and rises a little after, while r
     * keeps growing with R. Over R <= R* r falls as tau -> 1 (rho = -1); over every R the
     * 40 points of the arm, where tau and r rise together, outweigh the 11 of the branch. */
    for (int k = 0; k < N; k++) {
        tau[k] = k <= 10 ? 1 - 0.097 * k : 0.03 + 0.05 * (k - 10) / 40.0;
        s[k] = 0.1 + k;
    }
    CHECK_CLOSE(quad_trend_rho(tau, s, NULL, 11), -1, 1e-14, "arm: rho over R <= R* is -1");
    double arm = quad_trend_rho(tau, s, NULL, N);
    CHECK(arm > 0, "arm: rho over every R is positive (%.3f)", arm);
    double rho[5] = {-0.9, -0.5, -0.49, NAN, 0.3};
    CHECK(quad_share_falling(rho, 5, QUAD_FALLS_RHO) == 0.4, "share falling: -0.5 falls, NaN does not");
    double flat[N];
    for (int k = 0; k < N; k++) flat[k] = 2;
    CHECK(isnan(quad_trend_rho(tau, flat, NULL, N)), "a flat curve has no rho (NaN: does not fall)");
}

/* n curves of N points: r = 1/tau times lognormal noise (trend = 1) or noise alone (trend = 0);
 * the share that falls, with tau as drawn or shuffled across R. */
static double synthetic_share(gsl_rng *rng, int trend, int shuffled, int n)
{
    enum { N = 51 };
    double tau[N], s[N], rho[64];
    int perm[N];
    for (int c = 0; c < n; c++) {
        for (int k = 0; k < N; k++) {
            tau[k] = pow(10, -2.0 * k / (N - 1));
            s[k] = (trend ? 1 / tau[k] : 1) * exp(rng_gaussian(rng, 1.0));
        }
        random_permutation(perm, rng, N);
        rho[c] = quad_trend_rho(tau, s, shuffled ? perm : NULL, N);
    }
    return quad_share_falling(rho, n, QUAD_FALLS_RHO);
}

/* The claim's rule (share of 11 curves > 0.5, t-interval over 5 seeds) on synthetic
 * seeds: curves that fall pass it, curves without a trend fail it, and the shuffled-τ
 * control of the falling curves fails it, so the verdict is PASS, not NO POWER. */
static void test_trend_rule(void)
{
    gsl_rng *rng = rng_new(2024);
    double share[5], control[5], flat[5];
    for (int k = 0; k < 5; k++) {
        share[k] = synthetic_share(rng, 1, 0, 11);
        control[k] = synthetic_share(rng, 1, 1, 11);
        flat[k] = synthetic_share(rng, 0, 0, 11);
    }
    interval a = t_interval(share, 5, 0.95), c = t_interval(control, 5, 0.95), f = t_interval(flat, 5, 0.95);
    CHECK(a.mean == 1, "every synthetic falling curve falls (mean share %g)", a.mean);
    CHECK(verdict_of(c, CLAIM_ABOVE, 0.5, NULL) == VERDICT_FAIL, "shuffled tau fails the rule (mean share %g)", c.mean);
    CHECK(verdict_of(f, CLAIM_ABOVE, 0.5, NULL) == VERDICT_FAIL, "curves without a trend fail the rule (mean %g)", f.mean);
    CHECK(verdict_of(a, CLAIM_ABOVE, 0.5, &c) == VERDICT_PASS, "falling curves pass with their control rejected");
    /* the shuffled share is the permutation null: P(rho <= -0.5) at 51 points is ~2e-4 */
    double many = synthetic_share(rng, 1, 1, 64);
    CHECK(many <= 2.0 / 64, "shuffled: %g of 64 strongly falling curves still fall", many);
    rng_free(rng);
}

/* Fig. 3's statistic on hand-made loss traces, underflow to 0 included. */
static void test_log_loss(void)
{
    double a[5] = {1, 0.1, 0.01, 1e-3, 1e-4};
    CHECK_CLOSE(quad_mean_log_loss(a, 4), -2, 1e-15, "mean log10 of 1, 0.1, .., 1e-4");
    double b[5];
    for (int t = 0; t < 5; t++) b[t] = 3e5 * a[t];
    CHECK_CLOSE(quad_mean_log_loss(b, 4), -2, 1e-14, "scale-free: the same trace times 3e5");
    CHECK_CLOSE(quad_mean_log_loss(a, 2), -1, 1e-15, "only steps 0..2 count");
    double u[4] = {1, 1e-200, 0, 0};
    CHECK_CLOSE(quad_mean_log_loss(u, 3), -200, 1e-12, "underflow to 0 counts as the floor 1e-300 f0");
    double sub[3] = {2, 1e-310, 5e-324};  /* subnormal losses are below the floor too */
    CHECK_CLOSE(quad_mean_log_loss(sub, 2), -200, 1e-12, "subnormals are floored");
    /* a run that underflows earlier beats one that underflows later, by the steps it saves */
    double early[5] = {1, 1e-100, 0, 0, 0}, late[5] = {1, 1e-100, 1e-250, 0, 0};
    CHECK_CLOSE(quad_log_gap(early, late, 4), -10, 1e-12, "gap early - late = (-300 + 250)/5");
    CHECK(quad_log_gap(early, early, 4) == 0 && quad_log_gap(late, early, 4) > 0, "gap: 0 with itself, sign flips");
    double nan_tail[3] = {1, 0.5, NAN}, inf_tail[3] = {1, INFINITY, 1}, zero0[3] = {0, 0, 0};
    CHECK(isnan(quad_mean_log_loss(nan_tail, 2)) && isnan(quad_mean_log_loss(inf_tail, 2)) &&
          isnan(quad_mean_log_loss(zero0, 2)), "a diverged run (NaN, inf) or f0 = 0: NaN");
    CHECK(isnan(quad_log_gap(a, nan_tail, 2)), "a gap with a diverged run is NaN (the verdict is INVALID)");
}

/* Best Adam (β1 = 0, β2 → 1) on an lr grid, and its curve. */
static double *best_adam(const double *H, const double *w0, int n, long steps, quad_grid **g)
{
    optim_config a = optim_defaults(OPTIM_ADAM);
    a.beta1 = 0, a.beta2 = 1;
    *g = quad_grid_search(H, w0, n, OPTIM_ADAM, &a, NULL, 1e-3, 1, 10, 1e-6, 10, steps);
    return (*g)->loss + (size_t)(*g)->best * (steps + 1);
}

/* Fig. 3's claims and controls on small problems (blocks of 4): each claim's gap
 * is below 0 on its problem, and each control's gap is above 0, so the rule
 * (gap < 0) rejects the control. */
static void test_fig3_rules(void)
{
    enum { B = 4, N = 12 };
    long T = 400;
    gsl_rng *rng = rng_new(7);
    int sizes[3] = {B, B, B}, len[3] = {3, 3, 3};
    const double s1[3] = {1, 2, 3}, s2[3] = {99, 100, 101}, s3[3] = {4998, 4999, 5000};
    const double *sets[3] = {s1, s2, s3}, *hom[3] = {s1, s1, s1};
    double H[N * N], Hh[N * N], lam[N], w0[N], gd[401], bgd[401], rnd[401];
    block_quadratic(H, lam, rng, sizes, sets, len, 3);
    block_quadratic(Hh, lam, rng, sizes, hom, len, 3);
    for (int i = 0; i < N; i++) w0[i] = rng_gaussian(rng, 1.0);
    optim_config g = optim_defaults(OPTIM_GD), bg = optim_defaults(OPTIM_BLOCK_GD);
    quad_grid *ga;
    double *adam = best_adam(H, w0, N, T, &ga);
    quad_train(gd, H, w0, N, OPTIM_GD, &g, NULL, quad_optimal_lr(H, N), T);
    CHECK(quad_log_gap(adam, gd, T) < 0, "(1) Adam beats GD on H: gap %.3g", quad_log_gap(adam, gd, T));
    quad_grid *gh;
    double *adam_h = best_adam(Hh, w0, N, T, &gh);
    quad_train(gd, Hh, w0, N, OPTIM_GD, &g, NULL, quad_optimal_lr(Hh, N), T);
    CHECK(quad_log_gap(adam_h, gd, T) > 0, "(1) control, homogeneous H: gap %.3g > 0", quad_log_gap(adam_h, gd, T));
    /* (2) the dense block H1 vs a diagonal block with a wide spread */
    double H1[B * B], D[N * N], lamd[N];
    for (int i = 0; i < B; i++) memcpy(H1 + i * B, H + i * N, B * sizeof(double));
    quad_grid *g1;
    double *adam1 = best_adam(H1, w0, B, T, &g1);
    quad_train(gd, H1, w0, B, OPTIM_GD, &g, NULL, quad_optimal_lr(H1, B), T);
    CHECK(quad_log_gap(gd, adam1, T) < 0, "(2) GD beats Adam on H1: gap %.3g", quad_log_gap(gd, adam1, T));
    diag_quadratic(D, lamd, rng, sizes, sets, len, 3);
    quad_grid *gd2;
    double *adam_d = best_adam(D, w0, N, T, &gd2);
    quad_train(gd, D, w0, N, OPTIM_GD, &g, NULL, quad_optimal_lr(D, N), T);
    CHECK(quad_log_gap(gd, adam_d, T) > 0, "(2) control, diagonal spread: gap %.3g > 0", quad_log_gap(gd, adam_d, T));
    /* (3) blockwise GD on H's blocks vs on a random partition */
    partition *p3 = quad_partition(sizes, 3, N);
    double blr[3], Hp[N * N], wp[N];
    quad_block_optimal_lr(blr, H, N, p3);
    bg.block_lr = blr;
    quad_train(bgd, H, w0, N, OPTIM_BLOCK_GD, &bg, p3, 1.0, T);
    CHECK(quad_log_gap(bgd, adam, T) < 0, "(3) blockwise GD beats Adam: gap %.3g", quad_log_gap(bgd, adam, T));
    int perm[N];
    random_permutation(perm, rng, N);
    quad_permute(Hp, wp, H, w0, perm, N);
    quad_block_optimal_lr(blr, Hp, N, p3);
    quad_train(rnd, Hp, wp, N, OPTIM_BLOCK_GD, &bg, p3, 1.0, T);
    CHECK(quad_log_gap(rnd, adam, T) > 0, "(3) control, random partition: gap %.3g > 0", quad_log_gap(rnd, adam, T));
    quad_grid_free(ga), quad_grid_free(gh), quad_grid_free(g1), quad_grid_free(gd2);
    partition_free(p3);
    rng_free(rng);
}

/* The controls' building blocks: permutations, permuted problems, diagonal draws. */
static void test_permute(void)
{
    gsl_rng *rng = rng_new(3);
    int count[6] = {0}, perm[12];
    for (int r = 0; r < 6000; r++) {
        random_permutation(perm, rng, 3);
        count[perm[0] * 2 + (perm[1] > perm[2])]++;
    }
    int ok = 1;
    for (int k = 0; k < 6; k++) ok &= abs(count[k] - 1000) < 130;  /* 4 sd of Bin(6000, 1/6) */
    CHECK(ok, "the six permutations of 3 are equally likely: %d %d %d %d %d %d", count[0], count[1], count[2],
          count[3], count[4], count[5]);
    random_permutation(perm, rng, 12);
    int seen = 0;
    for (int i = 0; i < 12; i++) seen |= 1 << perm[i];
    CHECK(seen == 0xfff, "a permutation of 0..11");
    int sizes[3] = {4, 4, 4}, len[3] = {3, 3, 3};
    const double s1[3] = {1, 2, 3}, s2[3] = {99, 100, 101}, s3[3] = {4998, 4999, 5000};
    const double *sets[3] = {s1, s2, s3};
    double H[144], Hp[144], lam[12], w[12], wp[12];
    block_quadratic(H, lam, rng, sizes, sets, len, 3);
    for (int i = 0; i < 12; i++) w[i] = rng_gaussian(rng, 1.0);
    quad_permute(Hp, wp, H, w, perm, 12);
    CHECK_CLOSE(quad_loss(Hp, wp, 12), quad_loss(H, w, 12), 1e-13, "f is invariant under the permutation");
    ok = 1;
    for (int i = 0; i < 12; i++)
        for (int j = 0; j < 12; j++) ok &= Hp[i * 12 + j] == H[perm[i] * 12 + perm[j]];
    CHECK(ok && wp[5] == w[perm[5]], "Hp = P H P', wp = P w");
    double D[144];
    diag_quadratic(D, lam, rng, sizes, sets, len, 3);
    ok = 1;
    for (int i = 0; i < 12; i++)
        for (int j = 0; j < 12; j++) {
            double v = D[i * 12 + j];
            ok &= i == j ? v == lam[i] && (v == sets[i / 4][0] || v == sets[i / 4][1] || v == sets[i / 4][2]) : v == 0;
        }
    CHECK(ok, "diag_quadratic: diagonal, block l's entries from set l");
    rng_free(rng);
}

/* Bad sweep settings are user errors, one message each. (One EXPECT_USER_ERROR
 * per function: several setjmp's in one function trip gcc's -Wclobbered.) */
static void expect_sweep_error(int d, double kappa, int nthetas, int npoints, int nr, const char *msg)
{
    EXPECT_USER_ERROR(quad_check_sweep(d, kappa, nthetas, npoints, nr), msg);
}

static void test_bad_input(void)
{
    expect_sweep_error(1, 500, 4, 4, 4, "d must be >= 2");
    expect_sweep_error(5, 0.5, 4, 4, 4, "kappa must be >= 1");
    expect_sweep_error(5, NAN, 4, 4, 4, "kappa must be >= 1");
    expect_sweep_error(5, 10, -1, 4, 4, "angle draws");
    expect_sweep_error(5, 10, 4, 0, 4, "points x");
    expect_sweep_error(5, 10, 4, 4, 1, "R values");
}

/* Fig. 4 read against tau on constructed curves: r a decreasing function of tau alone
 * (falls, R explains nothing at fixed tau), r that at the same tau depends on R (two
 * branches, as the rotated generator makes), and the level rule on both sides of 1. */
static void test_read_against_tau(void)
{
    enum { NT = 8, NR = 51, N = NT * NR };
    double tau[N], r[N], R[N];
    const quad_tau_options o = {.diag_tau = 0.9, .dense_share = 0.1, .nbins = 10, .nlog = 24, .log_lo = -2.4};
    for (int t = 0; t < NT; t++)
        for (int k = 0; k < NR; k++) {
            int i = t * NR + k;
            R[i] = (double)k / (NR - 1);
            tau[i] = pow(10, -2 * R[i]) * (1 - 0.01 * t); /* tau from 1 down to ~0.01 */
            r[i] = 0.2 / sqrt(tau[i]);                    /* a function of tau alone: 0.2 at tau 1, 2 at 0.01 */
        }
    quad_tau_reading q = quad_read_against_tau(tau, r, R, N, &o);
    CHECK(q.n == N && q.rho_bins < -0.99 && q.rho < -0.99, "r(tau) falling: rho bins %g, matrices %g", q.rho_bins, q.rho);
    CHECK(q.r2_R < 0.05, "a function of tau alone: R explains %g of log r at fixed tau", q.r2_R);
    CHECK(q.level && q.r_diag < 1 && q.r_dense > 1, "level: r %g near diagonal, %g dense", q.r_diag, q.r_dense);
    /* a second branch: past R = 0.5 tau rises back while r keeps rising with R */
    for (int i = 0; i < N; i++) {
        if (R[i] > 0.5) tau[i] = pow(10, -2 * (1 - R[i])) * 0.1;
        r[i] = 0.2 / sqrt(tau[i]) * exp(3 * R[i]);
    }
    q = quad_read_against_tau(tau, r, R, N, &o);
    CHECK(q.r2_R > 0.5, "two branches: R explains %g of log r at fixed tau", q.r2_R);
    /* the level fails when r stays above 1 near the diagonal (a small kappa), and NaN r is dropped */
    for (int i = 0; i < N; i++) r[i] = 3 + tau[i];
    r[0] = NAN;
    q = quad_read_against_tau(tau, r, R, N, &o);
    CHECK(q.n == N - 1 && !q.level && q.r_diag > 1, "no level: r %g near diagonal (n %d)", q.r_diag, q.n);
    CHECK(q.rho_bins > 0.99, "r rising with tau: rho %g", q.rho_bins);
}

int main(void)
{
    test_bad_input();
    test_q_orthogonal();
    test_listing_equal();
    test_rank_one_form();
    test_secular();
    test_ratio_fast_vs_dense();
    test_ratio_scaled();
    test_random_d_control();
    test_stats();
    test_sweep();
    test_block_quadratic();
    test_gd_rate();
    test_adam_limit();
    test_mini_and_blockwise();
    test_grid();
    test_trend();
    test_trend_rule();
    test_log_loss();
    test_fig3_rules();
    test_permute();
    test_read_against_tau();
    return check_summary();
}
