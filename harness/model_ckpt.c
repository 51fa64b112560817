/* Either model at a training checkpoint on every rank (harness.h, "either
 * model at a checkpoint"): the steps of tt_ckpt_hessian and mlp_ckpt_model
 * without H, the parameters and v̂ broadcast from rank 0. */
#include "core/dist.h"
#include "harness.h"
#include <stdlib.h>
#include <string.h>

void model_cli_init(model_cli *c)
{
    memset(c, 0, sizeof *c);
    ckpt_cli_init(&c->cli);
    c->model_name = "tt";
    c->mlp_data = "fashion-mnist";
    c->mlp_act = "tanh";
    c->mlp_width = 8;
    c->mlp_pool = 4;
    c->mlp_eval_n = 1000;
}

void model_cli_check(model_cli *c, model_ckpt *out)
{
    memset(out, 0, sizeof *out);
    out->is_tt = strcmp(c->model_name, "tt") == 0;
    if (!out->is_tt && strcmp(c->model_name, "mlp") != 0) die_user("--model must be tt or mlp (got '%s')", c->model_name);
    out->setup = ckpt_cli_setup(&c->cli);
    ckpt_cli *k = &c->cli;
    out->ms = (mlp_ckpt_setup){c->mlp_data, c->mlp_act, c->mlp_width, c->mlp_pool, c->mlp_eval_n, k->batch, k->steps,
                               k->lr, k->frac, (unsigned long)k->seed, (unsigned long)k->data_seed};
    if (!out->is_tt) {
        if (strcmp(c->mlp_data, "fashion-mnist") != 0 && strcmp(c->mlp_data, "synthetic") != 0)
            die_user("--mlp-data must be fashion-mnist or synthetic (got '%s')", c->mlp_data);
        if (c->mlp_width < 1 || c->mlp_width > 4096) die_user("--mlp-width must be in 1..4096 (got %d)", c->mlp_width);
        if (c->mlp_pool < 1 || c->mlp_pool > 8) die_user("--mlp-pool must be in 1..8 (got %d)", c->mlp_pool);
        if (c->mlp_eval_n < 1) die_user("--mlp-eval-n must be >= 1 (got %d)", c->mlp_eval_n);
        act_parse(c->mlp_act);
    }
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
            meta[0] = r->tt.m->loss(r->tt.m);
        } else {
            r->tt.vhat = xmalloc(r->tt.m->P * sizeof(double));
        }
        r->m = r->tt.m;
        r->vhat = r->tt.vhat;
        r->eps = r->setup.train.ocfg.eps;
        r->step = step;
        r->total = r->setup.train.steps;
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
