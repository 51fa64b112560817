/* hessian — the exact-Hessian engine and the per-block analysis, for any model
 * that offers the interface of core/model.h (the MLP, the tiny Transformer, test
 * quadratics). The engine never knows which model it runs on.
 *
 * Assembly: H is filled column panel by column panel. A panel of k
 * columns j0..j0+k-1 comes from the model's hess_cols fast path when it has one,
 * else from its hvp (Pearlmutter's R-operator) on the k unit vectors e_j0.. — the
 * k directions go through the model together, so the work is BLAS-3. H is
 * symmetric, so column j is row j: a panel is written as k rows of H (k×P,
 * row-major), and H is stored row-major P×P, float64, as numpy loads it.
 * A column range j0..j1 can be computed alone (a separate process, a Slurm array
 * task), written as a .npy of shape (j1-j0, P), and the pieces merged.
 *
 * Blocks (core/model.h partitions): diagonal blocks H_bb of a partition,
 * their spectra, κ = |λ|max/|λ|min with the count of negative eigenvalues (NN
 * blocks can be indefinite), τ = Σ|diag|/Σ|all| (paper eq. 2), the
 * partition's mass ratio Σ_b ‖H_bb‖_F² / ‖H‖_F², its block structure without
 * the diagonal (the off-diagonal excess over random blocks) with a permuted
 * control, and Principle 1's split of a tensor.
 *
 * κ(D H_b) with D = diag(d), d = 1/(√v̂ + ε) from Adam's v̂, two ways:
 * (a) the eigenvalues of the symmetric D^½ H_b D^½, which has the spectrum of
 *     D H_b (the quantity that governs preconditioned GD; the default),
 *     κ = |λ|max/|λ|min, negative count reported;
 * (b) the 2-norm condition number σmax/σmin of D H_b (numpy's cond).
 */
#ifndef HESSIAN_H
#define HESSIAN_H

#include "core/core.h"
#include "core/model.h"

/* ---- assembly ------------------------------------------------------------------- */

/* Same contract as model.hess_cols: columns j0..j0+k-1 of H into out (k×P). */
typedef void (*hess_cols_fn)(model *m, size_t j0, int k, double *out);

typedef struct {
    int panel;            /* columns per panel (default 128) */
    int use_hess_cols;    /* 1 (default): m->hess_cols when the model has one; 0: hvp on unit vectors */
    int symmetric;        /* 1 (default): for the full H, the model's hess_cols_lower when it has one
                             (lower rows only, the rest mirrored; about half the work); 0: every
                             entry computed, so that hessian_asymmetry means something */
    const char *label;    /* progress label (default "hessian") */
} hessian_opts;
hessian_opts hessian_defaults(void);

/* Bytes the engine holds for `ncols` columns of H: the columns themselves plus
 * one panel of unit directions (the model's own workspace comes on top). */
double hessian_bytes(size_t P, size_t ncols, int panel);

/* Columns j0..j1-1 of H (= rows, by symmetry) into out ((j1-j0)×P). */
void hessian_cols(model *m, size_t j0, size_t j1, const hessian_opts *o, double *out);
/* The full H (P×P, malloc'ed), after printing its memory and checking it fits. */
double *hessian_full(model *m, const hessian_opts *o);
/* Columns j0..j1-1 streamed panel by panel into a .npy of shape (j1-j0, P),
 * with "<path>.range" recording j0, j1 and P for hessian_merge; memory: one panel. */
void hessian_write_cols(model *m, size_t j0, size_t j1, const hessian_opts *o, const char *path);
/* Stacks column-range files, in any order, into H (P×P, malloc'ed); *P_out = P.
 * Each part's range comes from its .range file (or its H_cols_<j0>_<j1>.npy
 * name); user error on a gap, an overlap, a missing part or a disagreeing P. */
double *hessian_merge(int nfiles, const char *const *paths, size_t *P_out);

/* max|H − Hᵀ| / max|H| (0 for H = 0). */
double hessian_asymmetry(size_t P, const double *H);

/* ---- blocks ------------------------------------------------------------------------- */

/* H_ab for blocks a (rows) and b (cols) of H (P×P): a->n × b->n, malloc'ed.
 * block_extract(H, P, b) = H_bb. */
double *block_cross(const double *H, size_t P, const block *a, const block *b);
double *block_extract(const double *H, size_t P, const block *b);
/* H_tt: the diagonal block of tensor t of m ((size, size), malloc'ed). */
double *tensor_hessian(const double *H, size_t P, const model *m, int t);
/* Σ_b ‖H_bb‖_F² / ‖H_SS‖_F², S the union of p's blocks (all of 0..P-1 for a
 * partition of the model; a partition of one tensor gives the ratio inside it). */
double mass_ratio(const double *H, size_t P, const partition *p);
/* Baseline for mass_ratio: the same block sizes over a uniformly random
 * permutation of S; mean and standard deviation over `reps` draws. */
void mass_ratio_random(const double *H, size_t P, const partition *p, gsl_rng *rng, int reps,
                       double *mean, double *sd);

/* ---- block structure without the diagonal ----
 * A random permutation of S keeps every diagonal entry on the diagonal, so the
 * diagonal lies inside the blocks of any partition, random or not: it is no
 * evidence of block structure. These statistics use the off-diagonal entries
 * (i ≠ j, both in S) only:
 *   O = Σ H_ij² over them, I = the part with i and j in one block, share s = I/O;
 *   chance q = Σ_b n_b(n_b − 1) / (|S|(|S| − 1)): the exact mean of s when the
 *     blocks (same sizes) are laid on a uniformly random permutation of S (each
 *     pair i ≠ j then falls in one block with probability q, whatever H is);
 *   excess e = (s − q)/(1 − q): 0 for random blocks (in the mean), 1 when all the
 *     off-diagonal mass is inside the blocks, < 0 when the blocks avoid it.
 *     Equivalently e = 1 − ε/ε_rand: ε the squared mass the block-diagonal
 *     approximation of H_SS loses, ε_rand its mean for random blocks.
 *   enrichment s/q ("× random"; at most 1/q, so it grows with the block count).
 * The mass ratio m = (D + I)/(D + O), D = Σ_i H_ii², has the random mean
 * r = (D + qO)/(D + O), so (m − r)/(1 − r) = e: an excess over a random mean has
 * no diagonal in it, while m itself and m/r have.
 * Conventions: O = 0 (a diagonal H_SS): s = q, e = 0 (no block structure to
 * find); q = 1 (one block: nothing can fall outside): s = 1, e = NAN;
 * q = 0 (blocks of one entry) and O > 0: s = 0, e = 0. */
typedef struct {
    double diag;          /* D = Σ_i H_ii² over S */
    double offdiag;       /* O */
    double inblock;       /* I */
    double share;         /* s = I/O */
    double chance;        /* q */
    double excess;        /* e */
} offdiag_stats;
offdiag_stats offdiag_structure(const double *H, size_t P, const partition *p);
/* The same per block (its contrast with the rest of S): for block b, s_b = the
 * share of the off-diagonal mass of b's rows (columns in S) inside b, its chance
 * value q_b = (n_b − 1)/(|S| − 1) (the ratio of the means over random subsets of S
 * of b's size), and e_b = (s_b − q_b)/(1 − q_b) into excess[b] (nblocks values;
 * 0 when b's rows have no off-diagonal mass, NAN when b is all of S). */
void offdiag_block_excess(const double *H, size_t P, const partition *p, double *excess);
/* offdiag_structure of p's blocks laid on a uniformly random permutation of S
 * (one draw): the same as on H_SS with its rows and columns randomly permuted
 * (the negative control), without a copy of H. */
offdiag_stats offdiag_structure_random(const double *H, size_t P, const partition *p, gsl_rng *rng);
/* 1 if every block of `fine` lies inside one block of `coarse` (partitions of
 * the same S within 0..P-1). */
int partition_refines(const partition *fine, const partition *coarse, size_t P);
/* offdiag_structure of p counted inside the blocks of `within`, a partition of
 * the same S that p refines (DIE otherwise): O and I over the pairs i ≠ j in
 * one block of `within` only; chance q = Σ_c O_c q_c / Σ_c O_c with
 * q_c = Σ_{b⊂c} n_b(n_b − 1) / (m_c(m_c − 1)) (m_c the size of block c): the
 * exact mean of s when p's blocks are laid on a random permutation inside each
 * block of `within`. A split nested in a block-diagonal coarser one inherits
 * part of its excess over all of S; inside the coarser blocks it has to show
 * structure of its own. `within` of one block covering S gives offdiag_structure. */
offdiag_stats offdiag_structure_within(const double *H, size_t P, const partition *p, const partition *within);
/* The mean ratio m (the old statistic) follows from the same sums: (D + I)/(D + O); 1 when H_SS = 0. */
double offdiag_mass_ratio(const offdiag_stats *st);
/* A (n×n) with its rows and columns permuted by a uniformly random π:
 * out_ij = A_π(i)π(j) (malloc'ed). Every entry is kept and the diagonal stays
 * the diagonal; any block structure of the index order is scrambled (the
 * negative control of the statistics above). */
double *sym_permuted(const double *A, size_t n, gsl_rng *rng);
/* The diagonal's share d of ‖A‖_F² (A n×n; 1 when A = 0) and its excess over
 * 1/n, the share when A's n² entries are exchangeable: (d − 1/n)/(1 − 1/n)
 * (NAN for n = 1). */
double diag_share(size_t n, const double *A);
double diag_excess(size_t n, const double *A);
/* The same inside the blocks of `within` (a partition of S ⊆ 0..P-1): d = D/(D + O_w),
 * O_w the off-diagonal mass inside the blocks, against n/Σ_c m_c², its value when
 * the entries inside each block are exchangeable: (d − κ)/(1 − κ); NAN when
 * every block has one entry. */
double diag_excess_within(const double *H, size_t P, const partition *within);

/* ---- Principle 1 on one tensor ----
 * "partition parameters into blocks such that each parameter block is
 * associated with the smallest dense sub-block in Hessian" (paper, Principle 1).
 * On tensor t's diagonal block H_tt, the candidate splits of tensor_splits()
 * (whole, heads, rows, cols, entries) are scored, scale-free, 0 for no
 * structure and 1 for exact:
 *   heads, rows, cols  the off-diagonal excess e of the split: H_tt is
 *                      block-diagonal along the split beyond chance;
 *   entries            the diagonal excess: one-entry blocks are the smallest
 *                      dense sub-blocks when H_tt is near-diagonal (the
 *                      off-diagonal excess of entries is 0 by construction);
 *   whole              1.
 * A split holds when its score is ≥ level (1/2: the blocks keep at least half
 * of the off-diagonal mass random blocks lose, ε ≤ ε_rand/2; for entries, the
 * diagonal holds at least half of what it lacks under exchangeable entries).
 * Principle 1 descends from whole: at each step the candidates that refine the
 * current split (strictly finer, every block inside a current block) are
 * scored inside the current blocks (offdiag_structure_within,
 * diag_excess_within); the coarsest that holds (ties: the larger score, then
 * the earlier candidate) becomes the current split; when none holds, the
 * current split is the answer: its blocks have no block structure of their
 * own, they are the smallest dense sub-blocks. Coarsest first, because a split
 * nested in a holding coarser one inherits part of its excess (query's rows
 * inside its heads). */
typedef struct {
    int n;                                     /* candidates */
    split_kind split[SPLIT_CANDIDATES_MAX];
    int nblocks[SPLIT_CANDIDATES_MAX];
    offdiag_stats st[SPLIT_CANDIDATES_MAX];    /* of each split over all of H_tt */
    double mass[SPLIT_CANDIDATES_MAX];         /* the old mass ratio m (diagonal included) */
    double hold[SPLIT_CANDIDATES_MAX];         /* the score over all of H_tt (the descent's first step) */
    double diag_share;                         /* of ‖H_tt‖² */
} split_candidates;
/* Htt: tensor t's diagonal block (n×n, n = its size), e.g. from tensor_hessian. */
void split_candidates_of(const double *Htt, const model *m, int t, split_candidates *c);
/* The index into c of the split Principle 1 picks at `level` (in (0, 1]) on the
 * same Htt; *score (if not NULL): the score it held with inside its parent
 * split (1 for whole). */
int principle1_pick(const double *Htt, const model *m, int t, const split_candidates *c, double level,
                    double *score);

typedef struct {
    size_t n;
    spectrum s;           /* eigen extremes of H_bb, κ = |λ|max/|λ|min, negative count */
    double tau;           /* τ(H_bb) */
    double fro2;          /* ‖H_bb‖_F² */
    double row_mass;      /* ‖H_bb‖_F² / ‖H_{b,:}‖_F²: the share of the block's rows inside the block */
    spectrum sd;          /* of D^½ H_bb D^½ (κ(D H_b), eigenvalue version); all NAN without D */
    double kappa_dh_svd;  /* σmax/σmin of D H_bb (2-norm version); NAN without D */
} block_metrics;
/* d: the diagonal of D over all P parameters (see adam_diag), or NULL. */
block_metrics block_analyze(const double *H, size_t P, const block *b, const double *d);
/* The same from the block itself, Hb = H_bb (n×n), and rows = ‖H_{b,:}‖_F², the
 * squared mass of the block's full rows (block_analyze and hstream_block_metrics
 * both end here). */
block_metrics block_metrics_of(const double *Hb, const block *b, double rows, const double *d);

/* d = 1/(√v̂ + ε), entrywise (length P). */
void adam_diag(size_t P, const double *vhat, double eps, double *d);
/* Spectrum of D^½ A D^½ for symmetric A (n×n) and d > 0 (= the eigenvalues of D A). */
spectrum scaled_spectrum(int n, const double *A, const double *d);
/* σmax/σmin of D A. */
double kappa_scaled_svd(int n, const double *A, const double *d);

/* ---- heatmaps for gnuplot ---------------------------------------------------------- */

typedef enum { POOL_MAX, POOL_MEAN } pool_kind;
pool_kind pool_parse(const char *name);   /* "max" | "mean"; user error otherwise */

/* |A| for A (rows×cols, leading dimension lda) pooled to at most max_px pixels
 * per side: factor f = ceil(max(rows, cols) / max_px), pixel (a, b) = max or mean
 * of |A| over its f×f cell (edge cells may be smaller). Returns the image
 * (*pr × *pc, malloc'ed) and f. */
double *heatmap_pool(const double *A, size_t rows, size_t cols, size_t lda, int max_px, pool_kind k,
                     size_t *pr, size_t *pc, size_t *factor);
/* gnuplot's ASCII `matrix` format, comma-separated: '#' comment lines (shape,
 * factor, `note`), then pr lines of pc values. Plot with `set datafile separator
 * ","` and `matrix with image`: pixel (a, b) at x = b, y = a. */
void heatmap_write(const char *path, const double *img, size_t pr, size_t pc, size_t factor, const char *note);
/* CSV "pixel,index,name": for each stride-1 block of p (in order) after the
 * first, the boundary before it at pixel coordinate index/f − 0.5, for lines
 * between pixels. offset is subtracted from indices (a heatmap of a sub-matrix). */
void heatmap_write_bounds(const char *path, const partition *p, size_t offset, size_t factor);

/* ---- κ with the null space deflated (kappa.c) ----------------------------------------
 * A block H_b of a network's Hessian can have exact null directions (a model
 * invariance: tt_null_directions lists the Transformer's), so |λ|max/|λ|min
 * is infinite by construction. deflate() removes them: the given directions
 * N (orthonormalised), then every eigenvalue of H_b on their complement with
 * |λ| ≤ tol·|λ|max (numerically null); κ = |λ|max/|λ|min over the rest.
 * κ(D H_b) on the same complement Q: D H_b has H_b's null space and its
 * nonzero eigenvalues are those of (QᵀH_bQ)(QᵀDQ) (kappa.c derives it; not
 * those of Qᵀ D^½ H_b D^½ Q, whose null space D^−½N is not N). */
/* A κ above this is not measurable: |λ|min below 1e-12 |λ|max is within a few
 * digits of the round-off of the block's entries. */
#define KAPPA_MEASURABLE 1e12

typedef struct {
    int n;            /* block size */
    int nknown;       /* given null directions kept (rank of N) */
    int nnum;         /* further eigenvalues found null (|λ| ≤ tol·|λ|max) */
    int m;            /* the complement: n − nknown − nnum */
    double absmax;    /* |λ|max of the whole block */
    double resid;     /* max over the given directions v (unit) of ‖H_b v‖/|λ|max: 0 if exactly null */
    spectrum s;       /* H_b on the complement (all NAN when m = 0) */
    double *Q;        /* (n × m) orthonormal basis of the complement, H_b's eigenvectors there */
    double *mu;       /* (m) the eigenvalues of H_b on it, ascending */
} deflation;
/* H_b (n×n, symmetric), k given null directions as rows of N (k×n; any
 * spanning set, NULL for k = 0), tol relative to |λ|max. */
deflation deflate(int n, const double *A, int k, const double *N, double tol);
void deflation_free(deflation *df);
/* The spectrum of D H_b (d > 0, length n) on the complement of df; κ = ∞
 * (the rest NAN) when d spreads so far that QᵀDQ is not positive definite to
 * working precision. */
spectrum deflated_scaled_spectrum(const deflation *df, const double *d);
/* Paper Fig. 4's D: D = diag(1/|g|), g = H_b x, x ~ N(0, I/√n) (variance
 * 1/√n; its scale cancels). The median over `draws` draws of κ(D H_b)/κ(H_b),
 * both on df's complement; a draw with some g_i = 0 is skipped and counted.
 * NAN when every draw was skipped or df has no complement. */
double fig4_ratio(int n, const double *A, const deflation *df, int draws, gsl_rng *r, int *skipped);
/* The same readings on a block's diagonal part diag(A) (τ = 1, where the paper says
 * D_Adam works): κ = max|a_ii|/min|a_ii| (∞ if some a_ii = 0); ratio_fig4 = the median over
 * `draws` draws of κ(D diag(A))/κ with the Fig. 4 recipe on diag(A)'s own gradient
 * g = diag(A) x (so D diag(A) = diag(sign(a_ii)/|x_i|): max|x|/min|x| over κ, whatever A;
 * x ~ N(0, 1) from r, n draws each); ratio_d = κ(D diag(A))/κ for the given D (d > 0,
 * length n). NAN where undefined. */
typedef struct {
    double kappa, ratio_fig4, ratio_d;
} diag_ratios;
diag_ratios diag_part_ratios(int n, const double *A, const double *d, int draws, gsl_rng *r);
/* Orthonormal basis of the span of the k rows of V (k×n) into out (rows of n;
 * room for min(k, n)); rank by the tolerance n·ε·σmax. Returns the rank. */
int orthonormal_rows(int k, int n, const double *V, double *out);

#endif
