/* What the spectra programs (tools/spectra, experiments/spectra_check) share:
 * partitions by name, block types, a per-type sample of blocks, and the exact
 * block spectra from the streamed analysis (harness.h). */
#include "core/dist.h"
#include "harness.h"
#include "hessian/hdist.h"
#include <stdlib.h>
#include <string.h>

partition *partition_by_name(const model *m, const char *s)
{
    if (!strcmp(s, "alg3")) return partition_alg3(m, 0);
    if (!strcmp(s, "alg3-value-whole")) return partition_alg3(m, 1);
    if (!strcmp(s, "alg2") || !strcmp(s, "tensors")) return partition_alg2(m);
    if (!strcmp(s, "rows")) return partition_uniform(m, SPLIT_ROWS);
    if (!strcmp(s, "cols")) return partition_uniform(m, SPLIT_COLS);
    if (!strcmp(s, "whole")) {
        partition *p = partition_new();
        partition_add(p, 0, m->P, 1, -1, "whole model");
        return p;
    }
    return partition_read_blocks(s, m);
}

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

partition *partition_sample_types(const partition *p, const int *type, int max_per_type, int **kept)
{
    int nb = p->nblocks, ntypes = 0;
    for (int k = 0; k < nb; k++) ntypes = type[k] + 1 > ntypes ? type[k] + 1 : ntypes;
    int *count = xcalloc((size_t)ntypes + 1, sizeof(int)), *seen = xcalloc((size_t)ntypes + 1, sizeof(int));
    for (int k = 0; k < nb; k++) count[type[k]]++;
    partition *s = partition_new();
    int *idx = xmalloc(((size_t)nb + 1) * sizeof(int)), n = 0;
    for (int k = 0; k < nb; k++) {
        int t = type[k], i = seen[t]++, c = count[t], take = 1;
        if (max_per_type > 0 && c > max_per_type) {
            /* take the i-th of c when it is one of max_per_type evenly spaced: round(j(c−1)/(max−1)) */
            take = 0;
            for (int j = 0; j < max_per_type && !take; j++) {
                long pos = max_per_type == 1 ? 0 : ((long)j * (c - 1) * 2 + (max_per_type - 1)) / (2L * (max_per_type - 1));
                take = pos == i;
            }
        }
        if (take) {
            const block *b = &p->b[k];
            partition_add(s, b->start, b->n, b->stride, b->tensor, b->name);
            idx[n++] = k;
        }
    }
    free(count), free(seen);
    *kept = idx;
    return s;
}

double *exact_block_eigs(model *m, const partition *p, const hessian_opts *o, size_t *off)
{
    hstream_opts so = {p, 1, 0, POOL_MAX};
    hstream *s = hstream_new(m, &so);
    hstream_run_dist(s, m, o);
    off[0] = 0;
    for (int b = 0; b < p->nblocks; b++) off[b + 1] = off[b] + p->b[b].n;
    double *eig = NULL;
    if (dist_rank() == 0) {
        eig = xmalloc((off[p->nblocks] ? off[p->nblocks] : 1) * sizeof(double));
        for (int b = 0; b < p->nblocks; b++) sym_eigvals((int)p->b[b].n, hstream_block(s, b), eig + off[b]);
    }
    hstream_free(s);
    return eig;
}
