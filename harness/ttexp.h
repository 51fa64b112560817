/* ttexp — the tiny-Transformer training harness of the optimizer experiments
 * (train_compare, exp2_blockwise_gd, leave_out, ablation_vstat, trajectory).
 *
 * A setup fixes the model configuration, its initial parameters (seed), the
 * token source and a held-out evaluation batch. Every training run starts from
 * the same parameters and sees the same sequence of batches (the batch RNG is
 * re-seeded per run), so runs differ only in the optimizer. Runs are
 * independent jobs; ttexp_run_jobs spreads them over threads (one model per
 * thread, OpenBLAS single-threaded inside), with results independent of the
 * thread count. Schedule: linear warmup over 5% of the steps, then cosine decay
 * to 10% of the peak learning rate.
 */
#ifndef TTEXP_H
#define TTEXP_H

#include "harness/harness.h"

typedef struct {
    tt_config cfg;
    int B;                    /* training batch (sequences) */
    int eval_B;               /* held-out evaluation batch (sequences) */
    int order;                /* Markov source: the next token depends on this many previous ones */
    int successors;           /* Markov source: likely successors per context */
    unsigned long seed;       /* the run: initialisation and training batches (harness.h, seeds) */
    unsigned long data_seed;  /* the data: Markov chain and the held-out batch */
    const char *text;         /* optional text file instead of the Markov source */
} ttexp_setup;

typedef struct {
    ttexp_setup setup;        /* a copy of the setup it was opened with */
    const ttexp_setup *s;     /* = &setup */
    tt_data *data;
    model *m;                 /* the model that trains */
    model *eval_m;            /* a twin holding the held-out batch, so the trainer's
                                 activation buffers are never resized */
    double *params0;          /* initial parameters (P) */
    int *tokens, *eval_tokens;
    gsl_rng *batch_rng;
} ttexp;

/* Opens the setup (copied into e). */
void ttexp_open(ttexp *e, const ttexp_setup *s);
void ttexp_close(ttexp *e);
/* Mean next-token loss on the held-out batch at the trainer's current parameters. */
double ttexp_eval_loss(ttexp *e);
/* The best achievable mean loss on the Markov source: the entropy of the next
 * token given everything before it, averaged over positions t = 0..T-1 (the
 * first `order` tokens are uniform). NAN for text. */
double ttexp_optimal_loss(const ttexp *e);

/* ---- one training run ---------------------------------------------------------------- */

/* A method: optimizer, its configuration and partition, base lr. */
typedef struct {
    const char *label;
    optim_kind kind;
    optim_config cfg;
    const partition *blocks;  /* not owned; NULL where the optimizer needs none */
    double lr;
    unsigned long batch_offset; /* 0: the setup's batch sequence; k: another one */
} ttexp_method;
/* A method with the optimizer's default configuration (optim_defaults). */
ttexp_method ttexp_method_of(const char *label, optim_kind kind, const partition *blocks, double lr);

typedef struct {
    long steps;
    long warmup;              /* linear warmup steps, then cosine decay to 10% of lr */
    int eval_every;           /* held-out loss every eval_every steps (and at the end) */
} ttexp_schedule;
/* 5% warmup; about 20 evaluation points, eval_every dividing steps. */
ttexp_schedule ttexp_schedule_of(long steps);
int ttexp_nevals(const ttexp_schedule *sc);

/* What one run records. Arrays are owned by the caller (NULL: not recorded). */
typedef struct {
    double *train_loss;       /* (steps): batch loss before each step */
    double *eval_loss;        /* (nevals): held-out loss at steps 0, eval_every, …, steps */
    double *snapshots;        /* (nevals, P): parameters at the same points */
    double *final_params;     /* (P): parameters at the end */
    long steps_done;          /* < steps if the run diverged */
    double final_eval;        /* held-out loss at the end; +inf if diverged */
    double score;             /* selection score: mean training loss over the last 10% of
                                 steps (fresh batches, so the held-out batch stays unbiased
                                 for reporting); +inf if diverged */
} ttexp_record;
/* Allocates what a record keeps: train and eval curves, final parameters, and
 * parameter snapshots when `snapshots` is set. */
void ttexp_record_alloc(ttexp_record *r, const ttexp_schedule *sc, size_t P, int snapshots);
void ttexp_record_free(ttexp_record *r);

/* Train from params0 with method mt; fills rec. A diverged run (non-finite loss)
 * stops; its remaining entries are NAN and final_eval is +inf. */
void ttexp_train(ttexp *e, const ttexp_method *mt, const ttexp_schedule *sc, ttexp_record *rec);

/* ---- many runs on threads, grids ---------------------------------------------------------- */

typedef struct {
    ttexp_method method;
    ttexp_record rec;
} ttexp_job;
/* Runs every job (each from the setup's params0) on `threads` threads. */
void ttexp_run_jobs(const ttexp_setup *s, const ttexp_schedule *sc, ttexp_job *jobs, int njobs, int threads,
                    const char *label);
void ttexp_jobs_free(ttexp_job *jobs, int n);
/* Log grid lo·(hi/lo)^(k/(n−1)), k < n (n = 1: lo). */
void ttexp_log_grid(double *out, double lo, double hi, int n);
/* Points of blockwise GD's grid over its Hessian-rule factor c: three decades,
 * so two more than the other methods' two-decade grids. */
int ttexp_blockgd_points(int nlr);
/* Index of the smallest selection score among jobs[0..n-1] (first on ties). */
int ttexp_best(const ttexp_job *jobs, int n);
/* The method mt at nlr log-spaced learning rates in [lo, hi]; returns the jobs
 * (free with ttexp_jobs_free) with *best the one of lowest selection score. */
ttexp_job *ttexp_grid(const ttexp_setup *s, const ttexp_schedule *sc, const ttexp_method *mt, double lo, double hi,
                      int nlr, int threads, int *best);
/* " (at the edge of the grid)" when the best of n grid points is the first or last. */
const char *ttexp_edge_note(int best, int n);

/* Blockwise GD's learning rates from the exact Hessian at initialisation, on
 * the first hess_B held-out sequences: η_b = 1 / max(|λ|max(H_bb), λ_med), the
 * quadratic's 1/L per dense block (paper Fig. 3), floored at the median over
 * blocks λ_med so that a block that is flat at initialisation (query and key,
 * LayerNorm) does not get a step its later curvature cannot take. Returns λ_med. */
double ttexp_block_lr_from_hessian(ttexp *e, const partition *p, int hess_B, double *lr_b);

/* Paired comparison of two parameter vectors on the held-out batch: the mean
 * over its B·T positions of loss_a − loss_b, and its standard error sd/√n. */
void ttexp_paired_diff(ttexp *e, const double *wa, const double *wb, double *mean, double *se);

/* ---- outputs ----------------------------------------------------------------------------- */

/* The header and rows "label,lr,score,final_eval_loss,steps_done,best" of grids. */
#define TTEXP_GRID_HEADER "method,lr,score_last10pct_train_loss,final_eval_loss,steps_done,best"
void ttexp_write_grid(outfile *f, const char *label, const ttexp_job *jobs, int n, int best);
/* Curves of several runs side by side: "step,<col_0>,…" with the held-out loss
 * (eval = 1, one row per evaluation point) or the training loss (one row per step). */
void ttexp_write_curves(const char *path, const char *const *cols, const ttexp_record *const *recs, int n,
                        const ttexp_schedule *sc, int eval);
/* <out>/reference.csv: the initial held-out loss, the entropy floor and P (the
 * plots draw losses above the floor). */
void ttexp_write_reference(ttexp *e, const char *out);

/* ---- the command line every experiment shares ------------------------------------------ */
typedef struct {
    const char *out, *scale, *text;
    long seed, data_seed, steps;
    int threads, grid;        /* grid: points of the learning-rate grid (0: from --scale) */
    int paper;                /* set by ttexp_args_finish */
} ttexp_args;
#define TTEXP_ARGS(out_dir) {out_dir, "quick", NULL, 1, 1, 0, 2, 0, 0}
#define TTEXP_OPTS(a, scale_help, grid_help)                                                         \
    {"scale", OPT_STRING, &(a).scale, scale_help},                                                  \
    {"steps", OPT_LONG, &(a).steps, "training steps (0: from --scale)"},                            \
    {"lrs", OPT_INT, &(a).grid, grid_help},                                                         \
    {"seed", OPT_LONG, &(a).seed, "the run's seed: initialisation and training batches"},           \
    {"data-seed", OPT_LONG, &(a).data_seed, "the data's seed: Markov chain and held-out batch"},    \
    {"text", OPT_STRING, &(a).text, "train on the bytes of this text file instead of the Markov source"}, \
    {"threads", OPT_INT, &(a).threads, "training runs in parallel"},                                \
    {"out", OPT_STRING, &(a).out, "output folder"}
/* --scale into a->paper, the scale's steps and grid where the flags left 0, and
 * the range checks (user errors). */
void ttexp_args_finish(ttexp_args *a, long quick_steps, long paper_steps, int quick_grid, int paper_grid, int max_grid);
/* The experiments' setup: the paper's 1-layer model, batch 64, 512 held-out
 * sequences, the order-2 Markov source with 2 likely successors. */
ttexp_setup ttexp_default_setup(const ttexp_args *a);
/* Every experiment's opening: the output folder created, the setup opened into
 * e; returns the schedule of a->steps. */
ttexp_schedule ttexp_begin(ttexp *e, ttexp_setup s, const ttexp_args *a);

#endif
