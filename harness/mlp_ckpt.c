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
    mlp_ckpt *c;
    gsl_rng *rng;
    int batch;
    double *X;
    int *y;
    optimizer *opt;
} mlp_run;

/* Before each step: batch sequences drawn uniformly with replacement. */
static void mlp_next_batch(void *ctx, long s)
{
    (void)s;
    mlp_run *r = ctx;
    const dataset *train = r->c->data.train;
    int *idx = xmalloc((size_t)r->batch * sizeof(int));
    for (int i = 0; i < r->batch; i++) idx[i] = (int)rng_int(r->rng, (unsigned long)train->n);
    dataset_gather(train, idx, r->batch, r->X, r->y);
    mlp_set_batch(r->c->m, r->X, r->y, r->batch);
    free(idx);
}

/* After step s: the parameters and v̂ of every checkpoint taken after it. */
static void mlp_keep_checkpoints(void *ctx, long s, double loss, double lr)
{
    (void)loss, (void)lr;
    mlp_run *r = ctx;
    mlp_ckpt *c = r->c;
    size_t P = c->m->P;
    for (int i = 0; i < c->nsnap; i++)
        if (s + 1 == c->snap_step[i]) {
            memcpy(c->snap_params + i * P, c->m->params, P * sizeof(double));
            optim_vhat(r->opt, c->snap_vhat + i * P);
        }
}

void mlp_ckpt_start(const mlp_ckpt_setup *s, mlp_ckpt *out)
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
    out->X = xmalloc((size_t)s->eval_n * train->dim * sizeof(double));
    out->y = xmalloc((size_t)s->eval_n * sizeof(int));
    mlp_data_head(&out->data, s->eval_n, "MLP Hessian batch", out->X, out->y);
    out->m = mlp_new(&cfg);
    out->total = s->steps;
    out->step = checkpoint_step(s->frac, s->steps);
    mlp_set_batch(out->m, out->X, out->y, s->eval_n);
}

void mlp_ckpt_train(const mlp_ckpt_setup *s, mlp_ckpt *c, const long *steps, int n)
{
    if (n < 1 || n > TT_MAX_CHECKPOINTS) DIE("mlp_ckpt_train: %d checkpoints", n);
    size_t P = c->m->P;
    c->nsnap = n;
    memcpy(c->snap_step, steps, (size_t)n * sizeof(long));
    free(c->snap_params), free(c->snap_vhat);
    c->snap_params = xmalloc(n * P * sizeof(double));
    c->snap_vhat = xmalloc(n * P * sizeof(double));
    const dataset *train = c->data.train;
    mlp_run r = {.c = c, .rng = rng_new(seed_for(s->seed, SEED_BATCHES)), .batch = s->batch};
    r.X = xmalloc((size_t)s->batch * train->dim * sizeof(double));
    r.y = xmalloc((size_t)s->batch * sizeof(int));
    optim_config oc = optim_defaults(OPTIM_ADAM);
    optim_check_config(&oc, s->lr);
    r.opt = optim_new(OPTIM_ADAM, &oc, P, NULL, c->m);
    train_config tc = {.steps = s->steps, .lr = s->lr, .schedule = SCHED_COSINE, .final_frac = 0.1};
    train_hooks h = {.set_batch = mlp_next_batch, .after_step = mlp_keep_checkpoints, .ctx = &r};
    int diverged = 0;
    long ran = train_run(c->m, r.opt, &tc, &h, &diverged);
    optim_free(r.opt);
    if (diverged) die_diverged("MLP training diverged at step %ld; lower the learning rate", ran);
    free(r.X), free(r.y);
    rng_free(r.rng);
    mlp_set_batch(c->m, c->X, c->y, s->eval_n);
}

void mlp_ckpt_load(mlp_ckpt *c, int i)
{
    if (i < 0 || i >= c->nsnap) DIE("mlp_ckpt_load: no checkpoint %d of %d", i, c->nsnap);
    size_t P = c->m->P;
    memcpy(c->m->params, c->snap_params + i * P, P * sizeof(double));
    if (!c->vhat) c->vhat = xmalloc(P * sizeof(double));
    memcpy(c->vhat, c->snap_vhat + i * P, P * sizeof(double));
    c->step = c->snap_step[i];
}

void mlp_ckpt_model(const mlp_ckpt_setup *s, int do_train, mlp_ckpt *out)
{
    mlp_ckpt_start(s, out);
    if (!do_train) return;
    mlp_ckpt_train(s, out, &out->step, 1);
    mlp_ckpt_load(out, 0);
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
    free(c->X), free(c->y);
    free(c->snap_params), free(c->snap_vhat);
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
