/* The Llama-style model in Hugging Face's layout (llama.h, "Hugging Face
 * checkpoints"): model.safetensors with LlamaForCausalLM's state-dict names
 * and config.json, in and out.
 *
 * The configuration is read strictly: a key that would change the function
 * the toolkit does not model (rope scaling, attention or MLP biases, a
 * sliding window, another activation, dropout) is refused by name, and so is
 * any key the toolkit does not know — it cannot tell whether that key changes
 * the function. Keys known not to change it (token ids, the dtype, caching,
 * versions, initialisation) are accepted and ignored.
 */
#include "llama.h"
#include "tt.h"
#include "tt_readerr.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The per-layer tensors, in the table's (forward) order; INV_FREQ: older
 * checkpoints' rotary buffer self_attn.rotary_emb.inv_freq (checked, not a parameter). */
enum { H_LN1, H_Q, H_K, H_V, H_O, H_LN2, H_GATE, H_UP, H_DOWN, H_INV_FREQ, H_SLOTS };
static const char *const SLOT_NAMES[H_SLOTS] = {
    "input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
    "self_attn.o_proj.weight", "post_attention_layernorm.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight",
    "mlp.down_proj.weight", "self_attn.rotary_emb.inv_freq"};

#define HF_MAX_LAYERS 64

typedef struct {
    const st_tensor *embed, *norm, *head, *inv_freq;
    const st_tensor *layer[HF_MAX_LAYERS][H_SLOTS];
    int layers;
} hf_tensors;

/* config.json's values: -1 (or NAN) where absent. */
typedef struct {
    long V, C, M, layers, heads, kv_heads, head_dim, max_pos, tied;
    double eps, theta;
} hf_config;

/* ---- config.json ------------------------------------------------------------------------------ */

static int whole(const cJSON *k, long lo, long hi, long *out, reader_err *e)
{
    if (!cJSON_IsNumber(k) || !(k->valuedouble >= lo && k->valuedouble <= hi) ||
        k->valuedouble != floor(k->valuedouble))
        return reader_fail(e, "config %s must be a whole number in %ld..%ld", k->string, lo, hi);
    *out = (long)k->valuedouble;
    return 0;
}

static int positive(const cJSON *k, double *out, reader_err *e)
{
    if (!cJSON_IsNumber(k) || !(k->valuedouble > 0 && isfinite(k->valuedouble)))
        return reader_fail(e, "config %s must be a finite number > 0", k->string);
    *out = k->valuedouble;
    return 0;
}

/* A key whose only modelled value is `want` (a JSON literal: null, false, 0, "silu"). */
static int only(const cJSON *k, const char *want, const char *why, reader_err *e)
{
    char *got = cJSON_PrintUnformatted(k);
    int ok = got && (strcmp(got, want) == 0 || (!strcmp(want, "0") && cJSON_IsNumber(k) && k->valuedouble == 0));
    if (!ok) reader_fail(e, "config %s = %.60s: %s (the toolkit models only %s)", k->string, got ? got : "?", why, want);
    free(got);
    return ok ? 0 : -1;
}

/* rope_parameters (newer transformers): {"rope_type": "default", "rope_theta": θ} only. */
static int rope_parameters(hf_config *c, const cJSON *k, reader_err *e)
{
    if (cJSON_IsNull(k)) return 0;
    if (!cJSON_IsObject(k)) return reader_fail(e, "config rope_parameters must be an object");
    const cJSON *x;
    cJSON_ArrayForEach(x, k)
    {
        if (!strcmp(x->string, "rope_type") || !strcmp(x->string, "type")) {
            if (!cJSON_IsString(x) || strcmp(x->valuestring, "default"))
                return reader_fail(e, "config rope_parameters.%s is not \"default\": rope scaling is not modelled", x->string);
        } else if (!strcmp(x->string, "rope_theta")) {
            if (positive(x, &c->theta, e)) return -1;
        } else
            return reader_fail(e, "config rope_parameters.%.60s: not modelled (only rope_type \"default\" and rope_theta)",
                        x->string);
    }
    return 0;
}

/* Keys that do not change the function: accepted, not read. */
static const char *const IGNORED[] = {"bos_token_id", "eos_token_id", "pad_token_id", "initializer_range",
                                      "pretraining_tp", "torch_dtype", "dtype", "transformers_version",
                                      "use_cache", "_name_or_path"};

static int config_key(hf_config *c, const cJSON *k, reader_err *e)
{
    const char *s = k->string;
    static const char *const ints[] = {"vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
                                       "num_attention_heads", "num_key_value_heads", "head_dim",
                                       "max_position_embeddings"};
    long *slots[] = {&c->V, &c->C, &c->M, &c->layers, &c->heads, &c->kv_heads, &c->head_dim, &c->max_pos};
    for (int i = 0; i < 8; i++)
        if (!strcmp(s, ints[i])) /* num_key_value_heads, head_dim: null is the default */
            return (i == 5 || i == 6) && cJSON_IsNull(k) ? 0 : whole(k, 1, 1000000000, slots[i], e);
    if (!strcmp(s, "rms_norm_eps")) return positive(k, &c->eps, e);
    if (!strcmp(s, "rope_theta")) return positive(k, &c->theta, e);
    if (!strcmp(s, "rope_parameters")) return rope_parameters(c, k, e);
    if (!strcmp(s, "tie_word_embeddings")) {
        if (!cJSON_IsBool(k)) return reader_fail(e, "config tie_word_embeddings must be true or false");
        c->tied = cJSON_IsTrue(k);
        return 0;
    }
    if (!strcmp(s, "rope_scaling")) return only(k, "null", "rope scaling changes the rotary angles", e);
    if (!strcmp(s, "attention_bias")) return only(k, "false", "biases on q, k, v, o", e);
    if (!strcmp(s, "mlp_bias")) return only(k, "false", "biases on gate, up, down", e);
    if (!strcmp(s, "sliding_window")) return only(k, "null", "a sliding attention window", e);
    if (!strcmp(s, "hidden_act")) return only(k, "\"silu\"", "another MLP activation", e);
    if (!strcmp(s, "model_type")) return only(k, "\"llama\"", "another architecture", e);
    if (!strcmp(s, "attention_dropout"))
        return only(k, "0", "the toolkit analyses the model without dropout (eval mode); set it to 0 to analyse it so",
                    e);
    if (!strcmp(s, "architectures")) {
        const cJSON *a;
        if (!cJSON_IsArray(k)) return reader_fail(e, "config architectures must be a list");
        cJSON_ArrayForEach(a, k) if (!cJSON_IsString(a) || strcmp(a->valuestring, "LlamaForCausalLM"))
            return reader_fail(e, "config architectures names %.60s: the toolkit reads LlamaForCausalLM",
                        cJSON_IsString(a) ? a->valuestring : "a non-string");
        return 0;
    }
    for (size_t i = 0; i < sizeof IGNORED / sizeof *IGNORED; i++)
        if (!strcmp(s, IGNORED[i])) return 0;
    return reader_fail(e, "config key '%.100s' is not one the toolkit knows for a Llama model: refused rather than guess "
                   "whether it changes the function", s);
}

static int config_from_json(hf_config *c, const char *text, reader_err *e)
{
    *c = (hf_config){-1, -1, -1, -1, -1, -1, -1, -1, -1, NAN, NAN};
    cJSON *root = cJSON_Parse(text);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return reader_fail(e, "the config is not a JSON object");
    }
    const cJSON *k;
    int rc = 0;
    cJSON_ArrayForEach(k, root) if ((rc = config_key(c, k, e))) break;
    cJSON_Delete(root);
    return rc;
}

/* ---- tensors -------------------------------------------------------------------------------------- */

/* "model.layers.<i>.<rest>" (i without leading zeros): i and rest; -1 otherwise. */
static int layer_name(const char *name, int *l, const char **rest)
{
    return reader_layer_name(name, "model.layers.", l, rest);
}

static int sort_tensors(hf_tensors *t, const st_file *f, reader_err *e)
{
    memset(t, 0, sizeof *t);
    for (int i = 0; i < f->ntensors; i++) {
        const st_tensor *x = &f->t[i];
        const char *name = x->name, *rest;
        const st_tensor **slot = NULL;
        int l;
        if (!strcmp(name, "model.embed_tokens.weight")) slot = &t->embed;
        else if (!strcmp(name, "model.norm.weight")) slot = &t->norm;
        else if (!strcmp(name, "lm_head.weight")) slot = &t->head;
        else if (!strcmp(name, "model.rotary_emb.inv_freq")) slot = &t->inv_freq;
        else if (layer_name(name, &l, &rest) == 0) {
            if (l >= HF_MAX_LAYERS)
                return reader_fail(e, "tensor %.200s: layer %d (the toolkit's model has at most %d)", name, l, HF_MAX_LAYERS);
            for (int s = 0; s < H_SLOTS; s++)
                if (!strcmp(rest, SLOT_NAMES[s])) slot = &t->layer[l][s];
            if (!slot && strlen(rest) > 5 && !strcmp(rest + strlen(rest) - 5, ".bias"))
                return reader_fail(e, "tensor %.200s: a bias (attention_bias or mlp_bias): the toolkit's Llama has none",
                            name);
            if (slot && l + 1 > t->layers) t->layers = l + 1;
        }
        if (!slot) return reader_fail(e, "unknown tensor name %.200s: not Hugging Face's LlamaForCausalLM layout", name);
        if (*slot) return reader_fail(e, "tensor %.200s appears twice", name);
        *slot = x;
    }
    return 0;
}

static int want_shape(const st_tensor *x, int ndim, long a, long b, reader_err *e)
{
    if (x->ndim == ndim && (long)x->shape[0] == a && (ndim == 1 || (long)x->shape[1] == b)) return 0;
    if (ndim == 1) return reader_fail(e, "tensor %.200s: shape must be [%ld]", x->name, a);
    return reader_fail(e, "tensor %.200s: shape must be [%ld, %ld]", x->name, a, b);
}

static int agree(const char *key, long config, long shapes, reader_err *e)
{
    if (config >= 0 && config != shapes)
        return reader_fail(e, "config %s = %ld but the tensors give %ld", key, config, shapes);
    return 0;
}

/* An inv_freq buffer must hold θ^(−2i/hd) (to float32 rounding): else the checkpoint's rotary is another. */
static int check_inv_freq(const st_tensor *x, int hd, double theta, reader_err *e)
{
    if (x->ndim != 1 || (long)x->shape[0] != hd / 2)
        return reader_fail(e, "tensor %.200s: shape must be [%d]", x->name, hd / 2);
    for (int i = 0; i < hd / 2; i++) {
        double want = pow(theta, -(2.0 * i) / hd);
        if (!(fabs(x->data[i] - want) <= 1e-6 * want))
            return reader_fail(e, "tensor %.200s: entry %d is %.9g, not rope_theta^(-2i/head_dim) = %.9g (another rotary)",
                        x->name, i, x->data[i], want);
    }
    return 0;
}

static int same_values(const st_tensor *a, const st_tensor *b)
{
    return a->n == b->n && memcmp(a->data, b->data, a->n * sizeof(double)) == 0;
}

/* The model's configuration from the tensors and config.json; T: the context length (0: max_position_embeddings). */
static int config_of(llama_config *cfg, const hf_tensors *t, const hf_config *c, int T, reader_err *e)
{
    if (!t->embed) return reader_fail(e, "model.embed_tokens.weight is missing");
    if (!t->norm) return reader_fail(e, "model.norm.weight is missing");
    if (!t->layers) return reader_fail(e, "no model.layers.<i> tensors: no decoder layer");
    if (t->embed->ndim != 2) return reader_fail(e, "tensor model.embed_tokens.weight must be 2-D");
    long V = (long)t->embed->shape[0], C = (long)t->embed->shape[1];
    const st_tensor *gate = t->layer[0][H_GATE];
    if (!gate || gate->ndim != 2) return reader_fail(e, "model.layers.0.mlp.gate_proj.weight is missing or not 2-D");
    long M = (long)gate->shape[0];
    if (c->heads < 0) return reader_fail(e, "num_attention_heads is not in the config (the shapes cannot tell it)");
    long H = c->heads, Hkv = c->kv_heads >= 0 ? c->kv_heads : H;
    if (agree("vocab_size", c->V, V, e) || agree("hidden_size", c->C, C, e) || agree("intermediate_size", c->M, M, e) ||
        agree("num_hidden_layers", c->layers, t->layers, e))
        return -1;
    if (H % Hkv) return reader_fail(e, "num_key_value_heads = %ld does not divide num_attention_heads = %ld", Hkv, H);
    if (c->head_dim < 0 && C % H) return reader_fail(e, "num_attention_heads = %ld does not divide hidden_size = %ld", H, C);
    long hd = c->head_dim >= 0 ? c->head_dim : C / H, maxpos = c->max_pos >= 0 ? c->max_pos : 2048;
    if (V < 2 || V > 65536 || C < 1 || C > 8192 || M < 1 || M > 65536 || H > 1024 || hd < 2 || hd > 1024 || hd % 2)
        return reader_fail(e, "vocab %ld, hidden %ld, intermediate %ld, %ld heads of %ld: beyond the toolkit's model "
                       "(2..65536, 1..8192, 1..65536, up to 1024 heads of an even size 2..1024)", V, C, M, H, hd);
    if (T <= 0) T = maxpos > 4096 ? 4096 : (int)maxpos;
    if (T > maxpos) return reader_fail(e, "context length %d beyond max_position_embeddings = %ld", T, maxpos);
    int tied = c->tied == 1;
    if (!t->head && !tied)
        return reader_fail(e, "lm_head.weight is missing and tie_word_embeddings is not true (a LlamaForCausalLM has one)");
    if (t->head && tied && !same_values(t->head, t->embed))
        return reader_fail(e, "tie_word_embeddings is true but lm_head.weight differs from model.embed_tokens.weight");
    *cfg = (llama_config){.V = (int)V, .C = (int)C, .layers = t->layers, .heads = (int)H, .kv_heads = (int)Hkv,
                          .head_dim = (int)hd, .M = (int)M, .T = T, .eps = isnan(c->eps) ? 1e-6 : c->eps,
                          .theta = isnan(c->theta) ? 10000 : c->theta, .tied = tied, .seed = 1};
    if (want_shape(t->embed, 2, V, C, e) || (t->head && want_shape(t->head, 2, V, C, e)) ||
        want_shape(t->norm, 1, C, 0, e))
        return -1;
    long rows[H_INV_FREQ] = {C, H * hd, Hkv * hd, Hkv * hd, C, C, M, M, C};
    long cols[H_INV_FREQ] = {0, C, C, C, H * hd, 0, C, C, M};
    for (int l = 0; l < t->layers; l++) {
        for (int s = 0; s < H_INV_FREQ; s++) {
            const st_tensor *x = t->layer[l][s];
            if (!x) return reader_fail(e, "model.layers.%d.%s is missing", l, SLOT_NAMES[s]);
            if (want_shape(x, cols[s] ? 2 : 1, rows[s], cols[s], e)) return -1;
        }
        if (t->layer[l][H_INV_FREQ] && check_inv_freq(t->layer[l][H_INV_FREQ], (int)hd, cfg->theta, e)) return -1;
    }
    if (t->inv_freq && check_inv_freq(t->inv_freq, (int)hd, cfg->theta, e)) return -1;
    return 0;
}

/* ---- into the model ----------------------------------------------------------------------------- */

static size_t put(model *m, const char *name, const st_tensor *x)
{
    int i = model_find_tensor(m, name);
    if (i < 0 || tensor_size(&m->tensors[i]) != x->n) DIE("Hugging Face checkpoint: tensor %s", name);
    memcpy(m->params + m->tensors[i].offset, x->data, x->n * sizeof(double));
    return x->n;
}

static model *build(const hf_tensors *t, const llama_config *cfg)
{
    model *m = llama_new(cfg);
    size_t done = put(m, "model.embed_tokens.weight", t->embed) + put(m, "model.norm.weight", t->norm);
    for (int l = 0; l < cfg->layers; l++)
        for (int s = 0; s < H_INV_FREQ; s++) {
            char name[96];
            snprintf(name, sizeof name, "model.layers.%d.%s", l, SLOT_NAMES[s]);
            done += put(m, name, t->layer[l][s]);
        }
    if (!cfg->tied) done += put(m, "lm_head.weight", t->head);
    if (done != m->P) DIE("Hugging Face checkpoint filled %zu of %zu parameters", done, m->P);
    return m;
}

/* Parses; on error frees nothing it does not own and fills e. */
static model *from_hf(const st_file *f, const char *config_json, int T, reader_err *e)
{
    hf_config c;
    hf_tensors t;
    llama_config cfg;
    if (config_from_json(&c, config_json, e) || sort_tensors(&t, f, e) || config_of(&cfg, &t, &c, T, e)) return NULL;
    return build(&t, &cfg);
}

model *llama_from_hf(const st_file *f, const char *config_json, int T, const char *what)
{
    reader_err e = {{0}};
    model *m = from_hf(f, config_json, T, &e);
    if (!m) die_user("%s: %s", what, e.msg);
    return m;
}

/* A small text file (a config JSON) in a fresh string. */
static char *read_config(const char *path)
{
    if (path_is_folder(path)) die_user("%s is a folder, expected a config JSON", path);
    FILE *fp = fopen(path, "rb");
    if (!fp) die_user("cannot read %s: %s", path, strerror(errno));
    size_t cap = 1 << 16;
    char *buf = xmalloc(cap + 1);
    size_t len = fread(buf, 1, cap, fp);
    int big = len == cap && fgetc(fp) != EOF, bad = ferror(fp);
    fclose(fp);
    if (big || bad) {
        free(buf);
        die_user("%s: %s", path, big ? "larger than 64 KB: not a config JSON" : "read error");
    }
    buf[len] = 0;
    return buf;
}

int llama_hf_looks(const char *path)
{
    if (path_is_folder(path)) { /* a Hugging Face folder, unless GPT-2's (the tiny GPT reads those) */
        char *cfg = path_join(path, "config.json");
        FILE *fp = fopen(cfg, "rb");
        free(cfg);
        if (fp) fclose(fp);
        return fp != NULL && !tt_gpt2_looks(path);
    }
    FILE *fp = fopen(path, "rb");
    if (!fp) return 0;
    unsigned char len[8];
    int found = 0;
    if (fread(len, 1, 8, fp) == 8) {
        size_t n = 0;
        for (int i = 7; i >= 0; i--) n = n << 8 | len[i];
        if (n > 1 << 20) n = 1 << 20; /* the header's first MB is enough to name it */
        if (n > 0) {
            char *h = xmalloc(n + 1);
            size_t got = fread(h, 1, n, fp);
            h[got] = 0;
            found = strstr(h, "\"model.embed_tokens.weight\"") != NULL;
            free(h);
        }
    }
    fclose(fp);
    return found;
}

model *llama_load_hf(const char *path, const char *config_path, int T)
{
    char *file = NULL, *cfgfile = NULL;
    if (path_is_folder(path)) {
        file = path_join(path, "model.safetensors");
        cfgfile = config_path ? xstrdup(config_path) : path_join(path, "config.json");
    } else {
        if (!config_path)
            die_user("%s: a Llama checkpoint needs its config.json (--model-config, or --model the folder holding "
                     "model.safetensors and config.json)", path);
        file = xstrdup(path);
        cfgfile = xstrdup(config_path);
    }
    char *json = read_config(cfgfile);
    st_file *f = st_read(file);
    char what[2200];
    snprintf(what, sizeof what, "%s with %s", file, cfgfile);
    free(file), free(cfgfile);
    reader_err e = {{0}};
    model *m = from_hf(f, json, T, &e);
    free(json);
    st_free(f);
    if (!m) die_user("%s: %s", what, e.msg);
    return m;
}

/* ---- out ------------------------------------------------------------------------------------------- */

void llama_save_hf_tensors(const model *m, const double *x, const char *path, int f32)
{
    st_out *out = xcalloc((size_t)m->ntensors, sizeof(st_out));
    for (int i = 0; i < m->ntensors; i++) {
        const tensor_info *ti = &m->tensors[i];
        out[i] = (st_out){ti->name, ti->cols > 1 ? 2 : 1, {(size_t)ti->rows, (size_t)ti->cols}, x + ti->offset};
    }
    const char *keys[] = {"format"}, *vals[] = {"pt"};
    st_write(path, out, m->ntensors, keys, vals, 1, f32 ? ST_F32 : ST_F64);
    free(out);
}

static void write_config(const llama_config *c, const char *path, int f32)
{
    cJSON *o = cJSON_CreateObject(), *arch = cJSON_AddArrayToObject(o, "architectures");
    cJSON_AddItemToArray(arch, cJSON_CreateString("LlamaForCausalLM"));
    cJSON_AddStringToObject(o, "model_type", "llama");
    cJSON_AddNumberToObject(o, "vocab_size", c->V);
    cJSON_AddNumberToObject(o, "hidden_size", c->C);
    cJSON_AddNumberToObject(o, "intermediate_size", c->M);
    cJSON_AddNumberToObject(o, "num_hidden_layers", c->layers);
    cJSON_AddNumberToObject(o, "num_attention_heads", c->heads);
    cJSON_AddNumberToObject(o, "num_key_value_heads", c->kv_heads);
    cJSON_AddNumberToObject(o, "head_dim", llama_head_dim(c));
    cJSON_AddNumberToObject(o, "max_position_embeddings", c->T);
    cJSON_AddNumberToObject(o, "rms_norm_eps", c->eps);
    cJSON_AddNumberToObject(o, "rope_theta", c->theta);
    cJSON_AddNullToObject(o, "rope_scaling");
    cJSON_AddBoolToObject(o, "tie_word_embeddings", c->tied);
    cJSON_AddStringToObject(o, "hidden_act", "silu");
    cJSON_AddBoolToObject(o, "attention_bias", 0);
    cJSON_AddBoolToObject(o, "mlp_bias", 0);
    cJSON_AddNumberToObject(o, "attention_dropout", 0);
    cJSON_AddStringToObject(o, "torch_dtype", f32 ? "float32" : "float64");
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    if (!text) DIE("cannot format config.json");
    outfile *f = outfile_open(path);
    fprintf(outfile_fp(f), "%s\n", text);
    outfile_commit(f);
    free(text);
}

void llama_save_hf(const model *m, const char *dir, int f32)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) die_user("cannot create the folder %s: %s", dir, strerror(errno));
    if (!path_is_folder(dir)) die_user("%s exists and is not a folder (--save-hf writes a folder)", dir);
    char *st = path_join(dir, "model.safetensors"), *cj = path_join(dir, "config.json");
    llama_save_hf_tensors(m, m->params, st, f32);
    write_config(llama_config_of(m), cj, f32);
    free(st), free(cj);
}
