/* tt_kernels.h — internal to tinytransformer/: the layer kernels behind tt.h.
 *
 * Included by the .c files of tinytransformer/, by its tests (tests/test_tt.c,
 * tests/test_ttdirminor.c) and by bench/bench_tt.c (which counts the dgemm
 * flops); nothing else: programs use the model through tt.h and core/model.h.
 *
 * Kernels are llm.c style (outputs first, sizes last) and come in three kinds:
 *   - token-major, tt_kernels.c: x_forward and x_backward, which the model's
 *     loss and gradient run, and the R-operator of both as plain loops,
 *     x_rop_naive and x_rop_backward_naive — the test reference;
 *   - direction-minor, tt_dirminor.c: tt_dm_x_rop and tt_dm_x_rop_backward,
 *     the same R-operator, fast, on panels of k directions (a multiple of 8) —
 *     what hess_cols and hess_cols_lower run on unit directions;
 *   - one direction, tt_onedir.c: tt_od_x_rop and tt_od_x_rop_backward, the
 *     R-operator of one direction vectorised over the tokens — what hvp runs
 *     on dense directions, one at a time.
 * x_rop gives R{out} from R{inp} and R{params}; x_rop_backward gives R{dinp}
 * and R{dparams} from R{dout}, the base dout and the forward R-quantities (the
 * grad-of-grad needs both R{activations} and R{upstream gradients}).
 *
 * Layouts, for N = B·T tokens (a whole batch, or one chunk of sequences of the
 * R-pass), width C (features), k directions:
 *
 *   base activations (N,C), token-major:    x[n*C + c]
 *
 *   naive R-quantities (N,k,C), token-major — the feature moves fastest:
 *       token 0: [dir 0: c0 c1 .. cC-1][dir 1: c0 .. cC-1] .. [dir k-1: ..]
 *       token 1: ...                       R{x}(n,d,c) at [(n*k + d)*C + c]
 *     R-parameters: direction d of a tensor at RW + d*ld (ld = P for a k×P
 *     panel); NULL is zero.
 *
 *   direction-minor R-quantities (C,N,k) — the direction moves fastest:
 *       feature 0: [tok 0: d0 d1 .. dk-1][tok 1: d0 .. dk-1] .. [tok N-1: ..][pad]
 *       feature 1: ...                     R{x}(c,n,d) at [c*ld + n*k + d]
 *     one row per feature, rows ld = tt_dm_ld(N, k) = N·k + 8 apart (the pad
 *     keeps rows from all falling into one L1 set). Every elementwise,
 *     LayerNorm, GELU and attention loop then runs over k contiguous
 *     directions with the base quantities broadcast, in register blocks of
 *     TT_KBLOCK, and a linear layer is one dgemm W·R{X} over all N·k columns.
 *     R-gradients are direction-minor too: entry p of a tensor, direction d
 *     at [p*k + d]; the directions are unit vectors, given as index ranges.
 *     The R{dW} dgemms read token-major copies (N,C,k) — token n, feature c,
 *     direction d at [n*ldt + c*k + d], ldt = tt_dm_ldt(C, k) — which the
 *     kernels producing an R-quantity write alongside (a *_t output; NULL:
 *     not wanted).
 */
#ifndef TT_KERNELS_H
#define TT_KERNELS_H

#include "tt.h"
#include <stddef.h>

/* ---- dgemm --------------------------------------------------------------------------- */

/* Row-major dgemm C = alpha op(A) op(B) + beta C (ta, tb: 1 = transposed) that
 * adds its flops to tt_dgemm_flops. */
void tt_dgemm(int ta, int tb, int M, int N, int K, double alpha, const double *A, int lda, const double *B, int ldb,
              double beta, double *C, int ldc);
/* Running total of the flops of every dgemm the kernels have issued (process-wide). */
long long tt_dgemm_flops(void);

/* ---- token-major forward and backward (tt_kernels.c): the model's loss and gradient ---- */

void tt_linear_forward(double *out, const double *inp, const double *W, const double *b,
                       int N, int IC, int OC);
void tt_linear_backward(double *dinp, double *dW, double *db, const double *dout, const double *inp,
                        const double *W, int N, int IC, int OC);

void tt_layernorm_forward(double *out, double *xh, double *rstd, const double *inp, const double *g,
                          const double *b, int N, int C);
void tt_layernorm_backward(double *dinp, double *dg, double *db, const double *dout, const double *xh,
                           const double *rstd, const double *g, int N, int C);
/* One row of the LayerNorm backward: dx̂ = dy ⊙ g, a = mean dx̂, cc = mean(dx̂ ⊙ x̂). */
void tt_layernorm_dxhat(double *dxh, double *a, double *cc, const double *dy, const double *g, const double *xh, int C);

/* att (B,H,T,T) holds the base softmax P, dpc (B,H,T,T) the backward's dP − ρ. */
void tt_attention_forward(double *y, double *att, const double *q, const double *key, const double *v,
                          int B, int T, int C, int H);
void tt_attention_backward(double *dq, double *dkey, double *dv, double *dpc, const double *dy,
                           const double *q, const double *key, const double *v, const double *att,
                           int B, int T, int C, int H);

double tt_gelu(double x);
void tt_gelu_forward(double *out, const double *inp, size_t n);
void tt_gelu_backward(double *dinp, const double *dout, const double *inp, size_t n);
void tt_gelu_derivs(double *d1 /*G'(x)*/, double *d2 /*G''(x)*/, const double *inp, size_t n);
/* The same for GPT-2's gelu_new, ½ x (1 + tanh(√(2/π) (x + 0.044715 x³))) (tt_config.gelu = TT_GELU_TANH). */
double tt_gelu_tanh(double x);
void tt_gelu_tanh_forward(double *out, const double *inp, size_t n);
void tt_gelu_tanh_backward(double *dinp, const double *dout, const double *inp, size_t n);
void tt_gelu_tanh_derivs(double *d1 /*G'(x)*/, double *d2 /*G''(x)*/, const double *inp, size_t n);

/* x[n] = wte[inp[n]] + wpe[n mod T]; the backward adds dx into the rows it read. */
void tt_embed_forward(double *x /*(N,C)*/, const int *inp /*(N)*/, const double *wte /*(V,C)*/,
                      const double *wpe /*(T,C)*/, int N, int T, int C);
void tt_embed_backward(double *dwte, double *dwpe, const double *dx /*(N,C)*/, const int *inp, int N, int T, int C);
/* probs = softmax(logits) row by row; returns Σ_n −log probs[n, tgt[n]] and the
 * per-position losses. The backward: dlogits = scale (probs − onehot(tgt)). */
double tt_crossentropy_forward(double *probs /*(N,V)*/, double *losses /*(N)*/, const double *logits /*(N,V)*/,
                               const int *tgt, int N, int V);
void tt_crossentropy_backward(double *dlogits, const double *probs, const int *tgt, double scale, int N, int V);

/* ---- direction-minor R-kernels (tt_dirminor.c): the R-pass ---------------------------------
 * R-inputs NULL are zero; acc: 0 overwrites the R-output, 1 adds to it;
 * gradient outputs (g*) always add. k must be a multiple of TT_KBLOCK (the
 * R-pass pads its sub-panels with zero directions): the kernels work on blocks
 * of TT_KBLOCK directions in registers. */
#define TT_KBLOCK 8
/* The R-parameters of one tensor: a panel's unit directions, or one direction's entries. */
typedef struct {
    const double *v;  /* one direction (tt_onedir.c): the tensor's entries of it; NULL: zero */
    int d0, d1;       /* a panel (tt_dirminor.c): unit directions d0..d1-1, direction d is e_(e0 + d - d0) */
    long e0;
} tt_rpar;
/* Whether a panel's R-parameters hold a unit direction. */
int tt_rpar_live(const tt_rpar *r);
/* Row strides: of the (C,N,k) rows, and of the token-major copies (N,C,k). */
size_t tt_dm_ld(int N, int k);
size_t tt_dm_ldt(int C, int k);
void tt_dm_linear_rop(double *Rout, int acc, const double *Rinp, const double *inp, const double *W, tt_rpar rW,
                      tt_rpar rb, int N, int IC, int OC, int k);
/* R{dW} in two halves, gW (OC,IC,k) and gWt (IC,OC,k); tt_dm_fold_transposed adds gWt into gW. */
void tt_dm_linear_rop_backward(double *Rdinp, int acc, double *gW, double *gWt, double *gb, const double *Rdout,
                               const double *Rdout_t, const double *dout, const double *inp, const double *Rinp_t,
                               const double *W, tt_rpar rW, int N, int IC, int OC, int k);
void tt_dm_fold_transposed(double *gW, const double *gWt, int IC, int OC, int k);
void tt_dm_layernorm_rop(double *Rout, double *Rout_t, double *Rxh, double *Rr /*(N,k)*/, const double *Rinp,
                         const double *xh, const double *rstd, const double *g, tt_rpar rg, tt_rpar rb, int N, int C,
                         int k);
void tt_dm_layernorm_rop_backward(double *Rdinp, double *Rdinp_t, int acc, double *gg, double *gb,
                                  const double *Rdout, const double *dout, const double *xh, const double *rstd,
                                  const double *Rxh, const double *Rr, const double *g, tt_rpar rg, int N, int C,
                                  int k);
/* Ratt here is (B,H,T,T,k). */
void tt_dm_attention_rop(double *Ry, double *Ry_t, double *Ratt, const double *Rq, const double *Rkey,
                         const double *Rv, const double *q, const double *key, const double *v, const double *att,
                         int B, int T, int C, int H, int k);
void tt_dm_attention_rop_backward(double *Rdq, double *Rdkey, double *Rdv, double *Rdq_t, double *Rdkey_t,
                                  double *Rdv_t, const double *Rdy, const double *dy, const double *q,
                                  const double *key, const double *v, const double *att, const double *dpc,
                                  const double *Rq, const double *Rkey, const double *Rv, const double *Ratt, int B,
                                  int T, int C, int H, int k);
/* g1 = G'(x), g2d = G''(x) ⊙ dout of the base pass, (N,M). */
void tt_dm_gelu_rop(double *Rout, double *Rout_t, const double *Rinp, const double *g1, int N, int M, int k);
void tt_dm_gelu_rop_backward(double *Rdinp, double *Rdinp_t, const double *Rdout, const double *g1,
                             const double *g2d, const double *Rinp, int N, int M, int k);
/* R{x} of the embedding (overwritten); its R-backward adds R{dx} into the
 * R-gradient rows of the tokens and positions read (either may be NULL: not
 * wanted). The cross-entropy's R: R{dlogits} = scale p ⊙ (R{z} − Σ_v p R{z}),
 * with its token-major copy. */
void tt_dm_embed_rop(double *Rx /*(C,N,k)*/, const int *inp, tt_rpar rwte, tt_rpar rwpe, int N, int T, int C, int k);
void tt_dm_embed_rop_backward(double *gwte /*(V*C,k)*/, double *gwpe /*(T*C,k)*/, const double *Rdx /*(C,N,k)*/,
                              const int *inp, int N, int T, int C, int k);
void tt_dm_crossentropy_rop(double *Rdlogits /*(V,N,k)*/, double *Rdlogits_t /*(N,V,k)*/, const double *Rlogits,
                            const double *probs /*(N,V)*/, double scale, int N, int V, int k);

/* ---- one-direction R-kernels (tt_onedir.c): the R-pass of a dense direction -----------------------
 * R-quantities (C,N), feature c of token n at [c*ld + n], ld = tt_dm_ld(N, 1)
 * (the direction-minor layout with k = 1); the loops run over the tokens.
 * Base quantities are token-major (N,·) as the base pass keeps them, or
 * feature-major copies (·,N) with row stride ldb ("T" names: xhT, doutT, g1T,
 * g2dT, probsT). R-parameters (RW, Rb, Rg, Rwte, Rwpe) and R-gradients (gW,
 * gb, gg, gwte, gwpe) are the tensor's entries in its natural layout; NULL
 * R-parameters and R-inputs are zero, NULL outputs not wanted; acc: 0
 * overwrites the R-output, 1 adds to it; gradient outputs always add. */
void tt_od_linear_rop(double *Rout, int acc, const double *Rinp, const double *inp, const double *W, const double *RW,
                      const double *Rb, size_t ld, int N, int IC, int OC);
void tt_od_linear_rop_backward(double *Rdinp, int acc, double *gW, double *gb, const double *Rdout, const double *dout,
                               const double *inp, const double *Rinp, const double *W, const double *RW, size_t ld,
                               int N, int IC, int OC);
void tt_od_layernorm_rop(double *Rout, double *Rxh, double *Rr /*(N)*/, const double *Rinp, const double *xhT,
                         const double *rstd, const double *g, const double *Rg, const double *Rb, size_t ld,
                         size_t ldb, int N, int C);
void tt_od_layernorm_rop_backward(double *Rdinp, int acc, double *gg, double *gb, const double *Rdout,
                                  const double *doutT, const double *xhT, const double *rstd, const double *Rxh,
                                  const double *Rr, const double *g, const double *Rg, size_t ld, size_t ldb, int N,
                                  int C);
/* Ratt here is (B,H,T,T): R{P} of each sequence and head. */
void tt_od_attention_rop(double *Ry, double *Ratt, const double *Rq, const double *Rkey, const double *Rv,
                         const double *q, const double *key, const double *v, const double *att, size_t ld, int B,
                         int T, int C, int H);
void tt_od_attention_rop_backward(double *Rdq, double *Rdkey, double *Rdv, const double *Rdy, const double *dy,
                                  const double *q, const double *key, const double *v, const double *att,
                                  const double *dpc, const double *Rq, const double *Rkey, const double *Rv,
                                  const double *Ratt, size_t ld, int B, int T, int C, int H);
void tt_od_gelu_rop(double *Rout, const double *Rinp, const double *g1T, size_t ld, size_t ldb, int N, int M);
void tt_od_gelu_rop_backward(double *Rdinp, const double *Rdout, const double *g1T, const double *g2dT,
                             const double *Rinp, size_t ld, size_t ldb, int N, int M);
void tt_od_embed_rop(double *Rx, const int *inp, const double *Rwte, const double *Rwpe, size_t ld, int N, int T,
                     int C);
void tt_od_embed_rop_backward(double *gwte, double *gwpe, const double *Rdx, const int *inp, size_t ld, int N, int T,
                              int C);
void tt_od_crossentropy_rop(double *Rdlogits, const double *Rlogits, const double *probsT, double scale, size_t ld,
                            size_t ldb, int N, int V);

/* ---- naive R-kernels (tt_kernels.c): the test reference, token-major loops ------------------
 * R-quantities (N,k,C); R-parameters and R-gradients of direction d at +d*ld.
 * NULL is zero for the R-parameters, for Rinp of the linear kernels and of
 * the LayerNorm R-forward, and not wanted for the outputs of the linear and
 * LayerNorm R-backward, which add; the attention and GELU kernels take every
 * input and overwrite their outputs. */
void tt_linear_rop_naive(double *Rout, const double *Rinp, const double *inp, const double *W,
                         const double *RW, const double *Rb, size_t ld, int N, int IC, int OC, int k);
void tt_linear_rop_backward_naive(double *Rdinp, double *RdW, double *Rdb, const double *Rdout,
                                  const double *dout, const double *inp, const double *Rinp,
                                  const double *W, const double *RW, size_t ld, int N, int IC, int OC, int k);
void tt_layernorm_rop_naive(double *Rout, double *Rxh, double *Rr, const double *Rinp, const double *xh,
                            const double *rstd, const double *g, const double *Rg, const double *Rb, size_t ld,
                            int N, int C, int k);
void tt_layernorm_rop_backward_naive(double *Rdinp, double *Rdg, double *Rdb, const double *Rdout,
                                     const double *dout, const double *xh, const double *rstd, const double *Rxh,
                                     const double *Rr, const double *g, const double *Rg, size_t ld, int N, int C,
                                     int k);
/* Ratt here is (B,T,T,k,H). */
void tt_attention_rop_naive(double *Ry, double *Ratt, const double *Rq, const double *Rkey, const double *Rv,
                            const double *q, const double *key, const double *v, const double *att,
                            int B, int T, int C, int H, int k);
void tt_attention_rop_backward_naive(double *Rdq, double *Rdkey, double *Rdv, const double *Rdy, const double *dy,
                                     const double *q, const double *key, const double *v, const double *att,
                                     const double *dpc, const double *Rq, const double *Rkey, const double *Rv,
                                     const double *Ratt, int B, int T, int C, int H, int k);
void tt_gelu_rop_naive(double *Rout, const double *Rinp, const double *inp, int N, int M, int k);
void tt_gelu_rop_backward_naive(double *Rdinp, const double *Rdout, const double *dout, const double *inp,
                                const double *Rinp, int N, int M, int k);
void tt_gelu_tanh_rop_naive(double *Rout, const double *Rinp, const double *inp, int N, int M, int k);
void tt_gelu_tanh_rop_backward_naive(double *Rdinp, const double *Rdout, const double *dout, const double *inp,
                                     const double *Rinp, int N, int M, int k);

#endif
