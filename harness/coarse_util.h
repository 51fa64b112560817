/* coarse_util — what the extensions coarse and value_split share (harness/coarse_util.c):
 * the partitions coarser than (or misaligned with) the paper's Algorithm 3, a loss-spike
 * counter, and the capped loss share the two programs compare runs with. On top of
 * harness/ttexp.h.
 *
 * Partitions (all cover 0..P-1 exactly once, stride 1):
 *   whole         one block for the whole model;
 *   merged heads  Algorithm 3 with query and key one block per tensor (not per head);
 *   random layout Algorithm 3's block sizes, in a uniformly random order, laid one after
 *                 the other over [0, P): the same number and sizes of blocks, boundaries
 *                 that need not fall on a tensor, row or head.
 */
#ifndef COARSE_H
#define COARSE_H

#include "core/model.h"
#include "harness/ttexp.h"

/* One block [0, P) (tensor -1). */
partition *partition_whole(const model *m);
/* Algorithm 3 (value by output neurons) with every query and key tensor as one block. */
partition *partition_merged_heads(const model *m);
/* ref's block sizes in a uniformly random order (rng), laid contiguously from 0: block k
 * starts where block k-1 ends; tensor -1, named "random[k]". ref must cover [0, P) (DIE
 * otherwise: the sizes would not add up). */
partition *partition_random_layout(const partition *ref, size_t P, gsl_rng *rng);

/* Loss spikes of a training-loss curve: the number of steps t whose loss exceeds `factor`
 * times the running minimum of the steps before it, min_{s<t} loss[s]. Steps whose loss
 * (or every earlier one) is not finite are skipped: a diverged run stops, and divergence is
 * counted apart. factor > 1. */
#define COARSE_SPIKE_FACTOR 1.5
long count_spikes(const double *loss, long n, double factor);

/* The share of a reference's progress that a run loses, capped at 1:
 *     min(1, (L − L_ref) / (L_0 − L_ref)),
 * 1 also when L is not finite (the run diverged: no better than not training); NAN when
 * L_0 <= L_ref or L_ref or L_0 is not finite (no progress to share). */
double capped_loss_share(double L, double L_ref, double L0);

#endif
