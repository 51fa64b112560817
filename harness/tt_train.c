/* Training the tiny Transformer with the shared optimizers (optim/) and
 * checkpoints at chosen fractions of training: the parameters and the
 * optimizer's v̂ (for D_Adam = diag(1/(√v̂ + ε))) as .npy. */
#include "harness/tt_train.h"
#include "core/core.h"
#include "core/model.h"
#include "harness/data.h"
#include "optim/optim.h"
#include "tinytransformer/tt.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

tt_train_opts tt_train_defaults(void)
{
    tt_train_opts o = {
        .optim = OPTIM_ADAMW,
        .steps = 1000,
        .batch = 64,
        .lr = 1e-3,
        .schedule = SCHED_COSINE,
        .warmup = 0,
        .final_frac = 0.1,
        .nfracs = 1,
        .fracs = {0.01},
        .seed = 1,
    };
    o.ocfg = optim_defaults(o.optim);
    return o;
}

long checkpoint_step(double frac, long steps)
{
    long s = lround(frac * steps);
    return s < 1 ? 1 : s > steps ? steps : s;
}

typedef struct {
    model *m;
    const tt_data *d;
    const tt_train_opts *o;
    optimizer *opt;
    gsl_rng *rng;
    int *tokens;
    outfile *loss_csv, *ckpt_csv;
    const char *out;
    double *vhat;
} train_ctx;

static void next_batch(void *ctx, long step)
{
    (void)step;
    train_ctx *c = ctx;
    tt_data_batch(c->d, c->rng, c->o->batch, c->m->T, c->tokens);
    c->m->set_tokens(c->m, c->tokens, c->o->batch);
}

static void write_checkpoint(train_ctx *c, long steps_done, double frac, double loss)
{
    char name[64];
    size_t shape[1] = {c->m->P};
    snprintf(name, sizeof name, "step%06ld_params.npy", steps_done);
    npy_write_in(c->out, name, c->m->params, 1, shape);
    char vname[64] = "";
    if (optim_has_vhat(c->opt)) {
        snprintf(vname, sizeof vname, "step%06ld_vhat.npy", steps_done);
        optim_vhat(c->opt, c->vhat);
        npy_write_in(c->out, vname, c->vhat, 1, shape);
    }
    csv_row(c->ckpt_csv, "%.6g,%ld,step%06ld_params.npy,%s,%.10g", frac, steps_done, steps_done, vname, loss);
}

static void after_step(void *ctx, long step, double loss, double lr)
{
    train_ctx *c = ctx;
    csv_row(c->loss_csv, "%ld,%.10g,%.6g", step, loss, lr);
    for (int i = 0; i < c->o->nfracs; i++)
        if (checkpoint_step(c->o->fracs[i], c->o->steps) == step + 1) write_checkpoint(c, step + 1, c->o->fracs[i], loss);
}

tt_train_result tt_train(model *m, const tt_data *d, const tt_train_opts *o, const char *out)
{
    if (!m->set_tokens) DIE("tt_train: model %s reads no tokens", m->kind);
    if (o->steps < 1) die_user("training steps must be >= 1 (got %ld)", o->steps);
    if (o->batch < 1) die_user("batch size must be >= 1 (got %d)", o->batch);
    if (o->nfracs < 0 || o->nfracs > TT_MAX_CHECKPOINTS)
        die_user("at most %d checkpoints (got %d)", TT_MAX_CHECKPOINTS, o->nfracs);
    for (int i = 0; i < o->nfracs; i++)
        if (!(o->fracs[i] > 0 && o->fracs[i] <= 1))
            die_user("checkpoint fraction must be in (0, 1] (got %g)", o->fracs[i]);
    if (tt_data_vocab(d) > m->V)
        die_user("data has %d symbols, more than the model's vocabulary V = %d", tt_data_vocab(d), m->V);
    optim_check_config(&o->ocfg, o->lr);
    int needs_blocks = o->optim == OPTIM_BLOCK_GD || o->optim == OPTIM_ADAM_MINI || o->optim == OPTIM_ADAM_LEAVE_OUT;
    if (o->blocks) partition_check_cover(o->blocks, m->P, "training partition");
    ensure_dir(out);
    token_source_write_vocab(d, out);

    partition *own = needs_blocks && !o->blocks ? partition_alg3(m, 0) : NULL;
    const partition *blocks = o->blocks ? o->blocks : own;
    train_ctx c = {.m = m, .d = d, .o = o, .out = out};
    c.opt = optim_new(o->optim, &o->ocfg, m->P, blocks, m);
    c.rng = rng_new(o->seed);
    c.tokens = xmalloc((size_t)o->batch * (m->T + 1) * sizeof(int)); /* set_tokens checks the batch's memory */
    c.vhat = xmalloc(m->P * sizeof(double));
    c.loss_csv = csv_open_in(out, "loss.csv", "step,loss,lr");
    c.ckpt_csv = csv_open_in(out, "checkpoints.csv", "fraction,step,params,vhat,loss");

    train_config tc = {.steps = o->steps, .lr = o->lr, .schedule = o->schedule, .warmup = o->warmup,
                       .final_frac = o->final_frac};
    train_hooks h = {.set_batch = next_batch, .after_step = after_step, .ctx = &c};
    tt_train_result r = {0};
    r.steps_done = train_run(m, c.opt, &tc, &h, &r.diverged);
    r.final_loss = m->loss(m);
    csv_close(c.loss_csv);
    csv_close(c.ckpt_csv);
    free(c.vhat);
    free(c.tokens);
    rng_free(c.rng);
    optim_free(c.opt);
    partition_free(own);
    return r;
}

void load_params(model *m, const char *path)
{
    int ndim;
    size_t shape[4];
    double *x = npy_read(path, &ndim, shape);
    size_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    if (n != m->P) {
        free(x);
        die_user("%s holds %zu values, the model has P = %zu parameters", path, n, m->P);
    }
    memcpy(m->params, x, m->P * sizeof(double));
    free(x);
}
