/* safetensors read and write (safetensors.h). Every error path frees what it
 * holds before the user error (the fuzz target catches them in-process). */
#include "core.h"
#include "safetensors.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ST_HEADER_MAX (100u << 20) /* the reference implementation's limit */

static const char *const DTYPE_NAMES[] = {"F64", "F32", "F16", "BF16"};
static const size_t DTYPE_BYTES[] = {8, 4, 2, 2};

const char *st_dtype_name(st_dtype d) { return DTYPE_NAMES[d]; }

static int dtype_parse(const char *s, st_dtype *d)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(s, DTYPE_NAMES[i]) == 0) {
            *d = (st_dtype)i;
            return 0;
        }
    return -1;
}

static uint64_t le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

/* IEEE binary16 to double (subnormals, infinities and NaN included). */
static double half_to_double(unsigned h)
{
    int sign = h >> 15, e = (h >> 10) & 31;
    unsigned m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return sign ? -v : v;
}

static double decode(const unsigned char *p, st_dtype d)
{
    switch (d) {
    case ST_F64: {
        uint64_t u = le64(p);
        double v;
        memcpy(&v, &u, 8);
        return v;
    }
    case ST_F32:
    case ST_BF16: { /* bfloat16 is the top half of a float32 */
        uint32_t u = d == ST_F32 ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24
                                 : (uint32_t)p[0] << 16 | (uint32_t)p[1] << 24;
        float v;
        memcpy(&v, &u, 4);
        return v;
    }
    case ST_F16: return half_to_double((unsigned)p[0] | (unsigned)p[1] << 8);
    }
    return NAN;
}

/* A JSON number that is a whole number in 0..2^53 into *v; -1 otherwise. */
static int json_size(const cJSON *j, size_t *v)
{
    if (!cJSON_IsNumber(j)) return -1;
    double d = j->valuedouble;
    if (!(d >= 0 && d <= 9007199254740992.0) || d != floor(d)) return -1;
    *v = (size_t)d;
    return 0;
}

void st_free(st_file *f)
{
    if (!f) return;
    for (int i = 0; i < f->ntensors; i++) {
        free(f->t[i].name);
        free(f->t[i].data);
    }
    for (int i = 0; i < f->nmeta; i++) {
        free(f->meta_key[i]);
        free(f->meta_val[i]);
    }
    free(f->t);
    free(f->meta_key);
    free(f->meta_val);
    free(f);
}

/* One tensor entry of the header into t (name not yet set) and its byte range. */
static int parse_entry(const cJSON *e, st_tensor *t, size_t range[2], char *err, size_t nerr)
{
    const char *name = e->string;
    if (!cJSON_IsObject(e)) {
        snprintf(err, nerr, "tensor '%.200s' is not an object", name);
        return -1;
    }
    const cJSON *dt = NULL, *shape = NULL, *off = NULL, *k;
    cJSON_ArrayForEach(k, e)
    {
        const cJSON **slot = strcmp(k->string, "dtype") == 0 ? &dt : strcmp(k->string, "shape") == 0 ? &shape
                           : strcmp(k->string, "data_offsets") == 0 ? &off : NULL;
        if (!slot) {
            snprintf(err, nerr, "tensor '%.200s' has an unknown field '%.100s'", name, k->string);
            return -1;
        }
        if (*slot) {
            snprintf(err, nerr, "tensor '%.200s' gives its field '%s' twice", name, k->string);
            return -1;
        }
        *slot = k;
    }
    if (!cJSON_IsString(dt) || !cJSON_IsArray(shape) || !cJSON_IsArray(off)) {
        snprintf(err, nerr, "tensor '%.200s' needs a string dtype, a shape array and a data_offsets array", name);
        return -1;
    }
    if (dtype_parse(dt->valuestring, &t->dtype)) {
        snprintf(err, nerr, "tensor '%.200s' has dtype %.20s; supported: F64, F32, F16, BF16", name, dt->valuestring);
        return -1;
    }
    int nd = cJSON_GetArraySize(shape);
    if (nd > ST_MAX_DIMS) {
        snprintf(err, nerr, "tensor '%.200s' has %d dimensions (at most %d)", name, nd, ST_MAX_DIMS);
        return -1;
    }
    t->ndim = nd;
    t->n = 1;
    for (int i = 0; i < nd; i++) {
        size_t s;
        if (json_size(cJSON_GetArrayItem(shape, i), &s)) {
            snprintf(err, nerr, "tensor '%.200s': shape entry %d is not a whole number >= 0", name, i);
            return -1;
        }
        t->shape[i] = s;
        if (s && t->n > SIZE_MAX / 16 / s) {
            snprintf(err, nerr, "tensor '%.200s': shape too large", name);
            return -1;
        }
        t->n *= s;
    }
    if (cJSON_GetArraySize(off) != 2 || json_size(cJSON_GetArrayItem(off, 0), &range[0]) ||
        json_size(cJSON_GetArrayItem(off, 1), &range[1]) || range[1] < range[0]) {
        snprintf(err, nerr, "tensor '%.200s': data_offsets must be [begin, end] with 0 <= begin <= end", name);
        return -1;
    }
    if (range[1] - range[0] != t->n * DTYPE_BYTES[t->dtype]) {
        snprintf(err, nerr, "tensor '%.200s': %zu elements of %s need %zu bytes, data_offsets give %zu", name, t->n,
                 DTYPE_NAMES[t->dtype], t->n * DTYPE_BYTES[t->dtype], range[1] - range[0]);
        return -1;
    }
    return 0;
}

static int str_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* A string that occurs twice among s[0..n-1] (sorted copies: n log n, where comparing
 * every pair of a legal 100 MB header would take hours), or NULL. */
static const char *first_repeat(char *const *s, int n)
{
    const char **sorted = xmalloc((size_t)(n ? n : 1) * sizeof *sorted);
    memcpy(sorted, s, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, str_cmp);
    const char *twice = NULL;
    for (int i = 1; i < n && !twice; i++)
        if (strcmp(sorted[i], sorted[i - 1]) == 0) twice = sorted[i];
    free(sorted);
    return twice;
}

static int parse_metadata(st_file *f, const cJSON *m, char *err, size_t nerr)
{
    if (!cJSON_IsObject(m)) {
        snprintf(err, nerr, "__metadata__ is not an object");
        return -1;
    }
    int n = cJSON_GetArraySize(m);
    f->meta_key = xcalloc((size_t)n + 1, sizeof(char *));
    f->meta_val = xcalloc((size_t)n + 1, sizeof(char *));
    const cJSON *k;
    cJSON_ArrayForEach(k, m)
    {
        if (!cJSON_IsString(k)) {
            snprintf(err, nerr, "__metadata__ value of '%.100s' is not a string", k->string);
            return -1;
        }
        f->meta_key[f->nmeta] = xstrdup(k->string);
        f->meta_val[f->nmeta++] = xstrdup(k->valuestring);
    }
    const char *twice = first_repeat(f->meta_key, f->nmeta);
    if (twice) {
        snprintf(err, nerr, "__metadata__ gives the key '%.100s' twice", twice);
        return -1;
    }
    return 0;
}

/* A \u0000 escape inside a JSON string: cJSON decodes it into a C string that ends
 * there ("lm_head.weight\u0000junk" would read as lm_head.weight). */
static int has_nul_escape(const char *s, size_t n)
{
    int in_string = 0;
    for (size_t i = 0; i < n; i++) {
        if (!in_string) {
            in_string = s[i] == '"';
        } else if (s[i] == '"') {
            in_string = 0;
        } else if (s[i] == '\\' && i + 1 < n) {
            if (s[i + 1] == 'u' && i + 5 < n && !strncmp(s + i + 2, "0000", 4)) return 1;
            i++; /* the escaped character */
        }
    }
    return 0;
}

typedef struct {
    size_t begin, end;
    int index;
} st_range;

static int range_cmp(const void *a, const void *b)
{
    const st_range *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : x->end < y->end ? -1 : x->end > y->end;
}

/* The header (JSON at buf, hlen bytes) against a data region of dlen bytes;
 * the tensors' values from data. 0, or -1 with the reason in err. */
static int parse_header(st_file *f, const char *json, size_t hlen, const unsigned char *data, size_t dlen, char *err,
                        size_t nerr)
{
    if (memchr(json, '\0', hlen) || has_nul_escape(json, hlen)) {
        snprintf(err, nerr, "the header holds a NUL character (a name or value would be read cut short)");
        return -1;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(json, hlen, &end, 0);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        snprintf(err, nerr, "the header is not a JSON object");
        return -1;
    }
    for (const char *p = end; p < json + hlen; p++)
        if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r') {
            cJSON_Delete(root);
            snprintf(err, nerr, "the header holds bytes after its JSON object (only spaces may pad it)");
            return -1;
        }
    int n = cJSON_GetArraySize(root), rc = 0;
    f->t = xcalloc((size_t)n + 1, sizeof(st_tensor));
    st_range *r = xcalloc((size_t)n + 1, sizeof(st_range));
    const cJSON *e;
    int seen_meta = 0;
    cJSON_ArrayForEach(e, root)
    {
        if (strcmp(e->string, "__metadata__") == 0) {
            if (seen_meta++ || parse_metadata(f, e, err, nerr)) {
                if (seen_meta > 1) snprintf(err, nerr, "two __metadata__ entries");
                rc = -1;
                break;
            }
            continue;
        }
        st_tensor *t = &f->t[f->ntensors];
        size_t range[2];
        if (parse_entry(e, t, range, err, nerr)) {
            rc = -1;
            break;
        }
        t->name = xstrdup(e->string);
        r[f->ntensors] = (st_range){range[0], range[1], f->ntensors};
        f->ntensors++;
    }
    cJSON_Delete(root);
    /* names unique; ranges tile the data region exactly */
    if (rc == 0) {
        char **names = xmalloc((size_t)(f->ntensors ? f->ntensors : 1) * sizeof *names);
        for (int i = 0; i < f->ntensors; i++) names[i] = f->t[i].name;
        const char *twice = first_repeat(names, f->ntensors);
        if (twice) {
            snprintf(err, nerr, "tensor '%.200s' appears twice", twice);
            rc = -1;
        }
        free(names);
    }
    if (rc == 0) {
        qsort(r, (size_t)f->ntensors, sizeof *r, range_cmp);
        size_t at = 0;
        for (int i = 0; i < f->ntensors && rc == 0; i++) {
            if (r[i].begin != at) {
                snprintf(err, nerr, "tensor '%.200s' starts at byte %zu of the data, expected %zu (%s)",
                         f->t[r[i].index].name, r[i].begin, at, r[i].begin < at ? "overlap" : "a hole");
                rc = -1;
            }
            at = r[i].end;
        }
        if (rc == 0 && at != dlen) {
            snprintf(err, nerr, "the tensors cover %zu data bytes but the file holds %zu", at, dlen);
            rc = -1;
        }
    }
    if (rc == 0) { /* values, in the order of the data */
        st_tensor *sorted = xcalloc((size_t)f->ntensors + 1, sizeof(st_tensor));
        for (int i = 0; i < f->ntensors; i++) {
            st_tensor *t = &sorted[i];
            *t = f->t[r[i].index];
            size_t w = DTYPE_BYTES[t->dtype];
            t->data = xmalloc((t->n ? t->n : 1) * sizeof(double));
            for (size_t k = 0; k < t->n; k++) t->data[k] = decode(data + r[i].begin + k * w, t->dtype);
        }
        free(f->t);
        f->t = sorted;
    }
    free(r);
    return rc;
}

/* The file's bytes parsed; NULL with the reason in err. */
static st_file *parse_buffer(const unsigned char *buf, size_t len, char *err, size_t nerr)
{
    if (len < 8) {
        snprintf(err, nerr, "%zu bytes, too short for a safetensors file", len);
        return NULL;
    }
    uint64_t hlen = le64(buf);
    if (hlen > len - 8 || hlen > ST_HEADER_MAX) {
        snprintf(err, nerr, "header length %llu is larger than the file (%zu bytes) or than 100 MB",
                 (unsigned long long)hlen, len);
        return NULL;
    }
    if (hlen < 2 || buf[8] != '{') {
        snprintf(err, nerr, "not a safetensors file (the header does not start with '{')");
        return NULL;
    }
    st_file *f = xcalloc(1, sizeof *f);
    if (parse_header(f, (const char *)buf + 8, (size_t)hlen, buf + 8 + hlen, len - 8 - (size_t)hlen, err, nerr)) {
        st_free(f);
        return NULL;
    }
    return f;
}

st_file *st_parse(const unsigned char *buf, size_t len, const char *what)
{
    char err[600];
    st_file *f = parse_buffer(buf, len, err, sizeof err);
    if (!f) die_user("%s: %s", what, err);
    return f;
}

st_file *st_read(const char *path)
{
    size_t len;
    char err[1200];
    unsigned char *buf = (unsigned char *)input_read_all(path, path, 0, &len, err, sizeof err);
    if (!buf) die_user("%s", err);
    st_file *f = parse_buffer(buf, len, err, sizeof err);
    free(buf);
    if (!f) die_user("%s: %s", path, err);
    return f;
}

const st_tensor *st_find(const st_file *f, const char *name)
{
    for (int i = 0; i < f->ntensors; i++)
        if (strcmp(f->t[i].name, name) == 0) return &f->t[i];
    return NULL;
}

const char *st_meta(const st_file *f, const char *key)
{
    for (int i = 0; i < f->nmeta; i++)
        if (strcmp(f->meta_key[i], key) == 0) return f->meta_val[i];
    return NULL;
}

/* ---- writing -------------------------------------------------------------------------------- */

static size_t out_count(const st_out *t)
{
    size_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

static void put_value(FILE *fp, double v, st_dtype d)
{
    unsigned char b[8];
    if (d == ST_F64) {
        uint64_t u;
        memcpy(&u, &v, 8);
        for (int i = 0; i < 8; i++) b[i] = (unsigned char)(u >> 8 * i);
        fwrite(b, 1, 8, fp);
    } else {
        float x = (float)v;
        uint32_t u;
        memcpy(&u, &x, 4);
        for (int i = 0; i < 4; i++) b[i] = (unsigned char)(u >> 8 * i);
        fwrite(b, 1, 4, fp);
    }
}

void st_write(const char *path, const st_out *t, int n, const char *const *meta_key, const char *const *meta_val,
              int nmeta, st_dtype dtype)
{
    if (dtype != ST_F64 && dtype != ST_F32) DIE("st_write: F64 or F32 only");
    cJSON *root = cJSON_CreateObject();
    if (nmeta > 0) {
        cJSON *m = cJSON_AddObjectToObject(root, "__metadata__");
        for (int i = 0; i < nmeta; i++) cJSON_AddStringToObject(m, meta_key[i], meta_val[i]);
    }
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        if (t[i].ndim < 0 || t[i].ndim > ST_MAX_DIMS) DIE("st_write: %d dimensions", t[i].ndim);
        cJSON *e = cJSON_AddObjectToObject(root, t[i].name);
        cJSON_AddStringToObject(e, "dtype", DTYPE_NAMES[dtype]);
        cJSON *shape = cJSON_AddArrayToObject(e, "shape"), *off = cJSON_AddArrayToObject(e, "data_offsets");
        for (int k = 0; k < t[i].ndim; k++) cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t[i].shape[k]));
        size_t bytes = out_count(&t[i]) * DTYPE_BYTES[dtype];
        cJSON_AddItemToArray(off, cJSON_CreateNumber((double)at));
        cJSON_AddItemToArray(off, cJSON_CreateNumber((double)(at + bytes)));
        at += bytes;
    }
    char *json = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!json) DIE("st_write: cannot print the header");
    size_t hlen = strlen(json), padded = (hlen + 7) / 8 * 8;
    outfile *f = outfile_open(path);
    FILE *fp = outfile_fp(f);
    unsigned char b[8];
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)((uint64_t)padded >> 8 * i);
    fwrite(b, 1, 8, fp);
    fwrite(json, 1, hlen, fp);
    for (size_t i = hlen; i < padded; i++) fputc(' ', fp);
    free(json);
    for (int i = 0; i < n; i++)
        for (size_t k = 0, c = out_count(&t[i]); k < c; k++) put_value(fp, t[i].data[k], dtype);
    outfile_commit(f);
}
