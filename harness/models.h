/* models — either model at a checkpoint, on every rank of a job (models.c). */
#ifndef HARNESS_MODELS_H
#define HARNESS_MODELS_H

#include "core/core.h"
#include "core/model.h"
#include "harness/mlp_ckpt.h"
#include "harness/tt_ckpt.h"

/*
 * The command line of the Hessian programs that take both models (hessian_blocks,
 * spectra): --model tt with ckpt_cli's flags, --model mlp with mlp_cli's, or
 * --model FILE (a Transformer trained elsewhere), so the same flags give the
 * same H. model_ckpt_open builds the model at the checkpoint on every rank of
 * core/dist.h (one process: the one rank): rank 0 trains (the Transformer's run
 * into train_dir), the other ranks build the same model and Hessian batch and
 * receive the parameters and v̂ from rank 0; every rank's model then runs
 * dist_workers() threads. */
typedef struct {
    ckpt_cli cli;
    const char *model_name;
    mlp_cli mlp;
} model_cli;
void model_cli_init(model_cli *c);   /* tt; the MLP's defaults of mlp_cli_init */
#define MODEL_CLI_OPTS(c)                                                                                        \
    {"model", OPT_STRING, &(c)->model_name, "tt (the tiny Transformer; its size from --layers, --C, --M, --T, ...), mlp, " \
                                            "or a Transformer trained elsewhere: a nanoGPT-layout .safetensors"}, \
    CKPT_CLI_MODEL_CONFIG_OPT(&(c)->cli), CKPT_CLI_OPTS(&(c)->cli), MLP_CLI_OPTS(&(c)->mlp)
typedef struct {
    int is_tt;
    tt_ckpt_setup setup;       /* the Transformer's (from ckpt_cli_setup) */
    mlp_ckpt_setup ms;         /* the MLP's */
    tt_ckpt tt;
    mlp_ckpt mlp;
    model *m;                  /* at the checkpoint, on the Hessian batch */
    double *vhat;              /* (P) v̂ at the checkpoint */
    double eps;                /* the optimizer's ε (for D = 1/(√v̂ + ε)) */
    long step, total;          /* 0, 0 for a model read from a file */
    double loss;               /* Hessian-batch loss at the checkpoint */
} model_ckpt;
/* Range checks of every flag (user errors), before any output. */
void model_cli_check(model_cli *c, model_ckpt *out);
/* After model_cli_check (same out): the model at the checkpoint on every rank
 * (and --save-safetensors written by rank 0). */
void model_ckpt_open(model_ckpt *out, const char *train_dir);
void model_ckpt_free(model_ckpt *k);

/* alg3, alg3-value-whole, alg2 (= tensors), rows, cols, whole (one block: the
 * whole model), or a partition file (core/model.h). */
partition *partition_by_name(const model *m, const char *name);

#endif
