/* The Hessian of the tiny Transformer at a training checkpoint (paper Fig. 6:
 * "at 1% training step"), and the candidate partitions of one tensor that
 * Principle 1 chooses from ("partition parameters into blocks such that each
 * block is associated with the smallest dense sub-block in Hessian"). */
#include "tt.h"
#include "hessian/hessian.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the checkpoint Hessian ------------------------------------------------------------ */

tt_ckpt_setup tt_ckpt_defaults(void)
{
    tt_ckpt_setup s = {
        .cfg = tt_defaults(),
        .order = 2,
        .successors = 2,
        .data_seed = 1,
        .text = NULL,
        .train = tt_train_defaults(),
        .hess_batch = 256,
        .hess_seed = 7,
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
    if (s->train.nfracs < 1) die_user("a checkpoint fraction is needed");
    if (!(s->train.fracs[0] > 0 && s->train.fracs[0] <= 1))
        die_user("checkpoint fraction must be in (0, 1] (got %g)", s->train.fracs[0]);
    if (s->train.steps < 1) die_user("training steps must be >= 1 (got %ld)", s->train.steps);
    if (s->train.batch < 1) die_user("batch size must be >= 1 (got %d)", s->train.batch);
    optim_check_config(&s->train.ocfg, s->train.lr);
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

void tt_ckpt_hessian(const tt_ckpt_setup *s, const char *train_dir, tt_ckpt *out)
{
    tt_ckpt_check(s);
    memset(out, 0, sizeof *out);
    const tt_config *c = &s->cfg;
    out->data = s->text ? tt_data_text(s->text, c->V, c->T) : tt_data_markov(c->V, s->order, s->successors, s->data_seed);
    out->m = tt_new(c);
    model *m = out->m;
    /* the Hessian batch: its own stream, so it is the same whatever the training */
    out->tokens = xmalloc((size_t)s->hess_batch * (c->T + 1) * sizeof(int));
    gsl_rng *r = rng_new(s->hess_seed);
    tt_data_batch(out->data, r, s->hess_batch, c->T, out->tokens);
    rng_free(r);
    tt_set_batch(m, out->tokens, s->hess_batch);
    out->loss0 = m->loss(m);

    tt_train_opts o = s->train;
    o.nfracs = 1;
    double t0 = wall_seconds();
    tt_train_result tr = tt_train(m, out->data, &o, train_dir);
    out->train_seconds = wall_seconds() - t0;
    out->step = tt_checkpoint_step(o.fracs[0], o.steps);
    if (tr.diverged && tr.steps_done < out->step)
        die_user("training diverged at step %ld, before the checkpoint at step %ld; lower the learning rate",
                 tr.steps_done, out->step);
    out->final_loss = tr.final_loss;

    /* the checkpoint, read back from its files */
    char name[64];
    snprintf(name, sizeof name, "step%06ld_params.npy", out->step);
    char *path = path_join(train_dir, name);
    tt_load_params(m, path);
    free(path);
    snprintf(name, sizeof name, "step%06ld_vhat.npy", out->step);
    out->vhat = read_vector(train_dir, name, m->P);

    tt_set_batch(m, out->tokens, s->hess_batch);
    out->loss = m->loss(m);
    hessian_opts ho = hessian_defaults();
    ho.panel = s->panel;
    ho.label = "checkpoint Hessian";
    t0 = wall_seconds();
    out->H = hessian_full(m, &ho);
    out->hess_seconds = wall_seconds() - t0;
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

