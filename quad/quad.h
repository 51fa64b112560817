/* quad — random quadratic problems of the paper's motivation section.
 *
 * 1. Rotated random PD matrices (paper Fig. 4; appendix "Configurations for
 *    Figure 4"): d(d-1)/2 angles θ_ij ~ U[-π/2, π/2], scaled by R;
 *    Q = Π P_ij applied in (i, j) loop order to the identity; H = Q Λ Qᵀ with
 *    Λ = diag(κ, 1, …, 1). Because Λ - I has rank one, H = I + (κ-1) q qᵀ with
 *    q = Q e₁, and everything the sweep needs (τ, g = Hx, κ(D_Adam H) both ways)
 *    is O(d) or O(d²) from q; the dense paths are kept for tests.
 * 2. The block-diagonal quadratic of Fig. 3: Haar-random Q_l,
 *    eigenvalues drawn i.i.d. from given sets, H = blockdiag(H_1, …).
 * 3. f(w) = ½ wᵀHw with its optimal constant steps, whole and per block (the
 *    shared optimizers run on it in experiments/fig3_util.c).
 * The claims' statistics live here too: Fig. 4's per-curve trend (Spearman of
 * r against τ, and with τ shuffled) and Fig. 3's gap between two loss traces.
 *
 * Matrices are float64, row-major; outputs first, sizes last.
 */
#ifndef QUAD_H
#define QUAD_H

#include "core/core.h"
#include "core/model.h"
#include <stddef.h>

/* ---- the paper's rotated generator ------------------------------------------------ */

/* Number of angles d(d-1)/2, stored packed in (i, j>i) loop order. */
size_t quad_nangles(int d);
/* Draw θ_ij ~ U[-π/2, π/2) in the paper's (i, j) loop order. */
void quad_draw_angles(double *theta /* (d(d-1)/2) */, gsl_rng *rng, int d);
/* Q = P_{d-2,d-1} ⋯ P_{0,2} P_{0,1} I with angles R·θ. Each P_ij acts on rows i
 * and j only: row_i ← c·row_i + s·row_j, row_j ← -s·row_i + c·row_j. O(d³). */
void quad_rotation(double *Q /* (d,d) */, const double *theta, double R, int d);
/* q = Q e₁, the same rotations applied to the vector e₁. O(d²). */
void quad_first_column(double *q /* (d) */, const double *theta, double R, int d);
/* H = Q diag(κ,1,…,1) Qᵀ, dense (reference path). */
void quad_hessian_dense(double *H /* (d,d) */, const double *Q /* (d,d) */, double kappa, int d);
/* H = I + (κ-1) q qᵀ. */
void quad_hessian_from_q(double *H /* (d,d) */, const double *q, double kappa, int d);
/* τ(H) for H = I + (κ-1) q qᵀ in O(d): entries are δ_ij + (κ-1) q_i q_j, so
 * Σ_i |H_ii| = d + (κ-1)‖q‖² and Σ_ij |H_ij| = d + (κ-1)‖q‖₁² (κ >= 1). */
double quad_tau(const double *q, double kappa, int d);

/* ---- D_Adam and r = κ(D_Adam H)/κ(H) ------------------------------------------------
 * g = Hx, D_Adam = diag(1/|g|) (v = g⊙g, D = 1/√v). κ(DH) two ways:
 *   a: λmax/λmin of D^½ H D^½ = D + (κ-1) u uᵀ, u = D^½ q   (diagonal + rank one)
 *   b: σmax/σmin of DH; (DH)(DH)ᵀ = D H² D = D² + (κ²-1) w wᵀ, w = Dq, because
 *      H² = I + ((1 + (κ-1))² - 1) q qᵀ for a unit q: again diagonal + rank one.
 * D is scaled by max|g| first (r is invariant to the scale of D). */
typedef struct {
    double a, b;  /* r by method a (eigenvalues) and b (singular values) */
} quad_ratio;
/* Fast path from q. Returns 0 (and leaves *r untouched) when some g_i is 0 or
 * 1/|g_i| is not finite: such an x is skipped by the sweep (guarded: g_i = 0 makes D undefined).
 * work: 2d doubles. */
int quad_ratio_fast(quad_ratio *r, const double *q, double kappa, const double *x, double *work, int d);
/* The same r for D = diag(1/|s|) from any vector s in place of g (quad_ratio_fast is
 * this with s = Hx). With s drawn independently of H it is Fig. 4's null: a diagonal
 * scaling that knows nothing of H. s may alias work + d. Same return rule. */
int quad_ratio_scaled(quad_ratio *r, const double *q, double kappa, const double *s, double *work, int d);
/* Dense reference: g = Hx (BLAS), κ(D^½HD^½) from LAPACK eigenvalues, κ(DH) from
 * singular values, each over κ(H) from H's own eigenvalues. Same return rule. */
int quad_ratio_dense(quad_ratio *r, const double *H /* (d,d) */, const double *x, int d);
/* The dense path with D = diag(1/|s|) from any vector s (quad_ratio_dense is this with
 * s = Hx): for any symmetric PD H, e.g. Fig. 3's blocks. Same return rule. */
int quad_ratio_dense_scaled(quad_ratio *r, const double *H /* (d,d) */, const double *s, int d);

/* Smallest and largest eigenvalue of diag(dg) + ρ u uᵀ (ρ >= 0), from the
 * secular equation 1 + ρ Σ u_i²/(dg_i - λ) = 0 with the interlacing brackets
 * λmin ∈ [dg_(1), dg_(2)], λmax ∈ [dg_(n), dg_(n) + ρ‖u‖²]; O(n) per iteration,
 * a two-pole rational model (Li's "middle way") safeguarded by bisection. */
void dpr1_extreme_eigs(double *lmin, double *lmax, const double *dg, const double *u, double rho, int n);

/* ---- the Fig. 4 sweep ---------------------------------------------------------------
 * For one (d, κ): nthetas angle draws; for each R_k = k/(nr-1), k = 0..nr-1, the
 * matrix H(R_k θ), its τ, and npoints draws x ~ N(0, 1/√d) (variance 1/√d, the
 * paper's Xavier-style choice), each giving r for both methods. Every angle
 * draw has its own RNG stream (quad_task_seed), so results do not depend on the
 * number of threads. With control set, every sample also gets r for D =
 * diag(1/|z|), z ~ N(0, I) from a second stream per angle draw (the first
 * stream's draws are unchanged). */
typedef struct {
    int d;
    double kappa;
    int nthetas, npoints, nr;
    unsigned long seed;
    int threads;          /* worker threads (>= 1) */
    progress *prog;       /* may be NULL; advanced by one per angle draw ... */
    long prog_base;       /* ... from this count */
    int control;          /* 1: also r for the random-D control (below) */
    unsigned long control_seed; /* its stream per angle draw: quad_task_seed(control_seed, ...) */
} quad_sweep_config;
typedef struct {
    int d, nthetas, npoints, nr;
    double kappa;
    double *tau;          /* (nthetas, nr): τ of each matrix */
    double *ra, *rb;      /* (nthetas, nr, npoints): r per x, NaN where x was skipped */
    long skipped;         /* x with some g_i = 0 */
    double *ca, *cb;      /* with control: the same per sample for D = diag(1/|z|), z ~ N(0, I)
                             drawn from the control's stream, independent of H and x; else NULL */
} quad_sweep_result;
/* User error unless d >= 2, κ >= 1 and every count is >= 1 (nr >= 2). */
void quad_check_sweep(int d, double kappa, int nthetas, int npoints, int nr);
unsigned long quad_task_seed(unsigned long seed, int d, double kappa, int draw);
quad_sweep_result *quad_sweep_run(const quad_sweep_config *c);
void quad_sweep_free(quad_sweep_result *s);

/* Summary over all x at one R: mean/median/quartiles of r (NaN skipped). */
typedef struct {
    double R, tau_mean, tau_min, tau_max;
    double ra_mean, ra_median, ra_q1, ra_q3;
    double rb_mean, rb_median, rb_q1, rb_q3;
    long n;               /* samples used */
    double ca_mean, ca_median, cb_mean, cb_median;  /* the control's r (NaN without it) */
} quad_sweep_row;
void quad_sweep_summary(quad_sweep_row *rows /* (nr) */, const quad_sweep_result *s);
/* Spearman rank correlation of (x_i, y_i), i < n (average ranks for ties);
 * NaN when either series is constant. */
double spearman(const double *x, const double *y, int n);

/* Fig. 4's claim "r decreases as τ → 1", per curve: ρ = Spearman(τ_k, s_k) over
 * the n R values of the curve (τ_k the mean τ at R_k, s_k the median or mean of
 * r there). With perm (a permutation of 0..n-1) τ_{perm[k]} is paired with s_k
 * instead: the negative control, τ shuffled across R. The curve falls when
 * ρ <= QUAD_FALLS_RHO: a strong monotone decreasing association (|ρ| >= 0.5). */
#define QUAD_FALLS_RHO (-0.5)
double quad_trend_rho(const double *tau, const double *s, const int *perm, int n);
/* Share of the n curves with rho <= threshold; a NaN rho (a flat curve) does not fall. */
double quad_share_falling(const double *rho, int n, double threshold);

/* ---- Fig. 4 read against each matrix's own τ (tau_reading.c) ----------------------------
 * Sec. 2.1: "for H_b with most dimension d and κ(H_b), r decreases as τ → 1. That is,
 * D_Adam is effective when H_b is close to diagonal, and D_Adam is not so effective when
 * H_b is dense", and "we change τ by only rotating the eigenvectors ... This ensures τ is
 * the only changing factor". τ is not monotone in R, so each sentence is read against the
 * τ of every matrix of a curve (nthetas × nr matrices), never against R. */

/* Per matrix (nthetas × nr, the sweep's order): the median (use_mean 0) or mean of r over
 * its finite samples; NaN when every x of the matrix was skipped. */
void quad_matrix_stat(double *out /* (nthetas*nr) */, const quad_sweep_result *s, const double *r, int use_mean);

typedef struct {
    double diag_tau;     /* "close to diagonal": the matrices with tau >= diag_tau */
    double dense_share;  /* "dense": this share of the matrices with the smallest tau */
    int nbins;           /* equal-count tau bins for "tau is the only changing factor" */
    int nlog;            /* bins of log10 tau over [log_lo, 0] for "r decreases as tau -> 1" */
    double log_lo;
} quad_tau_options;

typedef struct {
    int n;          /* matrices with a finite, positive r */
    double rho_bins; /* Spearman over the log-tau bins (median tau, median r per bin; each level of tau
                        counts once): "r decreases as tau -> 1" when <= QUAD_FALLS_RHO */
    double rho;     /* Spearman(tau, r) over the matrices themselves (each matrix counts once) */
    double r_diag;  /* median r over the near-diagonal matrices (NaN: none) */
    double r_dense; /* median r over the densest matrices */
    int level;      /* r_diag < 1 < r_dense: effective near diagonal, not when dense */
    double r2_R;    /* partial R² of R in log r at fixed tau (within tau bins, after log tau): 0 when tau alone fixes r */
} quad_tau_reading;
/* One curve's matrices: tau[i], their r statistic rm[i], and the R they were made with. */
quad_tau_reading quad_read_against_tau(const double *tau, const double *rm, const double *R, int n,
                                       const quad_tau_options *o);

/* ---- block-diagonal quadratic (paper Fig. 3) ------------------------------------------ */
/* Haar-random orthogonal Q (n×n): QR of a Gaussian matrix (dgeqrf + dorgqr),
 * columns sign-fixed so that diag(R) > 0. */
void haar_orthogonal(double *Q /* (n,n) */, gsl_rng *rng, int n);
/* H = Q diag(lambda) Qᵀ. */
void sym_from_eig(double *H /* (n,n) */, const double *Q /* (n,n) */, const double *lambda, int n);
/* H = blockdiag(H_1, …, H_nb), block l of size sizes[l] with eigenvalues drawn
 * i.i.d. uniformly from sets[l][0..set_len[l]-1] (written to lambda[n]). */
void block_quadratic(double *H /* (n,n) */, double *lambda /* (n) */, gsl_rng *rng, const int *sizes,
                     const double *const *sets, const int *set_len, int nb);
/* The same eigenvalue draws without rotations: H = diag(lambda). */
void diag_quadratic(double *H /* (n,n) */, double *lambda /* (n) */, gsl_rng *rng, const int *sizes,
                    const double *const *sets, const int *set_len, int nb);
/* A uniformly random permutation of 0..n-1 (Fisher–Yates). */
void random_permutation(int *perm /* (n) */, gsl_rng *rng, int n);
/* Hp = P H Pᵀ and wp = P w with (Pv)_i = v_perm[i]: contiguous blocks of Hp are
 * the coordinate sets perm[block] of H, and f_Hp(wp) = f_H(w). */
void quad_permute(double *Hp /* (n,n) */, double *wp /* (n) */, const double *H /* (n,n) */, const double *w,
                  const int *perm, int n);

/* ---- f(w) = ½ wᵀHw and its optimal steps (loss.c) ---- */
double quad_loss(const double *H /* (n,n) */, const double *w, int n);
/* Optimal constant step 2/(L+μ) of a symmetric PD matrix (eigenvalues via LAPACK). */
double quad_optimal_lr(const double *H /* (n,n) */, int n);
/* Per-block optimal steps 2/(L_b+μ_b) of the diagonal blocks H_bb (contiguous blocks). */
void quad_block_optimal_lr(double *lr /* (nblocks) */, const double *H /* (n,n) */, int n, const partition *blocks);
/* Contiguous blocks of the given sizes, or one block per entry (sizes NULL). */
partition *quad_partition(const int *sizes, int nb, int n);

/* ---- comparing loss traces (loss.c), Fig. 3's claims -----------------------------------
 * A loss trace loss[0..steps] (loss[0] = f(w0)) is summarised by the mean over
 * t = 0..steps of log10(max(loss[t]/loss[0], QUAD_LOSS_FLOOR)): the log10 of the
 * geometric-mean relative loss over the run. The floor keeps a run whose loss
 * underflows to 0 finite: every loss at or below 1e-300·f(w0) counts as that
 * value. While two runs stay above it the floor plays no part; once one reaches
 * it, the size of their gap depends on the floor and the run length. NaN when
 * loss[0] is not finite and positive or any loss[t] is not finite (diverged). */
#define QUAD_LOSS_FLOOR 1e-300
double quad_mean_log_loss(const double *loss, long steps);
/* quad_mean_log_loss(a) − quad_mean_log_loss(b): decades by which run a lies
 * below run b on average over the run (negative: a beats b). */
double quad_log_gap(const double *a, const double *b, long steps);

#endif
