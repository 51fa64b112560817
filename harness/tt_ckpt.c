/* The tiny Transformer at a training checkpoint and its Hessian there (paper
 * Fig. 6: "at 1% training step"), trained with AdamW, and the command line
 * fig6, table_kappa, partition_check and the model registry share for it
 * (tt_ckpt.h). */
#include "harness/tt_ckpt.h"
#include "core/core.h"
#include "core/model.h"
#include "harness/data.h"
#include "harness/seeds.h"
#include "harness/tt_train.h"
#include "hessian/hessian.h"
#include "optim/optim.h"
#include "tinytransformer/tt.h"
#include <stdlib.h>
#include <string.h>

/* ---- the tiny Transformer ------------------------------------------------------------------ */

tt_ckpt_setup tt_ckpt_defaults(void)
{
    tt_ckpt_setup s = {
        .cfg = tt_defaults(),
        .order = 2,
        .successors = 2,
        .data_seed = 1,
        .data = {NULL, NULL, 0},
        .train = tt_train_defaults(),
        .hess_batch = 256,
        .panel = 64,
    };
    return s;
}

void tt_ckpt_check(const tt_ckpt_setup *s)
{
    tt_check_config(&s->cfg);
    if (s->hess_batch < 1 || s->hess_batch > 1 << 16)
        die_user("Hessian batch must be in 1..65536 sequences (got %d)", s->hess_batch);
    if (s->panel < 1 || s->panel > 4096) die_user("Hessian panel must be in 1..4096 (got %d)", s->panel);
    if (s->train.nfracs < 1 || s->train.nfracs > TT_MAX_CHECKPOINTS)
        die_user("1 to %d checkpoint fractions are needed (got %d)", TT_MAX_CHECKPOINTS, s->train.nfracs);
    for (int i = 0; i < s->train.nfracs; i++)
        if (!(s->train.fracs[i] > 0 && s->train.fracs[i] <= 1))
            die_user("checkpoint fraction must be in (0, 1] (got %g)", s->train.fracs[i]);
    if (s->train.steps < 1) die_user("training steps must be >= 1 (got %ld)", s->train.steps);
    if (s->train.batch < 1) die_user("batch size must be >= 1 (got %d)", s->train.batch);
    optim_check_config(&s->train.ocfg, s->train.lr);
}

/* ---- what any Transformer's checkpoint needs (tt_ckpt.h) ------------------------------------- */

int *ckpt_hess_tokens(const tt_data *d, unsigned long data_seed, int hess_batch, int T)
{
    int *tok = xmalloc((size_t)hess_batch * (T + 1) * sizeof(int));
    gsl_rng *r = rng_new(seed_for(data_seed, SEED_HELD_OUT));
    tt_data_held_out_batch(d, r, hess_batch, T, tok);
    rng_free(r);
    return tok;
}

void ckpt_estimate_vhat(model *m, const tt_data *d, int B, unsigned long seed, double *vhat)
{
    int *tok = xmalloc((size_t)B * (m->T + 1) * sizeof(int));
    double *g = xmalloc(m->P * sizeof(double));
    memset(vhat, 0, m->P * sizeof(double));
    gsl_rng *r = rng_new(seed);
    for (int k = 0; k < TT_VHAT_BATCHES; k++) {
        tt_data_batch(d, r, B, m->T, tok);
        m->set_tokens(m, tok, B);
        m->grad(m, g);
        for (size_t i = 0; i < m->P; i++) vhat[i] += g[i] * g[i] / TT_VHAT_BATCHES;
    }
    rng_free(r);
    free(tok);
    free(g);
}

static double *read_vector(const char *dir, const char *name, size_t P)
{
    char *path = path_join(dir, name);
    int ndim;
    size_t shape[4];
    double *x = npy_read(path, &ndim, shape);
    if (ndim != 1 || shape[0] != P) DIE("%s: expected %zu values", path, P);
    free(path);
    return x;
}

double *ckpt_read_step(model *m, const char *train_dir, long step)
{
    char name[64];
    snprintf(name, sizeof name, "step%06ld_params.npy", step);
    char *path = path_join(train_dir, name);
    load_params(m, path);
    free(path);
    snprintf(name, sizeof name, "step%06ld_vhat.npy", step);
    return read_vector(train_dir, name, m->P);
}

void tt_ckpt_start(const tt_ckpt_setup *s, tt_ckpt *out)
{
    tt_ckpt_check(s);
    memset(out, 0, sizeof *out);
    const tt_config *c = &s->cfg;
    out->data = token_source(&s->data, c->V, c->T, s->order, s->successors, s->data_seed);
    if (tt_data_vocab(out->data) != c->V)
        DIE("token source has %d symbols, the model V = %d", tt_data_vocab(out->data), c->V);
    if (s->file) { /* the file as ckpt_cli_setup read it: not read again */
        out->m = tt_new(tt_config_of(s->file));
        memcpy(out->m->params, s->file->params, s->file->P * sizeof(double));
    } else {
        out->m = s->model_path ? tt_load_file(s->model_path, s->model_config) : tt_new(c);
    }
    if (out->m->P != tt_param_count(c)) DIE("the model file changed its configuration");
    /* the Hessian batch: its own stream, so it is the same whatever the training */
    out->tokens = ckpt_hess_tokens(out->data, s->data_seed, s->hess_batch, c->T);
    tt_set_batch(out->m, out->tokens, s->hess_batch);
    out->loss0 = out->m->loss(out->m);
    out->loss = out->loss0;
}

/* v̂ of a model trained elsewhere (tt_ckpt.h), the model back on its Hessian batch. */
static void estimate_vhat(const tt_ckpt_setup *s, tt_ckpt *c)
{
    free(c->vhat);
    c->vhat = xmalloc(c->m->P * sizeof(double));
    ckpt_estimate_vhat(c->m, c->data, s->train.batch, s->train.seed, c->vhat);
    tt_set_batch(c->m, c->tokens, s->hess_batch);
}

void tt_ckpt_train(const tt_ckpt_setup *s, const char *train_dir, tt_ckpt *c)
{
    double t0 = wall_seconds();
    if (s->model_path) {
        estimate_vhat(s, c);
        c->train_seconds = wall_seconds() - t0;
        c->step = 0;
        c->final_loss = c->loss0;
        return;
    }
    tt_train_result tr = tt_train(c->m, c->data, &s->train, train_dir);
    c->train_seconds = wall_seconds() - t0;
    long last = 0;
    for (int i = 0; i < s->train.nfracs; i++) {
        long k = checkpoint_step(s->train.fracs[i], s->train.steps);
        if (k > last) last = k;
    }
    if (tr.diverged) /* the training is part of the experiment: a run that diverged is not analysed */
        die_diverged("training diverged at step %ld (last checkpoint at step %ld); lower the learning rate; %s "
                     "holds the steps before it", tr.steps_done, last, train_dir);
    c->final_loss = tr.final_loss;
}

void tt_ckpt_load(const tt_ckpt_setup *s, const char *train_dir, long step, tt_ckpt *c)
{
    if (s->model_path) { /* the parameters are the file's; v̂ from tt_ckpt_train */
        if (!c->vhat) DIE("tt_ckpt_load before tt_ckpt_train");
        c->step = 0;
        tt_set_batch(c->m, c->tokens, s->hess_batch);
        return;
    }
    free(c->vhat);
    c->vhat = ckpt_read_step(c->m, train_dir, step);
    c->step = step;
    tt_set_batch(c->m, c->tokens, s->hess_batch);
}

void tt_ckpt_take_hessian(const tt_ckpt_setup *s, tt_ckpt *c)
{
    model *m = c->m;
    tt_set_batch(m, c->tokens, s->hess_batch);
    c->loss = m->loss(m);
    hessian_opts ho = hessian_defaults();
    ho.panel = s->panel;
    ho.label = "checkpoint Hessian";
    free(c->H);
    double t0 = wall_seconds();
    c->H = hessian_full(m, &ho);
    c->hess_seconds = wall_seconds() - t0;
}

void tt_ckpt_hessian(const tt_ckpt_setup *s, const char *train_dir, tt_ckpt *out)
{
    tt_ckpt_setup one = *s;
    one.train.nfracs = 1;
    tt_ckpt_start(&one, out);
    tt_ckpt_train(&one, train_dir, out);
    tt_ckpt_load(&one, train_dir, checkpoint_step(one.train.fracs[0], one.train.steps), out);
    if (s->save_path) tt_save_nanogpt(out->m, out->data, s->save_path, 0);
    tt_ckpt_take_hessian(&one, out);
}

void tt_ckpt_free(tt_ckpt *c)
{
    model_free(c->m);
    tt_data_free(c->data);
    free(c->H);
    free(c->vhat);
    free(c->tokens);
    memset(c, 0, sizeof *c);
}

/* ---- its command line ------------------------------------------------------------------------ */

void ckpt_cli_init(ckpt_cli *c)
{
    tt_config d = tt_defaults();
    memset(c, 0, sizeof *c);
    c->scale = "quick";
    c->seed = 1;
    c->data_seed = 1;
    c->batch = 64;
    c->panel = 64;
    c->order = 2;
    c->successors = 2;
    c->V = d.V, c->C = d.C, c->heads = d.heads, c->M = d.M, c->T = d.T, c->layers = d.layers, c->bias = d.bias;
    c->steps = 1000;
    c->lr = 1e-3;
    c->frac = 0.01;
}

void ckpt_cli_check_run(ckpt_cli *c)
{
    int paper = scale_parse(c->scale);
    if (c->hess_batch == 0) c->hess_batch = paper ? 1024 : 256;
    if (c->steps < 1) die_user("--steps must be >= 1 (got %ld)", c->steps);
    if (c->seed < 0) die_user("--seed must be >= 0 (got %ld)", c->seed);
    if (c->data_seed < 0) die_user("--data-seed must be >= 0 (got %ld)", c->data_seed);
    if (!(c->frac > 0 && c->frac <= 1)) die_user("--checkpoint must be a fraction in (0, 1] (got %g)", c->frac);
}

tt_ckpt_setup ckpt_cli_setup(ckpt_cli *c)
{
    ckpt_cli_check_run(c);
    tt_ckpt_setup s = tt_ckpt_defaults();
    s.cfg = (tt_config){.V = c->V, .C = c->C, .heads = c->heads, .M = c->M, .layers = c->layers, .T = c->T,
                        .bias = c->bias, .seed = seed_for((unsigned long)c->seed, SEED_INIT)};
    if (c->model_config && !c->model_path) die_user("--model-config goes with --model FILE.safetensors");
    if (c->model_path) { /* the model's own sizes; its vocabulary is the text's by default */
        if (!c->file) c->file = tt_load_file(c->model_path, c->model_config);
        s.cfg = *tt_config_of(c->file);
        s.file = c->file;
#define ASKED(flag) (cli_was_given(&c->flag) ? c->flag : -1)
        tt_check_sizes(&s.cfg, &(tt_config){.V = ASKED(V), .C = ASKED(C), .heads = ASKED(heads), .M = ASKED(M),
                                            .T = ASKED(T), .layers = ASKED(layers), .bias = ASKED(bias)}, c->model_path);
#undef ASKED
        if (token_source_is_text(&c->data) && c->data.vocab == 0) c->data.vocab = s.cfg.V;
        s.model_path = c->model_path;
        s.model_config = c->model_config;
    }
    s.save_path = c->save_path;
    s.order = c->order;
    s.successors = c->successors;
    s.data_seed = (unsigned long)c->data_seed;
    s.data = c->data;
    s.train.steps = c->steps;
    s.train.lr = c->lr;
    s.train.batch = c->batch;
    s.train.nfracs = 1;
    s.train.fracs[0] = c->frac;
    s.train.seed = seed_for((unsigned long)c->seed, SEED_BATCHES);
    s.hess_batch = c->hess_batch;
    s.panel = c->panel;
    /* the data source now, so that a bad file or setting stops before any output */
    tt_data *d = token_source(&c->data, s.cfg.V, s.cfg.T, s.order, s.successors, s.data_seed);
    if (s.model_path) tt_file_check_data(s.model_path, s.cfg.V, d);
    s.cfg.V = tt_data_vocab(d);
    tt_data_free(d);
    tt_ckpt_check(&s);
    return s;
}

void ckpt_cli_free(ckpt_cli *c)
{
    model_free(c->file);
    c->file = NULL;
}

/* ---- the blocks of Fig. 6 ------------------------------------------------------------------ */

const fig6_block FIG6_BLOCKS[FIG6_NBLOCKS] = {
    {"query", SPLIT_HEADS},    {"key", SPLIT_HEADS},     {"value", SPLIT_ROWS}, {"attn_proj", SPLIT_ROWS},
    {"mlp_fc1", SPLIT_ROWS},   {"mlp_proj", SPLIT_ROWS}, {"embed", SPLIT_ROWS}, {"output", SPLIT_ROWS},
};

int fig6_tensor(const model *m, int layer, int k)
{
    static const tensor_role roles[FIG6_NBLOCKS] = {ROLE_QUERY, ROLE_KEY, ROLE_VALUE, ROLE_ATTN_PROJ, ROLE_MLP_FC,
                                                     ROLE_MLP_PROJ, ROLE_EMBED, ROLE_OUTPUT};
    if (k < 0 || k >= FIG6_NBLOCKS) DIE("no Fig. 6 block %d", k);
    for (int pass = 0; pass < 2; pass++) /* a tied head is the embedding: output falls back to it */
        for (int t = 0; t < m->ntensors; t++) {
            const tensor_info *ti = &m->tensors[t];
            tensor_role want = pass && k == 7 ? ROLE_EMBED : roles[k];
            if (ti->role == want && (k >= 6 || ti->layer == layer)) return t;
        }
    return -1;
}
