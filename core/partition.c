/* Tensor roles and partitions of a model's parameters into blocks. */
#include "core.h"
#include "model.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <stdlib.h>
#include <string.h>

static const char *ROLE_NAMES[ROLE_COUNT] = {
    "embed", "pos", "query", "key", "value", "attn_proj", "mlp_fc", "mlp_proj",
    "norm", "output", "bias", "matrix",
};

const char *role_name(tensor_role role)
{
    return (role >= 0 && role < ROLE_COUNT) ? ROLE_NAMES[role] : "unknown";
}

static const char *SPLIT_NAMES[SPLIT_COUNT] = {"whole", "rows", "cols", "heads", "entries"};

const char *split_name(split_kind s) { return (s >= 0 && s < SPLIT_COUNT) ? SPLIT_NAMES[s] : "unknown"; }

int model_add_tensor(model *m, const char *name, tensor_role role, int rows, int cols, int heads, int layer)
{
    m->tensors = xrealloc(m->tensors, (size_t)(m->ntensors + 1) * sizeof(tensor_info));
    tensor_info *t = &m->tensors[m->ntensors];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->role = role;
    t->offset = m->P;
    t->rows = rows;
    t->cols = cols;
    t->heads = heads;
    t->layer = layer;
    m->P += (size_t)rows * cols;
    return m->ntensors++;
}

int model_find_tensor(const model *m, const char *name)
{
    for (int t = 0; t < m->ntensors; t++)
        if (strcmp(m->tensors[t].name, name) == 0) return t;
    return -1;
}

void model_check_tensors(const model *m)
{
    size_t next = 0;
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        if (ti->offset != next) DIE("tensor %s starts at %zu, expected %zu", ti->name, ti->offset, next);
        if (ti->rows < 1 || ti->cols < 1 || ti->heads < 1) DIE("tensor %s has a bad shape", ti->name);
        next += tensor_size(ti);
    }
    if (next != m->P) DIE("tensors cover %zu of %zu parameters", next, m->P);
}

partition *partition_new(void) { return xcalloc(1, sizeof(partition)); }

void partition_free(partition *p)
{
    if (!p) return;
    free(p->b);
    free(p);
}

void partition_add(partition *p, size_t start, size_t n, size_t stride, int tensor, const char *name)
{
    if (p->nblocks == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 64;
        p->b = xrealloc(p->b, (size_t)p->cap * sizeof(block));
    }
    block *b = &p->b[p->nblocks++];
    b->start = start;
    b->n = n;
    b->stride = stride ? stride : 1;
    b->tensor = tensor;
    snprintf(b->name, sizeof b->name, "%s", name);
}

void partition_add_tensor(partition *p, const model *m, int t, split_kind s)
{
    const tensor_info *ti = &m->tensors[t];
    size_t rows = ti->rows, cols = ti->cols;
    char name[96];
    switch (s) {
    case SPLIT_WHOLE:
        partition_add(p, ti->offset, rows * cols, 1, t, ti->name);
        break;
    case SPLIT_ROWS:
        for (size_t r = 0; r < rows; r++) {
            snprintf(name, sizeof name, "%s[row %zu]", ti->name, r);
            partition_add(p, ti->offset + r * cols, cols, 1, t, name);
        }
        break;
    case SPLIT_COLS:
        for (size_t c = 0; c < cols; c++) {
            snprintf(name, sizeof name, "%s[col %zu]", ti->name, c);
            partition_add(p, ti->offset + c, rows, cols, t, name);
        }
        break;
    case SPLIT_HEADS: {
        if (rows % ti->heads) DIE("tensor %s: %zu rows do not split into %d heads", ti->name, rows, ti->heads);
        size_t per = rows / ti->heads * cols;
        for (int h = 0; h < ti->heads; h++) {
            snprintf(name, sizeof name, "%s[head %d]", ti->name, h);
            partition_add(p, ti->offset + h * per, per, 1, t, name);
        }
        break;
    }
    case SPLIT_ENTRIES:
        for (size_t i = 0; i < rows * cols; i++) {
            snprintf(name, sizeof name, "%s[%zu]", ti->name, i);
            partition_add(p, ti->offset + i, 1, 1, t, name);
        }
        break;
    default:
        DIE("unknown split %d", s);
    }
}

partition *partition_alg2(const model *m)
{
    return partition_uniform(m, SPLIT_WHOLE);
}

partition *partition_uniform(const model *m, split_kind s)
{
    partition *p = partition_new();
    for (int t = 0; t < m->ntensors; t++) partition_add_tensor(p, m, t, s);
    return p;
}

partition *partition_alg3(const model *m, int value_whole)
{
    partition *p = partition_new();
    for (int t = 0; t < m->ntensors; t++) {
        split_kind s;
        switch (m->tensors[t].role) {
        case ROLE_EMBED: case ROLE_OUTPUT: s = SPLIT_ROWS; break;      /* by tokens */
        case ROLE_QUERY: case ROLE_KEY: s = SPLIT_HEADS; break;
        case ROLE_VALUE: s = value_whole ? SPLIT_WHOLE : SPLIT_ROWS; break;
        case ROLE_ATTN_PROJ: case ROLE_MLP_FC: case ROLE_MLP_PROJ: s = SPLIT_ROWS; break;
        case ROLE_POS: case ROLE_NORM: case ROLE_BIAS: s = SPLIT_WHOLE; break;
        default:
            partition_free(p);
            die_user("Algorithm 3 partition: tensor %s has role '%s', which Algorithm 3 does not cover "
                     "(use the default partition or a partition file)",
                     m->tensors[t].name, role_name(m->tensors[t].role));
        }
        partition_add_tensor(p, m, t, s);
    }
    return p;
}

/* Writes why p is not a cover of 0..P-1 into msg and returns 1; 0 if it is one. */
static int cover_error(const partition *p, size_t P, char *msg, size_t len)
{
    int *owner = xmalloc(checked_mul(P, sizeof(int), "partition check"));
    int bad = 0;
    for (size_t i = 0; i < P; i++) owner[i] = -1;
    for (int k = 0; k < p->nblocks && !bad; k++) {
        const block *b = &p->b[k];
        for (size_t e = 0; e < b->n && !bad; e++) {
            size_t i = b->start + e * b->stride;
            if (i >= P) {
                snprintf(msg, len, "block %s reaches index %zu beyond P = %zu", b->name, i, P);
                bad = 1;
            } else if (owner[i] >= 0) {
                snprintf(msg, len, "parameter %zu is in two blocks (%s and %s)", i, p->b[owner[i]].name, b->name);
                bad = 1;
            } else {
                owner[i] = k;
            }
        }
    }
    for (size_t i = 0; i < P && !bad; i++)
        if (owner[i] < 0) {
            snprintf(msg, len, "parameter %zu is in no block", i);
            bad = 1;
        }
    free(owner);
    return bad;
}

void partition_check_cover(const partition *p, size_t P, const char *what)
{
    char msg[256];
    if (cover_error(p, P, msg, sizeof msg)) die_user("%s: %s", what, msg);
}

/* One unsigned decimal field of a partition line (digits only: "-1" and "+1" are
 * refused, never wrapped); 0 on success. */
static int parse_count(const char *tok, size_t *out)
{
    if (*tok < '0' || *tok > '9') return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(tok, &end, 10);
    if (*end || errno || v > SIZE_MAX) return -1;
    *out = (size_t)v;
    return 0;
}

/* A partition file: one block per line "name start n [stride]", '#' starts a
 * comment, blank lines are skipped. The name is a free-text label (no spaces,
 * at most 95 characters) printed in reports; when it is a tensor's name, or
 * one followed by '[' (as in "h0.attn.query[head2]"), the line claims that
 * tensor: the block must lie inside it and is recorded as that tensor's.
 * Every line is checked on its own (numbers are unsigned decimals, n and
 * stride >= 1, no extra fields, the block inside 0..P-1), with its line number
 * however long the line; then the blocks must cover 0..P-1 exactly once. */
/* One line of fp into buf (without its newline, NUL-terminated): returns its
 * length, or -1 at the end of the file. A line longer than cap-2 bytes is cut
 * there (the rest is not read: /dev/zero must not fill the memory) and returns
 * cap-1, which the caller reports as too long. */
enum { PARTITION_LINE_MAX = 4096 };
static long read_line(FILE *fp, char *buf, size_t cap)
{
    size_t n = 0;
    int c = EOF;
    while (n + 1 < cap && (c = getc(fp)) != EOF && c != '\n') buf[n++] = (char)c;
    buf[n] = '\0';
    if (c == EOF && n == 0) return -1;
    return (long)n;
}

/* The blocks of a partition file, unchecked against each other. */
static partition *read_blocks(const char *path, const model *m)
{
    if (path_is_folder(path)) die_user("partition file %s is a folder, expected a file", path);
    FILE *fp = fopen(path, "r");
    if (!fp) die_user("cannot read partition file %s: %s", path, strerror(errno));
    partition *p = partition_new();
    char line[PARTITION_LINE_MAX + 2], msg[256];
    long len;
    long lineno = 0;
    const char *err = NULL;
    while (!err && (len = read_line(fp, line, sizeof line)) >= 0) {
        lineno++;
        if (len > PARTITION_LINE_MAX) {
            snprintf(msg, sizeof msg, "line longer than %d characters (a partition file has one short line per block)",
                     PARTITION_LINE_MAX);
            err = msg;
            break;
        }
        if (memchr(line, '\0', (size_t)len)) { err = "a NUL byte in the line"; break; }
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *tok[5], *save = NULL;
        int nt = 0;
        for (char *t = strtok_r(line, " \t\r\n\v\f", &save); t; t = strtok_r(NULL, " \t\r\n\v\f", &save)) {
            if (nt == 4) {
                snprintf(msg, sizeof msg, "extra field '%.40s' (expected 'name start n [stride]')", t);
                err = msg;
                break;
            }
            tok[nt++] = t;
        }
        if (err) break;
        if (nt == 0) continue;  /* blank or comment */
        size_t start, n, stride = 1;
        if (nt < 3 || parse_count(tok[1], &start) || parse_count(tok[2], &n) ||
            (nt == 4 && parse_count(tok[3], &stride)) || n == 0 || stride == 0) {
            err = "expected 'name start n [stride]' with start >= 0 and n, stride >= 1 (unsigned decimal numbers)";
            break;
        }
        if (tok[0][strcspn(tok[0], ",\"'")]) {
            snprintf(msg, sizeof msg, "block name '%.40s' holds a comma or a quote (names go into CSV files)", tok[0]);
            err = msg;
            break;
        }
        if (strlen(tok[0]) >= sizeof p->b[0].name) {
            snprintf(msg, sizeof msg, "block name longer than %zu characters", sizeof p->b[0].name - 1);
            err = msg;
            break;
        }
        /* last index start + (n-1)*stride, without overflow */
        if (start >= m->P || (n - 1) > (m->P - 1 - start) / stride) {
            snprintf(msg, sizeof msg, "block %s (start %zu, n %zu, stride %zu) reaches beyond P = %zu",
                     tok[0], start, n, stride, m->P);
            err = msg;
            break;
        }
        size_t base = strcspn(tok[0], "[");
        int t = -1;
        for (int k = 0; k < m->ntensors; k++)
            if (strlen(m->tensors[k].name) == base && strncmp(m->tensors[k].name, tok[0], base) == 0) t = k;
        if (t >= 0) {
            const tensor_info *ti = &m->tensors[t];
            if (start < ti->offset || start + (n - 1) * stride >= ti->offset + tensor_size(ti)) {
                snprintf(msg, sizeof msg, "block %s is not inside tensor %s (indices %zu..%zu)", tok[0], ti->name,
                         ti->offset, ti->offset + tensor_size(ti) - 1);
                err = msg;
                break;
            }
        }
        partition_add(p, start, n, stride, t, tok[0]);
    }
    int rerr = !err && ferror(fp);
    fclose(fp);
    if (rerr) {
        partition_free(p);
        die_user("cannot read partition file %s", path);
    }
    if (err) {
        partition_free(p);
        die_user("%s:%ld: %s", path, lineno, err);
    }
    return p;
}

partition *partition_read_blocks(const char *path, const model *m)
{
    partition *p = read_blocks(path, m);
    if (p->nblocks == 0) {
        partition_free(p);
        die_user("partition file %s holds no block", path);
    }
    return p;
}

partition *partition_read(const char *path, const model *m)
{
    partition *p = read_blocks(path, m);
    char msg[256];
    if (cover_error(p, m->P, msg, sizeof msg)) {
        partition_free(p);
        die_user("%s: %s", path, msg);
    }
    return p;
}

void block_gather(const block *b, const double *x, double *out)
{
    for (size_t e = 0; e < b->n; e++) out[e] = x[b->start + e * b->stride];
}

size_t partition_max_block(const partition *p)
{
    size_t mx = 0;
    for (int k = 0; k < p->nblocks; k++) if (p->b[k].n > mx) mx = p->b[k].n;
    return mx;
}

/* ---- candidate splits of one tensor (Principle 1) ---------------------------------------- */

static int is_vector(const tensor_info *ti) { return ti->cols == 1; }

int tensor_splits(const model *m, int t, split_kind *out)
{
    const tensor_info *ti = &m->tensors[t];
    int n = 0;
    out[n++] = SPLIT_WHOLE;
    if (tensor_size(ti) == 1) return n;
    int qkv = ti->role == ROLE_QUERY || ti->role == ROLE_KEY || ti->role == ROLE_VALUE;
    if (qkv && ti->heads > 1 && ti->heads < ti->rows && ti->rows % ti->heads == 0) out[n++] = SPLIT_HEADS;
    if (!is_vector(ti)) {
        if (ti->rows > 1) out[n++] = SPLIT_ROWS;
        out[n++] = SPLIT_COLS;
    }
    out[n++] = SPLIT_ENTRIES;
    return n;
}

const char *split_meaning(const tensor_info *ti, split_kind s)
{
    switch (s) {
    case SPLIT_WHOLE: return "tensor";
    case SPLIT_HEADS: return "head";
    case SPLIT_ENTRIES: return "entry";
    case SPLIT_COLS: return "input neuron";
    case SPLIT_ROWS:
        if (ti->role == ROLE_EMBED || ti->role == ROLE_OUTPUT) return "token";
        if (ti->role == ROLE_POS) return "position";
        if (is_vector(ti)) return "entry";
        return "output neuron";
    default: return "unknown";
    }
}

int split_nblocks(const tensor_info *ti, split_kind s)
{
    switch (s) {
    case SPLIT_WHOLE: return 1;
    case SPLIT_HEADS: return ti->heads;
    case SPLIT_ROWS: return ti->rows;
    case SPLIT_COLS: return ti->cols;
    case SPLIT_ENTRIES: return (int)tensor_size(ti);
    default: DIE("unknown split %d", s);
    }
}

partition *tensor_local_partition(const model *m, int t, split_kind s)
{
    partition *p = partition_new();
    partition_add_tensor(p, m, t, s);
    for (int k = 0; k < p->nblocks; k++) p->b[k].start -= m->tensors[t].offset;
    return p;
}

static int same_block(const block *a, const block *b)
{
    return a->start == b->start && a->n == b->n && (a->n == 1 || a->stride == b->stride);
}

int partition_split_of(const partition *p, const model *m, int t)
{
    for (int s = 0; s < SPLIT_COUNT; s++) {
        if (s == SPLIT_HEADS && m->tensors[t].rows % m->tensors[t].heads) continue;
        partition *q = partition_new();
        partition_add_tensor(q, m, t, (split_kind)s);
        int k = 0, ok = 1;
        for (int i = 0; i < p->nblocks && ok; i++) {
            if (p->b[i].tensor != t) continue;
            ok = k < q->nblocks && same_block(&p->b[i], &q->b[k]);
            k++;
        }
        ok = ok && k == q->nblocks;
        partition_free(q);
        if (ok) return s;
    }
    return -1;
}

int finest_above_share(int n, const int *nblocks, const double *mass, double share)
{
    int best = -1;
    for (int i = 0; i < n; i++) {
        if (!(mass[i] >= share)) continue;
        if (best < 0 || nblocks[i] > nblocks[best] || (nblocks[i] == nblocks[best] && mass[i] > mass[best]))
            best = i;
    }
    return best;
}
