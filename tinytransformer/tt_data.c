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
    double *trans;    /* Markov: (V,V) row-stochastic; NULL for text */
    double *cum;      /* Markov: cumulative rows (V,V) */
    int *text;        /* text: symbol ids (len) */
    size_t len;
};

tt_data *tt_data_markov(int V, int successors, unsigned long seed)
{
    if (V < 2) die_user("Markov source needs V >= 2 (got %d)", V);
    if (successors < 1 || successors > V)
        die_user("Markov successors must be in 1..V = %d (got %d)", V, successors);
    tt_data *d = xcalloc(1, sizeof *d);
    d->V = V;
    d->trans = xcalloc((size_t)V * V, sizeof(double));
    d->cum = xmalloc((size_t)V * V * sizeof(double));
    gsl_rng *r = rng_new(seed);
    int *perm = xmalloc((size_t)V * sizeof(int));
    for (int s = 0; s < V; s++) {
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

void tt_data_batch(const tt_data *d, gsl_rng *r, int B, int T, int *tokens /*(B,T+1)*/)
{
    for (int b = 0; b < B; b++) {
        int *row = tokens + (size_t)b * (T + 1);
        if (d->text) {
            if (d->len < (size_t)T + 1) die_user("data text has %zu symbols, fewer than T+1 = %d", d->len, T + 1);
            size_t off = rng_int(r, d->len - (size_t)T);
            for (int t = 0; t <= T; t++) row[t] = d->text[off + t];
        } else {
            int s = (int)rng_int(r, (unsigned long)d->V);
            row[0] = s;
            for (int t = 1; t <= T; t++) {
                const double *cum = d->cum + (size_t)s * d->V;
                double u = rng_uniform_in(r, 0, 1);
                int j = 0;
                while (j < d->V - 1 && u >= cum[j]) j++;
                row[t] = s = j;
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
