/* The fast R-pass kernels: the same R-operator as tt_kernels.c, with the k
 * directions innermost ("direction-minor").
 *
 * Layout: an R-quantity of feature width C over a chunk of N tokens is (C,N,k):
 * feature c, token n, direction d at [(c*N + n)*k + d]. Every elementwise,
 * LayerNorm and attention loop then runs over the k contiguous directions with
 * the base quantities (which do not depend on the direction) broadcast, which
 * GCC vectorises whatever C and the head size are; a linear layer is W·R{X}
 * over all N·k columns (one dgemm). R-parameters and R-gradients are
 * direction-minor too: entry p of a tensor, direction d at [p*k + d], so the
 * parameter terms are dgemms or vector updates as well.
 *
 * Unit directions (Hessian columns) are passed as an index range instead of a
 * dense R{θ}: a direction e_j in W touches one output column of X·R{W}ᵀ, which
 * is a copy of one input column — no dgemm for a product that is mostly zeros.
 */
#include "tt.h"
#include <math.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define HOT __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define HOT
#endif

/* y += a x over the k directions. */
static inline void axpy(double *restrict y, double a, const double *restrict x, int k)
{
    for (int d = 0; d < k; d++) y[d] += a * x[d];
}

static inline void zero(double *x, int k) { memset(x, 0, (size_t)k * sizeof(double)); }

/* The unit directions of an R-parameter: direction d in d0..d1-1 is e_(e0 + d - d0). */
static inline long unit_index(const tt_rpar *r, int d) { return r->e0 + (d - r->d0); }

int tt_rpar_live(const tt_rpar *r) { return r->v != NULL || r->d1 > r->d0; }

/* ---- linear: out = inp Wᵀ + b ----------------------------------------------------------------- */

/* R{out} (+)= W R{inp} + inp R{W}ᵀ + R{b}. */
HOT void tt_fm_linear_rop(double *Rout /*(OC,N,k)*/, int acc, const double *Rinp /*(IC,N,k) or NULL*/,
                          const double *inp /*(N,IC)*/, const double *W /*(OC,IC)*/, tt_rpar rW, tt_rpar rb,
                          int N, int IC, int OC, int k)
{
    size_t RN = (size_t)N * k;
    if (Rinp)
        tt_dgemm(0, 0, OC, (int)RN, IC, 1.0, W, IC, Rinp, (int)RN, acc ? 1.0 : 0.0, Rout, (int)RN);
    else if (!acc)
        memset(Rout, 0, OC * RN * sizeof(double));
    if (rW.v) /* out row o: (N,k) += inp (N,IC) · R{W}[o,:,:] (IC,k) */
        for (int o = 0; o < OC; o++)
            tt_dgemm(0, 0, N, k, IC, 1.0, inp, IC, rW.v + (size_t)o * IC * k, k, 1.0,
                    Rout + o * RN, k);
    for (int d = rW.d0; d < rW.d1; d++) { /* e_(o,i): R{out}[o,n] += inp[n,i] */
        long e = unit_index(&rW, d);
        double *r = Rout + (e / IC) * RN + d;
        const double *x = inp + e % IC;
        for (int n = 0; n < N; n++) r[(size_t)n * k] += x[(size_t)n * IC];
    }
    if (rb.v)
        for (int o = 0; o < OC; o++)
            for (int n = 0; n < N; n++) {
                double *restrict r = Rout + o * RN + (size_t)n * k;
                const double *restrict b = rb.v + (size_t)o * k;
                for (int d = 0; d < k; d++) r[d] += b[d];
            }
    for (int d = rb.d0; d < rb.d1; d++) {
        double *r = Rout + unit_index(&rb, d) * RN + d;
        for (int n = 0; n < N; n++) r[(size_t)n * k] += 1;
    }
}

/* R of dinp = dout W, dW = doutᵀ inp, db = Σ dout:
 *   R{dinp} (+)= Wᵀ R{dout} + R{W}ᵀ dout   (Rdinp NULL: not wanted)
 *   gW[o,i] += Σ_n R{dout}[o,n] inp[n,i] + dout[n,o] R{inp}[i,n]   (gW NULL: not wanted)
 *   gb[o] += Σ_n R{dout}[o,n]. */
HOT void tt_fm_linear_rop_backward(double *Rdinp /*(IC,N,k)*/, int acc, double *gW /*(OC*IC,k)*/,
                                   double *gb /*(OC,k)*/, const double *Rdout /*(OC,N,k)*/,
                                   const double *dout /*(N,OC)*/, const double *inp /*(N,IC)*/,
                                   const double *Rinp /*(IC,N,k) or NULL*/, const double *W /*(OC,IC)*/,
                                   tt_rpar rW, int N, int IC, int OC, int k)
{
    size_t RN = (size_t)N * k;
    if (Rdinp) {
        tt_dgemm(1, 0, IC, (int)RN, OC, 1.0, W, IC, Rdout, (int)RN, acc ? 1.0 : 0.0, Rdinp,
                (int)RN);
        if (rW.v) /* R{dinp} row i: (N,k) += dout (N,OC) · R{W}[:,i,:] (OC,k) */
            for (int i = 0; i < IC; i++)
                tt_dgemm(0, 0, N, k, OC, 1.0, dout, OC, rW.v + (size_t)i * k, IC * k, 1.0,
                        Rdinp + i * RN, k);
        for (int d = rW.d0; d < rW.d1; d++) { /* e_(o,i): R{dinp}[i,n] += dout[n,o] */
            long e = unit_index(&rW, d);
            double *r = Rdinp + (e % IC) * RN + d;
            const double *g = dout + e / IC;
            for (int n = 0; n < N; n++) r[(size_t)n * k] += g[(size_t)n * OC];
        }
    }
    if (gW) {
        /* row o of R{dW}: (IC,k) += inpᵀ (IC,N) · R{dout}[o] (N,k) */
        for (int o = 0; o < OC; o++)
            tt_dgemm(1, 0, IC, k, N, 1.0, inp, IC, Rdout + o * RN, k, 1.0, gW + (size_t)o * IC * k,
                    k);
        /* column i of R{dW}: (OC,k) += doutᵀ (OC,N) · R{inp}[i] (N,k), rows IC·k apart */
        if (Rinp)
            for (int i = 0; i < IC; i++)
                tt_dgemm(1, 0, OC, k, N, 1.0, dout, OC, Rinp + i * RN, k, 1.0, gW + (size_t)i * k,
                        IC * k);
    }
    if (gb)
        for (int o = 0; o < OC; o++) {
            double *restrict g = gb + (size_t)o * k;
            for (int n = 0; n < N; n++) {
                const double *restrict r = Rdout + o * RN + (size_t)n * k;
                for (int d = 0; d < k; d++) g[d] += r[d];
            }
        }
}

/* ---- LayerNorm: y = g ⊙ x̂ + b, x̂ = (x − μ) r ---------------------------------------------------
 * R{x̂} = r (R{x} − mean R{x} − x̂ mean(x̂ ⊙ R{x})), R{r} = −r² mean(x̂ ⊙ R{x}),
 * R{y} = g ⊙ R{x̂} + R{g} ⊙ x̂ + R{b}. Rinp NULL (zero): Rxh and Rr are not
 * written (they are zero), only the parameter terms. */
HOT void tt_fm_layernorm_rop(double *Rout /*(C,N,k)*/, double *Rxh /*(C,N,k)*/, double *Rr /*(N,k)*/,
                             const double *Rinp /*(C,N,k) or NULL*/, const double *xh /*(N,C)*/,
                             const double *rstd /*(N)*/, const double *g /*(C)*/, tt_rpar rg, tt_rpar rb, int N,
                             int C, int k)
{
    size_t RN = (size_t)N * k;
    double *m1 = xmalloc(2 * (size_t)k * sizeof(double)), *m2 = m1 + k;
    for (int n = 0; n < N; n++) {
        const double *h = xh + (size_t)n * C;
        size_t nk = (size_t)n * k;
        if (Rinp) {
            double r = rstd[n];
            zero(m1, k), zero(m2, k);
            for (int c = 0; c < C; c++) {
                const double *restrict x = Rinp + c * RN + nk;
                double hc = h[c];
                for (int d = 0; d < k; d++) {
                    m1[d] += x[d];
                    m2[d] += hc * x[d];
                }
            }
            for (int d = 0; d < k; d++) {
                m1[d] /= C;
                m2[d] /= C;
                Rr[nk + d] = -r * r * m2[d];
            }
            for (int c = 0; c < C; c++) {
                const double *restrict x = Rinp + c * RN + nk;
                double *restrict rh = Rxh + c * RN + nk, *restrict o = Rout + c * RN + nk, hc = h[c], gc = g[c];
                for (int d = 0; d < k; d++) {
                    rh[d] = r * (x[d] - m1[d] - hc * m2[d]);
                    o[d] = gc * rh[d];
                }
            }
        } else {
            for (int c = 0; c < C; c++) zero(Rout + c * RN + nk, k);
        }
        for (int c = 0; c < C; c++) {
            double *o = Rout + c * RN + nk;
            if (rg.v) axpy(o, h[c], rg.v + (size_t)c * k, k);
            if (rb.v) axpy(o, 1.0, rb.v + (size_t)c * k, k);
        }
        for (int d = rg.d0; d < rg.d1; d++) {
            long c = unit_index(&rg, d);
            Rout[c * RN + nk + d] += h[c];
        }
        for (int d = rb.d0; d < rb.d1; d++) Rout[unit_index(&rb, d) * RN + nk + d] += 1;
    }
    free(m1);
}

/* With dx̂ = dy ⊙ g, a = mean dx̂, cc = mean(dx̂ ⊙ x̂), dx = r (dx̂ − a − x̂ cc):
 *   R{dx̂} = R{dy} ⊙ g + dy ⊙ R{g}
 *   R{dx} (+)= R{r} (dx̂ − a − x̂ cc) + r (R{dx̂} − R{a} − R{x̂} cc − x̂ R{cc}),
 *   R{a} = mean R{dx̂},  R{cc} = mean(R{dx̂} ⊙ x̂ + dx̂ ⊙ R{x̂})
 *   gg += Σ_n R{dy} ⊙ x̂ + dy ⊙ R{x̂};  gb += Σ_n R{dy}.
 * Rxh, Rr NULL: zero (the input was not perturbed). Any output may be NULL. */
HOT void tt_fm_layernorm_rop_backward(double *Rdinp /*(C,N,k)*/, int acc, double *gg /*(C,k)*/,
                                      double *gb /*(C,k)*/, const double *Rdout /*(C,N,k)*/,
                                      const double *dout /*(N,C)*/, const double *xh /*(N,C)*/,
                                      const double *rstd /*(N)*/, const double *Rxh /*(C,N,k) or NULL*/,
                                      const double *Rr /*(N,k) or NULL*/, const double *g /*(C)*/, tt_rpar rg,
                                      int N, int C, int k)
{
    size_t RN = (size_t)N * k;
    double *rdxh = xmalloc(((size_t)C + 2) * k * sizeof(double)), *ra = rdxh + (size_t)C * k, *rc = ra + k;
    double *dxh = xmalloc((size_t)C * sizeof(double));
    for (int n = 0; n < N; n++) {
        const double *dy = dout + (size_t)n * C, *h = xh + (size_t)n * C;
        size_t nk = (size_t)n * k;
        if (gg || gb)
            for (int c = 0; c < C; c++) {
                const double *restrict rdy = Rdout + c * RN + nk;
                if (gg) {
                    axpy(gg + (size_t)c * k, h[c], rdy, k);
                    if (Rxh) axpy(gg + (size_t)c * k, dy[c], Rxh + c * RN + nk, k);
                }
                if (gb) axpy(gb + (size_t)c * k, 1.0, rdy, k);
            }
        if (!Rdinp) continue;
        double r = rstd[n], a = 0, cc = 0;
        for (int c = 0; c < C; c++) {
            dxh[c] = dy[c] * g[c];
            a += dxh[c];
            cc += dxh[c] * h[c];
        }
        a /= C;
        cc /= C;
        zero(ra, k), zero(rc, k);
        for (int c = 0; c < C; c++) {
            const double *restrict rdy = Rdout + c * RN + nk;
            double *restrict q = rdxh + (size_t)c * k, gc = g[c], hc = h[c];
            for (int d = 0; d < k; d++) q[d] = gc * rdy[d];
            if (rg.v) axpy(q, dy[c], rg.v + (size_t)c * k, k);
            if (rg.d1 > rg.d0 && c >= rg.e0 && c - rg.e0 < rg.d1 - rg.d0) q[rg.d0 + (c - rg.e0)] += dy[c];
            for (int d = 0; d < k; d++) {
                ra[d] += q[d];
                rc[d] += hc * q[d];
            }
            if (Rxh) axpy(rc, dxh[c], Rxh + c * RN + nk, k);
        }
        for (int d = 0; d < k; d++) {
            ra[d] /= C;
            rc[d] /= C;
        }
        for (int c = 0; c < C; c++) {
            double *restrict o = Rdinp + c * RN + nk;
            const double *restrict q = rdxh + (size_t)c * k;
            double hc = h[c], base = dxh[c] - a - hc * cc;
            if (acc)
                for (int d = 0; d < k; d++) o[d] += r * (q[d] - ra[d] - hc * rc[d]);
            else
                for (int d = 0; d < k; d++) o[d] = r * (q[d] - ra[d] - hc * rc[d]);
            if (Rxh) {
                const double *restrict rh = Rxh + c * RN + nk, *restrict rr = Rr + nk;
                for (int d = 0; d < k; d++) o[d] += rr[d] * base - r * cc * rh[d];
            }
        }
    }
    free(rdxh);
    free(dxh);
}

/* ---- causal attention (see tt_kernels.c for the formulas) ----------------------------------------
 * Ratt (B,H,T,T,k) holds R{P}[t,u] of every direction, u <= t (the rest is not written). */
HOT void tt_fm_attention_rop(double *Ry /*(C,N,k)*/, double *Ratt /*(B,H,T,T,k), NULL if Rq, Rkey are*/,
                             const double *Rq, const double *Rkey, const double *Rv /*(C,N,k) or NULL each*/,
                             const double *q, const double *key, const double *v /*(N,C)*/,
                             const double *att /*(B,H,T,T)*/, int B, int T, int C, int H, int k)
{
    int hs = C / H;
    double s = 1.0 / sqrt(hs);
    size_t RN = (size_t)B * T * k;
    double *m = xmalloc((size_t)k * sizeof(double));
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            const double *P = att + ((size_t)b * H + h) * T * T;
            double *RA = Ratt ? Ratt + ((size_t)b * H + h) * T * T * k : NULL;
            int c0 = h * hs, c1 = c0 + hs;
            for (int t = 0; t < T; t++) {
                size_t bt = (size_t)b * T + t;
                if (RA) { /* R{S} = s (R{q}_t·k_u + q_t·R{k}_u), then R{P} = P (R{S} − Σ_u P R{S}) */
                    zero(m, k);
                    for (int u = 0; u <= t; u++) {
                        size_t bu = (size_t)b * T + u;
                        double *restrict rs = RA + ((size_t)t * T + u) * k;
                        zero(rs, k);
                        for (int c = c0; c < c1; c++) {
                            if (Rq) axpy(rs, key[bu * C + c], Rq + c * RN + bt * k, k);
                            if (Rkey) axpy(rs, q[bt * C + c], Rkey + c * RN + bu * k, k);
                        }
                        double p = P[(size_t)t * T + u];
                        for (int d = 0; d < k; d++) {
                            rs[d] *= s;
                            m[d] += p * rs[d];
                        }
                    }
                    for (int u = 0; u <= t; u++) {
                        double *restrict rs = RA + ((size_t)t * T + u) * k, p = P[(size_t)t * T + u];
                        for (int d = 0; d < k; d++) rs[d] = p * (rs[d] - m[d]);
                    }
                }
                for (int c = c0; c < c1; c++) { /* R{y}_t = Σ_u R{P} v_u + P R{v}_u */
                    double *restrict o = Ry + c * RN + bt * k;
                    zero(o, k);
                    for (int u = 0; u <= t; u++) {
                        size_t bu = (size_t)b * T + u;
                        if (RA) axpy(o, v[bu * C + c], RA + ((size_t)t * T + u) * k, k);
                        if (Rv) axpy(o, P[(size_t)t * T + u], Rv + c * RN + bu * k, k);
                    }
                }
            }
        }
    free(m);
}

/* R of the attention backward (formulas in tt_kernels.c). Rdq, Rdkey, Rdv are
 * overwritten; any of them may be NULL (not wanted). Rq, Rkey, Rv, Ratt NULL: zero. */
HOT void tt_fm_attention_rop_backward(double *Rdq, double *Rdkey, double *Rdv /*(C,N,k) or NULL each*/,
                                      const double *Rdy /*(C,N,k)*/, const double *dy /*(N,C)*/, const double *q,
                                      const double *key, const double *v /*(N,C)*/,
                                      const double *att, const double *dpc /*(B,H,T,T)*/, const double *Rq,
                                      const double *Rkey, const double *Rv /*(C,N,k) or NULL*/,
                                      const double *Ratt /*(B,H,T,T,k) or NULL*/, int B, int T, int C, int H, int k)
{
    int hs = C / H;
    double s = 1.0 / sqrt(hs);
    size_t RN = (size_t)B * T * k;
    double *RdP = xmalloc(((size_t)T + 2) * k * sizeof(double)), *rrho = RdP + (size_t)T * k, *RdS = rrho + k;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            const double *P = att + ((size_t)b * H + h) * T * T, *D = dpc + ((size_t)b * H + h) * T * T;
            const double *RA = Ratt ? Ratt + ((size_t)b * H + h) * T * T * k : NULL;
            int c0 = h * hs, c1 = c0 + hs;
            for (int t = 0; t < T; t++) {
                size_t bt = (size_t)b * T + t;
                /* only queries t' >= u write key/value row u, so row t starts here */
                for (int c = c0; c < c1; c++) {
                    if (Rdq) zero(Rdq + c * RN + bt * k, k);
                    if (Rdkey) zero(Rdkey + c * RN + bt * k, k);
                    if (Rdv) zero(Rdv + c * RN + bt * k, k);
                }
                /* R{dP}[u] = R{dy}_t·v_u + dy_t·R{v}_u;  R{ρ} = Σ_u R{P} dP + P R{dP} */
                zero(rrho, k);
                for (int u = 0; u <= t; u++) {
                    size_t bu = (size_t)b * T + u;
                    double *restrict rdp = RdP + (size_t)u * k, dP = 0, p = P[(size_t)t * T + u];
                    zero(rdp, k);
                    for (int c = c0; c < c1; c++) {
                        dP += dy[bt * C + c] * v[bu * C + c];
                        axpy(rdp, v[bu * C + c], Rdy + c * RN + bt * k, k);
                        if (Rv) axpy(rdp, dy[bt * C + c], Rv + c * RN + bu * k, k);
                    }
                    axpy(rrho, p, rdp, k);
                    if (RA) axpy(rrho, dP, RA + ((size_t)t * T + u) * k, k);
                }
                for (int u = 0; u <= t; u++) {
                    size_t bu = (size_t)b * T + u;
                    double p = P[(size_t)t * T + u], Dtu = D[(size_t)t * T + u], dS = s * p * Dtu;
                    const double *restrict rdp = RdP + (size_t)u * k, *rp = RA ? RA + ((size_t)t * T + u) * k : NULL;
                    /* R{dS} = s (R{P} dpc + P (R{dP} − R{ρ})) */
                    for (int d = 0; d < k; d++) RdS[d] = s * p * (rdp[d] - rrho[d]);
                    if (rp) axpy(RdS, s * Dtu, rp, k);
                    for (int c = c0; c < c1; c++) {
                        if (Rdq) {
                            double *o = Rdq + c * RN + bt * k;
                            axpy(o, key[bu * C + c], RdS, k);
                            if (Rkey) axpy(o, dS, Rkey + c * RN + bu * k, k);
                        }
                        if (Rdkey) {
                            double *o = Rdkey + c * RN + bu * k;
                            axpy(o, q[bt * C + c], RdS, k);
                            if (Rq) axpy(o, dS, Rq + c * RN + bt * k, k);
                        }
                        if (Rdv) {
                            double *o = Rdv + c * RN + bu * k;
                            if (rp) axpy(o, dy[bt * C + c], rp, k);
                            axpy(o, p, Rdy + c * RN + bt * k, k);
                        }
                    }
                }
            }
        }
    free(RdP);
}

/* ---- GELU: R{out} = G'(x) R{inp};  R{dinp} = G'(x) R{dout} + G''(x) dout R{inp} --------------------- */

HOT void tt_fm_gelu_rop(double *Rout /*(M,N,k)*/, const double *Rinp /*(M,N,k)*/, const double *g1 /*(N,M): G'(x)*/,
                        int N, int M, int k)
{
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            size_t row = ((size_t)m * N + n) * k;
            double a = g1[(size_t)n * M + m];
            const double *restrict x = Rinp + row;
            double *restrict o = Rout + row;
            for (int d = 0; d < k; d++) o[d] = a * x[d];
        }
}

/* g2d (N,M) = G''(x) ⊙ dout of the base backward. Rinp NULL: zero. Overwrites Rdinp. */
HOT void tt_fm_gelu_rop_backward(double *Rdinp /*(M,N,k)*/, const double *Rdout /*(M,N,k)*/,
                                 const double *g1 /*(N,M)*/, const double *g2d /*(N,M)*/,
                                 const double *Rinp /*(M,N,k) or NULL*/, int N, int M, int k)
{
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            size_t row = ((size_t)m * N + n) * k;
            double a = g1[(size_t)n * M + m], b = g2d[(size_t)n * M + m];
            const double *restrict x = Rdout + row;
            double *restrict o = Rdinp + row;
            if (Rinp) {
                const double *restrict y = Rinp + row;
                for (int d = 0; d < k; d++) o[d] = a * x[d] + b * y[d];
            } else {
                for (int d = 0; d < k; d++) o[d] = a * x[d];
            }
        }
}
