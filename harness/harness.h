/* harness — what the experiment programs share, on top of the libraries
 * (core/, optim/, hessian/, quad/, mlp/, tinytransformer/): the command-line
 * glue, the seeding convention, the data pipelines, the training loops with
 * checkpoints, and the Hessian at a training checkpoint. experiments/ holds only
 * mains built from these; the optimizer experiments on the tiny Transformer add
 * harness/ttexp.h.
 */
#ifndef HARNESS_H
#define HARNESS_H

#include "core/core.h"
#include "core/model.h"
#include "hessian/hessian.h"
#include "mlp/mlp.h"
#include "optim/optim.h"
#include "quad/quad.h"
#include "tinytransformer/tt.h"
#include "verdict/verdict.h"

/* ---- seeds (common.c) ------------------------------------------------------------------
 * Every random stream of a run comes from the user's two seeds, in one place,
 * each purpose through its own hash (core's seed_mix), so that no two seeds,
 * purposes or instances share a sequence:
 *   --seed S       the run: model initialisation, training batches and
 *                  shuffles (another batch order k: instance k of the batch
 *                  stream), random baselines, random draws of tensors or blocks;
 *   --data-seed D  the data: the Markov chain or synthetic image set, and the
 *                  fixed held-out sequences, on which the Transformer's
 *                  Hessians are taken too.
 * So a second --seed with the same --data-seed trains another model on the same
 * data and is judged on the same held-out set; --data-seed changes the data; and
 * D = S (as make verdicts runs) still draws data and weights from different streams. */
typedef enum { SEED_INIT, SEED_BATCHES, SEED_BASELINES, SEED_DRAWS, SEED_DATA, SEED_HELD_OUT } seed_stream;
/* The generator seed of stream s of a run seeded with base (instance 0). */
unsigned long seed_for(unsigned long base, seed_stream s);
/* Instance k of stream s (k = 0 is seed_for's). */
unsigned long seed_for_nth(unsigned long base, seed_stream s, unsigned long k);

/* ---- command-line glue (common.c) -------------------------------------------------------- */
/* "quick" -> 0, "paper" -> 1; user error otherwise. */
int scale_parse(const char *scale);
/* The token source of every Transformer program (--data, --text, --vocab-size):
 * the order-`order` Markov source over V symbols with `successors` likely next
 * tokens, seeded with data_seed; or text (tinytransformer/tt.h): a text file, a
 * folder of text files, or a folder holding nanoGPT's train.bin and val.bin.
 * The default text is Debian's fortunes package (TT_TEXT_DEFAULT, ~2.5 MB of
 * English prose, verse and quotations; BSD licence, docs/real_text.md): its
 * files in name order; the offensive subset (package fortunes-off, a subfolder
 * off/) is never read. Text's default vocabulary is the 31 most frequent bytes
 * and "other" (TT_TEXT_VOCAB), so that the model stays close to the Markov
 * chain's size; --vocab-size 256 keeps every byte. The model's V is the
 * source's vocabulary (tt_data_vocab). */
#define TT_TEXT_DEFAULT "/usr/share/games/fortunes"
#define TT_TEXT_VOCAB 32
typedef struct {
    const char *data;  /* "markov" or "text"; NULL: text when `text` is set, else markov */
    const char *text;  /* NULL: TT_TEXT_DEFAULT */
    int vocab;         /* text: vocabulary size (0: TT_TEXT_VOCAB); token files: theirs (required) */
} tt_data_opts;
#define TT_DATA_OPTS(o)                                                                                          \
    {"data", OPT_STRING, &(o).data, "token source: markov (a sparse random Markov chain) or text (char-level)"}, \
    {"text", OPT_STRING, &(o).text, "--data text: a text file, a folder of text files, or a folder with nanoGPT's " \
                                    "train.bin and val.bin (default: " TT_TEXT_DEFAULT ")"},                     \
    {"vocab-size", OPT_INT, &(o).vocab, "--data text: vocabulary size, the most frequent bytes + 'other' (0: 32; " \
                                        "256: every byte); nanoGPT's .bin files: their vocabulary, required"}
/* 1 for text (user error on a --data other than markov or text, or --text with markov). */
int token_source_is_text(const tt_data_opts *o);
tt_data *token_source(const tt_data_opts *o, int V, int T, int order, int successors, unsigned long data_seed);
/* "markov" or "text <path>" (what run.txt and the claims' context lines say). */
const char *token_source_name(const tt_data_opts *o);
/* <dir>/vocab.csv for text and token files (id, byte, char, count); nothing for Markov. */
void token_source_write_vocab(const tt_data *d, const char *dir);
/* The batch a probe runs on (tt_probe, llama_probe): --tokens, a (B, T+1) .npy
 * of token ids, or --batch sequences drawn with --data-seed from the held-out
 * (--held-out 1) or training part of the token source (an order-2 Markov chain
 * over V symbols, or text whose vocabulary must be V: `model` names the model in
 * that error). */
typedef struct {
    const char *tokens;
    tt_data_opts data;
    int batch, held_out;
    long data_seed;
} probe_batch;
#define PROBE_BATCH_DEFAULTS {NULL, {NULL, NULL, 0}, 8, 1, 1}
#define PROBE_BATCH_OPTS(o)                                                                                      \
    {"tokens", OPT_STRING, &(o).tokens, "the batch: a (B, T+1) .npy of token ids (else drawn from --data)"},   \
    TT_DATA_OPTS((o).data),                                                                                      \
    {"batch", OPT_INT, &(o).batch, "sequences drawn from --data"},                                               \
    {"held-out", OPT_INT, &(o).held_out, "1: from the held-out part, 0: the training part"},                     \
    {"data-seed", OPT_LONG, &(o).data_seed, "the draw's seed (and the Markov chain's)"}
/* User error on a flag out of range (before any output). */
void probe_batch_check(const probe_batch *o);
/* The tokens (B, T+1); *B the sequences; *d the source (NULL for a file), for vocab.csv. */
int *probe_tokens(const probe_batch *o, int V, int T, const char *model, int *B, tt_data **d);
/* A probe's loss.csv (loss, P, batch) and tokens.npy (B, T+1) in out. */
void probe_write(const char *out, double loss, size_t P, const int *tok, int B, int T);
/* The searched range of each method's learning rate (or factor): the first grid,
 * log-spaced in [lo, hi], which extends at its edges in the same spacing until the
 * best is interior or a bound [lo_bound, hi_bound] stops it (lr_grid below). */
typedef enum {
    LR_GD, LR_BLOCKGD, LR_HEAVY_BALL, LR_BLOCKHB, LR_ADAMW, LR_ADAM_MINI, LR_ADAM, LR_ADAFACTOR, LR_SM3, LR_VSTAT,
    LR_LEAVE_OUT, LR_COORD, LR_RANGE_COUNT
} lr_method;
typedef struct {
    const char *name;
    double lo, hi;             /* the first grid */
    double lo_bound, hi_bound; /* how far it may extend */
    const char *note;
} lr_range;
const lr_range *lr_range_of(lr_method m);
/* Copies a committed text file to stderr (a program's claims), unless --quiet. */
void echo_file(const char *path);

/* ---- learning-rate grids that extend at the edges (lr_grid.c) ----------------------------
 * A small state machine; runs are evaluated by the caller, in batches:
 *
 *     lr_grid g;
 *     lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-6, 1.0);
 *     double lrs[LR_GRID_MAX];
 *     for (int k; (k = lr_grid_next(&g, lrs)) > 0;) {
 *         ... evaluate score(lrs[0..k-1]), in parallel if you like ...
 *         for (int i = 0; i < k; i++) lr_grid_add(&g, lrs[i], score[i]);
 *     }
 *     switch (lr_grid_status(&g)) { ... }   // GRID_INTERIOR: g.lr[lr_grid_best(&g)] is bracketed
 *
 * lr_grid_init plans the first grid but evaluates nothing: it leaves n = 0,
 * and the first lr_grid_next returns the planned points lo·(hi/lo)^(k/(n−1)),
 * k = 0..n−1 (exactly lo and hi at the ends). Planned points not yet added
 * are always returned first, and no extension is proposed before all are in.
 *
 * Scores: lower is better; any non-finite score (NaN, ±inf) means diverged.
 * Best: the lowest finite score, the smallest lr on exact ties.
 * Edges: the best is "at the lower edge" when the smallest-lr point has a
 * finite score equal to the minimum (exact ties count: a plateau reaching the
 * edge is not bracketed), and "at the upper edge" likewise for the largest-lr
 * point. A diverged point is worse than any finite one, so a best whose
 * neighbours above (or below) all diverged is bracketed on that side
 * (interior), and the grid never extends toward divergence.
 * Extension: one point beyond each edge the best is at: lr[0]/step below,
 * lr[n−1]·step above (the same log spacing), only when it stays within
 * [lo_bound, hi_bound] (relative slack 1e-9, so a bound that lies on the
 * lattice is reached) and the grid has room (LR_GRID_MAX points; the lower
 * end gets the last free slot).
 * All diverged: extend downward (smaller lr) only, until the bound or capacity.
 */
#define LR_GRID_MAX 64
typedef struct {
    int n;                       /* points evaluated so far */
    double lr[LR_GRID_MAX];      /* ascending */
    double score[LR_GRID_MAX];   /* lower is better; non-finite = diverged */
    double step;                 /* ratio between neighbours: (hi/lo)^(1/(n−1)) */
    double lo_bound, hi_bound;   /* never propose a point below / above these */
    int extended_lo, extended_hi; /* points added below plan_lo / above plan_hi */
    double plan_lo, plan_hi;     /* the first grid, as given to lr_grid_init */
    int plan_n;
} lr_grid;
/* User error: n < 2 or n > LR_GRID_MAX, bounds or lo, hi non-finite, or not
 * 0 < lo_bound ≤ lo < hi ≤ hi_bound (lo or hi within the relative slack 1e-9
 * beyond a bound is planned at the bound). */
void lr_grid_init(lr_grid *g, double lo, double hi, int n, double lo_bound, double hi_bound);
/* Index of the best point (see above); −1 when no score is finite. */
int lr_grid_best(const lr_grid *g);
/* Writes the learning rates to evaluate next into lrs (room for LR_GRID_MAX)
 * and returns how many: the planned points not yet added if any; else one
 * point beyond each edge the best is at, as the bounds and room allow;
 * 0 when the grid is done. */
int lr_grid_next(const lr_grid *g, double *lrs);
/* Adds an evaluated point, keeping lr ascending. User error: lr non-finite or
 * ≤ 0, lr outside [lo_bound, hi_bound] (same slack), an lr within relative
 * 1e-9 of one already in the grid, or the grid already holding LR_GRID_MAX
 * points. */
void lr_grid_add(lr_grid *g, double lr, double score);
typedef enum {
    GRID_INTERIOR,      /* done; neither end point attains the best score: the minimum is bracketed */
    GRID_EDGE_AT_BOUND, /* done, but the best is at an edge: a bound or LR_GRID_MAX stopped the extension */
    GRID_NONE_FINITE,   /* done, and every point diverged (extended down to the bound or capacity) */
    GRID_UNFINISHED     /* lr_grid_next would still return points */
} grid_status;
grid_status lr_grid_status(const lr_grid *g);
/* "INTERIOR", "EDGE AT BOUND", "NONE FINITE", "UNFINISHED". */
const char *grid_status_name(grid_status s);

/* ---- the MLP's image data (common.c) ---------------------------------------------------------
 * dataset_load's train and test splits of `name`, pooled k×k, the features that
 * are constant over the training set dropped, standardised per feature when asked. */
typedef struct {
    dataset *train, *test;
    int dropped;             /* constant features dropped */
} mlp_data;
void mlp_data_load(mlp_data *d, const char *name, const char *dir, int pool, int standardize, unsigned long seed);
void mlp_data_free(mlp_data *d);
/* The first n test images into X (n, dim) and y (n); user error naming `what` if there are fewer. */
void mlp_data_head(const mlp_data *d, int n, const char *what, double *X, int *y);

/* ---- the shared optimizers on a quadratic (quad_train.c) ------------------------------------ */
/* Run `steps` steps of the optimizer from w0 at learning rate lr, g = Hw; loss[t]
 * is f after t steps (loss[0] = f(w0)), length steps+1. Returns the number of
 * steps done: a run stops early (the rest of loss[] set to NaN) when the loss
 * is not finite or exceeds 1e100·f(w0) (diverged). */
long quad_train(double *loss /* (steps+1) */, const double *H /* (n,n) */, const double *w0, int n,
                optim_kind kind, const optim_config *cfg, const partition *blocks, double lr, long steps);
/* Learning-rate search on an extending log grid (lr_grid below): the
 * planned points lo·(hi/lo)^(k/(nlr-1)), k < nlr, then one point beyond each
 * edge the best is at, with the same spacing, until the best is interior or
 * [lo_bound, hi_bound] or LR_GRID_MAX stops it (status). Each run is scored by
 * quad_mean_log_loss, the statistic Fig. 3's claims compare (lower is better;
 * a diverged run scores NaN and is never best). User error: nlr outside
 * 2..LR_GRID_MAX or not 0 < lo_bound <= lo < hi <= hi_bound. */
typedef struct {
    lr_grid grid;            /* grid.n runs: grid.lr ascending, grid.score */
    grid_status status;      /* GRID_INTERIOR unless a bound stopped the extension or all diverged */
    int best;                /* index into grid.lr; -1 when every run diverged */
    double *final_loss;      /* (grid.n) loss after the last step, NaN if the run diverged */
    double *loss;            /* (grid.n, steps+1) the curve at grid.lr[k] */
} quad_grid;
quad_grid *quad_grid_search(const double *H, const double *w0, int n, optim_kind kind, const optim_config *cfg,
                            const partition *blocks, double lo, double hi, int nlr, double lo_bound,
                            double hi_bound, long steps);
void quad_grid_free(quad_grid *g);

/* ---- training the tiny Transformer with checkpoints (tt_train.c) ----------------------------
 * Each step draws a fresh batch from the data (seeded), takes the loss and the
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

/* ---- the Hessian at a training checkpoint (ckpt.c) -------------------------------------------
 * What fig6, table_kappa and partition_check share. Transformer: build the model
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
    const char *model_path;    /* a nanoGPT-layout .safetensors to analyse instead of training (NULL) */
    const char *model_config;  /* its config JSON (NULL: the file's metadata) */
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
/* A model trained elsewhere (model_path): tt_ckpt_start reads it (its
 * configuration is the setup's: ckpt_cli_setup takes it from the file);
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
    {"model", OPT_STRING, &(c)->model_path, "a checkpoint in nanoGPT's layout (.safetensors): H of that model, "   \
                                            "no training (v-hat estimated from 64 batches; docs/real_text.md)"},  \
    CKPT_CLI_MODEL_CONFIG_OPT(c)
#define CKPT_CLI_MODEL_CONFIG_OPT(c)                                                                             \
    {"model-config", OPT_STRING, &(c)->model_config, "with --model FILE: its config JSON (nanoGPT's GPTConfig keys) " \
                                                     "when the file's metadata lacks n_head"}
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
/* The scale's Hessian batch unless --hess-batch is given, range checks, the data
 * source opened once (so a bad file stops before any output; text sets V to its
 * vocabulary's size), and the setup. */
tt_ckpt_setup ckpt_cli_setup(ckpt_cli *c);

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
/* The tensor of Fig. 6 block k in Transformer block `layer` (embed and output are the model's). */
int fig6_tensor(const model *m, int layer, int k);

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
} mlp_ckpt;
void mlp_ckpt_hessian(const mlp_ckpt_setup *s, mlp_ckpt *out);
/* The same without H; train = 0: not trained either (parameters at
 * initialisation, the Hessian batch set; the caller sets the checkpoint's). */
void mlp_ckpt_model(const mlp_ckpt_setup *s, int train, mlp_ckpt *out);
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

/* ---- either model at a checkpoint, on every rank of a job (model_ckpt.c) ----------------------
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

/* ==== extensions hetero and vspread (hetero_util.c) ==================================
 * Groups of parameter indices, and what the two extensions measure on them.
 *
 * Block heterogeneity (hetero; paper Sec. 2.1 and App. "Preliminary results in
 * [zhang2024transformers]": "the Hessian of different parameter blocks have
 * dramatically different eigenvalue distributions"): one number per block,
 * h_b = log10 |λ|max(H_bb), the largest curvature its one learning rate must
 * respect, and their spread over the blocks. Scale-free: H → cH shifts every
 * h_b by log10 c.
 *
 * The spread of v̂ (vspread; paper App. "Why using average v": "G usually has
 * similar entries within a row ... its mean value can be a good representative
 * of the whole row"): x_i = log10(√v̂_i + ε), the log of Adam's denominator, and
 * its pooled spread inside groups (rows, columns, heads, random groups). */

/* A grouping of indices: group k holds idx[off[k] .. off[k+1]). */
typedef struct {
    int ngroups;
    size_t *off;     /* (ngroups + 1) */
    size_t *idx;     /* (off[ngroups]) */
} index_groups;
static inline size_t group_size(const index_groups *g, int k) { return g->off[k + 1] - g->off[k]; }
/* The blocks of p as groups (a strided block's indices in order). */
index_groups *groups_of_partition(const partition *p);
/* The same group sizes laid on a uniformly random permutation of g's members
 * (the members of all groups pooled): random groups, the negative controls. */
index_groups *groups_shuffled(const index_groups *g, gsl_rng *rng);
void groups_free(index_groups *g);
/* The type of each block of p (a partition that splits every tensor by one of
 * its candidate splits, as Algorithms 2 and 3 do): its tensor's role and what
 * one block of the split is, "query head", "mlp_fc output neuron", "embed
 * token", "norm tensor", ...; type[k] indexes names (first seen first).
 * Returns the number of types. */
#define BLOCK_TYPE_LEN 64
int block_types(int *type, char (*names)[BLOCK_TYPE_LEN], int max_types, const model *m, const partition *p);

/* H[idx, idx] (n×n, malloc'ed) for any index set, H (P×P) row-major. */
double *index_submatrix(const double *H, size_t P, const size_t *idx, size_t n);
/* The eigenvalues of group k's diagonal block of H, ascending, into w (group_size values). */
void group_eigvals(double *w, const double *H, size_t P, const index_groups *g, int k);
/* h[k] = log10 |λ|max of group k's diagonal block, for every group; NAN for a
 * group with no curvature beyond round-off: ‖H_kk‖_F <= zero_rel · (Σ_k ‖H_kk‖_F²)^½.
 * eig: NULL, or room for every group's eigenvalues (off[ngroups]; group k's ascending at off[k]). */
void group_log_absmax(double *h, double *eig, const double *H, size_t P, const index_groups *g, double zero_rel);
/* The spread of n values over their finite ones (n counts those): mean; sd
 * (divisor n − 1; NAN for n < 2); iqr (numpy quantiles); eta2 = SS_between /
 * SS_total by type[i] (0-based labels, may be NULL: eta2 NAN), the share of the
 * variance the type means explain (NAN when all values are equal). */
typedef struct {
    int n;
    double mean, sd, iqr, eta2;
} spread_stats;
spread_stats spread_of(const double *x, const int *type, int n);
/* The heterogeneity of the blocks g of H, with its random baseline and
 * control: h[k] as group_log_absmax (eig as there), real = spread_of(h, type).
 * The kept blocks (h finite) laid on random permutations of their members
 * (groups_shuffled, types by position): rand_sd and rand_eta2 the means over
 * `reps` draws; one more draw is the control partition: control_sd, and
 * control_h[k] its h at block k's position (NAN where h[k] is). Same sizes,
 * same counts, same H: only which parameters form a block is lost. */
typedef struct {
    spread_stats real;
    int kept, zero;          /* blocks with curvature / without */
    double rand_sd, rand_eta2, control_sd;
} hetero_stats;
hetero_stats block_heterogeneity(double *h, double *eig, double *control_h, const double *H, size_t P,
                                 const index_groups *g, const int *type, int reps, gsl_rng *rng, double zero_rel);

/* The spread of x (indexed by g's indices) inside g's groups: the pooled
 * within-group sd, √(Σ_k Σ_{i∈k} (x_i − x̄_k)² / Σ_k (n_k − 1)), and the sd of
 * all members (divisor N − 1); NAN when a divisor is 0. For groups laid at
 * random (groups_shuffled) the pooled within-group variance has mean exactly
 * the members' variance, so within_sd/total_sd is 1 for random groups (in the
 * mean of its square) and 0 for groups with constant x. */
typedef struct {
    double within_sd, total_sd;
    size_t within_df, total_df;
} group_spread;
group_spread group_spread_of(const double *x, const index_groups *g);
/* R² of the two-way additive fit x_ij ≈ a_i + b_j of x (rows×cols, row-major):
 * 1 when log v̂ = log α_i + log β_j, i.e. v̂ = αβᵀ as for G = e zᵀ with e and
 * z independent; NAN for constant x. */
double additive_r2(const double *x, int rows, int cols);
/* For every member i of group k: log2 of Adam's learning-rate factor over
 * Adam-mini's, r_i = log2((√mean_{j∈k} v̂_j + ε) / (√v̂_i + ε)), into r[i]
 * (r indexed like vhat; entries outside g untouched). */
void group_lr_log2_ratio(double *r, const double *vhat, const index_groups *g, double eps);

/* ---- mlp_steps: the softmax factor of Collobert's argument (mlp_steps_util.c) ----------------
 * The paper (App. "More Discussions", after Collobert 2004) puts the factor
 * p(1 − p) in front of the Hessian entries between two hidden neurons and argues
 * that they shrink as it does. For C classes the factor is the softmax Hessian
 * diag(p) − ppᵀ, whose trace is Σ_c p_c(1 − p_c) (2p(1 − p) for C = 2). */
/* The softmax probabilities of m's outputs for the n rows of X (n, in) into p
 * (n, classes): for a squared-loss MLP the softmax of its outputs (its Hessian
 * has no such factor). m needs biases; its batch is left at the last row. */
void mlp_softmax_probs(model *m, const double *X, const int *y, int n, double *p);
typedef struct {
    double mean;        /* mean over samples and classes of p_c(1 − p_c): tr(diag p − ppᵀ)/C */
    double true_class;  /* mean over samples of p_y(1 − p_y), y the label (Collobert's binary p) */
} softmax_pq;
softmax_pq softmax_pq_of(const double *p /* (n, classes) */, const int *y, int n, int classes);
/* The least-squares slope of log y on log x over n points; NAN if any value is
 * not > 0 or the x are all equal. */
double loglog_slope(const double *x, const double *y, int n);

/* ---- what the spectra programs share (spectra_util.c) ------------------------------------------ */
/* alg3, alg3-value-whole, alg2 (= tensors), rows, cols, whole (one block: the
 * whole model), or a partition file (core/model.h; its blocks need not cover
 * the model: partition_read_blocks). */
partition *partition_by_name(const model *m, const char *name);
/* block_types when p splits every tensor by one of its candidate splits, else
 * one type per distinct tensor role ("whole" for a block without a tensor). */
int block_types_any(int *type, char (*names)[BLOCK_TYPE_LEN], int max_types, const model *m, const partition *p);
/* At most max_per_type blocks of each type (evenly spaced in p's order: the
 * first, the last and those between; all when max_per_type = 0): a new
 * partition of them (not covering), their indices in p into *kept (malloc'ed). */
partition *partition_sample_types(const partition *p, const int *type, int max_per_type, int **kept);
/* The exact eigenvalues of every diagonal block H_bb of p (covering 0..P−1) by
 * the streamed analysis (hstream_run_dist over the ranks): on rank 0 a
 * malloc'ed array, block b's ascending at off[b] (off: nblocks + 1); NULL on
 * the other ranks. */
double *exact_block_eigs(model *m, const partition *p, const hessian_opts *o, size_t *off);

#endif
