/* train_transformer — train the tiny Transformer (or, with --model llama, a
 * Llama-style model of the same sizes) with any optimizer and partition, with
 * checkpoints (parameters and Adam's v̂) at chosen fractions.
 *
 * The researcher's entry point to optim/ and tinytransformer/: every choice of
 * the optimizer experiments is a flag here. Writes <out>/loss.csv,
 * checkpoints.csv, step<s>_params.npy, step<s>_vhat.npy, vocab.csv (text),
 * run.txt, and with --save-safetensors the trained model in nanoGPT's layout (a Llama:
 * Hugging Face's, a folder with model.safetensors and config.json). A run whose
 * loss stops being finite ends with a message and exit status 3; what was
 * written up to then is complete.
 */
#include "core/core.h"
#include "core/model.h"
#include "harness/data.h"
#include "harness/llama_cli.h"
#include "harness/seeds.h"
#include "harness/tt_train.h"
#include "optim/optim.h"
#include "tinytransformer/llama.h"
#include "tinytransformer/tt.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    tt_config cfg;
    const char *model;                 /* tt or llama */
    llama_cli llama;
    const char *optim, *vstat, *schedule, *partition_name, *out, *save_path;
    int save_f32;
    tt_data_opts data;                 /* --data, --text, --vocab-size */
    double lr, beta1, beta2, eps, wd;
    long seed, data_seed, steps, warmup;
    int order, successors, batch;
    double_list fracs;
} tt_args;

static tt_args parse_args(int argc, char **argv)
{
    tt_train_opts o = tt_train_defaults();
    tt_args x = {.cfg = tt_defaults(), .model = "tt", .llama = llama_cli_defaults(), .optim = "adamw",
                 .vstat = "mean", .schedule = "cosine", .partition_name = "alg3", .out = "results/train_transformer", .lr = o.lr, .beta1 = 0.9,
                 .beta2 = 0.999, .eps = 1e-8, .wd = -1, .seed = 1, .data_seed = 1, .steps = o.steps, .order = 2,
                 .successors = 2, .batch = o.batch, .fracs = {3, {0.01, 0.5, 1}}};
    const cli_opt opts[] = {
        {"model", OPT_STRING, &x.model, "tt (the tiny GPT) or llama (a Llama-style model of the same sizes: RMSNorm, "
                                        "rotary, SwiGLU, no biases; --llama-*)"},
        LLAMA_CLI_OPTS(&x.llama),
        {"layers", OPT_INT, &x.cfg.layers, "Transformer layers"},
        {"C", OPT_INT, &x.cfg.C, "embedding width"},
        {"heads", OPT_INT, &x.cfg.heads, "attention heads"},
        {"M", OPT_INT, &x.cfg.M, "MLP width"},
        {"T", OPT_INT, &x.cfg.T, "context length"},
        {"V", OPT_INT, &x.cfg.V, "vocabulary size of the Markov source (text: --vocab-size)"},
        {"bias", OPT_INT, &x.cfg.bias, "1: biases on, 0: off"},
        {"tied", OPT_INT, &x.cfg.tied, "1: the output head is wte (nanoGPT's weight tying), 0: its own lm_head"},
        {"save-safetensors", OPT_STRING, &x.save_path,
         "write the trained model here (nanoGPT's layout, .safetensors; a Llama: a Hugging Face folder)"},
        {"save-f32", OPT_FLAG, &x.save_f32, "with --save-safetensors: F32 data (default F64, exact)"},
        TT_DATA_OPTS(x.data),
        {"order", OPT_INT, &x.order, "Markov source order (the next token depends on this many)"},
        {"successors", OPT_INT, &x.successors, "Markov source: likely successors per context"},
        {"optim", OPT_STRING, &x.optim, "gd, heavy-ball, adam, adamw, adam-mini, adafactor or sm3"},
        {"lr", OPT_DOUBLE, &x.lr, "peak learning rate"},
        {"beta1", OPT_DOUBLE, &x.beta1, "first-moment decay"},
        {"beta2", OPT_DOUBLE, &x.beta2, "second-moment decay (1: the exact running-mean limit; Adafactor and SM3 have their own)"},
        {"eps", OPT_DOUBLE, &x.eps, "epsilon (Adam family; Adafactor and SM3 use 1e-30 inside the root)"},
        {"wd", OPT_DOUBLE, &x.wd, "decoupled weight decay (-1: 0.1 for adamw and adam-mini, 0 otherwise)"},
        {"vstat", OPT_STRING, &x.vstat, "Adam-mini block statistic: mean, l2, l1, max, min"},
        {"partition", OPT_STRING, &x.partition_name,
         "Adam-mini blocks: alg3, alg3-value-whole, alg2 (one per tensor) or a file 'name start n [stride]'"},
        {"schedule", OPT_STRING, &x.schedule, "constant, cosine or warmup-cosine"},
        {"warmup", OPT_LONG, &x.warmup, "warmup steps (warmup-cosine)"},
        {"steps", OPT_LONG, &x.steps, "training steps"},
        {"batch", OPT_INT, &x.batch, "sequences per step"},
        {"checkpoints", OPT_DOUBLE_LIST, &x.fracs, "fractions of training to checkpoint, in (0, 1]"},
        {"seed", OPT_LONG, &x.seed, "the run's seed: initialisation and training batches"},
        {"data-seed", OPT_LONG, &x.data_seed, "the data's seed: the Markov chain (text: the held-out draws)"},
        {"out", OPT_STRING, &x.out, "output folder"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Train the tiny GPT-style Transformer (defaults: the paper's 1-layer model, V 8, C 16, 4 heads,\n"
              "M 32, T 8, biases) or a Llama-style model of those sizes (--model llama: RMSNorm, rotary,\n"
              "SwiGLU, grouped key/value heads, no biases) on an order-2 Markov source or on text (--data text),\n"
              "with GD, Adam, AdamW, Adam-mini, Adafactor or SM3 (blockwise GD and leave-out need per-block\n"
              "rates: exp2_blockwise_gd, leave_out). Adam-mini follows the official v1.1.1 update; cosine decay\n"
              "ends at 10% of lr.\n"
              "Checkpoints hold the parameters and, for Adam-family optimizers, v-hat (D_Adam = 1/(sqrt(v)+eps)).\n"
              "Exit status 3: the loss diverged (the files up to that step are complete).",
              opts, sizeof opts / sizeof *opts);
    /* flags of the other model (cli_was_given knows this x, not the copy returned) */
    int llama = strcmp(x.model, "llama") == 0;
    llama_cli_refuse_unused(&x.llama, llama);
    if (llama && (cli_was_given(&x.cfg.bias) || cli_was_given(&x.cfg.tied)))
        die_user("--bias and --tied are the tiny GPT's: the Llama has no biases, and --llama-tied ties its head");
    return x;
}

/* The optimizer, its configuration, the schedule and the checkpoints (range checks:
 * user errors, in the order the flags are listed). */
static tt_train_opts train_opts_of(tt_args *x)
{
    tt_train_opts o = tt_train_defaults();
    o.optim = optim_parse(x->optim);
    if (o.optim == OPTIM_BLOCK_GD || o.optim == OPTIM_ADAM_LEAVE_OUT)
        die_user("--optim %s needs per-block learning rates: see exp2_blockwise_gd and leave_out", x->optim);
    o.ocfg = optim_defaults(o.optim);
    o.ocfg.beta1 = x->beta1;
    o.ocfg.beta2 = x->beta2;
    o.ocfg.eps = x->eps;
    o.ocfg.weight_decay = x->wd >= 0 ? x->wd : (o.optim == OPTIM_ADAMW || o.optim == OPTIM_ADAM_MINI) ? 0.1 : 0;
    if (x->wd < 0 && x->wd != -1) die_user("--wd must be >= 0 (got %g)", x->wd);
    o.ocfg.vstat = vstat_parse(x->vstat);
    optim_check_config(&o.ocfg, x->lr);
    o.lr = x->lr;
    o.schedule = schedule_parse(x->schedule);
    o.warmup = x->warmup;
    o.steps = x->steps;
    o.batch = x->batch;
    o.seed = seed_for((unsigned long)x->seed, SEED_BATCHES);
    if (x->steps < 1) die_user("--steps must be >= 1 (got %ld)", x->steps);
    if (x->batch < 1) die_user("--batch must be >= 1 (got %d)", x->batch);
    if (x->warmup < 0 || x->warmup > x->steps) die_user("--warmup must be in 0..steps (got %ld)", x->warmup);
    if (x->seed < 0 || x->data_seed < 0) die_user("seeds must be >= 0");
    if (x->fracs.n > TT_MAX_CHECKPOINTS) die_user("--checkpoints: at most %d", TT_MAX_CHECKPOINTS);
    o.nfracs = x->fracs.n;
    for (int i = 0; i < x->fracs.n; i++) {
        if (!(x->fracs.v[i] > 0 && x->fracs.v[i] <= 1))
            die_user("--checkpoints: fractions must be in (0, 1] (got %g)", x->fracs.v[i]);
        o.fracs[i] = x->fracs.v[i];
    }
    x->cfg.seed = seed_for((unsigned long)x->seed, SEED_INIT);
    return o;
}

/* The model of --model and the size flags (checked: user errors). */
static model *model_of(const tt_args *x)
{
    if (strcmp(x->model, "tt") == 0) {
        tt_check_config(&x->cfg);
        return tt_new(&x->cfg);
    }
    if (strcmp(x->model, "llama") != 0) die_user("--model must be tt or llama (got '%s')", x->model);
    const tt_config *c = &x->cfg;
    llama_config l = llama_cli_config(&x->llama, c->V, c->C, c->layers, c->heads, c->M, c->T, c->seed);
    llama_check_config(&l);
    return llama_new(&l);
}

/* --partition: alg3, alg3-value-whole, alg2 or a partition file. */
static partition *partition_named(const char *name, const model *m)
{
    if (strcmp(name, "alg3") == 0) return partition_alg3(m, 0);
    if (strcmp(name, "alg3-value-whole") == 0) return partition_alg3(m, 1);
    if (strcmp(name, "alg2") == 0) return partition_alg2(m);
    return partition_read(name, m);
}

int main(int argc, char **argv)
{
    tt_args x = parse_args(argc, argv);
    tt_train_opts o = train_opts_of(&x);
    tt_data *d = token_source(&x.data, x.cfg.V, x.cfg.T, x.order, x.successors, (unsigned long)x.data_seed);
    x.cfg.V = tt_data_vocab(d); /* the text's vocabulary, or the Markov source's V */
    model *m = model_of(&x);
    partition *p = partition_named(x.partition_name, m);
    o.blocks = p;
    if (!core_quiet) fprintf(stderr, "train_transformer: P = %zu, %d blocks, %s\n", m->P, p->nblocks, optim_name(o.optim));
    tt_train_result r = tt_train(m, d, &o, x.out);
    if (x.save_path && !r.diverged) {
        if (model_is_llama(m)) llama_save_hf(m, x.save_path, x.save_f32);
        else tt_save_nanogpt(m, d, x.save_path, x.save_f32);
    }
    run_write_info(x.out, (unsigned long)x.seed);
    if (!core_quiet && !r.diverged) fprintf(stderr, "train_transformer: final batch loss %.4f\n", r.final_loss);
    partition_free(p);
    model_free(m);
    tt_data_free(d);
    if (r.diverged) die_diverged("diverged at step %ld (loss or gradient not finite); %s holds the steps before it",
                                 r.steps_done, x.out);
    return 0;
}
