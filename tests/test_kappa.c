/* Tests of hessian/kappa.c (κ with the null space deflated, κ(D H) on the same
 * complement, the Fig. 4 recipe) on matrices with known answers, of the
 * Transformer's derived null directions (tt_null_directions) on exact
 * Hessians, and of table_kappa's negative control on synthetic blocks made to
 * fail the claim's rule. */
#include "check.h"
#include "core/core.h"
#include "core/model.h"
#include "hessian/hessian.h"
#include "quad/quad.h"
#include "tests/fixtures.h"
#include "tinytransformer/tt.h"
#include <stdlib.h>

#define EPS_MACH 2.220446049250313e-16

/* A = Q diag(lambda) Qᵀ with Haar Q; the columns of Q for zero eigenvalues are A's null space. */
static void known_matrix(int n, const double *lambda, gsl_rng *r, double *A, double *Q)
{
    haar_orthogonal(Q, r, n);
    sym_from_eig(A, Q, lambda, n);
}

/* A spanning set of the null columns j of Q (lambda[j] == 0), not orthonormal:
 * row = 2 Q e_j + 0.3 Σ of the earlier null columns. Returns the count. */
static int null_rows(int n, const double *Q, const double *lambda, double *N)
{
    int row = 0;
    for (int j = 0; j < n; j++) {
        if (lambda[j] != 0) continue;
        for (int i = 0; i < n; i++) {
            N[(size_t)row * n + i] = 2 * Q[(size_t)i * n + j];
            for (int l = 0; l < j; l++)
                if (lambda[l] == 0) N[(size_t)row * n + i] += 0.3 * Q[(size_t)i * n + l];
        }
        row++;
    }
    return row;
}

static void test_deflate_known(void)
{
    gsl_rng *r = rng_new(3);
    int n = 12;
    double lambda[12] = {5, -2, 0, 0.5, 3, 0, 1e-3, -4, 2, 0, 7, 1};
    double *A = xmalloc(n * n * sizeof(double)), *Q = xmalloc(n * n * sizeof(double)), *N = xmalloc(n * n * sizeof(double));
    known_matrix(n, lambda, r, A, Q);
    int k = null_rows(n, Q, lambda, N);
    /* the nonzero eigenvalues: |λ| from 1e-3 to 7, 2 negative */
    deflation df = deflate(n, A, k, N, n * EPS_MACH);
    CHECK(df.nknown == 3 && df.nnum == 0 && df.m == 9, "given null space: known %d numerical %d m %d", df.nknown, df.nnum,
          df.m);
    CHECK(df.resid < 1e-14, "given null directions are null: residual %.3g", df.resid);
    CHECK_CLOSE(df.s.kappa, 7 / 1e-3, 1e-9, "kappa over the nonzero eigenvalues");
    CHECK(df.s.nneg == 2, "negative count %d", df.s.nneg);
    CHECK_CLOSE(df.absmax, 7, 1e-12, "|lambda|max");
    deflation_free(&df);
    /* found numerically when not given */
    df = deflate(n, A, 0, NULL, n * EPS_MACH);
    CHECK(df.nknown == 0 && df.nnum == 3 && df.m == 9, "numerical null space: %d, m %d", df.nnum, df.m);
    CHECK_CLOSE(df.s.kappa, 7 / 1e-3, 1e-9, "kappa after numerical deflation");
    deflation_free(&df);
    /* a tolerance above 1e-3/7 also deflates the small eigenvalue (the tolerance is what decides) */
    df = deflate(n, A, k, N, 1e-3);
    CHECK(df.nnum == 1 && df.m == 8, "tolerance 1e-3: %d more null", df.nnum);
    CHECK_CLOSE(df.s.kappa, 7 / 0.5, 1e-9, "kappa without 1e-3");
    deflation_free(&df);
    /* a direction that is not null shows in the residual */
    for (int i = 0; i < n; i++) N[i] = Q[(size_t)i * n + 0]; /* the eigenvector of 5 */
    df = deflate(n, A, 1, N, n * EPS_MACH);
    CHECK(fabs(df.resid - 5.0 / 7) < 1e-12, "non-null direction: residual %.6g, expected 5/7", df.resid);
    deflation_free(&df);
    /* A = 0: nothing left */
    double *Z = xcalloc(n * n, sizeof(double));
    df = deflate(n, Z, 0, NULL, n * EPS_MACH);
    CHECK(df.m == 0 && isnan(df.s.kappa) && df.nnum == n, "zero block: m %d", df.m);
    double d[12];
    for (int i = 0; i < n; i++) d[i] = 1;
    CHECK(isnan(deflated_scaled_spectrum(&df, d).kappa), "zero block: kappa(DA) NAN");
    int sk = -1;
    CHECK(isnan(fig4_ratio(n, Z, &df, 5, r, &sk)) && sk == 5, "zero block: Fig. 4 ratio NAN, %d skipped", sk);
    deflation_free(&df);
    free(A), free(Q), free(N), free(Z);
    rng_free(r);
}

/* κ(D A) on the complement: the nonzero eigenvalues of D^½ A D^½ (similar to D A). */
static void test_scaled_deflated(void)
{
    gsl_rng *r = rng_new(5);
    int n = 10;
    double lambda[10] = {3, 0, -1, 0.2, 0, 6, 1, -0.05, 2, 4};
    double *A = xmalloc(n * n * sizeof(double)), *Q = xmalloc(n * n * sizeof(double)), *N = xmalloc(n * n * sizeof(double));
    known_matrix(n, lambda, r, A, Q);
    int k = null_rows(n, Q, lambda, N);
    double d[10], w[10];
    for (int i = 0; i < n; i++) d[i] = pow(10, rng_uniform_in(r, -1.5, 1.5));
    deflation df = deflate(n, A, k, N, n * EPS_MACH);
    spectrum s = deflated_scaled_spectrum(&df, d);
    double *M = xmalloc(n * n * sizeof(double));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) M[i * n + j] = sqrt(d[i]) * A[i * n + j] * sqrt(d[j]);
    sym_eigvals(n, M, w);
    /* drop the two eigenvalues nearest zero (D^½ A D^½ has exactly two) */
    double lo = INFINITY, hi = 0;
    int nneg = 0;
    double a[10];
    for (int i = 0; i < n; i++) a[i] = fabs(w[i]);
    for (int drop = 0; drop < 2; drop++) {
        int at = 0;
        for (int i = 1; i < n; i++)
            if (a[i] < a[at]) at = i;
        a[at] = INFINITY;
    }
    for (int i = 0; i < n; i++)
        if (isfinite(a[i])) lo = fmin(lo, a[i]), hi = fmax(hi, a[i]), nneg += w[i] < 0;
    CHECK_CLOSE(s.kappa, hi / lo, 1e-9, "kappa(DA) deflated vs nonzero eigenvalues of D^1/2 A D^1/2");
    CHECK(s.nneg == nneg && nneg == 2, "kappa(DA): negative count %d (expected %d, Sylvester: 2)", s.nneg, nneg);
    /* the naive restriction Q'D^1/2 A D^1/2 Q is not the same thing */
    double *MQ = xmalloc(n * df.m * sizeof(double)), *C = xmalloc(df.m * df.m * sizeof(double));
    for (int i = 0; i < n; i++)
        for (int c = 0; c < df.m; c++) {
            double t = 0;
            for (int j = 0; j < n; j++) t += M[i * n + j] * df.Q[j * df.m + c];
            MQ[i * df.m + c] = t;
        }
    for (int a1 = 0; a1 < df.m; a1++)
        for (int b1 = 0; b1 < df.m; b1++) {
            double t = 0;
            for (int i = 0; i < n; i++) t += df.Q[i * df.m + a1] * MQ[i * df.m + b1];
            C[a1 * df.m + b1] = t;
        }
    spectrum naive = sym_spectrum(df.m, C);
    CHECK(fabs(naive.kappa / s.kappa - 1) > 1e-3, "the naive restriction differs (%.6g vs %.6g)", naive.kappa, s.kappa);
    /* d spread beyond working precision: κ(DA) infinite, not a crash */
    double dwild[10];
    for (int i = 0; i < n; i++) dwild[i] = i % 2 ? 1e-200 : 1e200;
    double kwild = deflated_scaled_spectrum(&df, dwild).kappa;
    CHECK(!(kwild < 1e100), "d spread 1e400: kappa(DA) infinite or huge, not a crash (%.3g)", kwild);
    deflation_free(&df);
    /* nothing to deflate: the same as scaled_spectrum */
    double B[9] = {4, 1, 0.5, 1, 3, 0.2, 0.5, 0.2, 2}, db[3] = {0.5, 2, 7};
    df = deflate(3, B, 0, NULL, 3 * EPS_MACH);
    CHECK_CLOSE(deflated_scaled_spectrum(&df, db).kappa, scaled_spectrum(3, B, db).kappa, 1e-12,
                "no null space: scaled_spectrum");
    deflation_free(&df);
    free(A), free(Q), free(N), free(M), free(MQ), free(C);
    rng_free(r);
}

/* On a diagonal A the Fig. 4 recipe gives D A = diag(sign(a_i)/|x_i|): each draw's
 * ratio is (max|x|/min|x|)/κ(A), whatever A's entries. */
static void test_fig4_diagonal(void)
{
    int n = 6, draws = 9;
    double A[36] = {0}, diag[6] = {2, -5, 0.5, 8, 1, -3};
    for (int i = 0; i < n; i++) A[i * n + i] = diag[i];
    deflation df = deflate(n, A, 0, NULL, n * EPS_MACH);
    gsl_rng *r = rng_new(11), *r2 = rng_new(11);
    int sk;
    double got = fig4_ratio(n, A, &df, draws, r, &sk);
    double want[9], sigma = pow(n, -0.25);
    for (int t = 0; t < draws; t++) {
        double lo = INFINITY, hi = 0;
        for (int i = 0; i < n; i++) {
            double x = fabs(rng_gaussian(r2, sigma));
            lo = fmin(lo, x), hi = fmax(hi, x);
        }
        want[t] = hi / lo / 16.0; /* κ(A) = 8/0.5 */
    }
    CHECK(sk == 0, "no draw skipped (%d)", sk);
    CHECK_CLOSE(got, median_of(want, draws), 1e-10, "Fig. 4 ratio on a diagonal matrix");
    deflation_free(&df);
    /* a zero row: g_i = 0 in every draw, all skipped */
    A[2 * n + 2] = 0;
    double e[6] = {0, 0, 1, 0, 0, 0};
    df = deflate(n, A, 1, e, n * EPS_MACH);
    CHECK(isnan(fig4_ratio(n, A, &df, 4, r, &sk)) && sk == 4, "zero row: NAN, %d of 4 skipped", sk);
    deflation_free(&df);
    rng_free(r), rng_free(r2);
}

/* orthonormal_rows: rank and orthonormality. */
static void test_orthonormal_rows(void)
{
    double V[12] = {1, 1, 0, 0, 2, 2, 0, 0, 0, 0, 3, 0}, out[12];
    int k = orthonormal_rows(3, 4, V, out);
    CHECK(k == 2, "rank %d, expected 2", k);
    double dot = 0, n0 = 0, n1 = 0;
    for (int i = 0; i < 4; i++) dot += out[i] * out[4 + i], n0 += out[i] * out[i], n1 += out[4 + i] * out[4 + i];
    CHECK(fabs(dot) < 1e-15 && fabs(n0 - 1) < 1e-15 && fabs(n1 - 1) < 1e-15, "orthonormal: dot %.3g norms %.3g %.3g",
          dot, n0, n1);
}

/* table_kappa's control: the same rule on each block's diagonal part (diag_part_ratios).
 * Closed forms (the Fig. 4 recipe gives max|x|/min|x| over κ(h); a given D gives
 * max|d h|/min|d h| over κ(h)), and the control is not fixed by construction: the
 * share of diagonal parts where κ rises is 0 where D helps (a wide spread of h that
 * the recipe's D divides out; v̂ matched to the curvature) and 1 where it does not
 * (a narrow spread; v̂ unrelated to it). */
static void test_diagonal_control(void)
{
    enum { n = 8, draws = 7, nb = 10 };
    double A[n * n], d[n];
    gsl_rng *r = rng_new(5), *r2 = rng_new(5);
    memset(A, 0, sizeof A);
    for (int i = 0; i < n; i++) A[i * n + i] = (i % 2 ? -1 : 1) * pow(10, 6.0 * i / (n - 1)), d[i] = 1;
    diag_ratios g = diag_part_ratios(n, A, d, draws, r);
    double want[draws];
    for (int t = 0; t < draws; t++) {
        double lo = INFINITY, hi = 0;
        for (int i = 0; i < n; i++) {
            double x = fabs(rng_gaussian(r2, 1));
            lo = fmin(lo, x), hi = fmax(hi, x);
        }
        want[t] = hi / lo / 1e6;
    }
    CHECK_CLOSE(g.kappa, 1e6, 1e-9, "kappa of the diagonal part: max|h|/min|h|");
    CHECK_CLOSE(g.ratio_fig4, median_of(want, draws), 1e-12, "Fig. 4 recipe on diag(h): max|x|/min|x| over kappa");
    CHECK_CLOSE(g.ratio_d, 1, 1e-12, "D = I leaves kappa as it is");
    for (int i = 0; i < n; i++) d[i] = 1 / fabs(A[i * n + i]);
    CHECK_CLOSE(diag_part_ratios(n, A, d, 0, r).ratio_d, 1e-6, 1e-9, "D = 1/|h| makes D diag(h) = sign: ratio 1/kappa");
    A[3 * n + 3] = 0;
    CHECK(isinf(diag_part_ratios(n, A, d, 3, r).kappa), "a zero on the diagonal: kappa infinite (not measurable)");
    /* the rule's share over nb diagonal parts, where D helps and where it does not */
    int up_wide = 0, up_narrow = 0, up_matched = 0, up_unrelated = 0;
    for (int b = 0; b < nb; b++) {
        double W[n * n], N[n * n], dm[n], du[n];
        memset(W, 0, sizeof W), memset(N, 0, sizeof N);
        for (int i = 0; i < n; i++) {
            W[i * n + i] = pow(10, rng_uniform_in(r, -4, 4));  /* kappa about 1e7 */
            N[i * n + i] = 1 + rng_uniform_in(r, 0, 0.2);       /* kappa below 1.2 */
            dm[i] = 1 / N[i * n + i];
            du[i] = pow(10, rng_uniform_in(r, -1, 1));
        }
        up_wide += diag_part_ratios(n, W, dm, 25, r).ratio_fig4 > 1;
        up_narrow += diag_part_ratios(n, N, dm, 25, r).ratio_fig4 > 1;
        up_matched += diag_part_ratios(n, N, dm, 0, r).ratio_d > 1;
        up_unrelated += diag_part_ratios(n, N, du, 0, r).ratio_d > 1;
    }
    CHECK(up_wide == 0, "Fig. 4 recipe, wide diagonal: kappa rises on %d of %d (D helps: the control fails)", up_wide, nb);
    CHECK(up_narrow == nb, "Fig. 4 recipe, narrow diagonal: kappa rises on %d of %d (the control passes)", up_narrow, nb);
    CHECK(up_matched == 0, "v-hat matched to the curvature: rises on %d of %d (the control fails)", up_matched, nb);
    CHECK(up_unrelated == nb, "v-hat unrelated to it: rises on %d of %d (the control passes)", up_unrelated, nb);
    rng_free(r), rng_free(r2);
}

/* table_kappa's first control (now "scaled", a reference): the claim's rule (the share of blocks with
 * κ(D A)/κ(A) > 1 above 0.5) on random dense blocks holds with the Fig. 4
 * recipe (the paper's Fig. 4 at small τ), and fails the same blocks in
 * coordinates rescaled by log10 s ~ U[-1, 1]: D must undo part of the scaling. */
static void test_control_fails(void)
{
    gsl_rng *r = rng_new(17);
    int n = 16, nb = 20, up = 0, cup = 0;
    double *A = xmalloc(n * n * sizeof(double)), *Q = xmalloc(n * n * sizeof(double)), lambda[16];
    for (int b = 0; b < nb; b++) {
        for (int i = 0; i < n; i++) lambda[i] = i == 0 ? 100 : 1; /* the paper's Fig. 4 matrices, κ = 100 */
        known_matrix(n, lambda, r, A, Q);
        deflation df = deflate(n, A, 0, NULL, n * EPS_MACH);
        int sk;
        up += fig4_ratio(n, A, &df, 25, r, &sk) > 1;
        deflation_free(&df);
        double s[16];
        for (int i = 0; i < n; i++) s[i] = pow(10, rng_uniform_in(r, -1, 1));
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) A[i * n + j] *= s[i] * s[j];
        df = deflate(n, A, 0, NULL, n * EPS_MACH);
        cup += fig4_ratio(n, A, &df, 25, r, &sk) > 1;
        deflation_free(&df);
    }
    CHECK(up > nb / 2, "dense Fig. 4 blocks: kappa rises on %d of %d (the claim's direction)", up, nb);
    CHECK(cup < nb / 2, "rescaled coordinates: kappa rises on %d of %d; the control must fail the rule", cup, nb);
    free(A), free(Q);
    rng_free(r);
}

/* ---- the Transformer's null directions on exact Hessians ---- */

static model *tiny(int bias, int T, unsigned long seed)
{
    tt_config c = {.V = 5, .C = 8, .heads = 2, .M = 12, .layers = 1, .T = T, .bias = bias, .seed = seed};
    return fixture_tt(&c, 6, seed + 50);
}

/* max over the block's derived directions v of ‖M_bb v‖/(‖M_bb‖_max ‖v‖); *k the rank of their span. */
static double null_residual(const model *m, const double *H, const block *b, int *k)
{
    double *N = xmalloc(2 * b->n * b->n * sizeof(double)), *Hb = block_extract(H, m->P, b);
    double *U = xmalloc(2 * b->n * b->n * sizeof(double));
    int count = tt_null_directions(m, b, N);
    *k = count ? orthonormal_rows(count, (int)b->n, N, U) : 0;
    free(U);
    double worst = 0, scale = max_abs(b->n * b->n, Hb);
    for (int j = 0; j < count; j++) {
        double nv = sqrt(frobenius_sq(b->n, N + j * b->n)), r2 = 0;
        for (size_t i = 0; i < b->n; i++) {
            double t = 0;
            for (size_t l = 0; l < b->n; l++) t += Hb[i * b->n + l] * N[j * b->n + l];
            r2 += t * t;
        }
        worst = fmax(worst, sqrt(r2) / (scale * nv));
    }
    free(N), free(Hb);
    return worst;
}

static block block_of(const model *m, const char *tensor, split_kind s, int which)
{
    partition *p = partition_new();
    partition_add_tensor(p, m, model_find_tensor(m, tensor), s);
    block b = p->b[which];
    partition_free(p);
    return b;
}

static void test_tt_null(void)
{
    for (int bias = 0; bias <= 1; bias++) {
        model *m = tiny(bias, 3, 7 + bias);
        hessian_opts o = hessian_defaults();
        double *H = hessian_full(m, &o);
        tt_set_gauss_newton(m, 1);
        double *G = hessian_full(m, &o);
        int k;
        /* key head: 4 rows × 1/g */
        block b = block_of(m, "h0.attn.key", SPLIT_HEADS, 1);
        double rh = null_residual(m, H, &b, &k), rg = null_residual(m, G, &b, &k);
        CHECK(k == (bias ? 4 : 4) && rh < 1e-12 && rg < 1e-12, "bias %d key head: %d directions, residual H %.3g G %.3g",
              bias, k, rh, rg);
        /* query head, layer 0: the LayerNorm outputs after position 0 span V + T - 1 = 7 < C = 8
         * dimensions with biases (one w per row), V + T - 2 = 6 without (two, 1/g among them) */
        b = block_of(m, "h0.attn.query", SPLIT_HEADS, 0);
        rh = null_residual(m, H, &b, &k);
        CHECK(k == (bias ? 4 : 8) && rh < 1e-12, "bias %d query head: %d directions, residual %.3g", bias, k, rh);
        /* value row: 1/g only without biases */
        b = block_of(m, "h0.attn.value", SPLIT_ROWS, 3);
        rh = null_residual(m, H, &b, &k);
        CHECK(k == (bias ? 0 : 1) && rh < 1e-12, "bias %d value row: %d directions, residual %.3g", bias, k, rh);
        b = block_of(m, "h0.mlp.fc_1", SPLIT_ROWS, 5);
        rh = null_residual(m, H, &b, &k);
        CHECK(k == (bias ? 0 : 1) && rh < 1e-12, "bias %d fc_1 row: %d directions, residual %.3g", bias, k, rh);
        /* embedding rows: the uniform shift */
        b = block_of(m, "wte", SPLIT_ROWS, 2);
        rh = null_residual(m, H, &b, &k);
        CHECK(k == 1 && rh < 1e-12, "bias %d wte row: %d, residual %.3g", bias, k, rh);
        b = block_of(m, "wpe", SPLIT_WHOLE, 0);
        rh = null_residual(m, H, &b, &k);
        CHECK(k == 3 && rh < 1e-12, "bias %d wpe: %d (T = 3), residual %.3g", bias, k, rh);
        if (bias) {
            b = block_of(m, "h0.mlp.proj.bias", SPLIT_WHOLE, 0);
            rh = null_residual(m, H, &b, &k);
            CHECK(k == 1 && rh < 1e-12, "mlp.proj.bias: %d, residual %.3g", k, rh);
            /* with biases, 1/g on a value row is not null: the direction a bias shift, its residual large */
            b = block_of(m, "h0.attn.value", SPLIT_ROWS, 3);
            double *N = xmalloc(2 * b.n * b.n * sizeof(double)), *Hb = block_extract(H, m->P, &b);
            const double *g = m->params + m->tensors[model_find_tensor(m, "h0.ln_1.weight")].offset;
            for (size_t i = 0; i < b.n; i++) N[i] = 1 / g[i];
            deflation df = deflate((int)b.n, Hb, 1, N, b.n * EPS_MACH);
            CHECK(df.resid > 1e-6, "with biases 1/g on a value row is not null (residual %.3g)", df.resid);
            deflation_free(&df);
            free(N), free(Hb);
        }
        /* a block that is not whole rows has none */
        block part = {.start = b.start + 1, .n = 3, .stride = 1, .tensor = b.tensor};
        double N3[18];
        CHECK(tt_null_directions(m, &part, N3) == 0, "partial rows: no directions");
        free(H), free(G);
        model_free(m);
    }
    /* T = 4: V + T - 1 = 8 = C, no w for the query */
    model *m = tiny(1, 4, 9);
    block b = block_of(m, "h0.attn.query", SPLIT_HEADS, 0);
    double *N = xmalloc(2 * b.n * b.n * sizeof(double));
    CHECK(tt_null_directions(m, &b, N) == 0, "T = 4: the query head has no derived null direction");
    free(N);
    model_free(m);
}

int main(void)
{
    core_quiet = 1;
    test_deflate_known();
    test_scaled_deflated();
    test_fig4_diagonal();
    test_orthonormal_rows();
    test_control_fails();
    test_diagonal_control();
    test_tt_null();
    return check_summary();
}
