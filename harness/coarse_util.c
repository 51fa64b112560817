/* coarse_util — partitions coarser than Algorithm 3, the loss-spike counter and the
 * capped loss share of the extensions coarse and value_split (harness/coarse_util.h). */
#include "harness/coarse_util.h"
#include "core/core.h"
#include "core/model.h"
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

partition *partition_whole(const model *m)
{
    partition *p = partition_new();
    partition_add(p, 0, m->P, 1, -1, "whole model");
    return p;
}

partition *partition_merged_heads(const model *m)
{
    partition *a3 = partition_alg3(m, 0), *p = partition_new();
    int last = -1;
    for (int k = 0; k < a3->nblocks; k++) {
        const block *b = &a3->b[k];
        tensor_role r = b->tensor >= 0 ? m->tensors[b->tensor].role : ROLE_COUNT;
        if (r == ROLE_QUERY || r == ROLE_KEY) {
            if (b->tensor != last) partition_add_tensor(p, m, b->tensor, SPLIT_WHOLE);
            last = b->tensor;
        } else {
            partition_add(p, b->start, b->n, b->stride, b->tensor, b->name);
        }
    }
    partition_free(a3);
    partition_check_cover(p, m->P, "merged-heads partition");
    return p;
}

partition *partition_random_layout(const partition *ref, size_t P, gsl_rng *rng)
{
    size_t *n = xmalloc((size_t)ref->nblocks * sizeof(size_t)), total = 0;
    for (int k = 0; k < ref->nblocks; k++) total += n[k] = ref->b[k].n;
    if (total != P) DIE("random layout: the blocks hold %zu entries, not P = %zu", total, P);
    gsl_ran_shuffle(rng, n, (size_t)ref->nblocks, sizeof(size_t));
    partition *p = partition_new();
    size_t at = 0;
    char name[32];
    for (int k = 0; k < ref->nblocks; k++) {
        snprintf(name, sizeof name, "random[%d]", k);
        partition_add(p, at, n[k], 1, -1, name);
        at += n[k];
    }
    free(n);
    return p;
}

long count_spikes(const double *loss, long n, double factor)
{
    if (!(factor > 1)) DIE("count_spikes: factor %g must be > 1", factor);
    double run_min = INFINITY;
    long spikes = 0;
    for (long t = 0; t < n; t++) {
        if (!isfinite(loss[t])) continue;
        if (isfinite(run_min) && loss[t] > factor * run_min) spikes++;
        if (loss[t] < run_min) run_min = loss[t];
    }
    return spikes;
}

double capped_loss_share(double L, double L_ref, double L0)
{
    if (!isfinite(L_ref) || !isfinite(L0) || !(L0 > L_ref)) return NAN;
    if (!isfinite(L)) return 1;
    return fmin(1, (L - L_ref) / (L0 - L_ref));
}
