/* Either model at a training checkpoint on every rank (harness.h, "either
 * model at a checkpoint"): the steps of tt_ckpt_hessian and mlp_ckpt_model
 * without H, the parameters and v̂ broadcast from rank 0. */
#include "harness/models.h"
#include "core/core.h"
#include "core/dist.h"
#include "core/model.h"
#include "harness/mlp_ckpt.h"
#include "harness/tt_ckpt.h"
#include "harness/tt_train.h"
#include "mlp/mlp.h"
#include "optim/optim.h"
#include "tinytransformer/tt.h"
#include <stdlib.h>
#include <string.h>

void model_cli_init(model_cli *c)
{
    memset(c, 0, sizeof *c);
    ckpt_cli_init(&c->cli);
    mlp_cli_init(&c->mlp);
    c->model_name = "tt";
}

void model_cli_check(model_cli *c, model_ckpt *out)
{
    memset(out, 0, sizeof *out);
    out->is_tt = strcmp(c->model_name, "mlp") != 0;
    if (out->is_tt && strcmp(c->model_name, "tt") != 0) c->cli.model_path = c->model_name; /* a file */
    out->setup = ckpt_cli_setup(&c->cli);
    if (!out->is_tt) out->ms = mlp_cli_setup(&c->mlp, &c->cli);
}

void model_ckpt_open(model_ckpt *r, const char *train_dir)
{
    int root = dist_rank() == 0;
    double meta[1] = {0};
    if (r->is_tt) {
        tt_ckpt_setup one = r->setup;
        one.train.nfracs = 1;
        tt_ckpt_start(&one, &r->tt);
        long step = checkpoint_step(one.train.fracs[0], one.train.steps);
        if (root) {
            tt_ckpt_train(&one, train_dir, &r->tt);
            tt_ckpt_load(&one, train_dir, step, &r->tt);
            if (one.save_path) tt_save_nanogpt(r->tt.m, one.save_path, 0);
            meta[0] = r->tt.m->loss(r->tt.m);
        } else {
            r->tt.vhat = xmalloc(r->tt.m->P * sizeof(double));
        }
        r->m = r->tt.m;
        r->vhat = r->tt.vhat;
        r->eps = r->setup.train.ocfg.eps;
        r->step = one.model_path ? 0 : step;
        r->total = one.model_path ? 0 : r->setup.train.steps;
    } else {
        mlp_ckpt_model(&r->ms, root, &r->mlp);
        r->m = r->mlp.m;
        if (!root) r->mlp.vhat = xmalloc(r->m->P * sizeof(double));
        r->vhat = r->mlp.vhat;
        r->eps = optim_defaults(OPTIM_ADAM).eps;
        r->step = r->mlp.step;
        r->total = r->mlp.total;
        if (root) meta[0] = r->m->loss(r->m);
    }
    dist_bcast(r->m->params, r->m->P * sizeof(double));
    dist_bcast(r->vhat, r->m->P * sizeof(double));
    dist_bcast(meta, sizeof meta);
    r->loss = meta[0];
    if (r->is_tt) tt_set_threads(r->m, dist_workers());
    else mlp_set_threads(r->m, dist_workers());
}

void model_ckpt_free(model_ckpt *k)
{
    if (k->is_tt) tt_ckpt_free(&k->tt);
    else mlp_ckpt_free(&k->mlp);
    memset(k, 0, sizeof *k);
}

partition *partition_by_name(const model *m, const char *s)
{
    if (!strcmp(s, "alg3")) return partition_alg3(m, 0);
    if (!strcmp(s, "alg3-value-whole")) return partition_alg3(m, 1);
    if (!strcmp(s, "alg2") || !strcmp(s, "tensors")) return partition_alg2(m);
    if (!strcmp(s, "rows")) return partition_uniform(m, SPLIT_ROWS);
    if (!strcmp(s, "cols")) return partition_uniform(m, SPLIT_COLS);
    if (!strcmp(s, "whole")) {
        partition *p = partition_new();
        partition_add(p, 0, m->P, 1, -1, "whole model");
        return p;
    }
    return partition_read(s, m);
}
