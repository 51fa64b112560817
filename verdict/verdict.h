/* verdict — the verdict engine: every claim of the paper the toolkit tests,
 * judged over seeds. Three parts, one header:
 *   verdict/stats.c     the statistics: a Student-t interval over seeds, an
 *                       exact sign test, verdicts with a negative control;
 *   verdict/claims.c    the claim table, fixed before the runs;
 *   verdict/statfile.c  the per-run stats.csv every experiment writes and the
 *                       judge reads.
 * The judge itself is tools/verdicts.c. Built on core/ only.
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
#ifndef VERDICT_H
#define VERDICT_H

#include "core/core.h"

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

/* ---- per-run statistics and the claims judged on them (statfile.c, claims.c) -------------------------
 * Every experiment writes <out>/stats.csv, rows "name,value": each number a
 * claim of the paper is judged on, and the same number for the claim's
 * negative control, named "<experiment>.<what>" (values %.17g; nan and inf as
 * such). make verdicts runs each experiment once per seed and the verdicts
 * program judges every claim of claim_rules() over the seeds (docs/verdicts.md). */
outfile *stats_open(const char *dir);
void stats_put(outfile *f, const char *name, double value);
/* stats_put with the name built by printf from fmt. */
void stats_putf(outfile *f, double value, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The value of `name` in a stats.csv; 0 if the file or the name is missing. */
int stats_get(const char *path, const char *name, double *value);

typedef enum { RULE_INTERVAL, RULE_SIGN } rule_kind;
typedef struct {
    const char *id;            /* "fig3.adam_beats_gd" */
    const char *experiment;    /* the program whose per-seed run folder holds the statistic */
    const char *paper;         /* the paper's words, quoted */
    const char *place;         /* where: "Sec. 2.2, Fig. 3(b)" */
    const char *claim;         /* the claim as tested, one line */
    const char *stat;          /* stats.csv name of the statistic */
    const char *stat_what;     /* what the statistic is, with its unit */
    claim_side side;           /* the claim holds when the statistic is above / below threshold */
    double threshold;
    rule_kind kind;            /* RULE_INTERVAL: Student-t 95% interval of the mean over seeds;
                                  RULE_SIGN: exact sign test over seeds at alpha 0.05 */
    const char *control;       /* stats.csv name of the negative control's statistic */
    const char *control_what;  /* the control, and why the rule must reject it */
    const char *depends;       /* the setup choices the verdict depends on */
} claim_rule;
/* Every claim, in the order of the README's table. */
int claim_rules(const claim_rule **out);

#endif
