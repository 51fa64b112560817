/* llama_kernels.h — internal to tinytransformer/: the kernels the Llama-style
 * model (llama.h) adds to tt_kernels.h's linear and attention kernels:
 * RMSNorm, the SwiGLU product, rotary position embedding, the grouped
 * key/value heads and the token embedding without positions.
 *
 * Included by tinytransformer/llama*.c and tests/test_llama.c only. The
 * conventions are tt_kernels.h's, in the same two levels:
 *   - token-major, llama_kernels.c: x_forward, x_backward (base activations
 *     (N,C), N tokens) and the R-operator of both as plain loops,
 *     x_rop_naive and x_rop_backward_naive, on R-quantities (N,k,C) — token n,
 *     direction d, feature c at [(n*k + d)*C + c]; R-parameters of direction d
 *     at +d*ld; NULL R-parameters are zero. The test reference.
 *   - direction-minor, llama_dirminor.c: llama_dm_x_rop and
 *     llama_dm_x_rop_backward on (C,N,k) R-quantities (rows tt_dm_ld(N, k)
 *     apart) with token-major copies (N,C,k) (rows tt_dm_ldt(C, k) apart) for
 *     the R{dW} dgemms of the linear layer that reads them; R-parameters and
 *     R-gradients direction-minor, entry p direction d at [p*k + d]; k a
 *     multiple of TT_KBLOCK. What the model's R-pass runs.
 * Backward kernels add into their parameter gradients; whether they add into
 * or overwrite their input gradient is said per kernel.
 */
#ifndef LLAMA_KERNELS_H
#define LLAMA_KERNELS_H

#include "llama.h"
#include "tt_kernels.h"
#include <stddef.h>

/* ---- RMSNorm: y = g ⊙ x̂, x̂ = x r, r = 1/√(mean(x²) + eps) ------------------------------------ */

void llama_rmsnorm_forward(double *out, double *xh, double *rstd, const double *inp, const double *g, double eps,
                           int N, int C);
/* dx += r (dx̂ − x̂ mean(dx̂ ⊙ x̂)), dx̂ = dy ⊙ g;  dg += Σ_n dy ⊙ x̂. */
void llama_rmsnorm_backward(double *dinp, double *dg, const double *dout, const double *xh, const double *rstd,
                            const double *g, int N, int C);
/* R{x̂} = r (R{x} − x̂ mean(x̂ ⊙ R{x})), R{r} = −r² mean(x̂ ⊙ R{x}), R{y} = g ⊙ R{x̂} + R{g} ⊙ x̂
 * (overwritten; Rg NULL: zero). */
void llama_rmsnorm_rop_naive(double *Rout, double *Rxh, double *Rr /*(N,k)*/, const double *Rinp, const double *xh,
                             const double *rstd, const double *g, const double *Rg, size_t ld, int N, int C, int k);
/* R{dx} += ..., R{dg} += ... (either NULL: not wanted); Rg NULL: zero. */
void llama_rmsnorm_rop_backward_naive(double *Rdinp, double *Rdg, const double *Rdout, const double *dout,
                                      const double *xh, const double *rstd, const double *Rxh, const double *Rr,
                                      const double *g, const double *Rg, size_t ld, int N, int C, int k);

/* ---- SwiGLU product: s = silu(a) ⊙ b, silu(a) = a σ(a) ------------------------------------------ */

double llama_silu(double a);
/* silu' = σ (1 + a (1 − σ)),  silu'' = σ (1 − σ) (2 + a (1 − 2σ)). */
void llama_silu_derivs(double *d1, double *d2, const double *a, size_t n);
void llama_swiglu_forward(double *out, const double *a, const double *b, size_t n);
/* da = ds ⊙ b ⊙ silu'(a), db = ds ⊙ silu(a) (overwritten). */
void llama_swiglu_backward(double *da, double *db, const double *dout, const double *a, const double *b, size_t n);
/* The base coefficients of the R-pass, each (n): s0 = silu(a), s1b = silu'(a) b,
 * ds1 = ds silu'(a), ds2b = ds b silu''(a). Then
 *   R{s}  = s1b R{a} + silu(a) R{b}
 *   R{da} = s1b R{ds} + ds1 R{b} + ds2b R{a},  R{db} = silu(a) R{ds} + ds1 R{a}. */
void llama_swiglu_coeffs(double *s0, double *s1b, double *ds1, double *ds2b, const double *a, const double *b,
                         const double *dout, size_t n);
void llama_swiglu_rop_naive(double *Rout, const double *Ra, const double *Rb, const double *a, const double *b,
                            int N, int M, int k);
/* Overwrites Rda, Rdb. */
void llama_swiglu_rop_backward_naive(double *Rda, double *Rdb, const double *Rdout, const double *dout,
                                     const double *a, const double *b, const double *Ra, const double *Rb, int N,
                                     int M, int k);

/* ---- rotary position embedding (rotate_half), per head of hd features ------------------------------
 * cos and sin tables (T, hd/2): angle t·θ^(−2i/hd). The map is a rotation of
 * each pair (i, i + hd/2): orthogonal and linear in its input, so its
 * R-operator is itself and its backward is its transpose (the rotation by
 * −angle): llama_rope applies either (inverse 0 or 1) to any (N,C) array,
 * C = heads·hd, token n at position n % T. out and inp must not overlap. */
void llama_rope_tables(double *cos_t, double *sin_t, int T, int hd, double theta);
void llama_rope(double *out, const double *inp, const double *cos_t, const double *sin_t, int inverse, int N, int T,
                int heads, int hd);
/* The R-operator on (N,k,C) R-quantities: the same rotation of every direction. */
void llama_rope_rop_naive(double *Rout, const double *Rinp, const double *cos_t, const double *sin_t, int inverse,
                          int N, int T, int heads, int hd, int k);

/* ---- grouped key/value heads (repeat_kv): query head h reads kv head h / (heads / kv_heads) -------- */

/* out (N, heads·hd) from inp (N, kv_heads·hd). */
void llama_repeat_kv(double *out, const double *inp, int N, int heads, int kv_heads, int hd);
/* The transpose: dinp (N, kv_heads·hd) = sum over each group of dout (N, heads·hd) (overwritten). */
void llama_repeat_kv_backward(double *dinp, const double *dout, int N, int heads, int kv_heads, int hd);

/* ---- the token embedding without positions (the cross-entropy is tt_kernels.h's) ------------- */

void llama_embed_forward(double *x /*(N,C)*/, const int *inp, const double *E /*(V,C)*/, int N, int C);
void llama_embed_backward(double *dE, const double *dx, const int *inp, int N, int C);

/* ---- direction-minor R-kernels (llama_dirminor.c) ----------------------------------------------------
 * Rg, Rg_t, ... : dense R-parameters (C,k), NULL = zero; *_t outputs: the
 * token-major copies, NULL = not wanted. */
void llama_dm_rmsnorm_rop(double *Rout, double *Rout_t, double *Rxh, double *Rr /*(N,k)*/, const double *Rinp,
                          const double *xh, const double *rstd, const double *g, const double *Rg, int N, int C,
                          int k);
/* acc 0 overwrites R{dinp} (Rdinp NULL: not wanted), 1 adds; gg (C,k) += R{dg} (NULL: not wanted). */
void llama_dm_rmsnorm_rop_backward(double *Rdinp, double *Rdinp_t, int acc, double *gg, const double *Rdout,
                                   const double *dout, const double *xh, const double *rstd, const double *Rxh,
                                   const double *Rr, const double *g, const double *Rg, int N, int C, int k);
/* s0, s1b, ds1, ds2b: the base coefficients above, (N,M). */
void llama_dm_swiglu_rop(double *Rout, double *Rout_t, const double *Ra, const double *Rb, const double *s0,
                         const double *s1b, int N, int M, int k);
void llama_dm_swiglu_rop_backward(double *Rda, double *Rda_t, double *Rdb, double *Rdb_t, const double *Rdout,
                                  const double *Ra, const double *Rb, const double *s0, const double *s1b,
                                  const double *ds1, const double *ds2b, int N, int M, int k);
void llama_dm_rope(double *Rout, double *Rout_t, const double *Rinp, const double *cos_t, const double *sin_t,
                   int inverse, int N, int T, int heads, int hd, int k);
/* (heads·hd, N, k) from (kv_heads·hd, N, k), and the sum back (with its token-major copy). */
void llama_dm_repeat_kv(double *Rout, const double *Rinp, int N, int heads, int kv_heads, int hd, int k);
void llama_dm_repeat_kv_backward(double *Rdinp, double *Rdinp_t, const double *Rdout, int N, int heads,
                                 int kv_heads, int hd, int k);
/* The parameter terms of a linear layer's R-operator for dense directions
 * RW ((OC·IC, k) direction-minor), which tt_dm_linear_rop and its backward
 * (unit directions only) leave out: R{out}[o] += inp R{W}[o,:,:] and
 * R{dinp}[i] += dout R{W}[:,i,:], one dgemm per output row / input column. */
void llama_dm_linear_rparam(double *Rout /*(OC,N,k)*/, const double *inp /*(N,IC)*/, const double *RW, int N, int IC,
                            int OC, int k);
void llama_dm_linear_rparam_backward(double *Rdinp /*(IC,N,k)*/, const double *dout /*(N,OC)*/, const double *RW, int N,
                                     int IC, int OC, int k);
/* R{x} = R{E}[inp[n]] (overwritten; RE (V·C,k) NULL: zero), and R{dE}[inp[n]] += R{dx}. */
void llama_dm_embed_rop(double *Rx, const int *inp, const double *RE, int N, int C, int k);
void llama_dm_embed_rop_backward(double *gE, const double *Rdx, const int *inp, int N, int C, int k);

#endif
