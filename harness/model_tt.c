/* The registry's tiny Transformer (models.h): tt_ckpt.h's checkpoint, trained
 * with AdamW, or a nanoGPT-layout file (--model FILE) at its own weights. */
#include "core/core.h"
#include "harness/models.h"
#include "harness/tt_ckpt.h"
#include "harness/tt_train.h"
#include "tinytransformer/tt.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    tt_ckpt_setup s;
    tt_ckpt c;
    char *train_dir;
} tt_state;

static tt_state *state_of(const model_ckpt *k) { return k->state; }

/* Any file: read as nanoGPT's layout (the reader names what is wrong with it). */
static int tt_reads_file(const char *path)
{
    (void)path;
    return 1;
}

static void tt_check(model_ckpt *k)
{
    ckpt_cli *c = &k->cli->cli;
    if (k->file) c->model_path = k->file;
    tt_ckpt_setup s = ckpt_cli_setup(c); /* first: a user error leaves nothing allocated */
    tt_state *st = xcalloc(1, sizeof *st);
    k->state = st;
    st->s = s;
    /* one training run, a checkpoint at every fraction > 0 (a run needs one: with none, it is not trained) */
    int n = 0;
    for (int i = 0; i < k->nfracs; i++)
        if (k->fracs[i] > 0) st->s.train.fracs[n++] = k->fracs[i];
    st->s.train.nfracs = n > 0 ? n : 1;
    k->hess_panel = st->s.panel;
}

static void tt_start(model_ckpt *k)
{
    tt_state *st = state_of(k);
    tt_ckpt_start(&st->s, &st->c);
    k->m = st->c.m;
    k->eps = st->s.train.ocfg.eps;
    k->total = k->file ? 0 : st->s.train.steps;
}

static int trained(const model_ckpt *k)
{
    for (int i = 0; i < k->nfracs; i++)
        if (k->fracs[i] > 0) return 1;
    return k->file != NULL;
}

static void tt_train_kind(model_ckpt *k, const char *train_dir)
{
    tt_state *st = state_of(k);
    free(st->train_dir);
    st->train_dir = xstrdup(train_dir);
    if (trained(k)) {
        tt_ckpt_train(&st->s, train_dir, &st->c);
        k->final_loss = st->c.final_loss;
    }
    tt_set_batch(k->m, st->c.tokens, st->s.hess_batch); /* training left its last batch */
}

static void tt_load(model_ckpt *k, int i)
{
    tt_state *st = state_of(k);
    if (!st->train_dir) DIE("tt_load before train");
    long step = k->file ? 0 : checkpoint_step(k->fracs[i], st->s.train.steps);
    tt_ckpt_load(&st->s, st->train_dir, step, &st->c);
    memcpy(k->vhat, st->c.vhat, k->m->P * sizeof(double));
    k->step = step;
    if (i == k->save_at && st->s.save_path) tt_save_nanogpt(k->m, st->c.data, st->s.save_path, 0);
}

static void tt_init_kind(model_ckpt *k) { tt_init_params(k->m, state_of(k)->s.cfg.seed); }

static void tt_free_kind(model_ckpt *k)
{
    tt_state *st = state_of(k);
    if (!st) return;
    tt_ckpt_free(&st->c);
    free(st->train_dir);
    free(st);
}

const model_kind MODEL_TT = {
    .name = "tt",
    .what = "1-layer Transformer",
    .training = "AdamW, as fig6",
    .reads_file = tt_reads_file,
    .check = tt_check,
    .start = tt_start,
    .train = tt_train_kind,
    .load = tt_load,
    .set_threads = tt_set_threads,
    .gauss_newton = tt_set_gauss_newton,
    .null_directions = tt_null_directions,
    .init_params = tt_init_kind,
    .free = tt_free_kind,
};
