/* The registry's Llama-style model (models.h, tinytransformer/llama.h):
 * trained with AdamW as the tiny Transformer is (tt_train, the same token
 * source, checkpoints and Hessian batch), or a Hugging Face checkpoint
 * (--model DIR with config.json and model.safetensors; or FILE.safetensors
 * with --model-config config.json) at its own weights, v̂ estimated as for a
 * nanoGPT file. Sizes: the shared --V, --C, --heads, --M, --T, --layers, and
 * --llama-kv-heads (2 by default: grouped-query attention), --llama-head-dim,
 * --llama-eps, --llama-theta, --llama-tied; a file's T is --T.
 * --save-safetensors PATH writes the checkpoint in Hugging Face's layout, as a
 * folder. */
#include "core/core.h"
#include "harness/models.h"
#include "harness/seeds.h"
#include "harness/tt_ckpt.h"
#include "harness/tt_train.h"
#include "tinytransformer/llama.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    llama_config cfg;
    tt_train_opts train;       /* one run, a checkpoint at every fraction > 0 */
    tt_data_opts data;
    int order, successors, hess_batch;
    unsigned long data_seed;
    const char *save_path;
    model *file;               /* --model FILE as check read it */
    tt_data *d;
    int *tokens;               /* the Hessian batch */
    char *train_dir;
    double *file_vhat;         /* a file's v̂ (train) */
} llama_state;

static llama_state *state_of(const model_ckpt *k) { return k->state; }

static void llama_check(model_ckpt *k)
{
    ckpt_cli *c = &k->cli->cli;
    const llama_cli *l = &k->cli->llama;
    ckpt_cli_check_run(c);
    if (c->model_config && !k->file) die_user("--model-config goes with --model FILE");
    if (cli_was_given(&c->bias)) die_user("--bias goes with --model tt: the Llama has no biases");
    llama_config cfg = llama_cli_config(l, c->V, c->C, c->layers, c->heads, c->M, c->T,
                                        seed_for((unsigned long)c->seed, SEED_INIT));
    model *file = NULL;
    if (k->file) { /* its own sizes; text's vocabulary is the model's by default */
        file = llama_load_hf(k->file, c->model_config, c->T);
        cfg = *llama_config_of(file);
        cfg.seed = seed_for((unsigned long)c->seed, SEED_INIT); /* its architecture's initialisation (init_params) */
        if (token_source_is_text(&c->data) && c->data.vocab == 0) c->data.vocab = cfg.V;
    }
    tt_data *d = token_source(&c->data, cfg.V, cfg.T, c->order, c->successors, (unsigned long)c->data_seed);
    int v = tt_data_vocab(d);
    tt_data_free(d);
    if (file && v != cfg.V) {
        model_free(file);
        die_user("%s has a vocabulary of %d but the data gives %d symbols (--vocab-size)", k->file, cfg.V, v);
    }
    cfg.V = v;
    if (!file) llama_check_config(&cfg);
    llama_state *st = xcalloc(1, sizeof *st);
    k->state = st;
    st->cfg = cfg;
    st->file = file;
    st->data = c->data;
    st->order = c->order, st->successors = c->successors, st->hess_batch = c->hess_batch;
    st->data_seed = (unsigned long)c->data_seed;
    st->save_path = c->save_path;
    st->train = tt_train_defaults();
    st->train.steps = c->steps, st->train.lr = c->lr, st->train.batch = c->batch;
    st->train.seed = seed_for((unsigned long)c->seed, SEED_BATCHES);
    int n = 0;
    for (int i = 0; i < k->nfracs; i++)
        if (k->fracs[i] > 0) st->train.fracs[n++] = k->fracs[i];
    st->train.nfracs = n > 0 ? n : 1;
    k->hess_panel = c->panel;
}

static void llama_start(model_ckpt *k)
{
    llama_state *st = state_of(k);
    const llama_config *c = &st->cfg;
    st->d = token_source(&st->data, c->V, c->T, st->order, st->successors, st->data_seed);
    k->m = llama_new(c);
    if (st->file) memcpy(k->m->params, st->file->params, k->m->P * sizeof(double));
    st->tokens = ckpt_hess_tokens(st->d, st->data_seed, st->hess_batch, c->T);
    k->m->set_tokens(k->m, st->tokens, st->hess_batch);
    k->eps = st->train.ocfg.eps;
    k->total = k->file ? 0 : st->train.steps;
}

static int trained(const model_ckpt *k)
{
    for (int i = 0; i < k->nfracs; i++)
        if (k->fracs[i] > 0) return 1;
    return 0;
}

static void llama_train(model_ckpt *k, const char *train_dir)
{
    llama_state *st = state_of(k);
    free(st->train_dir);
    st->train_dir = xstrdup(train_dir);
    if (k->file) {
        k->final_loss = k->loss0; /* nothing trained */
        free(st->file_vhat);
        st->file_vhat = xmalloc(k->m->P * sizeof(double));
        ckpt_estimate_vhat(k->m, st->d, st->train.batch, st->train.seed, st->file_vhat);
    } else if (trained(k)) {
        tt_train_result r = tt_train(k->m, st->d, &st->train, train_dir);
        if (r.diverged) /* a run that diverged is not analysed */
            die_diverged("training diverged at step %ld; lower the learning rate; %s holds the steps before it",
                         r.steps_done, train_dir);
        k->final_loss = r.final_loss;
    }
    k->m->set_tokens(k->m, st->tokens, st->hess_batch);
}

static void llama_load(model_ckpt *k, int i)
{
    llama_state *st = state_of(k);
    if (!st->train_dir) DIE("llama_load before train");
    if (k->file) {
        memcpy(k->vhat, st->file_vhat, k->m->P * sizeof(double));
        k->step = 0;
    } else {
        long step = checkpoint_step(k->fracs[i], st->train.steps);
        double *v = ckpt_read_step(k->m, st->train_dir, step);
        memcpy(k->vhat, v, k->m->P * sizeof(double));
        free(v);
        k->step = step;
    }
    k->m->set_tokens(k->m, st->tokens, st->hess_batch);
    if (i == k->save_at && st->save_path) llama_save_hf(k->m, st->save_path, 0);
}

static void llama_init_kind(model_ckpt *k) { llama_init_params(k->m, state_of(k)->cfg.seed); }

static void llama_free_kind(model_ckpt *k)
{
    llama_state *st = state_of(k);
    if (!st) return;
    if (k->m) model_free(k->m);
    k->m = NULL;
    model_free(st->file);
    tt_data_free(st->d);
    free(st->tokens), free(st->train_dir), free(st->file_vhat), free(st);
    k->state = NULL;
}

const model_kind MODEL_LLAMA = {
    .name = "llama",
    .what = "1-layer Llama-style Transformer",
    .training = "AdamW, as fig6",
    .reads_file = llama_hf_looks,
    .check = llama_check,
    .start = llama_start,
    .train = llama_train,
    .load = llama_load,
    .set_threads = llama_set_threads,
    .gauss_newton = llama_set_gauss_newton,
    .init_params = llama_init_kind,
    .free = llama_free_kind,
};
