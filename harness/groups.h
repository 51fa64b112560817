/* groups — groups of parameter indices and the types of a partition's blocks
 * (groups.c): what the extensions hetero and vspread and the spectra programs
 * measure spreads over. */
#ifndef HARNESS_GROUPS_H
#define HARNESS_GROUPS_H

#include "core/core.h"
#include "core/model.h"

/* A grouping of indices: group k holds idx[off[k] .. off[k+1]). */
typedef struct {
    int ngroups;
    size_t *off;     /* (ngroups + 1) */
    size_t *idx;     /* (off[ngroups]) */
} index_groups;
static inline size_t group_size(const index_groups *g, int k) { return g->off[k + 1] - g->off[k]; }
/* The blocks of p as groups (a strided block's indices in order). */
index_groups *groups_of_partition(const partition *p);
/* The same group sizes laid on a uniformly random permutation of g's members
 * (the members of all groups pooled): random groups, the negative controls. */
index_groups *groups_shuffled(const index_groups *g, gsl_rng *rng);
void groups_free(index_groups *g);
/* The type of each block of p (a partition that splits every tensor by one of
 * its candidate splits, as Algorithms 2 and 3 do): its tensor's role and what
 * one block of the split is, "query head", "mlp_fc output neuron", "embed
 * token", "norm tensor", ...; type[k] indexes names (first seen first).
 * Returns the number of types. */
#define BLOCK_TYPE_LEN 64
int block_types(int *type, char (*names)[BLOCK_TYPE_LEN], int max_types, const model *m, const partition *p);

/* The spread of n values over their finite ones (n counts those): mean; sd
 * (divisor n − 1; NAN for n < 2); iqr (numpy quantiles); eta2 = SS_between /
 * SS_total by type[i] (0-based labels, may be NULL: eta2 NAN), the share of the
 * variance the type means explain (NAN when all values are equal). */
typedef struct {
    int n;
    double mean, sd, iqr, eta2;
} spread_stats;
spread_stats spread_of(const double *x, const int *type, int n);

/* block_types when p splits every tensor by one of its candidate splits, else
 * one type per distinct tensor role ("whole" for a block without a tensor). */
int block_types_any(int *type, char (*names)[BLOCK_TYPE_LEN], int max_types, const model *m, const partition *p);

#endif
