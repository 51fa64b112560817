/* tt_kernels.h — internal to tinytransformer/: the layer kernels behind tt.h.
 * Included by the .c files of tinytransformer/, by tests/test_tt*.c and by
 * bench/bench_tt.c (which measure the kernels); nothing else needs it —
 * programs use the model through tt.h and core/model.h.
 */
#ifndef TT_KERNELS_H
#define TT_KERNELS_H

#include "tt.h"
#include <stddef.h>

/* ---- layer kernels (llm.c style: outputs first, sizes last) -------------------------
 * Base activations are (N,C) with N = B·T rows. R-quantities of k directions are
 * token-major (N,k,C): row n, direction d at [(n*k + d)*C]. R-parameters of
 * direction d live at RW + d*ld (ld = P for a k×P panel); NULL means zero.
 * x_rop: R{out} from R{inp} and R{params}. x_rop_backward: R{dinp} (+=) and
 * R{dparams} (+=) from R{dout}, the base dout and the forward R-quantities —
 * the grad-of-grad needs both R{activations} and R{upstream gradients}.
 * Each BLAS kernel has a loop-only *_naive twin used as the test reference. */
void tt_linear_forward(double *out, const double *inp, const double *W, const double *b,
                       int N, int IC, int OC);
void tt_linear_backward(double *dinp, double *dW, double *db, const double *dout, const double *inp,
                        const double *W, int N, int IC, int OC);
void tt_linear_rop(double *Rout, const double *Rinp, const double *inp, const double *W,
                   const double *RW, const double *Rb, size_t ld, double *scratch, int N, int IC, int OC, int k);
void tt_linear_rop_naive(double *Rout, const double *Rinp, const double *inp, const double *W,
                         const double *RW, const double *Rb, size_t ld, int N, int IC, int OC, int k);
void tt_linear_rop_backward(double *Rdinp, double *RdW, double *Rdb, const double *Rdout, const double *dout,
                            const double *inp, const double *Rinp, const double *W, const double *RW,
                            size_t ld, double *scratch, int N, int IC, int OC, int k);
void tt_linear_rop_backward_naive(double *Rdinp, double *RdW, double *Rdb, const double *Rdout,
                                  const double *dout, const double *inp, const double *Rinp,
                                  const double *W, const double *RW, size_t ld, int N, int IC, int OC, int k);
/* Running total of the flops of every dgemm the kernels have issued (process-wide). */
long long tt_dgemm_flops(void);
/* Floats of scratch tt_linear_rop / tt_linear_rop_backward need. */
size_t tt_linear_scratch(int IC, int OC, int k);

void tt_layernorm_forward(double *out, double *xh, double *rstd, const double *inp, const double *g,
                          const double *b, int N, int C);
void tt_layernorm_backward(double *dinp, double *dg, double *db, const double *dout, const double *xh,
                           const double *rstd, const double *g, int N, int C);
/* One row of the LayerNorm backward: dx̂ = dy ⊙ g, a = mean dx̂, cc = mean(dx̂ ⊙ x̂). */
void tt_layernorm_dxhat(double *dxh, double *a, double *cc, const double *dy, const double *g, const double *xh, int C);
void tt_layernorm_rop(double *Rout, double *Rxh, double *Rr, const double *Rinp, const double *xh,
                      const double *rstd, const double *g, const double *Rg, const double *Rb, size_t ld,
                      int N, int C, int k);
void tt_layernorm_rop_backward(double *Rdinp, double *Rdg, double *Rdb, const double *Rdout, const double *dout,
                               const double *xh, const double *rstd, const double *Rxh, const double *Rr,
                               const double *g, const double *Rg, size_t ld, int N, int C, int k);

/* att (B,H,T,T) holds the base softmax P; Ratt (B,T,T,k,H) holds R{P}. */
void tt_attention_forward(double *y, double *att, const double *q, const double *key, const double *v,
                          int B, int T, int C, int H);
void tt_attention_backward(double *dq, double *dkey, double *dv, double *dpc, const double *dy,
                           const double *q, const double *key, const double *v, const double *att,
                           int B, int T, int C, int H);
void tt_attention_rop(double *Ry, double *Ratt, const double *Rq, const double *Rkey, const double *Rv,
                      const double *q, const double *key, const double *v, const double *att,
                      int B, int T, int C, int H, int k);
void tt_attention_rop_backward(double *Rdq, double *Rdkey, double *Rdv, const double *Rdy, const double *dy,
                               const double *q, const double *key, const double *v, const double *att,
                               const double *dpc, const double *Rq, const double *Rkey, const double *Rv,
                               const double *Ratt, int B, int T, int C, int H, int k);

double tt_gelu(double x);
void tt_gelu_forward(double *out, const double *inp, size_t n);
void tt_gelu_backward(double *dinp, const double *dout, const double *inp, size_t n);
void tt_gelu_rop(double *Rout, const double *Rinp, const double *inp, int N, int M, int k);
void tt_gelu_rop_backward(double *Rdinp, const double *Rdout, const double *dout, const double *inp,
                          const double *Rinp, int N, int M, int k);

void tt_gelu_derivs(double *d1 /*G'(x)*/, double *d2 /*G''(x)*/, const double *inp, size_t n);

/* Row-major dgemm C = alpha op(A) op(B) + beta C (ta, tb: 1 = transposed) that
 * adds its flops to tt_dgemm_flops. */
void tt_dgemm(int ta, int tb, int M, int N, int K, double alpha, const double *A, int lda, const double *B, int ldb,
              double beta, double *C, int ldc);

/* ---- the fast R-pass kernels (tt_dirminor.c): directions innermost --------------------------
 * The same R-operators as above in a direction-minor layout: an R-quantity of
 * width C over N tokens is (C,N,k), feature c, token n, direction d at
 * [c*ld + n*k + d] with ld = tt_dm_ld(N, k) >= N·k (rows padded), so the elementwise and attention loops run over the k
 * directions (vectorised) and a linear layer is W·R{X} over all N·k columns.
 * R-parameters and R-gradients are direction-minor as well: entry p of a
 * tensor, direction d at [p*k + d]. hvp, hess_cols and tt_hess_cols_lower run
 * on these; the token-major kernels above are their test references.
 * acc: 0 overwrites the R-output, 1 adds to it. Gradient outputs (g*) always add.
 * k must be a multiple of TT_KBLOCK (the R-pass pads its sub-panels with zero
 * directions): the kernels work on blocks of TT_KBLOCK directions in registers. */
#define TT_KBLOCK 8
typedef struct {
    const double *v;  /* dense R{θ} of the tensor, (size,k) direction-minor; NULL: zero */
    int d0, d1;       /* and/or unit directions d0..d1-1: direction d is e_(e0 + d - d0) of the tensor */
    long e0;
} tt_rpar;
int tt_rpar_live(const tt_rpar *r);
/* Row strides: (C,N,k) rows (one per feature) tt_dm_ld(N, k) apart; the
 * token-major copies (N,C,k) that feed the R{dW} dgemms, rows (one per token)
 * tt_dm_ldt(C, k) apart (a cache line of padding each). A *_t output NULL: not wanted. */
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
void tt_dm_gelu_rop(double *Rout, double *Rout_t, const double *Rinp, const double *g1, int N, int M, int k);
void tt_dm_gelu_rop_backward(double *Rdinp, double *Rdinp_t, const double *Rdout, const double *g1,
                             const double *g2d, const double *Rinp, int N, int M, int k);

#endif
