/* tt_train — training a Transformer (any sequence model of core/model.h: the
 * tiny GPT, the Llama-style model) with checkpoints (tt_train.c). */
#ifndef HARNESS_TT_TRAIN_H
#define HARNESS_TT_TRAIN_H

#include "core/model.h"
#include "optim/optim.h"
#include "tinytransformer/tt.h"

/* Each step draws a fresh batch from the data (seeded), takes the loss and the
 * gradient, and steps the optimizer (any of optim/; blockwise GD, Adam-mini and
 * leave-out use `blocks`, by default the paper's Algorithm 3 partition). Writes
 * into out/: loss.csv (step, loss before the update, lr), checkpoints.csv
 * (fraction, step, files, loss) and, after step s = checkpoint_step(f, steps)
 * for each fraction f, step<s>_params.npy (P) and, for optimizers with a second
 * moment, step<s>_vhat.npy (P): the bias-corrected v̂, for D_Adam = diag(1/(√v̂ + ε)).
 * A run whose loss or gradient stops being finite ends there (result.diverged);
 * everything written up to then is complete and valid. */
#define TT_MAX_CHECKPOINTS 16
typedef struct {
    optim_kind optim;          /* any optim_kind; adamw by default */
    optim_config ocfg;         /* optim_defaults(optim) */
    long steps;                /* 1000 */
    int batch;                 /* sequences per step, 64 */
    double lr;                 /* 1e-3 */
    schedule_kind schedule;    /* cosine to final_frac·lr (0.1) */
    long warmup;
    double final_frac;
    int nfracs;                /* checkpoints: fractions in (0, 1]; default {0.01} */
    double fracs[TT_MAX_CHECKPOINTS];
    unsigned long seed;        /* batch sampling */
    const partition *blocks;   /* blockwise GD / Adam-mini / leave-out: NULL = Algorithm 3 */
} tt_train_opts;
typedef struct {
    long steps_done;
    int diverged;              /* a loss or gradient was not finite: stopped before that step */
    double final_loss;         /* on the last batch, after training */
} tt_train_result;
tt_train_opts tt_train_defaults(void);
/* The step after which the checkpoint at fraction f is taken: round(f·steps), in 1..steps. */
long checkpoint_step(double frac, long steps);
tt_train_result tt_train(model *m, const tt_data *d, const tt_train_opts *o, const char *out);
/* Parameters from a .npy of P values (a checkpoint); user error on a wrong size. */
void load_params(model *m, const char *path);

#endif
