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

    /* R workspaces, one per worker thread */
    rwork **work;
    int nwork;
    int kp_max, bc_set;      /* tt_set_hvp_blocking; 0 = automatic */
    int threads;             /* tt_set_threads; 0 = toolkit_threads() */
} tt_impl;

/* The model's state; DIE unless m is a tinytransformer. */
tt_impl *tt_impl_of(const model *m);
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

/* ---- tt_rpass.c ---- */
/* A workspace for sub-panels of at most kp directions over chunks of bc sequences. */
rwork *tt_rwork_new(const model *m, int kp, int bc);
void tt_rwork_free(rwork *w);
int tt_rwork_kp(const rwork *w);
int tt_rwork_bc(const rwork *w);
/* Sub-panels of k directions run padded to a multiple of TT_KBLOCK (zero directions). */
static inline int tt_padded(int k) { return (k + TT_KBLOCK - 1) / TT_KBLOCK * TT_KBLOCK; }
/* kk directions (kk <= the workspace's kp) into rows of HV (row stride P): the
 * rows of V (row stride P) when V is non-NULL, else the unit directions e_j ..
 * e_{j+kk-1}. Only the entries of tensors >= stop are formed (hess_cols_lower:
 * the others are mirrored from earlier panels); stop = 0: all. */
void tt_run_subpanel(model *m, rwork *w, const double *V, size_t j, int kk, int stop, double *HV);

/* ---- tt_panels.c ---- */
/* The workspaces of the worker threads freed (settings or batch changed). */
void tt_free_work(tt_impl *im);
void tt_hvp_fn(model *m, const double *V, double *HV, int k);
void tt_hess_cols_fn(model *m, size_t j0, int k, double *out);
void tt_hess_cols_lower_fn(model *m, size_t j0, int k, double *out);

#endif
