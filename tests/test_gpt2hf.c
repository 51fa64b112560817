/* Tests of tinytransformer/tt_gpt2hf.c: Hugging Face GPT-2 checkpoints in and
 * out of the tiny GPT. Round trips (write, read: the same parameters, the same
 * configuration, the same bytes written again), both name layouts
 * (GPT2LMHeadModel's and GPT2Model's with the attention buffers), the Conv1D
 * transpose against the nanoGPT reader on the same model, which reader a path
 * goes to, the tanh GELU through nanoGPT's metadata, and every refusal: one
 * line naming the key or tensor. The check against PyTorch itself is
 * tests/torch_gpt2.py (make test-torch). */
#include "check.h"
#include "fixtures.h"
#include "tinytransformer/llama.h"
#include "tinytransformer/tt.h"
#include <stdlib.h>
#include <unistd.h>

static char tmpdir[256];

static model *small(int tied, int gelu, int bias, unsigned long seed)
{
    tt_config c = {.V = 6, .C = 8, .heads = 2, .M = 12, .layers = 2, .T = 5, .bias = bias, .tied = tied, .gelu = gelu,
                   .seed = seed};
    return fixture_tt(&c, 3, seed);
}

static int same_model(const model *a, const model *b)
{
    const tt_config *x = tt_config_of(a), *y = tt_config_of(b);
    return a->P == b->P && memcmp(a->params, b->params, a->P * sizeof(double)) == 0 && x->V == y->V && x->C == y->C &&
           x->heads == y->heads && x->M == y->M && x->layers == y->layers && x->T == y->T && x->bias == y->bias &&
           x->tied == y->tied && x->gelu == y->gelu;
}

static char *slurp(const char *path, size_t *n)
{
    char err[300], *s = input_read_all(path, path, 0, n, err, sizeof err);
    if (!s) DIE("%s", err);
    return s;
}

static int same_bytes(const char *a, const char *b)
{
    size_t na, nb;
    char *x = slurp(a, &na), *y = slurp(b, &nb);
    int same = na == nb && memcmp(x, y, na) == 0;
    free(x), free(y);
    return same;
}

static void write_text(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    fputs(text, fp);
    fclose(fp);
}

static void test_round_trips(void)
{
    for (int tied = 0; tied <= 1; tied++)
        for (int gelu = 0; gelu <= 1; gelu++) {
            model *m = small(tied, gelu, 1, 3 + tied + 2 * gelu);
            char dir[300], again[300];
            snprintf(dir, sizeof dir, "%s/hf_%d%d", tmpdir, tied, gelu);
            snprintf(again, sizeof again, "%s/hf_%d%d_again", tmpdir, tied, gelu);
            tt_save_gpt2(m, dir, 0);
            CHECK(tt_gpt2_looks(dir) && !llama_hf_looks(dir), "tied %d gelu %d: a GPT-2 folder, not a Llama's", tied,
                  gelu);
            model *r = tt_load_file(dir, NULL);
            CHECK(same_model(m, r), "tied %d gelu %d: read back, the same model", tied, gelu);
            tt_save_gpt2(r, again, 0);
            char *a = path_join(dir, "model.safetensors"), *b = path_join(again, "model.safetensors");
            char *ca = path_join(dir, "config.json"), *cb = path_join(again, "config.json");
            CHECK(same_bytes(a, b) && same_bytes(ca, cb), "tied %d gelu %d: written again, the same bytes", tied, gelu);
            st_file *f = st_read(a);
            CHECK((st_find(f, "lm_head.weight") == NULL) == tied && st_find(f, "transformer.h.1.attn.c_attn.weight") &&
                      st_find(f, "transformer.h.1.attn.c_attn.weight")->shape[1] == 24,
                  "tied %d: lm_head.weight only when untied; c_attn [8, 24] (Conv1D)", tied);
            st_free(f);
            /* the nanoGPT reader on the same model: Conv1D transposed equals nn.Linear as stored */
            char *ng = path_join(tmpdir, "ng.safetensors");
            tt_save_nanogpt(m, NULL, ng, 0);
            model *n = tt_load_file(ng, NULL);
            CHECK(!tt_gpt2_looks(ng) && same_model(n, r), "tied %d gelu %d: nanoGPT's file gives the same model "
                  "(the tanh GELU through its metadata)", tied, gelu);
            f = st_read(ng);
            CHECK((st_meta(f, "activation_function") != NULL) == gelu, "gelu %d: activation_function in nanoGPT's "
                  "metadata only for the tanh GELU", gelu);
            st_free(f);
            /* F32 */
            tt_save_gpt2(m, again, 1);
            model *r32 = tt_load_file(again, NULL);
            double worst = 0;
            for (size_t i = 0; i < m->P; i++)
                worst = fmax(worst, fabs(r32->params[i] - m->params[i]) / fmax(fabs(m->params[i]), 1e-30));
            CHECK(worst <= 0x1p-24, "tied %d gelu %d: F32 round trip rel error %.3g", tied, gelu, worst);
            free(a), free(b), free(ca), free(cb), free(ng);
            model_free(m), model_free(r), model_free(n), model_free(r32);
        }
}

/* The file's tensors as st_out rows (names and data borrowed from f). */
static st_out *outs_of(const st_file *f)
{
    st_out *o = xcalloc((size_t)f->ntensors + 8, sizeof *o);
    for (int i = 0; i < f->ntensors; i++) {
        o[i] = (st_out){f->t[i].name, f->t[i].ndim, {0}, f->t[i].data};
        memcpy(o[i].shape, f->t[i].shape, sizeof o[i].shape);
    }
    return o;
}

/* GPT2Model's names (no prefix, no head) with the buffers older versions saved: the tied model. */
static void test_gpt2model_layout(void)
{
    model *m = small(1, TT_GELU_TANH, 1, 11);
    char *dir = path_join(tmpdir, "lmhead"), *gdir = path_join(tmpdir, "gpt2model");
    tt_save_gpt2(m, dir, 0);
    char *st = path_join(dir, "model.safetensors"), *cfg = path_join(dir, "config.json");
    st_file *f = st_read(st);
    st_out *o = outs_of(f);
    int n = f->ntensors;
    char names[64][80];
    for (int i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], "%s", o[i].name + strlen("transformer."));
        o[i].name = names[i];
    }
    double mask[25], masked = -1e4;
    for (int i = 0; i < 25; i++) mask[i] = i % 5 <= i / 5;
    for (int l = 0; l < 2; l++) {
        snprintf(names[n], sizeof names[n], "h.%d.attn.bias", l);
        o[n] = (st_out){names[n], 4, {1, 1, 5, 5}, mask};
        n++;
        snprintf(names[n], sizeof names[n], "h.%d.attn.masked_bias", l);
        o[n] = (st_out){names[n], 0, {0}, &masked};
        n++;
    }
    ensure_dir(gdir);
    char *gst = path_join(gdir, "model.safetensors"), *gcfg = path_join(gdir, "config.json");
    const char *k[] = {"format"}, *v[] = {"pt"};
    st_write(gst, o, n, k, v, 1, ST_F64);
    size_t len;
    char *text = slurp(cfg, &len);
    write_text(gcfg, text);
    model *r = tt_load_file(gdir, NULL);
    CHECK(same_model(m, r), "GPT2Model's names and buffers: the same model");
    model_free(r);
    r = tt_load_file(gst, cfg); /* a file and its config apart */
    CHECK(tt_gpt2_looks(gst) && same_model(m, r), "a GPT2Model file with --model-config: the same model");
    model_free(r);
    /* a causal mask that is not, or of another size; masked_bias of two values */
    mask[1] = 1;
    st_write(gst, o, n, k, v, 1, ST_F64);
    EXPECT_USER_ERROR(tt_load_file(gdir, NULL), "h.0.attn.bias: not a causal mask");
    mask[1] = 0;
    o[n - 4].shape[2] = o[n - 4].shape[3] = 4;
    st_write(gst, o, n, k, v, 1, ST_F64);
    EXPECT_USER_ERROR(tt_load_file(gdir, NULL), "expected GPT-2's causal mask [1, 1, 5, 5]");
    o[n - 4].shape[2] = o[n - 4].shape[3] = 5;
    double two[2] = {-1e4, -1e4};
    o[n - 1] = (st_out){names[n - 1], 1, {2}, two};
    st_write(gst, o, n, k, v, 1, ST_F64);
    EXPECT_USER_ERROR(tt_load_file(gdir, NULL), "h.1.attn.masked_bias: expected one value");
    /* names of both layouts in one file */
    o[n - 1] = (st_out){"lm_head.weight", 2, {6, 8}, f->t[0].data};
    st_write(gst, o, n, k, v, 1, ST_F64);
    EXPECT_USER_ERROR(tt_load_file(gdir, NULL), "mixes GPT2LMHeadModel's names");
    EXPECT_USER_ERROR(tt_load_gpt2(gst, NULL), "needs its config.json");
    free(text), free(o), st_free(f);
    free(dir), free(gdir), free(st), free(cfg), free(gst), free(gcfg);
    model_free(m);
}

/* The folder is refused, the message holding `what`. */
static void refused(const char *dir, const char *what) { EXPECT_USER_ERROR(tt_load_file(dir, NULL), what); }

/* The config's and the tensors' refusals: one line naming the key or the tensor. */
static void test_refusals(void)
{
    model *m = small(0, TT_GELU_TANH, 1, 17);
    char *dir = path_join(tmpdir, "bad");
    tt_save_gpt2(m, dir, 0);
    char *cfg = path_join(dir, "config.json"), *st = path_join(dir, "model.safetensors");
    /* a vector in the layout (tt_probe's --direction): the file's values; a tied model refuses a differing head */
    double *x = xmalloc(m->P * sizeof(double));
    tt_gpt2_read_vector(m, st, x);
    CHECK(memcmp(x, m->params, m->P * sizeof(double)) == 0, "the file read as a vector: the parameters");
    model *tied = small(1, TT_GELU_TANH, 1, 17);
    EXPECT_USER_ERROR(tt_gpt2_read_vector(tied, st, x), "but the model is tied");
    model_free(tied), free(x);
    size_t len;
    char *good = slurp(cfg, &len), *text = xmalloc(len + 400);
    /* the least a config says: n_head, n_inner (not 4 n_embd), untied; gelu_new by default */
    const char *least = "{\"n_head\": 2, \"n_inner\": 12, \"tie_word_embeddings\": false";
    snprintf(text, len + 400, "%s}", least);
    write_text(cfg, text);
    model *r = tt_load_file(dir, NULL);
    CHECK(same_model(m, r), "the least config: the same model (gelu_new by default)");
    model_free(r);
    const char *keys[][2] = {
        {"\"scale_attn_by_inverse_layer_idx\": true", "scale_attn_by_inverse_layer_idx must be false"},
        {"\"reorder_and_upcast_attn\": true", "reorder_and_upcast_attn must be false"},
        {"\"add_cross_attention\": true", "add_cross_attention must be false"},
        {"\"scale_attn_weights\": false", "scale_attn_weights must be true"},
        {"\"activation_function\": \"relu\"", "activation_function = relu is not modelled"},
        {"\"activation_function\": \"gelu_fast\"", "activation_function = gelu_fast"},
        {"\"layer_norm_epsilon\": 1e-6", "layer_norm_epsilon must be 1e-05"},
        {"\"n_head\": 4", "config key n_head is given twice"},
        {"\"n_embd\": 8, \"n_embd\": 8", "config key n_embd is given twice"},
        {"\"use_flash\": true", "config key 'use_flash' is not one the toolkit knows"},
        {"\"rotary\": 1", "config key 'rotary'"},
        {"\"attn_pdrop\": 2", "attn_pdrop must be a number in [0, 1]"},
    };
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        snprintf(text, len + 400, "%s, %s}", least, keys[i][0]);
        write_text(cfg, text);
        refused(dir, keys[i][1]);
    }
    const char *swaps[][3] = {
        {"\"model_type\":\t\"gpt2\"", "\"model_type\": \"llama\"", "model_type = llama"},
        {"\"GPT2LMHeadModel\"", "\"GPT2DoubleHeadsModel\"", "architectures names GPT2DoubleHeadsModel"},
        {"\"n_embd\":\t8", "\"n_embd\": 16", "n_embd = 16 but the tensors give 8"},
        {"\"n_positions\":\t5", "\"n_positions\": 6", "n_positions = 6 but the tensors give 5"},
        {"\"n_inner\":\t12", "\"n_inner\": null", "n_inner is not given (4 n_embd = 32) but the tensors give 12"},
        {"\"n_head\":\t2", "\"n_head\": 3", "n_head = 3 does not divide n_embd = 8"},
        {"\"n_head\":\t2,", "", "n_head is not in the config"},
        {"\"tie_word_embeddings\":\tfalse", "\"tie_word_embeddings\": true", "lm_head.weight differs"},
    };
    for (size_t i = 0; i < sizeof swaps / sizeof *swaps; i++) {
        const char *at = strstr(good, swaps[i][0]);
        if (!at) DIE("no %s in the written config", swaps[i][0]);
        snprintf(text, len + 400, "%.*s%s%s", (int)(at - good), good, swaps[i][1], at + strlen(swaps[i][0]));
        write_text(cfg, text);
        refused(dir, swaps[i][2]);
    }
    write_text(cfg, good);
    /* tensors: unknown, missing, wrong shape (nanoGPT's [3C, C] under GPT-2's config), NaN */
    st_file *f = st_read(st);
    st_out *o = outs_of(f);
    const char *k[] = {"format"}, *v[] = {"pt"};
    int n = f->ntensors, c_attn = -1;
    for (int i = 0; i < n; i++)
        if (!strcmp(o[i].name, "transformer.h.0.attn.c_attn.weight")) c_attn = i;
    o[c_attn].name = "transformer.h.0.attn.q_proj.weight";
    st_write(st, o, n, k, v, 1, ST_F64);
    refused(dir, "unknown tensor name transformer.h.0.attn.q_proj.weight");
    o[c_attn].name = "transformer.h.0.attn.c_attn.weight";
    st_write(st, o, n - 1, k, v, 1, ST_F64); /* the last: lm_head.weight of this untied model */
    refused(dir, "lm_head.weight is missing");
    o[c_attn].shape[0] = 24, o[c_attn].shape[1] = 8;
    st_write(st, o, n, k, v, 1, ST_F64);
    refused(dir, "transformer.h.0.attn.c_attn.weight: shape must be [8, 24] (Conv1D's");
    o[c_attn].shape[0] = 8, o[c_attn].shape[1] = 24;
    f->t[c_attn].data[5] = NAN;
    st_write(st, o, n, k, v, 1, ST_F64);
    refused(dir, "transformer.h.0.attn.c_attn.weight holds a non-finite value");
    free(o), st_free(f);
    /* a model without biases has no GPT-2 layout: refused before anything is written */
    model *nb = small(0, TT_GELU_TANH, 0, 19);
    char *nbdir = path_join(tmpdir, "nobias");
    EXPECT_USER_ERROR(tt_save_gpt2(nb, nbdir, 0), "has no GPT-2 layout");
    CHECK(access(nbdir, F_OK) != 0, "no folder written for a model without biases");
    free(nbdir), model_free(nb);
    free(good), free(text), free(cfg), free(st), free(dir);
    model_free(m);
}

int main(void)
{
    core_quiet = 1;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_gpt2hf.%d", (int)getpid());
    ensure_dir(tmpdir);
    test_round_trips();
    test_gpt2model_layout();
    test_refusals();
    if (remove_tree(tmpdir) != 0) printf("# could not remove %s\n", tmpdir);
    return check_summary();
}
