/* train_transformer — train the tiny Transformer with any optimizer and
 * partition, with checkpoints (parameters and Adam's v̂) at chosen fractions.
 *
 * The researcher's entry point to optim/ and tinytransformer/: every choice of
 * the optimizer experiments is a flag here. Writes <out>/loss.csv,
 * checkpoints.csv, step<s>_params.npy, step<s>_vhat.npy, vocab.csv (text),
 * run.txt, and with --save-safetensors the trained model in nanoGPT's layout. A run whose
 * loss stops being finite ends with a message and exit status 3; what was
 * written up to then is complete.
 */
#include "harness/harness.h"
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    tt_config cfg = tt_defaults();
    tt_train_opts o = tt_train_defaults();
    const char *optim = "adamw", *vstat = "mean", *schedule = "cosine", *partition_name = "alg3";
    const char *out = "results/train_transformer", *save_path = NULL;
    int save_f32 = 0;
    double lr = o.lr, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, wd = -1;
    long seed = 1, data_seed = 1, steps = o.steps, warmup = 0;
    int order = 2, successors = 2, batch = o.batch;
    double_list fracs = {3, {0.01, 0.5, 1}};
    tt_data_opts data = {NULL, NULL, 0};
    const cli_opt opts[] = {
        {"layers", OPT_INT, &cfg.layers, "Transformer layers"},
        {"C", OPT_INT, &cfg.C, "embedding width"},
        {"heads", OPT_INT, &cfg.heads, "attention heads"},
        {"M", OPT_INT, &cfg.M, "MLP width"},
        {"T", OPT_INT, &cfg.T, "context length"},
        {"V", OPT_INT, &cfg.V, "vocabulary size of the Markov source (text: --vocab-size)"},
        {"bias", OPT_INT, &cfg.bias, "1: biases on, 0: off"},
        {"tied", OPT_INT, &cfg.tied, "1: the output head is wte (nanoGPT's weight tying), 0: its own lm_head"},
        {"save-safetensors", OPT_STRING, &save_path, "write the trained model here (nanoGPT's layout, .safetensors)"},
        {"save-f32", OPT_FLAG, &save_f32, "with --save-safetensors: F32 data (default F64, exact)"},
        TT_DATA_OPTS(data),
        {"order", OPT_INT, &order, "Markov source order (the next token depends on this many)"},
        {"successors", OPT_INT, &successors, "Markov source: likely successors per context"},
        {"optim", OPT_STRING, &optim, "gd, heavy-ball, adam, adamw, adam-mini, adafactor or sm3"},
        {"lr", OPT_DOUBLE, &lr, "peak learning rate"},
        {"beta1", OPT_DOUBLE, &beta1, "first-moment decay"},
        {"beta2", OPT_DOUBLE, &beta2, "second-moment decay (1: the exact running-mean limit; Adafactor and SM3 have their own)"},
        {"eps", OPT_DOUBLE, &eps, "epsilon (Adam family; Adafactor and SM3 use 1e-30 inside the root)"},
        {"wd", OPT_DOUBLE, &wd, "decoupled weight decay (-1: 0.1 for adamw and adam-mini, 0 otherwise)"},
        {"vstat", OPT_STRING, &vstat, "Adam-mini block statistic: mean, l2, l1, max, min"},
        {"partition", OPT_STRING, &partition_name,
         "Adam-mini blocks: alg3, alg3-value-whole, alg2 (one per tensor) or a file 'name start n [stride]'"},
        {"schedule", OPT_STRING, &schedule, "constant, cosine or warmup-cosine"},
        {"warmup", OPT_LONG, &warmup, "warmup steps (warmup-cosine)"},
        {"steps", OPT_LONG, &steps, "training steps"},
        {"batch", OPT_INT, &batch, "sequences per step"},
        {"checkpoints", OPT_DOUBLE_LIST, &fracs, "fractions of training to checkpoint, in (0, 1]"},
        {"seed", OPT_LONG, &seed, "the run's seed: initialisation and training batches"},
        {"data-seed", OPT_LONG, &data_seed, "the data's seed: the Markov chain"},
        {"out", OPT_STRING, &out, "output folder"},
    };
    cli_parse(argc, argv,
              "Train the tiny GPT-style Transformer (defaults: the paper's 1-layer model, V 8, C 16, 4 heads,\n"
              "M 32, T 8, biases) on an order-2 Markov source or on text (--data text), with GD, Adam, AdamW,\n"
              "Adam-mini, Adafactor or SM3 (blockwise GD and leave-out need per-block rates: exp2_blockwise_gd,\n"
              "leave_out). Adam-mini follows the official v1.1.1 update; cosine decay ends at 10% of lr.\n"
              "Checkpoints hold the parameters and, for Adam-family optimizers, v-hat (D_Adam = 1/(sqrt(v)+eps)).\n"
              "Exit status 3: the loss diverged (the files up to that step are complete).",
              opts, sizeof opts / sizeof *opts);
    o.optim = optim_parse(optim);
    if (o.optim == OPTIM_BLOCK_GD || o.optim == OPTIM_ADAM_LEAVE_OUT)
        die_user("--optim %s needs per-block learning rates: see exp2_blockwise_gd and leave_out", optim);
    o.ocfg = optim_defaults(o.optim);
    o.ocfg.beta1 = beta1;
    o.ocfg.beta2 = beta2;
    o.ocfg.eps = eps;
    o.ocfg.weight_decay = wd >= 0 ? wd : (o.optim == OPTIM_ADAMW || o.optim == OPTIM_ADAM_MINI) ? 0.1 : 0;
    if (wd < 0 && wd != -1) die_user("--wd must be >= 0 (got %g)", wd);
    o.ocfg.vstat = vstat_parse(vstat);
    optim_check_config(&o.ocfg, lr);
    o.lr = lr;
    o.schedule = schedule_parse(schedule);
    o.warmup = warmup;
    o.steps = steps;
    o.batch = batch;
    o.seed = seed_for((unsigned long)seed, SEED_BATCHES);
    if (steps < 1) die_user("--steps must be >= 1 (got %ld)", steps);
    if (batch < 1) die_user("--batch must be >= 1 (got %d)", batch);
    if (warmup < 0 || warmup > steps) die_user("--warmup must be in 0..steps (got %ld)", warmup);
    if (seed < 0 || data_seed < 0) die_user("seeds must be >= 0");
    if (fracs.n > TT_MAX_CHECKPOINTS) die_user("--checkpoints: at most %d", TT_MAX_CHECKPOINTS);
    o.nfracs = fracs.n;
    for (int i = 0; i < fracs.n; i++) {
        if (!(fracs.v[i] > 0 && fracs.v[i] <= 1)) die_user("--checkpoints: fractions must be in (0, 1] (got %g)", fracs.v[i]);
        o.fracs[i] = fracs.v[i];
    }
    cfg.seed = seed_for((unsigned long)seed, SEED_INIT);
    tt_data *d = token_source(&data, cfg.V, cfg.T, order, successors, (unsigned long)data_seed);
    cfg.V = tt_data_vocab(d);
    tt_check_config(&cfg);
    model *m = tt_new(&cfg);
    partition *p = NULL;
    if (strcmp(partition_name, "alg3") == 0) p = partition_alg3(m, 0);
    else if (strcmp(partition_name, "alg3-value-whole") == 0) p = partition_alg3(m, 1);
    else if (strcmp(partition_name, "alg2") == 0) p = partition_alg2(m);
    else p = partition_read(partition_name, m);
    o.blocks = p;
    if (!core_quiet) fprintf(stderr, "train_transformer: P = %zu, %d blocks, %s\n", m->P, p->nblocks, optim_name(o.optim));
    tt_train_result r = tt_train(m, d, &o, out);
    if (save_path && !r.diverged) tt_save_nanogpt(m, save_path, save_f32);
    run_write_info(out, (unsigned long)seed);
    if (!core_quiet && !r.diverged) fprintf(stderr, "train_transformer: final batch loss %.4f\n", r.final_loss);
    partition_free(p);
    model_free(m);
    tt_data_free(d);
    if (r.diverged) die_diverged("diverged at step %ld (loss or gradient not finite); %s holds the steps before it",
                                 r.steps_done, out);
    return 0;
}
