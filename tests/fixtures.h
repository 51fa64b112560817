/* fixtures.h — small models on random data, shared by the tests and the
 * benchmarks (linked into every program of tests/ and bench/). Each is fully
 * determined by its arguments: the same call gives the same model, bit for bit. */
#ifndef FIXTURES_H
#define FIXTURES_H

#include "mlp/mlp.h"
#include "tinytransformer/tt.h"

/* An MLP of cfg's shape (cfg->seed is not used) with its parameters initialised
 * from the first draw of rng_new(seed), on N samples of standard normal inputs
 * and uniform labels drawn next from the same stream. */
model *fixture_mlp(const mlp_config *cfg, int N, unsigned long seed);

/* Non-trivial Transformer parameters from r: gains 1 + N(0, 0.3²), biases
 * N(0, 0.2²), weights N(0, 0.5²) (large enough that attention is not uniform). */
void fixture_tt_params(model *m, gsl_rng *r);

/* A Transformer of shape c with fixture_tt_params from rng_new(seed), then a
 * batch of B sequences of uniform tokens from the same stream. */
model *fixture_tt(const tt_config *c, int B, unsigned long seed);

/* The small Transformer of the streaming tests: V 5, C 8, 2 heads, M 12, one
 * layer, T 4, biases; fixture_tt_params, then 6 sequences of a Markov chain
 * (order 2, 2 successors). */
model *fixture_tt_markov(void);
/* B sequences of the order-2 Markov chain with 2 successors (chain seed
 * chain_seed) drawn with r, set as m's batch (m of shape c). */
void fixture_markov_batch(model *m, const tt_config *c, int B, unsigned long chain_seed, gsl_rng *r);

/* The Gauss–Newton matrix of a sequence model's mean cross-entropy over N
 * predictions of V classes, independently of its R-operator: Jᵀ S J (P×P,
 * malloc'ed), J = ∂logits/∂θ by central differences (step 1e-5) of
 * forward(m, logits, NULL) (tt_forward, llama_forward) and S the softmax
 * Hessian per prediction, (diag(p) − p pᵀ)/N at the base logits. */
double *fixture_gn_by_differences(model *m, double (*forward)(model *, double *, double *), size_t N, int V);

#endif
