/* The tiny Transformer in Hugging Face's GPT-2 layout (tt.h, "Hugging Face
 * GPT-2 checkpoints"): model.safetensors with GPT2LMHeadModel's state-dict
 * names ("transformer." prefix; lm_head.weight tied to wte or absent) or
 * GPT2Model's (no prefix, no head: the head is wte, as GPT2LMHeadModel ties
 * it), and config.json, in and out.
 *
 * GPT-2 and the toolkit's GPT compute the same function on the same weights
 * once Conv1D's weights are transposed: Conv1D is y = x W + b with W stored
 * [in, out] — c_attn [C, 3C], attn.c_proj [C, C], mlp.c_fc [C, M],
 * mlp.c_proj [M, C] — where the toolkit's linear layers are y = x Wᵀ + b with
 * W (out, in). c_attn's output columns are query, key, value in that order,
 * heads contiguous C/heads slices of each; LayerNorm with bias, eps
 * layer_norm_epsilon; the MLP's GELU as activation_function says (gelu_new:
 * the tanh form, gelu: exact erf); scores q·k/√(C/heads) (scale_attn_weights).
 *
 * The configuration is read strictly, as the Llama's (llama_hf.c): a key that
 * would change the function and is not modelled is refused by name, and so is
 * a key the toolkit does not know; keys known not to change the eval-mode
 * function (token ids, dropout rates, the sequence-summary head's settings,
 * versions) are accepted and ignored.
 */
#include "tt.h"
#include "tt_readerr.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The per-layer tensors of GPT2Block; MASK, MASKED_BIAS: the attention's buffers (not parameters). */
enum { G_LN1W, G_LN1B, G_ATTNW, G_ATTNB, G_PROJW, G_PROJB, G_LN2W, G_LN2B, G_FCW, G_FCB, G_MPW, G_MPB, G_MASK,
       G_MASKED_BIAS, G_SLOTS };
static const char *const SLOT_NAMES[G_SLOTS] = {
    "ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight", "attn.c_proj.bias",
    "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight", "mlp.c_proj.bias",
    "attn.bias", "attn.masked_bias"};

#define G2_MAX_LAYERS 64
#define G2_LN_EPS 1e-5 /* the toolkit's LayerNorm (tt_kernels.c) */

typedef struct {
    const st_tensor *wte, *wpe, *lnf_w, *lnf_b, *lm_head;
    const st_tensor *layer[G2_MAX_LAYERS][G_SLOTS];
    int layers;
    int prefixed; /* -1: no name seen yet; 1: GPT2LMHeadModel's "transformer." names; 0: GPT2Model's */
} g2_tensors;

/* config.json's values: -1 where absent. */
typedef struct {
    long V, C, layers, heads, positions, ctx, inner, tied, gelu;
} g2_config;

/* ---- config.json ------------------------------------------------------------------------------ */

/* activation_function: the GELUs the toolkit has; -1 for any other. gelu_pytorch_tanh is gelu_new's formula. */
static long gelu_of(const char *name)
{
    if (!strcmp(name, "gelu_new") || !strcmp(name, "gelu_pytorch_tanh")) return TT_GELU_TANH;
    return !strcmp(name, "gelu") ? TT_GELU_ERF : -1;
}

/* A key whose only modelled value is the boolean `want`. */
static int only_bool(const cJSON *k, int want, const char *why, reader_err *e)
{
    if (cJSON_IsBool(k) && cJSON_IsTrue(k) == want) return 0;
    return reader_fail(e, "config %s must be %s: %s is not modelled", k->string, want ? "true" : "false", why);
}

/* Keys that do not change the eval-mode function of GPT2LMHeadModel: accepted, not read. */
static const char *const IGNORED[] = {
    "bos_token_id", "eos_token_id", "pad_token_id", "initializer_range", "use_cache", "torch_dtype", "dtype",
    "transformers_version", "_name_or_path", "summary_type", "summary_use_proj", "summary_activation",
    "summary_proj_to_labels", "task_specific_params", "id2label", "label2id", "_num_labels"};
/* Dropout rates: the toolkit analyses the eval-mode function, as from_pretrained's model is. */
static const char *const DROPOUTS[] = {"resid_pdrop", "embd_pdrop", "attn_pdrop", "summary_first_dropout"};

static int config_key(g2_config *c, const cJSON *k, reader_err *e)
{
    const char *s = k->string;
    static const char *const ints[] = {"vocab_size", "n_embd", "n_layer", "n_head", "n_positions", "n_ctx", "n_inner"};
    long *slots[] = {&c->V, &c->C, &c->layers, &c->heads, &c->positions, &c->ctx, &c->inner};
    for (int i = 0; i < 7; i++)
        if (!strcmp(s, ints[i])) {
            if (i == 6 && cJSON_IsNull(k)) return 0; /* n_inner null: 4 n_embd */
            if (!cJSON_IsNumber(k) || !(k->valuedouble >= 1 && k->valuedouble <= 1e9) ||
                k->valuedouble != floor(k->valuedouble))
                return reader_fail(e, "config %s must be a whole number >= 1", s);
            *slots[i] = (long)k->valuedouble;
            return 0;
        }
    if (!strcmp(s, "layer_norm_epsilon")) {
        if (!cJSON_IsNumber(k) || k->valuedouble != G2_LN_EPS)
            return reader_fail(e, "config layer_norm_epsilon must be 1e-05: the toolkit's LayerNorm has eps 1e-5 (GPT-2's)");
        return 0;
    }
    if (!strcmp(s, "activation_function")) {
        if (!cJSON_IsString(k) || (c->gelu = gelu_of(k->valuestring)) < 0)
            return reader_fail(e, "config activation_function = %.60s is not modelled (the toolkit's GPT has gelu_new, "
                           "gelu_pytorch_tanh: the same tanh GELU, and gelu: exact erf)",
                        cJSON_IsString(k) ? k->valuestring : "a non-string");
        return 0;
    }
    if (!strcmp(s, "tie_word_embeddings")) {
        if (!cJSON_IsBool(k)) return reader_fail(e, "config tie_word_embeddings must be true or false");
        c->tied = cJSON_IsTrue(k);
        return 0;
    }
    if (!strcmp(s, "scale_attn_weights")) return only_bool(k, 1, "attention without the 1/sqrt(head size) scale", e);
    if (!strcmp(s, "scale_attn_by_inverse_layer_idx"))
        return only_bool(k, 0, "scaling attention by 1/(layer + 1)", e);
    if (!strcmp(s, "reorder_and_upcast_attn")) return only_bool(k, 0, "the reordered, upcast attention", e);
    if (!strcmp(s, "add_cross_attention")) return only_bool(k, 0, "cross-attention", e);
    if (!strcmp(s, "model_type")) {
        if (!cJSON_IsString(k) || strcmp(k->valuestring, "gpt2"))
            return reader_fail(e, "config model_type = %.60s: the toolkit reads gpt2 here",
                        cJSON_IsString(k) ? k->valuestring : "a non-string");
        return 0;
    }
    if (!strcmp(s, "architectures")) {
        const cJSON *a;
        if (!cJSON_IsArray(k)) return reader_fail(e, "config architectures must be a list");
        cJSON_ArrayForEach(a, k) if (!cJSON_IsString(a) || (strcmp(a->valuestring, "GPT2LMHeadModel") &&
                                                            strcmp(a->valuestring, "GPT2Model")))
            return reader_fail(e, "config architectures names %.60s: the toolkit reads GPT2LMHeadModel and GPT2Model",
                        cJSON_IsString(a) ? a->valuestring : "a non-string");
        return 0;
    }
    for (size_t i = 0; i < sizeof DROPOUTS / sizeof *DROPOUTS; i++)
        if (!strcmp(s, DROPOUTS[i])) {
            if (!cJSON_IsNumber(k) || !(k->valuedouble >= 0 && k->valuedouble <= 1))
                return reader_fail(e, "config %s must be a number in [0, 1]", s);
            return 0;
        }
    for (size_t i = 0; i < sizeof IGNORED / sizeof *IGNORED; i++)
        if (!strcmp(s, IGNORED[i])) return 0;
    return reader_fail(e, "config key '%.100s' is not one the toolkit knows for a GPT-2 model: refused rather than guess "
                   "whether it changes the function", s);
}

/* The config's text (len bytes): one JSON object, no key twice, nothing after it. */
static int config_from_json(g2_config *c, const char *text, size_t len, reader_err *e)
{
    *c = (g2_config){-1, -1, -1, -1, -1, -1, -1, -1, -1};
    if (strlen(text) != len) return reader_fail(e, "the config holds a NUL byte");
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return reader_fail(e, "the config is not a JSON object (or holds text after it)");
    }
    int rc = 0;
    for (const cJSON *k = root->child; k && !rc; k = k->next) {
        for (const cJSON *p = root->child; p != k && !rc; p = p->next)
            if (!strcmp(p->string, k->string)) rc = reader_fail(e, "config key %.100s is given twice", k->string);
        if (!rc) rc = config_key(c, k, e);
    }
    cJSON_Delete(root);
    return rc;
}

/* ---- tensors -------------------------------------------------------------------------------------- */

/* "h.<i>.<rest>" (i without leading zeros): i and rest; -1 otherwise. */
static int layer_name(const char *name, int *l, const char **rest)
{
    return reader_layer_name(name, "h.", l, rest);
}

static int sort_tensors(g2_tensors *t, const st_file *f, reader_err *e)
{
    memset(t, 0, sizeof *t);
    t->prefixed = -1;
    for (int i = 0; i < f->ntensors; i++) {
        const st_tensor *x = &f->t[i];
        const char *name = x->name, *rest;
        const st_tensor **slot = NULL;
        int l, prefixed = !strncmp(name, "transformer.", 12);
        if (!strcmp(name, "lm_head.weight")) slot = &t->lm_head, prefixed = 1;
        else {
            if (prefixed) name += 12;
            if (!strcmp(name, "wte.weight")) slot = &t->wte;
            else if (!strcmp(name, "wpe.weight")) slot = &t->wpe;
            else if (!strcmp(name, "ln_f.weight")) slot = &t->lnf_w;
            else if (!strcmp(name, "ln_f.bias")) slot = &t->lnf_b;
            else if (layer_name(name, &l, &rest) == 0) {
                if (l >= G2_MAX_LAYERS)
                    return reader_fail(e, "tensor %.200s: layer %d (the toolkit's model has at most %d)", x->name, l,
                                G2_MAX_LAYERS);
                for (int s = 0; s < G_SLOTS; s++)
                    if (!strcmp(rest, SLOT_NAMES[s])) slot = &t->layer[l][s];
                if (slot && l + 1 > t->layers) t->layers = l + 1;
            }
        }
        if (!slot)
            return reader_fail(e, "unknown tensor name %.200s: not Hugging Face's GPT-2 layout (GPT2LMHeadModel or GPT2Model)",
                        x->name);
        if (t->prefixed >= 0 && prefixed != t->prefixed)
            return reader_fail(e, "tensor %.200s: the file mixes GPT2LMHeadModel's names (transformer.*, lm_head.weight) "
                           "with GPT2Model's (no prefix)", x->name);
        t->prefixed = prefixed;
        if (*slot) return reader_fail(e, "tensor %.200s appears twice", x->name);
        *slot = x;
    }
    return 0;
}

static int want_shape(const st_tensor *x, int ndim, long a, long b, reader_err *e)
{
    if (x->ndim == ndim && (long)x->shape[0] == a && (ndim == 1 || (long)x->shape[1] == b)) return 0;
    if (ndim == 1) return reader_fail(e, "tensor %.200s: shape must be [%ld]", x->name, a);
    return reader_fail(e, "tensor %.200s: shape must be [%ld, %ld]%s", x->name, a, b,
                a != b ? " (Conv1D's [in, out])" : "");
}

static int agree(const char *key, long config, long shapes, reader_err *e)
{
    if (config >= 0 && config != shapes) return reader_fail(e, "config %s = %ld but the tensors give %ld", key, config, shapes);
    return 0;
}

static int same_values(const st_tensor *a, const st_tensor *b)
{
    return a->n == b->n && memcmp(a->data, b->data, a->n * sizeof(double)) == 0;
}

/* The attention's buffers as GPT-2 registers them: bias the causal mask tril(ones) [1, 1, n_positions,
 * n_positions]; masked_bias one value (older versions' fill for masked scores; its value is not used, as
 * Hugging Face's loader does not use it: the toolkit masks exactly). */
static int check_buffers(const g2_tensors *t, long T, reader_err *e)
{
    for (int l = 0; l < t->layers; l++) {
        const st_tensor *x = t->layer[l][G_MASK], *mb = t->layer[l][G_MASKED_BIAS];
        if (mb && mb->n != 1) return reader_fail(e, "tensor %.200s: expected one value (GPT-2's masked_bias)", mb->name);
        if (x && reader_check_mask(x, T, "GPT-2", "n_positions", e)) return -1;
    }
    return 0;
}

/* Every tensor of a model of configuration c present (the head as c->tied says) with its shape. */
static int check_shapes(const g2_tensors *t, const tt_config *c, reader_err *e)
{
    long V = c->V, C = c->C, M = c->M, T = c->T;
    const char *pre = t->prefixed == 1 ? "transformer." : "";
    if (!t->wte) return reader_fail(e, "%swte.weight is missing", pre);
    if (!t->wpe) return reader_fail(e, "%swpe.weight is missing", pre);
    if (!t->lnf_w || !t->lnf_b) return reader_fail(e, "%sln_f.%s is missing", pre, t->lnf_w ? "bias" : "weight");
    if (t->layers != c->layers) return reader_fail(e, "%d layers in the file, %d in the model", t->layers, c->layers);
    if (!c->tied && !t->lm_head) return reader_fail(e, "lm_head.weight is missing (an untied model)");
    if (want_shape(t->wte, 2, V, C, e) || (t->lm_head && want_shape(t->lm_head, 2, V, C, e)) ||
        want_shape(t->wpe, 2, T, C, e) || want_shape(t->lnf_w, 1, C, 0, e) || want_shape(t->lnf_b, 1, C, 0, e))
        return -1;
    long rows[G_MASK] = {C, C, C, 3 * C, C, C, C, C, C, M, M, C};
    long cols[G_MASK] = {0, 0, 3 * C, 0, C, 0, 0, 0, M, 0, C, 0};
    for (int l = 0; l < t->layers; l++)
        for (int s = 0; s < G_MASK; s++) {
            const st_tensor *x = t->layer[l][s];
            if (!x) return reader_fail(e, "%sh.%d.%s is missing", pre, l, SLOT_NAMES[s]);
            if (want_shape(x, cols[s] ? 2 : 1, rows[s], cols[s], e)) return -1;
        }
    return 0;
}

/* The model's configuration from the tensors and config.json. */
static int config_of(tt_config *cfg, const g2_tensors *t, const g2_config *c, reader_err *e)
{
    const char *pre = t->prefixed == 1 ? "transformer." : "";
    if (!t->wte || t->wte->ndim != 2) return reader_fail(e, "%swte.weight is missing or not 2-D", pre);
    if (!t->wpe || t->wpe->ndim != 2) return reader_fail(e, "%swpe.weight is missing or not 2-D", pre);
    if (!t->layers) return reader_fail(e, "no %sh.<i> tensors: no Transformer block", pre);
    const st_tensor *fc = t->layer[0][G_FCW];
    if (!fc || fc->ndim != 2) return reader_fail(e, "%sh.0.mlp.c_fc.weight is missing or not 2-D", pre);
    long V = (long)t->wte->shape[0], C = (long)t->wte->shape[1], T = (long)t->wpe->shape[0];
    long M = (long)fc->shape[1]; /* Conv1D [C, M] */
    if (agree("vocab_size", c->V, V, e) || agree("n_embd", c->C, C, e) || agree("n_positions", c->positions, T, e) ||
        agree("n_ctx", c->ctx, T, e) || agree("n_layer", c->layers, t->layers, e) || agree("n_inner", c->inner, M, e))
        return -1;
    if (c->inner < 0 && M != 4 * C)
        return reader_fail(e, "config n_inner is not given (4 n_embd = %ld) but the tensors give %ld", 4 * C, M);
    if (c->heads < 0) return reader_fail(e, "n_head is not in the config (the shapes cannot tell it)");
    if (C % c->heads) return reader_fail(e, "n_head = %ld does not divide n_embd = %ld", c->heads, C);
    if (V < 2 || V > 65536 || C < 1 || C > 4096 || M < 1 || M > 16384 || T < 1 || T > 1024)
        return reader_fail(e, "vocab %ld, n_embd %ld, n_inner %ld, n_positions %ld: beyond the toolkit's model (2..65536, "
                       "1..4096, 1..16384, 1..1024)", V, C, M, T);
    int tied = c->tied != 0; /* PretrainedConfig's default: tied */
    if (t->lm_head && tied && !same_values(t->lm_head, t->wte))
        return reader_fail(e, "tie_word_embeddings is %s but lm_head.weight differs from transformer.wte.weight",
                    c->tied == 1 ? "true" : "not given (true)");
    *cfg = (tt_config){.V = (int)V, .C = (int)C, .heads = (int)c->heads, .M = (int)M, .layers = t->layers,
                       .T = (int)T, .bias = 1, .tied = tied, .gelu = c->gelu >= 0 ? (int)c->gelu : TT_GELU_TANH,
                       .seed = 1};
    return check_shapes(t, cfg, e) || check_buffers(t, T, e);
}

/* Every value of the parameters finite: a NaN or Inf weight makes every loss and gradient NaN. */
static int finite_values(const st_file *f, reader_err *e)
{
    for (int i = 0; i < f->ntensors; i++)
        for (size_t k = 0; k < f->t[i].n; k++)
            if (!isfinite(f->t[i].data[k]) && !strstr(f->t[i].name, "masked_bias"))
                return reader_fail(e, "tensor %.200s holds a non-finite value (%g at element %zu)", f->t[i].name,
                            f->t[i].data[k], k);
    return 0;
}

/* ---- between the layouts -------------------------------------------------------------------------- */

/* The toolkit's tensor `name` in x (a P-vector of m's layout). */
static double *in(const model *m, double *x, const char *fmt, int l)
{
    char name[64];
    snprintf(name, sizeof name, fmt, l);
    int i = model_find_tensor(m, name);
    if (i < 0) DIE("GPT-2 layout: no tensor %s", name);
    return x + m->tensors[i].offset;
}

/* A Conv1D block: the toolkit's (out, in) W[o][i] = the file's [in, out] src[i·ld + col0 + o] (to_file 0),
 * or back (to_file 1). */
static void conv1d(double *W, double *src, int in_dim, int out_dim, int ld, int col0, int to_file)
{
    for (int o = 0; o < out_dim; o++)
        for (int i = 0; i < in_dim; i++) {
            double *f = &src[(size_t)i * ld + col0 + o], *w = &W[(size_t)o * in_dim + i];
            if (to_file) *f = *w;
            else *w = *f;
        }
}

static void copy(double *dst, const double *src, size_t n) { memcpy(dst, src, n * sizeof(double)); }

/* The file's tensors into x (a P-vector of m's layout). */
static void fill(const model *m, const g2_tensors *t, double *x)
{
    const tt_config *c = tt_config_of(m);
    int C = c->C, M = c->M;
    static const char *const qkv[3] = {"h%d.attn.query", "h%d.attn.key", "h%d.attn.value"};
    static const char *const qkvb[3] = {"h%d.attn.query.bias", "h%d.attn.key.bias", "h%d.attn.value.bias"};
    copy(in(m, x, "wte", 0), t->wte->data, t->wte->n);
    copy(in(m, x, "wpe", 0), t->wpe->data, t->wpe->n);
    for (int l = 0; l < c->layers; l++) {
        const st_tensor *const *y = t->layer[l];
        copy(in(m, x, "h%d.ln_1.weight", l), y[G_LN1W]->data, C);
        copy(in(m, x, "h%d.ln_1.bias", l), y[G_LN1B]->data, C);
        for (int i = 0; i < 3; i++) { /* c_attn's output columns: query, key, value */
            conv1d(in(m, x, qkv[i], l), y[G_ATTNW]->data, C, C, 3 * C, i * C, 0);
            copy(in(m, x, qkvb[i], l), y[G_ATTNB]->data + i * C, C);
        }
        conv1d(in(m, x, "h%d.attn.proj", l), y[G_PROJW]->data, C, C, C, 0, 0);
        copy(in(m, x, "h%d.attn.proj.bias", l), y[G_PROJB]->data, C);
        copy(in(m, x, "h%d.ln_2.weight", l), y[G_LN2W]->data, C);
        copy(in(m, x, "h%d.ln_2.bias", l), y[G_LN2B]->data, C);
        conv1d(in(m, x, "h%d.mlp.fc_1", l), y[G_FCW]->data, C, M, M, 0, 0);
        copy(in(m, x, "h%d.mlp.fc_1.bias", l), y[G_FCB]->data, M);
        conv1d(in(m, x, "h%d.mlp.proj", l), y[G_MPW]->data, M, C, C, 0, 0);
        copy(in(m, x, "h%d.mlp.proj.bias", l), y[G_MPB]->data, C);
    }
    copy(in(m, x, "ln_f.weight", 0), t->lnf_w->data, C);
    copy(in(m, x, "ln_f.bias", 0), t->lnf_b->data, C);
    if (!c->tied) copy(in(m, x, "lm_head", 0), t->lm_head->data, t->lm_head->n);
}

/* ---- in ------------------------------------------------------------------------------------------ */

static model *from_gpt2(const st_file *f, const char *json, size_t len, reader_err *e)
{
    g2_config c;
    g2_tensors t;
    tt_config cfg;
    if (config_from_json(&c, json, len, e) || sort_tensors(&t, f, e) || finite_values(f, e) ||
        config_of(&cfg, &t, &c, e))
        return NULL;
    model *m = tt_new(&cfg);
    fill(m, &t, m->params);
    return m;
}

model *tt_from_gpt2(const st_file *f, const char *config_json, const char *what)
{
    reader_err e = {{0}};
    model *m = from_gpt2(f, config_json, strlen(config_json), &e);
    if (!m) die_user("%s: %s", what, e.msg);
    return m;
}

/* The safetensors file of a --model path: FOLDER/model.safetensors, or the path. */
static char *weights_of(const char *path)
{
    return path_is_folder(path) ? path_join(path, "model.safetensors") : xstrdup(path);
}

model *tt_load_gpt2(const char *path, const char *config_path)
{
    char *file = weights_of(path), *cfgfile = NULL;
    if (config_path) cfgfile = xstrdup(config_path);
    else if (path_is_folder(path)) cfgfile = path_join(path, "config.json");
    else {
        free(file);
        die_user("%s: a Hugging Face GPT-2 checkpoint needs its config.json (n_head): --model-config, or --model the "
                 "folder holding model.safetensors and config.json", path);
    }
    size_t len = 0;
    char err[1200], *json = input_read_all(cfgfile, cfgfile, 1 << 16, &len, err, sizeof err);
    if (!json) {
        free(file), free(cfgfile);
        die_user("%s", err);
    }
    st_file *f = st_read(file);
    char what[2200];
    snprintf(what, sizeof what, "%s with %s", file, cfgfile);
    free(file), free(cfgfile);
    reader_err e = {{0}};
    model *m = from_gpt2(f, json, len, &e);
    free(json);
    st_free(f);
    if (!m) die_user("%s: %s", what, e.msg);
    return m;
}

void tt_gpt2_read_vector(const model *m, const char *path, double *x)
{
    st_file *f = st_read(path);
    g2_tensors t;
    reader_err e = {{0}};
    const tt_config *c = tt_config_of(m);
    if (sort_tensors(&t, f, &e) || check_shapes(&t, c, &e) ||
        (c->tied && t.lm_head && !same_values(t.lm_head, t.wte) &&
         reader_fail(&e, "lm_head.weight differs from wte.weight, but the model is tied (its tensor is wte, once)"))) {
        st_free(f);
        die_user("%s: %s", path, e.msg);
    }
    fill(m, &t, x);
    st_free(f);
}

/* The JSON header of a safetensors file (NULL: none, or not one; a FIFO or a device is not
 * opened to be read: input_open refuses it without blocking, and the reader says so later). */
static cJSON *header_of(const char *path)
{
    char err[64];
    FILE *fp = input_open(path, path, 0, NULL, err, sizeof err);
    if (!fp) return NULL;
    unsigned char len[8];
    cJSON *h = NULL;
    if (fread(len, 1, 8, fp) == 8) {
        size_t n = 0;
        for (int i = 7; i >= 0; i--) n = n << 8 | len[i];
        if (n > 0 && n <= 16u << 20) {
            char *buf = xmalloc(n + 1);
            size_t got = fread(buf, 1, n, fp);
            buf[got] = 0;
            h = cJSON_Parse(buf);
            free(buf);
        }
    }
    fclose(fp);
    return h;
}

/* A header of GPT-2's names: GPT2Model's wte.weight, or a c_attn weight [C, 3C] (Conv1D; nanoGPT's is [3C, C]). */
static int header_is_gpt2(const cJSON *h)
{
    for (const cJSON *x = h ? h->child : NULL; x; x = x->next) {
        if (!strcmp(x->string, "wte.weight")) return 1;
        size_t n = strlen(x->string);
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(x, "shape");
        if (n >= 18 && !strcmp(x->string + n - 18, "attn.c_attn.weight") && cJSON_GetArraySize(s) == 2 &&
            cJSON_GetArrayItem(s, 1)->valuedouble == 3 * cJSON_GetArrayItem(s, 0)->valuedouble)
            return 1;
    }
    return 0;
}

int tt_gpt2_looks(const char *path)
{
    if (path_is_folder(path)) { /* a Hugging Face folder whose config or tensors are GPT-2's */
        char *st = path_join(path, "model.safetensors");
        cJSON *h = header_of(st);
        int tensors = header_is_gpt2(h);
        cJSON_Delete(h);
        free(st);
        if (tensors) return 1;
        char *cfg = path_join(path, "config.json");
        size_t len;
        char err[64], *json = input_read_all(cfg, cfg, 1 << 16, &len, err, sizeof err);
        free(cfg);
        cJSON *root = json ? cJSON_Parse(json) : NULL;
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(root, "model_type");
        int yes = (cJSON_IsString(type) && !strcmp(type->valuestring, "gpt2")) ||
                  cJSON_GetObjectItemCaseSensitive(root, "n_embd") != NULL;
        cJSON_Delete(root);
        free(json);
        return yes;
    }
    cJSON *h = header_of(path);
    int yes = header_is_gpt2(h);
    cJSON_Delete(h);
    return yes;
}

model *tt_load_file(const char *path, const char *config_path)
{
    return tt_gpt2_looks(path) ? tt_load_gpt2(path, config_path) : tt_load_nanogpt(path, config_path);
}

void tt_file_check_data(const char *path, int V, const tt_data *d)
{
    char *file = weights_of(path);
    tt_nanogpt_check_data(file, V, d);
    free(file);
}

/* ---- out ------------------------------------------------------------------------------------------- */

/* GPT-2's Conv1D and LayerNorm layers always have biases. */
static void need_biases(const model *m, const char *path)
{
    if (!tt_config_of(m)->bias)
        die_user("%s: a model without biases has no GPT-2 layout (its Conv1D and LayerNorm layers have biases): "
                 "write it in nanoGPT's", path);
}

void tt_save_gpt2_tensors(const model *m, const double *x, const char *path, int f32)
{
    const tt_config *c = tt_config_of(m);
    need_biases(m, path);
    size_t C = c->C, M = c->M;
    int L = c->layers, nt = 0;
    double *v = (double *)x; /* only read: in() and conv1d() serve the reader too, which writes */
    double *conv = xmalloc((size_t)L * (4 * C * C + 2 * C * M + 3 * C) * sizeof(double));
    st_out *out = xcalloc((size_t)L * 12 + 8, sizeof(st_out));
    char (*names)[64] = xcalloc((size_t)L * 12 + 8, 64);
#define TENSOR(src, r, cl, ...)                                                                               \
    (snprintf(names[nt], 64, __VA_ARGS__), out[nt] = (st_out){names[nt], (cl) != 0 ? 2 : 1, {(r), (cl)}, (src)}, nt++)
    TENSOR(in(m, v, "wte", 0), (size_t)c->V, C, "transformer.wte.weight");
    TENSOR(in(m, v, "wpe", 0), (size_t)c->T, C, "transformer.wpe.weight");
    static const char *const qkv[3] = {"h%d.attn.query", "h%d.attn.key", "h%d.attn.value"};
    static const char *const qkvb[3] = {"h%d.attn.query.bias", "h%d.attn.key.bias", "h%d.attn.value.bias"};
    double *cur = conv;
    for (int l = 0; l < L; l++) {
        double *attn = cur, *attnb = attn + 3 * C * C, *proj = attnb + 3 * C, *fc = proj + C * C, *mp = fc + C * M;
        cur = mp + M * C;
        for (int i = 0; i < 3; i++) {
            conv1d(in(m, v, qkv[i], l), attn, (int)C, (int)C, 3 * (int)C, i * (int)C, 1);
            copy(attnb + i * C, in(m, v, qkvb[i], l), C);
        }
        conv1d(in(m, v, "h%d.attn.proj", l), proj, (int)C, (int)C, (int)C, 0, 1);
        conv1d(in(m, v, "h%d.mlp.fc_1", l), fc, (int)C, (int)M, (int)M, 0, 1);
        conv1d(in(m, v, "h%d.mlp.proj", l), mp, (int)M, (int)C, (int)C, 0, 1);
        TENSOR(in(m, v, "h%d.ln_1.weight", l), C, 0, "transformer.h.%d.ln_1.weight", l);
        TENSOR(in(m, v, "h%d.ln_1.bias", l), C, 0, "transformer.h.%d.ln_1.bias", l);
        TENSOR(attn, C, 3 * C, "transformer.h.%d.attn.c_attn.weight", l);
        TENSOR(attnb, 3 * C, 0, "transformer.h.%d.attn.c_attn.bias", l);
        TENSOR(proj, C, C, "transformer.h.%d.attn.c_proj.weight", l);
        TENSOR(in(m, v, "h%d.attn.proj.bias", l), C, 0, "transformer.h.%d.attn.c_proj.bias", l);
        TENSOR(in(m, v, "h%d.ln_2.weight", l), C, 0, "transformer.h.%d.ln_2.weight", l);
        TENSOR(in(m, v, "h%d.ln_2.bias", l), C, 0, "transformer.h.%d.ln_2.bias", l);
        TENSOR(fc, C, M, "transformer.h.%d.mlp.c_fc.weight", l);
        TENSOR(in(m, v, "h%d.mlp.fc_1.bias", l), M, 0, "transformer.h.%d.mlp.c_fc.bias", l);
        TENSOR(mp, M, C, "transformer.h.%d.mlp.c_proj.weight", l);
        TENSOR(in(m, v, "h%d.mlp.proj.bias", l), C, 0, "transformer.h.%d.mlp.c_proj.bias", l);
    }
    TENSOR(in(m, v, "ln_f.weight", 0), C, 0, "transformer.ln_f.weight");
    TENSOR(in(m, v, "ln_f.bias", 0), C, 0, "transformer.ln_f.bias");
    if (!c->tied) TENSOR(in(m, v, "lm_head", 0), (size_t)c->V, C, "lm_head.weight"); /* tied: as save_pretrained */
#undef TENSOR
    const char *keys[] = {"format"}, *vals[] = {"pt"};
    st_write(path, out, nt, keys, vals, 1, f32 ? ST_F32 : ST_F64);
    free(conv), free(out), free(names);
}

static void write_config(const tt_config *c, const char *path, int f32)
{
    cJSON *o = cJSON_CreateObject(), *arch = cJSON_AddArrayToObject(o, "architectures");
    cJSON_AddItemToArray(arch, cJSON_CreateString("GPT2LMHeadModel"));
    cJSON_AddStringToObject(o, "model_type", "gpt2");
    cJSON_AddNumberToObject(o, "vocab_size", c->V);
    cJSON_AddNumberToObject(o, "n_positions", c->T);
    cJSON_AddNumberToObject(o, "n_embd", c->C);
    cJSON_AddNumberToObject(o, "n_layer", c->layers);
    cJSON_AddNumberToObject(o, "n_head", c->heads);
    cJSON_AddNumberToObject(o, "n_inner", c->M);
    cJSON_AddStringToObject(o, "activation_function", c->gelu == TT_GELU_TANH ? "gelu_new" : "gelu");
    cJSON_AddNumberToObject(o, "layer_norm_epsilon", G2_LN_EPS);
    cJSON_AddBoolToObject(o, "tie_word_embeddings", c->tied);
    cJSON_AddBoolToObject(o, "scale_attn_weights", 1);
    cJSON_AddBoolToObject(o, "scale_attn_by_inverse_layer_idx", 0);
    cJSON_AddBoolToObject(o, "reorder_and_upcast_attn", 0);
    for (size_t i = 0; i < 3; i++) cJSON_AddNumberToObject(o, DROPOUTS[i], 0);
    cJSON_AddStringToObject(o, "torch_dtype", f32 ? "float32" : "float64");
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    if (!text) DIE("cannot format config.json");
    outfile *f = outfile_open(path);
    fprintf(outfile_fp(f), "%s\n", text);
    outfile_commit(f);
    free(text);
}

void tt_save_gpt2(const model *m, const char *dir, int f32)
{
    need_biases(m, dir); /* before the folder */
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) die_user("cannot create the folder %s: %s", dir, strerror(errno));
    if (!path_is_folder(dir)) die_user("%s exists and is not a folder (--save-hf writes a folder)", dir);
    char *st = path_join(dir, "model.safetensors"), *cj = path_join(dir, "config.json");
    tt_save_gpt2_tensors(m, m->params, st, f32);
    write_config(tt_config_of(m), cj, f32);
    free(st), free(cj);
}
