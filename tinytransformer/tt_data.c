/* Token sources for the tiny Transformer: a seeded sparse random Markov chain
 * (learnable structure: each state has a few likely successors) or the bytes of
 * a text file. */
#include "tt.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MARKOV_MASS 0.95 /* share of each row on its likely successors */

struct tt_data {
    int V;            /* symbols in use */
    int order;        /* Markov: the next token depends on the previous `order` tokens */
    size_t ctx;       /* Markov: V^order contexts */
    double *trans;    /* Markov: (V^order, V) row-stochastic; NULL for text */
    double *cum;      /* Markov: cumulative rows (V^order, V) */
    int *text;        /* text: symbol ids (len) */
    size_t len;
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

tt_data *tt_data_text(const char *path, int V, int T)
{
    if (path_is_folder(path)) die_user("data file %s is a folder, expected a file", path);
    FILE *fp = fopen(path, "rb");
    if (!fp) die_user("cannot read data file %s: %s", path, strerror(errno));
    size_t cap = 1 << 16, len = 0;
    unsigned char *buf = xmalloc(cap);
    size_t got;
    while ((got = fread(buf + len, 1, cap - len, fp)) > 0) {
        len += got;
        if (len == cap) buf = xrealloc(buf, cap *= 2);
    }
    int err = ferror(fp);
    fclose(fp);
    if (err) {
        free(buf);
        die_user("cannot read data file %s", path);
    }
    if (len == 0) {
        free(buf);
        die_user("data file %s is empty", path);
    }
    if (len < (size_t)T + 1) {
        free(buf);
        die_user("data file %s has %zu bytes, fewer than T+1 = %d", path, len, T + 1);
    }
    int id[256], n = 0;
    for (int b = 0; b < 256; b++) id[b] = 0;
    for (size_t i = 0; i < len; i++) id[buf[i]] = 1;
    for (int b = 0; b < 256; b++) id[b] = id[b] ? n++ : -1;
    if (n > V) {
        free(buf);
        die_user("data file %s has %d distinct bytes, more than the vocabulary V = %d", path, n, V);
    }
    tt_data *d = xcalloc(1, sizeof *d);
    d->V = n;
    d->len = len;
    d->text = xmalloc(len * sizeof(int));
    for (size_t i = 0; i < len; i++) d->text[i] = id[buf[i]];
    free(buf);
    return d;
}

int tt_data_vocab(const tt_data *d) { return d->V; }
const double *tt_data_transitions(const tt_data *d) { return d->trans; }
int tt_data_order(const tt_data *d) { return d->trans ? d->order : 0; }

/* Context index of the `order` tokens ending at row[t]: Σ_i row[t−i]·V^i. */
static size_t context_of(const int *row, int t, int order, int V)
{
    size_t c = 0;
    for (int i = order - 1; i >= 0; i--) c = c * (size_t)V + (size_t)row[t - i];
    return c;
}

void tt_data_batch(const tt_data *d, gsl_rng *r, int B, int T, int *tokens /*(B,T+1)*/)
{
    for (int b = 0; b < B; b++) {
        int *row = tokens + (size_t)b * (T + 1);
        if (d->text) {
            if (d->len < (size_t)T + 1) die_user("data text has %zu symbols, fewer than T+1 = %d", d->len, T + 1);
            size_t off = rng_int(r, d->len - (size_t)T);
            for (int t = 0; t <= T; t++) row[t] = d->text[off + t];
        } else { /* the first `order` tokens uniform, then the chain */
            for (int t = 0; t <= T; t++) {
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
    }
}

void tt_data_free(tt_data *d)
{
    if (!d) return;
    free(d->trans);
    free(d->cum);
    free(d->text);
    free(d);
}
