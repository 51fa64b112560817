/* The 1-hidden-layer MLP at a training checkpoint, trained with Adam, and its
 * Hessian there (mlp_ckpt.h). */
#include "harness/mlp_ckpt.h"
#include "core/core.h"
#include "core/model.h"
#include "harness/data.h"
#include "harness/seeds.h"
#include "harness/tt_ckpt.h"
#include "harness/tt_train.h"
#include "hessian/hessian.h"
#include "mlp/mlp.h"
#include "optim/optim.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    model *m;
    const mlp_data *data;
    gsl_rng *rng;
    int batch;
    double *X, *ckpt_params, *ckpt_vhat;
    int *y;
    long step;
    optimizer *opt;
} mlp_run;

/* Before each step: batch sequences drawn uniformly with replacement. */
static void mlp_next_batch(void *ctx, long s)
{
    (void)s;
    mlp_run *r = ctx;
    int *idx = xmalloc((size_t)r->batch * sizeof(int));
    for (int i = 0; i < r->batch; i++) idx[i] = (int)rng_int(r->rng, (unsigned long)r->data->train->n);
    dataset_gather(r->data->train, idx, r->batch, r->X, r->y);
    mlp_set_batch(r->m, r->X, r->y, r->batch);
    free(idx);
}

static void mlp_keep_checkpoint(void *ctx, long s, double loss, double lr)
{
    (void)loss, (void)lr;
    mlp_run *r = ctx;
    if (s + 1 != r->step) return;
    memcpy(r->ckpt_params, r->m->params, r->m->P * sizeof(double));
    optim_vhat(r->opt, r->ckpt_vhat);
}

void mlp_ckpt_model(const mlp_ckpt_setup *s, int do_train, mlp_ckpt *out)
{
    memset(out, 0, sizeof *out);
    if (s->width < 1 || s->width > 4096) die_user("MLP width must be in 1..4096 (got %d)", s->width);
    if (s->eval_n < 1) die_user("MLP Hessian batch must be >= 1 image (got %d)", s->eval_n);
    if (s->steps < 1) die_user("training steps must be >= 1 (got %ld)", s->steps);
    if (s->batch < 1) die_user("batch size must be >= 1 (got %d)", s->batch);
    mlp_data_load(&out->data, s->data, NULL, s->pool, 1, seed_for(s->data_seed, SEED_DATA));
    const dataset *train = out->data.train;
    mlp_config cfg = {.in = train->dim, .width = s->width, .classes = train->classes, .act = act_parse(s->act),
                      .bias = 1, .loss = LOSS_XENT, .seed = seed_for(s->seed, SEED_INIT)};
    double *X = xmalloc((size_t)s->eval_n * train->dim * sizeof(double));
    int *y = xmalloc((size_t)s->eval_n * sizeof(int));
    mlp_data_head(&out->data, s->eval_n, "MLP Hessian batch", X, y);
    out->m = mlp_new(&cfg);
    out->total = s->steps;
    out->step = checkpoint_step(s->frac, s->steps);
    if (!do_train) {
        mlp_set_batch(out->m, X, y, s->eval_n);
        free(X), free(y);
        return;
    }

    mlp_run r = {.m = out->m, .data = &out->data, .rng = rng_new(seed_for(s->seed, SEED_BATCHES)), .batch = s->batch,
                 .step = out->step};
    r.X = xmalloc((size_t)s->batch * train->dim * sizeof(double));
    r.y = xmalloc((size_t)s->batch * sizeof(int));
    r.ckpt_params = xmalloc(out->m->P * sizeof(double));
    optim_config oc = optim_defaults(OPTIM_ADAM);
    optim_check_config(&oc, s->lr);
    optimizer *opt = optim_new(OPTIM_ADAM, &oc, out->m->P, NULL, out->m);
    r.opt = opt;
    r.ckpt_vhat = out->vhat = xmalloc(out->m->P * sizeof(double));
    train_config tc = {.steps = s->steps, .lr = s->lr, .schedule = SCHED_COSINE, .final_frac = 0.1};
    train_hooks h = {.set_batch = mlp_next_batch, .after_step = mlp_keep_checkpoint, .ctx = &r};
    int diverged = 0;
    long ran = train_run(out->m, opt, &tc, &h, &diverged);
    optim_free(opt);
    if (diverged) die_diverged("MLP training diverged at step %ld; lower the learning rate", ran);
    memcpy(out->m->params, r.ckpt_params, out->m->P * sizeof(double));
    free(r.X), free(r.y), free(r.ckpt_params);
    rng_free(r.rng);

    mlp_set_batch(out->m, X, y, s->eval_n);
    free(X), free(y);
}

void mlp_ckpt_hessian(const mlp_ckpt_setup *s, mlp_ckpt *out)
{
    mlp_ckpt_model(s, 1, out);
    hessian_opts o = hessian_defaults();
    o.label = "MLP Hessian";
    out->H = hessian_full(out->m, &o);
}

void mlp_ckpt_free(mlp_ckpt *c)
{
    model_free(c->m);
    mlp_data_free(&c->data);
    free(c->H);
    free(c->vhat);
    memset(c, 0, sizeof *c);
}

void mlp_cli_init(mlp_cli *c)
{
    *c = (mlp_cli){.data = "fashion-mnist", .act = "tanh", .width = 8, .pool = 4, .eval_n = 1000};
}

mlp_ckpt_setup mlp_cli_setup(const mlp_cli *c, const ckpt_cli *k)
{
    if (strcmp(c->data, "fashion-mnist") != 0 && strcmp(c->data, "synthetic") != 0)
        die_user("--mlp-data must be fashion-mnist or synthetic (got '%s')", c->data);
    if (c->width < 1 || c->width > 4096) die_user("--mlp-width must be in 1..4096 (got %d)", c->width);
    if (c->pool < 1 || c->pool > 8) die_user("--mlp-pool must be in 1..8 (got %d)", c->pool);
    if (c->eval_n < 1 || c->eval_n > 10000) die_user("--mlp-eval-n must be in 1..10000 (got %d)", c->eval_n);
    act_parse(c->act);
    return (mlp_ckpt_setup){.data = c->data, .act = c->act, .width = c->width, .pool = c->pool, .eval_n = c->eval_n,
                            .batch = k->batch, .steps = k->steps, .lr = k->lr, .frac = k->frac,
                            .seed = (unsigned long)k->seed, .data_seed = (unsigned long)k->data_seed};
}
