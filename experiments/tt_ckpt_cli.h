/* tt_ckpt_cli.h — the command-line options of the tiny-Transformer checkpoint
 * Hessian (tinytransformer/tt.h, tt_ckpt_hessian) shared by fig6, table_kappa
 * and partition_check, so that the three programs take the same flags and, with
 * the same flags, analyse the same H. Header-only.
 *
 * Scales (the paper does not state how long its small Transformer was trained;
 * Fig. 6's caption says "at 1% training step", its text "after 1 training step"):
 *   quick: AdamW lr 1e-3 (cosine to 10%, no warm-up, β 0.9/0.999, weight decay
 *          0.1: tt_train's defaults, and the optimizer of the nanoGPT-style
 *          code base the paper names), 1,000 steps of 64 sequences, checkpoint
 *          at 1% = step 10; H on 256 fixed sequences (2,048 predictions);
 *   paper: the same training; H on 1,024 fixed sequences (8,192 predictions).
 *          (The paper gives no training length, so a longer run would not be
 *          closer to it; a larger Hessian batch is closer to the population H.)
 */
#ifndef TT_CKPT_CLI_H
#define TT_CKPT_CLI_H

#include "core/core.h"
#include "tinytransformer/tt.h"
#include <string.h>

typedef struct {
    const char *scale, *text;
    long steps, seed, data_seed;
    int batch, hess_batch, panel, order, successors;
    int V, C, heads, M, T, layers, bias;
    double lr, frac;
} ckpt_cli;

static inline void ckpt_cli_init(ckpt_cli *c)
{
    tt_config d = tt_defaults();
    memset(c, 0, sizeof *c);
    c->scale = "quick";
    c->seed = 1;
    c->data_seed = 1;
    c->batch = 64;
    c->panel = 64;
    c->order = 2;
    c->successors = 2;
    c->V = d.V, c->C = d.C, c->heads = d.heads, c->M = d.M, c->T = d.T, c->layers = d.layers, c->bias = d.bias;
    c->steps = 1000;
    c->lr = 1e-3;
    c->frac = 0.01;
}

#define CKPT_CLI_OPTS(c)                                                                                         \
    {"scale", OPT_STRING, &(c)->scale, "quick (H on 256 sequences) or paper (H on 1,024); both train 1,000 steps"}, \
    {"steps", OPT_LONG, &(c)->steps, "AdamW training steps"},                                                    \
    {"lr", OPT_DOUBLE, &(c)->lr, "AdamW peak learning rate (cosine decay to 10%, weight decay 0.1)"},           \
    {"batch", OPT_INT, &(c)->batch, "training sequences per step"},                                              \
    {"checkpoint", OPT_DOUBLE, &(c)->frac, "fraction of training at which H is taken (paper Fig. 6: 1%)"},      \
    {"hess-batch", OPT_INT, &(c)->hess_batch, "fixed sequences the Hessian is taken on (0: from --scale)"},      \
    {"panel", OPT_INT, &(c)->panel, "Hessian columns per panel"},                                                \
    {"V", OPT_INT, &(c)->V, "vocabulary size"},                                                                  \
    {"C", OPT_INT, &(c)->C, "embedding width"},                                                                  \
    {"heads", OPT_INT, &(c)->heads, "attention heads (divides C)"},                                              \
    {"M", OPT_INT, &(c)->M, "MLP hidden width"},                                                                 \
    {"T", OPT_INT, &(c)->T, "context length"},                                                                   \
    {"layers", OPT_INT, &(c)->layers, "Transformer blocks"},                                                     \
    {"bias", OPT_INT, &(c)->bias, "1: biases in linear layers and LayerNorm"},                                   \
    {"order", OPT_INT, &(c)->order, "Markov source: the next token depends on this many previous ones"},        \
    {"successors", OPT_INT, &(c)->successors, "Markov source: likely next tokens per context"},                  \
    {"text", OPT_STRING, &(c)->text, "train on the bytes of this text file instead of the Markov source"},       \
    {"data-seed", OPT_LONG, &(c)->data_seed, "seed of the Markov chain"},                                        \
    {"seed", OPT_LONG, &(c)->seed, "seed of the initialisation and of the training batches"}

/* The scale's Hessian batch unless --hess-batch is given, range checks, and the setup. */
static inline tt_ckpt_setup ckpt_cli_setup(ckpt_cli *c)
{
    int paper = strcmp(c->scale, "paper") == 0;
    if (!paper && strcmp(c->scale, "quick") != 0) die_user("--scale must be quick or paper (got '%s')", c->scale);
    if (c->hess_batch == 0) c->hess_batch = paper ? 1024 : 256;
    if (c->steps < 1) die_user("--steps must be >= 1 (got %ld)", c->steps);
    if (c->seed < 0) die_user("--seed must be >= 0 (got %ld)", c->seed);
    if (c->data_seed < 0) die_user("--data-seed must be >= 0 (got %ld)", c->data_seed);
    if (!(c->frac > 0 && c->frac <= 1)) die_user("--checkpoint must be a fraction in (0, 1] (got %g)", c->frac);
    tt_ckpt_setup s = tt_ckpt_defaults();
    s.cfg = (tt_config){.V = c->V, .C = c->C, .heads = c->heads, .M = c->M, .layers = c->layers, .T = c->T,
                        .bias = c->bias, .seed = (unsigned long)c->seed};
    s.order = c->order;
    s.successors = c->successors;
    s.data_seed = (unsigned long)c->data_seed;
    s.text = c->text;
    s.train.steps = c->steps;
    s.train.lr = c->lr;
    s.train.batch = c->batch;
    s.train.nfracs = 1;
    s.train.fracs[0] = c->frac;
    s.train.seed = (unsigned long)c->seed + 1;
    s.hess_batch = c->hess_batch;
    s.panel = c->panel;
    tt_ckpt_check(&s);
    /* the data source now, so that a bad file or setting stops before any output */
    tt_data *d = c->text ? tt_data_text(c->text, s.cfg.V, s.cfg.T) : tt_data_markov(s.cfg.V, s.order, s.successors, s.data_seed);
    tt_data_free(d);
    return s;
}

#endif
