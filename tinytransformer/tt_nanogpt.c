/* The tiny Transformer in nanoGPT's layout (tt.h, "nanoGPT checkpoints"):
 * safetensors in and out. nanoGPT's GPT and this model compute the same
 * function on the same weights: pre-norm blocks, LayerNorm eps 1e-5 with
 * optional bias, causal attention with heads as contiguous C/heads slices of
 * the fused c_attn output (query, key, value in that order), exact-erf GELU
 * (nanoGPT's nn.GELU()), MLP c_fc then c_proj, final ln_f, lm_head without
 * bias, tied to wte or not. Weights are (out, in) row-major on both sides.
 * A model with GPT-2's tanh GELU (tt_gpt2hf.c reads those) is written with
 * "activation_function": "gelu_new" in its metadata and read back so. */
#include "tt.h"
#include "tt_readerr.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The per-layer tensors of nanoGPT's Block, and where each goes. */
enum { N_LN1W, N_LN1B, N_ATTNW, N_ATTNB, N_PROJW, N_PROJB, N_LN2W, N_LN2B, N_FCW, N_FCB, N_MPW, N_MPB, N_MASK,
       N_SLOTS };
static const char *const SLOT_NAMES[N_SLOTS] = {
    "ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight", "attn.c_proj.bias",
    "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight", "mlp.c_proj.bias",
    "attn.bias" /* the causal mask nanoGPT registers as a buffer without flash attention: not a parameter */};
static const int SLOT_IS_BIAS[N_SLOTS] = {0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0};

#define NG_MAX_LAYERS 64

typedef struct {
    const st_tensor *wte, *wpe, *lnf_w, *lnf_b, *lm_head;
    const st_tensor *layer[NG_MAX_LAYERS][N_SLOTS];
    int layers;
} ng_tensors;

/* The configuration read from a config JSON or the file's metadata: -1 where absent. */
typedef struct {
    long n_layer, n_head, n_embd, block_size, vocab_size, n_inner, bias, tied;
    double dropout;
    long gelu; /* activation_function: TT_GELU_ERF ("gelu"), TT_GELU_TANH ("gelu_new") */
} ng_config;

/* "transformer.h.<i>.<rest>" (i without leading zeros): i into *l and the rest;
 * -1 if the name is not of that form. */
static int layer_name(const char *name, int *l, const char **rest)
{
    return reader_layer_name(name, "transformer.h.", l, rest);
}

/* Sorts every tensor of f into t; an unknown name is an error naming it. */
static int sort_tensors(ng_tensors *t, const st_file *f, reader_err *e)
{
    memset(t, 0, sizeof *t);
    for (int i = 0; i < f->ntensors; i++) {
        const st_tensor *x = &f->t[i];
        const char *name = x->name, *rest;
        if (strncmp(name, "_orig_mod.", 10) == 0) name += 10; /* torch.compile's prefix */
        const st_tensor **slot = NULL;
        int l;
        if (strcmp(name, "transformer.wte.weight") == 0) slot = &t->wte;
        else if (strcmp(name, "transformer.wpe.weight") == 0) slot = &t->wpe;
        else if (strcmp(name, "transformer.ln_f.weight") == 0) slot = &t->lnf_w;
        else if (strcmp(name, "transformer.ln_f.bias") == 0) slot = &t->lnf_b;
        else if (strcmp(name, "lm_head.weight") == 0) slot = &t->lm_head;
        else if (layer_name(name, &l, &rest) == 0) {
            if (l >= NG_MAX_LAYERS) return reader_fail(e, "tensor %.200s: layer %d (the toolkit's model has at most %d)", x->name, l, NG_MAX_LAYERS);
            for (int s = 0; s < N_SLOTS; s++)
                if (strcmp(rest, SLOT_NAMES[s]) == 0) slot = &t->layer[l][s];
            if (slot && l + 1 > t->layers) t->layers = l + 1;
        }
        if (!slot) return reader_fail(e, "unknown tensor name %.200s: not nanoGPT's GPT layout", x->name);
        if (*slot) return reader_fail(e, "tensor %.200s appears twice (with and without _orig_mod.)", x->name);
        *slot = x;
    }
    return 0;
}

/* ---- the configuration ---------------------------------------------------------------------
 * From a config JSON (given with the file) and from the file's metadata (the same
 * keys as strings): the config JSON wins for every key, and where both give a key
 * and disagree a note says so (stderr, and run.txt). Both are read strictly: a key
 * twice, a number with a blank, a sign or trailing text, a dropout outside [0, 1)
 * are errors naming the key. */

static void config_unset(ng_config *c)
{
    *c = (ng_config){-1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
}

#define NG_INTS 6
static const char *const INT_KEYS[NG_INTS] = {"n_layer", "n_head", "n_embd", "block_size", "vocab_size", "n_inner"};
static long *int_slot(ng_config *c, int i)
{
    long *slots[NG_INTS] = {&c->n_layer, &c->n_head, &c->n_embd, &c->block_size, &c->vocab_size, &c->n_inner};
    return slots[i];
}

static int dropout_ok(double d) { return d >= 0 && d < 1; } /* NaN fails */

/* activation_function: Hugging Face's names of the two GELUs; -1 for any other. */
static long gelu_named(const char *v) { return !strcmp(v, "gelu") ? TT_GELU_ERF : !strcmp(v, "gelu_new") ? TT_GELU_TANH : -1; }

/* One key of a config JSON into c; an unknown key, a key twice or a bad value is an error naming it. */
static int config_key(ng_config *c, const cJSON *k, reader_err *e)
{
    for (int i = 0; i < NG_INTS; i++)
        if (strcmp(k->string, INT_KEYS[i]) == 0) {
            if (*int_slot(c, i) >= 0) return reader_fail(e, "config key %s is given twice", INT_KEYS[i]);
            if (i == 5 && cJSON_IsNull(k)) return 0; /* n_inner null: 4 n_embd */
            if (!cJSON_IsNumber(k) || k->valuedouble < 1 || k->valuedouble > 1e9 ||
                k->valuedouble != (double)(long)k->valuedouble)
                return reader_fail(e, "config %s must be a whole number >= 1", INT_KEYS[i]);
            *int_slot(c, i) = (long)k->valuedouble;
            return 0;
        }
    if (strcmp(k->string, "bias") == 0 || strcmp(k->string, "tied") == 0 ||
        strcmp(k->string, "tie_word_embeddings") == 0) {
        long *slot = strcmp(k->string, "bias") == 0 ? &c->bias : &c->tied;
        if (*slot >= 0) return reader_fail(e, "config key %.40s is given twice (tied and tie_word_embeddings are one)", k->string);
        if (!cJSON_IsBool(k)) return reader_fail(e, "config %.40s must be true or false", k->string);
        *slot = cJSON_IsTrue(k);
        return 0;
    }
    if (strcmp(k->string, "dropout") == 0) {
        if (c->dropout >= 0) return reader_fail(e, "config key dropout is given twice");
        if (!cJSON_IsNumber(k) || !dropout_ok(k->valuedouble)) return reader_fail(e, "config dropout must be a number in [0, 1)");
        c->dropout = k->valuedouble;
        return 0;
    }
    if (strcmp(k->string, "activation_function") == 0) {
        if (c->gelu >= 0) return reader_fail(e, "config key activation_function is given twice");
        if (!cJSON_IsString(k) || (c->gelu = gelu_named(k->valuestring)) < 0)
            return reader_fail(e, "config activation_function must be \"gelu\" (exact erf) or \"gelu_new\" (tanh)");
        return 0;
    }
    return reader_fail(e, "config key '%.100s' is not one of nanoGPT's GPTConfig (n_layer, n_head, n_embd, block_size, "
                   "vocab_size, bias, dropout; n_inner, tied, activation_function)", k->string);
}

/* A config JSON: one object, nothing after it but blanks, no NUL (len: the text's bytes). */
static int config_from_json(ng_config *c, const char *text, size_t len, reader_err *e)
{
    if (strlen(text) != len) return reader_fail(e, "the config holds a NUL byte");
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return reader_fail(e, "the config is not a JSON object (or holds text after it)");
    }
    const cJSON *k;
    int rc = 0;
    cJSON_ArrayForEach(k, root)
    if ((rc = config_key(c, k, e))) break;
    cJSON_Delete(root);
    return rc;
}

/* The toolkit's own metadata (tt_save_nanogpt): the same keys as strings, whole
 * numbers as plain digits. Keys it does not know are left alone (safetensors
 * writers add their own, e.g. "format"). */
static int config_from_metadata(ng_config *c, const st_file *f, reader_err *e)
{
    for (int i = 0; i < NG_INTS; i++) {
        const char *v = st_meta(f, INT_KEYS[i]);
        if (!v) continue;
        size_t n = strspn(v, "0123456789");
        if (v[0] < '1' || v[0] > '9' || v[n] || n > 10 || atol(v) > 1000000000)
            return reader_fail(e, "metadata %s = '%.40s' is not a whole number >= 1", INT_KEYS[i], v);
        *int_slot(c, i) = atol(v);
    }
    const char *bools[] = {"bias", "tied"};
    long *bslots[] = {&c->bias, &c->tied};
    for (int i = 0; i < 2; i++) {
        const char *v = st_meta(f, bools[i]);
        if (!v) continue;
        if (!strcmp(v, "true") || !strcmp(v, "True") || !strcmp(v, "1")) *bslots[i] = 1;
        else if (!strcmp(v, "false") || !strcmp(v, "False") || !strcmp(v, "0")) *bslots[i] = 0;
        else return reader_fail(e, "metadata %s = '%.40s' is not true or false", bools[i], v);
    }
    const char *a = st_meta(f, "activation_function");
    if (a && (c->gelu = gelu_named(a)) < 0)
        return reader_fail(e, "metadata activation_function = '%.40s' is not gelu or gelu_new", a);
    const char *d = st_meta(f, "dropout");
    if (d) {
        char *end;
        double x = strtod(d, &end);
        if ((*d < '0' || *d > '9') || *end || !dropout_ok(x))
            return reader_fail(e, "metadata dropout = '%.40s' is not a number in [0, 1)", d);
        c->dropout = x;
    }
    return 0;
}

/* A note (stderr unless --quiet, and run.txt), once per process and text. */
static void note_once(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note_once(const char *fmt, ...)
{
    static char seen[16][300];
    static int nseen = 0;
    char line[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    for (int i = 0; i < nseen; i++)
        if (!strcmp(seen[i], line)) return;
    if (nseen < 16) snprintf(seen[nseen++], sizeof seen[0], "%s", line);
    if (!core_quiet) fprintf(stderr, "%s: %s\n", program_name(), line);
    run_note("note: %s", line);
}

/* The config JSON's keys over the metadata's, every key alike; a disagreement noted. */
static ng_config config_merge(const ng_config *json, const ng_config *meta, const char *what)
{
    ng_config c = *json;
    for (int i = 0; i < NG_INTS + 2; i++) {
        const char *key = i < NG_INTS ? INT_KEYS[i] : i == NG_INTS ? "bias" : "tied";
        long j = i < NG_INTS ? *int_slot((ng_config *)json, i) : i == NG_INTS ? json->bias : json->tied;
        long m = i < NG_INTS ? *int_slot((ng_config *)meta, i) : i == NG_INTS ? meta->bias : meta->tied;
        long *out = i < NG_INTS ? int_slot(&c, i) : i == NG_INTS ? &c.bias : &c.tied;
        if (j < 0) *out = m;
        else if (m >= 0 && m != j)
            note_once("%.200s: the config's %s = %ld overrides the file's metadata (%ld)", what, key, j, m);
    }
    if (json->gelu < 0) c.gelu = meta->gelu;
    else if (meta->gelu >= 0 && meta->gelu != json->gelu)
        note_once("%.200s: the config's activation_function overrides the file's metadata", what);
    if (json->dropout < 0) c.dropout = meta->dropout;
    else if (meta->dropout >= 0 && meta->dropout != json->dropout)
        note_once("%.200s: the config's dropout = %g overrides the file's metadata (%g)", what, json->dropout,
                  meta->dropout);
    return c;
}

/* ---- shapes ------------------------------------------------------------------------------------ */

static int want_shape(const st_tensor *x, int ndim, long a, long b, reader_err *e)
{
    int ok = x->ndim == ndim && (long)x->shape[0] == a && (ndim == 1 || (long)x->shape[1] == b);
    if (ok) return 0;
    if (ndim == 1) return reader_fail(e, "tensor %.200s: shape must be [%ld]", x->name, a);
    return reader_fail(e, "tensor %.200s: shape must be [%ld, %ld]", x->name, a, b);
}

/* Checks one size of the shapes against the config (-1: not given). */
static int agree(const char *key, long config, long shapes, reader_err *e)
{
    if (config >= 0 && config != shapes) return reader_fail(e, "config %s = %ld but the tensors give %ld", key, config, shapes);
    return 0;
}

static int same_values(const st_tensor *a, const st_tensor *b)
{
    return a->n == b->n && memcmp(a->data, b->data, a->n * sizeof(double)) == 0;
}

/* The model's configuration from the tensors (and the config where only it can say). */
static int config_of(tt_config *cfg, const ng_tensors *t, const ng_config *c, reader_err *e)
{
    const st_tensor *emb = t->wte ? t->wte : t->lm_head;
    if (!emb) return reader_fail(e, "neither transformer.wte.weight nor lm_head.weight is in the file");
    if (!t->wpe) return reader_fail(e, "transformer.wpe.weight is missing");
    if (!t->lnf_w) return reader_fail(e, "transformer.ln_f.weight is missing");
    if (t->layers == 0) return reader_fail(e, "no transformer.h.<i> tensors: no Transformer block");
    if (emb->ndim != 2 || emb->shape[0] < 1 || emb->shape[1] < 1) return reader_fail(e, "tensor %.200s must be 2-D", emb->name);
    long V = (long)emb->shape[0], C = (long)emb->shape[1];
    if (t->wpe->ndim != 2 || t->wpe->shape[0] < 1) return reader_fail(e, "tensor %.200s must be 2-D", t->wpe->name);
    long T = (long)t->wpe->shape[0];
    const st_tensor *fc = t->layer[0][N_FCW];
    if (!fc) return reader_fail(e, "transformer.h.0.mlp.c_fc.weight is missing");
    if (fc->ndim != 2 || fc->shape[0] < 1) return reader_fail(e, "tensor %.200s must be 2-D", fc->name);
    long M = (long)fc->shape[0];
    int bias = t->lnf_b != NULL;
    if (c->dropout > 0)
        return reader_fail(e, "dropout %g: the toolkit analyses the model without dropout (eval mode); give a config JSON "
                       "with \"dropout\": 0 to analyse it so", c->dropout);
    if (agree("vocab_size", c->vocab_size, V, e) || agree("n_embd", c->n_embd, C, e) ||
        agree("block_size", c->block_size, T, e) || agree("n_layer", c->n_layer, t->layers, e) ||
        agree("n_inner", c->n_inner, M, e) || agree("bias", c->bias, bias, e))
        return -1;
    if (c->n_head < 0)
        return reader_fail(e, "n_head is not in the file's metadata: give a config JSON with n_head (the shapes cannot tell it)");
    if (c->n_head < 1 || C % c->n_head) return reader_fail(e, "n_head = %ld does not divide n_embd = %ld", c->n_head, C);
    /* tied: one tensor under one name, or the same values under both (nanoGPT saves both) */
    int tied = !t->wte || !t->lm_head || same_values(t->wte, t->lm_head);
    if (c->tied == 0 && (!t->wte || !t->lm_head))
        return reader_fail(e, "the config says untied but the file holds only %s", emb->name);
    if (c->tied == 1 && !tied) return reader_fail(e, "the config says tied but wte and lm_head differ");
    if (c->tied == 0) tied = 0;
    *cfg = (tt_config){.V = (int)V, .C = (int)C, .heads = (int)c->n_head, .M = (int)M, .layers = t->layers,
                       .T = (int)T, .bias = bias, .tied = tied, .gelu = c->gelu == TT_GELU_TANH, .seed = 1};
    if (V > 65536 || C > 4096 || M > 16384 || T > 1024)
        return reader_fail(e, "V %ld, n_embd %ld, n_inner %ld, block_size %ld: beyond the toolkit's model (65536, 4096, 16384, "
                       "1024)", V, C, M, T);
    /* every shape */
    if ((t->wte && want_shape(t->wte, 2, V, C, e)) || (t->lm_head && want_shape(t->lm_head, 2, V, C, e)) ||
        want_shape(t->wpe, 2, T, C, e) || want_shape(t->lnf_w, 1, C, 0, e) || (t->lnf_b && want_shape(t->lnf_b, 1, C, 0, e)))
        return -1;
    long rows[N_SLOTS] = {C, C, 3 * C, 3 * C, C, C, C, C, M, M, C, C, 0};
    long cols[N_SLOTS] = {0, 0, C, 0, C, 0, 0, 0, C, 0, M, 0, 0};
    for (int l = 0; l < t->layers; l++)
        for (int s = 0; s < N_MASK; s++) {
            const st_tensor *x = t->layer[l][s];
            if (!x && (!SLOT_IS_BIAS[s] || bias))
                return reader_fail(e, "transformer.h.%d.%s is missing%s", l, SLOT_NAMES[s],
                            SLOT_IS_BIAS[s] ? " (transformer.ln_f.bias is there: a model with biases)" : "");
            if (x && SLOT_IS_BIAS[s] && !bias)
                return reader_fail(e, "tensor %.200s: a bias in a model without transformer.ln_f.bias (nanoGPT's bias "
                               "flag covers every Linear and LayerNorm)", x->name);
            if (x && want_shape(x, cols[s] ? 2 : 1, rows[s], cols[s], e)) return -1;
        }
    for (int l = 0; l < t->layers; l++) { /* nanoGPT's buffer: tril(ones(block_size, block_size)) */
        const st_tensor *x = t->layer[l][N_MASK];
        if (x && reader_check_mask(x, T, "nanoGPT", "block_size", e)) return -1;
    }
    return 0;
}

/* Every value of every tensor finite: a NaN or Inf weight makes every loss and gradient NaN. */
static int finite_values(const st_file *f, reader_err *e)
{
    for (int i = 0; i < f->ntensors; i++)
        for (size_t k = 0; k < f->t[i].n; k++)
            if (!isfinite(f->t[i].data[k]))
                return reader_fail(e, "tensor %.200s holds a non-finite value (%g at element %zu)", f->t[i].name,
                            f->t[i].data[k], k);
    return 0;
}

/* ---- into the model ---------------------------------------------------------------------------- */

/* n values into the toolkit's tensor `name`, from src (rows of `row_len` from row r0 on). */
static size_t put(model *m, const char *name, const double *src, size_t n)
{
    int t = model_find_tensor(m, name);
    if (t < 0 || tensor_size(&m->tensors[t]) != n) DIE("tensor %s: %zu values", name, n);
    memcpy(m->params + m->tensors[t].offset, src, n * sizeof(double));
    return n;
}

static model *build(const ng_tensors *t, const tt_config *cfg)
{
    model *m = tt_new(cfg);
    size_t C = cfg->C, M = cfg->M, done = 0;
    const st_tensor *emb = t->wte ? t->wte : t->lm_head;
    done += put(m, "wte", emb->data, emb->n);
    done += put(m, "wpe", t->wpe->data, t->wpe->n);
    static const char *const qkv[3] = {"query", "key", "value"};
    for (int l = 0; l < cfg->layers; l++) {
        const st_tensor *const *x = t->layer[l];
        char name[64];
#define PUT(fmt, src, n) (snprintf(name, sizeof name, fmt, l), done += put(m, name, src, n))
        PUT("h%d.ln_1.weight", x[N_LN1W]->data, C);
        for (int i = 0; i < 3; i++) { /* c_attn's rows: query, key, value */
            char nm[48];
            snprintf(nm, sizeof nm, "h%%d.attn.%s", qkv[i]);
            PUT(nm, x[N_ATTNW]->data + i * C * C, C * C);
        }
        PUT("h%d.attn.proj", x[N_PROJW]->data, C * C);
        PUT("h%d.ln_2.weight", x[N_LN2W]->data, C);
        PUT("h%d.mlp.fc_1", x[N_FCW]->data, M * C);
        PUT("h%d.mlp.proj", x[N_MPW]->data, C * M);
        if (cfg->bias) {
            PUT("h%d.ln_1.bias", x[N_LN1B]->data, C);
            for (int i = 0; i < 3; i++) {
                char nm[48];
                snprintf(nm, sizeof nm, "h%%d.attn.%s.bias", qkv[i]);
                PUT(nm, x[N_ATTNB]->data + i * C, C);
            }
            PUT("h%d.attn.proj.bias", x[N_PROJB]->data, C);
            PUT("h%d.ln_2.bias", x[N_LN2B]->data, C);
            PUT("h%d.mlp.fc_1.bias", x[N_FCB]->data, M);
            PUT("h%d.mlp.proj.bias", x[N_MPB]->data, C);
        }
#undef PUT
    }
    done += put(m, "ln_f.weight", t->lnf_w->data, C);
    if (cfg->bias) done += put(m, "ln_f.bias", t->lnf_b->data, C);
    if (!cfg->tied) done += put(m, "lm_head", t->lm_head->data, t->lm_head->n);
    if (done != m->P) DIE("nanoGPT checkpoint filled %zu of %zu parameters", done, m->P);
    return m;
}

/* The tensors of f sorted and checked against the config (json: its text and length,
 * NULL: none), into t and cfg; 0, or -1 with the reason in e. */
static int read_model(const st_file *f, const char *json, size_t json_len, const char *what, ng_tensors *t,
                      tt_config *cfg, reader_err *e)
{
    ng_config cj, cm;
    config_unset(&cj);
    config_unset(&cm);
    if ((json && config_from_json(&cj, json, json_len, e)) || config_from_metadata(&cm, f, e) ||
        sort_tensors(t, f, e) || finite_values(f, e))
        return -1;
    ng_config c = config_merge(&cj, &cm, what);
    return config_of(cfg, t, &c, e);
}

model *tt_from_nanogpt(const st_file *f, const char *config_json, const char *what)
{
    reader_err e = {{0}};
    ng_tensors t;
    tt_config cfg;
    if (read_model(f, config_json, config_json ? strlen(config_json) : 0, what, &t, &cfg, &e))
        die_user("%s: %s", what, e.msg);
    return build(&t, &cfg);
}

model *tt_load_nanogpt(const char *path, const char *config_path)
{
    size_t len = 0;
    char err[1200], *json = NULL;
    if (config_path && !(json = input_read_all(config_path, config_path, 1 << 16, &len, err, sizeof err)))
        die_user("%s", err);
    st_file *f = st_read(path);
    char what[1100];
    if (config_path) snprintf(what, sizeof what, "%s with %s", path, config_path);
    else snprintf(what, sizeof what, "%s", path);
    reader_err e = {{0}};
    ng_tensors t;
    tt_config cfg;
    if (read_model(f, json, len, what, &t, &cfg, &e)) {
        free(json);
        st_free(f);
        die_user("%s: %s", what, e.msg);
    }
    model *m = build(&t, &cfg);
    free(json);
    st_free(f);
    return m;
}

/* ---- sizes and vocabulary against the file ------------------------------------------------------- */

void tt_check_sizes(const tt_config *file, const tt_config *asked, const char *what)
{
    const char *flags[] = {"V", "C", "heads", "M", "T", "layers", "bias"};
    const int have[] = {file->V, file->C, file->heads, file->M, file->T, file->layers, file->bias};
    const int want[] = {asked->V, asked->C, asked->heads, asked->M, asked->T, asked->layers, asked->bias};
    for (int i = 0; i < 7; i++)
        if (want[i] >= 0 && want[i] != have[i])
            die_user("--%s %d but %s has %s = %d (a model file sets its own sizes: leave the flag out)", flags[i],
                     want[i], what, flags[i], have[i]);
}

/* A text's character vocabulary as the metadata holds it: per id the byte it stands
 * for in decimal, or "other" (every byte outside the vocabulary), comma-separated;
 * "" when d is not character text (a Markov chain, token files). */
static void vocab_string(const tt_data *d, char *out, size_t cap)
{
    size_t n = 0;
    out[0] = '\0';
    if (!d || tt_data_transitions(d) || tt_data_symbol(d, 0) == TT_SYMBOL_TOKEN) return;
    for (int i = 0; i < tt_data_vocab(d) && n + 8 < cap; i++) {
        int b = tt_data_symbol(d, i);
        char piece[8];
        if (b == TT_SYMBOL_OTHER) snprintf(piece, sizeof piece, "other");
        else snprintf(piece, sizeof piece, "%d", b);
        n += (size_t)snprintf(out + n, cap - n, "%s%s", i ? "," : "", piece);
    }
}

/* A symbol for a message: 'c' for printable ASCII, else 0xNN, or "other". */
static void symbol_shown(char *out, size_t n, const char *sym)
{
    long b = strcmp(sym, "other") ? atol(sym) : -1;
    if (b < 0) snprintf(out, n, "other");
    else if (b > 32 && b < 127) snprintf(out, n, "'%c'", (int)b);
    else snprintf(out, n, "0x%02lx", (unsigned long)b);
}

void tt_nanogpt_check_data(const char *path, int V, const tt_data *d)
{
    int text = !tt_data_transitions(d) && tt_data_symbol(d, 0) != TT_SYMBOL_TOKEN;
    tt_data_check_vocab_size(path, V, d);
    st_file *f = st_read(path);
    const char *want = st_meta(f, "vocab_bytes");
    char have[256 * 6 + 8];
    vocab_string(d, have, sizeof have);
    if (!want || !strcmp(want, have)) {
        st_free(f);
        return;
    }
    if (!text) {
        st_free(f);
        die_user("%s was trained on character text (its metadata holds the vocabulary): give --data text and its "
                 "text", path);
    }
    /* the first id whose symbol differs */
    char a[16] = "", b[16] = "", wa[24], wb[24];
    int id = 0;
    for (const char *p = want, *q = have; *p || *q; id++) {
        size_t np = strcspn(p, ","), nq = strcspn(q, ",");
        snprintf(a, sizeof a, "%.*s", (int)(np < 15 ? np : 15), p);
        snprintf(b, sizeof b, "%.*s", (int)(nq < 15 ? nq : 15), q);
        if (strcmp(a, b)) break;
        p += np + (p[np] == ','), q += nq + (q[nq] == ',');
    }
    st_free(f);
    symbol_shown(wa, sizeof wa, a);
    symbol_shown(wb, sizeof wb, b);
    die_user("%s was trained on another text: id %d is %s in its vocabulary, %s in this text's", path, id, wa, wb);
}

/* ---- out ------------------------------------------------------------------------------------------ */

void tt_save_nanogpt(const model *m, const tt_data *d, const char *path, int f32)
{
    const tt_config *c = tt_config_of(m);
    size_t C = c->C, M = c->M;
    int L = c->layers, nt = 0;
    st_out *out = xcalloc((size_t)L * 12 + 8, sizeof(st_out));
    double *fused = xmalloc((size_t)L * (3 * C * C + 3 * C) * sizeof(double));
    char (*names)[96] = xcalloc((size_t)L * 12 + 8, 96);
#define TENSOR(nm, src, r, cl)                                                                                \
    do {                                                                                                      \
        snprintf(names[nt], 96, "%s", nm);                                                                    \
        out[nt] = (st_out){names[nt], (cl) ? 2 : 1, {(size_t)(r), (size_t)(cl)}, (src)};                      \
        nt++;                                                                                                 \
    } while (0)
#define P(name) (m->params + m->tensors[model_find_tensor(m, name)].offset)
    TENSOR("transformer.wte.weight", P("wte"), c->V, C);
    TENSOR("transformer.wpe.weight", P("wpe"), c->T, C);
    static const char *const qkv[3] = {"query", "key", "value"};
    for (int l = 0; l < L; l++) {
        char tk[64], nm[96];
        double *w = fused + (size_t)l * (3 * C * C + 3 * C), *b = w + 3 * C * C;
        for (int i = 0; i < 3; i++) { /* c_attn = [query; key; value] */
            snprintf(tk, sizeof tk, "h%d.attn.%s", l, qkv[i]);
            memcpy(w + i * C * C, P(tk), C * C * sizeof(double));
            if (c->bias) {
                snprintf(tk, sizeof tk, "h%d.attn.%s.bias", l, qkv[i]);
                memcpy(b + i * C, P(tk), C * sizeof(double));
            }
        }
#define LAYER(suffix, tkname, r, cl)                                                                          \
    do {                                                                                                      \
        snprintf(nm, sizeof nm, "transformer.h.%d.%s", l, suffix);                                            \
        snprintf(tk, sizeof tk, "h%d.%s", l, tkname);                                                         \
        TENSOR(nm, P(tk), r, cl);                                                                             \
    } while (0)
        LAYER("ln_1.weight", "ln_1.weight", C, 0);
        if (c->bias) LAYER("ln_1.bias", "ln_1.bias", C, 0);
        snprintf(nm, sizeof nm, "transformer.h.%d.attn.c_attn.weight", l);
        TENSOR(nm, w, 3 * C, C);
        if (c->bias) {
            snprintf(nm, sizeof nm, "transformer.h.%d.attn.c_attn.bias", l);
            TENSOR(nm, b, 3 * C, 0);
        }
        LAYER("attn.c_proj.weight", "attn.proj", C, C);
        if (c->bias) LAYER("attn.c_proj.bias", "attn.proj.bias", C, 0);
        LAYER("ln_2.weight", "ln_2.weight", C, 0);
        if (c->bias) LAYER("ln_2.bias", "ln_2.bias", C, 0);
        LAYER("mlp.c_fc.weight", "mlp.fc_1", M, C);
        if (c->bias) LAYER("mlp.c_fc.bias", "mlp.fc_1.bias", M, 0);
        LAYER("mlp.c_proj.weight", "mlp.proj", C, M);
        if (c->bias) LAYER("mlp.c_proj.bias", "mlp.proj.bias", C, 0);
#undef LAYER
    }
    TENSOR("transformer.ln_f.weight", P("ln_f.weight"), C, 0);
    if (c->bias) TENSOR("transformer.ln_f.bias", P("ln_f.bias"), C, 0);
    /* tied: the same values under both names, as nanoGPT's state_dict has them */
    TENSOR("lm_head.weight", c->tied ? P("wte") : P("lm_head"), c->V, C);
#undef P
#undef TENSOR
    char v[8][24];
    snprintf(v[0], 24, "%d", L);
    snprintf(v[1], 24, "%d", c->heads);
    snprintf(v[2], 24, "%d", c->C);
    snprintf(v[3], 24, "%d", c->T);
    snprintf(v[4], 24, "%d", c->V);
    snprintf(v[5], 24, "%d", c->M);
    char vocab[256 * 6 + 8];
    vocab_string(d && tt_data_vocab(d) == c->V ? d : NULL, vocab, sizeof vocab);
    /* the GELU only when it is not nanoGPT's: files of erf models stay as they were */
    const char *keys[] = {"format", "n_layer", "n_head", "n_embd", "block_size", "vocab_size", "n_inner", "bias", "tied",
                          "dropout", "vocab_bytes", "activation_function"};
    const char *vals[] = {"pt", v[0], v[1], v[2], v[3], v[4], v[5], c->bias ? "true" : "false",
                          c->tied ? "true" : "false", "0", vocab, "gelu_new"};
    int nmeta = vocab[0] ? 11 : 10;
    if (c->gelu == TT_GELU_TANH) keys[nmeta] = keys[11], vals[nmeta] = vals[11], nmeta++;
    st_write(path, out, nt, keys, vals, nmeta, f32 ? ST_F32 : ST_F64);
    free(out);
    free(fused);
    free(names);
}
