/* The R-pass kernels: the R-operator of every layer with the k directions
 * innermost ("direction-minor", the layout pictured in tt_kernels.h). Their
 * naive references, token-major loops with the formulas, are the *_naive
 * kernels of tt_kernels.c; tests/test_ttdirminor.c compares the two.
 *
 * Layout: an R-quantity of feature width C over a chunk of N tokens is (C,N,k):
 * feature c, token n, direction d at [c*ld + n*k + d], ld = tt_dm_ld(N, k).
 * Every elementwise, LayerNorm and attention loop then runs over the k
 * contiguous directions with the base quantities (which do not depend on the
 * direction) broadcast, which GCC vectorises whatever C and the head size are;
 * a linear layer is W·R{X} over all N·k columns (one dgemm). R-gradients are
 * direction-minor too: entry p of a tensor, direction d at [p*k + d].
 *
 * The directions are unit vectors (Hessian columns), passed as an index range:
 * a direction e_j in W touches one output column of X·R{W}ᵀ, which is a copy
 * of one input column — no dgemm for a product that is mostly zeros. (Dense
 * directions run one at a time: tt_onedir.c.)
 */
#include "tt_kernels.h"
#include <math.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define HOT __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define HOT
#endif

/* Directions go in blocks of TT_KBLOCK = 8 held in one vector (GCC vector
 * extension: one AVX-512 register, two AVX2 or four SSE2 ones, whichever
 * target_clones picked), so a sum over features or keys stays in registers. */
typedef double vd __attribute__((vector_size(TT_KBLOCK * sizeof(double))));
typedef double vd_mem __attribute__((vector_size(TT_KBLOCK * sizeof(double)), aligned(sizeof(double)), may_alias));
#define vload(p) (*(const vd_mem *)(p))
#define vstore(p, v) (*(vd_mem *)(p) = (v))
#define vadd(p, v) (*(vd_mem *)(p) += (v))

static void check_k(int k)
{
    if (k < TT_KBLOCK || k % TT_KBLOCK) DIE("direction count %d is not a positive multiple of %d", k, TT_KBLOCK);
}

/* The unit directions of an R-parameter: direction d in d0..d1-1 is e_(e0 + d - d0). */
static inline long unit_index(const tt_rpar *r, int d) { return r->e0 + (d - r->d0); }

int tt_rpar_live(const tt_rpar *r) { return r->d1 > r->d0; }

/* The lane of the unit direction e_c of a vector R-parameter in the block of
 * directions d..d+TT_KBLOCK-1, or -1 if there is none. */
static inline int unit_lane(const tt_rpar *r, long c, int d)
{
    long du = r->d0 + (c - r->e0);
    return du >= r->d0 && du < r->d1 && du >= d && du < d + TT_KBLOCK ? (int)(du - d) : -1;
}

/* One cache line more than N·k: rows N·k·8 bytes apart (a multiple of 4 KB for
 * the usual chunks) would all fall into the same L1 set. */
size_t tt_dm_ld(int N, int k) { return (size_t)N * k + TT_KBLOCK; }
size_t tt_dm_ldt(int C, int k) { return (size_t)C * k + TT_KBLOCK; }

/* ---- linear: out = inp Wᵀ + b ----------------------------------------------------------------- */

/* R{out} (+)= W R{inp} + inp R{W}ᵀ + R{b}. */
HOT void tt_dm_linear_rop(double *Rout /*(OC,N,k)*/, int acc, const double *Rinp /*(IC,N,k) or NULL*/,
                          const double *inp /*(N,IC)*/, const double *W /*(OC,IC)*/, tt_rpar rW, tt_rpar rb,
                          int N, int IC, int OC, int k)
{
    check_k(k);
    size_t RN = tt_dm_ld(N, k);
    if (Rinp)
        tt_dgemm(0, 0, OC, N * k, IC, 1.0, W, IC, Rinp, (int)RN, acc ? 1.0 : 0.0, Rout, (int)RN);
    else if (!acc)
        memset(Rout, 0, OC * RN * sizeof(double));
    for (int d = rW.d0; d < rW.d1; d++) { /* e_(o,i): R{out}[o,n] += inp[n,i] */
        long e = unit_index(&rW, d);
        double *r = Rout + (e / IC) * RN + d;
        const double *x = inp + e % IC;
        for (int n = 0; n < N; n++) r[(size_t)n * k] += x[(size_t)n * IC];
    }
    for (int d = rb.d0; d < rb.d1; d++) {
        double *r = Rout + unit_index(&rb, d) * RN + d;
        for (int n = 0; n < N; n++) r[(size_t)n * k] += 1;
    }
}

/* R of dinp = dout W, dW = doutᵀ inp, db = Σ dout:
 *   R{dinp} (+)= Wᵀ R{dout} + R{W}ᵀ dout   (Rdinp NULL: not wanted)
 *   gWt[i,o] += Σ_n inp[n,i] R{dout}[o,n]   (R{dW} transposed: (IC,OC,k); NULL: not wanted)
 *   gW[o,i]  += Σ_n dout[n,o] R{inp}[i,n]
 *   gb[o] += Σ_n R{dout}[o,n].
 * R{dW} = gW + gWtᵀ: each half is one dgemm over the token-major copies
 * (N,OC,k) of R{dout} and (N,IC,k) of R{inp} (rows tt_dm_ldt apart); the
 * caller adds gWt into gW (transposed) once the sums are complete. */
HOT void tt_dm_linear_rop_backward(double *Rdinp /*(IC,N,k)*/, int acc, double *gW /*(OC*IC,k)*/,
                                   double *gWt /*(IC*OC,k)*/, double *gb /*(OC,k)*/, const double *Rdout /*(OC,N,k)*/,
                                   const double *Rdout_t /*(N,OC,k)*/, const double *dout /*(N,OC)*/,
                                   const double *inp /*(N,IC)*/, const double *Rinp_t /*(N,IC,k) or NULL*/,
                                   const double *W /*(OC,IC)*/, tt_rpar rW, int N, int IC, int OC, int k)
{
    check_k(k);
    size_t RN = tt_dm_ld(N, k);
    if (Rdinp) {
        tt_dgemm(1, 0, IC, N * k, OC, 1.0, W, IC, Rdout, (int)RN, acc ? 1.0 : 0.0, Rdinp, (int)RN);
        for (int d = rW.d0; d < rW.d1; d++) { /* e_(o,i): R{dinp}[i,n] += dout[n,o] */
            long e = unit_index(&rW, d);
            double *r = Rdinp + (e % IC) * RN + d;
            const double *g = dout + e / IC;
            for (int n = 0; n < N; n++) r[(size_t)n * k] += g[(size_t)n * OC];
        }
    }
    /* (IC, OC·k) += inpᵀ (IC,N) · R{dout} (N, OC·k) */
    if (gWt) tt_dgemm(1, 0, IC, OC * k, N, 1.0, inp, IC, Rdout_t, (int)tt_dm_ldt(OC, k), 1.0, gWt, OC * k);
    /* (OC, IC·k) += doutᵀ (OC,N) · R{inp} (N, IC·k) */
    if (gW && Rinp_t) tt_dgemm(1, 0, OC, IC * k, N, 1.0, dout, OC, Rinp_t, (int)tt_dm_ldt(IC, k), 1.0, gW, IC * k);
    if (gb)
        for (int o = 0; o < OC; o++)
            for (int d = 0; d < k; d += TT_KBLOCK) {
                vd sum[2] = {{0}, {0}};
                for (int n = 0; n < N; n++) sum[n & 1] += vload(Rdout + o * RN + (size_t)n * k + d);
                vadd(gb + (size_t)o * k + d, sum[0] + sum[1]);
            }
}

/* gW[o,i] += gWt[i,o] over the k directions (the two halves of R{dW}). */
void tt_dm_fold_transposed(double *gW /*(OC*IC,k)*/, const double *gWt /*(IC*OC,k)*/, int IC, int OC, int k)
{
    check_k(k);
    for (int o = 0; o < OC; o++)
        for (int i = 0; i < IC; i++)
            for (int d = 0; d < k; d += TT_KBLOCK)
                vadd(gW + ((size_t)o * IC + i) * k + d, vload(gWt + ((size_t)i * OC + o) * k + d));
}

/* ---- LayerNorm: y = g ⊙ x̂ + b, x̂ = (x − μ) r ---------------------------------------------------
 * R{x̂} = r (R{x} − mean R{x} − x̂ mean(x̂ ⊙ R{x})), R{r} = −r² mean(x̂ ⊙ R{x}),
 * R{y} = g ⊙ R{x̂} + R{g} ⊙ x̂ + R{b}. Rinp NULL (zero): Rxh and Rr are not
 * written (they are zero), only the parameter terms. */
HOT void tt_dm_layernorm_rop(double *Rout /*(C,N,k)*/, double *Rout_t /*(N,C,k) or NULL*/, double *Rxh /*(C,N,k)*/,
                             double *Rr /*(N,k)*/, const double *Rinp /*(C,N,k) or NULL*/, const double *xh /*(N,C)*/,
                             const double *rstd /*(N)*/, const double *g /*(C)*/, tt_rpar rg, tt_rpar rb, int N,
                             int C, int k)
{
    check_k(k);
    size_t RN = tt_dm_ld(N, k), LT = tt_dm_ldt(C, k);
    for (int n = 0; n < N; n++) {
        const double *h = xh + (size_t)n * C;
        size_t nk = (size_t)n * k;
        double r = rstd[n];
        for (int d = 0; d < k; d += TT_KBLOCK) {
            size_t at = nk + d;
            vd m1 = {0}, m2 = {0};
            if (Rinp) {
                for (int c = 0; c < C; c++) {
                    vd x = vload(Rinp + c * RN + at);
                    m1 += x;
                    m2 += h[c] * x;
                }
                m1 /= C;
                m2 /= C;
                vstore(Rr + at, -r * r * m2);
            }
            for (int c = 0; c < C; c++) {
                vd o = {0};
                if (Rinp) {
                    vd rh = r * (vload(Rinp + c * RN + at) - m1 - h[c] * m2);
                    vstore(Rxh + c * RN + at, rh);
                    o = g[c] * rh;
                }
                int lg = unit_lane(&rg, c, d), lb = unit_lane(&rb, c, d);
                if (lg >= 0) o[lg] += h[c];
                if (lb >= 0) o[lb] += 1;
                vstore(Rout + c * RN + at, o);
                if (Rout_t) vstore(Rout_t + n * LT + (size_t)c * k + d, o);
            }
        }
    }
}

/* With dx̂ = dy ⊙ g, a = mean dx̂, cc = mean(dx̂ ⊙ x̂), dx = r (dx̂ − a − x̂ cc):
 *   R{dx̂} = R{dy} ⊙ g + dy ⊙ R{g}
 *   R{dx} (+)= R{r} (dx̂ − a − x̂ cc) + r (R{dx̂} − R{a} − R{x̂} cc − x̂ R{cc}),
 *   R{a} = mean R{dx̂},  R{cc} = mean(R{dx̂} ⊙ x̂ + dx̂ ⊙ R{x̂})
 *   gg += Σ_n R{dy} ⊙ x̂ + dy ⊙ R{x̂};  gb += Σ_n R{dy}.
 * Rxh, Rr NULL: zero (the input was not perturbed). Any output may be NULL. */
HOT void tt_dm_layernorm_rop_backward(double *Rdinp /*(C,N,k)*/, double *Rdinp_t /*(N,C,k) or NULL*/, int acc,
                                      double *gg /*(C,k)*/,
                                      double *gb /*(C,k)*/, const double *Rdout /*(C,N,k)*/,
                                      const double *dout /*(N,C)*/, const double *xh /*(N,C)*/,
                                      const double *rstd /*(N)*/, const double *Rxh /*(C,N,k) or NULL*/,
                                      const double *Rr /*(N,k) or NULL*/, const double *g /*(C)*/, tt_rpar rg,
                                      int N, int C, int k)
{
    check_k(k);
    size_t RN = tt_dm_ld(N, k);
    /* R{dg}, R{db}: sums over the tokens in registers (two chains each, for latency) */
    if (gg || gb)
        for (int c = 0; c < C; c++)
            for (int d = 0; d < k; d += TT_KBLOCK) {
                vd sg[2] = {{0}, {0}}, sr[2] = {{0}, {0}}, sb[2] = {{0}, {0}};
                for (int n = 0; n < N; n++) {
                    size_t at = c * RN + (size_t)n * k + d;
                    vd rdy = vload(Rdout + at);
                    sg[n & 1] += xh[(size_t)n * C + c] * rdy;
                    if (Rxh) sr[n & 1] += dout[(size_t)n * C + c] * vload(Rxh + at);
                    sb[n & 1] += rdy;
                }
                if (gg) vadd(gg + (size_t)c * k + d, (sg[0] + sg[1]) + (sr[0] + sr[1]));
                if (gb) vadd(gb + (size_t)c * k + d, sb[0] + sb[1]);
            }
    if (!Rdinp) return;
    double *rdxh = xmalloc((size_t)C * TT_KBLOCK * sizeof(double)), *dxh = xmalloc((size_t)C * sizeof(double));
    for (int n = 0; n < N; n++) {
        const double *dy = dout + (size_t)n * C, *h = xh + (size_t)n * C;
        size_t nk = (size_t)n * k;
        double r = rstd[n], a, cc;
        tt_layernorm_dxhat(dxh, &a, &cc, dy, g, h, C);
        for (int d = 0; d < k; d += TT_KBLOCK) {
            size_t at = nk + d;
            vd ra = {0}, rc = {0};
            for (int c = 0; c < C; c++) {
                vd rdy = vload(Rdout + c * RN + at), rh = {0};
                if (Rxh) rh = vload(Rxh + c * RN + at);
                vd q = g[c] * rdy;
                int lg = unit_lane(&rg, c, d);
                if (lg >= 0) q[lg] += dy[c];
                vstore(rdxh + (size_t)c * TT_KBLOCK, q);
                ra += q;
                rc += h[c] * q + dxh[c] * rh;
            }
            ra /= C;
            rc /= C;
            vd rr = {0};
            if (Rr) rr = vload(Rr + at);
            for (int c = 0; c < C; c++) {
                vd o = r * (vload(rdxh + (size_t)c * TT_KBLOCK) - ra - h[c] * rc);
                if (Rxh) o += (dxh[c] - a - h[c] * cc) * rr - r * cc * vload(Rxh + c * RN + at);
                if (acc) o += vload(Rdinp + c * RN + at);
                vstore(Rdinp + c * RN + at, o);
                if (Rdinp_t) vstore(Rdinp_t + n * tt_dm_ldt(C, k) + (size_t)c * k + d, o);
            }
        }
    }
    free(rdxh);
    free(dxh);
}

/* ---- causal attention (see tt_kernels.c for the formulas) ----------------------------------------
 * Ratt (B,H,T,T,k) holds R{P}[t,u] of every direction, u <= t (the rest is not written). */
HOT void tt_dm_attention_rop(double *Ry /*(C,N,k)*/, double *Ry_t /*(N,C,k) or NULL*/,
                             double *Ratt /*(B,H,T,T,k), NULL if Rq, Rkey are*/,
                             const double *Rq, const double *Rkey, const double *Rv /*(C,N,k) or NULL each*/,
                             const double *q, const double *key, const double *v /*(N,C)*/,
                             const double *att /*(B,H,T,T)*/, int B, int T, int C, int H, int k)
{
    check_k(k);
    int hs = C / H;
    double s = 1.0 / sqrt(hs);
    size_t RN = tt_dm_ld(B * T, k);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            const double *P = att + ((size_t)b * H + h) * T * T;
            double *RA = Ratt ? Ratt + ((size_t)b * H + h) * T * T * k : NULL;
            int c0 = h * hs, c1 = c0 + hs;
            for (int t = 0; t < T; t++) {
                size_t bt = (size_t)b * T + t;
                const double *Pt = P + (size_t)t * T;
                for (int d = 0; d < k; d += TT_KBLOCK) {
                    if (RA) { /* R{S} = s (R{q}_t·k_u + q_t·R{k}_u), then R{P} = P (R{S} − Σ_u P R{S}) */
                        vd m = {0};
                        for (int u = 0; u <= t; u++) {
                            size_t bu = (size_t)b * T + u;
                            vd rs = {0};
                            for (int c = c0; c < c1; c++) {
                                if (Rq) rs += key[bu * C + c] * vload(Rq + c * RN + bt * k + d);
                                if (Rkey) rs += q[bt * C + c] * vload(Rkey + c * RN + bu * k + d);
                            }
                            rs *= s;
                            vstore(RA + ((size_t)t * T + u) * k + d, rs);
                            m += Pt[u] * rs;
                        }
                        for (int u = 0; u <= t; u++) {
                            double *rs = RA + ((size_t)t * T + u) * k + d;
                            vstore(rs, Pt[u] * (vload(rs) - m));
                        }
                    }
                    for (int c = c0; c < c1; c++) { /* R{y}_t = Σ_u R{P} v_u + P R{v}_u */
                        vd o = {0};
                        for (int u = 0; u <= t; u++) {
                            size_t bu = (size_t)b * T + u;
                            if (RA) o += v[bu * C + c] * vload(RA + ((size_t)t * T + u) * k + d);
                            if (Rv) o += Pt[u] * vload(Rv + c * RN + bu * k + d);
                        }
                        vstore(Ry + c * RN + bt * k + d, o);
                        if (Ry_t) vstore(Ry_t + bt * tt_dm_ldt(C, k) + (size_t)c * k + d, o);
                    }
                }
            }
        }
}

/* R of the attention backward (formulas in tt_kernels.c). Rdq, Rdkey, Rdv are
 * overwritten; any of them may be NULL (not wanted). Rq, Rkey, Rv, Ratt NULL: zero.
 * Per sequence, head and block of directions: R{dS}[t,u] first (T×T vectors),
 * then each output row as one sum held in a register, written once. */
HOT void tt_dm_attention_rop_backward(double *Rdq, double *Rdkey, double *Rdv /*(C,N,k) or NULL each*/,
                                      double *Rdq_t, double *Rdkey_t, double *Rdv_t /*(N,C,k) or NULL each*/,
                                      const double *Rdy /*(C,N,k)*/, const double *dy /*(N,C)*/, const double *q,
                                      const double *key, const double *v /*(N,C)*/,
                                      const double *att, const double *dpc /*(B,H,T,T)*/, const double *Rq,
                                      const double *Rkey, const double *Rv /*(C,N,k) or NULL*/,
                                      const double *Ratt /*(B,H,T,T,k) or NULL*/, int B, int T, int C, int H, int k)
{
    check_k(k);
    int hs = C / H;
    double s = 1.0 / sqrt(hs);
    size_t RN = tt_dm_ld(B * T, k), LT = tt_dm_ldt(C, k), TT = (size_t)T * T;
    double *RdS = xmalloc(TT * TT_KBLOCK * sizeof(double)), *RdP = xmalloc((size_t)T * TT_KBLOCK * sizeof(double));
    double *dP = xmalloc(2 * TT * sizeof(double)), *dS = dP + TT;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            const double *P = att + ((size_t)b * H + h) * TT, *D = dpc + ((size_t)b * H + h) * TT;
            const double *RA = Ratt ? Ratt + ((size_t)b * H + h) * TT * k : NULL;
            int c0 = h * hs, c1 = c0 + hs;
            const double *qb = q + (size_t)b * T * C, *kb = key + (size_t)b * T * C, *vb = v + (size_t)b * T * C;
            const double *dyb = dy + (size_t)b * T * C;
            for (int t = 0; t < T; t++)
                for (int u = 0; u <= t; u++) { /* dP = dy_t·v_u, dS = s P dpc */
                    double a = 0;
                    for (int c = c0; c < c1; c++) a += dyb[(size_t)t * C + c] * vb[(size_t)u * C + c];
                    dP[(size_t)t * T + u] = a;
                    dS[(size_t)t * T + u] = s * P[(size_t)t * T + u] * D[(size_t)t * T + u];
                }
            for (int d = 0; d < k; d += TT_KBLOCK) {
                size_t at = (size_t)b * T * k + d; /* token 0 of the sequence, this block */
#define RROW(X, c, t) ((X) + (c) * RN + at + (size_t)(t) * k)
#define TROW(X, c, t) ((X) + ((size_t)b * T + (t)) * LT + (size_t)(c) * k + d)
#define RP_(t, u) (RA + ((size_t)(t) * T + (u)) * k + d)
                for (int t = 0; t < T; t++) {
                    /* R{dP}[u] = R{dy}_t·v_u + dy_t·R{v}_u;  R{ρ} = Σ_u R{P} dP + P R{dP} */
                    vd rrho = {0};
                    for (int u = 0; u <= t; u++) {
                        vd rdp = {0};
                        for (int c = c0; c < c1; c++) {
                            rdp += vb[(size_t)u * C + c] * vload(RROW(Rdy, c, t));
                            if (Rv) rdp += dyb[(size_t)t * C + c] * vload(RROW(Rv, c, u));
                        }
                        vstore(RdP + (size_t)u * TT_KBLOCK, rdp);
                        rrho += P[(size_t)t * T + u] * rdp;
                        if (RA) rrho += dP[(size_t)t * T + u] * vload(RP_(t, u));
                    }
                    /* R{dS} = s (R{P} dpc + P (R{dP} − R{ρ})) */
                    for (int u = 0; u <= t; u++) {
                        vd r = P[(size_t)t * T + u] * (vload(RdP + (size_t)u * TT_KBLOCK) - rrho);
                        if (RA) r += D[(size_t)t * T + u] * vload(RP_(t, u));
                        vstore(RdS + ((size_t)t * T + u) * TT_KBLOCK, s * r);
                    }
                }
                /* R{dq}_t = Σ_u R{dS} k_u + dS R{k}_u */
                if (Rdq)
                    for (int t = 0; t < T; t++)
                        for (int c = c0; c < c1; c++) {
                            vd o = {0};
                            for (int u = 0; u <= t; u++) {
                                o += kb[(size_t)u * C + c] * vload(RdS + ((size_t)t * T + u) * TT_KBLOCK);
                                if (Rkey) o += dS[(size_t)t * T + u] * vload(RROW(Rkey, c, u));
                            }
                            vstore(RROW(Rdq, c, t), o);
                            if (Rdq_t) vstore(TROW(Rdq_t, c, t), o);
                        }
                /* R{dk}_u = Σ_{t>=u} R{dS} q_t + dS R{q}_t;  R{dv}_u = Σ_{t>=u} R{P} dy_t + P R{dy}_t */
                for (int u = 0; u < T; u++)
                    for (int c = c0; c < c1; c++) {
                        if (Rdkey) {
                            vd o = {0};
                            for (int t = u; t < T; t++) {
                                o += qb[(size_t)t * C + c] * vload(RdS + ((size_t)t * T + u) * TT_KBLOCK);
                                if (Rq) o += dS[(size_t)t * T + u] * vload(RROW(Rq, c, t));
                            }
                            vstore(RROW(Rdkey, c, u), o);
                            if (Rdkey_t) vstore(TROW(Rdkey_t, c, u), o);
                        }
                        if (Rdv) {
                            vd o = {0};
                            for (int t = u; t < T; t++) {
                                if (RA) o += dyb[(size_t)t * C + c] * vload(RP_(t, u));
                                o += P[(size_t)t * T + u] * vload(RROW(Rdy, c, t));
                            }
                            vstore(RROW(Rdv, c, u), o);
                            if (Rdv_t) vstore(TROW(Rdv_t, c, u), o);
                        }
                    }
#undef RROW
#undef TROW
#undef RP_
            }
        }
    free(RdS);
    free(RdP);
    free(dP);
}

/* ---- GELU: R{out} = G'(x) R{inp};  R{dinp} = G'(x) R{dout} + G''(x) dout R{inp} --------------------- */

HOT void tt_dm_gelu_rop(double *Rout /*(M,N,k)*/, double *Rout_t /*(N,M,k) or NULL*/, const double *Rinp /*(M,N,k)*/,
                        const double *g1 /*(N,M): G'(x)*/, int N, int M, int k)
{
    check_k(k);
    size_t RN = tt_dm_ld(N, k), LT = tt_dm_ldt(M, k);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            size_t row = m * RN + (size_t)n * k;
            double a = g1[(size_t)n * M + m];
            for (int d = 0; d < k; d += TT_KBLOCK) {
                vd o = a * vload(Rinp + row + d);
                vstore(Rout + row + d, o);
                if (Rout_t) vstore(Rout_t + n * LT + (size_t)m * k + d, o);
            }
        }
}

/* g2d (N,M) = G''(x) ⊙ dout of the base backward. Rinp NULL: zero. Overwrites Rdinp. */
HOT void tt_dm_gelu_rop_backward(double *Rdinp /*(M,N,k)*/, double *Rdinp_t /*(N,M,k) or NULL*/,
                                 const double *Rdout /*(M,N,k)*/,
                                 const double *g1 /*(N,M)*/, const double *g2d /*(N,M)*/,
                                 const double *Rinp /*(M,N,k) or NULL*/, int N, int M, int k)
{
    check_k(k);
    size_t RN = tt_dm_ld(N, k);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            size_t row = m * RN + (size_t)n * k;
            double a = g1[(size_t)n * M + m], b = g2d[(size_t)n * M + m];
            for (int d = 0; d < k; d += TT_KBLOCK) {
                vd o = a * vload(Rdout + row + d);
                if (Rinp) o += b * vload(Rinp + row + d);
                vstore(Rdinp + row + d, o);
                if (Rdinp_t) vstore(Rdinp_t + n * tt_dm_ldt(M, k) + (size_t)m * k + d, o);
            }
        }
}

/* ---- embedding and cross-entropy --------------------------------------------------------------
 * Memory-bound and cheap: compiled for the baseline target only (no HOT clones). */

/* R{x} = R{wte}[inp[n]] + R{wpe}[t] for unit directions. */
void tt_dm_embed_rop(double *Rx /*(C,N,k)*/, const int *inp, tt_rpar rwte, tt_rpar rwpe, int N, int T, int C, int k)
{
    size_t RN = tt_dm_ld(N, k);
    memset(Rx, 0, C * RN * sizeof(double));
    for (int d = rwte.d0; d < rwte.d1; d++) { /* e_(token, c) */
        long e = rwte.e0 + (d - rwte.d0);
        for (int n = 0; n < N; n++)
            if (inp[n] == e / C) Rx[(e % C) * RN + (size_t)n * k + d] += 1;
    }
    for (int d = rwpe.d0; d < rwpe.d1; d++) { /* e_(position, c) */
        long e = rwpe.e0 + (d - rwpe.d0);
        for (int n = e / C; n < N; n += T) Rx[(e % C) * RN + (size_t)n * k + d] += 1;
    }
}

/* The embedding is linear in its parameters and its input is discrete, so
 * R{dwte} and R{dwpe} only route R{dx}. Either output may be NULL (not wanted). */
void tt_dm_embed_rop_backward(double *gwte /*(V*C,k)*/, double *gwpe /*(T*C,k)*/, const double *Rdx /*(C,N,k)*/,
                               const int *inp, int N, int T, int C, int k)
{
    size_t RN = tt_dm_ld(N, k);
    for (int c = 0; c < C; c++)
        for (int n = 0; n < N; n++) {
            const double *restrict r = Rdx + c * RN + (size_t)n * k;
            if (gwte) {
                double *restrict g = gwte + ((size_t)inp[n] * C + c) * k;
                for (int d = 0; d < k; d++) g[d] += r[d];
            }
            if (gwpe) {
                double *restrict g = gwpe + ((size_t)(n % T) * C + c) * k;
                for (int d = 0; d < k; d++) g[d] += r[d];
            }
        }
}

/* R{dlogits} = scale p ⊙ (R{z} − Σ_v p R{z}) (the softmax Jacobian; onehot is constant). */
void tt_dm_crossentropy_rop(double *Rdlogits /*(V,N,k)*/, double *Rdlogits_t /*(N,V,k)*/,
                             const double *Rlogits /*(V,N,k)*/, const double *probs, double scale, int N, int V, int k)
{
    size_t RN = tt_dm_ld(N, k), LT = tt_dm_ldt(V, k);
    double *mean = xmalloc((size_t)k * sizeof(double));
    for (int n = 0; n < N; n++) {
        const double *p = probs + (size_t)n * V;
        memset(mean, 0, (size_t)k * sizeof(double));
        for (int v = 0; v < V; v++) {
            const double *restrict rz = Rlogits + v * RN + (size_t)n * k;
            for (int d = 0; d < k; d++) mean[d] += p[v] * rz[d];
        }
        for (int v = 0; v < V; v++) {
            const double *restrict rz = Rlogits + v * RN + (size_t)n * k;
            double *restrict o = Rdlogits + v * RN + (size_t)n * k, *restrict ot = Rdlogits_t + n * LT + (size_t)v * k;
            double a = scale * p[v];
            for (int d = 0; d < k; d++) ot[d] = o[d] = a * (rz[d] - mean[d]);
        }
    }
    free(mean);
}
