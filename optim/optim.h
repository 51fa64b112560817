/* optim — the optimizers shared by every model: GD, blockwise GD, Adam, AdamW,
 * Adam-mini; learning-rate schedules; one training loop.
 *
 * Every optimizer works on a flat parameter vector w (length P) and its
 * gradient g, with a partition of 0..P-1 into blocks (core/model.h). Each is a
 * small table of init/step/free behind optim_new/optim_step/optim_free.
 *
 * Adam-mini follows the official implementation (v1.1.1), per block b with
 * gradient slice g_b of n_b entries, at step t (SPEC E6; paper Algorithm 1):
 *   1. w ← w·(1 − lr·λ)                    decoupled decay, not on norms/biases
 *   2. m ← β1·m + (1−β1)·g                  per coordinate
 *   3. v_b ← β2·v_b + (1−β2)·stat(g_b²)     one scalar per block; stat = mean by default
 *   4. h_b = √v_b / √(1−β2^t) + ε
 *   5. w ← w − lr · (m / (1−β1^t)) / h_b
 * Blocks of bias tensors (ROLE_BIAS) use plain Adam (one v per entry).
 * AdamW is the same with one v per coordinate; Adam is AdamW with λ = 0.
 *
 * β2 = 1 is the exact limit β2 → 1 with bias correction (SPEC E2):
 * v̂_t = (1/t) Σ_{s≤t} g_s², the running mean of squared gradients.
 */
#ifndef OPTIM_H
#define OPTIM_H

#include "core/model.h"
#include <stddef.h>

typedef enum {
    OPTIM_GD, OPTIM_BLOCK_GD, OPTIM_ADAM, OPTIM_ADAMW, OPTIM_ADAM_MINI,
    OPTIM_ADAM_LEAVE_OUT, /* AdamW, except blocks with block_lr[b] > 0 ("left out", paper
                             Fig. 5) take one learning rate: w ← keep·w − lr·block_lr[b]·m̂ */
    OPTIM_COUNT
} optim_kind;
/* Adam-mini's block statistic of g_b² (paper appendix ablation): mean (default),
 * 2-norm, 1-norm, max, min. */
typedef enum { VSTAT_MEAN, VSTAT_L2, VSTAT_L1, VSTAT_MAX, VSTAT_MIN, VSTAT_COUNT } vstat_kind;

typedef struct {
    double beta1, beta2;      /* β2 == 1: exact running-mean limit */
    double eps;
    double weight_decay;      /* λ, decoupled; never on norms and biases */
    vstat_kind vstat;         /* Adam-mini only */
    const double *block_lr;   /* blockwise GD: lr multiplier per block (NULL = 1);
                                 leave-out Adam: > 0 marks a left-out block and is its lr
                                 multiplier, 0 keeps Adam's per-coordinate v */
} optim_config;

/* Defaults: β = (0.9, 0.999), ε = 1e-8, λ = 0 (0.1 for AdamW), mean statistic. */
optim_config optim_defaults(optim_kind kind);
const char *optim_name(optim_kind kind);      /* "gd", "blockgd", "adam", "adamw", "adam-mini", "adam-leave-out" */
optim_kind optim_parse(const char *name);      /* user error on an unknown name */
const char *vstat_name(vstat_kind s);          /* "mean", "l2", "l1", "max", "min" */
vstat_kind vstat_parse(const char *name);      /* user error on an unknown name */
/* User error for lr <= 0, β outside [0,1) (β2 = 1 allowed), ε < 0, λ < 0. */
void optim_check_config(const optim_config *cfg, double lr);

typedef struct optimizer optimizer;
/* blocks: the partition (Adam-mini's v blocks, blockwise GD's lr blocks); may be
 * NULL for GD/Adam/AdamW. m: the model whose roles say which blocks are biases
 * and norms (no decay, plain Adam for biases); NULL treats every block alike. */
optimizer *optim_new(optim_kind kind, const optim_config *cfg, size_t P,
                     const partition *blocks, const model *m);
/* One step at learning rate lr (the schedule already applied): w ← update(w, g). */
void optim_step(optimizer *o, double *w, const double *g, double lr);
/* Floats of optimizer state held (m, v, block v's). */
size_t optim_state_floats(const optimizer *o);
/* Adam's v̂ = v/(1−β2^t) per coordinate (Adam/AdamW), or each block's v̂
 * broadcast to its entries (Adam-mini), into out[P]; for D_Adam = 1/(√v̂+ε). */
void optim_vhat(const optimizer *o, double *out);
long optim_steps_taken(const optimizer *o);
/* 1 if the optimizer keeps a second moment (optim_vhat works): Adam, AdamW, Adam-mini, leave-out. */
int optim_has_vhat(const optimizer *o);
void optim_free(optimizer *o);

/* ---- learning-rate schedules ----------------------------------------------------- */
typedef enum { SCHED_CONSTANT, SCHED_COSINE, SCHED_WARMUP_COSINE, SCHED_COUNT } schedule_kind;
/* lr at step (0-based) of total: constant; cosine decay to final_frac·base;
 * linear warmup over `warmup` steps then cosine. */
double lr_at(schedule_kind s, double base, long step, long total, long warmup, double final_frac);
schedule_kind schedule_parse(const char *name); /* "constant", "cosine", "warmup-cosine" */
const char *schedule_name(schedule_kind s);

/* ---- the training loop every model shares ------------------------------------------ */
typedef struct {
    long steps;
    double lr;                /* base learning rate */
    schedule_kind schedule;
    long warmup;              /* warmup steps (SCHED_WARMUP_COSINE) */
    double final_frac;        /* cosine ends at final_frac·lr */
} train_config;

typedef struct {
    /* Before step s (0-based): point the model at this step's batch. NULL: keep the batch. */
    void (*set_batch)(void *ctx, long step);
    /* After step s: its loss (measured before the update) and lr. NULL: nothing. */
    void (*after_step)(void *ctx, long step, double loss, double lr);
    void *ctx;
} train_hooks;

/* Runs tc->steps steps of o on m. Stops early when a loss or gradient entry is
 * not finite: *diverged = 1 and the parameters are those before the bad step.
 * Returns the number of steps completed. */
long train_run(model *m, optimizer *o, const train_config *tc, const train_hooks *h, int *diverged);

#endif
