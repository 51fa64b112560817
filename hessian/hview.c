/* Blocks of a saved Hessian by name (hview.h). */
#include "hview.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void layout_destroy(model *m)
{
    free(m->tensors);
    free(m);
}

static tensor_role role_parse(const char *s)
{
    for (int r = 0; r < ROLE_COUNT; r++)
        if (!strcmp(role_name((tensor_role)r), s)) return (tensor_role)r;
    return ROLE_COUNT;
}

model *layout_read(const char *path)
{
    if (path_is_folder(path)) die_user("%s is a folder, expected a tensors.csv", path);
    FILE *fp = fopen(path, "r");
    if (!fp) die_user("cannot read %s: %s (the run's tensor layout)", path, strerror(errno));
    model *m = xcalloc(1, sizeof *m);
    m->kind = "layout";
    m->destroy = layout_destroy;
    char line[512], name[64], role[32];
    int ln = 0;
    const char *err = NULL;
    if (!fgets(line, sizeof line, fp) || strcmp(line, "index,name,role,offset,rows,cols,heads,layer\n") != 0)
        err = "expected the header 'index,name,role,offset,rows,cols,heads,layer'";
    while (!err && fgets(line, sizeof line, fp)) {
        ln++;
        int idx, rows, cols, heads, layer, used = 0;
        unsigned long long off;
        if (sscanf(line, "%d,%47[^,],%31[^,],%llu,%d,%d,%d,%d%n", &idx, name, role, &off, &rows, &cols, &heads, &layer,
                   &used) != 8 || strcmp(line + used, "\n") != 0)
            err = "expected 'index,name,role,offset,rows,cols,heads,layer'";
        else if (idx != m->ntensors || off != m->P || rows < 1 || cols < 1 || heads < 1 || rows % heads)
            err = "tensors out of order or with bad sizes";
        else if (role_parse(role) == ROLE_COUNT)
            err = "unknown role";
        else
            model_add_tensor(m, name, role_parse(role), rows, cols, heads, layer);
    }
    int rerr = ferror(fp);
    fclose(fp);
    if (!err && !m->ntensors) err = "no tensor";
    if (err || rerr) {
        char msg[600];
        snprintf(msg, sizeof msg, "%s:%d: %s", path, ln + 1, err ? err : "read error");
        model_free(m);
        die_user("%s", msg);
    }
    return m;
}

static int parse_size(const char *s, size_t *out)
{
    if (*s < '0' || *s > '9') return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno) return -1;
    *out = (size_t)v;
    return (int)(end - s);
}

block block_named(const model *m, const char *spec)
{
    block b = {.stride = 1, .tensor = -1};
    snprintf(b.name, sizeof b.name, "%s", spec);
    size_t i0, i1;
    int k = parse_size(spec, &i0);
    if (k > 0 && spec[k] == ':') {
        int k2 = parse_size(spec + k + 1, &i1);
        if (k2 <= 0 || spec[k + 1 + k2] || i1 <= i0 || i1 > m->P)
            die_user("block %s: a range i0:i1 needs 0 <= i0 < i1 <= P = %zu", spec, m->P);
        b.start = i0;
        b.n = i1 - i0;
        for (int t = 0; t < m->ntensors; t++)
            if (m->tensors[t].offset <= i0 && i1 <= m->tensors[t].offset + tensor_size(&m->tensors[t])) b.tensor = t;
        return b;
    }
    size_t base = strcspn(spec, "[");
    int t = -1;
    for (int q = 0; q < m->ntensors; q++)
        if (strlen(m->tensors[q].name) == base && !strncmp(m->tensors[q].name, spec, base)) t = q;
    if (t < 0) die_user("block %s: no tensor %.*s (see the run's tensors.csv)", spec, (int)base, spec);
    const tensor_info *ti = &m->tensors[t];
    b.tensor = t;
    if (!spec[base]) {
        b.start = ti->offset;
        b.n = tensor_size(ti);
        return b;
    }
    char kind[8];
    size_t v;
    int used = 0;
    if (sscanf(spec + base, "[%7[a-z] %n", kind, &used) != 1 || parse_size(spec + base + used, &v) <= 0 ||
        strcmp(spec + base + used + parse_size(spec + base + used, &v), "]") != 0)
        die_user("block %s: expected NAME, NAME[head h], NAME[row r], NAME[col c] or i0:i1", spec);
    size_t rows = (size_t)ti->rows, cols = (size_t)ti->cols;
    if (!strcmp(kind, "head")) {
        if (ti->heads < 2 || v >= (size_t)ti->heads) die_user("block %s: %s has %d head(s)", spec, ti->name, ti->heads);
        size_t per = rows / (size_t)ti->heads * cols;
        b.start = ti->offset + v * per;
        b.n = per;
    } else if (!strcmp(kind, "row")) {
        if (v >= rows) die_user("block %s: %s has %zu rows", spec, ti->name, rows);
        b.start = ti->offset + v * cols;
        b.n = cols;
    } else if (!strcmp(kind, "col")) {
        if (v >= cols) die_user("block %s: %s has %zu columns", spec, ti->name, cols);
        b.start = ti->offset + v;
        b.n = rows;
        b.stride = cols;
    } else {
        die_user("block %s: '%s' is not head, row or col", spec, kind);
    }
    return b;
}

/* Tensor boundaries inside [lo, hi), or the rows of tensor t (every `step` rows). */
static partition *rows_of(const tensor_info *ti, size_t lo, size_t hi, size_t step, int t)
{
    partition *p = partition_new();
    size_t cols = (size_t)ti->cols;
    for (size_t r = 0; r < (size_t)ti->rows; r += step) {
        size_t s = ti->offset + r * cols, e = s + step * cols;
        if (s >= lo && s < hi) partition_add(p, s, (e < hi ? e : hi) - s, 1, t, "");
    }
    return p;
}

void block_lines(const model *m, const block *b, int max_lines, partition **major, partition **minor)
{
    *major = *minor = NULL;
    if (b->stride != 1) return;
    size_t lo = b->start, hi = b->start + b->n;
    int t = b->tensor;
    if (t < 0) {   /* a range across tensors: their boundaries */
        partition *p = partition_new();
        for (int q = 0; q < m->ntensors; q++) {
            size_t s = m->tensors[q].offset, e = s + tensor_size(&m->tensors[q]);
            if (e > lo && s < hi) partition_add(p, s > lo ? s : lo, (e < hi ? e : hi) - (s > lo ? s : lo), 1, q, "");
        }
        *major = p;
        return;
    }
    const tensor_info *ti = &m->tensors[t];
    int qkv = ti->heads > 1 && (ti->role == ROLE_QUERY || ti->role == ROLE_KEY || ti->role == ROLE_VALUE);
    if (ti->cols == 1) return;   /* a vector: no structure inside */
    size_t per_head = (size_t)(ti->rows / ti->heads);
    if (qkv && b->n > per_head * ti->cols) {   /* more than one head: heads, and neurons inside */
        *major = rows_of(ti, lo, hi, per_head, t);
        if (ti->rows <= max_lines) *minor = rows_of(ti, lo, hi, 1, t);
    } else if (b->n > (size_t)ti->cols && (size_t)ti->rows <= (size_t)max_lines) {
        *major = rows_of(ti, lo, hi, 1, t);   /* output neurons (tokens) */
    }
}

int block_inside(const block *outer, const block *inner, size_t *pos)
{
    for (size_t e = 0; e < inner->n; e++) {
        size_t i = inner->start + e * inner->stride;
        if (i < outer->start || (i - outer->start) % outer->stride) return 0;
        size_t q = (i - outer->start) / outer->stride;
        if (q >= outer->n) return 0;
        if (pos) pos[e] = q;
    }
    return 1;
}
