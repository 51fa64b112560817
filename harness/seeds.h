/* seeds — the random streams of a run, from the user's two seeds (seeds.c). */
#ifndef HARNESS_SEEDS_H
#define HARNESS_SEEDS_H

#include "core/core.h"

/* Every random stream of a run comes from the user's two seeds, in one place,
 * each purpose through its own hash (core's seed_hash), so that no two seeds,
 * purposes or instances share a sequence:
 *   --seed S       the run: model initialisation, training batches and
 *                  shuffles (another batch order k: instance k of the batch
 *                  stream), random baselines, random draws of tensors or blocks;
 *   --data-seed D  the data: the Markov chain or synthetic image set, and the
 *                  fixed held-out sequences, on which the Transformer's
 *                  Hessians are taken too.
 * So a second --seed with the same --data-seed trains another model on the same
 * data and is judged on the same held-out set; --data-seed changes the data; and
 * D = S (as make verdicts runs) still draws data and weights from different streams. */
typedef enum { SEED_INIT, SEED_BATCHES, SEED_BASELINES, SEED_DRAWS, SEED_DATA, SEED_HELD_OUT } seed_stream;
/* The generator seed of stream s of a run seeded with base (instance 0). */
unsigned long seed_for(unsigned long base, seed_stream s);
/* Instance k of stream s (k = 0 is seed_for's). */
unsigned long seed_for_nth(unsigned long base, seed_stream s, unsigned long k);

#endif
