/* Tests of the Llama-style model (tinytransformer/llama*.c).
 *
 * Kernels, each on its own: the naive R-operator of the forward against
 * central differences of the forward, the naive R-operator of the backward
 * against central differences of the backward, the backward against
 * differences of <dout, forward>, and the direction-minor R-kernels against
 * the naive ones (to 1e-13, padding NaN so a kernel reading it fails);
 * closed forms: RMSNorm's Jacobian along x is eps r² g ⊙ x̂ (zero without eps:
 * scale invariance), silu'(0) = silu''(0) = 1/2, rotary by hand-computed
 * values, orthogonal (norms kept, the inverse its transpose), its R-operator
 * itself; repeat_kv's backward its transpose.
 * The model: parameter table and counts; gradient against differences of the
 * loss and H v against differences of the gradient for every role, MHA, GQA
 * and one kv head, tied and untied, 1 and 2 layers; H symmetric; H v the same
 * bytes on 1, 2 and 3 threads and to round-off under other blockings; GQA
 * equal to MHA with the key and value rows repeated; tied = untied summed;
 * user errors. */
#include "check.h"
#include "gn_check.h"
#include "hessian/hessian.h"
#include "tests/fixtures.h"
#include "tinytransformer/llama_kernels.h"
#include <ctype.h>
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

static double *zeros(size_t n) { return xcalloc(n, sizeof(double)); }

/* ---- layouts: token-major (N,k,C) <-> direction-minor (C,N,k) and its copies (N,C,k) ---------- */

static double *to_dm(const double *x, int N, int k, int C)
{
    size_t ld = tt_dm_ld(N, k);
    double *y = xmalloc((size_t)C * ld * sizeof(double));
    for (size_t i = 0; i < (size_t)C * ld; i++) y[i] = NAN;
    for (int n = 0; n < N; n++)
        for (int d = 0; d < k; d++)
            for (int c = 0; c < C; c++) y[c * ld + (size_t)n * k + d] = x[((size_t)n * k + d) * C + c];
    return y;
}

static double *dm_buf(int N, int k, int C)
{
    size_t n = (size_t)C * tt_dm_ld(N, k);
    double *y = xmalloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) y[i] = NAN;
    return y;
}

static double *dmt_buf(int N, int k, int C)
{
    size_t n = (size_t)N * tt_dm_ldt(C, k);
    double *y = xmalloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) y[i] = NAN;
    return y;
}

/* max |a - b| / max |b| of a direction-minor a (or its token-major copy, t = 1) against token-major b */
static double diff_dm(const double *a, int t, const double *b, int N, int k, int C)
{
    size_t ld = tt_dm_ld(N, k), lt = tt_dm_ldt(C, k);
    double worst = 0, big = 0;
    for (int n = 0; n < N; n++)
        for (int d = 0; d < k; d++)
            for (int c = 0; c < C; c++) {
                double x = t ? a[n * lt + (size_t)c * k + d] : a[c * ld + (size_t)n * k + d];
                double y = b[((size_t)n * k + d) * C + c];
                worst = x == x ? fmax(worst, fabs(x - y)) : INFINITY;
                big = fmax(big, fabs(y));
            }
    return big > 0 ? worst / big : worst;
}

/* a parameter panel (k directions at +d*ld, n entries) -> direction-minor (n,k) */
static double *panel_to_dm(const double *p, size_t n, size_t ld, int k)
{
    double *y = xmalloc(n * k * sizeof(double));
    for (int d = 0; d < k; d++)
        for (size_t i = 0; i < n; i++) y[i * k + d] = p[d * ld + i];
    return y;
}

static double diff_panel(const double *dm, const double *p, size_t n, size_t ld, int k)
{
    double *q = panel_to_dm(p, n, ld, k);
    double e = rel_max_diff(n * k, dm, q);
    free(q);
    return e != e ? INFINITY : e;
}

/* row d of a token-major (N,k,C) R-quantity as an (N,C) array */
static void direction(double *out, const double *x, int d, int N, int k, int C)
{
    for (int n = 0; n < N; n++) memcpy(out + (size_t)n * C, x + ((size_t)n * k + d) * C, C * sizeof(double));
}

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* ---- RMSNorm ----------------------------------------------------------------------------------- */

enum { N_ = 5, C_ = 6, K_ = 8 };
static const double EPS = 1e-2; /* large, so eps's terms are visible */

/* y, and optionally the gradient dx, dg of <dout, y>, at x + h Rx, g + h Rg, dout + h Rdout (direction d) */
static void rms_at(double *y, double *dx, double *dg, const double *x, const double *Rx, const double *g,
                   const double *Rg, const double *dout, const double *Rdout, double h, int d)
{
    double xp[N_ * C_], gp[C_], dp[N_ * C_], xh[N_ * C_], r[N_];
    for (int n = 0; n < N_; n++)
        for (int c = 0; c < C_; c++) {
            xp[n * C_ + c] = x[n * C_ + c] + h * Rx[((size_t)n * K_ + d) * C_ + c];
            dp[n * C_ + c] = dout[n * C_ + c] + h * Rdout[((size_t)n * K_ + d) * C_ + c];
        }
    for (int c = 0; c < C_; c++) gp[c] = g[c] + h * Rg[d * C_ + c];
    llama_rmsnorm_forward(y, xh, r, xp, gp, EPS, N_, C_);
    if (dx) {
        memset(dx, 0, sizeof(double) * N_ * C_);
        memset(dg, 0, sizeof(double) * C_);
        llama_rmsnorm_backward(dx, dg, dp, xh, r, gp, N_, C_);
    }
}

static void test_rmsnorm(gsl_rng *r)
{
    const int N = N_, C = C_, k = K_;
    double *x = rnd(N * C, r), *g = rnd(C, r), *dout = rnd(N * C, r);
    double *Rx = rnd((size_t)N * k * C, r), *Rg = rnd((size_t)k * C, r), *Rdout = rnd((size_t)N * k * C, r);
    double y[N_ * C_], xh[N_ * C_], rs[N_];
    llama_rmsnorm_forward(y, xh, rs, x, g, EPS, N, C);
    /* the backward against differences of <dout, y(x, g)> */
    double dx[N_ * C_] = {0}, dg[C_] = {0}, yp[N_ * C_], ym[N_ * C_], fd_dx[N_ * C_], fd_dg[C_];
    llama_rmsnorm_backward(dx, dg, dout, xh, rs, g, N, C);
    const double h = 1e-5;
    for (int i = 0; i < N * C + C; i++) {
        double *p = i < N * C ? &x[i] : &g[i - N * C], keep = *p;
        double xhh[N_ * C_], rr[N_];
        *p = keep + h, llama_rmsnorm_forward(yp, xhh, rr, x, g, EPS, N, C);
        *p = keep - h, llama_rmsnorm_forward(ym, xhh, rr, x, g, EPS, N, C);
        *p = keep;
        double v = (dot(dout, yp, N * C) - dot(dout, ym, N * C)) / (2 * h);
        if (i < N * C) fd_dx[i] = v;
        else fd_dg[i - N * C] = v;
    }
    CHECK(rel_max_diff(N * C, dx, fd_dx) < 1e-8, "RMSNorm dx vs differences: %.3g", rel_max_diff(N * C, dx, fd_dx));
    CHECK(rel_max_diff(C, dg, fd_dg) < 1e-8, "RMSNorm dg vs differences: %.3g", rel_max_diff(C, dg, fd_dg));

    /* naive R-forward and R-backward against differences along (Rx, Rg, Rdout) */
    double *Ry = zeros((size_t)N * k * C), *Rxh = zeros((size_t)N * k * C), *Rr = zeros((size_t)N * k);
    double *Rdx = zeros((size_t)N * k * C), *Rdg = zeros((size_t)k * C);
    llama_rmsnorm_rop_naive(Ry, Rxh, Rr, Rx, xh, rs, g, Rg, C, N, C, k);
    llama_rmsnorm_rop_backward_naive(Rdx, Rdg, Rdout, dout, xh, rs, Rxh, Rr, g, Rg, C, N, C, k);
    double worst_f = 0, worst_b = 0, worst_g = 0;
    for (int d = 0; d < k; d++) {
        double y1[N_ * C_], y2[N_ * C_], dx1[N_ * C_], dx2[N_ * C_], dg1[C_], dg2[C_], fd[N_ * C_], an[N_ * C_];
        rms_at(y1, dx1, dg1, x, Rx, g, Rg, dout, Rdout, h, d);
        rms_at(y2, dx2, dg2, x, Rx, g, Rg, dout, Rdout, -h, d);
        for (int i = 0; i < N * C; i++) fd[i] = (y1[i] - y2[i]) / (2 * h);
        direction(an, Ry, d, N, k, C);
        worst_f = fmax(worst_f, rel_max_diff(N * C, an, fd));
        for (int i = 0; i < N * C; i++) fd[i] = (dx1[i] - dx2[i]) / (2 * h);
        direction(an, Rdx, d, N, k, C);
        worst_b = fmax(worst_b, rel_max_diff(N * C, an, fd));
        for (int c = 0; c < C; c++) fd[c] = (dg1[c] - dg2[c]) / (2 * h);
        worst_g = fmax(worst_g, rel_max_diff(C, Rdg + d * C, fd));
    }
    CHECK(worst_f < 1e-8, "RMSNorm R-forward vs differences: %.3g", worst_f);
    CHECK(worst_b < 1e-8, "RMSNorm R-backward R{dx} vs differences: %.3g", worst_b);
    CHECK(worst_g < 1e-8, "RMSNorm R-backward R{dg} vs differences: %.3g", worst_g);

    /* closed form: J x = r g ⊙ (x − x̂ (x̂·x)/C) = eps r² g ⊙ x̂ (RMSNorm is scale invariant but for eps) */
    double *X = zeros((size_t)N * k * C), *Jx = zeros((size_t)N * k * C);
    for (int n = 0; n < N; n++)
        for (int d = 0; d < k; d++) memcpy(X + ((size_t)n * k + d) * C, x + n * C, C * sizeof(double));
    llama_rmsnorm_rop_naive(Jx, Rxh, Rr, X, xh, rs, g, NULL, 0, N, C, k);
    double worst_j = 0;
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++) {
            double want = EPS * rs[n] * rs[n] * g[c] * xh[n * C + c];
            worst_j = fmax(worst_j, fabs(Jx[((size_t)n * k + 3) * C + c] - want) / fabs(want));
        }
    CHECK(worst_j < 1e-12, "RMSNorm Jacobian along x = eps r^2 g x^: rel err %.3g", worst_j);

    /* direction-minor against naive, parameter directions present and absent, acc 0 and 1 */
    for (int withg = 0; withg <= 1; withg++) {
        const double *rg = withg ? Rg : NULL;
        double *Rgdm = panel_to_dm(Rg, C, C, k);
        llama_rmsnorm_rop_naive(Ry, Rxh, Rr, Rx, xh, rs, g, rg, C, N, C, k);
        memset(Rdx, 0, sizeof(double) * N * k * C);
        memset(Rdg, 0, sizeof(double) * k * C);
        llama_rmsnorm_rop_backward_naive(Rdx, Rdg, Rdout, dout, xh, rs, Rxh, Rr, g, rg, C, N, C, k);
        double *Rxd = to_dm(Rx, N, k, C), *Ryd = dm_buf(N, k, C), *Ryt = dmt_buf(N, k, C), *Rxhd = dm_buf(N, k, C);
        double *Rrd = zeros((size_t)N * k + 8), *Rdo = to_dm(Rdout, N, k, C), *Rdxd = to_dm(Rx, N, k, C);
        double *Rdxt = dmt_buf(N, k, C), *gg = zeros((size_t)C * k);
        llama_dm_rmsnorm_rop(Ryd, Ryt, Rxhd, Rrd, Rxd, xh, rs, g, withg ? Rgdm : NULL, N, C, k);
        CHECK(diff_dm(Ryd, 0, Ry, N, k, C) < 1e-13 && diff_dm(Ryt, 1, Ry, N, k, C) < 1e-13 &&
                  diff_dm(Rxhd, 0, Rxh, N, k, C) < 1e-13 && rel_max_diff((size_t)N * k, Rrd, Rr) < 1e-13,
              "RMSNorm dm R-forward vs naive (Rg %d): %.3g", withg, diff_dm(Ryd, 0, Ry, N, k, C));
        /* acc 1 onto R{x} itself: expected Rx + naive */
        double *want = xmalloc(sizeof(double) * N * k * C);
        for (int i = 0; i < N * k * C; i++) want[i] = Rx[i] + Rdx[i];
        llama_dm_rmsnorm_rop_backward(Rdxd, Rdxt, 1, gg, Rdo, dout, xh, rs, Rxhd, Rrd, g, withg ? Rgdm : NULL, N, C,
                                      k);
        CHECK(diff_dm(Rdxd, 0, want, N, k, C) < 1e-13 && diff_dm(Rdxt, 1, want, N, k, C) < 1e-13,
              "RMSNorm dm R-backward (acc) vs naive (Rg %d): %.3g", withg, diff_dm(Rdxd, 0, want, N, k, C));
        CHECK(diff_panel(gg, Rdg, C, C, k) < 1e-13, "RMSNorm dm R{dg} vs naive: %.3g", diff_panel(gg, Rdg, C, C, k));
        llama_dm_rmsnorm_rop_backward(Rdxd, NULL, 0, NULL, Rdo, dout, xh, rs, Rxhd, Rrd, g, withg ? Rgdm : NULL, N, C,
                                      k);
        CHECK(diff_dm(Rdxd, 0, Rdx, N, k, C) < 1e-13, "RMSNorm dm R-backward (overwrite) vs naive: %.3g",
              diff_dm(Rdxd, 0, Rdx, N, k, C));
        free(Rgdm), free(Rxd), free(Ryd), free(Ryt), free(Rxhd), free(Rrd), free(Rdo), free(Rdxd), free(Rdxt);
        free(gg), free(want);
    }
    free(x), free(g), free(dout), free(Rx), free(Rg), free(Rdout), free(Ry), free(Rxh), free(Rr), free(Rdx), free(Rdg);
    free(X), free(Jx);
}

/* ---- SwiGLU ------------------------------------------------------------------------------------ */

static void test_swiglu(gsl_rng *r)
{
    const int N = 4, M = 7, k = 8;
    size_t n = (size_t)N * M, nk = n * k;
    double d1, d2, zero = 0;
    llama_silu_derivs(&d1, &d2, &zero, 1);
    CHECK(d1 == 0.5 && d2 == 0.5, "silu'(0) = %.17g, silu''(0) = %.17g, expected 1/2, 1/2", d1, d2);
    double worst1 = 0, worst2 = 0;
    for (double a = -30; a <= 30; a += 0.37) { /* derivatives against differences, both tails */
        const double h = 1e-5;
        double a2[2] = {a + h, a - h}, p1[2], p2[2];
        llama_silu_derivs(&d1, &d2, &a, 1);
        llama_silu_derivs(p1, p2, a2, 2);
        worst1 = fmax(worst1, fabs(d1 - (llama_silu(a + h) - llama_silu(a - h)) / (2 * h)));
        worst2 = fmax(worst2, fabs(d2 - (p1[0] - p1[1]) / (2 * h)));
    }
    CHECK(worst1 < 1e-9 && worst2 < 1e-9, "silu', silu'' vs differences: %.3g, %.3g", worst1, worst2);

    double *a = rnd(n, r), *b = rnd(n, r), *dout = rnd(n, r), *Ra = rnd(nk, r), *Rb = rnd(nk, r), *Rdo = rnd(nk, r);
    for (size_t i = 0; i < n; i++) a[i] *= 3; /* into silu's curved part */
    double *s = zeros(n), *da = zeros(n), *db = zeros(n);
    llama_swiglu_forward(s, a, b, n);
    llama_swiglu_backward(da, db, dout, a, b, n);
    double *Rs = zeros(nk), *Rda = zeros(nk), *Rdb = zeros(nk);
    llama_swiglu_rop_naive(Rs, Ra, Rb, a, b, N, M, k);
    llama_swiglu_rop_backward_naive(Rda, Rdb, Rdo, dout, a, b, Ra, Rb, N, M, k);
    const double h = 1e-5;
    double wb = 0, wf = 0, wr = 0;
    double *sp = zeros(n), *sm = zeros(n), *ap = zeros(n), *bp = zeros(n), *dp = zeros(n);
    double *dap = zeros(n), *dbp = zeros(n), *dam = zeros(n), *dbm = zeros(n);
    for (size_t i = 0; i < n; i++) { /* backward against differences of <dout, s> */
        double keep = a[i];
        a[i] = keep + h, llama_swiglu_forward(sp, a, b, n);
        a[i] = keep - h, llama_swiglu_forward(sm, a, b, n);
        a[i] = keep;
        wb = fmax(wb, fabs(da[i] - (dot(dout, sp, n) - dot(dout, sm, n)) / (2 * h)));
        keep = b[i];
        b[i] = keep + h, llama_swiglu_forward(sp, a, b, n);
        b[i] = keep - h, llama_swiglu_forward(sm, a, b, n);
        b[i] = keep;
        wb = fmax(wb, fabs(db[i] - (dot(dout, sp, n) - dot(dout, sm, n)) / (2 * h)));
    }
    for (int d = 0; d < k; d++) /* R-forward and R-backward against differences along (Ra, Rb, Rdout) */
        for (int sg = 1; sg >= -1; sg -= 2) {
            for (int q = 0; q < N; q++)
                for (int m = 0; m < M; m++) {
                    size_t i = (size_t)q * M + m, ri = ((size_t)q * k + d) * M + m;
                    ap[i] = a[i] + sg * h * Ra[ri], bp[i] = b[i] + sg * h * Rb[ri], dp[i] = dout[i] + sg * h * Rdo[ri];
                }
            llama_swiglu_forward(sg > 0 ? sp : sm, ap, bp, n);
            llama_swiglu_backward(sg > 0 ? dap : dam, sg > 0 ? dbp : dbm, dp, ap, bp, n);
            if (sg < 0)
                for (int q = 0; q < N; q++)
                    for (int m = 0; m < M; m++) {
                        size_t i = (size_t)q * M + m, ri = ((size_t)q * k + d) * M + m;
                        wf = fmax(wf, fabs(Rs[ri] - (sp[i] - sm[i]) / (2 * h)));
                        wr = fmax(wr, fmax(fabs(Rda[ri] - (dap[i] - dam[i]) / (2 * h)),
                                           fabs(Rdb[ri] - (dbp[i] - dbm[i]) / (2 * h))));
                    }
        }
    CHECK(wb < 1e-8, "SwiGLU backward vs differences: %.3g", wb);
    CHECK(wf < 1e-8, "SwiGLU R-forward vs differences: %.3g", wf);
    CHECK(wr < 1e-8, "SwiGLU R-backward vs differences (the gate-up cross terms): %.3g", wr);

    /* direction-minor against naive */
    double *s0 = zeros(n), *s1b = zeros(n), *ds1 = zeros(n), *ds2b = zeros(n);
    llama_swiglu_coeffs(s0, s1b, ds1, ds2b, a, b, dout, n);
    double *Rad = to_dm(Ra, N, k, M), *Rbd = to_dm(Rb, N, k, M), *Rdod = to_dm(Rdo, N, k, M);
    double *Rsd = dm_buf(N, k, M), *Rst = dmt_buf(N, k, M), *Rdad = dm_buf(N, k, M), *Rdat = dmt_buf(N, k, M);
    double *Rdbd = dm_buf(N, k, M), *Rdbt = dmt_buf(N, k, M);
    llama_dm_swiglu_rop(Rsd, Rst, Rad, Rbd, s0, s1b, N, M, k);
    llama_dm_swiglu_rop_backward(Rdad, Rdat, Rdbd, Rdbt, Rdod, Rad, Rbd, s0, s1b, ds1, ds2b, N, M, k);
    CHECK(diff_dm(Rsd, 0, Rs, N, k, M) < 1e-13 && diff_dm(Rst, 1, Rs, N, k, M) < 1e-13,
          "SwiGLU dm R-forward vs naive: %.3g", diff_dm(Rsd, 0, Rs, N, k, M));
    CHECK(diff_dm(Rdad, 0, Rda, N, k, M) < 1e-13 && diff_dm(Rdat, 1, Rda, N, k, M) < 1e-13 &&
              diff_dm(Rdbd, 0, Rdb, N, k, M) < 1e-13 && diff_dm(Rdbt, 1, Rdb, N, k, M) < 1e-13,
          "SwiGLU dm R-backward vs naive: %.3g, %.3g", diff_dm(Rdad, 0, Rda, N, k, M), diff_dm(Rdbd, 0, Rdb, N, k, M));
    free(a), free(b), free(dout), free(Ra), free(Rb), free(Rdo), free(s), free(da), free(db), free(Rs), free(Rda);
    free(Rdb), free(sp), free(sm), free(ap), free(bp), free(dp), free(dap), free(dbp), free(dam), free(dbm);
    free(s0), free(s1b), free(ds1), free(ds2b), free(Rad), free(Rbd), free(Rdod), free(Rsd), free(Rst), free(Rdad);
    free(Rdat), free(Rdbd), free(Rdbt);
}

/* ---- rotary and grouped heads --------------------------------------------------------------------- */

static void test_rope(gsl_rng *r)
{
    /* by hand: hd 4, θ 100: pairs (0,2) at angle t, (1,3) at angle t/10 (θ^(−2/4) = 1/10) */
    const int T = 3, hd = 4;
    double cs[T * 2], sn[T * 2], x[T * 4], y[T * 4];
    llama_rope_tables(cs, sn, T, hd, 100);
    for (int i = 0; i < T * 4; i++) x[i] = i + 1;
    llama_rope(y, x, cs, sn, 0, T, T, 1, hd);
    double worst = 0;
    for (int t = 0; t < T; t++) {
        const double *a = x + 4 * t;
        double a0 = t, a1 = t / 10.0;
        double want[4] = {a[0] * cos(a0) - a[2] * sin(a0), a[1] * cos(a1) - a[3] * sin(a1),
                          a[2] * cos(a0) + a[0] * sin(a0), a[3] * cos(a1) + a[1] * sin(a1)};
        for (int i = 0; i < 4; i++) worst = fmax(worst, fabs(y[4 * t + i] - want[i]));
    }
    CHECK(worst < 1e-14, "rotary (rotate_half) by hand: max err %.3g", worst);
    CHECK(memcmp(x, y, 4 * sizeof(double)) == 0, "rotary at position 0 is the identity");

    /* orthogonal: norms kept per token and head, inverse = transpose, R-operator = itself */
    const int N = 10, T2 = 5, H = 3, hd2 = 6, C = H * hd2, k = 8;
    double *c2 = zeros(T2 * 3), *s2 = zeros(T2 * 3);
    llama_rope_tables(c2, s2, T2, hd2, 10000);
    double *u = rnd(N * C, r), *v = rnd(N * C, r), *ru = zeros(N * C), *rv = zeros(N * C), *back = zeros(N * C);
    llama_rope(ru, u, c2, s2, 0, N, T2, H, hd2);
    llama_rope(rv, v, c2, s2, 1, N, T2, H, hd2);
    llama_rope(back, ru, c2, s2, 1, N, T2, H, hd2);
    double wn = 0;
    for (int n = 0; n < N; n++)
        for (int h = 0; h < H; h++) {
            const double *x = u + n * C + h * hd2, *y = ru + n * C + h * hd2;
            double a = dot(x, x, hd2), b = dot(y, y, hd2);
            wn = fmax(wn, fabs(a - b) / a);
        }
    CHECK(wn < 1e-14, "rotary keeps each head's norm: %.3g", wn);
    CHECK(rel_max_diff(N * C, back, u) < 1e-14, "rotary inverse after forward is the identity: %.3g",
          rel_max_diff(N * C, back, u));
    CHECK(fabs(dot(ru, v, N * C) - dot(u, rv, N * C)) < 1e-12 * fabs(dot(ru, v, N * C)),
          "<rope u, v> = <u, rope^-1 v>: the backward is the transpose");
    double *Ru = rnd((size_t)N * k * C, r), *Rout = zeros((size_t)N * k * C), *one = zeros(N * C), *want = zeros(N * C);
    double *tmp = zeros(N * C);
    for (int inv = 0; inv <= 1; inv++) {
        llama_rope_rop_naive(Rout, Ru, c2, s2, inv, N, T2, H, hd2, k);
        double wr = 0;
        for (int d = 0; d < k; d++) { /* R{rope(x)} = rope(R{x}) (linear in x) */
            direction(one, Ru, d, N, k, C);
            llama_rope(want, one, c2, s2, inv, N, T2, H, hd2);
            direction(tmp, Rout, d, N, k, C);
            wr = fmax(wr, rel_max_diff(N * C, tmp, want));
        }
        CHECK(wr == 0, "rotary R-operator = rotary (inverse %d): %.3g", inv, wr);
        double *Rud = to_dm(Ru, N, k, C), *Rod = dm_buf(N, k, C), *Rot = dmt_buf(N, k, C);
        llama_dm_rope(Rod, Rot, Rud, c2, s2, inv, N, T2, H, hd2, k);
        CHECK(diff_dm(Rod, 0, Rout, N, k, C) == 0 && diff_dm(Rot, 1, Rout, N, k, C) == 0,
              "rotary dm vs naive (inverse %d): %.3g", inv, diff_dm(Rod, 0, Rout, N, k, C));
        free(Rud), free(Rod), free(Rot);
    }
    free(c2), free(s2), free(u), free(v), free(ru), free(rv), free(back), free(Ru), free(Rout), free(one), free(want);
    free(tmp);
}

static void test_repeat_kv(gsl_rng *r)
{
    const int N = 4, H = 6, Hkv = 2, hd = 3, k = 8, C = H * hd, Ckv = Hkv * hd;
    double *x = rnd(N * Ckv, r), *y = rnd(N * C, r), *ex = zeros(N * C), *sy = zeros(N * Ckv);
    llama_repeat_kv(ex, x, N, H, Hkv, hd);
    llama_repeat_kv_backward(sy, y, N, H, Hkv, hd);
    CHECK(fabs(dot(ex, y, N * C) - dot(x, sy, N * Ckv)) < 1e-12 * fabs(dot(ex, y, N * C)),
          "repeat_kv's backward is its transpose");
    CHECK(ex[2 * C + 2 * hd + 1] == x[2 * Ckv + 0 * hd + 1] && ex[2 * C + 3 * hd + 1] == x[2 * Ckv + 1 * hd + 1],
          "query heads 0-2 read kv head 0, heads 3-5 kv head 1 (repeat_interleave)");
    /* direction-minor against the token-major map applied to the (N·k) rows */
    double *Rx = rnd((size_t)N * k * Ckv, r), *Ry = rnd((size_t)N * k * C, r);
    double *Rex = zeros((size_t)N * k * C), *Rsy = zeros((size_t)N * k * Ckv);
    llama_repeat_kv(Rex, Rx, N * k, H, Hkv, hd);
    llama_repeat_kv_backward(Rsy, Ry, N * k, H, Hkv, hd);
    double *Rxd = to_dm(Rx, N, k, Ckv), *Ryd = to_dm(Ry, N, k, C), *o1 = dm_buf(N, k, C), *o2 = dm_buf(N, k, Ckv);
    double *o2t = dmt_buf(N, k, Ckv);
    llama_dm_repeat_kv(o1, Rxd, N, H, Hkv, hd, k);
    llama_dm_repeat_kv_backward(o2, o2t, Ryd, N, H, Hkv, hd, k);
    CHECK(diff_dm(o1, 0, Rex, N, k, C) == 0, "repeat_kv dm vs token-major: %.3g", diff_dm(o1, 0, Rex, N, k, C));
    CHECK(diff_dm(o2, 0, Rsy, N, k, Ckv) < 1e-15 && diff_dm(o2t, 1, Rsy, N, k, Ckv) < 1e-15,
          "repeat_kv backward dm vs token-major: %.3g", diff_dm(o2, 0, Rsy, N, k, Ckv));
    free(x), free(y), free(ex), free(sy), free(Rx), free(Ry), free(Rex), free(Rsy), free(Rxd), free(Ryd), free(o1);
    free(o2), free(o2t);
}

/* The linear layer's R-operator on dense directions: tt_dm_linear_rop (R{inp} term) plus
 * llama_dm_linear_rparam (the R{W} term), and the same for the backward, against the naive
 * token-major references of tt_kernels.c. */
static void test_linear_rparam(gsl_rng *r)
{
    const int N = 6, IC = 5, OC = 7, k = 16;
    size_t ld = (size_t)OC * IC;
    double *inp = rnd(N * IC, r), *W = rnd(OC * IC, r), *dout = rnd(N * OC, r), *RW = rnd(k * ld, r);
    double *Rinp = rnd((size_t)N * k * IC, r), *Rdout = rnd((size_t)N * k * OC, r);
    double *Rout = zeros((size_t)N * k * OC), *Rdinp = zeros((size_t)N * k * IC);
    tt_linear_rop_naive(Rout, Rinp, inp, W, RW, NULL, ld, N, IC, OC, k);
    tt_linear_rop_backward_naive(Rdinp, NULL, NULL, Rdout, dout, inp, NULL, W, RW, ld, N, IC, OC, k);
    static const tt_rpar none;
    double *RWd = panel_to_dm(RW, ld, ld, k), *Rinpd = to_dm(Rinp, N, k, IC), *Rdoutd = to_dm(Rdout, N, k, OC);
    double *Ro = dm_buf(N, k, OC), *Rdi = dm_buf(N, k, IC);
    tt_dm_linear_rop(Ro, 0, Rinpd, inp, W, none, none, N, IC, OC, k);
    llama_dm_linear_rparam(Ro, inp, RWd, N, IC, OC, k);
    tt_dm_linear_rop_backward(Rdi, 0, NULL, NULL, NULL, Rdoutd, NULL, dout, inp, NULL, W, none, N, IC, OC, k);
    llama_dm_linear_rparam_backward(Rdi, dout, RWd, N, IC, OC, k);
    CHECK(diff_dm(Ro, 0, Rout, N, k, OC) < 1e-13, "linear R-forward with dense R{W} vs naive: %.3g",
          diff_dm(Ro, 0, Rout, N, k, OC));
    CHECK(diff_dm(Rdi, 0, Rdinp, N, k, IC) < 1e-13, "linear R{dinp} with dense R{W} vs naive: %.3g",
          diff_dm(Rdi, 0, Rdinp, N, k, IC));
    free(inp), free(W), free(dout), free(RW), free(Rinp), free(Rdout), free(Rout), free(Rdinp), free(RWd), free(Rinpd);
    free(Rdoutd), free(Ro), free(Rdi);
}

/* ---- the model ---------------------------------------------------------------------------------- */

/* A small model with non-trivial parameters (gains 1 + N(0, 0.3²), weights N(0, 0.5²):
 * attention far from uniform, SiLU far from linear) and a batch of B random sequences. */
static model *small_llama(int layers, int heads, int kv_heads, int tied, int T, int B, unsigned long seed)
{
    llama_config c = {.V = 5, .C = 8, .layers = layers, .heads = heads, .kv_heads = kv_heads, .M = 12, .T = T,
                      .eps = 1e-5, .theta = 10, .tied = tied, .seed = seed};
    model *m = llama_new(&c);
    gsl_rng *r = rng_new(seed + 100);
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        for (size_t i = 0; i < tensor_size(ti); i++)
            m->params[ti->offset + i] = ti->role == ROLE_NORM ? 1 + rng_gaussian(r, 0.3) : rng_gaussian(r, 0.5);
    }
    int *tok = xmalloc((size_t)B * (T + 1) * sizeof(int));
    for (int i = 0; i < B * (T + 1); i++) tok[i] = (int)rng_int(r, 5);
    llama_set_batch(m, tok, B);
    free(tok);
    rng_free(r);
    return m;
}

static void test_table(void)
{
    llama_config c = llama_defaults();
    CHECK(llama_param_count(&c) == 2864, "default P = %zu, expected 2864", llama_param_count(&c));
    model *m = llama_new(&c);
    CHECK(m->P == 2864 && strcmp(m->kind, "llama") == 0 && model_is_llama(m), "model P = %zu kind %s", m->P, m->kind);
    static const char *names[] = {
        "model.embed_tokens.weight", "model.layers.0.input_layernorm.weight", "model.layers.0.self_attn.q_proj.weight",
        "model.layers.0.self_attn.k_proj.weight", "model.layers.0.self_attn.v_proj.weight",
        "model.layers.0.self_attn.o_proj.weight", "model.layers.0.post_attention_layernorm.weight",
        "model.layers.0.mlp.gate_proj.weight", "model.layers.0.mlp.up_proj.weight",
        "model.layers.0.mlp.down_proj.weight", "model.norm.weight", "lm_head.weight"};
    static const tensor_role roles[] = {ROLE_EMBED, ROLE_NORM, ROLE_QUERY, ROLE_KEY, ROLE_VALUE, ROLE_ATTN_PROJ,
                                        ROLE_NORM, ROLE_MLP_FC, ROLE_MLP_FC, ROLE_MLP_PROJ, ROLE_NORM, ROLE_OUTPUT};
    int n = sizeof names / sizeof *names;
    CHECK(m->ntensors == n, "%d tensors, expected %d", m->ntensors, n);
    for (int t = 0; t < n && t < m->ntensors; t++)
        CHECK(strcmp(m->tensors[t].name, names[t]) == 0 && m->tensors[t].role == roles[t], "tensor %d is %s (%s)", t,
              m->tensors[t].name, role_name(m->tensors[t].role));
    double s2 = 0;
    size_t cnt = 0;
    int gains = 1;
    for (int t = 0; t < m->ntensors; t++)
        for (size_t i = 0; i < tensor_size(&m->tensors[t]); i++) {
            double p = m->params[m->tensors[t].offset + i];
            if (m->tensors[t].role == ROLE_NORM) gains &= p == 1;
            else s2 += p * p, cnt++;
        }
    CHECK(gains && fabs(sqrt(s2 / cnt) - 0.02) < 0.002, "init: gains 1, weights std %g (expected 0.02)",
          sqrt(s2 / cnt));
    model_free(m);
    /* GQA: 8 heads, 2 kv heads, head_dim 4 on C 32; k and v are 8 x 32 with 2 heads; tied */
    c = (llama_config){.V = 11, .C = 32, .layers = 2, .heads = 8, .kv_heads = 2, .M = 40, .T = 6, .eps = 1e-6,
                       .theta = 1e4, .tied = 1, .seed = 2};
    m = llama_new(&c);
    int k1 = model_find_tensor(m, "model.layers.1.self_attn.k_proj.weight");
    int q1 = model_find_tensor(m, "model.layers.1.self_attn.q_proj.weight");
    int o1 = model_find_tensor(m, "model.layers.1.self_attn.o_proj.weight");
    CHECK(k1 >= 0 && m->tensors[k1].rows == 8 && m->tensors[k1].cols == 32 && m->tensors[k1].heads == 2 &&
              m->tensors[q1].rows == 32 && m->tensors[q1].heads == 8 && m->tensors[o1].cols == 32 &&
              m->tensors[k1].layer == 1,
          "GQA shapes: k %dx%d (%d heads), q %d rows (%d heads)", m->tensors[k1].rows, m->tensors[k1].cols,
          m->tensors[k1].heads, m->tensors[q1].rows, m->tensors[q1].heads);
    size_t want = 11 * 32 + 2 * (64 + 32 * 32 + 2 * 32 * 8 + 32 * 32 + 3 * 40 * 32) + 32;
    CHECK(m->P == want && model_find_tensor(m, "lm_head.weight") < 0, "tied GQA P = %zu, expected %zu", m->P, want);
    model_free(m);
    /* head_dim apart from C / heads: q 3·6 = 18 rows, o_proj 8 x 18 */
    c = (llama_config){.V = 5, .C = 8, .layers = 1, .heads = 3, .kv_heads = 1, .head_dim = 6, .M = 4, .T = 3,
                       .eps = 1e-6, .theta = 1e4, .seed = 2};
    m = llama_new(&c);
    q1 = model_find_tensor(m, "model.layers.0.self_attn.q_proj.weight");
    o1 = model_find_tensor(m, "model.layers.0.self_attn.o_proj.weight");
    CHECK(m->tensors[q1].rows == 18 && m->tensors[o1].cols == 18 && m->P == llama_param_count(&c),
          "head_dim 6 with 3 heads on C 8: q %d rows, o_proj %d cols", m->tensors[q1].rows, m->tensors[o1].cols);
    model_free(m);
}

/* The derivative at 0 from values at h, −h, 2h, −2h (five-point central stencil). */
static const double FD_STEPS[4] = {1, -1, 2, -2};
static double fd5(double fp, double fm, double f2p, double f2m, double h)
{
    return (8 * (fp - fm) - (f2p - f2m)) / (12 * h);
}

/* Worst relative error per role of the gradient against central differences of
 * the loss, and of H v against central differences of the gradient: one
 * direction per tensor (its rows of H v are the whole H v) and one dense one
 * (each tensor's rows of H v). */
static void check_fd(int layers, int heads, int kv_heads, int tied)
{
    model *m = small_llama(layers, heads, kv_heads, tied, 4, 3, 7 + layers + 10 * kv_heads + tied);
    size_t P = m->P;
    double *g = xmalloc(P * sizeof(double)), *gp = xmalloc(P * sizeof(double)), *gm = xmalloc(P * sizeof(double));
    double *fd = xmalloc(P * sizeof(double)), *p0 = xmalloc(P * sizeof(double));
    double *g2p = xmalloc(P * sizeof(double)), *g2m = xmalloc(P * sizeof(double));
    m->grad(m, g);
    double h = 1e-4; /* the five-point stencil: truncation O(h^4), rounding O(1/h) */
    for (size_t i = 0; i < P; i++) {
        double p = m->params[i], l[4];
        for (int j = 0; j < 4; j++) {
            m->params[i] = p + FD_STEPS[j] * h;
            l[j] = m->loss(m);
        }
        m->params[i] = p;
        fd[i] = fd5(l[0], l[1], l[2], l[3], h);
    }
    double wg[ROLE_COUNT] = {0}, wc[ROLE_COUNT] = {0}, wr[ROLE_COUNT] = {0};
    int seen[ROLE_COUNT] = {0};
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        seen[ti->role] = 1;
        wg[ti->role] = fmax(wg[ti->role], rel_l2_diff(tensor_size(ti), g + ti->offset, fd + ti->offset));
    }
    int k = m->ntensors + 1;
    double *V = xcalloc((size_t)k * P, sizeof(double)), *HV = xmalloc((size_t)k * P * sizeof(double));
    gsl_rng *r = rng_new(3);
    for (int t = 0; t < m->ntensors; t++)
        for (size_t i = 0; i < tensor_size(&m->tensors[t]); i++)
            V[(size_t)t * P + m->tensors[t].offset + i] = rng_gaussian(r, 1);
    fill(V + (size_t)(k - 1) * P, P, r);
    rng_free(r);
    m->hvp(m, V, HV, k);
    memcpy(p0, m->params, P * sizeof(double));
    h = 2.5e-5; /* the gradient's rounding error is smaller than the loss's: a smaller step */
    for (int d = 0; d < k; d++) {
        const double *v = V + (size_t)d * P, *hv = HV + (size_t)d * P;
        double *gs[4] = {gp, gm, g2p, g2m};
        for (int j = 0; j < 4; j++) {
            for (size_t i = 0; i < P; i++) m->params[i] = p0[i] + FD_STEPS[j] * h * v[i];
            m->grad(m, gs[j]);
        }
        for (size_t i = 0; i < P; i++) fd[i] = fd5(gp[i], gm[i], g2p[i], g2m[i], h);
        if (d < m->ntensors) {
            tensor_role role = m->tensors[d].role;
            wc[role] = fmax(wc[role], rel_l2_diff(P, hv, fd));
        } else
            for (int t = 0; t < m->ntensors; t++) {
                const tensor_info *ti = &m->tensors[t];
                wr[ti->role] = fmax(wr[ti->role], rel_l2_diff(tensor_size(ti), hv + ti->offset, fd + ti->offset));
            }
    }
    memcpy(m->params, p0, P * sizeof(double));
    for (int role = 0; role < ROLE_COUNT; role++) {
        if (!seen[role]) continue;
        CHECK(wg[role] < 1e-8, "%d layers %d/%d heads tied %d: gradient of %s rel err %.3g", layers, heads, kv_heads,
              tied, role_name(role), wg[role]);
        CHECK(wc[role] < 1e-8, "%d layers %d/%d heads tied %d: H v along %s rel err %.3g", layers, heads, kv_heads,
              tied, role_name(role), wc[role]);
        CHECK(wr[role] < 1e-8, "%d layers %d/%d heads tied %d: rows of %s in H v rel err %.3g", layers, heads,
              kv_heads, tied, role_name(role), wr[role]);
    }
    CHECK(seen[ROLE_OUTPUT] == !tied, "tied %d: an lm_head tensor exactly when untied", tied);
    printf("# fd %d layer(s), %d heads / %d kv heads, tied %d: worst grad %.2g, H v %.2g\n", layers, heads, kv_heads,
           tied, max_abs(ROLE_COUNT, wg), fmax(max_abs(ROLE_COUNT, wc), max_abs(ROLE_COUNT, wr)));
    free(p0), free(V), free(HV), free(g), free(gp), free(gm), free(fd), free(g2p), free(g2m);
    model_free(m);
}

/* H from the engine on panels of `panel` columns, every entry computed (never mirrored). */
static double *hessian_panels(model *m, int panel)
{
    hessian_opts o = hessian_defaults();
    o.panel = panel;
    o.symmetric = 0;
    return hessian_full(m, &o);
}

/* H symmetric; H v the same bytes on 1, 2 and 3 threads; other blockings to round-off; the engine's H. */
static void test_symmetry_threads(void)
{
    for (int tied = 0; tied <= 1; tied++) {
        model *m = small_llama(2, 4, 2, tied, 4, 3, 21 + tied);
        size_t P = m->P;
        double *H = hessian_panels(m, 40), *He = hessian_panels(m, 128);
        CHECK(hessian_asymmetry(P, H) < 1e-12, "tied %d: max|H - Ht|/max|H| = %.3g", tied, hessian_asymmetry(P, H));
        CHECK(rel_max_diff(P * P, He, H) <= 1e-13, "tied %d: H on panels of 128 vs 40 columns %.3g", tied,
              rel_max_diff(P * P, He, H));
        int k = 45;
        double *V = xmalloc((size_t)k * P * sizeof(double)), *HV1 = xmalloc((size_t)k * P * sizeof(double));
        double *HVn = xmalloc((size_t)k * P * sizeof(double));
        gsl_rng *r = rng_new(5);
        fill(V, (size_t)k * P, r);
        rng_free(r);
        llama_set_hvp_blocking(m, 8, 2);
        llama_set_threads(m, 1);
        m->hvp(m, V, HV1, k);
        for (int nt = 2; nt <= 3; nt++) {
            llama_set_threads(m, nt);
            m->hvp(m, V, HVn, k);
            CHECK(memcmp(HV1, HVn, (size_t)k * P * sizeof(double)) == 0, "tied %d: H v on %d threads is not the same "
                  "bytes as on 1 (max diff %.3g)", tied, nt, max_abs_diff((size_t)k * P, HV1, HVn));
        }
        llama_set_threads(m, 0);
        llama_set_hvp_blocking(m, 3, 1);
        m->hvp(m, V, HVn, k);
        CHECK(rel_max_diff((size_t)k * P, HVn, HV1) < 1e-13, "tied %d: blocking (3,1) vs (8,2): %.3g", tied,
              rel_max_diff((size_t)k * P, HVn, HV1));
        llama_set_hvp_blocking(m, 0, 0);
        m->hvp(m, V, HVn, k);
        CHECK(rel_max_diff((size_t)k * P, HVn, HV1) < 1e-13, "tied %d: default blocking vs (8,2): %.3g", tied,
              rel_max_diff((size_t)k * P, HVn, HV1));
        free(H), free(He), free(V), free(HV1), free(HVn);
        model_free(m);
    }
}

/* A GQA model computes what the MHA model with each kv head's key and value rows
 * copied to the query heads that read it computes. */
/* Gauss–Newton mode (gn_check.h): GQA and MHA, tied and untied (G = H on
 * lm_head when untied), 1 and 2 layers. */
static void test_gauss_newton(void)
{
    static const int shapes[][4] = {{1, 2, 2, 0}, {2, 4, 2, 0}, {1, 4, 1, 1}}; /* layers, heads, kv heads, tied */
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        int tied = shapes[i][3], T = 3, B = 2;
        model *m = small_llama(shapes[i][0], shapes[i][1], shapes[i][2], tied, T, B, 61 + i);
        gn_model g = {llama_set_gauss_newton, llama_gauss_newton, llama_forward, (size_t)B * T,
                      llama_config_of(m)->V, tied ? NULL : "lm_head.weight"};
        char what[32];
        snprintf(what, sizeof what, "shape %zu", i);
        check_gauss_newton(m, &g, what);
        model_free(m);
    }
    model *m = small_llama(1, 2, 2, 0, 3, 2, 61);
    EXPECT_USER_ERROR(llama_set_gauss_newton(m, 2), "Gauss-Newton mode");
    model_free(m);
}

static void test_gqa_is_repeated_mha(void)
{
    model *g = small_llama(2, 4, 2, 0, 5, 3, 41);
    llama_config c = *llama_config_of(g);
    c.kv_heads = 4;
    model *m = llama_new(&c);
    int hd = c.C / c.heads;
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *tm = &m->tensors[t], *tg = &g->tensors[model_find_tensor(g, tm->name)];
        double *dst = m->params + tm->offset;
        const double *src = g->params + tg->offset;
        if (tm->role == ROLE_KEY || tm->role == ROLE_VALUE)
            for (int h = 0; h < 4; h++) /* query head h reads kv head h / 2 */
                memcpy(dst + (size_t)h * hd * c.C, src + (size_t)(h / 2) * hd * c.C, (size_t)hd * c.C * sizeof(double));
        else
            memcpy(dst, src, tensor_size(tm) * sizeof(double));
    }
    int tok[3 * 6];
    for (int i = 0; i < 18; i++) tok[i] = (i * 3 + 1) % 5;
    llama_set_batch(g, tok, 3);
    llama_set_batch(m, tok, 3);
    double lg[3 * 5 * 5], lm[3 * 5 * 5];
    double a = llama_forward(g, lg, NULL), b = llama_forward(m, lm, NULL);
    CHECK(fabs(a - b) < 1e-14 * fabs(a) && rel_max_diff(75, lg, lm) < 1e-13,
          "GQA loss %.17g vs MHA with repeated kv rows %.17g (logits %.3g)", a, b, rel_max_diff(75, lg, lm));
    model_free(g);
    model_free(m);
}

/* Tied = untied with lm_head = embed, composed with the copy: gradient Jᵀ g and Hessian Jᵀ H J. */
static void test_tied_is_summed_untied(void)
{
    model *u = small_llama(1, 2, 1, 0, 4, 3, 51);
    llama_config c = *llama_config_of(u);
    c.tied = 1;
    model *t = llama_new(&c);
    int te = model_find_tensor(u, "model.embed_tokens.weight"), tl = model_find_tensor(u, "lm_head.weight");
    size_t Pu = u->P, Pt = t->P, nw = tensor_size(&u->tensors[te]), e0 = u->tensors[te].offset;
    size_t lm = u->tensors[tl].offset;
    CHECK(Pt + nw == Pu && lm + nw == Pu, "tied P %zu = untied %zu - V*C, lm_head last", Pt, Pu);
    memcpy(u->params + lm, u->params + e0, nw * sizeof(double));
    memcpy(t->params, u->params, Pt * sizeof(double));
    int tok[15];
    for (int i = 0; i < 15; i++) tok[i] = (i * 7 + 3) % 5;
    llama_set_batch(t, tok, 3);
    llama_set_batch(u, tok, 3);
    double *gu = xmalloc(Pu * sizeof(double)), *gt = xmalloc(Pt * sizeof(double)), *ge = xmalloc(Pt * sizeof(double));
    double lu = u->grad(u, gu), lt = t->grad(t, gt);
    for (size_t j = 0; j < Pt; j++) ge[j] = gu[j] + (j >= e0 && j < e0 + nw ? gu[lm + j - e0] : 0);
    CHECK(fabs(lu - lt) <= 1e-14 * fabs(lu), "tied loss %.17g vs untied %.17g", lt, lu);
    CHECK(rel_max_diff(Pt, gt, ge) <= 1e-12, "tied gradient vs J^T g: %.3g", rel_max_diff(Pt, gt, ge));
    double *Hu = hessian_panels(u, 64), *Ht = hessian_panels(t, 64), *He = xmalloc(Pt * Pt * sizeof(double));
    for (size_t i = 0; i < Pt; i++)
        for (size_t j = 0; j < Pt; j++) {
            int wi = i >= e0 && i < e0 + nw, wj = j >= e0 && j < e0 + nw;
            size_t li = lm + i - e0, lj = lm + j - e0;
            He[i * Pt + j] = Hu[i * Pu + j] + (wi ? Hu[li * Pu + j] : 0) + (wj ? Hu[i * Pu + lj] : 0) +
                             (wi && wj ? Hu[li * Pu + lj] : 0);
        }
    CHECK(rel_max_diff(Pt * Pt, Ht, He) <= 1e-12, "tied H vs J^T H J: %.3g", rel_max_diff(Pt * Pt, Ht, He));
    free(gu), free(gt), free(ge), free(Hu), free(Ht), free(He);
    model_free(u);
    model_free(t);
}

/* ---- Hugging Face layout ---------------------------------------------------------------------- */

/* m's parameters as a parsed safetensors file with Hugging Face's names (no lm_head when tied). */
static st_file *as_st(const model *m)
{
    st_file *f = xcalloc(1, sizeof(st_file));
    f->t = xcalloc((size_t)m->ntensors + 2, sizeof(st_tensor));
    for (int i = 0; i < m->ntensors; i++) {
        const tensor_info *ti = &m->tensors[i];
        st_tensor *x = &f->t[f->ntensors++];
        x->name = xstrdup(ti->name);
        x->ndim = ti->cols > 1 ? 2 : 1;
        x->shape[0] = ti->rows, x->shape[1] = ti->cols;
        x->n = tensor_size(ti);
        x->data = xmalloc(x->n * sizeof(double));
        memcpy(x->data, m->params + ti->offset, x->n * sizeof(double));
    }
    return f;
}

static st_tensor *st_get(st_file *f, const char *name)
{
    for (int i = 0; i < f->ntensors; i++)
        if (!strcmp(f->t[i].name, name)) return &f->t[i];
    return NULL;
}

/* Appends a tensor of shape (a) or (a, b) filled with val. */
static void st_add(st_file *f, const char *name, int ndim, size_t a, size_t b, double val)
{
    st_tensor *x = &f->t[f->ntensors++];
    x->name = xstrdup(name);
    x->ndim = ndim;
    x->shape[0] = a, x->shape[1] = b;
    x->n = ndim == 2 ? a * b : a;
    x->data = xmalloc(x->n * sizeof(double));
    for (size_t i = 0; i < x->n; i++) x->data[i] = val;
}

/* A config.json for c with `extra` ("" or `, "key": value`) appended. */
static void cfg_json(char *buf, size_t n, const llama_config *c, const char *extra)
{
    snprintf(buf, n,
             "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", \"vocab_size\": %d, "
             "\"hidden_size\": %d, \"intermediate_size\": %d, \"num_hidden_layers\": %d, \"num_attention_heads\": %d, "
             "\"num_key_value_heads\": %d, \"rms_norm_eps\": %.17g, \"rope_theta\": %.17g, "
             "\"max_position_embeddings\": %d, \"tie_word_embeddings\": %s, \"hidden_act\": \"silu\", "
             "\"attention_bias\": false, \"mlp_bias\": false, \"rope_scaling\": null, \"attention_dropout\": 0.0, "
             "\"bos_token_id\": 1, \"eos_token_id\": 2, \"torch_dtype\": \"bfloat16\", \"use_cache\": true, "
             "\"pretraining_tp\": 1, \"initializer_range\": 0.02, \"transformers_version\": \"4.40.0\"%s}",
             c->V, c->C, c->M, c->layers, c->heads, c->kv_heads, c->eps, c->theta, c->T, c->tied ? "true" : "false",
             extra);
}

static int same_model(const model *a, const model *b)
{
    const llama_config *x = llama_config_of(a), *y = llama_config_of(b);
    return a->P == b->P && !memcmp(a->params, b->params, a->P * sizeof(double)) && x->V == y->V && x->C == y->C &&
           x->layers == y->layers && x->heads == y->heads && x->kv_heads == y->kv_heads &&
           x->head_dim == y->head_dim && x->M == y->M && x->T == y->T && x->eps == y->eps && x->theta == y->theta &&
           x->tied == y->tied;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    *len = (size_t)ftell(fp);
    rewind(fp);
    char *b = xmalloc(*len + 1);
    *len = fread(b, 1, *len, fp);
    fclose(fp);
    return b;
}

static int same_file(const char *a, const char *b)
{
    size_t na, nb;
    char *x = slurp(a, &na), *y = slurp(b, &nb);
    int same = x && y && na == nb && !memcmp(x, y, na);
    free(x), free(y);
    return same;
}

/* Written and read back: the same model; written again: the same bytes; F32: the values rounded. */
static void test_hf_round_trip(void)
{
    char dir[] = "/tmp/test_llama_XXXXXX";
    if (!mkdtemp(dir)) DIE("mkdtemp");
    for (int tied = 0; tied <= 1; tied++) {
        model *m = small_llama(2, 4, 2, tied, 5, 1, 61 + tied);
        char a[64], b[64], st[96], sb[96], ca[96], cb[96];
        snprintf(a, sizeof a, "%s/a%d", dir, tied), snprintf(b, sizeof b, "%s/b%d", dir, tied);
        llama_save_hf(m, a, 0);
        model *r = llama_load_hf(a, NULL, 0);
        CHECK(same_model(m, r), "tied %d: read back is not the model written", tied);
        llama_save_hf(r, b, 0);
        snprintf(st, sizeof st, "%s/model.safetensors", a), snprintf(sb, sizeof sb, "%s/model.safetensors", b);
        snprintf(ca, sizeof ca, "%s/config.json", a), snprintf(cb, sizeof cb, "%s/config.json", b);
        CHECK(same_file(st, sb) && same_file(ca, cb), "tied %d: written again, not the same bytes", tied);
        st_file *f = st_read(st);
        CHECK((st_find(f, "lm_head.weight") == NULL) == tied && f->ntensors == m->ntensors,
              "tied %d: lm_head.weight written exactly when untied (%d tensors)", tied, f->ntensors);
        st_free(f);
        model *r2 = llama_load_hf(st, ca, 3); /* file + config, another T */
        CHECK(llama_config_of(r2)->T == 3 && !memcmp(r2->params, m->params, m->P * sizeof(double)),
              "file with --model-config and T 3");
        llama_save_hf(m, b, 1);
        model *r3 = llama_load_hf(b, NULL, 0);
        int rounded = 1;
        for (size_t i = 0; i < m->P; i++) rounded &= r3->params[i] == (double)(float)m->params[i];
        CHECK(rounded, "tied %d: F32 checkpoint holds the values rounded to float", tied);
        model_free(m), model_free(r), model_free(r2), model_free(r3);
    }
    remove_tree(dir);
}

/* One config.json key or one tensor the toolkit does not model: a user error naming it. */
static void test_hf_hostile(void)
{
    model *m = small_llama(1, 4, 2, 0, 6, 1, 71);
    llama_config c = *llama_config_of(m);
    char json[4096];
    st_file *f = as_st(m);
    cfg_json(json, sizeof json, &c, "");
    model *r = llama_from_hf(f, json, 0, "x");
    CHECK(same_model(m, r), "the in-memory checkpoint reads back as the model");
    model_free(r);
    static const char *const bad[][2] = {
        {", \"rope_scaling\": {\"type\": \"linear\", \"factor\": 2.0}", "rope_scaling"},
        {", \"attention_bias\": true", "attention_bias = true"},
        {", \"mlp_bias\": true", "mlp_bias = true"},
        {", \"sliding_window\": 4096", "sliding_window = 4096"},
        {", \"hidden_act\": \"gelu\"", "hidden_act = \"gelu\""},
        {", \"model_type\": \"mistral\"", "model_type = \"mistral\""},
        {", \"architectures\": [\"LlamaForSequenceClassification\"]", "LlamaForSequenceClassification"},
        {", \"attention_dropout\": 0.1", "attention_dropout = 0.1"},
        {", \"partial_rotary_factor\": 0.5", "config key 'partial_rotary_factor' is not one the toolkit knows"},
        {", \"rope_parameters\": {\"rope_type\": \"yarn\", \"factor\": 4}", "rope_parameters.rope_type"},
        {", \"hidden_size\": 12", "config hidden_size = 12 but the tensors give 8"},
        {", \"num_hidden_layers\": 2", "config num_hidden_layers = 2 but the tensors give 1"},
        {", \"num_key_value_heads\": 3", "num_key_value_heads = 3 does not divide"},
        {", \"head_dim\": 3", "beyond the toolkit's model"},
        {", \"rms_norm_eps\": -1", "rms_norm_eps must be a finite number > 0"},
        {", \"max_position_embeddings\": 4", "context length 6 beyond max_position_embeddings = 4"},
        {", \"tie_word_embeddings\": true", "tie_word_embeddings is true but lm_head.weight differs"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cfg_json(json, sizeof json, &c, bad[i][0]); /* a later duplicate key overrides (cJSON reads both) */
        if (strstr(bad[i][0], "max_position")) {
            EXPECT_USER_ERROR(llama_from_hf(f, json, 6, "x"), bad[i][1]);
        } else
            EXPECT_USER_ERROR(llama_from_hf(f, json, 0, "x"), bad[i][1]);
    }
    EXPECT_USER_ERROR(llama_from_hf(f, "{\"hidden_size\": 8}", 0, "x"), "num_attention_heads is not in the config");
    EXPECT_USER_ERROR(llama_from_hf(f, "[1, 2]", 0, "x"), "not a JSON object");
    cfg_json(json, sizeof json, &c, "");
    /* tensors: a bias, an unknown name, a wrong shape, a missing one, lm_head missing in an untied model */
    st_add(f, "model.layers.0.self_attn.q_proj.bias", 1, 8, 0, 0);
    EXPECT_USER_ERROR(llama_from_hf(f, json, 0, "x"), "a bias (attention_bias or mlp_bias)");
    free(f->t[--f->ntensors].name), free(f->t[f->ntensors].data);
    st_add(f, "model.layers.0.self_attn.rotary_emb.inv_freq", 1, 1, 0, 0.5);
    EXPECT_USER_ERROR(llama_from_hf(f, json, 0, "x"), "not rope_theta^(-2i/head_dim)");
    st_get(f, "model.layers.0.self_attn.rotary_emb.inv_freq")->data[0] = 1; /* hd 2: one entry θ^0 = 1 */
    r = llama_from_hf(f, json, 0, "x");
    CHECK(same_model(m, r), "a correct rotary buffer is accepted and not a parameter");
    model_free(r);
    free(f->t[--f->ntensors].name), free(f->t[f->ntensors].data);
    st_tensor *volatile x = st_get(f, "model.norm.weight");
    x->name[6] = 'X';
    EXPECT_USER_ERROR(llama_from_hf(f, json, 0, "x"), "unknown tensor name model.Xorm.weight");
    x->name[6] = 'n';
    x = st_get(f, "model.layers.0.mlp.down_proj.weight");
    x->shape[0] = 12, x->shape[1] = 8;
    EXPECT_USER_ERROR(llama_from_hf(f, json, 0, "x"), "model.layers.0.mlp.down_proj.weight: shape must be [8, 12]");
    x->shape[0] = 8, x->shape[1] = 12;
    x = st_get(f, "model.layers.0.mlp.up_proj.weight");
    memcpy(x->name + strlen(x->name) - 6, "weighT", 6);
    EXPECT_USER_ERROR(llama_from_hf(f, json, 0, "x"), "unknown tensor name model.layers.0.mlp.up_proj.weighT");
    memcpy(x->name + strlen(x->name) - 6, "weight", 6);
    x = st_get(f, "lm_head.weight");
    x->name[0] = 'L';
    EXPECT_USER_ERROR(llama_from_hf(f, json, 0, "x"), "unknown tensor name Lm_head.weight");
    f->ntensors--; /* lm_head (last) dropped: an untied model without its head */
    EXPECT_USER_ERROR(llama_from_hf(f, json, 0, "x"), "lm_head.weight is missing and tie_word_embeddings is not true");
    c.tied = 1; /* the same file read as tied: the embedding is the head */
    cfg_json(json, sizeof json, &c, "");
    r = llama_from_hf(f, json, 0, "x");
    CHECK(llama_config_of(r)->tied == 1 && r->P + 5 * 8 == m->P, "no lm_head + tie_word_embeddings: a tied model");
    model_free(r);
    f->ntensors++;
    x->name[0] = 'l';
    st_free(f);
    model_free(m);
}

/* ---- Algorithm 3 on Llama names against the official Adam-mini -------------------------------------
 * The official optimizer's partition, transcribed from zyushun/Adam-mini,
 * adam_mini/adam_mini.py, class Adam_mini (version 1.1.1): the name sets of
 * __init__ and the branches of step(). For each parameter of
 * model.named_parameters() (a tied head is not among them), its name
 * lowercased, the first branch whose substring test matches:
 *   "bias"                                          -> plain Adam (one block per entry)
 *   k_proj q_proj wq wk query key                   -> grad.view(-1, head_numel), head_numel = dim·dim/n_heads
 *   embed embd wte | lm_head output final_layer | v_proj wv value | feed_forward linear mlp | o_proj wo attn.proj
 *                                                   -> one block per row (the grad's dim 0)
 *   anything else (the norms)                       -> one block */
static int name_has(const char *lower, const char *const *keys, int n)
{
    for (int i = 0; i < n; i++)
        if (strstr(lower, keys[i])) return 1;
    return 0;
}

static partition *official_partition(const model *m, size_t dim, size_t n_heads)
{
    static const char *const wqk[] = {"k_proj", "q_proj", "wq", "wk", "query", "key"};
    static const char *const by_row[] = {"embed", "embd", "wte", "lm_head", "output", "final_layer", "v_proj", "wv",
                                         "value", "feed_forward", "linear", "mlp", "o_proj", "wo", "attn.proj"};
    partition *p = partition_new();
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        char lower[48];
        for (size_t i = 0; i < sizeof lower; i++) lower[i] = (char)tolower((unsigned char)ti->name[i]);
        size_t n = tensor_size(ti), head_numel = dim * dim / n_heads, per;
        if (strstr(lower, "bias")) per = 1;
        else if (name_has(lower, wqk, 6)) per = head_numel;
        else if (name_has(lower, by_row, 15)) per = (size_t)ti->cols;
        else per = n;
        for (size_t b = 0; b < n; b += per) partition_add(p, ti->offset + b, per, 1, t, ti->name);
    }
    return p;
}

static void test_official_partition(void)
{
    /* heads, kv heads, tied, layers */
    static const int shapes[][4] = {{4, 4, 0, 2}, {4, 2, 1, 2}, {8, 2, 0, 1}, {4, 1, 1, 3}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        llama_config c = {.V = 7, .C = 16, .layers = shapes[s][3], .heads = shapes[s][0], .kv_heads = shapes[s][1],
                          .M = 24, .T = 4, .eps = 1e-6, .theta = 1e4, .tied = shapes[s][2], .seed = 1};
        model *m = llama_new(&c);
        partition *a = partition_alg3(m, 0), *o = official_partition(m, c.C, c.heads);
        int same = a->nblocks == o->nblocks;
        for (int b = 0; same && b < a->nblocks; b++)
            same = a->b[b].start == o->b[b].start && a->b[b].n == o->b[b].n && a->b[b].stride == o->b[b].stride;
        CHECK(same, "%d heads, %d kv heads, tied %d: Algorithm 3 (%d blocks) is not the official Adam-mini's "
              "partition (%d blocks)", c.heads, c.kv_heads, c.tied, a->nblocks, o->nblocks);
        /* what the two agree on, counted: q by its heads, k by its kv heads, v/o/gate/up/down/embed/head by rows,
         * each norm one block */
        int hd = c.C / c.heads, layer = 2 + c.heads + c.kv_heads + c.kv_heads * hd + 16 + 2 * 24 + 16;
        int nb = c.V + (c.tied ? 0 : c.V) + 1 + c.layers * layer;
        CHECK(a->nblocks == nb, "Algorithm 3 on Llama: %d blocks, expected %d", a->nblocks, nb);
        partition_check_cover(a, m->P, "Algorithm 3 on Llama");
        partition *w = partition_alg3(m, 1); /* value whole: the comparison can fail */
        CHECK(w->nblocks != o->nblocks, "value as one block must differ from the official partition");
        partition_free(a), partition_free(o), partition_free(w);
        model_free(m);
    }
}

static void test_user_errors(void)
{
    llama_config c = llama_defaults();
    c.kv_heads = 3;
    EXPECT_USER_ERROR(llama_new(&c), "kv heads must be >= 1 and divide heads = 4");
    c = llama_defaults();
    c.heads = c.kv_heads = 3;
    EXPECT_USER_ERROR(llama_new(&c), "heads = 3 must divide the hidden size C = 16");
    c = llama_defaults();
    c.head_dim = 5;
    EXPECT_USER_ERROR(llama_new(&c), "head size must be even");
    c = llama_defaults();
    c.eps = 0;
    EXPECT_USER_ERROR(llama_new(&c), "RMSNorm eps");
    c = llama_defaults();
    c.theta = NAN;
    EXPECT_USER_ERROR(llama_new(&c), "rope theta");
    c = llama_defaults();
    model *m = llama_new(&c);
    int tok[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    EXPECT_USER_ERROR(llama_set_batch(m, tok, 1), "token 8 at position 8 is outside the vocabulary 0..7");
    EXPECT_USER_ERROR(m->loss(m), "no batch set");
    model_free(m);
}

int main(void)
{
    core_quiet = 1; /* the engine's progress lines */
    gsl_rng *r = rng_new(2024);
    test_rmsnorm(r);
    test_swiglu(r);
    test_rope(r);
    test_repeat_kv(r);
    test_linear_rparam(r);
    rng_free(r);
    test_table();
    for (int tied = 0; tied <= 1; tied++) {
        check_fd(1, 2, 2, tied); /* MHA */
        check_fd(2, 4, 2, tied); /* GQA */
        check_fd(1, 4, 1, tied); /* one kv head */
    }
    test_symmetry_threads();
    test_gauss_newton();
    test_gqa_is_repeated_mha();
    test_tied_is_summed_untied();
    test_hf_round_trip();
    test_hf_hostile();
    test_official_partition();
    test_user_errors();
    return check_summary();
}
