/* spectra's per-type sample of blocks (spectra_util.h). */
#include "tools/spectra_util.h"
#include "core/core.h"
#include "core/model.h"
#include <stdlib.h>

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
