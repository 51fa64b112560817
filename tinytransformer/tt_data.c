/* Token sources for the tiny Transformer: a seeded sparse random Markov chain
 * (learnable structure: each state has a few likely successors), the bytes of a
 * text corpus (a file, or every text file of a folder) with a character
 * vocabulary built from it, or nanoGPT's token files. Text and token files are
 * split by position into a training part and a held-out part. */
#include "tt.h"
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MARKOV_MASS 0.95 /* share of each row on its likely successors */

struct tt_data {
    int V;            /* symbols in use */
    int order;        /* Markov: the next token depends on the previous `order` tokens */
    size_t ctx;       /* Markov: V^order contexts */
    double *trans;    /* Markov: (V^order, V) row-stochastic; NULL otherwise */
    double *cum;      /* Markov: cumulative rows (V^order, V) */
    int *tok;         /* text, token files: the whole sequence, training part first (len) */
    size_t len, ntrain; /* tokens; tokens in the training part (the rest is held out) */
    int *sym;         /* (V) the byte of each id; TT_SYMBOL_OTHER, TT_SYMBOL_TOKEN */
    size_t *count;    /* (V) occurrences of each id in the whole sequence */
};

tt_data *tt_data_markov(int V, int order, int successors, unsigned long seed)
{
    if (V < 2) die_user("Markov source needs V >= 2 (got %d)", V);
    if (order < 1 || order > 4) die_user("Markov order must be in 1..4 (got %d)", order);
    if (successors < 1 || successors > V)
        die_user("Markov successors must be in 1..V = %d (got %d)", V, successors);
    size_t ctx = 1;
    for (int i = 0; i < order; i++) ctx *= (size_t)V;
    if (ctx > 1u << 20) die_user("Markov source: V^order = %zu contexts is too many", ctx);
    tt_data *d = xcalloc(1, sizeof *d);
    d->V = V;
    d->order = order;
    d->ctx = ctx;
    d->trans = xcalloc(ctx * V, sizeof(double));
    d->cum = xmalloc(ctx * V * sizeof(double));
    gsl_rng *r = rng_new(seed);
    int *perm = xmalloc((size_t)V * sizeof(int));
    for (size_t s = 0; s < ctx; s++) {
        double *row = d->trans + (size_t)s * V;
        for (int j = 0; j < V; j++) perm[j] = j;
        for (int j = 0; j < successors; j++) { /* partial Fisher–Yates: distinct successors */
            int i = j + (int)rng_int(r, (unsigned long)(V - j));
            int tmp = perm[j];
            perm[j] = perm[i];
            perm[i] = tmp;
        }
        double w[successors], z = 0;
        for (int j = 0; j < successors; j++) z += (w[j] = rng_uniform_in(r, 0.5, 1.5));
        for (int j = 0; j < V; j++) row[j] = (1 - MARKOV_MASS) / V;
        for (int j = 0; j < successors; j++) row[perm[j]] += MARKOV_MASS * w[j] / z;
        double c = 0;
        for (int j = 0; j < V; j++) d->cum[(size_t)s * V + j] = (c += row[j]);
        d->cum[(size_t)s * V + V - 1] = 1.0;
    }
    free(perm);
    rng_free(r);
    return d;
}

/* ---- text ------------------------------------------------------------------------------- */
/* Every reader frees what it holds before a user error (the tests and the fuzz
 * targets catch user errors in-process, where a leak would show). */

/* A corpus or token file holds at most 2^31 bytes (and a corpus as much in all): its
 * tokens fit an int index and a draw of rng_int, and memory. */
#define DATA_BYTES_MAX ((size_t)1 << 31)

/* Appends the bytes of file `path` to buf (len, cap): a regular file, the whole
 * corpus at most DATA_BYTES_MAX. 0, or -1 with the reason in err. */
static int read_file_into(const char *path, unsigned char **buf, size_t *len, size_t *cap, char *err, size_t nerr)
{
    char what[1100];
    snprintf(what, sizeof what, "data file %s", path);
    size_t size, room = DATA_BYTES_MAX - *len;
    FILE *fp = input_open(path, what, room ? room : 1, &size, err, nerr);
    if (!fp) return -1;
    int big = 0;
    for (size_t got;;) {
        if (*len == *cap) *buf = xrealloc(*buf, *cap = *cap ? 2 * *cap : 1 << 16);
        if ((got = fread(*buf + *len, 1, *cap - *len, fp)) == 0) break;
        if ((*len += got) > DATA_BYTES_MAX) { big = 1; break; }
    }
    int bad = ferror(fp);
    fclose(fp);
    if (bad) snprintf(err, nerr, "cannot read data file %s", path);
    else if (big) snprintf(err, nerr, "data file %s grew past %zu bytes", path, DATA_BYTES_MAX);
    return bad || big ? -1 : 0;
}

static int name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* A text file of a corpus folder: a regular file (not a link), not hidden, not
 * fortune's index (*.dat). */
static int is_corpus_file(const char *dir, const char *name)
{
    size_t n = strlen(name);
    if (name[0] == '.' || (n >= 4 && strcmp(name + n - 4, ".dat") == 0)) return 0;
    char *path = path_join(dir, name);
    struct stat st;
    int ok = lstat(path, &st) == 0 && S_ISREG(st.st_mode);
    free(path);
    return ok;
}

/* The names of a folder's corpus files in byte order (caller frees); *n of them. */
static char **corpus_files(const char *path, size_t *n)
{
    DIR *dir = opendir(path);
    if (!dir) die_user("cannot read folder %s: %s", path, strerror(errno));
    char **names = NULL;
    size_t cap = 0;
    *n = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        if (!is_corpus_file(path, e->d_name)) continue;
        if (*n == cap) names = xrealloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
        names[(*n)++] = xstrdup(e->d_name);
    }
    closedir(dir);
    if (*n == 0) {
        free(names);
        die_user("folder %s holds no text file", path);
    }
    qsort(names, *n, sizeof *names, name_cmp);
    return names;
}

/* The corpus at path: a file's bytes, or a folder's text files concatenated in
 * byte order of their names (subfolders, links, hidden files and *.dat skipped). */
static unsigned char *read_corpus(const char *path, size_t *len)
{
    unsigned char *buf = NULL;
    size_t cap = 0, n = 1;
    char err[1200];
    *len = 0;
    char **names = path_is_folder(path) ? corpus_files(path, &n) : NULL;
    for (size_t i = 0; i < n; i++) {
        char *file = names ? path_join(path, names[i]) : xstrdup(path);
        int bad = read_file_into(file, &buf, len, &cap, err, sizeof err);
        free(file);
        if (bad) {
            for (size_t j = 0; names && j < n; j++) free(names[j]);
            free(names);
            free(buf);
            die_user("%s", err);
        }
    }
    for (size_t j = 0; names && j < n; j++) free(names[j]);
    free(names);
    return buf;
}

/* Tokens in the training part of a sequence of len: all but the last
 * TT_HELD_OUT_SHARE (split by position). */
static size_t train_part(size_t len) { return len - (size_t)((double)len * TT_HELD_OUT_SHARE); }

/* Why a text of len bytes with `distinct` different ones cannot be a source of
 * windows of T+1 with a vocabulary of `vocab` symbols (0: it can). */
static int text_problem(char *err, size_t nerr, size_t len, int distinct, int vocab, int T, const char *what)
{
    size_t ntrain = train_part(len);
    if (vocab < 2 || vocab > 256) snprintf(err, nerr, "text vocabulary size must be in 2..256 (got %d)", vocab);
    else if (T < 1) snprintf(err, nerr, "context length T must be >= 1 (got %d)", T);
    else if (len == 0) snprintf(err, nerr, "%s is empty", what);
    else if (distinct < 2) snprintf(err, nerr, "%s holds 1 distinct byte; a vocabulary needs 2", what);
    else if (ntrain < (size_t)T + 1 || len - ntrain < (size_t)T + 1)
        snprintf(err, nerr, "%s has %zu bytes: its training part (%zu) and held-out part (the last %g%%, %zu) "
                 "each need T+1 = %d", what, len, ntrain, 100 * TT_HELD_OUT_SHARE, len - ntrain, T + 1);
    else return 0;
    return 1;
}

tt_data *tt_data_text_bytes(const unsigned char *buf, size_t len, int vocab, int T, const char *what)
{
    size_t freq[256] = {0};
    for (size_t i = 0; i < len; i++) freq[buf[i]]++;
    int distinct = 0;
    for (int b = 0; b < 256; b++) distinct += freq[b] > 0;
    char err[1400];
    if (text_problem(err, sizeof err, len, distinct, vocab, T, what)) die_user("%s", err);
    memory_check("text tokens", (double)len * sizeof(int));
    /* kept bytes: all of them if they fit, else the vocab-1 most frequent (ties:
     * the smaller byte), the rest one symbol "other" (the last id) */
    int keep[256] = {0}, nkeep = distinct <= vocab ? distinct : vocab - 1;
    for (int k = 0; k < nkeep; k++) {
        int best = -1;
        for (int b = 0; b < 256; b++)
            if (freq[b] && !keep[b] && (best < 0 || freq[b] > freq[best])) best = b;
        keep[best] = 1;
    }
    tt_data *d = xcalloc(1, sizeof *d);
    d->V = nkeep + (nkeep < distinct);
    d->sym = xmalloc((size_t)d->V * sizeof(int));
    d->count = xcalloc((size_t)d->V, sizeof(size_t));
    int id[256], n = 0;
    for (int b = 0; b < 256; b++) { /* kept bytes get ids in byte order */
        id[b] = keep[b] ? n : d->V - 1;
        if (keep[b]) d->sym[n++] = b;
    }
    if (nkeep < distinct) d->sym[d->V - 1] = TT_SYMBOL_OTHER;
    d->len = len;
    d->ntrain = train_part(len);
    d->tok = xmalloc(checked_mul(len, sizeof(int), "text tokens"));
    for (size_t i = 0; i < len; i++) d->count[d->tok[i] = id[buf[i]]]++;
    return d;
}

tt_data *tt_data_text(const char *path, int vocab, int T)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (!path_is_folder(path) && (!strcmp(base, "train.bin") || !strcmp(base, "val.bin")))
        die_user("--text %s is one of nanoGPT's token files, not text: give its folder (train.bin and val.bin, with "
                 "--vocab-size)", path);
    size_t len, freq[256] = {0};
    unsigned char *buf = read_corpus(path, &len);
    char what[1100], err[1400];
    snprintf(what, sizeof what, "text %s", path);
    for (size_t i = 0; i < len; i++) freq[buf[i]]++;
    int distinct = 0;
    for (int b = 0; b < 256; b++) distinct += freq[b] > 0;
    if (text_problem(err, sizeof err, len, distinct, vocab, T, what)) {
        free(buf);
        die_user("%s", err);
    }
    tt_data *d = tt_data_text_bytes(buf, len, vocab, T, what);
    free(buf);
    return d;
}

/* ---- nanoGPT's token files --------------------------------------------------------------- */

/* The uint16 little-endian tokens of a file into tok (n); 0, or -1 with the reason in err. */
static int read_tokens(const char *path, int V, int **tok, size_t *n, char *err, size_t nerr)
{
    unsigned char *buf = NULL;
    size_t len = 0, cap = 0;
    *tok = NULL;
    *n = 0;
    if (read_file_into(path, &buf, &len, &cap, err, nerr)) {
        free(buf);
        return -1;
    }
    if (len % 2) {
        free(buf);
        snprintf(err, nerr, "token file %s has %zu bytes, not a whole number of uint16 tokens", path, len);
        return -1;
    }
    *tok = xmalloc((len / 2 + 1) * sizeof(int));
    for (size_t i = 0; i < len / 2; i++) {
        int t = buf[2 * i] | buf[2 * i + 1] << 8;
        if (t >= V) {
            free(buf);
            free(*tok);
            *tok = NULL;
            snprintf(err, nerr, "token file %s: token %d at position %zu is outside the vocabulary 0..%d", path, t,
                     i, V - 1);
            return -1;
        }
        (*tok)[i] = t;
    }
    *n = len / 2;
    free(buf);
    return 0;
}

tt_data *tt_data_token_files(const char *train_path, const char *val_path, int V, int T)
{
    if (V < 2 || V > 65536) die_user("vocabulary size of token files must be in 2..65536 (got %d)", V);
    if (T < 1) die_user("context length T must be >= 1 (got %d)", T);
    int *a, *b;
    size_t na, nb;
    char err[1200];
    if (read_tokens(train_path, V, &a, &na, err, sizeof err)) die_user("%s", err);
    if (read_tokens(val_path, V, &b, &nb, err, sizeof err)) {
        free(a);
        die_user("%s", err);
    }
    if (na < (size_t)T + 1 || nb < (size_t)T + 1) {
        free(a);
        free(b);
        die_user("token files %s (%zu tokens) and %s (%zu) each need T+1 = %d", train_path, na, val_path, nb, T + 1);
    }
    tt_data *d = xcalloc(1, sizeof *d);
    d->V = V;
    d->sym = xmalloc((size_t)V * sizeof(int));
    for (int i = 0; i < V; i++) d->sym[i] = TT_SYMBOL_TOKEN;
    d->count = xcalloc((size_t)V, sizeof(size_t));
    d->len = na + nb;
    d->ntrain = na;
    d->tok = xrealloc(a, (na + nb) * sizeof(int));
    memcpy(d->tok + na, b, nb * sizeof(int));
    free(b);
    for (size_t i = 0; i < d->len; i++) d->count[d->tok[i]]++;
    return d;
}

void tt_data_check_vocab_size(const char *model, int V, const tt_data *d)
{
    int dv = d->V, text = !d->trans && d->sym && d->sym[0] != TT_SYMBOL_TOKEN;
    if (dv == V) return;
    if (text && dv < V)
        die_user("%s has a vocabulary of %d symbols but the text holds only %d distinct bytes (not the text it was "
                 "trained on?)", model, V, dv);
    die_user("%s has a vocabulary of %d symbols but the data gives %d (--vocab-size must be %d)", model, V, dv, V);
}

/* ---- queries and batches ------------------------------------------------------------------ */

int tt_data_vocab(const tt_data *d) { return d->V; }
const double *tt_data_transitions(const tt_data *d) { return d->trans; }
int tt_data_order(const tt_data *d) { return d->trans ? d->order : 0; }
int tt_data_symbol(const tt_data *d, int id)
{
    if (id < 0 || id >= d->V) DIE("symbol %d outside 0..%d", id, d->V - 1);
    return d->sym ? d->sym[id] : TT_SYMBOL_TOKEN;
}
size_t tt_data_count(const tt_data *d, int id)
{
    if (id < 0 || id >= d->V) DIE("symbol %d outside 0..%d", id, d->V - 1);
    return d->count ? d->count[id] : 0;
}
size_t tt_data_length(const tt_data *d, int held_out)
{
    if (!d->tok) return 0;
    return held_out ? d->len - d->ntrain : d->ntrain;
}

/* Context index of the `order` tokens ending at row[t]: Σ_i row[t−i]·V^i. */
static size_t context_of(const int *row, int t, int order, int V)
{
    size_t c = 0;
    for (int i = order - 1; i >= 0; i--) c = c * (size_t)V + (size_t)row[t - i];
    return c;
}

static void markov_row(const tt_data *d, gsl_rng *r, int T, int *row)
{
    for (int t = 0; t <= T; t++) { /* the first `order` tokens uniform, then the chain */
        if (t < d->order) {
            row[t] = (int)rng_int(r, (unsigned long)d->V);
            continue;
        }
        const double *cum = d->cum + context_of(row, t - 1, d->order, d->V) * d->V;
        double u = rng_uniform_in(r, 0, 1);
        int j = 0;
        while (j < d->V - 1 && u >= cum[j]) j++;
        row[t] = j;
    }
}

/* B windows of T+1 consecutive tokens of the part [from, from+n) at uniform offsets. */
static void window_rows(const tt_data *d, gsl_rng *r, int B, int T, size_t from, size_t n, int *tokens)
{
    if (n < (size_t)T + 1) die_user("data has %zu symbols in this part, fewer than T+1 = %d", n, T + 1);
    for (int b = 0; b < B; b++) {
        size_t off = from + rng_int(r, n - (size_t)T);
        memcpy(tokens + (size_t)b * (T + 1), d->tok + off, (size_t)(T + 1) * sizeof(int));
    }
}

void tt_data_batch(const tt_data *d, gsl_rng *r, int B, int T, int *tokens /*(B,T+1)*/)
{
    if (d->tok) {
        window_rows(d, r, B, T, 0, d->ntrain, tokens);
        return;
    }
    for (int b = 0; b < B; b++) markov_row(d, r, T, tokens + (size_t)b * (T + 1));
}

void tt_data_held_out_batch(const tt_data *d, gsl_rng *r, int B, int T, int *tokens /*(B,T+1)*/)
{
    if (d->tok) window_rows(d, r, B, T, d->ntrain, d->len - d->ntrain, tokens);
    else tt_data_batch(d, r, B, T, tokens);
}

void tt_data_free(tt_data *d)
{
    if (!d) return;
    free(d->trans);
    free(d->cum);
    free(d->tok);
    free(d->sym);
    free(d->count);
    free(d);
}
