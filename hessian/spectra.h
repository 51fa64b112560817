/* spectra — stochastic spectra of symmetric operators, for the diagonal blocks
 * H_bb of a model's Hessian past what the exact engine can hold: Lanczos with
 * full reorthogonalisation (extreme eigenvalues with a residual test, Ritz
 * vectors), Hutchinson's trace estimator, and stochastic Lanczos quadrature
 * (SLQ: the spectral density from Gauss quadrature nodes and weights).
 *
 * Operators. An spectra_op is a family of symmetric operators A_0..A_{n−1}
 * applied to many vectors at once: Y_j = A_{op[j]} X_j. On a model it is the
 * family of its blocks' H_bb, and one call is one panel of the model's hvp
 * (block_hvp): direction j is X_j on block op[j]'s indices and zero elsewhere,
 * and H_bb X_j is row j of the product read on those same indices. A direction
 * only ever meets its own block (H v for v supported on b, read on b, is
 * exactly H_bb v_b), so one R-pass serves as many blocks as the panel has
 * directions, with no cross-talk between them. On dense matrices (the tests)
 * it is a matrix-vector product.
 *
 * Lanczos (Golub & Van Loan §10.1) from a unit q_1: w = A q_j − β_{j−1} q_{j−1},
 * α_j = q_jᵀ w, w −= α_j q_j, then w is orthogonalised against every q_1..q_j
 * twice (classical Gram–Schmidt twice: full reorthogonalisation, so T_m is
 * the exact projection of A to working precision and no ghost eigenvalues
 * appear), β_j = ‖w‖, q_{j+1} = w/β_j. After m steps AQ_m = Q_m T_m +
 * β_m q_{m+1} e_mᵀ with T_m = tridiag(β, α, β). It stops at m = mmax (≤ n),
 * when β_m ≤ 64 ε · (its running estimate of ‖A‖) — the Krylov space is
 * invariant and T_m's eigenvalues are eigenvalues of A — or, with nev > 0,
 * when the nev largest and the nev smallest Ritz values θ_i of T_m have
 * residuals ‖A y_i − θ_i y_i‖ = β_m |z_{m,i}| ≤ tol · max|θ|.
 *
 * Gauss quadrature (Golub & Welsch 1969): with T_m = Z diag(θ) Zᵀ, the nodes
 * θ_k and weights τ_k = Z_{1,k}² give q_1ᵀ f(A) q_1 ≈ Σ_k τ_k f(θ_k), exact for
 * every polynomial f of degree ≤ 2m − 1 (and for all f when the Krylov space
 * is invariant). The weights sum to 1.
 *
 * SLQ (Ubaru, Chen & Saad 2017): n_v Rademacher probes z (entries ±1), each
 * Lanczos from q_1 = z/√n for m steps; the spectral measure of A, μ = (1/n)
 * Σ_i δ(λ_i), is estimated by μ̂ = (1/n_v) Σ_probes Σ_k τ_k δ(θ_k): E[zᵀ f(A) z]/n
 * = tr f(A)/n. Its first moment gives Hutchinson's trace for free:
 * zᵀ A z = n α_1 (the first Lanczos step), tr A ≈ n · mean α_1.
 *
 * Determinism: probe i of operator b has the Rademacher vector of the stream
 * seeded by seed_hash(SEED_PROBES, seed, b, i) (core.h: splitmix64 of the three, not seed + i);
 * the Lanczos runs are grouped into batches (lanczos_batches: consecutive runs
 * up to `panel` of them and a fixed memory cap), and a batch's runs advance in
 * lock step, so every run meets the same panels whatever runs before or
 * after it, and whatever rank of an MPI job computes it (spectra_dist.c).
 */
#ifndef SPECTRA_H
#define SPECTRA_H

#include "core/core.h"
#include "core/model.h"
#include <stdint.h>

/* ---- operators ------------------------------------------------------------------------------ */

typedef struct spectra_op spectra_op;
struct spectra_op {
    int nops;              /* operators A_0 .. A_{nops−1} */
    const size_t *dim;     /* (nops) A_i is dim[i] × dim[i], symmetric */
    int panel;             /* most vectors one apply takes (the driver never passes more) */
    /* Y_j = A_{op[j]} X_j for j < k (k ≤ panel); X_j, Y_j of length dim[op[j]]. */
    void (*apply)(const spectra_op *A, int k, const int *op, const double *const *X, double *const *Y);
    void (*destroy)(spectra_op *A);
    void *ctx;
};
void spectra_op_free(spectra_op *A);

/* Dense symmetric matrices mats[i] (dim[i] × dim[i], row-major; not copied:
 * they must outlive the operator). The tests' reference operator. */
spectra_op *spectra_op_dense(int nops, const double *const *mats, const size_t *dim);

/* The diagonal blocks H_bb of p's blocks (any blocks, strided allowed, need not
 * cover 0..P−1) of m's Hessian at its current parameters and batch: apply is
 * block_hvp in panels of `panel` directions. Holds 2 · panel · P doubles
 * (memory_check'ed). m and p must outlive it. */
spectra_op *spectra_op_blocks(model *m, const partition *p, int panel);
/* Bytes spectra_op_blocks holds. */
double spectra_op_blocks_bytes(size_t P, int panel);

/* The block-restricted Hessian-vector product: Y_j = H_{b_j b_j} X_j for j < k,
 * X_j and Y_j of length b_j->n (in the block's index order), by one call of
 * m->hvp_tensors (or m->hvp when the model has none) on a k × P panel whose
 * row j is X_j on b_j's indices and zero elsewhere, restricted to the tensors
 * b_j spans; row j of the product read on b_j's indices. V and HV: work of k·P
 * doubles each; V must be all zero on entry and is all zero again on return. */
void block_hvp(model *m, int k, const block *const *b, const double *const *X, double *const *Y, double *V, double *HV);

/* Whether name matches pattern: `*` matches any run of characters, `?` any one;
 * every other character (brackets included) only itself. */
int name_matches(const char *pattern, const char *name);
/* The blocks of p whose names match one of the comma-separated patterns
 * (name_matches), in p's order: a new partition, and in *idx (malloc'ed) each
 * block's index in p. User error naming a pattern that matches no block. */
partition *partition_match(const partition *p, const char *patterns, int **idx);

/* ---- Lanczos ---------------------------------------------------------------------------------- */

typedef struct {
    size_t n;              /* dimension */
    int mmax;              /* most steps (≤ n) */
    int steps;             /* steps done: T is steps × steps */
    int done;              /* no further step: mmax reached, invariant subspace, or converged */
    int converged;         /* the residual test passed, or the space is invariant */
    int invariant;         /* stopped because β ≈ 0: T's eigenvalues are eigenvalues of A */
    int nev;               /* > 0: stop when the nev largest and nev smallest Ritz pairs converge */
    int check_every;       /* residual test at every step up to 32, then every this many (4) */
    double tol;            /* their residual bound relative to max|θ| */
    double norm;           /* running estimate of ‖A‖: max_j |α_j| + β_{j−1} + β_j */
    double *Q;             /* (mmax + 1) × n: q_1 .. q_{steps+1} */
    double *alpha, *beta;  /* (mmax): T's diagonal and off-diagonal (beta[j] couples q_{j+1}, q_{j+2}) */
} lanczos;

/* A Lanczos run on an operator of dimension n from v0 (normalised here; user
 * error if v0 = 0); at most mmax steps (capped at n). nev = 0: no residual test. */
lanczos *lanczos_new(size_t n, int mmax, const double *v0, int nev, double tol);
void lanczos_free(lanczos *L);
/* The vector to multiply next, q_{steps+1} (NULL when done). */
const double *lanczos_vector(const lanczos *L);
/* Where a product may be written (the slot of the next vector, length n):
 * lanczos_feed(L, slot) then needs no copy. */
double *lanczos_product_slot(lanczos *L);
/* One step with Aq = A · lanczos_vector(L) (may be lanczos_product_slot(L)). */
void lanczos_feed(lanczos *L, const double *Aq);
/* Bytes a run of n and mmax holds. */
double lanczos_bytes(size_t n, int mmax);

/* Eigen-decomposition of the m × m symmetric tridiagonal matrix with diagonal
 * alpha and off-diagonal beta (m − 1 values): theta ascending; Z (m × m,
 * column k = the eigenvector of theta[k], stored row-major: Z[i*m + k]) or NULL
 * for the eigenvalues alone. LAPACK dstev. */
void tridiag_eig(int m, const double *alpha, const double *beta, double *theta, double *Z);
/* Gauss quadrature of the leading m × m part of a tridiagonal (m ≤ its size):
 * nodes θ_k ascending and weights τ_k = Z_{1,k}² (sum 1). */
void gauss_quadrature(int m, const double *alpha, const double *beta, double *nodes, double *weights);
/* The Ritz values of L (ascending, L->steps of them) with their residual norms
 * β_m |z_{m,k}| (for a unit Ritz vector); vectors (steps × n, NULL: none): the
 * Ritz vectors y_k = Q_m z_k, unit, as rows in theta's order. */
void lanczos_ritz(const lanczos *L, double *theta, double *resid, double *vectors);

/* Advance every run L[i] (on operator op[i] of A, of dimension L[i]->n) to its
 * end: in rounds, the current vectors of the unfinished runs, in index order,
 * A->panel per apply call. */
void lanczos_run(const spectra_op *A, int nrun, lanczos *const *L, const int *op);

/* ---- probes ----------------------------------------------------------------------------------- */

/* z (length n) ±1 from the splitmix64 stream of `seed`, 64 entries per draw. */
void rademacher(double *z, size_t n, uint64_t seed);
/* z (length n) N(0, 1) from the splitmix64 stream of `seed` (Box–Muller). A
 * Rademacher vector is exactly orthogonal to (1, ..., 1) with probability
 * C(n, n/2)/2^n (27% at n = 8, 7% at n = 128) — the null vector of a block's
 * shift invariances (a softmax bias, a row reading a LayerNorm output with
 * gain 1 and bias 0) — and Lanczos from it then never sees that eigenvalue; a
 * Gaussian start vector is orthogonal to no fixed vector (with probability 1). */
void gaussian_probe(double *z, size_t n, uint64_t seed);

/* ---- Hutchinson ------------------------------------------------------------------------------- */

/* Mean and standard error (sd over the samples, divisor n − 1, / √n; NAN for
 * n < 2) of n samples. */
void mean_se(const double *x, int n, double *mean, double *se);
/* tr A_b ≈ mean over `probes` Rademacher z of zᵀ A_b z, for every operator b;
 * samples (nops × probes, NULL: not kept), trace and se (nops) out. Unbiased:
 * E[zᵀAz] = tr A; exact for diagonal A (z_i² = 1). */
void hutchinson(const spectra_op *A, int probes, uint64_t seed, double *samples, double *trace, double *se);
/* Only the samples (nops × probes) of the panels first, first + step, ... (panel
 * c holds samples c·A->panel ..; the others untouched). */
void hutchinson_samples(const spectra_op *A, int probes, uint64_t seed, double *samples, int first, int step);

/* ---- SLQ ---------------------------------------------------------------------------------------- */

/* The Lanczos tridiagonals of n_v probes × m steps for every operator: probe i
 * of operator b runs from the Rademacher z of seed_hash(SEED_PROBES, seed, b,
 * i), at most min(m, dim_b) steps. Layout: run r = b·probes + i; its count[r] steps in
 * alpha[r·steps ..] and beta[r·steps ..] (beta[r·steps + j] couples steps j
 * and j + 1; the rest of the row is 0). Any m' ≤ count[r] prefix is the m'-step
 * run from the same probe (full reorthogonalisation makes the prefix exact). */
typedef struct {
    int nops, probes, steps;
    size_t *dim;               /* (nops) */
    int *count;                /* (nops · probes) */
    double *alpha, *beta;      /* (nops · probes · steps) */
} slq_data;

/* The batches of lanczos_run that SLQ and the Lanczos extremes use: runs
 * first.. of consecutive indices, at most `panel` runs and at most basis_bytes
 * of Lanczos bases (but always one run), so the batches depend only on the
 * sizes, the panel and the cap. start (nbatch + 1) out (malloc'ed); returns nbatch. */
int lanczos_batches(int nrun, const size_t *dim, int mmax, int panel, double basis_bytes, int **start);

/* Options of slq_run and extremes_run. */
typedef struct {
    int probes, steps;     /* n_v and m */
    uint64_t seed;
    double basis_bytes;    /* cap on the bases a batch holds (default 1 GB) */
} slq_opts;
slq_opts slq_defaults(void);   /* 4 probes, 30 steps, seed 1, 1 GB */

/* Runs the batches `first`, first + step, ... (every batch: 0, 1) into d (made
 * by slq_data_new; rows of other batches untouched). */
void slq_data_init(slq_data *d, const spectra_op *A, int probes, int steps);
void slq_data_free(slq_data *d);
void slq_run_batches(slq_data *d, const spectra_op *A, const slq_opts *o, int first, int step);
/* SLQ over all batches (one process). */
void slq_run(slq_data *d, const spectra_op *A, const slq_opts *o);

/* The estimated spectral measure of operator b from the first nv probes and m
 * steps (m ≤ d->steps; a probe with fewer steps uses all it has): nodes and
 * weights (room for nv · m each; the weights sum to 1 over all of them, each
 * probe's to 1/nv); returns the number of nodes. */
int slq_measure(const slq_data *d, int b, int nv, int m, double *nodes, double *weights);
/* Hutchinson from the same probes: tr A_b ≈ dim_b · mean of α_1 over the first nv. */
void slq_trace(const slq_data *d, int b, int nv, double *trace, double *se);

/* Summary of a discrete measure (nodes, weights; weights sum to 1): extremes
 * of the nodes that carry weight, |θ|min over them, κ = max|θ| / min|θ|, the
 * weight on θ < −zero and on |θ| ≤ zero. */
typedef struct {
    double lmin, lmax, absmin, absmax, kappa, neg_mass, zero_mass, mean;
} measure_stats;
measure_stats measure_stats_of(const double *nodes, const double *weights, int n, double zero);

/* Wasserstein-1 distance ∫|F − G| between two discrete probability measures
 * (x, wx) and (y, wy), weights each summing to 1 (need not be sorted). */
double wasserstein1(const double *x, const double *wx, int nx, const double *y, const double *wy, int ny);

/* Gaussian-smoothed density of a measure on a grid: linear (log10 = 0):
 * ρ(x) = Σ_k w_k φ((x − θ_k)/σ)/σ; log (log10 = 1): the density of log10|θ|,
 * ρ(t) = Σ_{|θ_k| > zero} w_k φ((t − log10|θ_k|)/σ)/σ (the nodes at |θ| ≤ zero
 * are left out: measure_stats' zero_mass). φ the standard normal density. */
void smoothed_density(double *rho, const double *grid, int ngrid, const double *nodes, const double *weights, int n,
                      double sigma, int log10_scale, double zero);

/* ---- Lanczos extremes per operator ---------------------------------------------------------- */

/* For every operator b: Lanczos from the Gaussian z of seed_hash(SEED_PROBES, seed, b,
 * UINT64_MAX) (independent of the SLQ probes; Gaussian: see gaussian_probe) for at most `mmax` steps
 * (≤ dim_b), stopping when the nev largest and nev smallest Ritz pairs have
 * residual ≤ tol · max|θ|. Out per operator: the nev smallest and nev largest
 * Ritz values (ascending, 2·nev; fewer when dim_b < 2·nev: NAN-padded) and
 * their residual norms, steps taken. vectors: NULL, or per operator b room for
 * 2·nev · dim_b values at vec_off[b] (the unit Ritz vectors of the values, as rows). */
typedef struct {
    int nops, nev;
    int *steps;               /* (nops) */
    int *converged;           /* (nops) 1 if the residual test passed (or the space became invariant) */
    double *theta, *resid;    /* (nops · 2·nev) */
} extremes_data;
void extremes_init(extremes_data *e, int nops, int nev);
void extremes_free(extremes_data *e);
void extremes_run_batches(extremes_data *e, const spectra_op *A, int mmax, double tol, const slq_opts *o,
                          double *vectors, const size_t *vec_off, int first, int step);
void extremes_run(extremes_data *e, const spectra_op *A, int mmax, double tol, const slq_opts *o, double *vectors,
                  const size_t *vec_off);

/* ---- over the ranks of an MPI job (spectra_dist.c; core/dist.h) ------------------------------
 * Rank r of N computes the batches (panels for Hutchinson) r, r + N, ...; ranks
 * 1..N−1 send their rows to rank 0, which copies them in. Every run is computed
 * by exactly one rank in the batch one process makes, so rank 0's results are
 * bitwise one process's (for a model whose hvp of a direction does not depend
 * on the thread count). Every rank must call; only rank 0 holds the results. */
void slq_run_dist(slq_data *d, const spectra_op *A, const slq_opts *o);
void extremes_run_dist(extremes_data *e, const spectra_op *A, int mmax, double tol, const slq_opts *o, double *vectors,
                       const size_t *vec_off);
void hutchinson_dist(const spectra_op *A, int probes, uint64_t seed, double *samples, double *trace, double *se);

#endif
