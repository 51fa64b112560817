/* Tests of hessian/spectra: Lanczos on diagonal and rotated matrices with
 * known spectra (every eigenvalue at m = n, the extremes with the residual
 * test, an invariant subspace), Gauss quadrature exact for polynomials of
 * degree ≤ 2m − 1 and not beyond, SLQ's trace(A^k) equal to the probes'
 * zᵀA^k z, Hutchinson exact on a diagonal matrix and unbiased on a known
 * trace (with its standard error), Wasserstein-1 on measures with known
 * distances, the smoothed density's mass, the determinism of the probes, and
 * the block-restricted HVP equal to the exact block's product on both models. */
#include "check.h"
#include "core/core.h"
#include "core/model.h"
#include "hessian/hessian.h"
#include "hessian/spectra.h"
#include "mlp/mlp.h"
#include "tests/fixtures.h"
#include "tinytransformer/tt.h"
#include "tools/spectra_util.h"
#include <cblas.h>
#include <stdlib.h>

/* A = U diag(lam) Uᵀ, U a random orthogonal matrix (Gram–Schmidt of a Gaussian one); U = I when rotate = 0. */
static double *matrix_with_spectrum(int n, const double *lam, int rotate, unsigned long seed)
{
    double *U = xcalloc((size_t)n * n, sizeof(double)), *A = xcalloc((size_t)n * n, sizeof(double));
    if (rotate) {
        gsl_rng *r = rng_new(seed);
        double *G = xmalloc((size_t)n * n * sizeof(double));
        for (int i = 0; i < n * n; i++) G[i] = rng_gaussian(r, 1);
        if (orthonormal_rows(n, n, G, U) != n) DIE("rank");
        free(G);
        rng_free(r);
    } else {
        for (int i = 0; i < n; i++) U[i * n + i] = 1;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += U[k * n + i] * lam[k] * U[k * n + j];
            A[i * n + j] = s;
        }
    for (int i = 0; i < n; i++)   /* exactly symmetric */
        for (int j = 0; j < i; j++) A[i * n + j] = A[j * n + i];
    free(U);
    return A;
}

static void apply_dense(int n, const double *A, const double *x, double *y)
{
    cblas_dgemv(CblasRowMajor, CblasNoTrans, n, n, 1.0, A, n, x, 1, 0.0, y, 1);
}

/* Lanczos with one operator, run to its end on A. */
static lanczos *run_one(int n, const double *A, int mmax, int nev, double tol, unsigned long seed)
{
    size_t dim = (size_t)n;
    spectra_op *op = spectra_op_dense(1, &A, &dim);
    double *z = xmalloc((size_t)n * sizeof(double));
    rademacher(z, (size_t)n, seed);
    lanczos *L = lanczos_new((size_t)n, mmax, z, nev, tol);
    int which = 0;
    lanczos_run(op, 1, &L, &which);
    free(z);
    spectra_op_free(op);
    return L;
}

static void test_lanczos_full(void)
{
    int n = 60;
    double lam[60];
    for (int i = 0; i < n; i++) lam[i] = -3.0 + 7.0 * i / (n - 1) + 0.01 * (i % 3); /* indefinite, distinct */
    for (int rotate = 0; rotate <= 1; rotate++) {
        double *A = matrix_with_spectrum(n, lam, rotate, 11);
        lanczos *L = run_one(n, A, n + 5, 0, 0, 7);
        CHECK(L->steps == n, "%s: %d steps at m >= n = %d", rotate ? "rotated" : "diagonal", L->steps, n);
        double theta[60], res[60];
        lanczos_ritz(L, theta, res, NULL);
        double worst = 0;
        for (int i = 0; i < n; i++) worst = fmax(worst, fabs(theta[i] - lam[i]));
        CHECK(worst <= 1e-10 * 4, "%s: every Ritz value = an eigenvalue, worst error %.3g", rotate ? "rotated" : "diagonal",
              worst);
        CHECK_CLOSE(theta[n - 1], lam[n - 1], 1e-10, "lambda_max at m = n");
        CHECK_CLOSE(theta[0], lam[0], 1e-10, "lambda_min at m = n");
        /* the basis is orthonormal (full reorthogonalisation) */
        double off = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j <= i; j++) {
                double d = cblas_ddot(n, L->Q + (size_t)i * n, 1, L->Q + (size_t)j * n, 1);
                off = fmax(off, fabs(d - (i == j)));
            }
        CHECK(off < 1e-13, "Q orthonormal: max |Q^T Q - I| = %.3g", off);
        lanczos_free(L);
        free(A);
    }
}

/* The residual test stops early; the extremes are then within their residual. */
static void test_lanczos_extremes(void)
{
    int n = 400;
    double *lam = xmalloc((size_t)n * sizeof(double));
    for (int i = 0; i < n; i++) lam[i] = 1.0 + i / (double)n;
    lam[0] = -2, lam[1] = -1.5, lam[n - 1] = 5, lam[n - 2] = 4; /* separated extremes */
    double *A = matrix_with_spectrum(n, lam, 1, 3);
    lanczos *L = run_one(n, A, n, 2, 1e-10, 5);
    CHECK(L->converged && L->steps < n / 2, "converged early: %d steps of %d", L->steps, n);
    double *theta = xmalloc((size_t)n * sizeof(double)), *res = xmalloc((size_t)n * sizeof(double));
    double *Y = xmalloc((size_t)L->steps * n * sizeof(double));
    lanczos_ritz(L, theta, res, Y);
    int s = L->steps;
    CHECK_CLOSE(theta[s - 1], 5, 1e-10, "lambda_max with the residual test");
    CHECK_CLOSE(theta[s - 2], 4, 1e-10, "second largest");
    CHECK_CLOSE(theta[0], -2, 1e-10, "lambda_min");
    CHECK_CLOSE(theta[1], -1.5, 1e-10, "second smallest");
    /* the residual norm is ‖A y − θ y‖ of the unit Ritz vector */
    double *Ay = xmalloc((size_t)n * sizeof(double));
    apply_dense(n, A, Y + (size_t)(s - 1) * n, Ay);
    double r = 0, nrm = cblas_dnrm2(n, Y + (size_t)(s - 1) * n, 1);
    for (int i = 0; i < n; i++) r += pow(Ay[i] - theta[s - 1] * Y[(size_t)(s - 1) * n + i], 2);
    CHECK(fabs(nrm - 1) < 1e-12, "unit Ritz vector: %.17g", nrm);
    CHECK(fabs(sqrt(r) - res[s - 1]) < 1e-10, "residual %.3g = beta |z| %.3g", sqrt(r), res[s - 1]);
    lanczos_free(L);
    free(theta), free(res), free(Y), free(Ay), free(A), free(lam);
}

/* A with 3 distinct eigenvalues: the Krylov space is invariant after 3 steps. */
static void test_invariant(void)
{
    int n = 30;
    double lam[30];
    for (int i = 0; i < n; i++) lam[i] = i < 10 ? -1 : i < 20 ? 2 : 3.5;
    double *A = matrix_with_spectrum(n, lam, 1, 9);
    lanczos *L = run_one(n, A, 20, 0, 0, 2);
    CHECK(L->invariant && L->steps == 3, "invariant after %d steps (flag %d)", L->steps, L->invariant);
    double theta[3], res[3];
    lanczos_ritz(L, theta, res, NULL);
    CHECK_CLOSE(theta[0], -1, 1e-12, "invariant: node 1");
    CHECK_CLOSE(theta[1], 2, 1e-12, "invariant: node 2");
    CHECK_CLOSE(theta[2], 3.5, 1e-12, "invariant: node 3");
    lanczos_free(L);
    /* the zero matrix: one step, one node at 0 with weight 1 */
    double *Z = xcalloc((size_t)n * n, sizeof(double));
    L = run_one(n, Z, 10, 0, 0, 2);
    double node, w;
    gauss_quadrature(L->steps, L->alpha, L->beta, &node, &w);
    CHECK(L->steps == 1 && node == 0 && w == 1, "zero matrix: %d steps, node %g weight %g", L->steps, node, w);
    lanczos_free(L);
    free(Z), free(A);
}

/* q1ᵀ A^k q1 = Σ τ θ^k for k ≤ 2m − 1 (Golub–Welsch), not for k = 2m. */
static void test_quadrature_exact(void)
{
    int n = 40, m = 5;
    double lam[40];
    for (int i = 0; i < n; i++) lam[i] = -1 + 2.0 * i / (n - 1) + 0.3 * sin(i);
    double *A = matrix_with_spectrum(n, lam, 1, 21);
    lanczos *L = run_one(n, A, m, 0, 0, 13);
    double nodes[5], w[5], sw = 0;
    gauss_quadrature(m, L->alpha, L->beta, nodes, w);
    for (int k = 0; k < m; k++) sw += w[k];
    CHECK_CLOSE(sw, 1, 1e-14, "weights sum to 1");
    double q[40], v[40], t[40];
    memcpy(q, L->Q, sizeof q);
    memcpy(v, q, sizeof v);
    double worst = 0, at2m = 0;
    for (int k = 0; k <= 2 * m; k++) {
        double exact = cblas_ddot(n, q, 1, v, 1), quad = 0;
        for (int i = 0; i < m; i++) quad += w[i] * pow(nodes[i], k);
        double e = fabs(quad - exact) / fmax(1, fabs(exact));
        if (k <= 2 * m - 1) worst = fmax(worst, e);
        else at2m = e;
        apply_dense(n, A, v, t);
        memcpy(v, t, sizeof v);
    }
    CHECK(worst < 1e-12, "Gauss quadrature exact to degree 2m-1: worst %.3g", worst);
    CHECK(at2m > 1e-8, "and not at degree 2m (error %.3g): the bound is tight", at2m);
    lanczos_free(L);
    free(A);
}

/* SLQ: n·Σ τ θ^k averaged over the probes = mean zᵀ A^k z exactly, k ≤ 2m − 1; the trace from α_1 = Hutchinson. */
static void test_slq_moments(void)
{
    int n = 50, m = 4, nv = 6;
    double lam[50];
    for (int i = 0; i < n; i++) lam[i] = 0.2 * i - 3 + 0.05 * cos(3 * i);
    double *A[2] = {matrix_with_spectrum(n, lam, 1, 31), matrix_with_spectrum(n, lam, 0, 0)};
    size_t dim[2] = {50, 50};
    spectra_op *op = spectra_op_dense(2, (const double *const *)A, dim);
    slq_opts o = slq_defaults();
    o.probes = nv, o.steps = m, o.seed = 77;
    slq_data d;
    slq_data_init(&d, op, nv, m);
    slq_run(&d, op, &o);
    double nodes[24], w[24];
    for (int b = 0; b < 2; b++) {
        int cnt = slq_measure(&d, b, nv, m, nodes, w);
        CHECK(cnt == nv * m, "%d nodes", cnt);
        double worst = 0;
        for (int k = 0; k <= 2 * m - 1; k++) {
            double est = 0, ref = 0;
            for (int i = 0; i < cnt; i++) est += n * w[i] * pow(nodes[i], k);
            for (int i = 0; i < nv; i++) {
                double z[50], v[50], t[50];
                rademacher(z, (size_t)n, seed_hash(SEED_PROBES, 77, (uint64_t)b, (uint64_t)i));
                memcpy(v, z, sizeof v);
                for (int p = 0; p < k; p++) {
                    apply_dense(n, A[b], v, t);
                    memcpy(v, t, sizeof v);
                }
                ref += cblas_ddot(n, z, 1, v, 1) / nv;
            }
            worst = fmax(worst, fabs(est - ref) / fmax(1, fabs(ref)));
        }
        CHECK(worst < 1e-11, "SLQ trace(A^k) = mean z^T A^k z for k <= 2m-1: worst %.3g", worst);
        double tr, se, htr[2], hse[2];
        slq_trace(&d, b, nv, &tr, &se);
        hutchinson(op, nv, 77, NULL, htr, hse);
        CHECK(fabs(tr - htr[b]) <= 1e-12 * fabs(htr[b]) + 1e-12, "SLQ trace %.17g = Hutchinson %.17g", tr, htr[b]);
    }
    /* the diagonal matrix: Hutchinson exact whatever the probes, standard error 0 */
    double tr[2], se[2], exact = 0;
    for (int i = 0; i < n; i++) exact += lam[i];
    hutchinson(op, 3, 5, NULL, tr, se);
    CHECK(fabs(tr[1] - exact) < 1e-12 && se[1] == 0, "diagonal: Hutchinson %.17g = trace %.17g, se %g", tr[1], exact,
          se[1]);
    /* the same probes whatever the panel: bitwise */
    slq_data d1;
    spectra_op *op1 = spectra_op_dense(2, (const double *const *)A, dim);
    op1->panel = 1;
    slq_data_init(&d1, op1, nv, m);
    slq_run(&d1, op1, &o);
    CHECK(!memcmp(d1.alpha, d.alpha, 2 * nv * m * sizeof(double)) && !memcmp(d1.beta, d.beta, 2 * nv * m * sizeof(double)),
          "panel 1 = panel 64, bitwise");
    slq_data_free(&d1);
    spectra_op_free(op1);
    slq_data_free(&d);
    spectra_op_free(op);
    free(A[0]), free(A[1]);
}

/* Hutchinson unbiased: a known trace within 4 standard errors over many probes, and the
 * standard error ≈ its theoretical value √(2 Σ_{i≠j} A_ij² / N) for Rademacher probes. */
static void test_hutchinson_unbiased(void)
{
    int n = 30, N = 4000;
    double lam[30], exact = 0;
    for (int i = 0; i < n; i++) exact += (lam[i] = 1 + i % 7 - 0.5 * (i % 3));
    double *A = matrix_with_spectrum(n, lam, 1, 41);
    size_t dim = 30;
    spectra_op *op = spectra_op_dense(1, (const double *const *)&A, &dim);
    double tr, se;
    hutchinson(op, N, 3, NULL, &tr, &se);
    double off = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j) off += A[i * n + j] * A[i * n + j];
    double se_theory = sqrt(2 * off / N);
    CHECK(fabs(tr - exact) < 4 * se, "Hutchinson %.6g vs trace %.6g: %.2f standard errors", tr, exact, (tr - exact) / se);
    CHECK(fabs(se / se_theory - 1) < 0.1, "standard error %.4g vs theory %.4g", se, se_theory);
    spectra_op_free(op);
    free(A);
}

static void test_probes(void)
{
    double a[100], b[100];
    rademacher(a, 100, seed_hash(SEED_PROBES, 1, 2, 3));
    rademacher(b, 100, seed_hash(SEED_PROBES, 1, 2, 3));
    CHECK(!memcmp(a, b, sizeof a), "same seed, same probe");
    int plus = 0, pm = 1;
    for (int i = 0; i < 100; i++) plus += a[i] == 1, pm &= fabs(a[i]) == 1;
    CHECK(pm, "entries +-1");
    CHECK(plus > 30 && plus < 70, "%d of 100 entries +1", plus);
    /* seed + k style collisions do not happen: (seed 1, probe 2) != (seed 2, probe 1), (op 1, probe 0) != (op 0, probe 1) */
    CHECK(seed_hash(SEED_PROBES, 1, 0, 2) != seed_hash(SEED_PROBES, 2, 0, 1) &&
              seed_hash(SEED_PROBES, 1, 1, 0) != seed_hash(SEED_PROBES, 1, 0, 1) &&
              seed_hash(SEED_PROBES, 1, 0, 0) != seed_hash(SEED_PROBES, 0, 0, 0),
          "probe seeds distinct");
}

/* A Rademacher probe with zero sum is orthogonal to (1, ..., 1): SLQ from it puts no weight on the
 * eigenvalue of that eigenvector (the null vector of a shift invariance; exact: 1/n), and Lanczos
 * finds it only from round-off, if at all; from a Gaussian start it has its weight. */
static void test_probe_orthogonal(void)
{
    int n = 8;
    double A[64];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) A[i * n + j] = (i == j) * (1 + 0.5 * i) - (1 + 0.5 * i + 1 + 0.5 * j) / (2.0 * n);
    /* A = D - (d 1ᵀ + 1 dᵀ)/2n is not singular along 1 by itself: project it out, B = P A P, P = I - 11ᵀ/n */
    double B[64], Pm[64], T[64];
    for (int i = 0; i < n * n; i++) Pm[i] = (i / n == i % n) - 1.0 / n;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, Pm, n, A, n, 0, T, n);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, T, n, Pm, n, 0, B, n);
    for (int i = 0; i < n; i++) B[i * n + i] += 2;   /* eigenvalue 2 on 1, the rest above 2.x */
    double w[8];
    sym_eigvals(n, B, w);
    /* find a probe seed whose Rademacher vector sums to zero */
    uint64_t seed = 0;
    double z[8];
    for (;; seed++) {
        rademacher(z, (size_t)n, seed);
        double sum = 0;
        for (int i = 0; i < n; i++) sum += z[i];
        if (sum == 0) break;
    }
    lanczos *L = run_one(n, B, n, 0, 0, seed);
    double th[8], res[8], tw[8], on2 = 0;
    gauss_quadrature(L->steps, L->alpha, L->beta, th, tw);
    for (int k = 0; k < L->steps; k++)
        if (fabs(th[k] - 2) < 1e-6) on2 += tw[k];
    CHECK(on2 < 1e-20 && fabs(w[0] - 2) < 1e-12, "zero-sum Rademacher start: weight %.3g on the eigenvalue 2 (exact 1/8)",
          on2);
    lanczos_free(L);
    size_t dim = 8;
    const double *Bp = B;
    spectra_op *op = spectra_op_dense(1, &Bp, &dim);
    gaussian_probe(z, (size_t)n, seed);
    L = lanczos_new((size_t)n, n, z, 0, 0);
    int which = 0;
    lanczos_run(op, 1, &L, &which);
    lanczos_ritz(L, th, res, NULL);
    CHECK(fabs(th[0] - w[0]) < 1e-12, "Gaussian start: smallest Ritz value %.17g = %.17g", th[0], w[0]);
    gauss_quadrature(L->steps, L->alpha, L->beta, th, tw);
    CHECK(fabs(th[0] - 2) < 1e-12 && tw[0] > 1e-6, "Gaussian start: weight %.3g on the eigenvalue 2", tw[0]);
    lanczos_free(L);
    spectra_op_free(op);
    /* the Gaussian probes: mean 0, variance 1 */
    int N = 100000;
    double *g = xmalloc((size_t)N * sizeof(double)), m = 0, v = 0;
    gaussian_probe(g, (size_t)N, 12345);
    for (int i = 0; i < N; i++) m += g[i] / N;
    for (int i = 0; i < N; i++) v += (g[i] - m) * (g[i] - m) / (N - 1);
    CHECK(fabs(m) < 4 / sqrt(N) && fabs(v - 1) < 4 * sqrt(2.0 / N), "Gaussian probes: mean %.4g, variance %.4g", m, v);
    free(g);
}

static void test_wasserstein_density(void)
{
    double x[3] = {0, 1, 2}, wx[3] = {0.25, 0.5, 0.25}, y[3], wy[1] = {1}, zero = 0;
    for (int i = 0; i < 3; i++) y[i] = x[i] + 0.75;
    CHECK_CLOSE(wasserstein1(x, wx, 3, y, wx, 3), 0.75, 1e-15, "W1 of a shift");
    CHECK_CLOSE(wasserstein1(x, wx, 3, x, wx, 3), 0, 1e-15, "W1 of itself");
    CHECK_CLOSE(wasserstein1(x, wx, 3, &zero, wy, 1), 0.25 * 0 + 0.5 * 1 + 0.25 * 2, 1e-15, "W1 to a point mass");
    double r[3] = {2, 0, 1};
    double wr[3] = {0.25, 0.25, 0.5};
    CHECK_CLOSE(wasserstein1(r, wr, 3, y, wx, 3), 0.75, 1e-15, "W1 of unsorted input");
    /* the smoothed density has mass 1 on a wide grid; the log density leaves the zero node out */
    int ng = 2001;
    double *grid = xmalloc((size_t)ng * sizeof(double)), *rho = xmalloc((size_t)ng * sizeof(double));
    for (int g = 0; g < ng; g++) grid[g] = -5 + 10.0 * g / (ng - 1);
    smoothed_density(rho, grid, ng, x, wx, 3, 0.1, 0, 0);
    double mass = 0;
    for (int g = 0; g < ng; g++) mass += rho[g] * 10.0 / (ng - 1);
    CHECK_CLOSE(mass, 1, 1e-6, "density mass, linear grid");
    smoothed_density(rho, grid, ng, x, wx, 3, 0.1, 1, 1e-12);
    mass = 0;
    for (int g = 0; g < ng; g++) mass += rho[g] * 10.0 / (ng - 1);
    CHECK_CLOSE(mass, 0.75, 1e-6, "density mass, log grid, zero node left out");
    measure_stats s = measure_stats_of((double[]){-1, 0, 3}, (double[]){0.2, 0.3, 0.5}, 3, 1e-12);
    CHECK(s.lmin == -1 && s.lmax == 3 && s.neg_mass == 0.2 && s.zero_mass == 0.3 && isinf(s.kappa), "measure stats");
    free(grid), free(rho);
    /* batches: at most the panel, at most the cap, at least one run */
    size_t dims[5] = {10, 10, 1000, 10, 10}, dims2[5] = {10, 10, 10, 1000, 10};
    int *st, nb = lanczos_batches(5, dims, 10, 2, lanczos_bytes(10, 10) * 2.5, &st);
    CHECK(nb == 3 && st[0] == 0 && st[1] == 2 && st[2] == 3 && st[3] == 5, "batches %d: %d %d %d %d", nb, st[0], st[1],
          st[2], st[3]);
    free(st);
    nb = lanczos_batches(5, dims2, 10, 4, lanczos_bytes(10, 10) * 2.5, &st);
    CHECK(nb == 4 && st[0] == 0 && st[1] == 2 && st[2] == 3 && st[3] == 4 && st[4] == 5, "batches %d: %d %d %d %d", nb,
          st[0], st[1], st[2], st[3]);
    free(st);
}

/* ---- the models ------------------------------------------------------------------------------- */

/* The streaming tests' small models (tests/fixtures.c). */
static model *mlp_small(void)
{
    mlp_config cfg = {.in = 12, .width = 6, .classes = 4, .act = ACT_TANH, .bias = 1, .loss = LOSS_XENT};
    return fixture_mlp(&cfg, 30, 5);
}

/* block_hvp with every block of p in one panel (random directions) against H_bb x from the full H. */
static void check_block_hvp(model *m, const double *H, const partition *p, const char *what)
{
    size_t P = m->P;
    int nb = p->nblocks;
    gsl_rng *r = rng_new(17);
    const block **bl = xmalloc((size_t)nb * sizeof(block *));
    double **X = xmalloc((size_t)nb * sizeof(double *)), **Y = xmalloc((size_t)nb * sizeof(double *));
    for (int b = 0; b < nb; b++) {
        bl[b] = &p->b[b];
        X[b] = xmalloc(p->b[b].n * sizeof(double));
        Y[b] = xmalloc(p->b[b].n * sizeof(double));
        for (size_t e = 0; e < p->b[b].n; e++) X[b][e] = rng_gaussian(r, 1);
    }
    double *V = xcalloc((size_t)nb * P, sizeof(double)), *HV = xmalloc((size_t)nb * P * sizeof(double));
    block_hvp(m, nb, bl, (const double *const *)X, Y, V, HV);
    double worst = 0, hmax = max_abs(P * P, H);
    for (int b = 0; b < nb; b++) {
        size_t n = p->b[b].n;
        double *Hb = block_extract(H, P, &p->b[b]), *ref = xmalloc(n * sizeof(double));
        apply_dense((int)n, Hb, X[b], ref);
        /* relative to the block's own scale; a block with no curvature beyond round-off (the
         * Transformer's key bias: max|H_bb| ~ 1e-17 max|H|) against max|H| */
        double hb = max_abs(n * n, Hb);
        double scale = (hb > 1e-12 * hmax ? hb : hmax) * cblas_dnrm2((int)n, X[b], 1);
        for (size_t e = 0; e < n; e++) worst = fmax(worst, fabs(Y[b][e] - ref[e]) / fmax(scale, 1e-300));
        free(Hb), free(ref);
    }
    CHECK(worst < 1e-12, "%s: block-restricted HVP = H_bb x, worst relative %.3g over %d blocks in one panel", what, worst, nb);
    int clean = 1;
    for (size_t i = 0; i < (size_t)nb * P; i++) clean &= V[i] == 0;
    CHECK(clean, "%s: V zero again after block_hvp", what);
    /* no cross-talk: block 0 alone in a panel gives what it gave among all the others (to round-off) */
    double *y0 = xmalloc(p->b[0].n * sizeof(double));
    block_hvp(m, 1, bl, (const double *const *)X, &y0, V, HV);
    double d = max_abs_diff(p->b[0].n, y0, Y[0]);
    CHECK(d <= 1e-14 * fmax(max_abs(p->b[0].n, Y[0]), 1e-300), "%s: block 0 alone vs in a full panel: %.3g", what, d);
    /* the operator on the same blocks: Lanczos to m = n recovers H_bb's extreme eigenvalues */
    spectra_op *A = spectra_op_blocks(m, p, 8);
    int b = nb - 1 < 3 ? nb - 1 : 3;
    size_t n = p->b[b].n;
    double *z = xmalloc(n * sizeof(double)), *w = xmalloc(n * sizeof(double)), *th = xmalloc(n * sizeof(double)),
           *res = xmalloc(n * sizeof(double));
    /* a Gaussian start: a Rademacher one can be orthogonal to an exact null vector such as (1, 1, 1, 1)
     * of a softmax bias, and Lanczos then never sees that eigenvalue */
    for (size_t e = 0; e < n; e++) z[e] = rng_gaussian(r, 1);
    lanczos *L = lanczos_new(n, (int)n, z, 0, 0);
    lanczos_run(A, 1, &L, &b);
    lanczos_ritz(L, th, res, NULL);
    double *Hb = block_extract(H, P, &p->b[b]);
    sym_eigvals((int)n, Hb, w);
    double big = fmax(fabs(w[0]), fabs(w[n - 1]));
    CHECK(fabs(th[L->steps - 1] - w[n - 1]) <= 1e-10 * big && fabs(th[0] - w[0]) <= 1e-10 * big,
          "%s: Lanczos on %s (n %zu, %d steps): lambda %.12g..%.12g vs exact %.12g..%.12g", what, p->b[b].name, n,
          L->steps, th[0], th[L->steps - 1], w[0], w[n - 1]);
    lanczos_free(L);
    spectra_op_free(A);
    free(z), free(w), free(th), free(res), free(Hb), free(y0);
    for (int k = 0; k < nb; k++) free(X[k]), free(Y[k]);
    free(X), free(Y), free(bl), free(V), free(HV);
    rng_free(r);
}

static void test_models(void)
{
    for (int which = 0; which < 2; which++) {
        model *m = which ? fixture_tt_markov() : mlp_small();
        const char *name = which ? "Transformer" : "MLP";
        hessian_opts o = hessian_defaults();
        double *H = hessian_full(m, &o);
        partition *p3 = partition_alg3(m, 0), *p2 = partition_alg2(m), *pc = partition_uniform(m, SPLIT_COLS);
        char what[64];
        snprintf(what, sizeof what, "%s alg3", name);
        check_block_hvp(m, H, p3, what);
        snprintf(what, sizeof what, "%s alg2", name);
        check_block_hvp(m, H, p2, what);
        snprintf(what, sizeof what, "%s columns (strided)", name);
        check_block_hvp(m, H, pc, what);
        partition_free(p3), partition_free(p2), partition_free(pc);
        free(H);
        model_free(m);
    }
}

/* harness: a per-type sample keeps the first, the last and evenly spaced blocks between. */
static void test_sample_types(void)
{
    partition *p = partition_new();
    int type[13];
    for (int k = 0; k < 13; k++) {
        partition_add(p, (size_t)k * 2, 2, 1, 0, "b");
        type[k] = k < 10 ? 0 : 1;
    }
    int *kept;
    partition *s = partition_sample_types(p, type, 4, &kept);
    int want[7] = {0, 3, 6, 9, 10, 11, 12}, ok = s->nblocks == 7;
    for (int i = 0; ok && i < 7; i++) ok = kept[i] == want[i] && s->b[i].start == p->b[want[i]].start;
    CHECK(ok, "sample of 4 per type: %d blocks, kept %d %d %d %d ...", s->nblocks, kept[0], kept[1], kept[2], kept[3]);
    free(kept);
    partition_free(s);
    s = partition_sample_types(p, type, 0, &kept);
    CHECK(s->nblocks == 13 && kept[12] == 12, "max 0 keeps every block (%d)", s->nblocks);
    free(kept);
    partition_free(s);
    partition_free(p);
}

/* Block names by pattern: * any run, ? one character, brackets literal. */
static void test_name_patterns(void)
{
    static const struct {
        const char *pat, *name;
        int want;
    } c[] = {
        {"h*.attn.query[head *]", "h0.attn.query[head 2]", 1}, {"h*.attn.query[head *]", "h12.attn.query[head 0]", 1},
        {"h*.attn.query[head *]", "h0.attn.query.bias", 0},    {"h*.attn.query[head *]", "h0.attn.key[head 1]", 0},
        {"h?.ln_1.*", "h3.ln_1.weight", 1},                    {"h?.ln_1.*", "h13.ln_1.weight", 0},
        {"*", "anything", 1},                                  {"*", "", 1},
        {"a*b*c", "aXbYbZc", 1},                               {"a*b*c", "aXbYbZ", 0},
        {"wte[row 1]", "wte[row 1]", 1},                       {"wte[row 1]", "wte[row 11]", 0},
        {"wte[row 1*]", "wte[row 11]", 1},                     {"[row]", "r", 0},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++)
        CHECK(name_matches(c[i].pat, c[i].name) == c[i].want, "'%s' on '%s': want %d", c[i].pat, c[i].name, c[i].want);
    partition *p = partition_new();
    partition_add(p, 0, 2, 1, 0, "h0.attn.query[head 0]");
    partition_add(p, 2, 2, 1, 0, "h0.attn.key[head 0]");
    partition_add(p, 4, 2, 1, 0, "h1.attn.query[head 0]");
    int *idx;
    partition *s = partition_match(p, "h*.attn.query[head *],h0.attn.key*", &idx);
    CHECK(s->nblocks == 3 && idx[0] == 0 && idx[1] == 1 && idx[2] == 2 && s->b[2].start == 4,
          "two patterns select the three blocks in order (%d)", s->nblocks);
    free(idx);
    partition_free(s);
    s = partition_match(p, "h1.*", &idx);
    CHECK(s->nblocks == 1 && idx[0] == 2, "h1.* selects block 2 only");
    free(idx);
    partition_free(s);
    EXPECT_USER_ERROR(partition_match(p, "h*.attn.query[head *],h2.*", &idx), "'h2.*' matches no block");
    partition_free(p);
}

int main(void)
{
    core_quiet = 1;
    test_lanczos_full();
    test_lanczos_extremes();
    test_invariant();
    test_quadrature_exact();
    test_slq_moments();
    test_hutchinson_unbiased();
    test_probes();
    test_probe_orthogonal();
    test_wasserstein_density();
    test_models();
    test_sample_types();
    test_name_patterns();
    return check_summary();
}
