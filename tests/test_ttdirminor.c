/* Tests of the R-kernels against their naive references in tt_kernels.c
 * (token-major loops written from the formulas; the finite-difference tests of
 * test_tt.c check the whole model): the same R-quantities in the other layout,
 * to 1e-13, with every optional input present and absent, every optional
 * output wanted and not, overwriting and accumulating —
 *   - tt_dirminor.c, the panel kernels, on unit directions (index ranges, some
 *     directions outside the tensor);
 *   - tt_onedir.c, the kernels of one dense direction, at k = 1.
 * Then the whole fast path: Hessian columns from unit directions against the
 * generic hvp on dense directions (H·V), 1 and 2 layers, with and without
 * biases, 1 and 2 threads. */
#include "check.h"
#include "hessian/hessian.h"
#include "tinytransformer/tt_kernels.h"
#include <stdlib.h>

static void fill(double *x, size_t n, gsl_rng *r)
{
    for (size_t i = 0; i < n; i++) x[i] = rng_gaussian(r, 1);
}

static double *rnd(size_t n, gsl_rng *r)
{
    double *x = xmalloc(n * sizeof(double));
    fill(x, n, r);
    return x;
}

/* token-major (N,k,C) <-> direction-minor (C,N,k) with rows tt_dm_ld(N, k) apart
 * (the padding is NaN: a kernel that reads it fails the comparisons). */
static size_t dm_size(int N, int k, int C) { return (size_t)C * tt_dm_ld(N, k); }

static double *to_dm(const double *x, int N, int k, int C)
{
    size_t ld = tt_dm_ld(N, k);
    double *y = xmalloc(dm_size(N, k, C) * sizeof(double));
    for (size_t i = 0; i < dm_size(N, k, C); i++) y[i] = NAN;
    for (int n = 0; n < N; n++)
        for (int d = 0; d < k; d++)
            for (int c = 0; c < C; c++) y[c * ld + (size_t)n * k + d] = x[((size_t)n * k + d) * C + c];
    return y;
}

static double *from_dm(const double *y, int N, int k, int C)
{
    size_t ld = tt_dm_ld(N, k);
    double *x = xmalloc((size_t)N * k * C * sizeof(double));
    for (int n = 0; n < N; n++)
        for (int d = 0; d < k; d++)
            for (int c = 0; c < C; c++) x[((size_t)n * k + d) * C + c] = y[c * ld + (size_t)n * k + d];
    return x;
}

/* token-major (N,k,C) <-> the kernels' token-major copies (N,C,k), rows tt_dm_ldt(C, k) apart */
static size_t dmt_size(int N, int k, int C) { return (size_t)N * tt_dm_ldt(C, k); }

static double *to_dmt(const double *x, int N, int k, int C)
{
    size_t lt = tt_dm_ldt(C, k);
    double *y = xmalloc(dmt_size(N, k, C) * sizeof(double));
    for (size_t i = 0; i < dmt_size(N, k, C); i++) y[i] = NAN;
    for (int n = 0; n < N; n++)
        for (int d = 0; d < k; d++)
            for (int c = 0; c < C; c++) y[n * lt + (size_t)c * k + d] = x[((size_t)n * k + d) * C + c];
    return y;
}

/* max |a_t - b_tm| / max|b| for a token-major copy a_t */
static double diff_dmt(const double *a_t, const double *b_tm, int N, int k, int C)
{
    size_t lt = tt_dm_ldt(C, k);
    double worst = 0, big = 0;
    for (int n = 0; n < N; n++)
        for (int d = 0; d < k; d++)
            for (int c = 0; c < C; c++) {
                double b = b_tm[((size_t)n * k + d) * C + c], a = a_t[n * lt + (size_t)c * k + d];
                worst = a == a ? fmax(worst, fabs(a - b)) : INFINITY;
                big = fmax(big, fabs(b));
            }
    return big > 0 ? worst / big : worst;
}

static double *new_dmt(int N, int k, int C) { return xmalloc(dmt_size(N, k, C) * sizeof(double)); }

/* a direction-minor buffer of random values (padding NaN) */
static double *rnd_dm(int N, int k, int C, gsl_rng *r)
{
    double *x = rnd((size_t)N * k * C, r), *y = to_dm(x, N, k, C);
    free(x);
    return y;
}

/* A panel of k directions in token-major parameter form (direction d at d*ld,
 * the tensor at offset 0, n entries) and its tt_rpar.
 * kind 0: zero; 1: unit directions d0..d1-1 = e_(e0..). */
typedef struct {
    double *panel; /* (k, ld) */
    tt_rpar rp;
} rdirs;

static rdirs make_dirs(int kind, size_t n, size_t ld, int k)
{
    rdirs s = {xcalloc((size_t)k * ld, sizeof(double)), {0}};
    if (kind == 1) { /* directions 1..cnt hit the last cnt entries (the tensor starts mid-panel) */
        int cnt = (size_t)(k - 1) < n ? k - 1 : (int)n;
        s.rp.d0 = 1, s.rp.d1 = 1 + cnt, s.rp.e0 = (long)n - cnt;
        for (int d = 1; d <= cnt; d++) s.panel[d * ld + n - cnt + (d - 1)] = 1;
    }
    return s;
}

static void free_dirs(rdirs *s) { free(s->panel); }

/* max |from_dm(a_dm) - b_tm| / max|b| */
static double diff_dm(const double *a_dm, const double *b_tm, int N, int k, int C)
{
    double *a = from_dm(a_dm, N, k, C);
    double e = rel_max_diff((size_t)N * k * C, a, b_tm);
    if (e != e) e = INFINITY; /* NaN: a kernel read or left padding */
    free(a);
    return e;
}

/* R-gradient panel (k,ld) at offset 0, n entries, vs direction-minor (n,k). */
static double diff_grad(const double *dm, const double *panel, size_t n, size_t ld, int k)
{
    double worst = 0, big = 0;
    for (int d = 0; d < k; d++)
        for (size_t i = 0; i < n; i++) {
            worst = fmax(worst, fabs(dm[i * k + d] - panel[d * ld + i]));
            big = fmax(big, fabs(panel[d * ld + i]));
        }
    return big > 0 ? worst / big : worst;
}

static void test_linear(gsl_rng *r)
{
    int N = 7, IC = 5, OC = 6, k = 16;
    size_t ld = 40, RI = (size_t)N * k * IC, RO = (size_t)N * k * OC;
    double *inp = rnd((size_t)N * IC, r), *dout = rnd((size_t)N * OC, r), *W = rnd((size_t)OC * IC, r);
    double *Rinp = rnd(RI, r), *Rdout = rnd(RO, r), *Rinp_dm = to_dm(Rinp, N, k, IC), *Rdout_dm = to_dm(Rdout, N, k, OC);
    double *Rinp_t = to_dmt(Rinp, N, k, IC), *Rdout_t = to_dmt(Rdout, N, k, OC);
    for (int kw = 0; kw < 2; kw++)
        for (int kb = 0; kb < 2; kb++)
            for (int has_in = 0; has_in <= 1; has_in++) {
                rdirs dw = make_dirs(kw, (size_t)OC * IC, ld, k), db = make_dirs(kb, OC, ld, k);
                const double *ri = has_in ? Rinp : NULL, *ri_dm = has_in ? Rinp_dm : NULL;
                /* forward, overwriting and accumulating */
                double *o_tm = xmalloc(RO * sizeof(double)), *o_dm = rnd_dm(N, k, OC, r);
                double *o0 = from_dm(o_dm, N, k, OC);
                tt_linear_rop_naive(o_tm, ri, inp, W, kw ? dw.panel : NULL, kb ? db.panel : NULL, ld, N, IC, OC, k);
                double *acc = to_dm(o0, N, k, OC); /* accumulating onto o0 */
                tt_dm_linear_rop(acc, 1, ri_dm, inp, W, dw.rp, db.rp, N, IC, OC, k);
                tt_dm_linear_rop(o_dm, 0, ri_dm, inp, W, dw.rp, db.rp, N, IC, OC, k);
                CHECK(diff_dm(o_dm, o_tm, N, k, OC) < 1e-13, "linear rop W %d b %d in %d: %.3g", kw, kb, has_in,
                      diff_dm(o_dm, o_tm, N, k, OC));
                for (size_t i = 0; i < RO; i++) o0[i] += o_tm[i];
                CHECK(diff_dm(acc, o0, N, k, OC) < 1e-13, "linear rop accumulating W %d b %d in %d", kw, kb, has_in);
                /* backward: R{dinp}, R{dW}, R{db} */
                if (kb == 0) {
                    double *a_tm = xcalloc(RI, sizeof(double)), *a_dm = xmalloc(dm_size(N, k, IC) * sizeof(double));
                    double *g_tm = xcalloc((size_t)k * ld, sizeof(double));
                    double *gW = xcalloc((size_t)OC * IC * k, sizeof(double)), *gb = xcalloc((size_t)OC * k, sizeof(double));
                    double *gWt = xcalloc((size_t)OC * IC * k, sizeof(double));
                    tt_linear_rop_backward_naive(a_tm, g_tm, g_tm + OC * IC, Rdout, dout, inp, ri, W,
                                                 kw ? dw.panel : NULL, ld, N, IC, OC, k);
                    tt_dm_linear_rop_backward(a_dm, 0, gW, gWt, gb, Rdout_dm, Rdout_t, dout, inp,
                                              has_in ? Rinp_t : NULL, W, dw.rp, N, IC, OC, k);
                    tt_dm_fold_transposed(gW, gWt, IC, OC, k);
                    CHECK(diff_dm(a_dm, a_tm, N, k, IC) < 1e-13, "linear rop backward R{dinp} W %d in %d: %.3g", kw,
                          has_in, diff_dm(a_dm, a_tm, N, k, IC));
                    CHECK(diff_grad(gW, g_tm, (size_t)OC * IC, ld, k) < 1e-13, "R{dW} W %d in %d: %.3g", kw, has_in,
                          diff_grad(gW, g_tm, (size_t)OC * IC, ld, k));
                    double *gbp = xcalloc((size_t)k * ld, sizeof(double));
                    for (int d = 0; d < k; d++) memcpy(gbp + d * ld, g_tm + d * ld + OC * IC, OC * sizeof(double));
                    CHECK(diff_grad(gb, gbp, OC, ld, k) < 1e-13, "R{db} W %d in %d", kw, has_in);
                    /* R{dinp} and R{db} without R{dW} */
                    double *a3_tm = xcalloc(RI, sizeof(double)), *gb3_tm = xcalloc((size_t)k * ld, sizeof(double));
                    double *gb3 = xcalloc((size_t)OC * k, sizeof(double));
                    tt_linear_rop_backward_naive(a3_tm, NULL, gb3_tm, Rdout, dout, inp, ri, W,
                                                 kw ? dw.panel : NULL, ld, N, IC, OC, k);
                    tt_dm_linear_rop_backward(a_dm, 0, NULL, NULL, gb3, Rdout_dm, Rdout_t, dout, inp,
                                              has_in ? Rinp_t : NULL, W, dw.rp, N, IC, OC, k);
                    CHECK(diff_dm(a_dm, a3_tm, N, k, IC) < 1e-13 && diff_grad(gb3, gb3_tm, OC, ld, k) < 1e-13,
                          "R{dinp}, R{db} without R{dW}, W %d in %d: %.3g", kw, has_in, diff_dm(a_dm, a3_tm, N, k, IC));
                    free(a3_tm), free(gb3_tm), free(gb3);
                    /* R{dinp} only, accumulating onto what is there */
                    double *a2 = to_dm(a_tm, N, k, IC);
                    tt_dm_linear_rop_backward(a2, 1, NULL, NULL, NULL, Rdout_dm, NULL, dout, inp, NULL, W, dw.rp, N, IC,
                                              OC, k);
                    for (size_t i = 0; i < RI; i++) a_tm[i] *= 2;
                    CHECK(diff_dm(a2, a_tm, N, k, IC) < 1e-13, "R{dinp} accumulating W %d in %d", kw, has_in);
                    free(a_tm), free(a_dm), free(g_tm), free(gW), free(gWt), free(gb), free(gbp), free(a2);
                }
                free(o_tm), free(o_dm), free(o0), free(acc);
                free_dirs(&dw), free_dirs(&db);
            }
    free(inp), free(dout), free(W), free(Rinp), free(Rdout), free(Rinp_dm), free(Rdout_dm);
    free(Rinp_t), free(Rdout_t);
}

static void test_layernorm(gsl_rng *r)
{
    int N = 6, C = 7, k = 8;
    size_t ld = 30, RC = (size_t)N * k * C;
    double *x = rnd((size_t)N * C, r), *g = rnd(C, r), *b = rnd(C, r), *dout = rnd((size_t)N * C, r);
    double *y = xmalloc((size_t)N * C * sizeof(double)), *xh = xmalloc((size_t)N * C * sizeof(double));
    double rstd[6];
    tt_layernorm_forward(y, xh, rstd, x, g, b, N, C);
    double *Rinp = rnd(RC, r), *Rdout = rnd(RC, r), *Rinp_dm = to_dm(Rinp, N, k, C), *Rdout_dm = to_dm(Rdout, N, k, C);
    for (int kg = 0; kg < 2; kg++)
        for (int kb = 0; kb < 2; kb++)
            for (int has_in = 0; has_in <= 1; has_in++) {
                rdirs dg = make_dirs(kg, C, ld, k), db = make_dirs(kb, C, ld, k);
                double *o_tm = xmalloc(RC * sizeof(double)), *h_tm = xmalloc(RC * sizeof(double));
                double *r_tm = xmalloc((size_t)N * k * sizeof(double));
                double *o_dm = xmalloc(dm_size(N, k, C) * sizeof(double)), *h_dm = xmalloc(dm_size(N, k, C) * sizeof(double));
                double *r_dm = xmalloc((size_t)N * k * sizeof(double));
                tt_layernorm_rop_naive(o_tm, h_tm, r_tm, has_in ? Rinp : NULL, xh, rstd, g, kg ? dg.panel : NULL,
                                       kb ? db.panel : NULL, ld, N, C, k);
                double *o_t = new_dmt(N, k, C);
                tt_dm_layernorm_rop(o_dm, o_t, h_dm, r_dm, has_in ? Rinp_dm : NULL, xh, rstd, g, dg.rp, db.rp, N, C, k);
                CHECK(diff_dm(o_dm, o_tm, N, k, C) < 1e-13 && diff_dmt(o_t, o_tm, N, k, C) < 1e-13,
                      "layernorm rop g %d b %d in %d: %.3g", kg, kb, has_in, diff_dm(o_dm, o_tm, N, k, C));
                free(o_t);
                if (has_in)
                    CHECK(diff_dm(h_dm, h_tm, N, k, C) < 1e-13 && rel_max_diff((size_t)N * k, r_dm, r_tm) < 1e-13,
                          "layernorm rop R{xh}, R{r} g %d b %d", kg, kb);
                if (kb == 0) { /* backward */
                    double *a_tm = xcalloc(RC, sizeof(double)), *g_tm = xcalloc((size_t)k * ld, sizeof(double));
                    double *a_dm = xmalloc(dm_size(N, k, C) * sizeof(double)), *gg = xcalloc((size_t)C * k, sizeof(double));
                    double *gb = xcalloc((size_t)C * k, sizeof(double));
                    tt_layernorm_rop_backward_naive(a_tm, g_tm, g_tm + C, Rdout, dout, xh, rstd, h_tm, r_tm, g,
                                                    kg ? dg.panel : NULL, ld, N, C, k);
                    double *a_t = new_dmt(N, k, C);
                    tt_dm_layernorm_rop_backward(a_dm, a_t, 0, gg, gb, Rdout_dm, dout, xh, rstd, has_in ? h_dm : NULL,
                                                 has_in ? r_dm : NULL, g, dg.rp, N, C, k);
                    CHECK(diff_dm(a_dm, a_tm, N, k, C) < 1e-13 && diff_dmt(a_t, a_tm, N, k, C) < 1e-13,
                          "layernorm rop backward R{dinp} g %d in %d: %.3g", kg, has_in, diff_dm(a_dm, a_tm, N, k, C));
                    double *gbp = xcalloc((size_t)k * ld, sizeof(double));
                    for (int d = 0; d < k; d++) memcpy(gbp + d * ld, g_tm + d * ld + C, C * sizeof(double));
                    CHECK(diff_grad(gg, g_tm, C, ld, k) < 1e-13 && diff_grad(gb, gbp, C, ld, k) < 1e-13,
                          "layernorm R{dg}, R{db} g %d in %d", kg, has_in);
                    double *a2 = to_dm(a_tm, N, k, C);
                    tt_dm_layernorm_rop_backward(a2, a_t, 1, NULL, NULL, Rdout_dm, dout, xh, rstd, has_in ? h_dm : NULL,
                                                 has_in ? r_dm : NULL, g, dg.rp, N, C, k);
                    for (size_t i = 0; i < RC; i++) a_tm[i] *= 2;
                    CHECK(diff_dm(a2, a_tm, N, k, C) < 1e-13 && diff_dmt(a_t, a_tm, N, k, C) < 1e-13,
                          "layernorm R{dinp} accumulating g %d in %d", kg, has_in);
                    free(a_t), free(a_tm), free(g_tm), free(a_dm), free(gg), free(gb), free(gbp), free(a2);
                }
                free(o_tm), free(h_tm), free(r_tm), free(o_dm), free(h_dm), free(r_dm);
                free_dirs(&dg), free_dirs(&db);
            }
    free(x), free(g), free(b), free(dout), free(y), free(xh), free(Rinp), free(Rdout), free(Rinp_dm), free(Rdout_dm);
}

static void test_attention(gsl_rng *r)
{
    int B = 2, T = 4, C = 6, H = 2, k = 16, N = B * T;
    size_t NC = (size_t)N * C, RC = NC * k, A = (size_t)B * H * T * T;
    double *q = rnd(NC, r), *key = rnd(NC, r), *v = rnd(NC, r), *dy = rnd(NC, r);
    double *y = xmalloc(NC * sizeof(double)), *att = xmalloc(A * sizeof(double)), *dpc = xmalloc(A * sizeof(double));
    double *dq = xmalloc(NC * sizeof(double)), *dk = xmalloc(NC * sizeof(double)), *dv = xmalloc(NC * sizeof(double));
    tt_attention_forward(y, att, q, key, v, B, T, C, H);
    tt_attention_backward(dq, dk, dv, dpc, dy, q, key, v, att, B, T, C, H);
    double *R[4], *Rf[4]; /* Rq, Rkey, Rv, Rdy */
    for (int i = 0; i < 4; i++) R[i] = rnd(RC, r), Rf[i] = to_dm(R[i], N, k, C);
    for (int mask = 1; mask < 8; mask++) { /* which of Rq, Rkey, Rv are nonzero */
        const double *rq = mask & 1 ? R[0] : NULL, *rk = mask & 2 ? R[1] : NULL, *rv = mask & 4 ? R[2] : NULL;
        const double *fq = mask & 1 ? Rf[0] : NULL, *fk = mask & 2 ? Rf[1] : NULL, *fv = mask & 4 ? Rf[2] : NULL;
        double *z[3];
        for (int i = 0; i < 3; i++) z[i] = xcalloc(RC, sizeof(double));
        double *Ry = xmalloc(RC * sizeof(double)), *Ratt = xmalloc(A * k * sizeof(double));
        tt_attention_rop_naive(Ry, Ratt, rq ? rq : z[0], rk ? rk : z[1], rv ? rv : z[2], q, key, v, att, B, T, C, H,
                               k);
        double *Ry_dm = xmalloc(dm_size(N, k, C) * sizeof(double)), *Ratt_dm = xmalloc(A * k * sizeof(double));
        int att_live = fq || fk;
        double *Ry_t = new_dmt(N, k, C);
        tt_dm_attention_rop(Ry_dm, Ry_t, att_live ? Ratt_dm : NULL, fq, fk, fv, q, key, v, att, B, T, C, H, k);
        CHECK(diff_dm(Ry_dm, Ry, N, k, C) < 1e-13 && diff_dmt(Ry_t, Ry, N, k, C) < 1e-13, "attention rop R{y} mask %d: %.3g",
              mask, diff_dm(Ry_dm, Ry, N, k, C));
        free(Ry_t);
        if (att_live) {
            double worst = 0; /* (B,T,T,k,H) vs (B,H,T,T,k), u <= t */
            for (int b = 0; b < B; b++)
                for (int h = 0; h < H; h++)
                    for (int t = 0; t < T; t++)
                        for (int u = 0; u <= t; u++)
                            for (int d = 0; d < k; d++)
                                worst = fmax(worst, fabs(Ratt[((((size_t)b * T + t) * T + u) * k + d) * H + h] -
                                                         Ratt_dm[((((size_t)b * H + h) * T + t) * T + u) * k + d]));
            CHECK(worst < 1e-13 * max_abs(A * k, Ratt), "attention rop R{P} mask %d: %.3g", mask, worst);
        }
        double *o[3], *of[3], *ot[3];
        for (int i = 0; i < 3; i++)
            o[i] = xmalloc(RC * sizeof(double)), of[i] = xmalloc(dm_size(N, k, C) * sizeof(double)), ot[i] = new_dmt(N, k, C);
        tt_attention_rop_backward_naive(o[0], o[1], o[2], R[3], dy, q, key, v, att, dpc, rq ? rq : z[0],
                                        rk ? rk : z[1], rv ? rv : z[2], Ratt, B, T, C, H, k);
        for (int want = 1; want < 8; want++) { /* which outputs are wanted */
            tt_dm_attention_rop_backward(want & 1 ? of[0] : NULL, want & 2 ? of[1] : NULL, want & 4 ? of[2] : NULL,
                                         want & 1 ? ot[0] : NULL, want & 2 ? ot[1] : NULL, want & 4 ? ot[2] : NULL,
                                         Rf[3], dy, q, key, v, att, dpc, fq, fk, fv, att_live ? Ratt_dm : NULL, B, T, C,
                                         H, k);
            for (int i = 0; i < 3; i++)
                if (want & (1 << i))
                    CHECK(diff_dm(of[i], o[i], N, k, C) < 1e-13 && diff_dmt(ot[i], o[i], N, k, C) < 1e-13,
                          "attention rop backward output %d mask %d want %d: %.3g", i, mask, want,
                          diff_dm(of[i], o[i], N, k, C));
        }
        for (int i = 0; i < 3; i++) free(z[i]), free(o[i]), free(of[i]), free(ot[i]);
        free(Ry), free(Ratt), free(Ry_dm), free(Ratt_dm);
    }
    for (int i = 0; i < 4; i++) free(R[i]), free(Rf[i]);
    free(q), free(key), free(v), free(dy), free(y), free(att), free(dpc), free(dq), free(dk), free(dv);
}

/* One GELU form's kernel quartet: G, its forward and backward, G' and G'', the naive R-operators. */
typedef struct {
    const char *name;
    double (*g)(double);
    void (*forward)(double *, const double *, size_t);
    void (*backward)(double *, const double *, const double *, size_t);
    void (*derivs)(double *, double *, const double *, size_t);
    void (*rop)(double *, const double *, const double *, int, int, int);
    void (*rop_backward)(double *, const double *, const double *, const double *, const double *, int, int, int);
} gelu_kernels;
static const gelu_kernels GELU_ERF = {"erf", tt_gelu, tt_gelu_forward, tt_gelu_backward, tt_gelu_derivs,
                                      tt_gelu_rop_naive, tt_gelu_rop_backward_naive};
static const gelu_kernels GELU_TANH = {"tanh", tt_gelu_tanh, tt_gelu_tanh_forward, tt_gelu_tanh_backward,
                                       tt_gelu_tanh_derivs, tt_gelu_tanh_rop_naive, tt_gelu_tanh_rop_backward_naive};

/* The naive R-operators against central differences of the forward and the backward kernels along
 * direction d: R{out} = d/dε forward(x + ε R{x}), R{dinp} = d/dε backward(dout + ε R{dout}, x + ε R{x}). */
static double gelu_rop_fd(const gelu_kernels *G, const double *x, const double *dout, const double *Rinp,
                          const double *Rdout, int N, int M, int k)
{
    size_t NM = (size_t)N * M;
    double *xp = xmalloc(NM * sizeof(double)), *xm = xmalloc(NM * sizeof(double));
    double *dp = xmalloc(NM * sizeof(double)), *dm = xmalloc(NM * sizeof(double));
    double *fp = xmalloc(NM * sizeof(double)), *fm = xmalloc(NM * sizeof(double));
    double *Ro = xmalloc(NM * k * sizeof(double)), *Rd = xmalloc(NM * k * sizeof(double)), worst = 0, h = 1e-5;
    G->rop(Ro, Rinp, x, N, M, k);
    G->rop_backward(Rd, Rdout, dout, x, Rinp, N, M, k);
    for (int d = 0; d < k; d++) {
        for (int n = 0; n < N; n++)
            for (int m = 0; m < M; m++) {
                size_t i = (size_t)n * M + m, r = ((size_t)n * k + d) * M + m;
                xp[i] = x[i] + h * Rinp[r], xm[i] = x[i] - h * Rinp[r];
                dp[i] = dout[i] + h * Rdout[r], dm[i] = dout[i] - h * Rdout[r];
            }
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 0) G->forward(fp, xp, NM), G->forward(fm, xm, NM);
            else G->backward(fp, dp, xp, NM), G->backward(fm, dm, xm, NM);
            const double *R = pass == 0 ? Ro : Rd;
            for (int n = 0; n < N; n++)
                for (int m = 0; m < M; m++) {
                    size_t i = (size_t)n * M + m, r = ((size_t)n * k + d) * M + m;
                    worst = fmax(worst, fabs((fp[i] - fm[i]) / (2 * h) - R[r]) / (1 + fabs(R[r])));
                }
        }
    }
    free(xp), free(xm), free(dp), free(dm), free(fp), free(fm), free(Ro), free(Rd);
    return worst;
}

static void test_gelu(gsl_rng *r, const gelu_kernels *G)
{
    int N = 5, M = 7, k = 8;
    size_t NM = (size_t)N * M, RM = NM * k;
    double *x = rnd(NM, r), *dout = rnd(NM, r), *Rinp = rnd(RM, r), *Rdout = rnd(RM, r);
    for (size_t i = 0; i < NM; i++) x[i] *= 3; /* the curved part of GELU, both tails */
    double *g1 = xmalloc(NM * sizeof(double)), *g2d = xmalloc(NM * sizeof(double));
    G->derivs(g1, g2d, x, NM);
    double e1 = 0, h = 1e-6, h2 = 1e-4;
    for (size_t i = 0; i < NM; i++) {
        double fd1 = (G->g(x[i] + h) - G->g(x[i] - h)) / (2 * h);
        double fd2 = (G->g(x[i] + h2) - 2 * G->g(x[i]) + G->g(x[i] - h2)) / (h2 * h2);
        e1 = fmax(e1, fmax(fabs(fd1 - g1[i]), fabs(fd2 - g2d[i])));
    }
    CHECK(e1 < 1e-6, "%s GELU', GELU'' vs differences: %.3g", G->name, e1);
    double efd = gelu_rop_fd(G, x, dout, Rinp, Rdout, N, M, k);
    CHECK(efd < 1e-8, "%s GELU: R-forward and R-backward vs differences of the kernels: %.3g", G->name, efd);
    for (size_t i = 0; i < NM; i++) g2d[i] *= dout[i];
    double *o = xmalloc(RM * sizeof(double)), *of = xmalloc(dm_size(N, k, M) * sizeof(double));
    double *Rin_dm = to_dm(Rinp, N, k, M), *Rdo_dm = to_dm(Rdout, N, k, M);
    G->rop(o, Rinp, x, N, M, k);
    double *ot = new_dmt(N, k, M);
    tt_dm_gelu_rop(of, ot, Rin_dm, g1, N, M, k);
    CHECK(diff_dm(of, o, N, k, M) < 1e-13 && diff_dmt(ot, o, N, k, M) < 1e-13, "%s gelu rop", G->name);
    G->rop_backward(o, Rdout, dout, x, Rinp, N, M, k);
    tt_dm_gelu_rop_backward(of, ot, Rdo_dm, g1, g2d, Rin_dm, N, M, k);
    CHECK(diff_dm(of, o, N, k, M) < 1e-13 && diff_dmt(ot, o, N, k, M) < 1e-13, "%s gelu rop backward", G->name);
    double *zero = xcalloc(RM, sizeof(double));
    G->rop_backward(o, Rdout, dout, x, zero, N, M, k);
    tt_dm_gelu_rop_backward(of, NULL, Rdo_dm, g1, g2d, NULL, N, M, k);
    CHECK(diff_dm(of, o, N, k, M) < 1e-13, "%s gelu rop backward, zero R{inp}", G->name);
    printf("# %s GELU: derivatives vs differences %.2g, R-kernels vs differences %.2g\n", G->name, e1, efd);
    free(ot);
    free(x), free(dout), free(Rinp), free(Rdout), free(g1), free(g2d), free(o), free(of), free(Rin_dm), free(Rdo_dm);
    free(zero);
}

/* ---- the one-direction kernels (tt_onedir.c) against the naive ones at k = 1 ----
 * R-quantities (C,N) rows tt_dm_ld(N, 1) apart are to_dm(·, N, 1, C); the
 * feature-major base copies have rows ldb = N + 3 apart (NaN between). */
static double *fm(const double *x, int N, int C, size_t ldb)
{
    double *y = xmalloc((size_t)C * ldb * sizeof(double));
    for (size_t i = 0; i < (size_t)C * ldb; i++) y[i] = NAN;
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++) y[c * ldb + n] = x[(size_t)n * C + c];
    return y;
}

static void test_onedir_linear_layernorm(gsl_rng *r)
{
    int N = 9, IC = 5, OC = 6;
    size_t ld = tt_dm_ld(N, 1), ldb = N + 3;
    double *inp = rnd((size_t)N * IC, r), *dout = rnd((size_t)N * OC, r), *W = rnd((size_t)OC * IC, r);
    double *RW = rnd((size_t)OC * IC, r), *Rb = rnd(OC, r);
    double *Rinp = rnd((size_t)N * IC, r), *Rdout = rnd((size_t)N * OC, r);
    double *Rinp_f = to_dm(Rinp, N, 1, IC), *Rdout_f = to_dm(Rdout, N, 1, OC);
    for (int mask = 0; mask < 8; mask++) { /* which of R{inp}, R{W}, R{b} are nonzero */
        const double *ri = mask & 1 ? Rinp : NULL, *rw = mask & 2 ? RW : NULL, *rb = mask & 4 ? Rb : NULL;
        double *o = xmalloc((size_t)N * OC * sizeof(double)), *of = rnd_dm(N, 1, OC, r);
        tt_linear_rop_naive(o, ri, inp, W, rw, rb, 0, N, IC, OC, 1);
        tt_od_linear_rop(of, 0, mask & 1 ? Rinp_f : NULL, inp, W, rw, rb, ld, N, IC, OC);
        CHECK(diff_dm(of, o, N, 1, OC) < 1e-13, "one direction: linear rop mask %d: %.3g", mask, diff_dm(of, o, N, 1, OC));
        free(o), free(of);
        if (mask & 4) continue; /* the backward reads no R{b} */
        double *a = xcalloc((size_t)N * IC, sizeof(double)), *g = xcalloc((size_t)OC * IC + OC, sizeof(double));
        double *af = to_dm(a, N, 1, IC), *gf = xcalloc((size_t)OC * IC + OC, sizeof(double));
        tt_linear_rop_backward_naive(a, g, g + OC * IC, Rdout, dout, inp, ri, W, rw, 0, N, IC, OC, 1);
        tt_od_linear_rop_backward(af, 1, gf, gf + OC * IC, Rdout_f, dout, inp, mask & 1 ? Rinp_f : NULL, W, rw, ld, N,
                                  IC, OC);
        CHECK(diff_dm(af, a, N, 1, IC) < 1e-13 && rel_max_diff((size_t)OC * IC + OC, gf, g) < 1e-13,
              "one direction: linear rop backward mask %d: %.3g, %.3g", mask, diff_dm(af, a, N, 1, IC),
              rel_max_diff((size_t)OC * IC + OC, gf, g));
        free(a), free(g), free(af), free(gf);
    }
    free(inp), free(dout), free(W), free(RW), free(Rb), free(Rinp), free(Rdout), free(Rinp_f), free(Rdout_f);

    int C = 7;
    double *x = rnd((size_t)N * C, r), *g = rnd(C, r), *b = rnd(C, r), *dy = rnd((size_t)N * C, r);
    double *y = xmalloc((size_t)N * C * sizeof(double)), *xh = xmalloc((size_t)N * C * sizeof(double)), rstd[9];
    tt_layernorm_forward(y, xh, rstd, x, g, b, N, C);
    double *xhT = fm(xh, N, C, ldb), *dyT = fm(dy, N, C, ldb), *Rg = rnd(C, r), *Rbn = rnd(C, r);
    double *Rx = rnd((size_t)N * C, r), *Rdy = rnd((size_t)N * C, r), *Rx_f = to_dm(Rx, N, 1, C);
    double *Rdy_f = to_dm(Rdy, N, 1, C);
    for (int mask = 0; mask < 8; mask++) { /* which of R{inp}, R{g}, R{b} are nonzero */
        const double *ri = mask & 1 ? Rx : NULL, *rg = mask & 2 ? Rg : NULL, *rb = mask & 4 ? Rbn : NULL;
        double *o = xmalloc((size_t)N * C * sizeof(double)), *h = xmalloc((size_t)N * C * sizeof(double)), rr[9];
        double *of = rnd_dm(N, 1, C, r), *hf = rnd_dm(N, 1, C, r), rrf[9];
        tt_layernorm_rop_naive(o, h, rr, ri, xh, rstd, g, rg, rb, 0, N, C, 1);
        tt_od_layernorm_rop(of, hf, rrf, mask & 1 ? Rx_f : NULL, xhT, rstd, g, rg, rb, ld, ldb, N, C);
        CHECK(diff_dm(of, o, N, 1, C) < 1e-13, "one direction: layernorm rop mask %d: %.3g", mask, diff_dm(of, o, N, 1, C));
        if (mask & 1)
            CHECK(diff_dm(hf, h, N, 1, C) < 1e-13 && rel_max_diff(N, rrf, rr) < 1e-13,
                  "one direction: layernorm rop R{xh}, R{r} mask %d", mask);
        if (!(mask & 4)) {
            double *a = xcalloc((size_t)N * C, sizeof(double)), *gg = xcalloc(2 * (size_t)C, sizeof(double));
            double *af = to_dm(a, N, 1, C), *ggf = xcalloc(2 * (size_t)C, sizeof(double));
            tt_layernorm_rop_backward_naive(a, gg, gg + C, Rdy, dy, xh, rstd, h, rr, g, rg, 0, N, C, 1);
            tt_od_layernorm_rop_backward(af, 1, ggf, ggf + C, Rdy_f, dyT, xhT, rstd, mask & 1 ? hf : NULL,
                                         mask & 1 ? rrf : NULL, g, rg, ld, ldb, N, C);
            CHECK(diff_dm(af, a, N, 1, C) < 1e-13 && rel_max_diff(2 * (size_t)C, ggf, gg) < 1e-13,
                  "one direction: layernorm rop backward mask %d: %.3g", mask, diff_dm(af, a, N, 1, C));
            free(a), free(gg), free(af), free(ggf);
        }
        free(o), free(h), free(of), free(hf);
    }
    free(x), free(g), free(b), free(dy), free(y), free(xh), free(xhT), free(dyT), free(Rg), free(Rbn), free(Rx), free(Rdy);
    free(Rx_f), free(Rdy_f);
}

static void test_onedir_attention_gelu(gsl_rng *r)
{
    int B = 2, T = 5, C = 6, H = 2, N = B * T;
    size_t NC = (size_t)N * C, A = (size_t)B * H * T * T, ld = tt_dm_ld(N, 1);
    double *q = rnd(NC, r), *key = rnd(NC, r), *v = rnd(NC, r), *dy = rnd(NC, r);
    double *y = xmalloc(NC * sizeof(double)), *att = xmalloc(A * sizeof(double)), *dpc = xmalloc(A * sizeof(double));
    double *dq = xmalloc(NC * sizeof(double)), *dk = xmalloc(NC * sizeof(double)), *dv = xmalloc(NC * sizeof(double));
    tt_attention_forward(y, att, q, key, v, B, T, C, H);
    tt_attention_backward(dq, dk, dv, dpc, dy, q, key, v, att, B, T, C, H);
    double *R[4], *Rf[4], *zero = xcalloc(NC, sizeof(double)); /* Rq, Rkey, Rv, Rdy */
    for (int i = 0; i < 4; i++) R[i] = rnd(NC, r), Rf[i] = to_dm(R[i], N, 1, C);
    for (int mask = 1; mask < 8; mask++) {
        const double *f[3];
        for (int i = 0; i < 3; i++) f[i] = mask & (1 << i) ? Rf[i] : NULL;
        int att_live = f[0] || f[1];
        double *Ry = xmalloc(NC * sizeof(double)), *Ratt = xmalloc(A * sizeof(double));
        double *Ry_f = rnd_dm(N, 1, C, r), *Ratt_f = xmalloc(A * sizeof(double));
        tt_attention_rop_naive(Ry, Ratt, mask & 1 ? R[0] : zero, mask & 2 ? R[1] : zero, mask & 4 ? R[2] : zero, q, key,
                               v, att, B, T, C, H, 1);
        tt_od_attention_rop(Ry_f, att_live ? Ratt_f : NULL, f[0], f[1], f[2], q, key, v, att, ld, B, T, C, H);
        CHECK(diff_dm(Ry_f, Ry, N, 1, C) < 1e-13, "one direction: attention rop mask %d: %.3g", mask,
              diff_dm(Ry_f, Ry, N, 1, C));
        double *o[3], *of[3];
        for (int i = 0; i < 3; i++) o[i] = xmalloc(NC * sizeof(double)), of[i] = rnd_dm(N, 1, C, r);
        tt_attention_rop_backward_naive(o[0], o[1], o[2], R[3], dy, q, key, v, att, dpc, mask & 1 ? R[0] : zero,
                                        mask & 2 ? R[1] : zero, mask & 4 ? R[2] : zero, Ratt, B, T, C, H, 1);
        for (int want = 1; want < 8; want++) {
            tt_od_attention_rop_backward(want & 1 ? of[0] : NULL, want & 2 ? of[1] : NULL, want & 4 ? of[2] : NULL,
                                         Rf[3], dy, q, key, v, att, dpc, f[0], f[1], f[2], att_live ? Ratt_f : NULL, ld,
                                         B, T, C, H);
            for (int i = 0; i < 3; i++)
                if (want & (1 << i))
                    CHECK(diff_dm(of[i], o[i], N, 1, C) < 1e-13, "one direction: attention rop backward %d mask %d "
                          "want %d: %.3g", i, mask, want, diff_dm(of[i], o[i], N, 1, C));
        }
        for (int i = 0; i < 3; i++) free(o[i]), free(of[i]);
        free(Ry), free(Ratt), free(Ry_f), free(Ratt_f);
    }
    for (int i = 0; i < 4; i++) free(R[i]), free(Rf[i]);
    free(q), free(key), free(v), free(dy), free(y), free(att), free(dpc), free(dq), free(dk), free(dv), free(zero);

    int M = 7;
    size_t NM = (size_t)N * M, ldb = N + 3;
    double *x = rnd(NM, r), *dout = rnd(NM, r), *Rin = rnd(NM, r), *Rdo = rnd(NM, r);
    double *g1 = xmalloc(NM * sizeof(double)), *g2d = xmalloc(NM * sizeof(double));
    tt_gelu_derivs(g1, g2d, x, NM);
    for (size_t i = 0; i < NM; i++) g2d[i] *= dout[i];
    double *g1T = fm(g1, N, M, ldb), *g2dT = fm(g2d, N, M, ldb), *Rin_f = to_dm(Rin, N, 1, M), *Rdo_f = to_dm(Rdo, N, 1, M);
    double *o = xmalloc(NM * sizeof(double)), *of = rnd_dm(N, 1, M, r);
    tt_gelu_rop_naive(o, Rin, x, N, M, 1);
    tt_od_gelu_rop(of, Rin_f, g1T, ld, ldb, N, M);
    CHECK(diff_dm(of, o, N, 1, M) < 1e-13, "one direction: gelu rop");
    tt_gelu_rop_backward_naive(o, Rdo, dout, x, Rin, N, M, 1);
    tt_od_gelu_rop_backward(of, Rdo_f, g1T, g2dT, Rin_f, ld, ldb, N, M);
    CHECK(diff_dm(of, o, N, 1, M) < 1e-13, "one direction: gelu rop backward");
    free(x), free(dout), free(Rin), free(Rdo), free(g1), free(g2d), free(g1T), free(g2dT), free(Rin_f), free(Rdo_f);
    free(o), free(of);
}

/* The unit-direction paths (tt_hess_cols_lower through the engine, hess_cols)
 * against the generic hvp on dense random directions: H V from the unit
 * columns equals hvp(V) to round-off. */
static void test_unit_vs_dense(void)
{
    for (int layers = 1; layers <= 2; layers++)
        for (int bias = 0; bias <= 1; bias++) {
            tt_config c = {.V = 5, .C = 8, .heads = 2, .M = 12, .layers = layers, .T = 4, .bias = bias, .seed = 3};
            model *m = tt_new(&c);
            gsl_rng *r = rng_new(50 + layers + 10 * bias);
            for (size_t i = 0; i < m->P; i++) m->params[i] += rng_gaussian(r, 0.3);
            int B = 3, tok[15];
            for (int i = 0; i < B * (c.T + 1); i++) tok[i] = (int)rng_int(r, c.V);
            tt_set_batch(m, tok, B);
            size_t P = m->P;
            int k = 9;
            double *V = rnd((size_t)k * P, r), *HV = xmalloc((size_t)k * P * sizeof(double));
            double *ref = xcalloc((size_t)k * P, sizeof(double));
            for (int threads = 1; threads <= 2; threads++) {
                tt_set_threads(m, threads);
                tt_set_hvp_blocking(m, 4, 2);
                hessian_opts o = hessian_defaults();
                o.panel = 13;
                o.symmetric = 1;
                double *H = hessian_full(m, &o);
                o.symmetric = 0;
                double *Hc = hessian_full(m, &o); /* hess_cols, every row computed */
                m->hvp(m, V, HV, k);
                memset(ref, 0, (size_t)k * P * sizeof(double));
                for (int d = 0; d < k; d++)
                    for (size_t i = 0; i < P; i++) {
                        double s = 0;
                        for (size_t j = 0; j < P; j++) s += H[i * P + j] * V[(size_t)d * P + j];
                        ref[(size_t)d * P + i] = s;
                    }
                CHECK(rel_max_diff((size_t)k * P, HV, ref) < 1e-12, "%d layers bias %d threads %d: hvp(V) vs H V %.3g",
                      layers, bias, threads, rel_max_diff((size_t)k * P, HV, ref));
                CHECK(rel_max_diff(P * P, Hc, H) < 1e-12, "%d layers bias %d threads %d: hess_cols vs lower %.3g",
                      layers, bias, threads, rel_max_diff(P * P, Hc, H));
                free(H), free(Hc);
            }
            free(V), free(HV), free(ref);
            rng_free(r);
            model_free(m);
        }
}

int main(void)
{
    core_quiet = 1;
    gsl_rng *r = rng_new(11);
    test_linear(r);
    test_layernorm(r);
    test_attention(r);
    test_gelu(r, &GELU_ERF);
    test_gelu(r, &GELU_TANH);
    test_onedir_linear_layernorm(r);
    test_onedir_attention_gelu(r);
    rng_free(r);
    test_unit_vs_dense();
    return check_summary();
}
