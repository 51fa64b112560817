/* Token-major layer kernels of the tiny Transformer, llm.c style: one section
 * per layer, each with
 *   x_forward, x_backward        the model's loss and gradient (tt_pass.c), on
 *                                base activations (N,C), N = B·T tokens;
 *   x_rop_naive,                 the R-operator (Pearlmutter 1994) of both, as
 *   x_rop_backward_naive         plain loops: x_rop_naive is the forward-mode
 *                                derivative of x_forward along k directions,
 *                                x_rop_backward_naive that of x_backward.
 * The *_naive kernels are the test reference of the direction-minor R-kernels
 * of tt_dirminor.c, which the R-pass runs (tests/test_ttdirminor.c compares
 * the two); the model never calls them. They are written straight from the
 * formulas (given here, once per layer), for clarity rather than speed, in the
 * token-major layout: an R-quantity is (N,k,C), token n, direction d, feature
 * c at [(n*k + d)*C + c]; the R-parameters of direction d at RW + d*ld; a NULL
 * R-input or R-parameter is zero.
 */
#include "tt_kernels.h"
#include <cblas.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

/* Flops of every dgemm issued by these kernels (for the benchmark's GFLOP/s). */
static _Atomic long long dgemm_flops;
long long tt_dgemm_flops(void) { return atomic_load(&dgemm_flops); }

static void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K, double alpha, const double *A,
                 int lda, const double *B, int ldb, double beta, double *C, int ldc)
{
    atomic_fetch_add(&dgemm_flops, 2LL * M * N * K);
    cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void tt_dgemm(int ta, int tb, int M, int N, int K, double alpha, const double *A, int lda, const double *B, int ldb,
              double beta, double *C, int ldc)
{
    gemm(ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* ---- linear: out = inp Wᵀ + b ------------------------------------------------------ */

void tt_linear_forward(double *out /*(N,OC)*/, const double *inp /*(N,IC)*/, const double *W /*(OC,IC)*/,
                       const double *b /*(OC) or NULL*/, int N, int IC, int OC)
{
    gemm(CblasNoTrans, CblasTrans, N, OC, IC, 1.0, inp, IC, W, IC, 0.0, out, OC);
    if (b)
        for (int n = 0; n < N; n++)
            for (int o = 0; o < OC; o++) out[(size_t)n * OC + o] += b[o];
}

/* dinp += dout W; dW += doutᵀ inp; db += Σ_n dout (each optional). */
void tt_linear_backward(double *dinp /*(N,IC)*/, double *dW /*(OC,IC)*/, double *db /*(OC)*/,
                        const double *dout /*(N,OC)*/, const double *inp /*(N,IC)*/,
                        const double *W /*(OC,IC)*/, int N, int IC, int OC)
{
    if (dinp) gemm(CblasNoTrans, CblasNoTrans, N, IC, OC, 1.0, dout, OC, W, IC, 1.0, dinp, IC);
    if (dW) gemm(CblasTrans, CblasNoTrans, OC, IC, N, 1.0, dout, OC, inp, IC, 1.0, dW, IC);
    if (db)
        for (int n = 0; n < N; n++)
            for (int o = 0; o < OC; o++) db[o] += dout[(size_t)n * OC + o];
}

/* R{out} = R{inp} Wᵀ + inp R{W}ᵀ + R{b} (overwritten). */
void tt_linear_rop_naive(double *Rout, const double *Rinp, const double *inp, const double *W, const double *RW,
                         const double *Rb, size_t ld, int N, int IC, int OC, int k)
{
    for (int n = 0; n < N; n++)
        for (int d = 0; d < k; d++)
            for (int o = 0; o < OC; o++) {
                double s = Rb ? Rb[d * ld + o] : 0;
                for (int i = 0; i < IC; i++) {
                    if (Rinp) s += Rinp[((size_t)n * k + d) * IC + i] * W[(size_t)o * IC + i];
                    if (RW) s += inp[(size_t)n * IC + i] * RW[d * ld + (size_t)o * IC + i];
                }
                Rout[((size_t)n * k + d) * OC + o] = s;
            }
}

/* R of the backward pass dinp = dout W, dW = doutᵀ inp, db = Σ dout:
 *   R{dinp} += R{dout} W + dout R{W}
 *   R{dW}_d += R{dout}_dᵀ inp + doutᵀ R{inp}_d
 *   R{db}_d += Σ_n R{dout}_d
 * Rdinp may be NULL (not needed), RdW and Rdb too (then only R{dinp});
 * Rinp and RW may be NULL (zero). */
void tt_linear_rop_backward_naive(double *Rdinp, double *RdW, double *Rdb, const double *Rdout, const double *dout,
                                  const double *inp, const double *Rinp, const double *W, const double *RW,
                                  size_t ld, int N, int IC, int OC, int k)
{
    for (int n = 0; n < N; n++)
        for (int d = 0; d < k; d++) {
            const double *rdo = Rdout + ((size_t)n * k + d) * OC, *dout_n = dout + (size_t)n * OC;
            const double *x = inp + (size_t)n * IC, *rx = Rinp ? Rinp + ((size_t)n * k + d) * IC : NULL;
            for (int o = 0; o < OC; o++) {
                for (int i = 0; i < IC; i++) {
                    if (Rdinp) {
                        double s = rdo[o] * W[(size_t)o * IC + i];
                        if (RW) s += dout_n[o] * RW[d * ld + (size_t)o * IC + i];
                        Rdinp[((size_t)n * k + d) * IC + i] += s;
                    }
                    if (RdW) RdW[d * ld + (size_t)o * IC + i] += rdo[o] * x[i] + (rx ? dout_n[o] * rx[i] : 0);
                }
                if (Rdb) Rdb[d * ld + o] += rdo[o];
            }
        }
}

/* ---- LayerNorm: y = g ⊙ x̂ + b, x̂ = (x − μ) r, r = 1/√(σ² + ε) ------------------------- */

#define LN_EPS 1e-5

void tt_layernorm_forward(double *out /*(N,C)*/, double *xh /*(N,C)*/, double *rstd /*(N)*/,
                          const double *inp /*(N,C)*/, const double *g /*(C)*/, const double *b /*(C) or NULL*/,
                          int N, int C)
{
    for (int n = 0; n < N; n++) {
        const double *x = inp + (size_t)n * C;
        double mu = 0, var = 0;
        for (int c = 0; c < C; c++) mu += x[c];
        mu /= C;
        for (int c = 0; c < C; c++) var += (x[c] - mu) * (x[c] - mu);
        var /= C;
        double r = 1.0 / sqrt(var + LN_EPS);
        rstd[n] = r;
        for (int c = 0; c < C; c++) {
            double h = (x[c] - mu) * r;
            xh[(size_t)n * C + c] = h;
            out[(size_t)n * C + c] = g[c] * h + (b ? b[c] : 0);
        }
    }
}

/* dx = r (dx̂ − mean(dx̂) − x̂ mean(dx̂ ⊙ x̂)), dx̂ = dy ⊙ g.  dinp +=. */
void tt_layernorm_backward(double *dinp /*(N,C)*/, double *dg /*(C)*/, double *db /*(C) or NULL*/,
                           const double *dout /*(N,C)*/, const double *xh /*(N,C)*/, const double *rstd /*(N)*/,
                           const double *g /*(C)*/, int N, int C)
{
    for (int n = 0; n < N; n++) {
        const double *dy = dout + (size_t)n * C, *h = xh + (size_t)n * C;
        double a = 0, cc = 0;
        for (int c = 0; c < C; c++) {
            a += dy[c] * g[c];
            cc += dy[c] * g[c] * h[c];
        }
        a /= C;
        cc /= C;
        for (int c = 0; c < C; c++) {
            dinp[(size_t)n * C + c] += rstd[n] * (dy[c] * g[c] - a - h[c] * cc);
            dg[c] += dy[c] * h[c];
            if (db) db[c] += dy[c];
        }
    }
}

/* R{x̂} = r (R{x} − mean(R{x}) − x̂ mean(x̂ ⊙ R{x}))  (the normalisation's Jacobian)
 * R{r} = −r² mean(x̂ ⊙ R{x});  R{y} = R{g} ⊙ x̂ + g ⊙ R{x̂} + R{b}.
 * Rinp NULL: zero input (then only the parameter terms). */
void tt_layernorm_rop_naive(double *Rout /*(N,k,C)*/, double *Rxh /*(N,k,C)*/, double *Rr /*(N,k)*/,
                            const double *Rinp /*(N,k,C) or NULL*/, const double *xh /*(N,C)*/,
                            const double *rstd /*(N)*/, const double *g /*(C)*/,
                            const double *Rg /*dir d: +d*ld, or NULL*/, const double *Rb /*or NULL*/, size_t ld,
                            int N, int C, int k)
{
    for (int n = 0; n < N; n++) {
        const double *h = xh + (size_t)n * C;
        double r = rstd[n];
        for (int d = 0; d < k; d++) {
            size_t row = ((size_t)n * k + d) * C;
            double *rh = Rxh + row, *ro = Rout + row;
            if (Rinp) {
                const double *rx = Rinp + row;
                double m1 = 0, m2 = 0;
                for (int c = 0; c < C; c++) {
                    m1 += rx[c];
                    m2 += rx[c] * h[c];
                }
                m1 /= C;
                m2 /= C;
                for (int c = 0; c < C; c++) rh[c] = r * (rx[c] - m1 - h[c] * m2);
                Rr[(size_t)n * k + d] = -r * r * m2;
            } else {
                memset(rh, 0, C * sizeof(double));
                Rr[(size_t)n * k + d] = 0;
            }
            for (int c = 0; c < C; c++) ro[c] = g[c] * rh[c];
            if (Rg)
                for (int c = 0; c < C; c++) ro[c] += Rg[d * ld + c] * h[c];
            if (Rb)
                for (int c = 0; c < C; c++) ro[c] += Rb[d * ld + c];
        }
    }
}

void tt_layernorm_dxhat(double *dxh, double *a, double *cc, const double *dy, const double *g, const double *xh, int C)
{
    double sa = 0, sc = 0;
    for (int c = 0; c < C; c++) {
        dxh[c] = dy[c] * g[c];
        sa += dxh[c];
        sc += dxh[c] * xh[c];
    }
    *a = sa / C;
    *cc = sc / C;
}

/* With dx̂ = dy ⊙ g, a = mean(dx̂), c = mean(dx̂ ⊙ x̂), dx = r (dx̂ − a − x̂ c):
 *   R{dx̂} = R{dy} ⊙ g + dy ⊙ R{g}
 *   R{dx}  = R{r} (dx̂ − a − x̂ c) + r (R{dx̂} − R{a} − R{x̂} c − x̂ R{c}),
 *   R{a} = mean(R{dx̂}),  R{c} = mean(R{dx̂} ⊙ x̂ + dx̂ ⊙ R{x̂})
 *   R{dg} += R{dy} ⊙ x̂ + dy ⊙ R{x̂};  R{db} += R{dy}.   Rdinp +=; any output may be NULL. */
void tt_layernorm_rop_backward_naive(double *Rdinp /*(N,k,C) or NULL*/, double *Rdg /*dir d: +d*ld (C), or NULL*/,
                                     double *Rdb /*or NULL*/, const double *Rdout /*(N,k,C)*/,
                                     const double *dout /*(N,C)*/, const double *xh /*(N,C)*/,
                                     const double *rstd /*(N)*/, const double *Rxh /*(N,k,C)*/,
                                     const double *Rr /*(N,k)*/, const double *g /*(C)*/, const double *Rg /*or NULL*/,
                                     size_t ld, int N, int C, int k)
{
    size_t kC = (size_t)k * C;
    double dxh[C], rdxh[C];
    /* R{dg}, R{db} summed over the rows here, added to the strided panel once */
    double *sg = Rdg ? xcalloc(kC, sizeof(double)) : NULL, *sb = Rdb ? xcalloc(kC, sizeof(double)) : NULL;
    for (int n = 0; n < N; n++) {
        const double *dy = dout + (size_t)n * C, *h = xh + (size_t)n * C;
        double r = rstd[n], a, cc;
        tt_layernorm_dxhat(dxh, &a, &cc, dy, g, h, C);
        for (int d = 0; d < k; d++) {
            size_t row = ((size_t)n * k + d) * C;
            const double *rdy = Rdout + row, *rh = Rxh + row;
            if (Rdinp) {
                double ra = 0, rc = 0;
                for (int c = 0; c < C; c++) rdxh[c] = rdy[c] * g[c];
                if (Rg)
                    for (int c = 0; c < C; c++) rdxh[c] += dy[c] * Rg[d * ld + c];
                for (int c = 0; c < C; c++) {
                    ra += rdxh[c];
                    rc += rdxh[c] * h[c] + dxh[c] * rh[c];
                }
                ra /= C;
                rc /= C;
                double rr = Rr[(size_t)n * k + d];
                double *rdx = Rdinp + row;
                for (int c = 0; c < C; c++)
                    rdx[c] += rr * (dxh[c] - a - h[c] * cc) + r * (rdxh[c] - ra - rh[c] * cc - h[c] * rc);
            }
            if (sg)
                for (int c = 0; c < C; c++) sg[d * C + c] += rdy[c] * h[c] + dy[c] * rh[c];
            if (sb)
                for (int c = 0; c < C; c++) sb[d * C + c] += rdy[c];
        }
    }
    for (int d = 0; d < k; d++)
        for (int c = 0; c < C; c++) {
            if (sg) Rdg[d * ld + c] += sg[d * C + c];
            if (sb) Rdb[d * ld + c] += sb[d * C + c];
        }
    free(sg);
    free(sb);
}

/* ---- causal multi-head attention -----------------------------------------------------
 * Per sequence b and head h (hs = C/H, s = 1/√hs), for u ≤ t:
 *   S[t,u] = s q_t·k_u,  P[t,·] = softmax(S[t,0..t]),  y_t = Σ_u P[t,u] v_u.
 * att (B,H,T,T) holds P (zero above the diagonal). */

void tt_attention_forward(double *y /*(N,C)*/, double *att /*(B,H,T,T)*/, const double *q /*(N,C)*/,
                          const double *key /*(N,C)*/, const double *v /*(N,C)*/, int B, int T, int C, int H)
{
    int hs = C / H;
    double s = 1.0 / sqrt(hs);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                double *P = att + (((size_t)b * H + h) * T + t) * T;
                const double *qt = q + ((size_t)b * T + t) * C + h * hs;
                double mx = -INFINITY;
                for (int u = 0; u <= t; u++) {
                    const double *ku = key + ((size_t)b * T + u) * C + h * hs;
                    double dot = 0;
                    for (int i = 0; i < hs; i++) dot += qt[i] * ku[i];
                    P[u] = s * dot;
                    if (P[u] > mx) mx = P[u];
                }
                double z = 0;
                for (int u = 0; u <= t; u++) {
                    P[u] = exp(P[u] - mx);
                    z += P[u];
                }
                for (int u = 0; u < T; u++) P[u] = u <= t ? P[u] / z : 0;
                double *yt = y + ((size_t)b * T + t) * C + h * hs;
                for (int i = 0; i < hs; i++) yt[i] = 0;
                for (int u = 0; u <= t; u++) {
                    const double *vu = v + ((size_t)b * T + u) * C + h * hs;
                    for (int i = 0; i < hs; i++) yt[i] += P[u] * vu[i];
                }
            }
}

/* dP[t,u] = dy_t·v_u; dpc = dP − Σ_u P dP (stored in dpc (B,H,T,T)); dS = P ⊙ dpc;
 * dq_t = s Σ_u dS k_u; dk_u = s Σ_t dS q_t; dv_u = Σ_t P dy_t.  dq, dkey, dv are
 * overwritten (attention is their only consumer). */
void tt_attention_backward(double *dq, double *dkey, double *dv /*(N,C) each*/, double *dpc /*(B,H,T,T)*/,
                           const double *dy /*(N,C)*/, const double *q, const double *key, const double *v,
                           const double *att /*(B,H,T,T)*/, int B, int T, int C, int H)
{
    int hs = C / H;
    double s = 1.0 / sqrt(hs);
    size_t NC = (size_t)B * T * C;
    memset(dq, 0, NC * sizeof(double));
    memset(dkey, 0, NC * sizeof(double));
    memset(dv, 0, NC * sizeof(double));
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++) {
                const double *P = att + (((size_t)b * H + h) * T + t) * T;
                double *D = dpc + (((size_t)b * H + h) * T + t) * T;
                size_t rt = ((size_t)b * T + t) * C + h * hs;
                double rho = 0;
                for (int u = 0; u <= t; u++) {
                    const double *vu = v + ((size_t)b * T + u) * C + h * hs;
                    double dot = 0;
                    for (int i = 0; i < hs; i++) dot += dy[rt + i] * vu[i];
                    D[u] = dot;
                    rho += P[u] * dot;
                }
                for (int u = 0; u < T; u++) D[u] = u <= t ? D[u] - rho : 0;
                for (int u = 0; u <= t; u++) {
                    size_t ru = ((size_t)b * T + u) * C + h * hs;
                    double dS = s * P[u] * D[u];
                    for (int i = 0; i < hs; i++) {
                        dq[rt + i] += dS * key[ru + i];
                        dkey[ru + i] += dS * q[rt + i];
                        dv[ru + i] += P[u] * dy[rt + i];
                    }
                }
            }
}

/* R{S} = s (R{q}_t·k_u + q_t·R{k}_u);  R{P} = P ⊙ (R{S} − Σ_u P R{S});
 * R{y}_t = Σ_u R{P} v_u + P R{v}_u.   Ratt (B,T,T,k,H) holds R{P}[t,u] of every
 * direction and head side by side, so the inner loops run over a contiguous
 * (k,C) row of the token-major R-quantities. */
void tt_attention_rop_naive(double *Ry /*(N,k,C)*/, double *Ratt /*(B,T,T,k,H)*/, const double *Rq /*(N,k,C)*/,
                            const double *Rkey /*(N,k,C)*/, const double *Rv /*(N,k,C)*/, const double *q /*(N,C)*/,
                            const double *key, const double *v, const double *att /*(B,H,T,T)*/,
                            int B, int T, int C, int H, int k)
{
    int hs = C / H;
    double s = 1.0 / sqrt(hs);
    size_t kC = (size_t)k * C, kH = (size_t)k * H;
    double *m = xmalloc(kH * sizeof(double)), P[H];
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            size_t bt = (size_t)b * T + t;
            const double *qt = q + bt * C, *rqt = Rq + bt * kC;
            double *RPt = Ratt + bt * T * kH, *ry = Ry + bt * kC;
            memset(m, 0, kH * sizeof(double));
            for (int u = 0; u <= t; u++) {
                size_t bu = (size_t)b * T + u;
                const double *ku = key + bu * C, *rku = Rkey + bu * kC;
                double *rs = RPt + u * kH;
                for (int h = 0; h < H; h++) P[h] = att[(((size_t)b * H + h) * T + t) * T + u];
                for (int d = 0; d < k; d++)
                    for (int h = 0; h < H; h++) {
                        const double *a = rqt + (size_t)d * C + h * hs, *ra = rku + (size_t)d * C + h * hs;
                        double dot = 0;
                        for (int i = 0; i < hs; i++) dot += a[i] * ku[h * hs + i] + qt[h * hs + i] * ra[i];
                        rs[d * H + h] = s * dot;
                        m[d * H + h] += P[h] * s * dot;
                    }
            }
            memset(ry, 0, kC * sizeof(double));
            for (int u = 0; u <= t; u++) {
                size_t bu = (size_t)b * T + u;
                const double *vu = v + bu * C, *rvu = Rv + bu * kC;
                double *rp = RPt + u * kH;
                for (int h = 0; h < H; h++) P[h] = att[(((size_t)b * H + h) * T + t) * T + u];
                for (int d = 0; d < k; d++)
                    for (int h = 0; h < H; h++) {
                        double r = rp[d * H + h] = P[h] * (rp[d * H + h] - m[d * H + h]);
                        double *o = ry + (size_t)d * C + h * hs;
                        const double *rv = rvu + (size_t)d * C + h * hs;
                        for (int i = 0; i < hs; i++) o[i] += r * vu[h * hs + i] + P[h] * rv[i];
                    }
            }
            memset(RPt + (t + 1) * kH, 0, (T - 1 - t) * kH * sizeof(double));
        }
    free(m);
}

/* R of the backward, with dP = dy_t·v_u, dpc = dP − ρ, ρ = Σ_u P dP, dS = P dpc:
 *   R{dP} = R{dy}_t·v_u + dy_t·R{v}_u;  R{ρ} = Σ_u R{P} dP + P R{dP}
 *   R{dS} = R{P} dpc + P (R{dP} − R{ρ})
 *   R{dq}_t = s Σ_u R{dS} k_u + dS R{k}_u;  R{dk}_u = s Σ_t R{dS} q_t + dS R{q}_t
 *   R{dv}_u = Σ_t R{P} dy_t + P R{dy}_t.      Rdq, Rdkey, Rdv are overwritten
 * (row t is cleared when t is reached: only queries t' >= u write to row u). */
void tt_attention_rop_backward_naive(double *Rdq, double *Rdkey, double *Rdv /*(N,k,C) each*/,
                                     const double *Rdy /*(N,k,C)*/, const double *dy /*(N,C)*/, const double *q,
                                     const double *key, const double *v, const double *att /*(B,H,T,T)*/,
                                     const double *dpc /*(B,H,T,T)*/, const double *Rq, const double *Rkey,
                                     const double *Rv, const double *Ratt /*(B,T,T,k,H)*/, int B, int T, int C, int H,
                                     int k)
{
    int hs = C / H;
    double s = 1.0 / sqrt(hs);
    size_t kC = (size_t)k * C, kH = (size_t)k * H;
    double *RdP = xmalloc((size_t)T * kH * sizeof(double)), *rrho = xmalloc(kH * sizeof(double));
    double P[H], D[H], dP[H];
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            size_t bt = (size_t)b * T + t;
            const double *dyt = dy + bt * C, *rdyt = Rdy + bt * kC, *qt = q + bt * C, *rqt = Rq + bt * kC;
            const double *RPt = Ratt + bt * T * kH;
            double *rdqt = Rdq + bt * kC;
            memset(rdqt, 0, kC * sizeof(double));
            memset(Rdkey + bt * kC, 0, kC * sizeof(double));
            memset(Rdv + bt * kC, 0, kC * sizeof(double));
            memset(rrho, 0, kH * sizeof(double));
            for (int u = 0; u <= t; u++) {
                size_t bu = (size_t)b * T + u;
                const double *vu = v + bu * C, *rvu = Rv + bu * kC, *rp = RPt + u * kH;
                double *rdp = RdP + u * kH;
                for (int h = 0; h < H; h++) {
                    P[h] = att[(((size_t)b * H + h) * T + t) * T + u];
                    double a = 0;
                    for (int i = 0; i < hs; i++) a += dyt[h * hs + i] * vu[h * hs + i];
                    dP[h] = a;
                }
                for (int d = 0; d < k; d++)
                    for (int h = 0; h < H; h++) {
                        const double *rd = rdyt + (size_t)d * C + h * hs, *rv = rvu + (size_t)d * C + h * hs;
                        double ra = 0;
                        for (int i = 0; i < hs; i++) ra += rd[i] * vu[h * hs + i] + dyt[h * hs + i] * rv[i];
                        rdp[d * H + h] = ra;
                        rrho[d * H + h] += rp[d * H + h] * dP[h] + P[h] * ra;
                    }
            }
            for (int u = 0; u <= t; u++) {
                size_t bu = (size_t)b * T + u;
                const double *ku = key + bu * C, *rku = Rkey + bu * kC, *rp = RPt + u * kH, *rdp = RdP + u * kH;
                double *rdku = Rdkey + bu * kC, *rdvu = Rdv + bu * kC;
                for (int h = 0; h < H; h++) {
                    P[h] = att[(((size_t)b * H + h) * T + t) * T + u];
                    D[h] = dpc[(((size_t)b * H + h) * T + t) * T + u];
                }
                for (int d = 0; d < k; d++)
                    for (int h = 0; h < H; h++) {
                        size_t o = (size_t)d * C + h * hs;
                        int j = d * H + h;
                        double dS = s * P[h] * D[h];
                        double RdS = s * (rp[j] * D[h] + P[h] * (rdp[j] - rrho[j]));
                        for (int i = 0; i < hs; i++) {
                            int c = h * hs + i;
                            rdqt[o + i] += RdS * ku[c] + dS * rku[o + i];
                            rdku[o + i] += RdS * qt[c] + dS * rqt[o + i];
                            rdvu[o + i] += rp[j] * dyt[c] + P[h] * rdyt[o + i];
                        }
                    }
            }
        }
    free(RdP);
    free(rrho);
}

/* ---- GELU, two forms, each with its exact first and second derivative ------------------------
 * erf (nanoGPT's nn.GELU()):  G(x) = x Φ(x),  G' = Φ + x φ,  G'' = φ (2 − x²).
 * tanh (GPT-2's gelu_new):    G(x) = ½ x (1 + t),  t = tanh u,  u = κ (x + a x³),  κ = √(2/π), a = 0.044715;
 *   with s = 1 − t² (= tanh' u), u' = κ (1 + 3 a x²), u'' = 6 κ a x:
 *   G'  = ½ (1 + t) + ½ x s u',
 *   G'' = s u' + ½ x s (u'' − 2 t u'²)      (d/dx (s u') = s u'' − 2 t s u'²).
 * The R-kernels of both read only G' and G'' (tt_dm_gelu_rop, tt_od_gelu_rop): one set serves both. */

static double phi(double x) { return exp(-0.5 * x * x) * 0.39894228040143267794; }
static double Phi(double x) { return 0.5 * erfc(-x * 0.70710678118654752440); }
double tt_gelu(double x) { return x * Phi(x); }
static double gelu_d1(double x) { return Phi(x) + x * phi(x); }
static double gelu_d2(double x) { return phi(x) * (2 - x * x); }

#define GELU_KAPPA 0.79788456080286535588 /* √(2/π) */
#define GELU_A 0.044715
double tt_gelu_tanh(double x) { return 0.5 * x * (1 + tanh(GELU_KAPPA * (x + GELU_A * x * x * x))); }
static double gelu_tanh_d1(double x)
{
    double t = tanh(GELU_KAPPA * (x + GELU_A * x * x * x)), u1 = GELU_KAPPA * (1 + 3 * GELU_A * x * x);
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * u1;
}
static double gelu_tanh_d2(double x)
{
    double t = tanh(GELU_KAPPA * (x + GELU_A * x * x * x)), s = 1 - t * t;
    double u1 = GELU_KAPPA * (1 + 3 * GELU_A * x * x), u2 = 6 * GELU_KAPPA * GELU_A * x;
    return s * u1 + 0.5 * x * s * (u2 - 2 * t * u1 * u1);
}

/* A form: G, G', G''. */
typedef struct {
    double (*g)(double), (*d1)(double), (*d2)(double);
} gelu_form;
static const gelu_form ERF = {tt_gelu, gelu_d1, gelu_d2}, TANH = {tt_gelu_tanh, gelu_tanh_d1, gelu_tanh_d2};

static void forward(const gelu_form *f, double *out, const double *inp, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = f->g(inp[i]);
}

static void derivs(const gelu_form *f, double *d1, double *d2, const double *inp, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        d1[i] = f->d1(inp[i]);
        d2[i] = f->d2(inp[i]);
    }
}

/* dinp = G'(x) dout (overwritten). */
static void backward(const gelu_form *f, double *dinp, const double *dout, const double *inp, size_t n)
{
    for (size_t i = 0; i < n; i++) dinp[i] = f->d1(inp[i]) * dout[i];
}

/* R{out} = G'(x) R{inp}. */
static void rop_naive(const gelu_form *f, double *Rout /*(N,k,M)*/, const double *Rinp /*(N,k,M)*/,
                      const double *inp /*(N,M)*/, int N, int M, int k)
{
    double g1[M];
    for (int n = 0; n < N; n++) {
        for (int m = 0; m < M; m++) g1[m] = f->d1(inp[(size_t)n * M + m]);
        for (int d = 0; d < k; d++) {
            size_t row = ((size_t)n * k + d) * M;
            for (int m = 0; m < M; m++) Rout[row + m] = g1[m] * Rinp[row + m];
        }
    }
}

/* R{dinp} = G''(x) R{x} dout + G'(x) R{dout} (overwritten). */
static void rop_backward_naive(const gelu_form *f, double *Rdinp /*(N,k,M)*/, const double *Rdout /*(N,k,M)*/,
                               const double *dout /*(N,M)*/, const double *inp /*(N,M)*/,
                               const double *Rinp /*(N,k,M)*/, int N, int M, int k)
{
    double g1[M], g2d[M];
    for (int n = 0; n < N; n++) {
        for (int m = 0; m < M; m++) {
            double x = inp[(size_t)n * M + m];
            g1[m] = f->d1(x);
            g2d[m] = f->d2(x) * dout[(size_t)n * M + m];
        }
        for (int d = 0; d < k; d++) {
            size_t row = ((size_t)n * k + d) * M;
            for (int m = 0; m < M; m++) Rdinp[row + m] = g2d[m] * Rinp[row + m] + g1[m] * Rdout[row + m];
        }
    }
}

void tt_gelu_forward(double *out, const double *inp, size_t n) { forward(&ERF, out, inp, n); }
void tt_gelu_derivs(double *d1, double *d2, const double *inp, size_t n) { derivs(&ERF, d1, d2, inp, n); }
void tt_gelu_backward(double *dinp, const double *dout, const double *inp, size_t n)
{
    backward(&ERF, dinp, dout, inp, n);
}
void tt_gelu_rop_naive(double *Rout, const double *Rinp, const double *inp, int N, int M, int k)
{
    rop_naive(&ERF, Rout, Rinp, inp, N, M, k);
}
void tt_gelu_rop_backward_naive(double *Rdinp, const double *Rdout, const double *dout, const double *inp,
                                const double *Rinp, int N, int M, int k)
{
    rop_backward_naive(&ERF, Rdinp, Rdout, dout, inp, Rinp, N, M, k);
}

void tt_gelu_tanh_forward(double *out, const double *inp, size_t n) { forward(&TANH, out, inp, n); }
void tt_gelu_tanh_derivs(double *d1, double *d2, const double *inp, size_t n) { derivs(&TANH, d1, d2, inp, n); }
void tt_gelu_tanh_backward(double *dinp, const double *dout, const double *inp, size_t n)
{
    backward(&TANH, dinp, dout, inp, n);
}
void tt_gelu_tanh_rop_naive(double *Rout, const double *Rinp, const double *inp, int N, int M, int k)
{
    rop_naive(&TANH, Rout, Rinp, inp, N, M, k);
}
void tt_gelu_tanh_rop_backward_naive(double *Rdinp, const double *Rdout, const double *dout, const double *inp,
                                     const double *Rinp, int N, int M, int k)
{
    rop_backward_naive(&TANH, Rdinp, Rdout, dout, inp, Rinp, N, M, k);
}

/* ---- embedding: x = wte[token] + wpe[position] ------------------------------------------ */

void tt_embed_forward(double *x /*(N,C)*/, const int *inp /*(N)*/, const double *wte /*(V,C)*/,
                          const double *wpe /*(T,C)*/, int N, int T, int C)
{
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            x[(size_t)n * C + c] = wte[(size_t)inp[n] * C + c] + wpe[(size_t)(n % T) * C + c];
}

/* dwte[token] += dx, dwpe[position] += dx. */
void tt_embed_backward(double *dwte, double *dwpe, const double *dx /*(N,C)*/, const int *inp, int N, int T, int C)
{
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++) {
            dwte[(size_t)inp[n] * C + c] += dx[(size_t)n * C + c];
            dwpe[(size_t)(n % T) * C + c] += dx[(size_t)n * C + c];
        }
}

/* ---- cross-entropy of the softmax: ℓ_n = −log softmax(z_n)[tgt_n] ------------------------- */

/* probs = softmax(logits); returns Σ_n −log probs[n, tgt[n]]; per-position losses. */
double tt_crossentropy_forward(double *probs /*(N,V)*/, double *losses /*(N)*/, const double *logits /*(N,V)*/,
                                   const int *tgt, int N, int V)
{
    double sum = 0;
    for (int n = 0; n < N; n++) {
        const double *z = logits + (size_t)n * V;
        double *p = probs + (size_t)n * V, mx = z[0], s = 0;
        for (int v = 1; v < V; v++) mx = z[v] > mx ? z[v] : mx;
        for (int v = 0; v < V; v++) s += (p[v] = exp(z[v] - mx));
        for (int v = 0; v < V; v++) p[v] /= s;
        losses[n] = -(z[tgt[n]] - mx - log(s));
        sum += losses[n];
    }
    return sum;
}

/* dlogits = scale (p − onehot(tgt)). */
void tt_crossentropy_backward(double *dlogits, const double *probs, const int *tgt, double scale, int N, int V)
{
    for (int n = 0; n < N; n++)
        for (int v = 0; v < V; v++)
            dlogits[(size_t)n * V + v] = scale * (probs[(size_t)n * V + v] - (v == tgt[n]));
}
