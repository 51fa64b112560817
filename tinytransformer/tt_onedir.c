/* The R-pass kernels for one direction at a time (what hvp runs on dense
 * directions; the unit directions of hess_cols run the panel kernels of
 * tt_dirminor.c). The formulas are those of the naive references in
 * tt_kernels.c, k = 1.
 *
 * Layout: an R-quantity of feature width C over a chunk of N tokens is (C,N):
 * feature c, token n at [c*ld + n] (ld >= N; the R-pass uses tt_dm_ld(N, 1)),
 * the direction-minor layout of tt_dirminor.c with k = 1. The loops run over
 * the N contiguous tokens, which GCC vectorises, with the base quantities that
 * vary by token read from feature-major copies (C,·) of the base pass (row
 * stride ldb, from the chunk's first token on: "T" in their names); the linear
 * layers and attention are dgemms on the token-major base arrays (N,C) as they
 * are. R-parameters and R-gradients are a tensor's entries in their natural
 * layout (a row of V, a row of HV); NULL R-parameters are zero, NULL outputs
 * not wanted.
 */
#include "tt_kernels.h"
#include <cblas.h>
#include <math.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define HOT __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define HOT
#endif

/* Σ_n x[n] */
static double sum(const double *x, int N)
{
    double s = 0;
    for (int n = 0; n < N; n++) s += x[n];
    return s;
}

/* ---- linear: out = inp Wᵀ + b ----------------------------------------------------------------- */

/* R{out} (+)= W R{inp} + R{W} inpᵀ + R{b} 1ᵀ. */
void tt_od_linear_rop(double *Rout /*(OC,N)*/, int acc, const double *Rinp /*(IC,N) or NULL*/, const double *inp /*(N,IC)*/,
                      const double *W /*(OC,IC)*/, const double *RW, const double *Rb, size_t ld, int N, int IC, int OC)
{
    if (Rinp) tt_dgemm(0, 0, OC, N, IC, 1.0, W, IC, Rinp, (int)ld, acc ? 1.0 : 0.0, Rout, (int)ld);
    else if (!acc)
        for (int o = 0; o < OC; o++) memset(Rout + o * ld, 0, (size_t)N * sizeof(double));
    if (RW) tt_dgemm(0, 1, OC, N, IC, 1.0, RW, IC, inp, IC, 1.0, Rout, (int)ld);
    if (Rb)
        for (int o = 0; o < OC; o++)
            for (int n = 0; n < N; n++) Rout[o * ld + n] += Rb[o];
}

/* R of dinp = dout W, dW = doutᵀ inp, db = Σ dout:
 *   R{dinp} (+)= Wᵀ R{dout} + R{W}ᵀ doutᵀ          (Rdinp NULL: not wanted)
 *   gW += R{dout} inp + doutᵀ R{inp}ᵀ;  gb += R{dout} 1   (NULL: not wanted) */
void tt_od_linear_rop_backward(double *Rdinp /*(IC,N)*/, int acc, double *gW /*(OC,IC)*/, double *gb /*(OC)*/,
                               const double *Rdout /*(OC,N)*/, const double *dout /*(N,OC)*/,
                               const double *inp /*(N,IC)*/, const double *Rinp /*(IC,N) or NULL*/,
                               const double *W /*(OC,IC)*/, const double *RW, size_t ld, int N, int IC, int OC)
{
    if (Rdinp) {
        tt_dgemm(1, 0, IC, N, OC, 1.0, W, IC, Rdout, (int)ld, acc ? 1.0 : 0.0, Rdinp, (int)ld);
        if (RW) tt_dgemm(1, 1, IC, N, OC, 1.0, RW, IC, dout, OC, 1.0, Rdinp, (int)ld);
    }
    if (gW) {
        tt_dgemm(0, 0, OC, IC, N, 1.0, Rdout, (int)ld, inp, IC, 1.0, gW, IC);
        if (Rinp) tt_dgemm(1, 1, OC, IC, N, 1.0, dout, OC, Rinp, (int)ld, 1.0, gW, IC);
    }
    if (gb)
        for (int o = 0; o < OC; o++) gb[o] += sum(Rdout + o * ld, N);
}

/* ---- LayerNorm: y = g ⊙ x̂ + b, x̂ = (x − μ) r ---------------------------------------------------
 * R{x̂} = r (R{x} − mean R{x} − x̂ mean(x̂ ⊙ R{x})), R{r} = −r² mean(x̂ ⊙ R{x}),
 * R{y} = g ⊙ R{x̂} + R{g} ⊙ x̂ + R{b}. Rinp NULL (zero): Rxh and Rr are not
 * written (they are zero), only the parameter terms. */
HOT void tt_od_layernorm_rop(double *restrict Rout /*(C,N)*/, double *restrict Rxh /*(C,N)*/, double *restrict Rr /*(N)*/,
                             const double *Rinp /*(C,N) or NULL*/, const double *xhT /*(C,·) ldb*/,
                             const double *rstd /*(N)*/, const double *g, const double *Rg, const double *Rb,
                             size_t ld, size_t ldb, int N, int C)
{
    double *m1 = xcalloc(2 * (size_t)N, sizeof(double)), *m2 = m1 + N;
    if (Rinp) {
        for (int c = 0; c < C; c++) {
            const double *restrict x = Rinp + c * ld, *restrict h = xhT + c * ldb;
            for (int n = 0; n < N; n++) {
                m1[n] += x[n];
                m2[n] += h[n] * x[n];
            }
        }
        for (int n = 0; n < N; n++) {
            m1[n] /= C;
            m2[n] /= C;
            Rr[n] = -rstd[n] * rstd[n] * m2[n];
        }
    }
    for (int c = 0; c < C; c++) {
        const double *restrict h = xhT + c * ldb;
        double *restrict o = Rout + c * ld, gc = g[c], rg = Rg ? Rg[c] : 0, rb = Rb ? Rb[c] : 0;
        if (Rinp) {
            const double *restrict x = Rinp + c * ld;
            double *restrict rh = Rxh + c * ld;
            for (int n = 0; n < N; n++) {
                rh[n] = rstd[n] * (x[n] - m1[n] - h[n] * m2[n]);
                o[n] = gc * rh[n] + rg * h[n] + rb;
            }
        } else {
            for (int n = 0; n < N; n++) o[n] = rg * h[n] + rb;
        }
    }
    free(m1);
}

/* With dx̂ = dy ⊙ g, a = mean dx̂, cc = mean(dx̂ ⊙ x̂), dx = r (dx̂ − a − x̂ cc):
 *   R{dx̂} = R{dy} ⊙ g + dy ⊙ R{g}
 *   R{dx} (+)= R{r} (dx̂ − a − x̂ cc) + r (R{dx̂} − R{a} − R{x̂} cc − x̂ R{cc}),
 *   R{a} = mean R{dx̂},  R{cc} = mean(R{dx̂} ⊙ x̂ + dx̂ ⊙ R{x̂})
 *   gg += Σ_n R{dy} ⊙ x̂ + dy ⊙ R{x̂};  gb += Σ_n R{dy}.
 * Rxh, Rr NULL: zero (the input was not perturbed). Any output may be NULL. */
HOT void tt_od_layernorm_rop_backward(double *restrict Rdinp /*(C,N)*/, int acc, double *gg, double *gb,
                                      const double *Rdout /*(C,N)*/, const double *doutT /*(C,·) ldb*/,
                                      const double *xhT /*(C,·) ldb*/, const double *rstd /*(N)*/,
                                      const double *Rxh /*(C,N) or NULL*/, const double *Rr /*(N) or NULL*/,
                                      const double *g, const double *Rg, size_t ld, size_t ldb, int N, int C)
{
    for (int c = 0; c < C; c++) {
        if (gg) gg[c] += cblas_ddot(N, Rdout + c * ld, 1, xhT + c * ldb, 1) +
                         (Rxh ? cblas_ddot(N, doutT + c * ldb, 1, Rxh + c * ld, 1) : 0);
        if (gb) gb[c] += sum(Rdout + c * ld, N);
    }
    if (!Rdinp) return;
    /* per token: a, cc (base) and R{a}, R{cc} */
    double *a = xcalloc(4 * (size_t)N, sizeof(double)), *cc = a + N, *ra = cc + N, *rc = ra + N;
    for (int c = 0; c < C; c++) {
        const double *restrict dy = doutT + c * ldb, *restrict h = xhT + c * ldb, *restrict rdy = Rdout + c * ld;
        const double *restrict rh = Rxh ? Rxh + c * ld : NULL;
        double gc = g[c], rg = Rg ? Rg[c] : 0;
        for (int n = 0; n < N; n++) {
            double dxh = dy[n] * gc, q = rdy[n] * gc + dy[n] * rg;
            a[n] += dxh;
            cc[n] += dxh * h[n];
            ra[n] += q;
            rc[n] += h[n] * q;
        }
        if (rh)
            for (int n = 0; n < N; n++) rc[n] += dy[n] * gc * rh[n];
    }
    for (int n = 0; n < 4 * N; n++) a[n] /= C;
    for (int c = 0; c < C; c++) {
        const double *restrict dy = doutT + c * ldb, *restrict h = xhT + c * ldb, *restrict rdy = Rdout + c * ld;
        double *restrict o = Rdinp + c * ld, gc = g[c], rg = Rg ? Rg[c] : 0;
        for (int n = 0; n < N; n++) {
            double q = rdy[n] * gc + dy[n] * rg, v = rstd[n] * (q - ra[n] - h[n] * rc[n]);
            o[n] = acc ? o[n] + v : v;
        }
        if (Rxh) {
            const double *restrict rh = Rxh + c * ld;
            for (int n = 0; n < N; n++) o[n] += (dy[n] * gc - a[n] - h[n] * cc[n]) * Rr[n] - rstd[n] * cc[n] * rh[n];
        }
    }
    free(a);
}

/* ---- causal attention, one sequence and head at a time, as matrix products -------------------------
 * With the head's T×hs blocks Q, K, V, dY (token-major base) and R{Q}, R{K},
 * R{V}, R{dY} (hs×T blocks of the feature-major R-quantities: their
 * transposes), the T×T base softmax P and dpc (zero above the diagonal),
 * s = 1/√hs (tt_kernels.c has the formulas entry by entry):
 *   R{S} = s (R{Q} Kᵀ + Q R{K}ᵀ),  R{P} = P ⊙ (R{S} − rowsum(P ⊙ R{S})),
 *   R{Y} = R{P} V + P R{V}.
 * R{Y} is written transposed (hs×T) into the feature-major Ry, so each product
 * is one dgemm of the blocks as they lie. */

/* The head's token-major base block (T×hs, row stride C) and R block (hs×T, row stride ld). */
#define BASE(x) ((x) + (size_t)b * T * C + c0)
#define RBLK(x) ((x) + (size_t)c0 * ld + (size_t)b * T)

HOT void tt_od_attention_rop(double *Ry /*(C,N)*/, double *Ratt /*(B,H,T,T), NULL if Rq, Rkey are*/,
                             const double *Rq, const double *Rkey, const double *Rv /*(C,N) or NULL each*/,
                             const double *q, const double *key, const double *v /*(N,C)*/,
                             const double *att /*(B,H,T,T)*/, size_t ld, int B, int T, int C, int H)
{
    int hs = C / H;
    double s = 1.0 / sqrt(hs);
    size_t TT = (size_t)T * T;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            int c0 = h * hs;
            const double *P = att + ((size_t)b * H + h) * TT;
            double *RP = Ratt ? Ratt + ((size_t)b * H + h) * TT : NULL, *RY = RBLK(Ry);
            if (RP) {
                double beta = 0;
                if (Rq) tt_dgemm(1, 1, T, T, hs, s, RBLK(Rq), (int)ld, BASE(key), C, 0.0, RP, T), beta = 1;
                if (Rkey) tt_dgemm(0, 0, T, T, hs, s, BASE(q), C, RBLK(Rkey), (int)ld, beta, RP, T);
                for (int t = 0; t < T; t++) {
                    double *rs = RP + (size_t)t * T, m = 0;
                    const double *p = P + (size_t)t * T;
                    for (int u = 0; u <= t; u++) m += p[u] * rs[u];
                    for (int u = 0; u < T; u++) rs[u] = u <= t ? p[u] * (rs[u] - m) : 0;
                }
                tt_dgemm(1, 1, hs, T, T, 1.0, BASE(v), C, RP, T, 0.0, RY, (int)ld);
            }
            if (Rv) tt_dgemm(0, 1, hs, T, T, 1.0, RBLK(Rv), (int)ld, P, T, RP ? 1.0 : 0.0, RY, (int)ld);
            if (!RP && !Rv)
                for (int i = 0; i < hs; i++) memset(RY + i * ld, 0, (size_t)T * sizeof(double));
        }
}

/* R of the backward, with dP = dY Vᵀ, dS = s P ⊙ dpc:
 *   R{dP} = R{dY} Vᵀ + dY R{V}ᵀ,  R{ρ} = rowsum(R{P} ⊙ dP + P ⊙ R{dP}),
 *   R{dS} = s (R{P} ⊙ dpc + P ⊙ (R{dP} − R{ρ})),
 *   R{dQ} = R{dS} K + dS R{K},  R{dK} = R{dS}ᵀ Q + dSᵀ R{Q},  R{dV} = R{P}ᵀ dY + Pᵀ R{dY}.
 * Rdq, Rdkey, Rdv are overwritten (NULL: not wanted); Rq, Rkey, Rv, Ratt NULL: zero. */
HOT void tt_od_attention_rop_backward(double *Rdq, double *Rdkey, double *Rdv /*(C,N)*/, const double *Rdy /*(C,N)*/,
                                      const double *dy /*(N,C)*/, const double *q, const double *key, const double *v,
                                      const double *att, const double *dpc /*(B,H,T,T)*/, const double *Rq,
                                      const double *Rkey, const double *Rv, const double *Ratt, size_t ld, int B,
                                      int T, int C, int H)
{
    int hs = C / H;
    double s = 1.0 / sqrt(hs);
    size_t TT = (size_t)T * T;
    double *dP = xmalloc(3 * TT * sizeof(double)), *dS = dP + TT, *RdS = dS + TT;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            int c0 = h * hs;
            const double *P = att + ((size_t)b * H + h) * TT, *D = dpc + ((size_t)b * H + h) * TT;
            const double *RP = Ratt ? Ratt + ((size_t)b * H + h) * TT : NULL;
            if (Rdq || Rdkey) {
                tt_dgemm(0, 1, T, T, hs, 1.0, BASE(dy), C, BASE(v), C, 0.0, dP, T);
                tt_dgemm(1, 1, T, T, hs, 1.0, RBLK(Rdy), (int)ld, BASE(v), C, 0.0, RdS, T); /* R{dP} first */
                if (Rv) tt_dgemm(0, 0, T, T, hs, 1.0, BASE(dy), C, RBLK(Rv), (int)ld, 1.0, RdS, T);
                for (int t = 0; t < T; t++) {
                    const double *p = P + (size_t)t * T, *d = D + (size_t)t * T, *dp = dP + (size_t)t * T;
                    const double *rp = RP ? RP + (size_t)t * T : NULL;
                    double *r = RdS + (size_t)t * T, *ds = dS + (size_t)t * T, rrho = 0;
                    for (int u = 0; u <= t; u++) rrho += (rp ? rp[u] * dp[u] : 0) + p[u] * r[u];
                    for (int u = 0; u < T; u++) {
                        ds[u] = u <= t ? s * p[u] * d[u] : 0;
                        r[u] = u <= t ? s * ((rp ? rp[u] * d[u] : 0) + p[u] * (r[u] - rrho)) : 0;
                    }
                }
            }
            if (Rdq) {
                tt_dgemm(1, 1, hs, T, T, 1.0, BASE(key), C, RdS, T, 0.0, RBLK(Rdq), (int)ld);
                if (Rkey) tt_dgemm(0, 1, hs, T, T, 1.0, RBLK(Rkey), (int)ld, dS, T, 1.0, RBLK(Rdq), (int)ld);
            }
            if (Rdkey) {
                tt_dgemm(1, 0, hs, T, T, 1.0, BASE(q), C, RdS, T, 0.0, RBLK(Rdkey), (int)ld);
                if (Rq) tt_dgemm(0, 0, hs, T, T, 1.0, RBLK(Rq), (int)ld, dS, T, 1.0, RBLK(Rdkey), (int)ld);
            }
            if (Rdv) {
                tt_dgemm(0, 0, hs, T, T, 1.0, RBLK(Rdy), (int)ld, P, T, 0.0, RBLK(Rdv), (int)ld);
                if (RP) tt_dgemm(1, 0, hs, T, T, 1.0, BASE(dy), C, RP, T, 1.0, RBLK(Rdv), (int)ld);
            }
        }
    free(dP);
}
#undef BASE
#undef RBLK

/* ---- GELU: R{out} = G'(x) R{inp};  R{dinp} = G'(x) R{dout} + G''(x) dout R{inp} --------------------- */

HOT void tt_od_gelu_rop(double *restrict Rout /*(M,N)*/, const double *restrict Rinp /*(M,N)*/,
                        const double *g1T /*(M,·) ldb: G'(x)*/, size_t ld, size_t ldb, int N, int M)
{
    for (int m = 0; m < M; m++) {
        const double *restrict a = g1T + m * ldb, *restrict x = Rinp + m * ld;
        double *restrict o = Rout + m * ld;
        for (int n = 0; n < N; n++) o[n] = a[n] * x[n];
    }
}

/* g2dT = G''(x) ⊙ dout of the base backward. Rinp NULL: zero. Overwrites Rdinp. */
HOT void tt_od_gelu_rop_backward(double *restrict Rdinp /*(M,N)*/, const double *restrict Rdout /*(M,N)*/,
                                 const double *g1T, const double *g2dT /*(M,·) ldb*/, const double *Rinp /*or NULL*/,
                                 size_t ld, size_t ldb, int N, int M)
{
    for (int m = 0; m < M; m++) {
        const double *restrict a = g1T + m * ldb, *restrict b = g2dT + m * ldb, *restrict r = Rdout + m * ld;
        double *restrict o = Rdinp + m * ld;
        if (Rinp) {
            const double *restrict x = Rinp + m * ld;
            for (int n = 0; n < N; n++) o[n] = a[n] * r[n] + b[n] * x[n];
        } else {
            for (int n = 0; n < N; n++) o[n] = a[n] * r[n];
        }
    }
}

/* ---- embedding and cross-entropy ------------------------------------------------------------------ */

/* R{x}[c,n] = R{wte}[inp[n],c] + R{wpe}[n mod T,c] (either NULL: zero; overwritten). */
void tt_od_embed_rop(double *Rx /*(C,N)*/, const int *inp, const double *Rwte /*(V,C)*/, const double *Rwpe /*(T,C)*/,
                     size_t ld, int N, int T, int C)
{
    for (int c = 0; c < C; c++) {
        double *r = Rx + c * ld;
        for (int n = 0; n < N; n++)
            r[n] = (Rwte ? Rwte[(size_t)inp[n] * C + c] : 0) + (Rwpe ? Rwpe[(size_t)(n % T) * C + c] : 0);
    }
}

/* The embedding is linear in its parameters and its input is discrete, so
 * R{dwte} and R{dwpe} only route R{dx}. Either output may be NULL (not wanted). */
void tt_od_embed_rop_backward(double *gwte /*(V,C)*/, double *gwpe /*(T,C)*/, const double *Rdx /*(C,N)*/,
                              const int *inp, size_t ld, int N, int T, int C)
{
    for (int c = 0; c < C; c++) {
        const double *r = Rdx + c * ld;
        for (int n = 0; n < N; n++) {
            if (gwte) gwte[(size_t)inp[n] * C + c] += r[n];
            if (gwpe) gwpe[(size_t)(n % T) * C + c] += r[n];
        }
    }
}

/* R{dlogits} = scale p ⊙ (R{z} − Σ_v p R{z}) (the softmax Jacobian; onehot is constant). */
HOT void tt_od_crossentropy_rop(double *restrict Rdlogits /*(V,N)*/, const double *restrict Rlogits /*(V,N)*/,
                                const double *probsT /*(V,·) ldb*/, double scale, size_t ld, size_t ldb, int N, int V)
{
    double *mean = xcalloc((size_t)N, sizeof(double));
    for (int v = 0; v < V; v++) {
        const double *restrict p = probsT + v * ldb, *restrict rz = Rlogits + v * ld;
        for (int n = 0; n < N; n++) mean[n] += p[n] * rz[n];
    }
    for (int v = 0; v < V; v++) {
        const double *restrict p = probsT + v * ldb, *restrict rz = Rlogits + v * ld;
        double *restrict o = Rdlogits + v * ld;
        for (int n = 0; n < N; n++) o[n] = scale * p[n] * (rz[n] - mean[n]);
    }
    free(mean);
}
