/* models — the registry of model kinds (models.c): one table, MODEL_KINDS,
 * from which every program that takes any model — hessian_blocks, spectra,
 * spectra_check, partition_check, heatmap — finds a kind's flags, builds it at
 * a training checkpoint (on every rank of an MPI job) or reads it from a file,
 * frees it and names its partitions. No program asks which kind it holds.
 *
 * What a kind provides (a model_kind, one entry of MODEL_KINDS; tt, mlp and
 * llama are model_tt.c, model_mlp.c and model_llama.c):
 *   name        --model NAME; also the kind's subfolder and stats prefix where
 *               a program runs several (partition_check.<name>.*)
 *   what        a phrase for claims and messages ("1-hidden-layer MLP")
 *   training    how it is trained to a checkpoint, for claims ("Adam, cosine")
 *   reads_file  NULL, or 1 when a --model FILE is a file of this kind (a cheap
 *               look: the name or the header; the reader's errors come later)
 *   check       range checks of its flags (one user error each) and its setup
 *               in k->state; a --model FILE read here, once — before any output
 *   start       its model built (initialised, or the file's weights) on its
 *               Hessian batch, not trained: k->m, k->eps, k->total (the
 *               registry keeps these parameters: checkpoint fraction 0)
 *   train       (rank 0 only) one training run keeping a checkpoint at every
 *               fraction k->fracs[i] > 0 (a file model: its v̂ estimated),
 *               leaving the model on its Hessian batch; k->final_loss if it
 *               can say (else it stays NAN)
 *   load        checkpoint i of a fraction > 0 (or the file's) into
 *               k->m->params and k->vhat (P, allocated) and k->step; after
 *               train, on rank 0 (the registry loads fraction 0 itself); at
 *               i == k->save_at (0 unless the program sets it) it writes
 *               --save-safetensors
 *   gauss_newton NULL, or its model's Gauss–Newton mode on (1) or off (0):
 *               hvp and H give G = JᵀSJ (tt_set_gauss_newton,
 *               llama_set_gauss_newton)
 *   set_threads its model's worker threads
 *   null_directions NULL (none derived), or the exact null directions of a
 *               diagonal block H_bb its kind derived (tt_null_directions):
 *               rows of b->n into out (room for 2·b->n rows), how many
 *   init_params NULL, or k->m's parameters set to the kind's initialisation
 *               for its flags (a file: its architecture as the toolkit would
 *               start it; hetero's "init" point of a model trained elsewhere)
 *   free        all that check, start and train allocated (k->state too)
 *   partition   NULL, or the kind's own named partitions (NULL for a name that
 *               is not one of its own)
 * Adding a kind touches this registry and the model's folder only: its flags
 * (a struct in model_cli, its options in MODEL_KINDS_OPTS and
 * MODEL_KINDS_RUN_OPTS), its model_<kind>.c with the functions above, and its
 * line in MODEL_KINDS and IN_ORDER (models.c).
 *
 * How things are looked up:
 *   --model NAME   the kind of that name (model_kind_named);
 *   --model FILE   any other value is a file: the first kind of MODEL_KINDS
 *                  whose reads_file says yes reads it (a kind with a narrower
 *                  test goes before one that takes every file: tt reads any
 *                  file as nanoGPT's layout and is last);
 *   flags          every kind's flags are in every program that takes any
 *                  model; a kind reads only its own and the shared run flags
 *                  of ckpt_cli (--steps, --lr, --batch, --checkpoint, --seed,
 *                  --data-seed, --scale, --hess-batch, --panel);
 *   partitions     model_partition(k, name): the kind's own names first, then
 *                  the shared ones (alg3, alg3-value-whole, alg2 = tensors,
 *                  rows, cols, whole) from the tensor table's roles, then a
 *                  partition file (core/model.h).
 *
 * The same flags give the same model, v̂ and H on every rank and in every
 * program: the checkpoint is a training run's (tt_ckpt.h, mlp_ckpt.h). */
#ifndef HARNESS_MODELS_H
#define HARNESS_MODELS_H

#include "core/core.h"
#include "core/model.h"
#include "harness/llama_cli.h"
#include "harness/mlp_ckpt.h"
#include "harness/tt_ckpt.h"
#include "harness/tt_train.h"

/* Every kind's flags. */
typedef struct {
    const char *model_name;    /* --model: a kind's name or a file */
    ckpt_cli cli;              /* the shared run flags and the Transformer's (tt_ckpt.h) */
    mlp_cli mlp;               /* the MLP's (mlp_ckpt.h) */
    llama_cli llama;           /* the Llama's (llama_cli.h) */
} model_cli;
void model_cli_init(model_cli *c);   /* tt; every kind's defaults */
void model_cli_free(model_cli *c);   /* what check read (a --model file) */
/* --model and every kind's flags; MODEL_KINDS_OPTS: the kinds' flags alone (a
 * program with a --model of its own); MODEL_KINDS_RUN_OPTS: without
 * --model-config, --checkpoint and --save-safetensors (a program that takes
 * each kind it names at checkpoints of its own: spectra_check). */
#define MODEL_CLI_OPTS(c)                                                                                        \
    {"model", OPT_STRING, &(c)->model_name, "tt (the tiny Transformer; its size from --layers, --C, --M, --T, ...), mlp, " \
                                            "llama (the Llama-style model, the same sizes and --llama-*), or a " \
                                            "Transformer trained elsewhere: a nanoGPT-layout .safetensors, or a " \
                                            "Hugging Face GPT-2 or Llama folder (model.safetensors, config.json)"},        \
    MODEL_KINDS_OPTS(c)
#define MODEL_KINDS_OPTS(c)                                                                                      \
    CKPT_CLI_MODEL_CONFIG_OPT(&(c)->cli), CKPT_CLI_OPTS(&(c)->cli), MLP_CLI_OPTS(&(c)->mlp),                     \
    LLAMA_CLI_OPTS(&(c)->llama)
/* A program that takes one Transformer at --checkpoint (fig6, table_kappa):
 * the shared run flags, --model tt, llama or a file (`file_gives`: what the
 * program makes of a file), --model-config and the Llama's flags. */
#define TRANSFORMER_MODEL_OPTS(c, file_gives)                                                                    \
    CKPT_CLI_OPTS(&(c)->cli),                                                                                    \
    {"model", OPT_STRING, &(c)->model_name, "tt (the tiny Transformer), llama (the Llama-style model: the same "  \
                                            "sizes and --llama-*) or a Transformer trained elsewhere: a "       \
                                            "nanoGPT-layout .safetensors or a Hugging Face GPT-2 or Llama "      \
                                            "folder (" file_gives ")"},                                          \
    CKPT_CLI_MODEL_CONFIG_OPT(&(c)->cli), LLAMA_CLI_OPTS(&(c)->llama)
#define MODEL_KINDS_RUN_OPTS(c) CKPT_CLI_RUN_OPTS(&(c)->cli), MLP_CLI_OPTS(&(c)->mlp), LLAMA_CLI_OPTS(&(c)->llama)

typedef struct model_kind model_kind;

/* A model of some kind at a checkpoint. */
typedef struct {
    const model_kind *kind;
    model_cli *cli;            /* the flags it was checked with */
    const char *file;          /* --model FILE, or NULL */
    void *state;               /* the kind's own (its setup, its training state) */
    int nfracs;                /* the checkpoints: fractions of training, 0 = the initialisation */
    double fracs[TT_MAX_CHECKPOINTS];
    int save_at;               /* the checkpoint whose load writes --save-safetensors (0) */
    model *m;                  /* at the current checkpoint, on the Hessian batch */
    double *vhat;              /* (P) v̂ there (0 at the initialisation) */
    double *p0;                /* (P) the parameters at the initialisation, as start built them */
    double eps;                /* the optimizer's ε (D = 1/(√v̂ + ε)) */
    long step, total;          /* the checkpoint's step and the run's steps; 0, 0 for a file */
    double loss;               /* the Hessian-batch loss there (model_ckpt_open) */
    double loss0;              /* the Hessian-batch loss at the initialisation (model_ckpt_start) */
    double final_loss;         /* the last training batch's loss after training (train; NAN if the kind does not
                                  say; a file: loss0) */
    int hess_panel;            /* the panel of model_ckpt_hessian: tt --panel, mlp the engine's default (its H
                                  depends on the panel in the last bits: as fig2 and partition_check took it) */
} model_ckpt;

struct model_kind {
    const char *name, *what, *training;
    int (*reads_file)(const char *path);
    void (*check)(model_ckpt *k);
    void (*start)(model_ckpt *k);
    void (*train)(model_ckpt *k, const char *train_dir);
    void (*load)(model_ckpt *k, int i);
    void (*set_threads)(model *m, int n);
    void (*gauss_newton)(model *m, int on);
    int (*null_directions)(const model *m, const block *b, double *out);
    void (*init_params)(model_ckpt *k);
    void (*free)(model_ckpt *k);
    partition *(*partition)(const model *m, const char *name);
};

/* The kind named `name`; NULL if none is. */
const model_kind *model_kind_named(const char *name);
/* "tt, mlp": every kind's name, for help and messages. */
const char *model_kind_names(void);
/* The kinds of a comma-separated list of names (user error naming `flag` for
 * a name that is no kind, or a kind named twice); returns how many (>= 1). */
int model_kinds_parse(const char *list, const model_kind **out, int max, const char *flag);

/* --model `name` (a kind, or a file some kind reads) with c's flags: every
 * range check (user errors) before any output, the file read once. The
 * checkpoint is --checkpoint's; model_ckpt_check_at takes a list (0: the
 * initialisation). */
void model_ckpt_check(model_ckpt *k, model_cli *c, const char *name);
void model_ckpt_check_at(model_ckpt *k, model_cli *c, const char *name, const double *fracs, int nfracs);
/* After check, on every rank of core/dist.h (one process: the one rank): the
 * model at checkpoint 0 — rank 0 trains into train_dir, the other ranks build
 * the same model and Hessian batch and receive its parameters, v̂ and loss;
 * every rank's model then runs dist_workers() threads. */
void model_ckpt_open(model_ckpt *k, const char *train_dir);
/* The same in steps, on one process, for several checkpoints of one run:
 * start (the model, not trained), train (every checkpoint), load (one). */
void model_ckpt_start(model_ckpt *k);
void model_ckpt_train(model_ckpt *k, const char *train_dir);
void model_ckpt_load(model_ckpt *k, int i);
/* k->m's parameters at the toolkit's initialisation of its architecture: p0
 * for a model trained here, the kind's init_params for a file (user error for
 * a kind without). */
void model_ckpt_init_params(model_ckpt *k);
/* Its model's Gauss–Newton mode (user error for a kind without one) and the
 * null directions its kind derived for block b (0 when none). */
void model_ckpt_gauss_newton(model_ckpt *k, int on);
int model_ckpt_null_directions(const model_ckpt *k, const block *b, double *out);
/* The full H (P×P, malloc'ed) at the current checkpoint, k->hess_panel columns per panel. */
double *model_ckpt_hessian(model_ckpt *k);
void model_ckpt_free(model_ckpt *k);
/* The model as a file names it, or the kind's `what` (claims' context lines). */
const char *model_ckpt_what(const model_ckpt *k);

/* A partition of k's model by name (see above); user error for a file that is
 * not one. */
partition *model_partition(const model_ckpt *k, const char *name);
/* The same, but a partition file's blocks need not cover the model (spectra: what a file
 * leaves out is not analysed; partition_read_blocks). */
partition *model_partition_blocks(const model_ckpt *k, const char *name);

/* The kinds (models.c): the table's entries. */
extern const model_kind MODEL_TT, MODEL_MLP, MODEL_LLAMA;

#endif
