/* What it would take: how many seeds a rule would need to decide (PASS or FAIL, at
 * alpha, unadjusted) if the effect and the spread seen on the seeds run so far held
 * on more seeds. An estimate from the development seeds, stated as one (verdict.h). */
#include "verdict.h"
#include <gsl/gsl_cdf.h>
#include <math.h>

/* An interval rule: the one-sided t test rejects at n seeds when |d|·√n/sd >= t_{1-alpha, n-1}. */
static int interval_seeds(double d, double sd, double alpha, int cap)
{
    if (!(fabs(d) > 0)) return -1;
    if (!(sd > 0)) return 2;
    for (int n = 2; n <= cap; n++)
        if (fabs(d) * sqrt((double)n) / sd >= gsl_cdf_tdist_Pinv(1 - alpha, n - 1)) return n;
    return -1;
}

/* A binomial test of H0 "share p0" with the observed share p of m items per seed: the
 * seeds n at which ceil(p·m·n) successes of m·n (or floor for the lower side) reject. */
static int share_seeds(double p, double m, double p0, double alpha, int cap)
{
    if (!(m > 0) || p == p0 || !isfinite(p)) return -1;
    for (int n = 1; n <= cap; n++) {
        double N = m * n;
        double pv = p > p0 ? (ceil(p * N) >= 1 ? gsl_cdf_binomial_Q((unsigned)ceil(p * N) - 1, p0, (unsigned)N) : 1)
                           : gsl_cdf_binomial_P((unsigned)floor(p * N), p0, (unsigned)N);
        if (pv <= alpha && n >= 2) return n;
    }
    return -1;
}

int seeds_to_decide(rule_kind kind, claim_side side, double threshold, const double *x, int n, double k, double total,
                    double alpha, int cap)
{
    (void)side; /* the direction is the data's: a decided FAIL counts as decided too */
    if (kind == RULE_EXACT) return 1;
    if (kind == RULE_SHARE) return n > 0 && total > 0 ? share_seeds(k / total, total / n, threshold, alpha, cap) : -1;
    int m = 0, above = 0, below = 0;
    double sum = 0, sum2 = 0;
    for (int i = 0; i < n; i++) {
        if (isnan(x[i])) continue;
        above += x[i] > threshold, below += x[i] < threshold;
        if (isfinite(x[i])) m++, sum += x[i], sum2 += x[i] * x[i];
    }
    if (kind == RULE_SIGN || m < above + below) /* a sign test: the share of seeds on the majority side */
        return above + below > 0 ? share_seeds((double)(above > below ? above : below) / (above + below), 1, 0.5, alpha, cap)
                                 : -1;
    if (m < 2) return -1;
    double mean = sum / m, var = (sum2 - m * mean * mean) / (m - 1);
    return interval_seeds(mean - threshold, sqrt(fmax(var, 0)), alpha, cap);
}
