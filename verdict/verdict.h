/* verdict — the verdict engine: every claim of the paper the toolkit tests,
 * judged over seeds. Seven parts, one header:
 *   verdict/stats.c     the statistics: a Student-t interval over seeds, an
 *                       exact sign test, verdicts with a negative control;
 *   verdict/claims.c    the claim table, fixed before the runs: one file of
 *                       families per experiment (verdict/claims/), collected
 *                       and checked;
 *   verdict/statfile.c  the per-run stats.csv every experiment writes and the
 *                       judge reads;
 *   verdict/runs.c      one seed's run folder as the judge reads it (its
 *                       stats.csv, its run.txt for provenance);
 *   verdict/judge.c     one claim judged: its reading over the seeds, its
 *                       control's, their paired difference's, the verdict;
 *   verdict/study.c     every claim judged over one set of seeds, with Holm's
 *                       correction in each family and the alternatives;
 *   verdict/report.c    the study written: verdicts.csv, sensitivity.csv,
 *                       verdicts.md, summary.md.
 * tools/verdicts.c is the program around them (flags, run folders, output
 * folder). Built on core/ only.
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
 *                interval, under the same side and threshold, is not a
 *                decided FAIL (it would PASS too, or it is INCONCLUSIVE): a
 *                PASS is vouched for only by a control the rule rejects.
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
 *                alpha, is not a decided FAIL.
 * PASS and FAIL exclude each other because p_above + p_below ≥ 1 and alpha < 1/2.
 * control: NULL for none; it must be computed against the same threshold.
 * User error: alpha not in (0, 0.5). */
verdict verdict_of_sign(sign_test s, claim_side side, double alpha, const sign_test *control);

/* ---- one-sided p-values, shares, families ------------------------------------------------
 * t_p_above / t_p_below: the one-sided p of Student's t test that the mean lies
 * above / below the threshold, from t_interval's mean and se (n − 1 degrees of
 * freedom): PASS of an interval rule at level 1 − 2α ⟺ p ≤ α on the claim's side.
 * se = 0 (all values equal): 0 when the mean lies strictly on that side, else 1.
 * NAN when the interval is not usable (n < 2, dropped values, threshold not finite). */
double t_p_above(interval iv, double threshold);
double t_p_below(interval iv, double threshold);

/* A share of items (curves, blocks, tensors) pooled over seeds: k of n satisfy the
 * condition. Exact binomial test of H0 "the share is p0": p_above = P(X ≥ k),
 * p_below = P(X ≤ k), X ~ Bin(n, p0); prop = k/n with its Clopper–Pearson
 * interval [lo, hi] at `level` (two-sided). n = 0: p 1, prop/lo/hi NAN.
 * User error: k, n not integers with 0 ≤ k ≤ n, p0 not in (0, 1), level not in (0, 1). */
typedef struct {
    double k, n, prop, lo, hi, level;
    double p_above, p_below;
} share_test;
share_test share_test_of(double k, double n, double p0, double level);

/* Holm's step-down adjustment of the m p-values of one family: adj[i] is the
 * smallest family-wise level at which p[i]'s hypothesis is rejected
 * (sorted ascending, p_(r) × (m − r), made non-decreasing, capped at 1). NaN stays NaN
 * and takes no rank. */
void holm_adjust(const double *p, int m, double *adj);

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
/* A share of curves, blocks or tensors into stats.csv: "<name>" = count/total (NAN when
 * total is 0), and "<name>.count", "<name>.total" as integers, so the verdicts can pool
 * the counts over seeds (an exact binomial interval). The name is printf'd from fmt. */
void stats_put_share(outfile *f, long count, long total, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* ---- the claim table (claims.c and the files of verdict/claims/) ---------------------------
 * Every claim is a rule fixed before the runs: a statistic per seed, a test
 * over seeds against a threshold, a negative control the rule must reject,
 * and the open choices the verdict depends on, each with the alternative
 * readings that `make sensitivity` runs. The table is written as families (one
 * sentence of the paper and the readings that test it, verdict/claims/claims.h);
 * claim_rules() gives every reading resolved, one claim_rule each. */
typedef enum {
    RULE_INTERVAL, /* Student-t test of the mean over seeds (interval at 1 − 2α); with a diverged
                      run (±inf) among the values, the exact sign test instead */
    RULE_SIGN,     /* exact sign test over seeds */
    RULE_SHARE,    /* a share of items (curves, blocks, tensors): exact binomial test of the counts
                      pooled over seeds ("<stat>.count", "<stat>.total"), Clopper–Pearson interval */
    RULE_EXACT     /* a deterministic number (seeds do not enter): the same on every seed, compared
                      with the threshold as it is */
} rule_kind;

/* One alternative reading of an open choice the paper leaves: another run of
 * the experiment (flags) or another statistic of the same run (stat). */
typedef struct {
    const char *choice;  /* the open choice: "horizon", "lr grid", "checkpoint lr", "statistic", ... */
    const char *name;    /* id; within an experiment one name is one set of flags: a flags alternative's
                            runs live in <sensitivity runs>/<experiment>/<name>/seed<s>/ */
    const char *flags;   /* added to the experiment's flags (NULL: the main run, another statistic) */
    const char *stat;    /* the statistic under this reading (NULL: the claim's own) */
    const char *control; /* its control (NULL: the claim's own control) */
    const char *why;     /* why this is a reasonable reading of the paper */
    int own_rule;        /* 1: the statistic needs its own rule (kind, side, threshold below) */
    rule_kind kind;
    claim_side side;
    double threshold;
} alternative;
#define ALT_MAX 6

/* The paper's own number for a statistic, where the paper states a magnitude. */
typedef struct {
    const char *text;    /* in the paper's words, printed beside the measured value (NULL: none stated) */
    int numeric;         /* 1: lo and hi hold it on the statistic's scale (lo == hi: one number) */
    double lo, hi;
} paper_number;

/* One reading, resolved: its family's fields with the reading's own in their place. */
typedef struct {
    const char *id;            /* "fig3.adam_beats_gd" */
    const char *experiment;    /* the program whose per-seed run folder holds the statistic */
    const char *paper;         /* the paper's words, quoted */
    const char *place;         /* where: "Sec. 2.1, Fig. 3(b)" */
    const char *claim;         /* the claim as tested, one line */
    const char *stat;          /* stats.csv name of the statistic */
    const char *stat_what;     /* what the statistic is, with its unit */
    claim_side side;           /* the claim holds when the statistic is above / below threshold */
    double threshold;
    rule_kind kind;
    const char *control;       /* stats.csv name of the negative control's statistic (NULL: none) */
    const char *control_what;  /* the control, and why the rule must reject it */
    const char *depends;       /* the setup the verdict rests on */
    const char *family;        /* Holm's correction runs over the claims of one family name (NULL: the
                                  claim is its own family) */
    alternative alt[ALT_MAX];  /* the open choices, declared before any run ({0} ends the list) */
    const char *after_data;    /* the rule was set or changed after seeing data: what and why (NULL: no) */
    const char *after_confirmation; /* changed after the confirmation run: what and why (NULL: no) */
    const char *paper_setting; /* where the paper's own setting differs from the rule's (NULL: it does not) */
    const char *paper_scale;   /* how the verdict differed at paper scale (NULL: not seen to) */
    paper_number paper_value;  /* the paper's own number, printed beside the measured mean */
    int hypothesis;            /* 1: the toolkit's own hypothesis, not the paper's: shown apart, never
                                  counted for or against the paper */
} claim_rule;
/* Every claim, in the order of the results table (the table is checked on the first call:
 * a malformed table is an internal error, named). */
int claim_rules(const claim_rule **out);
/* Number of alternatives of r (up to ALT_MAX). */
int claim_alt_count(const claim_rule *r);
/* The alternative named `name` of r, or NULL. */
const alternative *claim_alt(const claim_rule *r, const char *name);

/* ---- one seed's run, read strictly (runs.c) -------------------------------------------------
 * stats.csv: header "name,value", every line newline-terminated, no blank
 * line, no name twice, names and values exactly as stats_put writes them (no
 * blank, no hex, no literal that underflows to 0), a regular file of at most 64 MB; run.txt: complete (command, commit,
 * wall time, seed line; no carriage return). flags: the command normalised for
 * comparison over seeds (program name, every flag but --out and --quiet,
 * --seed/--data-seed values as SEED). ok = 0 with the first reason in why when
 * anything is missing or malformed, or when --seed/--data-seed is not the
 * folder's seed. The seed line and the scale are checked by the study (a
 * deterministic experiment's runs may share a seed). */
typedef struct {
    char *name;
    double value;
} stat_row;
typedef struct {
    int ok;
    char why[256];
    long seed;                 /* the folder's seed */
    long run_seed;             /* run.txt's "seed: " line (the seed the program ran with) */
    char commit[96];
    char scale[16];            /* the run's scale: run.txt's "scale: " line, else --scale's value, else
                                  "quick" (the default); "none": the program has no scale */
    char *flags;
    int nstats;
    stat_row *stats;
} seed_run;
void seed_run_read(seed_run *r, const char *dir, long seed);
void seed_run_free(seed_run *r);
/* Index of `name` in r's stats (its value into *value), or -1. */
int seed_run_get(const seed_run *r, const char *name, double *value);
int stats_index(const seed_run *r, const char *name);

/* ---- judging (judge.c) ----------------------------------------------------------------------
 * A reading: one statistic over the seeds under one rule kind. */
typedef struct {
    rule_kind test;            /* the test used (an interval rule with ±inf values: RULE_SIGN) */
    int n;                     /* seeds with a value (finite or ±inf) */
    int n_missing;             /* seeds without a usable value (missing, NaN, or a run not ok) */
    int n_inf;                 /* seeds with ±inf: a diverged run, counted as the worst outcome */
    int constant;              /* every value the same */
    double mean, lo, hi;       /* shown: the mean (sign test: the median) and the interval at 1 − 2α;
                                  shares: the pooled share and its Clopper–Pearson interval */
    double k, total;           /* shares: the pooled counts */
    double p_claim, p_other;   /* one-sided p on the claim's side and on the other side, unadjusted */
} claim_reading;
/* x[0..n-1]: the per-seed values (NAN: missing); count/total the per-seed
 * counts of a share (NULL otherwise). */
claim_reading reading_over_seeds(rule_kind kind, claim_side side, double threshold, const double *x, const double *count,
                   const double *total, int n, double alpha);
/* PASS, FAIL or INCONCLUSIVE of a reading on its own (a control's), at alpha, unadjusted. */
verdict reading_verdict(const claim_reading *r, double alpha);

/* The verdict of a claim from its reading, Holm-adjusted p-values (claim's
 * side, other side), its control's reading and the paired difference's (NULL:
 * none), in this order:
 *   INVALID       a seed missing or not usable (n_missing > 0), fewer than 2
 *                 seeds; an exact rule whose value differs between seeds; an
 *                 interval rule with identical values on every seed (a zero-width
 *                 interval says the seeds do not enter: the claim needs an exact
 *                 rule); the control or the paired difference not usable;
 *   FAIL          p_other_adj <= alpha;
 *   PASS          p_claim_adj <= alpha, the control a decided FAIL at alpha and
 *                 the paired difference (claim minus control) decided on the
 *                 claim's side at alpha;
 *   NO POWER      p_claim_adj <= alpha but the control is not a decided FAIL or
 *                 the paired difference is not decided;
 *   INCONCLUSIVE  otherwise.
 * why: the reason of an INVALID or NO POWER, else "". */
verdict claim_verdict(const claim_reading *claim, double p_claim_adj, double p_other_adj, const claim_reading *control,
                      const claim_reading *paired, double alpha, char *why, size_t why_size);

/* ---- a study: every claim judged over one set of seeds (study.c) -----------------------------
 * The runs of one experiment over the seeds (alt NULL: the main runs in
 * <runs>/<experiment>/seed<s>/; else an alternative's, in
 * <sensitivity>/<experiment>/<alt>/seed<s>/), with their provenance: a seed's run
 * is usable only if it was read whole (seed_run ok) and has the flags and the
 * commit of the other seeds' (the most common ones; ties: the first seed's), the
 * study's scale, and for an alternative the main runs' flags plus its own and
 * the main runs' commit. */
typedef struct {
    const char *experiment, *alt;
    int n;                     /* seeds */
    seed_run run[LIST_MAX];
    int present;               /* some seed's folder exists */
    char commit[96];           /* the runs' commit (most common) */
    char *flags;               /* the runs' normalised flags (most common) */
} seed_runs;

typedef struct {
    int evaluated;             /* 0: an alternative whose runs were not made */
    rule_kind kind;            /* the rule applied: the claim's, or the alternative's own */
    claim_side side;
    double threshold;
    double x[LIST_MAX], c[LIST_MAX]; /* per seed: the statistic and the control (NAN: missing) */
    double diverged[LIST_MAX]; /* per seed: "<experiment>.diverged", the runs that diverged (NAN: not reported) */
    claim_reading stat, control, paired;
    int has_control, has_paired;
    double p_claim_adj, p_other_adj;
    verdict v, control_v;
    char why[320];
} judged_setting;

typedef struct {
    const claim_rule *r;
    judged_setting main;
    judged_setting alt[ALT_MAX];
    int n_alt;                 /* alternatives declared */
    int n_run;                 /* of them evaluated, with a valid verdict (and a valid main verdict) */
    int n_same;                /* of them with the main verdict */
} judged_claim;

typedef struct {
    const char *runs;          /* main runs */
    const char *sensitivity;   /* alternatives' runs (NULL: only the alternatives of another statistic) */
    const char *scale;
    double alpha;
    int_list seeds;
    int n;                     /* claims judged */
    judged_claim *claim;
    int nsets;
    seed_runs *set;
} claim_study;
/* Judges rules[0..nrules-1] but those whose experiment is in skip[0..nskip-1]. */
void study_run(claim_study *s, const claim_rule *rules, int nrules, const char *const *skip, int nskip);
void study_free(claim_study *s);
/* 1 if some experiment's main runs were found at all. */
int study_present(const claim_study *s);
/* "ROBUST" (every alternative with a valid verdict gives the main verdict),
 * "FRAGILE" (some does not) or "-" (none such). */
const char *robustness(const judged_claim *j);
/* <out>/verdicts.csv, sensitivity.csv, verdicts.md and summary.md of a study
 * (report.c); skipped: the experiments left out, named in verdicts.md. */
void study_write(const char *out, const claim_study *s, const char *skipped);

/* ---- what it would take (power.c) ---------------------------------------------------------------
 * The seeds a rule would need to be decided (PASS or FAIL at alpha, unadjusted) if the
 * effect and the spread seen on x[0..n-1] (NAN: missing) held on more seeds: an estimate
 * from the development seeds. Interval rule: the smallest n with |mean − threshold|·√n/sd
 * >= t_{1−alpha, n−1}; sign rule (or ±inf values): the smallest n at which the observed
 * share of seeds on the majority side rejects the fair coin; share rule: the smallest n
 * at which the pooled share k/total, with total/n items per seed, rejects the threshold
 * (exact binomial). -1: no effect to decide (the mean or share exactly at the threshold,
 * fewer than 2 values) or more than cap seeds; an exact rule needs 1. */
int seeds_to_decide(rule_kind kind, claim_side side, double threshold, const double *x, int n, double k, double total,
                    double alpha, int cap);

#endif
