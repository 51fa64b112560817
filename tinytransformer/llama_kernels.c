/* Token-major kernels of the Llama-style model (llama_kernels.h): forward and
 * backward, which the model's loss and gradient run, and the R-operator of
 * both as plain loops written from the formulas — the test reference of the
 * direction-minor kernels in llama_dirminor.c. Layouts as tt_kernels.c's:
 * base (N,C); R-quantities (N,k,C), direction d of token n at [(n*k + d)*C];
 * R-parameters of direction d at +d*ld.
 */
#include "llama_kernels.h"
#include <math.h>
#include <string.h>

/* ---- RMSNorm: y = g ⊙ x̂, x̂ = x r, r = 1/√(mean(x²) + eps) ------------------------------------ */

void llama_rmsnorm_forward(double *out /*(N,C)*/, double *xh /*(N,C)*/, double *rstd /*(N)*/,
                           const double *inp /*(N,C)*/, const double *g /*(C)*/, double eps, int N, int C)
{
    for (int n = 0; n < N; n++) {
        const double *x = inp + (size_t)n * C;
        double ms = 0;
        for (int c = 0; c < C; c++) ms += x[c] * x[c];
        double r = 1.0 / sqrt(ms / C + eps);
        rstd[n] = r;
        for (int c = 0; c < C; c++) {
            xh[(size_t)n * C + c] = x[c] * r;
            out[(size_t)n * C + c] = g[c] * x[c] * r;
        }
    }
}

/* ∂x̂_c/∂x_j = r (δ_cj − x̂_c x̂_j / C), so dx = r (dx̂ − x̂ cc), cc = mean(dx̂ ⊙ x̂), dx̂ = dy ⊙ g. */
void llama_rmsnorm_backward(double *dinp /*(N,C) +=*/, double *dg /*(C) +=*/, const double *dout /*(N,C)*/,
                            const double *xh, const double *rstd, const double *g, int N, int C)
{
    for (int n = 0; n < N; n++) {
        const double *dy = dout + (size_t)n * C, *h = xh + (size_t)n * C;
        double cc = 0;
        for (int c = 0; c < C; c++) cc += dy[c] * g[c] * h[c];
        cc /= C;
        for (int c = 0; c < C; c++) {
            dinp[(size_t)n * C + c] += rstd[n] * (dy[c] * g[c] - h[c] * cc);
            dg[c] += dy[c] * h[c];
        }
    }
}

void llama_rmsnorm_rop_naive(double *Rout /*(N,k,C)*/, double *Rxh /*(N,k,C)*/, double *Rr /*(N,k)*/,
                             const double *Rinp /*(N,k,C)*/, const double *xh, const double *rstd, const double *g,
                             const double *Rg /*+d*ld, or NULL*/, size_t ld, int N, int C, int k)
{
    for (int n = 0; n < N; n++) {
        const double *h = xh + (size_t)n * C;
        double r = rstd[n];
        for (int d = 0; d < k; d++) {
            size_t row = ((size_t)n * k + d) * C;
            const double *rx = Rinp + row;
            double m2 = 0;
            for (int c = 0; c < C; c++) m2 += h[c] * rx[c];
            m2 /= C;
            Rr[(size_t)n * k + d] = -r * r * m2;
            for (int c = 0; c < C; c++) {
                Rxh[row + c] = r * (rx[c] - h[c] * m2);
                Rout[row + c] = g[c] * Rxh[row + c] + (Rg ? Rg[d * ld + c] * h[c] : 0);
            }
        }
    }
}

/* With dx̂ = dy ⊙ g, cc = mean(dx̂ ⊙ x̂), dx = r (dx̂ − x̂ cc):
 *   R{dx̂} = R{dy} ⊙ g + dy ⊙ R{g},  R{cc} = mean(R{dx̂} ⊙ x̂ + dx̂ ⊙ R{x̂})
 *   R{dx} += R{r} (dx̂ − x̂ cc) + r (R{dx̂} − R{x̂} cc − x̂ R{cc})
 *   R{dg} += Σ_n R{dy} ⊙ x̂ + dy ⊙ R{x̂}. */
void llama_rmsnorm_rop_backward_naive(double *Rdinp /*(N,k,C) or NULL*/, double *Rdg /*+d*ld, or NULL*/,
                                      const double *Rdout /*(N,k,C)*/, const double *dout /*(N,C)*/,
                                      const double *xh, const double *rstd, const double *Rxh /*(N,k,C)*/,
                                      const double *Rr /*(N,k)*/, const double *g, const double *Rg, size_t ld, int N,
                                      int C, int k)
{
    double *dxh = xmalloc(2 * (size_t)C * sizeof(double)), *rdxh = dxh + C;
    for (int n = 0; n < N; n++) {
        const double *dy = dout + (size_t)n * C, *h = xh + (size_t)n * C;
        double r = rstd[n], cc = 0;
        for (int c = 0; c < C; c++) cc += (dxh[c] = dy[c] * g[c]) * h[c];
        cc /= C;
        for (int d = 0; d < k; d++) {
            size_t row = ((size_t)n * k + d) * C;
            const double *rdy = Rdout + row, *rh = Rxh + row;
            if (Rdinp) {
                double rc = 0;
                for (int c = 0; c < C; c++) {
                    rdxh[c] = rdy[c] * g[c] + (Rg ? dy[c] * Rg[d * ld + c] : 0);
                    rc += rdxh[c] * h[c] + dxh[c] * rh[c];
                }
                rc /= C;
                double rr = Rr[(size_t)n * k + d];
                for (int c = 0; c < C; c++)
                    Rdinp[row + c] += rr * (dxh[c] - h[c] * cc) + r * (rdxh[c] - rh[c] * cc - h[c] * rc);
            }
            if (Rdg)
                for (int c = 0; c < C; c++) Rdg[d * ld + c] += rdy[c] * h[c] + dy[c] * rh[c];
        }
    }
    free(dxh);
}

/* ---- SwiGLU: s = silu(a) ⊙ b --------------------------------------------------------------------- */

static double sigmoid(double a) { return a >= 0 ? 1 / (1 + exp(-a)) : exp(a) / (1 + exp(a)); }
double llama_silu(double a) { return a * sigmoid(a); }
static double silu_d1(double a, double s) { return s * (1 + a * (1 - s)); }
static double silu_d2(double a, double s) { return s * (1 - s) * (2 + a * (1 - 2 * s)); }

void llama_silu_derivs(double *d1, double *d2, const double *a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double s = sigmoid(a[i]);
        d1[i] = silu_d1(a[i], s);
        d2[i] = silu_d2(a[i], s);
    }
}

void llama_swiglu_forward(double *out, const double *a, const double *b, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = llama_silu(a[i]) * b[i];
}

void llama_swiglu_backward(double *da, double *db, const double *dout, const double *a, const double *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double s = sigmoid(a[i]);
        da[i] = dout[i] * b[i] * silu_d1(a[i], s);
        db[i] = dout[i] * a[i] * s;
    }
}

void llama_swiglu_coeffs(double *s0, double *s1b, double *ds1, double *ds2b, const double *a, const double *b,
                         const double *dout, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double s = sigmoid(a[i]), d1 = silu_d1(a[i], s);
        s0[i] = a[i] * s;
        s1b[i] = d1 * b[i];
        ds1[i] = dout[i] * d1;
        ds2b[i] = dout[i] * b[i] * silu_d2(a[i], s);
    }
}

/* R{s} = silu'(a) b R{a} + silu(a) R{b}. */
void llama_swiglu_rop_naive(double *Rout /*(N,k,M)*/, const double *Ra, const double *Rb /*(N,k,M)*/,
                            const double *a, const double *b /*(N,M)*/, int N, int M, int k)
{
    for (int n = 0; n < N; n++)
        for (int d = 0; d < k; d++)
            for (int m = 0; m < M; m++) {
                size_t i = (size_t)n * M + m, r = ((size_t)n * k + d) * M + m;
                double s = sigmoid(a[i]);
                Rout[r] = silu_d1(a[i], s) * b[i] * Ra[r] + a[i] * s * Rb[r];
            }
}

/* R of da = ds b silu'(a), db = ds silu(a):
 *   R{da} = R{ds} b silu'(a) + ds R{b} silu'(a) + ds b silu''(a) R{a}
 *   R{db} = R{ds} silu(a) + ds silu'(a) R{a}. */
void llama_swiglu_rop_backward_naive(double *Rda, double *Rdb /*(N,k,M)*/, const double *Rdout /*(N,k,M)*/,
                                     const double *dout /*(N,M)*/, const double *a, const double *b,
                                     const double *Ra, const double *Rb, int N, int M, int k)
{
    for (int n = 0; n < N; n++)
        for (int d = 0; d < k; d++)
            for (int m = 0; m < M; m++) {
                size_t i = (size_t)n * M + m, r = ((size_t)n * k + d) * M + m;
                double s = sigmoid(a[i]), d1 = silu_d1(a[i], s), d2 = silu_d2(a[i], s);
                Rda[r] = Rdout[r] * b[i] * d1 + dout[i] * Rb[r] * d1 + dout[i] * b[i] * d2 * Ra[r];
                Rdb[r] = Rdout[r] * a[i] * s + dout[i] * d1 * Ra[r];
            }
}

/* ---- rotary position embedding -------------------------------------------------------------------- */

void llama_rope_tables(double *cos_t /*(T,hd/2)*/, double *sin_t, int T, int hd, double theta)
{
    int half = hd / 2;
    for (int i = 0; i < half; i++) {
        double inv_freq = pow(theta, -(2.0 * i) / hd);
        for (int t = 0; t < T; t++) {
            cos_t[(size_t)t * half + i] = cos(t * inv_freq);
            sin_t[(size_t)t * half + i] = sin(t * inv_freq);
        }
    }
}

/* One row x of heads·hd features at position t into y: rotate each pair (i, i + hd/2)
 * by the angle (sign −1: by minus the angle, the transpose). */
static void rope_row(double *y, const double *x, const double *cs, const double *sn, double sign, int heads, int hd)
{
    int half = hd / 2;
    for (int h = 0; h < heads; h++) {
        const double *a = x + h * hd, *b = a + half;
        double *ya = y + h * hd, *yb = ya + half;
        for (int i = 0; i < half; i++) {
            double c = cs[i], s = sign * sn[i];
            ya[i] = a[i] * c - b[i] * s;
            yb[i] = b[i] * c + a[i] * s;
        }
    }
}

void llama_rope(double *out /*(N,heads*hd)*/, const double *inp, const double *cos_t, const double *sin_t,
                int inverse, int N, int T, int heads, int hd)
{
    size_t C = (size_t)heads * hd, half = hd / 2;
    for (int n = 0; n < N; n++)
        rope_row(out + n * C, inp + n * C, cos_t + (n % T) * half, sin_t + (n % T) * half, inverse ? -1 : 1, heads,
                 hd);
}

void llama_rope_rop_naive(double *Rout /*(N,k,C)*/, const double *Rinp, const double *cos_t, const double *sin_t,
                          int inverse, int N, int T, int heads, int hd, int k)
{
    size_t C = (size_t)heads * hd, half = hd / 2;
    for (int n = 0; n < N; n++)
        for (int d = 0; d < k; d++) {
            size_t row = ((size_t)n * k + d) * C;
            rope_row(Rout + row, Rinp + row, cos_t + (n % T) * half, sin_t + (n % T) * half, inverse ? -1 : 1,
                     heads, hd);
        }
}

/* ---- grouped key/value heads --------------------------------------------------------------------- */

void llama_repeat_kv(double *out, const double *inp, int N, int heads, int kv_heads, int hd)
{
    int rep = heads / kv_heads;
    size_t C = (size_t)heads * hd, Ckv = (size_t)kv_heads * hd;
    for (int n = 0; n < N; n++)
        for (int h = 0; h < heads; h++)
            memcpy(out + n * C + (size_t)h * hd, inp + n * Ckv + (size_t)(h / rep) * hd, hd * sizeof(double));
}

void llama_repeat_kv_backward(double *dinp, const double *dout, int N, int heads, int kv_heads, int hd)
{
    int rep = heads / kv_heads;
    size_t C = (size_t)heads * hd, Ckv = (size_t)kv_heads * hd;
    memset(dinp, 0, (size_t)N * Ckv * sizeof(double));
    for (int n = 0; n < N; n++)
        for (int h = 0; h < heads; h++) {
            double *o = dinp + n * Ckv + (size_t)(h / rep) * hd;
            const double *x = dout + n * C + (size_t)h * hd;
            for (int i = 0; i < hd; i++) o[i] += x[i];
        }
}

/* ---- embedding (no positions) -------------------------------------------------------------------- */

void llama_embed_forward(double *x, const int *inp, const double *E, int N, int C)
{
    for (int n = 0; n < N; n++) memcpy(x + (size_t)n * C, E + (size_t)inp[n] * C, C * sizeof(double));
}

void llama_embed_backward(double *dE, const double *dx, const int *inp, int N, int C)
{
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++) dE[(size_t)inp[n] * C + c] += dx[(size_t)n * C + c];
}
