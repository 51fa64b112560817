/* tt_ckpt — the tiny Transformer at a training checkpoint and its Hessian there
 * (tt_ckpt.c), with the command line the programs share for it. */
#ifndef HARNESS_TT_CKPT_H
#define HARNESS_TT_CKPT_H

#include "core/core.h"
#include "core/model.h"
#include "harness/data.h"
#include "harness/tt_train.h"
#include "tinytransformer/tt.h"

/* What fig6, table_kappa, partition_check and the model registry share:
 * build the model
 * and the token source, train with tt_train into train_dir (checkpoint at
 * train.fracs[0]), read the checkpoint's parameters and v̂ back from their .npy
 * files, set a fixed batch of hess_batch sequences (the held-out stream of the
 * data seed, independent of the training batches) and compute the full H there
 * with the engine's symmetric path. Deterministic: the same setup gives the same H. */
typedef struct {
    tt_config cfg;             /* tt_defaults() */
    int order, successors;     /* Markov source: 2 and 2 (the next token needs attention) */
    unsigned long data_seed;   /* the data: Markov chain and the Hessian batch (1) */
    tt_data_opts data;         /* the token source (markov); cfg.V is its vocabulary */
    tt_train_opts train;       /* tt_train_defaults(): AdamW, checkpoint fracs[0] = 0.01 */
    int hess_batch;            /* sequences in the Hessian batch (256): the first of the held-out stream */
    int panel;                 /* Hessian columns per panel (64) */
    const char *model_path;    /* a nanoGPT-layout .safetensors or a GPT-2 checkpoint (tt_load_file) to analyse
                                  instead of training (NULL) */
    const char *model_config;  /* its config JSON (NULL: the file's metadata) */
    const model *file;         /* that file's model as ckpt_cli_setup read it (borrowed: the ckpt_cli's);
                                  NULL: tt_ckpt_start reads model_path itself */
    const char *save_path;     /* the checkpoint's parameters written here in nanoGPT's layout (tt_ckpt_hessian;
                                  table_kappa and hetero: --checkpoint's) */
} tt_ckpt_setup;
typedef struct {
    model *m;                  /* at the checkpoint's parameters, Hessian batch set */
    tt_data *data;
    double *H;                 /* (P,P) row-major */
    double *vhat;              /* (P) AdamW's bias-corrected v̂ at the checkpoint */
    int *tokens;               /* (hess_batch, T+1) the Hessian batch */
    long step;                 /* the checkpoint step */
    double loss0;              /* Hessian-batch loss at initialisation */
    double loss;               /* Hessian-batch loss at the checkpoint */
    double final_loss;         /* training-batch loss after all steps */
    double train_seconds, hess_seconds;
} tt_ckpt;
tt_ckpt_setup tt_ckpt_defaults(void);
/* User error naming the value when a setting is out of range. */
void tt_ckpt_check(const tt_ckpt_setup *s);
void tt_ckpt_hessian(const tt_ckpt_setup *s, const char *train_dir, tt_ckpt *out);
void tt_ckpt_free(tt_ckpt *c);
/* A model trained elsewhere (model_path): tt_ckpt_start copies the file's
 * model (s->file) or reads the file (its configuration is the setup's:
 * ckpt_cli_setup takes it from the file);
 * tt_ckpt_train trains nothing: it estimates v̂ at the model's parameters as
 * the mean of g² over TT_VHAT_BATCHES training batches of train.batch sequences
 * (Adam's v with β2 → 1 and the parameters held fixed; an AdamW run's v̂ also
 * remembers earlier parameters), step 0; tt_ckpt_load keeps the parameters.
 * tt_ckpt_hessian in its steps, for H at several checkpoints of one training
 * run (block_structure): tt_ckpt_start builds the model and the data and sets
 * the Hessian batch (out->m at its initialisation, loss0); tt_ckpt_train
 * trains with every checkpoint of s->train (die_diverged if training stops
 * before the last); tt_ckpt_load reads the parameters and v̂ of the checkpoint
 * after `step` back from train_dir; tt_ckpt_take_hessian computes H (and loss)
 * at the model's current parameters on the Hessian batch, replacing c->H.
 * tt_ckpt_hessian = start, train, load at fracs[0], take_hessian. */
void tt_ckpt_start(const tt_ckpt_setup *s, tt_ckpt *out);
/* What any Transformer's checkpoint needs (the tiny GPT's here, the Llama's in
 * model_llama.c), on core/model.h's sequence models: the Hessian batch,
 * hess_batch sequences of T+1 tokens from the held-out stream of data_seed
 * (malloc'ed; the same whatever the training); v̂ of a model trained elsewhere,
 * the mean of g² over TT_VHAT_BATCHES batches of B training sequences drawn
 * with seed at m's parameters (m's batch is changed); and a training run's
 * checkpoint after `step` read from train_dir: the parameters into m, v̂
 * returned (malloc'ed). */
int *ckpt_hess_tokens(const tt_data *d, unsigned long data_seed, int hess_batch, int T);
void ckpt_estimate_vhat(model *m, const tt_data *d, int B, unsigned long seed, double *vhat);
double *ckpt_read_step(model *m, const char *train_dir, long step);
void tt_ckpt_train(const tt_ckpt_setup *s, const char *train_dir, tt_ckpt *c);
void tt_ckpt_load(const tt_ckpt_setup *s, const char *train_dir, long step, tt_ckpt *c);
void tt_ckpt_take_hessian(const tt_ckpt_setup *s, tt_ckpt *c);

/* The command line of the Transformer checkpoint Hessian, shared by fig6,
 * table_kappa and partition_check so that the same flags analyse the same H.
 * Scales (the paper does not state how long its small Transformer was trained;
 * Fig. 6's caption says "at 1% training step", its text "after 1 training step"):
 *   quick: AdamW lr 1e-3 (cosine to 10%, no warm-up, β 0.9/0.999, weight decay
 *          0.1), 1,000 steps of 64 sequences, checkpoint at 1% = step 10; H on
 *          256 fixed sequences (2,048 predictions);
 *   paper: the same training; H on 1,024 fixed sequences (8,192 predictions).
 *          (The paper gives no training length, so a longer run would not be
 *          closer to it; a larger Hessian batch is closer to the population H.) */
#define TT_VHAT_BATCHES 64
typedef struct {
    const char *scale;
    tt_data_opts data;
    const char *model_path, *model_config, *save_path;
    model *file;               /* --model FILE as read, once, by ckpt_cli_setup (ckpt_cli_free frees it) */
    long steps, seed, data_seed;
    int batch, hess_batch, panel, order, successors;
    int V, C, heads, M, T, layers, bias;
    double lr, frac;
} ckpt_cli;
void ckpt_cli_init(ckpt_cli *c);
#define CKPT_CLI_OPTS(c)                                                                                         \
    CKPT_CLI_RUN_OPTS(c),                                                                                        \
    {"checkpoint", OPT_DOUBLE, &(c)->frac, "fraction of training at which H is taken (paper Fig. 6: 1%)"},       \
    {"save-safetensors", OPT_STRING, &(c)->save_path, "also write the checkpoint's parameters here, in nanoGPT's " \
                                                      "layout (.safetensors)"}
/* --model FILE: analyse a model trained elsewhere (programs whose --model names a kind add only --model-config). */
#define CKPT_CLI_MODEL_OPT(c)                                                                                    \
    {"model", OPT_STRING, &(c)->model_path, "a checkpoint in nanoGPT's layout (.safetensors) or a Hugging Face "  \
                                            "GPT-2 folder (model.safetensors, config.json): H of that model, "    \
                                            "no training (v-hat estimated from 64 batches; docs/real_text.md)"},  \
    CKPT_CLI_MODEL_CONFIG_OPT(c)
#define CKPT_CLI_MODEL_CONFIG_OPT(c)                                                                             \
    {"model-config", OPT_STRING, &(c)->model_config, "with --model FILE: its config JSON (nanoGPT's GPTConfig keys " \
                                                     "when the file's metadata lacks n_head; a GPT-2 or Llama " \
                                                     "file's config.json)"}
/* The same without --checkpoint, for a program that takes H at several steps. */
#define CKPT_CLI_RUN_OPTS(c)                                                                                     \
    {"scale", OPT_STRING, &(c)->scale, "quick (H on 256 sequences) or paper (H on 1,024); both train 1,000 steps"}, \
    {"steps", OPT_LONG, &(c)->steps, "AdamW training steps"},                                                    \
    {"lr", OPT_DOUBLE, &(c)->lr, "AdamW peak learning rate (cosine decay to 10%, weight decay 0.1)"},           \
    {"batch", OPT_INT, &(c)->batch, "training sequences per step"},                                              \
    {"hess-batch", OPT_INT, &(c)->hess_batch, "fixed sequences the Hessian is taken on (0: from --scale)"},      \
    {"panel", OPT_INT, &(c)->panel, "Hessian columns per panel"},                                                \
    {"V", OPT_INT, &(c)->V, "vocabulary size of the Markov source (text: --vocab-size)"},                        \
    {"C", OPT_INT, &(c)->C, "embedding width"},                                                                  \
    {"heads", OPT_INT, &(c)->heads, "attention heads (divides C)"},                                              \
    {"M", OPT_INT, &(c)->M, "MLP hidden width"},                                                                 \
    {"T", OPT_INT, &(c)->T, "context length"},                                                                   \
    {"layers", OPT_INT, &(c)->layers, "Transformer blocks"},                                                     \
    {"bias", OPT_INT, &(c)->bias, "1: biases in linear layers and LayerNorm"},                                   \
    {"order", OPT_INT, &(c)->order, "Markov source: the next token depends on this many previous ones"},        \
    {"successors", OPT_INT, &(c)->successors, "Markov source: likely next tokens per context"},                  \
    TT_DATA_OPTS((c)->data),                                                                                     \
    {"data-seed", OPT_LONG, &(c)->data_seed, "the data's seed: Markov chain and Hessian batch"},                 \
    {"seed", OPT_LONG, &(c)->seed, "the run's seed: initialisation, training batches, baselines"}
/* The scale's Hessian batch unless --hess-batch is given, range checks, the
 * data source and --model's file opened once (so a bad file stops before any
 * output; text sets V to its vocabulary's size, a file its sizes), and the
 * setup. The file's model is kept in c->file, which the setup borrows. */
tt_ckpt_setup ckpt_cli_setup(ckpt_cli *c);
void ckpt_cli_free(ckpt_cli *c);
/* Its first part, the checks of the run flags every model shares (--scale,
 * --steps, --seed, --data-seed, --checkpoint; --hess-batch from --scale). */
void ckpt_cli_check_run(ckpt_cli *c);

/* The eight parameter blocks of paper Fig. 6 (fig6, block_structure): key
 * ("query", ..., "mlp_fc1", "embed", "output"), and the split the paper finds
 * in each (heads for query/key; output neurons, tokens for embed/output). In a
 * tied model embed and output are the one tensor wte. */
#define FIG6_NBLOCKS 8
typedef struct {
    const char *key;
    split_kind claimed;
} fig6_block;
extern const fig6_block FIG6_BLOCKS[FIG6_NBLOCKS];
/* The tensor of Fig. 6 block k in Transformer block `layer`, by role: the
 * first of that role in the layer (the Llama's gate_proj for mlp_fc1); embed
 * and output are the model's (a tied output is the embedding). -1 if the
 * model has none (not a Transformer). */
int fig6_tensor(const model *m, int layer, int k);

#endif
