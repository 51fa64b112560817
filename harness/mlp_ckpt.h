/* mlp_ckpt — the 1-hidden-layer MLP at a training checkpoint and its Hessian
 * there (mlp_ckpt.c), with its flags. */
#ifndef HARNESS_MLP_CKPT_H
#define HARNESS_MLP_CKPT_H

#include "core/core.h"
#include "core/model.h"
#include "harness/data.h"
#include "harness/tt_ckpt.h"
#include "harness/tt_train.h"

/* MLP: the 1-hidden-layer MLP on `data` (pooled k×k, standardised), trained with
 * Adam (cosine to 10%) on batches drawn with replacement, H at the checkpoint on
 * the first eval_n test images (partition_check --model mlp). */
typedef struct {
    const char *data, *act;    /* fashion-mnist or synthetic; activation */
    int width, pool, eval_n, batch;
    long steps;
    double lr, frac;
    unsigned long seed;        /* the run: initialisation, batches */
    unsigned long data_seed;   /* the synthetic image set */
} mlp_ckpt_setup;
typedef struct {
    model *m;                  /* at the checkpoint's parameters, on the Hessian batch */
    mlp_data data;
    double *H;                 /* (P,P) */
    double *vhat;              /* (P) Adam's bias-corrected v̂ at the checkpoint (NULL untrained) */
    long step, total;
    double *X;                 /* (eval_n, in) the Hessian batch */
    int *y;
    int nsnap;                 /* the checkpoints mlp_ckpt_train kept: after steps snap_step[i] */
    long snap_step[TT_MAX_CHECKPOINTS];
    double *snap_params, *snap_vhat;   /* (nsnap, P) each */
} mlp_ckpt;
void mlp_ckpt_hessian(const mlp_ckpt_setup *s, mlp_ckpt *out);
/* The same without H; train = 0: not trained either (parameters at
 * initialisation, the Hessian batch set; the caller sets the checkpoint's). */
void mlp_ckpt_model(const mlp_ckpt_setup *s, int train, mlp_ckpt *out);
/* mlp_ckpt_model in its steps, for several checkpoints of one run: start
 * (data, the model at initialisation on the Hessian batch; step =
 * checkpoint_step(s->frac)); train (Adam from the model's parameters, keeping
 * the parameters and v̂ after each of steps[0..n-1]; the Hessian batch set
 * again after); load (checkpoint i's parameters, v̂ and step). */
void mlp_ckpt_start(const mlp_ckpt_setup *s, mlp_ckpt *out);
void mlp_ckpt_train(const mlp_ckpt_setup *s, mlp_ckpt *c, const long *steps, int n);
void mlp_ckpt_load(mlp_ckpt *c, int i);
void mlp_ckpt_free(mlp_ckpt *c);

/* The MLP's flags of the programs that take its checkpoint Hessian beside the
 * Transformer's (hessian_blocks, hetero, partition_check): data, activation,
 * width, pooling and Hessian batch; the training flags and seeds are ckpt_cli's. */
typedef struct {
    const char *data, *act;
    int width, pool, eval_n;
} mlp_cli;
void mlp_cli_init(mlp_cli *c);   /* fashion-mnist, tanh, 8 neurons, 4x4 pooling, H on 1,000 test images */
#define MLP_CLI_OPTS(c)                                                                                          \
    {"mlp-data", OPT_STRING, &(c)->data, "the MLP's data: fashion-mnist or synthetic"},                          \
    {"mlp-width", OPT_INT, &(c)->width, "the MLP's hidden neurons"},                                             \
    {"mlp-pool", OPT_INT, &(c)->pool, "the MLP's k x k average pooling of the images"},                          \
    {"mlp-act", OPT_STRING, &(c)->act, "the MLP's activation: relu, tanh, gelu or linear"},                      \
    {"mlp-eval-n", OPT_INT, &(c)->eval_n, "test images the MLP's Hessian is taken on"}
/* Range checks (one user error each), then the setup: c's model, k's training
 * (steps, lr, batch, checkpoint) and seeds. */
mlp_ckpt_setup mlp_cli_setup(const mlp_cli *c, const ckpt_cli *k);

#endif
