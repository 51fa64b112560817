/* optim — the optimizers shared by every model: GD, blockwise GD, heavy ball
 * (single or blockwise), Adam, AdamW, Adam-mini, Adafactor, SM3; learning-rate
 * schedules; one training loop.
 *
 * Every optimizer works on a flat parameter vector w (length P) and its
 * gradient g, with a partition of 0..P-1 into blocks (core/model.h). Each is a
 * small table of init/step/free behind optim_new/optim_step/optim_free.
 *
 * Adam-mini follows the official implementation (v1.1.1), per block b with
 * gradient slice g_b of n_b entries, at step t (paper Algorithm 1):
 *   1. w ← w·(1 − lr·λ)                    decoupled decay, not on norms/biases
 *   2. m ← β1·m + (1−β1)·g                  per coordinate
 *   3. v_b ← β2·v_b + (1−β2)·stat(g_b²)     one scalar per block; stat = mean by default
 *   4. h_b = √v_b / √(1−β2^t) + ε
 *   5. w ← w − lr · (m / (1−β1^t)) / h_b
 * Blocks of bias tensors (ROLE_BIAS) use plain Adam (one v per entry).
 * AdamW is the same with one v per coordinate; Adam is AdamW with λ = 0.
 *
 * Heavy ball is AdamW without v: AdamW's momentum with its bias correction and
 * one learning rate per block (the paper's Exp 2 question "is one lr per block
 * enough?" asked without the momentum confound). Per block b, at step t:
 *   m ← β1·m + (1−β1)·g;  w ← (1 − lr·λ)·w − lr·η_b·m/(1−β1^t)
 * with η_b = block_lr[b] (1 without a partition or without block_lr). This is
 * Polyak's heavy ball w_{t+1} = w_t − α·g_t + β1·(w_t − w_{t−1}) with α = lr·η_b·(1−β1)
 * (up to the bias correction), so on a quadratic it is stable for
 * lr·η_b·λmax < 2(1+β1)/(1−β1) (38 at β1 = 0.9), where GD needs lr·λmax < 2.
 *
 * β2 = 1 is the exact limit β2 → 1 with bias correction:
 * v̂_t = (1/t) Σ_{s≤t} g_s², the running mean of squared gradients.
 *
 * The memory-efficient baselines of the paper's experiments (pre-training setup
 * and appendix training configurations: "For Adafactor and SM3, we incorporate
 * momentum with β1 = 0.9 ... the rest of the hyperparameters are set as default")
 * work per tensor of the model's tensor table, never on the partition (which they
 * ignore). A tensor is a matrix ("factored") when rows > 1 and cols > 1, else a
 * vector; with no model the whole of w is one vector. Per tensor, at step t
 * (1-based), lr the step's lr:
 *
 * Adafactor (Shazeer & Stern 2018), as HuggingFace transformers'
 * optimization.Adafactor with scale_parameter = relative_step = warmup_init = False:
 *   β2_t = 1 − t^decay_rate;  G2 = g⊙g + ε1
 *   matrix: R ← β2_t·R + (1−β2_t)·rowmean(G2), C ← β2_t·C + (1−β2_t)·colmean(G2),
 *           v̂_ij = R_i·C_j / mean(R);   vector: v ← β2_t·v + (1−β2_t)·G2, v̂ = v
 *   u = g/√v̂;  u ← u / max(1, RMS(u)/clip_threshold)      (RMS over the tensor)
 *   m ← β1·m + (1−β1)·lr·u    (HF's order: lr scales u before the momentum)
 *   w ← (1 − lr·λ)·w − m      (m replaced by lr·u when β1 = 0: no m is kept)
 * SM3-II (Anil, Gupta, Koren, Singer 2019), covers = rows and columns:
 *   matrix: ν_ij = min(r_i, c_j) + g_ij²;  r_i ← max_j ν_ij, c_j ← max_i ν_ij
 *   vector: ν ← ν + g⊙g (AdaGrad)
 *   u = g/√(ν + ε1)           (ε1 under the root as in the reference code)
 *   m ← β1·m + (1−β1)·u;  w ← (1 − lr·λ)·w − lr·m   (lr·u when β1 = 0)
 * Both take u = 0 where g = 0 (only matters for ε1 = 0, where it avoids 0/0).
 * Neither uses beta2 or eps; λ is never applied to norms and biases.
 */
#ifndef OPTIM_H
#define OPTIM_H

#include "core/model.h"
#include <stddef.h>

typedef enum {
    OPTIM_GD, OPTIM_BLOCK_GD, OPTIM_ADAM, OPTIM_ADAMW, OPTIM_ADAM_MINI,
    OPTIM_ADAM_LEAVE_OUT, /* AdamW, except blocks with block_lr[b] > 0 ("left out", paper
                             Fig. 5) take one learning rate: w ← keep·w − lr·block_lr[b]·m̂,
                             and blocks with block_lr[b] < 0 are frozen (the leave-out
                             claim's control: a left-out block at learning rate 0) */
    OPTIM_ADAFACTOR,      /* Adafactor with momentum β1 (see above) */
    OPTIM_SM3,            /* SM3-II with momentum β1 (see above) */
    OPTIM_HEAVY_BALL,     /* AdamW's bias-corrected momentum without v, one lr per block (see above) */
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
    const double *block_lr;   /* blockwise GD and heavy ball: lr multiplier per block of the
                                 partition (NULL = 1); leave-out Adam: > 0 marks a left-out
                                 block and is its lr multiplier, 0 keeps Adam's
                                 per-coordinate v, < 0 freezes the block */
    /* Adafactor and SM3 only (the Adam family's beta2 and eps mean something else): */
    double decay_rate;        /* Adafactor: β2_t = 1 − t^decay_rate, <= 0 (HF default −0.8) */
    double clip_threshold;    /* Adafactor: update clipping d, > 0; +inf disables (HF default 1) */
    double eps1;              /* added to the squared-gradient statistic under the square root:
                                 Adafactor's ε1 (on g⊙g, HF eps[0]) and SM3's ε (on ν); 1e-30 */
} optim_config;

/* Defaults: β = (0.9, 0.999), ε = 1e-8, λ = 0 (0.1 for AdamW), mean statistic;
 * decay_rate = −0.8, clip_threshold = 1, ε1 = 1e-30 (β1 = 0.9 for Adafactor and SM3
 * as in the paper, where HF's Adafactor and SM3's reference code default to none). */
optim_config optim_defaults(optim_kind kind);
/* "gd", "blockgd", "adam", "adamw", "adam-mini", "adam-leave-out", "adafactor", "sm3", "heavy-ball" */
const char *optim_name(optim_kind kind);
optim_kind optim_parse(const char *name);      /* user error on an unknown name */
const char *vstat_name(vstat_kind s);          /* "mean", "l2", "l1", "max", "min" */
vstat_kind vstat_parse(const char *name);      /* user error on an unknown name */
/* User error for lr <= 0, β outside [0,1) (β2 = 1 allowed), ε < 0, λ < 0,
 * decay_rate > 0 or not finite, clip_threshold <= 0, ε1 < 0 or not finite. */
void optim_check_config(const optim_config *cfg, double lr);

typedef struct optimizer optimizer;
/* blocks: the partition (Adam-mini's v blocks, blockwise GD's and heavy ball's lr
 * blocks); may be NULL for GD/Adam/AdamW/heavy ball (which then needs block_lr
 * NULL), and is ignored by Adafactor and SM3. m: the model whose
 * roles say which blocks are biases and norms (no decay, plain Adam for biases)
 * and, for Adafactor and SM3, each tensor's shape; NULL treats every block alike
 * (Adafactor/SM3: all of w is one vector). */
optimizer *optim_new(optim_kind kind, const optim_config *cfg, size_t P,
                     const partition *blocks, const model *m);
/* One step at learning rate lr (the schedule already applied): w ← update(w, g). */
void optim_step(optimizer *o, double *w, const double *g, double lr);
/* Floats of optimizer state held (m, v, block v's; heavy ball: m; Adafactor and SM3:
 * rows + cols per matrix, n per vector, + P for m when β1 > 0). Workspaces are not counted. */
size_t optim_state_floats(const optimizer *o);
/* Adam's v̂ = v/(1−β2^t) per coordinate (Adam/AdamW), or each block's v̂
 * broadcast to its entries (Adam-mini), into out[P]; for D_Adam = 1/(√v̂+ε).
 * Adafactor: the v̂ of the last step (R_i·C_j/mean(R), or v; ε1 included; there is
 * no bias correction, β2_1 = 0 plays its part). SM3: its accumulated sum (no
 * average, no bias correction; grows like t·g²): ν for a vector, and for a matrix
 * min(r_i, c_j) after the step, SM3's bound on Σ_s g_ij² — at least the ν_ij of the
 * last step (equal where ν_ij is the maximum of its row or of its column), since
 * ν_ij itself is not stored. 0 before the first step. */
void optim_vhat(const optimizer *o, double *out);
long optim_steps_taken(const optimizer *o);
/* 1 if the optimizer keeps a second moment (optim_vhat works): Adam, AdamW, Adam-mini,
 * leave-out, Adafactor, SM3. */
int optim_has_vhat(const optimizer *o);
void optim_free(optimizer *o);

/* ---- learning-rate schedules ----------------------------------------------------- */
typedef enum { SCHED_CONSTANT, SCHED_COSINE, SCHED_WARMUP_COSINE, SCHED_COUNT } schedule_kind;
/* lr at step (0-based) of total: constant; cosine decay to final_frac·base;
 * linear warmup over `warmup` steps then cosine. */
double lr_at(schedule_kind s, double base, long step, long total, long warmup, double final_frac);
schedule_kind schedule_parse(const char *name); /* "constant", "cosine", "warmup-cosine" */

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

/* Runs tc->steps steps of o on m. Stops early, *diverged = 1, when the run
 * diverges: a loss or gradient entry is not finite, the loss exceeds
 * TRAIN_DIVERGE_FACTOR × the first step's |loss|, or an update leaves a
 * parameter that is not finite. The parameters are then those before the bad
 * step, and after_step is not called for it (so a checkpoint never holds NaN).
 * Returns the number of steps completed. */
#define TRAIN_DIVERGE_FACTOR 1e6
long train_run(model *m, optimizer *o, const train_config *tc, const train_hooks *h, int *diverged);

#endif
