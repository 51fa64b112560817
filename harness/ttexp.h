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

#include "core/core.h"
#include "core/model.h"
#include "harness/data.h"
#include "harness/llama_cli.h"
#include "harness/lr_grid.h"
#include "optim/optim.h"
#include "tinytransformer/tt.h"
#include "verdict/verdict.h"

typedef struct {
    tt_config cfg;            /* the sizes (and, for the tiny GPT, biases and tying) */
    int llama;                /* 1: the Llama-style model of cfg's sizes and llama_flags */
    llama_cli llama_flags;
    int B;                    /* training batch (sequences) */
    int eval_B;               /* held-out evaluation batch (sequences) */
    int order;                /* Markov source: the next token depends on this many previous ones */
    int successors;           /* Markov source: likely successors per context */
    unsigned long seed;       /* the run: initialisation and training batches (harness/seeds.h) */
    unsigned long data_seed;  /* the data: Markov chain and the held-out batch */
    tt_data_opts data;        /* the token source (markov by default); cfg.V is its vocabulary */
    int train_set;            /* 0: a fresh batch of B sequences every step; n > 0: full-batch
                                 training on one fixed set of n sequences (drawn once from the
                                 run's batch stream), the same for every run */
} ttexp_setup;

typedef struct {
    ttexp_setup setup;        /* a copy of the setup it was opened with */
    const ttexp_setup *s;     /* = &setup */
    tt_data *data;
    model *m;                 /* the model that trains */
    model *eval_m;            /* a twin holding the held-out batch, so the trainer's
                                 activation buffers are never resized */
    double *params0;          /* initial parameters (P) */
    int *tokens, *eval_tokens; /* tokens: a batch of B, or the fixed training set */
    gsl_rng *batch_rng;
} ttexp;

/* The setup's model, initialised from cfg.seed (the tiny GPT or the Llama). */
model *ttexp_model_new(const ttexp_setup *s);
size_t ttexp_param_count(const ttexp_setup *s);
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
    double final_train;       /* full batch: the training-set loss at the end (+inf if
                                 diverged); NAN with fresh batches */
    double score;             /* selection score: mean training loss over the last 10% of
                                 steps (fresh batches, so the held-out batch stays unbiased
                                 for reporting); +inf if diverged */
} ttexp_record;
/* Allocates what a record keeps: train and eval curves, final parameters, and
 * parameter snapshots when `snapshots` is set. */
void ttexp_record_alloc(ttexp_record *r, const ttexp_schedule *sc, size_t P, int snapshots);
void ttexp_record_free(ttexp_record *r);

/* Train from params0 with method mt; fills rec. A diverged run (non-finite loss)
 * stops; its remaining entries are NAN and final_eval is +inf. With a training
 * set (full batch) every step takes the whole set and batch_offset is ignored. */
void ttexp_train(ttexp *e, const ttexp_method *mt, const ttexp_schedule *sc, ttexp_record *rec);

/* ---- many runs on threads, learning-rate searches ------------------------------------------ */

typedef struct {
    ttexp_method method;
    ttexp_record rec;
    double *owned;            /* freed with the job (e.g. the block_lr its method points at) */
} ttexp_job;
/* Runs every job (each from the setup's params0) on `threads` threads. */
void ttexp_run_jobs(const ttexp_setup *s, const ttexp_schedule *sc, ttexp_job *jobs, int njobs, int threads,
                    const char *label);
void ttexp_jobs_free(ttexp_job *jobs, int n);

/* A searched learning rate (or any positive factor: a leave-out multiplier, blockwise
 * GD's c): an lr_grid (harness/lr_grid.h) over the planned range of `range` that extends at
 * its edges, in the same log spacing, until the best is interior or a bound stops it.
 * Every evaluated point is kept: jobs[i] ran at g.lr[i] (ascending). The selection
 * score is ttexp_record.score (lower is better, +inf diverged). */
typedef struct {
    const char *label;        /* grid.csv's method column */
    lr_grid g;
    ttexp_job *jobs;          /* g.n jobs, ascending in the searched value */
    int best;                 /* lr_grid_best: the lowest score (smallest value on ties); -1: none finite */
    grid_status status;       /* INTERIOR, EDGE AT BOUND or NONE FINITE */
} ttexp_search;
/* Sets the job's method for the searched value x (mt is a copy of the base method);
 * may allocate what the method points at into *owned. */
typedef void (*ttexp_setter)(ttexp_method *mt, double x, double **owned, void *ctx);
/* The base method at each value of the grid: setter NULL sets mt->lr = x. Runs the
 * planned points, then one extension round at a time, each round's runs in parallel. */
void ttexp_search_run(ttexp_search *r, const char *label, const ttexp_setup *s, const ttexp_schedule *sc,
                      const ttexp_method *base, const lr_range *range, int points, ttexp_setter set, void *ctx,
                      int threads);
void ttexp_search_free(ttexp_search *r);
/* The best job; DIE if none finished (status NONE FINITE: check it first). */
const ttexp_job *ttexp_search_best(const ttexp_search *r);
/* The searched value of the best job. */
double ttexp_search_value(const ttexp_search *r);

/* Blockwise GD's learning rates from the exact Hessian at initialisation, on
 * the first hess_B held-out sequences: η_b = 1 / max(|λ|max(H_bb), λ_med), the
 * quadratic's 1/L per dense block (paper Fig. 3), floored at the median over
 * blocks λ_med so that a block that is flat at initialisation (query and key,
 * LayerNorm) does not get a step its later curvature cannot take. Returns λ_med. */
double ttexp_block_lr_from_hessian(ttexp *e, const partition *p, int hess_B, double *lr_b);

/* Paired comparison of two parameter vectors on the held-out batch: the mean
 * over its B·T positions of loss_a − loss_b, and its standard error sd/√n. */
void ttexp_paired_diff(ttexp *e, const double *wa, const double *wb, double *mean, double *se);
/* The group's on-par margin: a method is on par with (not worse than) a reference when
 * its held-out loss exceeds the reference's by less than this share of the reference's
 * progress from the initialisation (ttexp_excess_share). The "on par" and "beats"
 * thresholds of the optimizer claims (verdict/claims/) are this number; tests check it.
 * Why 2%: docs/verdicts.md. */
#define TTEXP_ON_PAR 0.02
/* The verdicts' scale-free comparison of two trained models: X's held-out loss above the
 * reference's, as a share of the reference's progress from the initialisation,
 *     (L(w_x) − L(w_ref)) / (L(w_0) − L(w_ref)),
 * the numerator a ttexp_paired_diff of the final parameters; *se (if not NULL) is its
 * standard error on the same scale. +inf when X diverged; NAN when the reference
 * diverged or made no progress. */
double ttexp_excess_share(ttexp *e, const ttexp_record *x, const ttexp_record *ref, double *se);
/* 1 when a run diverged: it stopped early or its final held-out loss is not finite. */
int ttexp_diverged(const ttexp_record *r, const ttexp_schedule *sc);
/* The margin by which a "winner" beats a "loser", loser − winner, from their excess shares
 * (lower is better; +inf for a diverged run), with a diverged run's worst outcome: a
 * diverged winner gives −inf whatever the loser did (it beats nothing), else a diverged
 * loser gives +inf. NaN only from a NaN input. */
double ttexp_margin(double loser, double winner);
/* The same on the training set's loss (full batch): (F_x − F_ref)/(F_0 − F_ref), F_0 the
 * set's loss at params0 (ref->train_loss[0]). */
double ttexp_train_excess_share(ttexp *e, const ttexp_record *x, const ttexp_record *ref);

/* How far two runs' weights are apart, normalised so that runs that moved in unrelated
 * directions sit at 1 (trajectory):
 *     ‖x − a‖ / √(‖x − w0‖² + ‖a − w0‖²),
 * whose square is 1 − cos θ · 2‖x−w0‖‖a−w0‖/(‖x−w0‖² + ‖a−w0‖²): 0 for x = a, 1 when the
 * displacements from w0 are orthogonal or one of them is 0, √2 for opposite ones of equal
 * length. NAN when neither moved. */
double ttexp_normalised_distance(const double *x, const double *a, const double *w0, size_t P);

/* The claim `id` of the claim table (verdict/verdict.h); DIE if it is not there. The
 * experiments print each claim's per-seed statistic against the table's threshold. */
const claim_rule *ttexp_claim(const char *id);
/* claims.txt: the claim's id and words, then its statistic, side and threshold, this
 * seed's value and its control's, each said to be on the claim's side or not; the
 * verdict is over seeds (make verdicts). */
void ttexp_print_claim(FILE *f, const char *id, double value, double control);

/* ---- outputs ----------------------------------------------------------------------------- */

/* grid.csv: every evaluated point of every search, with whether the point was added by
 * extension and the search's final status. */
#define TTEXP_GRID_HEADER \
    "method,lr,score_last10pct_train_loss,final_eval_loss,steps_done,best,extended,status"
outfile *ttexp_grid_open(const char *out);
void ttexp_write_search(outfile *f, const ttexp_search *r);
/* One claims.txt line per search: its best value, status, points, range and bounds. */
void ttexp_print_search(FILE *f, const ttexp_search *r);
/* 1 when the search did not end interior (EDGE AT BOUND or NONE FINITE). */
int ttexp_search_at_bound(const ttexp_search *r);
/* Curves of several runs side by side: "step,<col_0>,…" with the held-out loss
 * (eval = 1, one row per evaluation point) or the training loss (one row per step). */
void ttexp_write_curves(const char *path, const char *const *cols, const ttexp_record *const *recs, int n,
                        const ttexp_schedule *sc, int eval);
/* <out>/reference.csv: the initial held-out loss, the entropy floor and P (the
 * plots draw losses above the floor). */
void ttexp_write_reference(ttexp *e, const char *out);

/* ---- the command line every experiment shares ------------------------------------------ */
typedef struct {
    const char *out, *scale;
    long seed, data_seed, steps;
    int threads, grid;        /* grid: points of the learning-rate grid (0: from --scale) */
    int paper;                /* set by ttexp_args_finish */
    int held_out;             /* held-out sequences (512) */
    tt_data_opts data;        /* --data, --text, --vocab-size */
    const char *model;        /* --model tt or llama */
    llama_cli llama;          /* --llama-* */
} ttexp_args;
#define TTEXP_ARGS(out_dir) {.out = out_dir, .scale = "quick", .seed = 1, .data_seed = 1, .threads = 2, .held_out = 512, \
                             .model = "tt", .llama = llama_cli_defaults()}
#define TTEXP_OPTS(a, scale_help, grid_help)                                                         \
    {"model", OPT_STRING, &(a).model, "tt (the tiny GPT) or llama (a Llama-style model of the same sizes: " \
                                      "RMSNorm, rotary, SwiGLU, no biases; --llama-*)"},            \
    LLAMA_CLI_OPTS(&(a).llama),                                                                      \
    {"scale", OPT_STRING, &(a).scale, scale_help},                                                  \
    {"steps", OPT_LONG, &(a).steps, "training steps (0: from --scale)"},                            \
    {"lrs", OPT_INT, &(a).grid, grid_help},                                                         \
    {"seed", OPT_LONG, &(a).seed, "the run's seed: initialisation and training batches"},           \
    {"data-seed", OPT_LONG, &(a).data_seed, "the data's seed: Markov chain and held-out batch"},    \
    TT_DATA_OPTS((a).data),                                                                          \
    {"threads", OPT_INT, &(a).threads, "training runs in parallel"},                                \
    {"held-out", OPT_INT, &(a).held_out, "held-out sequences every comparison is made on, 16..65536"}, \
    {"out", OPT_STRING, &(a).out, "output folder"}
/* --scale into a->paper, the scale's steps and grid where the flags left 0, and
 * the range checks (user errors). */
void ttexp_args_finish(ttexp_args *a, long quick_steps, long paper_steps, int quick_grid, int paper_grid, int max_grid);
/* The experiments' setup: the paper's 1-layer model, batch 64, --held-out (512)
 * held-out sequences, the order-2 Markov source with 2 likely successors (or
 * the text of --data text: V is then its vocabulary's size). */
ttexp_setup ttexp_default_setup(const ttexp_args *a);
/* The same with *layers Transformer blocks (0: 2 at quick scale, 4 at paper scale;
 * user error outside 1..12) and no biases (leave_out, coarse). */
ttexp_setup ttexp_layered_setup(const ttexp_args *a, int *layers);
/* Every experiment's opening: the output folder created, the setup opened into
 * e (text: its vocab.csv written there); returns the schedule of a->steps. */
ttexp_schedule ttexp_begin(ttexp *e, ttexp_setup s, const ttexp_args *a);

#endif
