/* The registry of model kinds (models.h): the table, the lookups by name, file
 * and partition, and a kind's model at its checkpoint on every rank. */
#include "harness/models.h"
#include "core/core.h"
#include "core/dist.h"
#include "core/model.h"
#include "harness/mlp_ckpt.h"
#include "harness/tt_ckpt.h"
#include "harness/tt_train.h"
#include "hessian/hessian.h"
#include "tinytransformer/llama.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Files are offered to the kinds in this order: tt, which reads any file, last. */
static const model_kind *const MODEL_KINDS[] = {&MODEL_MLP, &MODEL_LLAMA, &MODEL_TT};
enum { NKINDS = sizeof MODEL_KINDS / sizeof *MODEL_KINDS };
/* Names in help and lists: the order the programs run them in. */
static const model_kind *const IN_ORDER[NKINDS] = {&MODEL_TT, &MODEL_MLP, &MODEL_LLAMA};

void model_cli_init(model_cli *c)
{
    memset(c, 0, sizeof *c);
    ckpt_cli_init(&c->cli);
    mlp_cli_init(&c->mlp);
    c->llama = llama_cli_defaults();
    c->model_name = "tt";
}

void model_cli_free(model_cli *c) { ckpt_cli_free(&c->cli); }

const model_kind *model_kind_named(const char *name)
{
    for (int i = 0; i < NKINDS; i++)
        if (strcmp(MODEL_KINDS[i]->name, name) == 0) return MODEL_KINDS[i];
    return NULL;
}

const char *model_kind_names(void)
{
    static char names[256];
    if (!names[0])
        for (int i = 0; i < NKINDS; i++) {
            size_t n = strlen(names);
            snprintf(names + n, sizeof names - n, "%s%s", i ? ", " : "", IN_ORDER[i]->name);
        }
    return names;
}

int model_kinds_parse(const char *list, const model_kind **out, int max, const char *flag)
{
    int chosen[NKINDS] = {0};
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        const model_kind *k = model_kind_named(t);
        if (!k) die_user("%s: unknown model '%s' (%s)", flag, t, model_kind_names());
        for (int i = 0; i < NKINDS; i++)
            if (IN_ORDER[i] == k) {
                if (chosen[i]) die_user("%s: model '%s' named twice", flag, t);
                chosen[i] = 1;
            }
    }
    int n = 0;
    for (int i = 0; i < NKINDS; i++)
        if (chosen[i]) {
            if (n == max) die_user("%s: at most %d models", flag, max);
            out[n++] = IN_ORDER[i];
        }
    if (n == 0) die_user("%s names no model", flag);
    return n;
}

/* The kind of --model `name`: a kind's name, or the first kind that reads the file. */
static const model_kind *kind_of(const char *name, const char **file)
{
    const model_kind *k = model_kind_named(name);
    *file = NULL;
    if (k) return k;
    for (int i = 0; i < NKINDS; i++)
        if (MODEL_KINDS[i]->reads_file && MODEL_KINDS[i]->reads_file(name)) {
            *file = name;
            return MODEL_KINDS[i];
        }
    die_user("--model: '%s' is no model (%s) and no model file any of them reads", name, model_kind_names());
}

void model_ckpt_check_at(model_ckpt *k, model_cli *c, const char *name, const double *fracs, int nfracs)
{
    memset(k, 0, sizeof *k);
    if (nfracs < 1 || nfracs > TT_MAX_CHECKPOINTS) DIE("model_ckpt_check_at: %d checkpoints", nfracs);
    k->cli = c;
    k->kind = kind_of(name, &k->file);
    k->nfracs = nfracs;
    memcpy(k->fracs, fracs, (size_t)nfracs * sizeof(double));
    k->kind->check(k);
}

void model_ckpt_check(model_ckpt *k, model_cli *c, const char *name)
{
    model_ckpt_check_at(k, c, name, &c->cli.frac, 1);
}

void model_ckpt_start(model_ckpt *k)
{
    if (k->m) return;
    k->kind->start(k);
    k->loss0 = k->m->loss(k->m);
    k->final_loss = NAN;
    size_t P = k->m->P;
    k->vhat = xcalloc(P, sizeof(double));
    k->p0 = xmalloc(P * sizeof(double));
    memcpy(k->p0, k->m->params, P * sizeof(double));
}

void model_ckpt_train(model_ckpt *k, const char *train_dir) { k->kind->train(k, train_dir); }

void model_ckpt_load(model_ckpt *k, int i)
{
    if (i < 0 || i >= k->nfracs) DIE("model_ckpt_load: no checkpoint %d of %d", i, k->nfracs);
    if (k->file) /* its weights (model_ckpt_init_params may have replaced them) */
        memcpy(k->m->params, k->p0, k->m->P * sizeof(double));
    if (k->fracs[i] > 0 || k->file) {
        k->kind->load(k, i);
        return;
    }
    /* the initialisation, on the Hessian batch (train leaves the model there) */
    memcpy(k->m->params, k->p0, k->m->P * sizeof(double));
    memset(k->vhat, 0, k->m->P * sizeof(double));
    k->step = 0;
}

void model_ckpt_open(model_ckpt *k, const char *train_dir)
{
    model_ckpt_start(k);
    double meta[2] = {0, 0};   /* the loss, the step */
    if (dist_rank() == 0) {
        model_ckpt_train(k, train_dir);
        model_ckpt_load(k, 0);
        meta[0] = k->m->loss(k->m);
        meta[1] = (double)k->step;
    }
    dist_bcast(k->m->params, k->m->P * sizeof(double));
    dist_bcast(k->vhat, k->m->P * sizeof(double));
    dist_bcast(meta, sizeof meta);
    k->loss = meta[0];
    k->step = (long)meta[1];
    k->kind->set_threads(k->m, dist_workers());
}

void model_ckpt_init_params(model_ckpt *k)
{
    if (!k->file) {
        memcpy(k->m->params, k->p0, k->m->P * sizeof(double));
        return;
    }
    if (!k->kind->init_params) die_user("--model %s: no initialisation of its architecture to compare with", k->file);
    k->kind->init_params(k);
}

void model_ckpt_gauss_newton(model_ckpt *k, int on)
{
    if (!k->kind->gauss_newton) die_user("--model %s: no Gauss-Newton mode", k->kind->name);
    k->kind->gauss_newton(k->m, on);
}

int model_ckpt_null_directions(const model_ckpt *k, const block *b, double *out)
{
    return k->kind->null_directions ? k->kind->null_directions(k->m, b, out) : 0;
}

double *model_ckpt_hessian(model_ckpt *k)
{
    hessian_opts o = hessian_defaults();
    if (k->hess_panel > 0) o.panel = k->hess_panel;
    o.label = "checkpoint Hessian";
    return hessian_full(k->m, &o);
}

void model_ckpt_free(model_ckpt *k)
{
    if (k->kind) k->kind->free(k);
    free(k->vhat);
    free(k->p0);
    memset(k, 0, sizeof *k);
}

const char *model_ckpt_what(const model_ckpt *k) { return k->file ? k->file : k->kind->what; }

/* ---- partitions ------------------------------------------------------------------------------ */

static partition *shared_partition(const model *m, const char *s)
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
    return NULL;
}

partition *model_partition(const model_ckpt *k, const char *name)
{
    partition *p = k->kind->partition ? k->kind->partition(k->m, name) : NULL;
    if (!p) p = shared_partition(k->m, name);
    return p ? p : partition_read(name, k->m);
}

partition *model_partition_blocks(const model_ckpt *k, const char *name)
{
    partition *p = k->kind->partition ? k->kind->partition(k->m, name) : NULL;
    if (!p) p = shared_partition(k->m, name);
    return p ? p : partition_read_blocks(name, k->m);
}
