/* The registry's 1-hidden-layer MLP (models.h): mlp_ckpt.h's checkpoint,
 * trained with Adam; it reads no file. */
#include "core/core.h"
#include "harness/mlp_ckpt.h"
#include "harness/models.h"
#include "harness/tt_ckpt.h"
#include "harness/tt_train.h"
#include "mlp/mlp.h"
#include "optim/optim.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    mlp_ckpt_setup s;
    mlp_ckpt c;
    int snap[TT_MAX_CHECKPOINTS];   /* checkpoint i is the training's snapshot snap[i] */
} mlp_state;

static mlp_state *state_of(const model_ckpt *k) { return k->state; }

static void mlp_check(model_ckpt *k)
{
    ckpt_cli_check_run(&k->cli->cli);
    mlp_ckpt_setup s = mlp_cli_setup(&k->cli->mlp, &k->cli->cli); /* first: a user error leaves nothing allocated */
    mlp_state *st = xcalloc(1, sizeof *st);
    k->state = st;
    st->s = s;
    k->hess_panel = 0; /* the engine's default */
}

static void mlp_start(model_ckpt *k)
{
    mlp_state *st = state_of(k);
    mlp_ckpt_start(&st->s, &st->c);
    k->m = st->c.m;
    k->eps = optim_defaults(OPTIM_ADAM).eps;
    k->total = st->s.steps;
}

/* One run of Adam keeping every checkpoint of a fraction > 0 (mlp_ckpt_train
 * sets the Hessian batch back). */
static void mlp_train_kind(model_ckpt *k, const char *train_dir)
{
    (void)train_dir; /* the MLP trains in memory */
    mlp_state *st = state_of(k);
    long steps[TT_MAX_CHECKPOINTS];
    int n = 0;
    for (int i = 0; i < k->nfracs; i++)
        if (k->fracs[i] > 0) {
            st->snap[i] = n;
            steps[n++] = checkpoint_step(k->fracs[i], st->s.steps);
        }
    if (n > 0) mlp_ckpt_train(&st->s, &st->c, steps, n);
}

static void mlp_load(model_ckpt *k, int i)
{
    mlp_state *st = state_of(k);
    mlp_ckpt_load(&st->c, st->snap[i]);
    memcpy(k->vhat, st->c.vhat, k->m->P * sizeof(double));
    k->step = st->c.step;
}

static void mlp_free_kind(model_ckpt *k)
{
    mlp_state *st = state_of(k);
    if (!st) return;
    mlp_ckpt_free(&st->c);
    free(st);
}

const model_kind MODEL_MLP = {
    .name = "mlp",
    .what = "1-hidden-layer MLP",
    .training = "Adam, cosine",
    .check = mlp_check,
    .start = mlp_start,
    .train = mlp_train_kind,
    .load = mlp_load,
    .set_threads = mlp_set_threads,
    .free = mlp_free_kind,
};
