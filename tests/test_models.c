/* Tests of the model registry (harness/models.h): the lookups of kinds by name
 * and of a file's kind, every kind's contract on small models (start at the
 * initialisation on its Hessian batch; one training run whose checkpoints are
 * each the checkpoint of a run of its own; fraction 0 the initialisation on the
 * Hessian batch even after training), a model file read once (nanoGPT's, a
 * Hugging Face Llama folder), the partitions
 * by name, and model_ckpt_open's loss and step. */
#include "check.h"
#include "core/core.h"
#include "core/model.h"
#include "harness/mlp_ckpt.h"
#include "harness/models.h"
#include "harness/tt_ckpt.h"
#include "harness/tt_train.h"
#include "tinytransformer/llama.h"
#include "tinytransformer/tt.h"
#include <stdlib.h>
#include <unistd.h>

static char tmpdir[256];

static char *tmp_path(const char *name) { return path_join(tmpdir, name); }

/* Small flags every kind trains fast with. */
static void small_flags(model_cli *c)
{
    model_cli_init(c);
    c->cli.steps = 20;
    c->cli.batch = 8;
    c->cli.hess_batch = 4;
    c->cli.C = 8, c->cli.M = 16, c->cli.heads = 2, c->cli.T = 6;
    c->mlp.data = "synthetic";
    c->mlp.width = 3;
    c->mlp.pool = 4;
    c->mlp.eval_n = 40;
}

static void test_lookup(void)
{
    CHECK(model_kind_named("tt") == &MODEL_TT && model_kind_named("mlp") == &MODEL_MLP &&
              model_kind_named("llama") == &MODEL_LLAMA && !model_kind_named("x") && !model_kind_named("both"),
          "kinds by name");
    CHECK(strcmp(model_kind_names(), "tt, mlp, llama") == 0, "names: '%s'", model_kind_names());
    const model_kind *k[4];
    int n = model_kinds_parse("mlp,tt", k, 4, "--models");
    CHECK(n == 2 && k[0] == &MODEL_TT && k[1] == &MODEL_MLP, "a list in the table's order (%d)", n);
    n = model_kinds_parse("mlp", k, 4, "--models");
    CHECK(n == 1 && k[0] == &MODEL_MLP, "one kind");
    EXPECT_USER_ERROR(model_kinds_parse("tt,gpt", k, 4, "--models"), "--models: unknown model 'gpt' (tt, mlp, llama)");
    EXPECT_USER_ERROR(model_kinds_parse("tt,tt", k, 4, "--models"), "model 'tt' named twice");
    EXPECT_USER_ERROR(model_kinds_parse(",", k, 4, "--models"), "--models names no model");
    EXPECT_USER_ERROR(model_kinds_parse("tt,mlp", k, 1, "--models"), "at most 1 models");
    /* every kind keeps the contract's required entries */
    const model_kind *all[3] = {&MODEL_TT, &MODEL_MLP, &MODEL_LLAMA};
    int complete = 1;
    for (int i = 0; i < 3; i++)
        complete &= all[i]->name && all[i]->what && all[i]->training && all[i]->check && all[i]->start &&
                    all[i]->train && all[i]->load && all[i]->set_threads && all[i]->free;
    CHECK(complete, "every kind fills the contract");
}

/* Fractions 0, 0.5 and 1 of one run against a run of its own at each: the
 * same parameters and v̂ bit for bit; 0 is the initialisation on the Hessian
 * batch (the loss there is start's), after training too. */
static void check_kind_checkpoints(const char *name)
{
    model_cli c;
    small_flags(&c);
    const double fr[3] = {0, 0.5, 1};
    model_ckpt k;
    model_ckpt_check_at(&k, &c, name, fr, 3);
    model_ckpt_start(&k);
    size_t P = k.m->P;
    double loss0 = k.m->loss(k.m);
    double *p0 = xmalloc(P * sizeof(double));
    memcpy(p0, k.m->params, P * sizeof(double));
    char *dir = tmp_path(name);
    model_ckpt_train(&k, dir);
    CHECK(k.total == 20, "%s: total steps %ld", name, k.total);
    for (int i = 0; i < 3; i++) { /* the initialisation first, right after the training's last batch */
        model_ckpt_load(&k, i);
        if (fr[i] == 0) {
            CHECK(!memcmp(k.m->params, p0, P * sizeof(double)), "%s: fraction 0 = the initialisation", name);
            CHECK(k.m->loss(k.m) == loss0, "%s: fraction 0 on the Hessian batch after training (%.17g vs %.17g)", name,
                  k.m->loss(k.m), loss0);
            continue;
        }
        model_cli c1;
        small_flags(&c1);
        c1.cli.frac = fr[i];
        model_ckpt one;
        model_ckpt_check(&one, &c1, name);
        char sub[64];
        snprintf(sub, sizeof sub, "%s_%g", name, fr[i]);
        char *d1 = tmp_path(sub);
        model_ckpt_open(&one, d1);
        CHECK(!memcmp(k.m->params, one.m->params, P * sizeof(double)) && !memcmp(k.vhat, one.vhat, P * sizeof(double)),
              "%s: fraction %g of one run = a run of its own, bitwise", name, fr[i]);
        CHECK(k.step == checkpoint_step(fr[i], 20) && one.step == k.step, "%s: step %ld", name, k.step);
        CHECK(one.loss == one.m->loss(one.m) && one.loss == k.m->loss(k.m), "%s: open's loss on the Hessian batch", name);
        model_ckpt_free(&one);
        model_cli_free(&c1);
        free(d1);
    }
    free(dir);
    free(p0);
    model_ckpt_free(&k);
    model_cli_free(&c);
}

/* A file of the Transformer's layout is tt's; read once: gone after check, the model still opens. */
static void test_file_read_once(void)
{
    tt_config cfg = tt_defaults();
    cfg.C = 8, cfg.M = 16, cfg.heads = 2, cfg.T = 6, cfg.seed = 5;
    model *src = tt_new(&cfg);
    char *path = tmp_path("gpt.safetensors");
    tt_save_nanogpt(src, NULL, path, 0);
    model_cli c;
    small_flags(&c);
    model_ckpt k;
    model_ckpt_check(&k, &c, path);
    CHECK(k.kind == &MODEL_TT && k.file && !strcmp(k.file, path), "a file's kind: tt");
    CHECK(!strcmp(model_ckpt_what(&k), path), "a file model is named by its file");
    unlink(path);
    model_ckpt_start(&k);
    CHECK(k.m->P == src->P && !memcmp(k.m->params, src->params, src->P * sizeof(double)),
          "the file's weights, not read again (the file is gone)");
    char *dir = tmp_path("file_train");
    model_ckpt_train(&k, dir);
    model_ckpt_load(&k, 0);
    CHECK(k.step == 0 && k.total == 0 && !memcmp(k.m->params, src->params, src->P * sizeof(double)),
          "a file model keeps its weights, step 0 of 0");
    double vsum = 0;
    for (size_t i = 0; i < k.m->P; i++) vsum += k.vhat[i];
    CHECK(vsum > 0, "its v-hat estimated");
    free(dir);
    model_ckpt_free(&k);
    model_cli_free(&c);
    model_ckpt k2;
    model_cli c2;
    small_flags(&c2);
    EXPECT_USER_ERROR(model_ckpt_check(&k2, &c2, path), "cannot read");
    model_cli_free(&c2);
    free(path);
    model_free(src);
}

/* A Hugging Face Llama folder is llama's (before tt, which takes any file); read once. */
static void test_llama_file(void)
{
    llama_config cfg = llama_defaults();
    cfg.C = 8, cfg.M = 16, cfg.heads = 2, cfg.kv_heads = 1, cfg.T = 6, cfg.seed = 5;
    model *src = llama_new(&cfg);
    char *dir = tmp_path("llama_hf");
    llama_save_hf(src, dir, 0);
    model_cli c;
    small_flags(&c);
    model_ckpt k;
    model_ckpt_check(&k, &c, dir);
    CHECK(k.kind == &MODEL_LLAMA && k.file && !strcmp(model_ckpt_what(&k), dir), "a Hugging Face folder's kind: llama");
    remove_tree(dir);
    model_ckpt_start(&k);
    CHECK(k.m->P == src->P && !memcmp(k.m->params, src->params, src->P * sizeof(double)),
          "the folder's weights, not read again (the folder is gone)");
    char *train = tmp_path("llama_file_train");
    model_ckpt_train(&k, train);
    model_ckpt_load(&k, 0);
    double vsum = 0;
    for (size_t i = 0; i < k.m->P; i++) vsum += k.vhat[i];
    CHECK(k.step == 0 && k.total == 0 && vsum > 0 && !memcmp(k.m->params, src->params, src->P * sizeof(double)),
          "a Llama file keeps its weights, step 0 of 0, v-hat estimated");
    free(train), free(dir);
    model_ckpt_free(&k);
    model_cli_free(&c);
    model_free(src);
}

static void test_partitions(void)
{
    model_cli c;
    small_flags(&c);
    model_ckpt k;
    model_ckpt_check(&k, &c, "tt");
    model_ckpt_start(&k);
    partition *a = model_partition(&k, "alg3"), *b = partition_alg3(k.m, 0);
    int same = a->nblocks == b->nblocks;
    for (int i = 0; same && i < a->nblocks; i++)
        same = a->b[i].start == b->b[i].start && a->b[i].n == b->b[i].n && a->b[i].stride == b->b[i].stride;
    CHECK(same, "alg3 by name = partition_alg3");
    partition_free(a), partition_free(b);
    partition *w = model_partition(&k, "whole");
    CHECK(w->nblocks == 1 && w->b[0].n == k.m->P, "whole: one block");
    partition_free(w);
    partition *t = model_partition(&k, "tensors");
    CHECK(t->nblocks == k.m->ntensors, "tensors = alg2: one block per tensor");
    partition_free(t);
    char *pf = tmp_path("two.part");
    FILE *fp = fopen(pf, "w");
    fprintf(fp, "first 0 %zu\nrest %zu %zu\n", k.m->P / 2, k.m->P / 2, k.m->P - k.m->P / 2);
    fclose(fp);
    partition *f = model_partition(&k, pf);
    CHECK(f->nblocks == 2 && f->b[1].start == k.m->P / 2, "a partition file");
    partition_free(f);
    EXPECT_USER_ERROR(model_partition(&k, "alg4"), "cannot read");
    free(pf);
    model_ckpt_free(&k);
    model_cli_free(&c);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_models.XXXXXX");
    if (!mkdtemp(tmpdir)) DIE("mkdtemp failed");
    core_quiet = 1;
    test_lookup();
    check_kind_checkpoints("tt");
    check_kind_checkpoints("mlp");
    check_kind_checkpoints("llama");
    test_file_read_once();
    test_llama_file();
    test_partitions();
    if (remove_tree(tmpdir) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_summary();
}
