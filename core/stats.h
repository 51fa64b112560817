/* stats — statistics and verdict primitives for the claims of the toolkit:
 * a Student-t interval over seeds, an exact sign test, verdicts with a
 * negative control, and learning-rate grids that extend past their edges.
 *
 * One principle throughout: a verdict is never computed from a non-finite
 * number. Non-finite data (NaN, +inf, -inf: a diverged or failed run) are
 * counted out and reported in n_dropped, and any dropped value makes the
 * verdict INVALID. To drop failed runs on purpose, filter them out before
 * calling, so the decision is visible in the caller.
 *
 * Bad arguments that come from the caller's configuration (a level outside
 * (0,1), n < 0, a non-finite threshold where one is required, ...) are user
 * errors (die_user); data are never a user error. GSL is used only in stats.c.
 */
#ifndef STATS_H
#define STATS_H

/* ---- interval of the mean over seeds ----------------------------------------------
 * Over the finite values of x[0..n-1] (count n, the others counted in
 * n_dropped): mean; sd the sample standard deviation (divisor n−1); se = sd/√n;
 * lo, hi = mean ∓ t_{(1+level)/2, n−1}·se (Student t quantile, GSL).
 * n = 0: mean, sd, se, lo, hi all NAN. n = 1: mean = that value, sd, se, lo,
 * hi NAN. All values equal: sd = 0, lo = hi = mean.
 * User error: n < 0, x NULL with n > 0, level not in (0,1). */
typedef struct {
    int n;          /* finite values used */
    int n_dropped;  /* non-finite values counted out (any > 0 makes verdict_of INVALID) */
    double mean, sd, se, lo, hi, level;
} interval;
interval t_interval(const double *x, int n, double level);
/* t_interval of the paired differences a[i] − b[i]; a pair where a[i], b[i]
 * or the difference is non-finite is counted in n_dropped. mean and se are the paired mean
 * difference and its standard error. */
interval paired_interval(const double *a, const double *b, int n, double level);

/* ---- sign test against a threshold -------------------------------------------------
 * Non-finite x are counted in n_dropped and take no part. Of the finite ones,
 * x > threshold counts in n_above, x < threshold in n_below, x == threshold
 * (exactly) in n_ties; ties are dropped, leaving m = n_above + n_below.
 * Under H0 each untied value is above with probability 1/2 (X ~ Bin(m, 1/2)):
 *   p_above     = P(X ≥ n_above)  one-sided, for "the values lie above";
 *   p_below     = P(X ≤ n_above)  one-sided, for "the values lie below";
 *   p_two_sided = min(1, 2·min(p_above, p_below)).
 * m = 0: all three p are 1. For m ≤ 62 the tails are summed exactly in
 * integers and rounded once (1/32 is exactly 1/32, so p ≤ alpha is decided
 * exactly); for larger m, GSL's binomial CDF (relative error ~1e-15).
 * prop = n_above/m with its Clopper–Pearson interval at `level`
 * (prop_lo = 0 when n_above = 0, prop_hi = 1 when n_above = m); all three NAN when m = 0.
 * With m untied values the smallest one-sided p is 2^−m: at alpha = 0.05 a
 * PASS needs m ≥ 5 (all above or all below).
 * User error: n < 0, x NULL with n > 0, threshold non-finite, level not in (0,1). */
typedef struct {
    int n_above, n_below, n_ties, n_dropped;
    double p_above, p_below, p_two_sided;
    double prop, prop_lo, prop_hi, level;
} sign_test;
sign_test sign_test_of(const double *x, int n, double threshold, double level);

/* ---- verdicts ------------------------------------------------------------------------ */
typedef enum { VERDICT_PASS, VERDICT_FAIL, VERDICT_INCONCLUSIVE, VERDICT_NO_POWER, VERDICT_INVALID } verdict;
/* The claim holds when the statistic is above / below the threshold. */
typedef enum { CLAIM_ABOVE, CLAIM_BELOW } claim_side;

/* verdict_of: the interval `stat` against `threshold`, in this order:
 *  INVALID       stat.n < 2, stat.n_dropped > 0, stat.lo or stat.hi or
 *                threshold non-finite, or stat.lo > stat.hi; also when a
 *                control is given and is INVALID by the same test (a negative
 *                control that could not be computed vouches for nothing).
 *  PASS          the whole interval strictly on the claim's side:
 *                CLAIM_ABOVE: lo > threshold;  CLAIM_BELOW: hi < threshold;
 *  FAIL          the whole interval strictly on the other side:
 *                CLAIM_ABOVE: hi < threshold;  CLAIM_BELOW: lo > threshold;
 *  INCONCLUSIVE  otherwise: lo ≤ threshold ≤ hi (an endpoint equal to the
 *                threshold is inconclusive).
 *  NO POWER      replaces PASS when a control is given and the control
 *                interval, under the same side and threshold, would PASS too
 *                (the rule cannot tell the claim from its negative control).
 *                A control that would FAIL or be INCONCLUSIVE leaves the PASS.
 * control: NULL for none. User error: control->level != stat.level. */
verdict verdict_of(interval stat, claim_side side, double threshold, const interval *control);

/* verdict_of_sign: the sign test `s` (computed against the claim's threshold)
 * at significance alpha, with p_claim = p_above for CLAIM_ABOVE, p_below for
 * CLAIM_BELOW, and p_other the other one:
 *  INVALID       s.n_dropped > 0 or fewer than 2 finite values
 *                (n_above + n_below + n_ties < 2); also when a control is
 *                given and is INVALID by the same test.
 *  PASS          p_claim ≤ alpha;
 *  FAIL          p_other ≤ alpha;
 *  INCONCLUSIVE  otherwise (includes m = 0 and every m < log2(1/alpha)).
 *  NO POWER      replaces PASS when the control, with the same side and
 *                alpha, would PASS too.
 * PASS and FAIL exclude each other because p_above + p_below ≥ 1 and alpha < 1/2.
 * control: NULL for none; it must be computed against the same threshold.
 * User error: alpha not in (0, 0.5). */
verdict verdict_of_sign(sign_test s, claim_side side, double alpha, const sign_test *control);

/* "PASS", "FAIL", "INCONCLUSIVE", "NO POWER", "INVALID". */
const char *verdict_name(verdict v);

/* ---- learning-rate grids that extend at the edges -------------------------------------
 * A small state machine; runs are evaluated by the caller, in batches:
 *
 *     lr_grid g;
 *     lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-6, 1.0);
 *     double lrs[LR_GRID_MAX];
 *     for (int k; (k = lr_grid_next(&g, lrs)) > 0;) {
 *         ... evaluate score(lrs[0..k-1]), in parallel if you like ...
 *         for (int i = 0; i < k; i++) lr_grid_add(&g, lrs[i], score[i]);
 *     }
 *     switch (lr_grid_status(&g)) { ... }   // GRID_INTERIOR: g.lr[lr_grid_best(&g)] is bracketed
 *
 * lr_grid_init plans the first grid but evaluates nothing: it leaves n = 0,
 * and the first lr_grid_next returns the planned points lo·(hi/lo)^(k/(n−1)),
 * k = 0..n−1 (exactly lo and hi at the ends). Planned points not yet added
 * are always returned first, and no extension is proposed before all are in.
 *
 * Scores: lower is better; any non-finite score (NaN, ±inf) means diverged.
 * Best: the lowest finite score, the smallest lr on exact ties.
 * Edges: the best is "at the lower edge" when the smallest-lr point has a
 * finite score equal to the minimum (exact ties count: a plateau reaching the
 * edge is not bracketed), and "at the upper edge" likewise for the largest-lr
 * point. A diverged point is worse than any finite one, so a best whose
 * neighbours above (or below) all diverged is bracketed on that side
 * (interior), and the grid never extends toward divergence.
 * Extension: one point beyond each edge the best is at: lr[0]/step below,
 * lr[n−1]·step above (the same log spacing), only when it stays within
 * [lo_bound, hi_bound] (relative slack 1e-9, so a bound that lies on the
 * lattice is reached) and the grid has room (LR_GRID_MAX points; the lower
 * end gets the last free slot).
 * All diverged: extend downward (smaller lr) only, until the bound or capacity.
 */
#define LR_GRID_MAX 64
typedef struct {
    int n;                       /* points evaluated so far */
    double lr[LR_GRID_MAX];      /* ascending */
    double score[LR_GRID_MAX];   /* lower is better; non-finite = diverged */
    double step;                 /* ratio between neighbours: (hi/lo)^(1/(n−1)) */
    double lo_bound, hi_bound;   /* never propose a point below / above these */
    int extended_lo, extended_hi; /* points added below plan_lo / above plan_hi */
    double plan_lo, plan_hi;     /* the first grid, as given to lr_grid_init */
    int plan_n;
} lr_grid;
/* User error: n < 2 or n > LR_GRID_MAX, bounds or lo, hi non-finite, or not
 * 0 < lo_bound ≤ lo < hi ≤ hi_bound. */
void lr_grid_init(lr_grid *g, double lo, double hi, int n, double lo_bound, double hi_bound);
/* Index of the best point (see above); −1 when no score is finite. */
int lr_grid_best(const lr_grid *g);
/* Writes the learning rates to evaluate next into lrs (room for LR_GRID_MAX)
 * and returns how many: the planned points not yet added if any; else one
 * point beyond each edge the best is at, as the bounds and room allow;
 * 0 when the grid is done. */
int lr_grid_next(const lr_grid *g, double *lrs);
/* Adds an evaluated point, keeping lr ascending. User error: lr non-finite or
 * ≤ 0, lr outside [lo_bound, hi_bound] (same slack), an lr within relative
 * 1e-9 of one already in the grid, or the grid already holding LR_GRID_MAX
 * points. */
void lr_grid_add(lr_grid *g, double lr, double score);
typedef enum {
    GRID_INTERIOR,      /* done; neither end point attains the best score: the minimum is bracketed */
    GRID_EDGE_AT_BOUND, /* done, but the best is at an edge: a bound or LR_GRID_MAX stopped the extension */
    GRID_NONE_FINITE,   /* done, and every point diverged (extended down to the bound or capacity) */
    GRID_UNFINISHED     /* lr_grid_next would still return points */
} grid_status;
grid_status lr_grid_status(const lr_grid *g);
/* "INTERIOR", "EDGE AT BOUND", "NONE FINITE", "UNFINISHED". */
const char *grid_status_name(grid_status s);

/* ---- helpers ---------------------------------------------------------------------------
 * Median of x[0..n-1] (mean of the two middle values for even n). ±inf take
 * part as ordinary values; NAN if n ≤ 0 or any x is NaN (or the two middle
 * values are −inf and +inf). x is not modified. */
double median_of(const double *x, int n);

#endif
