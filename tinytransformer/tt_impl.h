/* tt_impl.h — internal to tinytransformer/: the model's state (tt_impl) and
 * how the files that implement the tt.h model share it:
 *   tt_model.c    the tensor table, construction, the batch, the settings;
 *   tt_pass.c     the base forward and backward over the batch (the loss, the
 *                 gradient, and the activations the R-pass linearises around);
 *   tt_rpass.c    the R-workspace and the R-pass of a sub-panel of directions
 *                 over chunks of sequences (Pearlmutter's R-operator);
 *   tt_panels.c   panels of directions over worker threads: hvp, hess_cols,
 *                 hess_cols_lower.
 * The layer kernels they call are in tt_kernels.h.
 */
#ifndef TT_IMPL_H
#define TT_IMPL_H

#include <string.h>

#include "tt_kernels.h"

/* Tensors of one layer, in buffer order. */
enum {
    L_LN1W, L_LN1B, L_Q, L_QB, L_K, L_KB, L_V, L_VB, L_O, L_OB,
    L_LN2W, L_LN2B, L_FC, L_FCB, L_MP, L_MPB, L_NSLOT
};

/* Base activations and their gradients of one layer, (N,·) over the whole batch. */
typedef struct {
    double *ln1, *ln1_xh, *ln1_r, *q, *key, *v, *att, *y, *x1, *ln2, *ln2_xh, *ln2_r, *f, *gl;
    double *dln1, *dq, *dkey, *dv, *dpc, *dy, *dx1, *dln2, *df, *dgl;
    double *g1, *g2d;        /* GELU'(f) and GELU''(f) ⊙ dgl, for the R-pass */
} layer_acts;

typedef struct rwork rwork;
typedef struct rwork1 rwork1;

/* Feature-major copies (width, N) of the base quantities the one-direction
 * R-pass reads token by token (row stride N = B·T; tt_base_fm). */
typedef struct {
    double *ln1_xh, *dln1, *ln2_xh, *dln2, *g1, *g2d;
} layer_fm;
typedef struct {
    double *buf;
    layer_fm *layer;
    double *lnf_xh, *dlnf, *probs;
    int ok;                  /* those of the kept base pass */
} base_fm;

typedef struct {
    tt_config c;
    int (*slot)[L_NSLOT];    /* tensor index of each layer slot, -1 if absent */
    int t_wte, t_wpe, t_lnfw, t_lnfb, t_lm; /* t_lm -1 when tied */
    int t_head;              /* the tensor the output head reads: lm_head, or wte when tied */

    /* batch */
    int B, N;                /* N = B·T */
    int *tokens;             /* (B,T+1) */
    int *inp, *tgt;          /* (N) */

    /* base activations */
    double *abuf;
    double **res;            /* res[l] (N,C), l = 0..L: the residual stream entering layer l */
    double **dres;           /* dres[l]: gradient wrt res[l] */
    layer_acts *la;
    double *lnf, *lnf_xh, *lnf_r, *logits, *probs, *losses, *dlnf, *dlogits;
    double *gbuf;            /* parameter gradient of the base backward (P) */
    double *base_params;     /* (P) the parameters the base activations belong to */
    int base_ok;             /* base activations, their gradients and g1, g2d are those of base_params */
    int gauss_newton;        /* tt_set_gauss_newton: the R-pass gives G v instead of H v */
    base_fm fm;              /* allocated when hvp first runs on dense directions */

    /* R workspaces, one per worker thread: for sub-panels of unit directions, for one dense direction */
    rwork **work;
    int nwork;
    rwork1 **work1;
    int nwork1;
    int kp_max, bc_set;      /* tt_set_hvp_blocking; 0 = automatic */
    int threads;             /* tt_set_threads; 0 = toolkit_threads() */
} tt_impl;

/* The model's state; DIE unless m is a tinytransformer (inline here, so the
 * pass and panel files need nothing back from tt_model.c). */
static inline tt_impl *tt_impl_of(const model *m)
{
    if (!m || !m->kind || strcmp(m->kind, "tinytransformer") != 0) DIE("not a tinytransformer model");
    return m->impl;
}
/* Tensor t's entries in a buffer of P values (parameters, R-parameters,
 * gradients); NULL when the tensor is absent (t = -1). */
static inline double *tensor_in(const model *m, double *x, int t) { return t < 0 ? NULL : x + m->tensors[t].offset; }
static inline const double *ctensor_in(const model *m, const double *x, int t)
{
    return t < 0 ? NULL : x + m->tensors[t].offset;
}
/* The next n doubles of a buffer being laid out. */
static inline double *carve(double **cursor, size_t n)
{
    double *p = *cursor;
    *cursor += n;
    return p;
}

/* ---- what both R-passes share (tt_rpass.c: a sub-panel of unit directions;
 * tt_rpass1.c: one dense direction) ---- */

/* R-quantities of one layer for one chunk of sequences, (width, N, k)
 * direction-minor (tt_dirminor.c; k = 1: one direction, tt_onedir.c). In the
 * buffers struct every pointer is storage; in the live struct a pointer is NULL
 * when the quantity is identically zero in this pass (nothing upstream
 * perturbed). The token-major copies are the sub-panel pass's only. */
typedef struct {
    double *ln1, *ln1_xh, *ln1_r, *q, *key, *v, *att, *y, *ln2, *ln2_xh, *ln2_r, *f, *gl;
    double *ln1_t, *y_t, *ln2_t, *gl_t; /* token-major copies (N,·,k) of the linear layers' inputs */
} layer_racts;
typedef struct {
    const double *ln1, *ln1_xh, *ln1_r, *q, *key, *v, *att, *y, *ln2, *ln2_xh, *ln2_r, *f, *gl;
    const double *ln1_t, *y_t, *ln2_t, *gl_t;
} layer_rlive;
/* The R-quantities of a pass over one chunk: the layers' (storage), and those
 * of the final LayerNorm, the logits and the backward; rows R = tt_dm_ld(N, k)
 * long, A doubles for a layer's R{P}. */
typedef struct {
    layer_racts *ra;
    double *Rres, *Rlnf, *Rlnf_xh, *Rlnf_r, *Rlogits, *Rdlogits;
    double *Rdres, *Rdln, *Rdgl, *Rdf, *Rdy, *Rdq, *Rdkey, *Rdv;
} rquants;
/* Their doubles; their storage laid out from *cur (q->ra allocated; the
 * token-major copies of layer_racts left to the sub-panel pass). */
size_t tt_rquants_doubles(const tt_config *c, size_t R, size_t A);
void tt_rquants_carve(rquants *q, const tt_config *c, double **cur, size_t R, size_t A);

/* One tensor as an R-pass sees it (tt_bind_rtensors). An absent tensor (a
 * bias of a model without biases) has t = -1, zero R-parameters and NULL
 * pointers. */
typedef struct {
    int t;             /* tensor index */
    const double *w;   /* its parameters */
    tt_rpar r;         /* its R-parameters R{θ} in the sub-panel */
    double *g;         /* its rows of R{∇θ} = H v, (size,k) direction-minor; NULL if not wanted */
    double *gt;        /* weight matrices: the transposed half of R{dW} in Gt; NULL likewise */
} rtensor;

/* The tensors of one layer, named after the tensor table ("h<l>.attn.query" ...). */
typedef struct {
    rtensor ln1_w, ln1_b;                  /* ln_1.weight, ln_1.bias */
    rtensor query_w, query_b, key_w, key_b, value_w, value_b;
    rtensor attn_proj_w, attn_proj_b;
    rtensor ln2_w, ln2_b;                  /* ln_2.weight, ln_2.bias */
    rtensor fc_w, fc_b;                    /* mlp.fc_1 */
    rtensor mlp_proj_w, mlp_proj_b;
} layer_rtensors;

typedef struct {
    rtensor wte, wpe;
    layer_rtensors *layer;   /* per layer */
    rtensor lnf_w, lnf_b, lm_head;
} rtensors;

/* How tt_bind_rtensors binds: tensor t's R-parameters are rp[t]; its rows of
 * R{∇θ} are at G + offset·k (and the transposed half of a weight matrix's at
 * Gt + offset·k; Gt NULL: none), for the wanted tensors lo..hi only. */
typedef struct {
    const tt_rpar *rp;
    double *G, *Gt;
    int k, lo, hi;
} rbind;
/* Binds every tensor of the model into rt (rt->layer: room for every layer).
 * Tied: the head's R-parameters and R-gradient rows are wte's, but its index
 * is ntensors (in the order of the pass it comes last, after ln_f). */
void tt_bind_rtensors(const model *m, rtensors *rt, const rbind *b);
/* The base activations of a layer for one chunk: every (N,·) array from token
 * n0 on, att and dpc (B,H,T,T) from entry A0 (the chunk's first sequence). */
layer_acts tt_chunk_acts(const layer_acts *a, size_t n0, size_t A0, size_t C, size_t M);
static const rtensor no_tensor = {.t = -1};
/* The last tensor of a weight and its bias (-1: absent). */
static inline int last_of(const rtensor *W, const rtensor *b) { return b->t >= 0 ? b->t : W->t; }

/* ---- tt_pass.c ---- */
/* Activations for a batch of im->B sequences (im->abuf and its views). */
void tt_alloc_acts(tt_impl *im);
/* The base forward pass at m->params over the batch: the mean loss. */
double tt_base_forward(model *m);
/* The base backward after tt_base_forward: the gradient into g (length P,
 * overwritten); keeps the activation gradients. */
void tt_base_backward(model *m, double *g);
/* Forward + backward and GELU's derivatives, unless those of the current
 * parameters and batch are already kept. */
void tt_base_pass(model *m);
/* The feature-major copies of the kept base pass (after tt_base_pass). */
void tt_base_fm(model *m);
/* A layer's copies from token n0 on. */
static inline layer_fm tt_chunk_fm(const layer_fm *f, size_t n0)
{
    return (layer_fm){f->ln1_xh + n0, f->dln1 + n0, f->ln2_xh + n0, f->dln2 + n0, f->g1 + n0, f->g2d + n0};
}

/* ---- tt_rpass.c ---- */
/* A workspace for sub-panels of at most kp directions over chunks of bc sequences. */
rwork *tt_rwork_new(const model *m, int kp, int bc);
void tt_rwork_free(rwork *w);
int tt_rwork_kp(const rwork *w);
int tt_rwork_bc(const rwork *w);
/* Sub-panels of k directions run padded to a multiple of TT_KBLOCK (zero directions). */
static inline int tt_padded(int k) { return (k + TT_KBLOCK - 1) / TT_KBLOCK * TT_KBLOCK; }
/* The unit directions e_j .. e_{j+kk-1} (kk <= the workspace's kp) into rows
 * of HV (row stride P): columns j.. of H. Only the entries of tensors >= stop
 * are formed (hess_cols_lower: the others are mirrored from earlier panels);
 * stop = 0: all. */
void tt_run_subpanel(model *m, rwork *w, size_t j, int kk, int stop, double *HV);

/* ---- tt_rpass1.c ---- */
/* A workspace for one direction over chunks of bc sequences, and its bytes. */
rwork1 *tt_rwork1_new(const model *m, int bc);
double tt_rwork1_bytes(const tt_config *c, int bc);
void tt_rwork1_free(rwork1 *w);
int tt_rwork1_bc(const rwork1 *w);
/* hv = H v on tensors t0..t1 (their entries overwritten; the rest of hv
 * untouched), for v (length P) zero outside tensors t0..t1; t0 = 0, t1 =
 * ntensors − 1: the whole H v. After tt_base_pass and tt_base_fm. */
void tt_run_direction(model *m, rwork1 *w, const double *v, double *hv, int t0, int t1);

/* ---- tt_panels.c ---- */
/* The workspaces of the worker threads freed (settings or batch changed). */
void tt_free_work(tt_impl *im);
void tt_hvp_fn(model *m, const double *V, double *HV, int k);
void tt_hvp_tensors_fn(model *m, const double *V, double *HV, int k, const int *t0, const int *t1);
void tt_hess_cols_fn(model *m, size_t j0, int k, double *out);
void tt_hess_cols_lower_fn(model *m, size_t j0, int k, double *out);

#endif
