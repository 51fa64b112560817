/* Groups of parameter indices and the types of a partition's blocks
 * (groups.h). */
#include "harness/groups.h"
#include "core/core.h"
#include "core/model.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- groups ---------------------------------------------------------------------------------- */

index_groups *groups_of_partition(const partition *p)
{
    index_groups *g = xcalloc(1, sizeof *g);
    g->ngroups = p->nblocks;
    g->off = xmalloc(((size_t)p->nblocks + 1) * sizeof(size_t));
    g->off[0] = 0;
    for (int k = 0; k < p->nblocks; k++) g->off[k + 1] = g->off[k] + p->b[k].n;
    g->idx = xmalloc((g->off[p->nblocks] ? g->off[p->nblocks] : 1) * sizeof(size_t));
    for (int k = 0; k < p->nblocks; k++)
        for (size_t e = 0; e < p->b[k].n; e++) g->idx[g->off[k] + e] = p->b[k].start + e * p->b[k].stride;
    return g;
}

index_groups *groups_shuffled(const index_groups *g, gsl_rng *rng)
{
    size_t N = g->off[g->ngroups];
    index_groups *s = xcalloc(1, sizeof *s);
    s->ngroups = g->ngroups;
    s->off = xmalloc(((size_t)g->ngroups + 1) * sizeof(size_t));
    memcpy(s->off, g->off, ((size_t)g->ngroups + 1) * sizeof(size_t));
    s->idx = xmalloc((N ? N : 1) * sizeof(size_t));
    memcpy(s->idx, g->idx, N * sizeof(size_t));
    for (size_t i = N; i > 1; i--) {   /* Fisher–Yates over the members */
        size_t j = rng_int(rng, i), t = s->idx[i - 1];
        s->idx[i - 1] = s->idx[j];
        s->idx[j] = t;
    }
    return s;
}

void groups_free(index_groups *g)
{
    if (!g) return;
    free(g->off);
    free(g->idx);
    free(g);
}

int block_types(int *type, char (*names)[BLOCK_TYPE_LEN], int max_types, const model *m, const partition *p)
{
    int *split = xmalloc((size_t)m->ntensors * sizeof(int)), n = 0;
    for (int t = 0; t < m->ntensors; t++) split[t] = partition_split_of(p, m, t);
    for (int k = 0; k < p->nblocks; k++) {
        int t = p->b[k].tensor;
        if (split[t] < 0) DIE("tensor %s: no split of it matches the partition", m->tensors[t].name);
        char name[BLOCK_TYPE_LEN];
        snprintf(name, sizeof name, "%s %s", role_name(m->tensors[t].role),
                 split_meaning(&m->tensors[t], (split_kind)split[t]));
        int i = 0;
        while (i < n && strcmp(names[i], name) != 0) i++;
        if (i == n) {
            if (n == max_types) DIE("more than %d block types", max_types);
            memcpy(names[n++], name, sizeof name);
        }
        type[k] = i;
    }
    free(split);
    return n;
}

/* ---- block spectra and their spread ---------------------------------------------------------- */

int block_types_any(int *type, char (*names)[BLOCK_TYPE_LEN], int max_types, const model *m, const partition *p)
{
    int split_all = 1;
    for (int k = 0; k < p->nblocks && split_all; k++) split_all = p->b[k].tensor >= 0;
    for (int t = 0; t < m->ntensors && split_all; t++) split_all = partition_split_of(p, m, t) >= 0;
    if (split_all) return block_types(type, names, max_types, m, p);
    int n = 0;
    for (int k = 0; k < p->nblocks; k++) {
        int t = p->b[k].tensor;
        const char *name = t >= 0 && t < m->ntensors ? role_name(m->tensors[t].role) : "whole";
        int i = 0;
        while (i < n && strcmp(names[i], name) != 0) i++;
        if (i == n) {
            if (n == max_types) DIE("more than %d block types", max_types);
            snprintf(names[n++], BLOCK_TYPE_LEN, "%s", name);
        }
        type[k] = i;
    }
    return n;
}

/* ---- spreads ----------------------------------------------------------------------------------- */

spread_stats spread_of(const double *x, const int *type, int n)
{
    spread_stats s = {.n = 0, .mean = NAN, .sd = NAN, .iqr = NAN, .eta2 = NAN};
    double *v = xmalloc(((size_t)n + 1) * sizeof(double));
    int ntypes = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(x[i])) continue;
        v[s.n++] = x[i];
        if (type && type[i] + 1 > ntypes) ntypes = type[i] + 1;
    }
    if (s.n == 0) {
        free(v);
        return s;
    }
    double mean = 0;
    for (int i = 0; i < s.n; i++) mean += v[i] / s.n;
    double ss = 0;
    for (int i = 0; i < s.n; i++) ss += (v[i] - mean) * (v[i] - mean);
    s.mean = mean;
    s.sd = s.n > 1 ? sqrt(ss / (s.n - 1)) : NAN;
    s.iqr = quantile(v, (size_t)s.n, 0.75) - quantile(v, (size_t)s.n, 0.25);
    if (type && ss > 0) {
        /* η² = SS_between / SS_total: the share of the variance that the type means explain */
        double *tsum = xcalloc((size_t)ntypes, sizeof(double));
        int *tcount = xcalloc((size_t)ntypes, sizeof(int));
        for (int i = 0; i < n; i++)
            if (isfinite(x[i])) tsum[type[i]] += x[i], tcount[type[i]]++;
        double between = 0;
        for (int t = 0; t < ntypes; t++)
            if (tcount[t]) between += tcount[t] * (tsum[t] / tcount[t] - mean) * (tsum[t] / tcount[t] - mean);
        s.eta2 = between / ss;
        free(tsum);
        free(tcount);
    }
    free(v);
    return s;
}

/* The groups of g whose keep[k] is set, in order. */
