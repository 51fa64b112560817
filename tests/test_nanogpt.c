/* Tests of core/safetensors.c and tinytransformer/tt_nanogpt.c: the format's
 * bytes (a file built by hand here, byte by byte), every dtype read, the
 * nanoGPT names split into the toolkit's tensors, round trips (write, read,
 * write: the same bytes; F32 rounding), tied and untied, with and without
 * biases, and the user errors (one line naming the problem). The check
 * against PyTorch itself is tests/torch_nanogpt.py (make test-torch). */
#include "check.h"
#include "tinytransformer/tt.h"
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static char tmpdir[256];

/* ---- a safetensors file by hand ---------------------------------------------------------- */

static size_t put_le64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> 8 * i);
    return 8;
}

/* header JSON + data into buf; returns the length. */
static size_t hand_file(unsigned char *buf, const char *json, const unsigned char *data, size_t dlen)
{
    size_t h = strlen(json), n = put_le64(buf, h);
    memcpy(buf + n, json, h);
    memcpy(buf + n + h, data, dlen);
    return n + h + dlen;
}

static void test_dtypes(void)
{
    /* F64 1.5 -2; F32 0.25; F16 1, -2, 65504, 2^-24 (subnormal); BF16 3.0 = 0x4040, -inf */
    unsigned char data[16 + 4 + 8 + 4], *p = data;
    double d[2] = {1.5, -2};
    memcpy(p, d, 16), p += 16;
    float f = 0.25f;
    memcpy(p, &f, 4), p += 4;
    const unsigned char h16[8] = {0x00, 0x3c, 0x00, 0xc0, 0xff, 0x7b, 0x01, 0x00};
    memcpy(p, h16, 8), p += 8;
    const unsigned char b16[4] = {0x40, 0x40, 0x80, 0xff};
    memcpy(p, b16, 4);
    const char *json = "{\"a\":{\"dtype\":\"F64\",\"shape\":[2],\"data_offsets\":[0,16]},"
                       "\"__metadata__\":{\"format\":\"pt\"},"
                       "\"b\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[16,20]},"
                       "\"c\":{\"dtype\":\"F16\",\"shape\":[2,2],\"data_offsets\":[20,28]},"
                       "\"z\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[28,32]}}";
    unsigned char buf[1024];
    size_t len = hand_file(buf, json, data, sizeof data);
    st_file *s = st_parse(buf, len, "hand");
    const st_tensor *a = st_find(s, "a"), *b = st_find(s, "b"), *c = st_find(s, "c"), *z = st_find(s, "z");
    CHECK(s->ntensors == 4 && a && b && c && z, "four tensors (%d)", s->ntensors);
    CHECK(a->data[0] == 1.5 && a->data[1] == -2 && a->dtype == ST_F64, "F64 values");
    CHECK(b->ndim == 0 && b->n == 1 && b->data[0] == 0.25, "F32 scalar: ndim %d n %zu", b->ndim, b->n);
    CHECK(c->ndim == 2 && c->data[0] == 1 && c->data[1] == -2 && c->data[2] == 65504 && c->data[3] == ldexp(1, -24),
          "F16 values %g %g %g %g", c->data[0], c->data[1], c->data[2], c->data[3]);
    CHECK(z->data[0] == 3 && isinf(z->data[1]) && z->data[1] < 0, "BF16 values %g %g", z->data[0], z->data[1]);
    CHECK(st_meta(s, "format") && strcmp(st_meta(s, "format"), "pt") == 0 && !st_meta(s, "x"), "metadata");
    st_free(s);

    /* malformed files: each one line naming the problem */
    struct {
        const char *json;
        size_t dlen;
        const char *msg;
    } bad[] = {
        {"{\"a\":{\"dtype\":\"I64\",\"shape\":[2],\"data_offsets\":[0,16]}}", 16, "dtype I64"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[3],\"data_offsets\":[0,16]}}", 16, "need 24 bytes"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]},\"b\":{\"dtype\":\"F64\",\"shape\":[1],"
         "\"data_offsets\":[4,12]}}", 12, "overlap"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[8,16]}}", 16, "a hole"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 16, "cover 8 data bytes but the file holds 16"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]},\"a\":{\"dtype\":\"F64\",\"shape\":[1],"
         "\"data_offsets\":[8,16]}}", 16, "appears twice"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[-1],\"data_offsets\":[0,8]}}", 8, "shape entry 0"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8],\"x\":1}}", 8, "unknown field 'x'"},
        {"{\"a\":[1,2]}", 0, "is not an object"},
        {"{\"__metadata__\":{\"k\":1}}", 0, "not a string"},
        {"{\"a\":{\"dtype\":\"F64\"", 0, "not a JSON object"},
    };
    unsigned char zeros[16] = {0};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        len = hand_file(buf, bad[i].json, zeros, bad[i].dlen);
        EXPECT_USER_ERROR(st_parse(buf, len, "bad"), bad[i].msg);
    }
    /* strict headers (issue 27 item 12): bytes after the JSON (a NUL too), \u0000 in a name
     * (cJSON would cut the name there), a field twice in an entry, a metadata key twice */
    struct {
        const char *json;
        size_t nul, dlen; /* nul: the string's own terminator is part of the header */
        const char *msg;
    } strict[] = {
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}x", 0, 8, "bytes after its JSON"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 1, 8, "NUL character"},
        {"{\"lm_head.weight\\u0000junk\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 0, 8, "NUL character"},
        {"{\"a\":{\"dtype\":\"F64\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,8]}}", 0, 8,
         "gives its field 'dtype' twice"},
        {"{\"__metadata__\":{\"n_head\":\"2\",\"n_head\":\"4\"}}", 0, 0, "gives the key 'n_head' twice"},
        {"{\"a\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}  \n ", 0, 8, NULL},
        {"{\"a\\\\u0000\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[0,8]}}", 0, 8, NULL}, /* a\u0000: an escaped backslash */
    };
    for (volatile size_t i = 0; i < sizeof strict / sizeof *strict; i++) {
        volatile size_t h = strlen(strict[i].json) + strict[i].nul;
        put_le64(buf, h);
        memcpy(buf + 8, strict[i].json, h);
        memcpy(buf + 8 + h, zeros, strict[i].dlen);
        if (strict[i].msg) {
            EXPECT_USER_ERROR(st_parse(buf, 8 + h + strict[i].dlen, "bad"), strict[i].msg);
        } else {
            st_file *ok = st_parse(buf, 8 + h + strict[i].dlen, "good");
            CHECK(ok->ntensors == 1 && (i != 6 || strcmp(ok->t[0].name, "a\\u0000") == 0), "strict case %zu read", i);
            st_free(ok);
        }
    }
    put_le64(buf, 1000);
    EXPECT_USER_ERROR(st_parse(buf, 20, "bad"), "larger than the file");
    EXPECT_USER_ERROR(st_parse(buf, 5, "bad"), "too short");
    memcpy(buf + 8, "[]", 2);
    put_le64(buf, 2);
    EXPECT_USER_ERROR(st_parse(buf, 10, "bad"), "does not start with '{'");
}

/* ---- nanoGPT's layout ------------------------------------------------------------------- */

static model *random_model(int layers, int bias, int tied, unsigned long seed)
{
    tt_config c = {.V = 6, .C = 8, .heads = 2, .M = 12, .layers = layers, .T = 5, .bias = bias, .tied = tied,
                   .seed = seed};
    model *m = tt_new(&c);
    gsl_rng *r = rng_new(seed);
    for (size_t i = 0; i < m->P; i++) m->params[i] = rng_gaussian(r, 0.5);
    rng_free(r);
    return m;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    fseek(fp, 0, SEEK_END);
    *len = (size_t)ftell(fp);
    rewind(fp);
    unsigned char *b = xmalloc(*len + 1);
    *len = fread(b, 1, *len, fp);
    fclose(fp);
    return b;
}

static void test_round_trips(void)
{
    char *a = path_join(tmpdir, "a.safetensors"), *b = path_join(tmpdir, "b.safetensors");
    for (int layers = 1; layers <= 2; layers++)
        for (int bias = 0; bias <= 1; bias++)
            for (int tied = 0; tied <= 1; tied++) {
                model *m = random_model(layers, bias, tied, 10 * layers + 2 * bias + tied);
                tt_save_nanogpt(m, NULL, a, 0);
                model *r = tt_load_nanogpt(a, NULL);
                const tt_config *c = tt_config_of(r), *c0 = tt_config_of(m);
                CHECK(r->P == m->P && c->V == c0->V && c->C == c0->C && c->heads == c0->heads && c->M == c0->M &&
                          c->layers == c0->layers && c->T == c0->T && c->bias == bias && c->tied == tied,
                      "layers %d bias %d tied %d: config back", layers, bias, tied);
                CHECK(r->P == m->P && memcmp(r->params, m->params, m->P * sizeof(double)) == 0,
                      "layers %d bias %d tied %d: parameters back bit for bit", layers, bias, tied);
                tt_save_nanogpt(r, NULL, b, 0);
                size_t la, lb;
                unsigned char *x = slurp(a, &la), *y = slurp(b, &lb);
                CHECK(la == lb && memcmp(x, y, la) == 0, "layers %d bias %d tied %d: write, read, write: same bytes",
                      layers, bias, tied);
                CHECK((lb - 8 - (size_t)x[0] - ((size_t)x[1] << 8)) ==
                          8 * (m->P + (size_t)tied * c0->V * c0->C) && (x[0] | x[1] << 8) % 8 == 0,
                      "F64 data: P values (tied: wte twice), header padded to 8");
                free(x), free(y);
                /* F32: rounded once, then stable */
                tt_save_nanogpt(m, NULL, a, 1);
                model *r32 = tt_load_nanogpt(a, NULL);
                double worst = 0;
                for (size_t i = 0; i < m->P; i++) worst = fmax(worst, fabs(r32->params[i] - m->params[i]) / fabs(m->params[i]));
                CHECK(worst <= 0x1p-24, "F32: relative rounding %.3g <= 2^-24", worst);
                tt_save_nanogpt(r32, NULL, b, 1);
                x = slurp(a, &la), y = slurp(b, &lb);
                CHECK(la == lb && memcmp(x, y, la) == 0, "F32: write, read, write: same bytes");
                free(x), free(y);
                model_free(r32);
                model_free(r);
                model_free(m);
            }
    free(a), free(b);
}

/* A nanoGPT file built here without the writer: the fused c_attn's rows go to
 * query, key, value in that order, and the loaded model's loss is the same as
 * the model those tensors were cut from. */
static void test_fused_split(void)
{
    model *m = random_model(1, 1, 0, 77);
    const tt_config *c = tt_config_of(m);
    size_t C = c->C;
    char *path = path_join(tmpdir, "hand.safetensors");
    /* the same model written by hand: names in another order, metadata only n_head */
    st_out t[20];
    int n = 0;
    double fused_w[3 * 8 * 8], fused_b[3 * 8];
    const char *qkv[3] = {"h0.attn.query", "h0.attn.key", "h0.attn.value"};
    for (int i = 0; i < 3; i++) {
        char bn[64];
        snprintf(bn, sizeof bn, "%s.bias", qkv[i]);
        memcpy(fused_w + i * C * C, m->params + m->tensors[model_find_tensor(m, qkv[i])].offset, C * C * sizeof(double));
        memcpy(fused_b + i * C, m->params + m->tensors[model_find_tensor(m, bn)].offset, C * sizeof(double));
    }
#define T2(nm, tk, r, cl) t[n++] = (st_out){nm, (cl) ? 2 : 1, {r, cl}, m->params + m->tensors[model_find_tensor(m, tk)].offset}
    t[n++] = (st_out){"_orig_mod.transformer.h.0.attn.c_attn.weight", 2, {3 * C, C}, fused_w};
    t[n++] = (st_out){"transformer.h.0.attn.c_attn.bias", 1, {3 * C}, fused_b};
    T2("lm_head.weight", "lm_head", 6, C);
    T2("transformer.wpe.weight", "wpe", 5, C);
    T2("transformer.wte.weight", "wte", 6, C);
    T2("transformer.h.0.ln_1.weight", "h0.ln_1.weight", C, 0);
    T2("transformer.h.0.ln_1.bias", "h0.ln_1.bias", C, 0);
    T2("transformer.h.0.attn.c_proj.weight", "h0.attn.proj", C, C);
    T2("transformer.h.0.attn.c_proj.bias", "h0.attn.proj.bias", C, 0);
    T2("transformer.h.0.ln_2.weight", "h0.ln_2.weight", C, 0);
    T2("transformer.h.0.ln_2.bias", "h0.ln_2.bias", C, 0);
    T2("transformer.h.0.mlp.c_fc.weight", "h0.mlp.fc_1", 12, C);
    T2("transformer.h.0.mlp.c_fc.bias", "h0.mlp.fc_1.bias", 12, 0);
    T2("transformer.h.0.mlp.c_proj.weight", "h0.mlp.proj", C, 12);
    T2("transformer.h.0.mlp.c_proj.bias", "h0.mlp.proj.bias", C, 0);
    T2("transformer.ln_f.weight", "ln_f.weight", C, 0);
    T2("transformer.ln_f.bias", "ln_f.bias", C, 0);
#undef T2
    double mask[25];
    for (int i = 0; i < 25; i++) mask[i] = i / 5 >= i % 5;
    t[n++] = (st_out){"transformer.h.0.attn.bias", 4, {1, 1, 5, 5}, mask};
    const char *k[] = {"n_head"}, *v[] = {"2"};
    st_write(path, t, n, k, v, 1, ST_F64);
    model *r = tt_load_nanogpt(path, NULL);
    CHECK(r->P == m->P && memcmp(r->params, m->params, m->P * sizeof(double)) == 0 && !tt_config_of(r)->tied,
          "hand-written nanoGPT file: query, key, value from c_attn's rows, untied");
    int tok[2 * 6] = {0, 1, 2, 3, 4, 5, 5, 4, 3, 2, 1, 0};
    tt_set_batch(m, tok, 2);
    tt_set_batch(r, tok, 2);
    CHECK(m->loss(m) == r->loss(r), "the same loss");

    /* a config JSON instead of metadata, and its errors */
    char *cfgp = path_join(tmpdir, "config.json");
    const char *cfgs[][2] = {
        {"{\"n_layer\": 1, \"n_head\": 4, \"n_embd\": 8, \"block_size\": 5, \"vocab_size\": 6, \"bias\": true, "
         "\"dropout\": 0.0}", NULL},
        {"{\"n_head\": 2, \"dropout\": 0.1}", "dropout 0.1"},
        {"{\"n_head\": 2, \"n_embd\": 16}", "n_embd = 16 but the tensors give 8"},
        {"{\"n_head\": 3}", "does not divide"},
        {"{\"n_head\": 2, \"use_rmsnorm\": true}", "config key 'use_rmsnorm'"},
        {"{\"n_head\": 2, \"bias\": false}", "config bias = 0 but the tensors give 1"},
        {"{\"n_head\": 2, \"tied\": true}", "the config says tied but wte and lm_head differ"},
        {"[2]", "not a JSON object"},
    };
    for (size_t i = 0; i < sizeof cfgs / sizeof *cfgs; i++) {
        FILE *fp = fopen(cfgp, "w");
        fputs(cfgs[i][0], fp);
        fclose(fp);
        if (!cfgs[i][1]) {
            model *q = tt_load_nanogpt(path, cfgp);
            CHECK(tt_config_of(q)->heads == 4, "config JSON n_head 4 wins over metadata 2");
            model_free(q);
        } else {
            EXPECT_USER_ERROR(tt_load_nanogpt(path, cfgp), cfgs[i][1]);
        }
    }
    /* the tensors' errors */
    st_out keep = t[0];
    t[0].name = "transformer.h.0.attn.q_proj.weight";
    st_write(path, t, n, k, v, 1, ST_F64);
    EXPECT_USER_ERROR(tt_load_nanogpt(path, NULL), "unknown tensor name transformer.h.0.attn.q_proj.weight");
    t[0] = keep;
    t[0].shape[0] = 2 * C, t[0].shape[1] = C + C / 2; /* same count, wrong shape */
    st_write(path, t, n, k, v, 1, ST_F64);
    EXPECT_USER_ERROR(tt_load_nanogpt(path, NULL), "shape must be [24, 8]");
    t[0] = keep;
    st_write(path, t, n, NULL, NULL, 0, ST_F64);
    EXPECT_USER_ERROR(tt_load_nanogpt(path, NULL), "n_head is not in the file's metadata");
    st_write(path, t, n - 3, k, v, 1, ST_F64); /* no ln_f.bias (and weight), no mask */
    EXPECT_USER_ERROR(tt_load_nanogpt(path, NULL), "transformer.ln_f.weight is missing");
    t[n - 2] = t[n - 1];                       /* ln_f.bias dropped: the Linear biases left over */
    st_write(path, t, n - 2, k, v, 1, ST_F64);
    EXPECT_USER_ERROR(tt_load_nanogpt(path, NULL), "a bias in a model without transformer.ln_f.bias");
    st_write(path, t + 1, 5, k, v, 1, ST_F64);
    EXPECT_USER_ERROR(tt_load_nanogpt(path, NULL), "transformer.ln_f.weight is missing");
    EXPECT_USER_ERROR(tt_load_nanogpt(tmpdir, NULL), "is a folder");
    free(cfgp);
    free(path);
    model_free(m);
    model_free(r);
}

static void write_text(const char *path, const char *text, size_t len)
{
    FILE *fp = fopen(path, "wb");
    fwrite(text, 1, len, fp);
    fclose(fp);
}

/* Issue 27 items 6, 7, 12: NaN and Inf weights, the causal mask, the metadata and the
 * config JSON read strictly, and the config's keys over the metadata's, every key alike. */
static void test_strict_model(void)
{
    model *m = random_model(1, 1, 0, 11);
    char *path = path_join(tmpdir, "s.safetensors"), *cfgp = path_join(tmpdir, "s.json");
    /* non-finite weights, named */
    const char *where[] = {"wte", "h0.ln_1.weight"};
    for (int k = 0; k < 2; k++) {
        size_t off = m->tensors[model_find_tensor(m, where[k])].offset + 3;
        double keep = m->params[off];
        m->params[off] = k ? INFINITY : NAN;
        tt_save_nanogpt(m, NULL, path, 0);
        EXPECT_USER_ERROR(tt_load_nanogpt(path, NULL), k ? "transformer.h.0.ln_1.weight holds a non-finite value"
                                                         : "transformer.wte.weight holds a non-finite value");
        m->params[off] = keep;
    }
    /* the metadata, each key written plainly */
    tt_save_nanogpt(m, NULL, path, 0);
    st_file *volatile f = st_read(path);
    const char *bad[][3] = {{"n_head", " 2", "metadata n_head = ' 2'"}, {"n_head", "+2", "metadata n_head = '+2'"},
                            {"n_head", "2x", "metadata n_head = '2x'"}, {"dropout", "nan", "metadata dropout = 'nan'"},
                            {"dropout", "-5", "metadata dropout = '-5'"}, {"dropout", "0.1", "dropout 0.1"}};
    st_out o[40];
    for (int i = 0; i < f->ntensors; i++) {
        o[i] = (st_out){f->t[i].name, f->t[i].ndim, {0}, f->t[i].data};
        for (int d = 0; d < f->t[i].ndim; d++) o[i].shape[d] = f->t[i].shape[d];
    }
    const char *vals[16];
    for (volatile size_t b = 0; b < sizeof bad / sizeof *bad; b++) {
        for (int i = 0; i < f->nmeta; i++) vals[i] = strcmp(f->meta_key[i], bad[b][0]) ? f->meta_val[i] : bad[b][1];
        st_write(path, o, f->ntensors, (const char *const *)f->meta_key, vals, f->nmeta, ST_F64);
        EXPECT_USER_ERROR(tt_load_nanogpt(path, NULL), bad[b][2]);
    }
    /* dropout 0.1 in the metadata: a config saying 0 analyses it (eval mode), as the message says */
    write_text(cfgp, "{\"dropout\": 0}", 14);
    model *r = tt_load_nanogpt(path, cfgp);
    CHECK(r->P == m->P && memcmp(r->params, m->params, m->P * sizeof(double)) == 0, "config dropout 0 over metadata 0.1");
    model_free(r);
    /* the config JSON, strictly */
    const char *cfgs[][2] = {{"{\"n_head\": 2} x", "not a JSON object"}, {"{\"dropout\": -1}", "dropout must be"},
                             {"{\"n_head\": 2, \"n_head\": 2}", "n_head is given twice"},
                             {"{\"tied\": false, \"tie_word_embeddings\": false}", "given twice"}};
    for (volatile size_t i = 0; i < sizeof cfgs / sizeof *cfgs; i++) {
        write_text(cfgp, cfgs[i][0], strlen(cfgs[i][0]));
        EXPECT_USER_ERROR(tt_load_nanogpt(path, cfgp), cfgs[i][1]);
    }
    write_text(cfgp, "{\"n_head\": 2}\0{\"n_head\": 4}", 27);
    EXPECT_USER_ERROR(tt_load_nanogpt(path, cfgp), "holds a NUL byte");
    st_free(f);
    /* the causal mask: [1, 1, T, T] (T = block_size 5) holding tril(ones) */
    tt_save_nanogpt(m, NULL, path, 0);
    f = st_read(path);
    int n = f->ntensors;
    for (int i = 0; i < n; i++) {
        o[i] = (st_out){f->t[i].name, f->t[i].ndim, {0}, f->t[i].data};
        for (int d = 0; d < f->t[i].ndim; d++) o[i].shape[d] = f->t[i].shape[d];
    }
    double mask[25];
    for (int i = 0; i < 25; i++) mask[i] = i % 5 <= i / 5;
    o[n] = (st_out){"transformer.h.0.attn.bias", 4, {1, 1, 5, 5}, mask};
    st_write(path, o, n + 1, (const char *const *)f->meta_key, (const char *const *)f->meta_val, f->nmeta, ST_F64);
    r = tt_load_nanogpt(path, NULL);
    model_free(r);
    o[n].shape[2] = o[n].shape[3] = 4;
    st_write(path, o, n + 1, (const char *const *)f->meta_key, (const char *const *)f->meta_val, f->nmeta, ST_F64);
    EXPECT_USER_ERROR(tt_load_nanogpt(path, NULL), "causal mask [1, 1, 5, 5]");
    o[n].shape[2] = o[n].shape[3] = 5;
    mask[1] = 1; /* above the diagonal */
    st_write(path, o, n + 1, (const char *const *)f->meta_key, (const char *const *)f->meta_val, f->nmeta, ST_F64);
    EXPECT_USER_ERROR(tt_load_nanogpt(path, NULL), "not a causal mask");
    st_free(f);
    free(path);
    free(cfgp);
    model_free(m);
}

/* Tied under one name: wte only, or lm_head only, gives the same tied model. */
static void test_tied_one_name(void)
{
    model *m = random_model(1, 0, 1, 5);
    char *path = path_join(tmpdir, "t.safetensors");
    tt_save_nanogpt(m, NULL, path, 0);
    st_file *f = st_read(path);
    /* drop one name: rewrite without lm_head.weight, then without wte */
    for (int drop = 0; drop < 2; drop++) {
        const char *gone = drop ? "transformer.wte.weight" : "lm_head.weight";
        st_out o[32];
        int n = 0;
        for (int i = 0; i < f->ntensors; i++) {
            if (strcmp(f->t[i].name, gone) == 0) continue;
            o[n] = (st_out){f->t[i].name, f->t[i].ndim, {0}, f->t[i].data};
            for (int d = 0; d < f->t[i].ndim; d++) o[n].shape[d] = f->t[i].shape[d];
            n++;
        }
        char *p2 = path_join(tmpdir, "t1.safetensors");
        st_write(p2, o, n, (const char *const *)f->meta_key, (const char *const *)f->meta_val, f->nmeta, ST_F64);
        model *r = tt_load_nanogpt(p2, NULL);
        CHECK(tt_config_of(r)->tied && r->P == m->P && memcmp(r->params, m->params, m->P * sizeof(double)) == 0,
              "tied under %s only", drop ? "lm_head.weight" : "transformer.wte.weight");
        model_free(r);
        char *cfgp = path_join(tmpdir, "untied.json");
        FILE *fp = fopen(cfgp, "w");
        fputs("{\"tied\": false}", fp);
        fclose(fp);
        EXPECT_USER_ERROR(tt_load_nanogpt(p2, cfgp), "the config says untied");
        free(cfgp);
        free(p2);
    }
    st_free(f);
    free(path);
    model_free(m);
}

int main(void)
{
    core_quiet = 1;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_nanogpt.%d", (int)getpid());
    ensure_dir(tmpdir);
    test_dtypes();
    test_round_trips();
    test_fused_split();
    test_tied_one_name();
    test_strict_model();
    if (remove_tree(tmpdir) != 0) printf("# could not remove %s\n", tmpdir);
    return check_summary();
}
