/* The Llama-style model's own R-kernels in the direction-minor layout of
 * tt_kernels.h (R-quantities (C,N,k), feature c token n direction d at
 * [c*ld + n*k + d], ld = tt_dm_ld(N, k); token-major copies (N,C,k) at
 * [n*ldt + c*k + d], ldt = tt_dm_ldt(C, k)): the innermost loops run over the
 * k contiguous directions with the base quantities broadcast. The formulas
 * are those of the naive references in llama_kernels.c, which
 * tests/test_llama.c compares these with.
 */
#include "llama_kernels.h"
#include <string.h>

static void check_k(int k)
{
    if (k < TT_KBLOCK || k % TT_KBLOCK) DIE("direction count %d is not a positive multiple of %d", k, TT_KBLOCK);
}

/* ---- RMSNorm ------------------------------------------------------------------------------------- */

void llama_dm_rmsnorm_rop(double *Rout /*(C,N,k)*/, double *Rout_t /*(N,C,k) or NULL*/, double *Rxh /*(C,N,k)*/,
                          double *Rr /*(N,k)*/, const double *Rinp /*(C,N,k)*/, const double *xh /*(N,C)*/,
                          const double *rstd /*(N)*/, const double *g /*(C)*/, const double *Rg /*(C,k) or NULL*/,
                          int N, int C, int k)
{
    check_k(k);
    size_t RN = tt_dm_ld(N, k), LT = tt_dm_ldt(C, k);
    double *m2 = xmalloc((size_t)k * sizeof(double));
    for (int n = 0; n < N; n++) {
        const double *h = xh + (size_t)n * C;
        size_t nk = (size_t)n * k;
        double r = rstd[n];
        memset(m2, 0, (size_t)k * sizeof(double));
        for (int c = 0; c < C; c++) {
            const double *restrict x = Rinp + c * RN + nk;
            for (int d = 0; d < k; d++) m2[d] += h[c] * x[d];
        }
        for (int d = 0; d < k; d++) {
            m2[d] /= C;
            Rr[nk + d] = -r * r * m2[d];
        }
        for (int c = 0; c < C; c++) {
            const double *restrict x = Rinp + c * RN + nk;
            double *restrict rh = Rxh + c * RN + nk, *restrict o = Rout + c * RN + nk;
            for (int d = 0; d < k; d++) {
                rh[d] = r * (x[d] - h[c] * m2[d]);
                o[d] = g[c] * rh[d];
            }
            if (Rg)
                for (int d = 0; d < k; d++) o[d] += h[c] * Rg[(size_t)c * k + d];
            if (Rout_t) memcpy(Rout_t + n * LT + (size_t)c * k, o, (size_t)k * sizeof(double));
        }
    }
    free(m2);
}

void llama_dm_rmsnorm_rop_backward(double *Rdinp /*(C,N,k) or NULL*/, double *Rdinp_t /*(N,C,k) or NULL*/, int acc,
                                   double *gg /*(C,k) or NULL*/, const double *Rdout /*(C,N,k)*/,
                                   const double *dout /*(N,C)*/, const double *xh /*(N,C)*/,
                                   const double *rstd /*(N)*/, const double *Rxh /*(C,N,k)*/,
                                   const double *Rr /*(N,k)*/, const double *g /*(C)*/,
                                   const double *Rg /*(C,k) or NULL*/, int N, int C, int k)
{
    check_k(k);
    size_t RN = tt_dm_ld(N, k), LT = tt_dm_ldt(C, k);
    if (gg) /* R{dg} += Σ_n R{dy} ⊙ x̂ + dy ⊙ R{x̂} */
        for (int c = 0; c < C; c++) {
            double *restrict o = gg + (size_t)c * k;
            for (int n = 0; n < N; n++) {
                size_t at = c * RN + (size_t)n * k;
                const double *restrict rdy = Rdout + at, *restrict rh = Rxh + at;
                double h = xh[(size_t)n * C + c], dy = dout[(size_t)n * C + c];
                for (int d = 0; d < k; d++) o[d] += rdy[d] * h + dy * rh[d];
            }
        }
    if (!Rdinp) return;
    double *rdxh = xmalloc(((size_t)C * k + k + C) * sizeof(double));
    double *rc = rdxh + (size_t)C * k, *dxh = rc + k;
    for (int n = 0; n < N; n++) {
        const double *dy = dout + (size_t)n * C, *h = xh + (size_t)n * C;
        size_t nk = (size_t)n * k;
        double r = rstd[n], cc = 0;
        for (int c = 0; c < C; c++) cc += (dxh[c] = dy[c] * g[c]) * h[c];
        cc /= C;
        memset(rc, 0, (size_t)k * sizeof(double));
        for (int c = 0; c < C; c++) { /* R{dx̂} and R{cc} */
            const double *restrict rdy = Rdout + c * RN + nk, *restrict rh = Rxh + c * RN + nk;
            double *restrict q = rdxh + (size_t)c * k;
            for (int d = 0; d < k; d++) q[d] = rdy[d] * g[c];
            if (Rg)
                for (int d = 0; d < k; d++) q[d] += dy[c] * Rg[(size_t)c * k + d];
            for (int d = 0; d < k; d++) rc[d] += q[d] * h[c] + dxh[c] * rh[d];
        }
        for (int d = 0; d < k; d++) rc[d] /= C;
        for (int c = 0; c < C; c++) {
            const double *restrict q = rdxh + (size_t)c * k, *restrict rh = Rxh + c * RN + nk, *restrict rr = Rr + nk;
            double *restrict o = Rdinp + c * RN + nk;
            double base = dxh[c] - h[c] * cc;
            for (int d = 0; d < k; d++) {
                double v = rr[d] * base + r * (q[d] - rh[d] * cc - h[c] * rc[d]);
                o[d] = acc ? o[d] + v : v;
            }
            if (Rdinp_t) memcpy(Rdinp_t + n * LT + (size_t)c * k, o, (size_t)k * sizeof(double));
        }
    }
    free(rdxh);
}

/* ---- SwiGLU ---------------------------------------------------------------------------------------- */

void llama_dm_swiglu_rop(double *Rout /*(M,N,k)*/, double *Rout_t /*(N,M,k)*/, const double *Ra, const double *Rb,
                         const double *s0, const double *s1b /*(N,M)*/, int N, int M, int k)
{
    check_k(k);
    size_t RN = tt_dm_ld(N, k), LT = tt_dm_ldt(M, k);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            size_t row = m * RN + (size_t)n * k, i = (size_t)n * M + m;
            const double *restrict ra = Ra + row, *restrict rb = Rb + row;
            double *restrict o = Rout + row, *restrict ot = Rout_t + n * LT + (size_t)m * k;
            double ca = s1b[i], cb = s0[i];
            for (int d = 0; d < k; d++) ot[d] = o[d] = ca * ra[d] + cb * rb[d];
        }
}

void llama_dm_swiglu_rop_backward(double *Rda, double *Rda_t, double *Rdb, double *Rdb_t, const double *Rdout,
                                  const double *Ra, const double *Rb, const double *s0, const double *s1b,
                                  const double *ds1, const double *ds2b, int N, int M, int k)
{
    check_k(k);
    size_t RN = tt_dm_ld(N, k), LT = tt_dm_ldt(M, k);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            size_t row = m * RN + (size_t)n * k, i = (size_t)n * M + m, t = n * LT + (size_t)m * k;
            const double *restrict rdo = Rdout + row, *restrict ra = Ra + row, *restrict rb = Rb + row;
            double *restrict oa = Rda + row, *restrict ob = Rdb + row;
            double *restrict ta = Rda_t + t, *restrict tb = Rdb_t + t;
            double c1 = s1b[i], c2 = ds1[i], c3 = ds2b[i], c0 = s0[i];
            for (int d = 0; d < k; d++) {
                ta[d] = oa[d] = c1 * rdo[d] + c2 * rb[d] + c3 * ra[d];
                tb[d] = ob[d] = c0 * rdo[d] + c2 * ra[d];
            }
        }
}

/* ---- rotary, grouped heads --------------------------------------------------------------------------- */

void llama_dm_rope(double *Rout, double *Rout_t /*or NULL*/, const double *Rinp, const double *cos_t,
                   const double *sin_t, int inverse, int N, int T, int heads, int hd, int k)
{
    check_k(k);
    int half = hd / 2, C = heads * hd;
    size_t RN = tt_dm_ld(N, k), LT = tt_dm_ldt(C, k);
    double sign = inverse ? -1 : 1;
    for (int h = 0; h < heads; h++)
        for (int i = 0; i < half; i++) {
            size_t ca = (size_t)h * hd + i, cb = ca + half;
            for (int n = 0; n < N; n++) {
                double c = cos_t[(size_t)(n % T) * half + i], s = sign * sin_t[(size_t)(n % T) * half + i];
                const double *restrict a = Rinp + ca * RN + (size_t)n * k, *restrict b = Rinp + cb * RN + (size_t)n * k;
                double *restrict ya = Rout + ca * RN + (size_t)n * k, *restrict yb = Rout + cb * RN + (size_t)n * k;
                for (int d = 0; d < k; d++) {
                    ya[d] = a[d] * c - b[d] * s;
                    yb[d] = b[d] * c + a[d] * s;
                }
                if (Rout_t) {
                    memcpy(Rout_t + n * LT + ca * k, ya, (size_t)k * sizeof(double));
                    memcpy(Rout_t + n * LT + cb * k, yb, (size_t)k * sizeof(double));
                }
            }
        }
}

void llama_dm_repeat_kv(double *Rout, const double *Rinp, int N, int heads, int kv_heads, int hd, int k)
{
    int rep = heads / kv_heads;
    size_t RN = tt_dm_ld(N, k);
    for (int h = 0; h < heads; h++)
        memcpy(Rout + (size_t)h * hd * RN, Rinp + (size_t)(h / rep) * hd * RN, (size_t)hd * RN * sizeof(double));
}

void llama_dm_repeat_kv_backward(double *Rdinp, double *Rdinp_t, const double *Rdout, int N, int heads, int kv_heads,
                                 int hd, int k)
{
    int rep = heads / kv_heads;
    size_t RN = tt_dm_ld(N, k), LT = tt_dm_ldt(kv_heads * hd, k), NK = (size_t)N * k;
    for (int j = 0; j < kv_heads; j++)
        for (int i = 0; i < hd; i++) {
            double *restrict o = Rdinp + ((size_t)j * hd + i) * RN;
            memcpy(o, Rdout + ((size_t)j * rep * hd + i) * RN, NK * sizeof(double));
            for (int h = j * rep + 1; h < (j + 1) * rep; h++) {
                const double *restrict x = Rdout + ((size_t)h * hd + i) * RN;
                for (size_t e = 0; e < NK; e++) o[e] += x[e];
            }
            if (Rdinp_t)
                for (int n = 0; n < N; n++)
                    memcpy(Rdinp_t + n * LT + ((size_t)j * hd + i) * k, o + (size_t)n * k, (size_t)k * sizeof(double));
        }
}

/* ---- the parameter terms of a linear layer -------------------------------------------------------- */

void llama_dm_linear_rparam(double *Rout, const double *inp, const double *RW, int N, int IC, int OC, int k)
{
    check_k(k);
    size_t RN = tt_dm_ld(N, k);
    for (int o = 0; o < OC; o++) /* (N,k) += inp (N,IC) · R{W}[o,:,:] (IC,k) */
        tt_dgemm(0, 0, N, k, IC, 1.0, inp, IC, RW + (size_t)o * IC * k, k, 1.0, Rout + o * RN, k);
}

void llama_dm_linear_rparam_backward(double *Rdinp, const double *dout, const double *RW, int N, int IC, int OC, int k)
{
    check_k(k);
    size_t RN = tt_dm_ld(N, k);
    for (int i = 0; i < IC; i++) /* (N,k) += dout (N,OC) · R{W}[:,i,:] (OC,k) */
        tt_dgemm(0, 0, N, k, OC, 1.0, dout, OC, RW + (size_t)i * k, IC * k, 1.0, Rdinp + i * RN, k);
}

/* ---- embedding ------------------------------------------------------------------------------------------ */

void llama_dm_embed_rop(double *Rx /*(C,N,k)*/, const int *inp, const double *RE /*(V*C,k) or NULL*/, int N, int C,
                        int k)
{
    size_t RN = tt_dm_ld(N, k);
    for (int c = 0; c < C; c++)
        for (int n = 0; n < N; n++) {
            double *restrict r = Rx + c * RN + (size_t)n * k;
            if (RE) memcpy(r, RE + ((size_t)inp[n] * C + c) * k, (size_t)k * sizeof(double));
            else memset(r, 0, (size_t)k * sizeof(double));
        }
}

void llama_dm_embed_rop_backward(double *gE /*(V*C,k)*/, const double *Rdx /*(C,N,k)*/, const int *inp, int N, int C,
                                 int k)
{
    size_t RN = tt_dm_ld(N, k);
    for (int c = 0; c < C; c++)
        for (int n = 0; n < N; n++) {
            const double *restrict r = Rdx + c * RN + (size_t)n * k;
            double *restrict g = gE + ((size_t)inp[n] * C + c) * k;
            for (int d = 0; d < k; d++) g[d] += r[d];
        }
}
