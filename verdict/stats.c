/* The statistics of the verdicts: intervals over seeds, sign tests, verdicts (verdict.h). */
#include "verdict.h"
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_level(const char *fn, double level)
{
    if (!(level > 0 && level < 1)) die_user("%s: level must be in (0,1), got %g", fn, level);
}

static void check_data(const char *fn, const void *x, int n)
{
    if (n < 0) die_user("%s: n must be >= 0, got %d", fn, n);
    if (n > 0 && !x) die_user("%s: no data (NULL) for n = %d", fn, n);
}

/* ---- interval of the mean ------------------------------------------------------ */

interval t_interval(const double *x, int n, double level)
{
    check_level("t_interval", level);
    check_data("t_interval", x, n);
    interval r = {.n = 0, .n_dropped = 0, .mean = NAN, .sd = NAN, .se = NAN, .lo = NAN, .hi = NAN, .level = level};
    double sum = 0;
    for (int i = 0; i < n; i++) {
        if (isfinite(x[i])) {
            sum += x[i];
            r.n++;
        } else {
            r.n_dropped++;
        }
    }
    if (r.n == 0) return r;
    r.mean = sum / r.n;
    if (r.n < 2) return r;
    double ss = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(x[i])) ss += (x[i] - r.mean) * (x[i] - r.mean);
    r.sd = sqrt(ss / (r.n - 1));
    r.se = r.sd / sqrt((double)r.n);
    double t = gsl_cdf_tdist_Pinv(0.5 * (1 + level), r.n - 1);
    r.lo = r.mean - t * r.se;
    r.hi = r.mean + t * r.se;
    return r;
}

interval paired_interval(const double *a, const double *b, int n, double level)
{
    check_level("paired_interval", level);
    check_data("paired_interval", a, n);
    check_data("paired_interval", b, n);
    double *d = xmalloc(checked_mul((size_t)n, sizeof(double), "paired_interval"));
    /* a non-finite a[i] or b[i] gives a non-finite difference, which t_interval counts out */
    for (int i = 0; i < n; i++) d[i] = a[i] - b[i];
    interval r = t_interval(d, n, level);
    free(d);
    return r;
}

/* ---- sign test ------------------------------------------------------------------ */

/* P(X >= k) for X ~ Bin(m, 1/2). Up to BINOMIAL_EXACT_MAX the tail is summed
 * exactly in integers (a row of Pascal's triangle, Σ C(m,j) <= 2^m < 2^63)
 * and rounded once, so p-values such as 1/32 are exact and the PASS rule
 * p <= alpha is decided exactly; GSL's incomplete-beta form is off by a few
 * ulps there. Beyond, GSL's binomial CDF: P(X > k−1). */
#define BINOMIAL_EXACT_MAX 62
static double binomial_half_tail(unsigned k, unsigned m)
{
    if (k == 0) return 1;
    if (k > m) return 0;
    if (m <= BINOMIAL_EXACT_MAX) {
        uint64_t row[BINOMIAL_EXACT_MAX + 1] = {1};
        for (unsigned i = 1; i <= m; i++)
            for (unsigned j = i; j >= 1; j--) row[j] += row[j - 1];
        uint64_t sum = 0;
        for (unsigned j = k; j <= m; j++) sum += row[j];
        return ldexp((double)sum, -(int)m);
    }
    return gsl_cdf_binomial_Q(k - 1, 0.5, m);
}

sign_test sign_test_of(const double *x, int n, double threshold, double level)
{
    check_level("sign_test_of", level);
    check_data("sign_test_of", x, n);
    if (!isfinite(threshold)) die_user("sign_test_of: threshold must be finite, got %g", threshold);
    sign_test s = {0};
    s.level = level;
    for (int i = 0; i < n; i++) {
        if (!isfinite(x[i])) s.n_dropped++;
        else if (x[i] > threshold) s.n_above++;
        else if (x[i] < threshold) s.n_below++;
        else s.n_ties++;
    }
    unsigned k = (unsigned)s.n_above, m = (unsigned)(s.n_above + s.n_below);
    if (m == 0) {
        s.p_above = s.p_below = s.p_two_sided = 1;
        s.prop = s.prop_lo = s.prop_hi = NAN;
        return s;
    }
    /* X ~ Bin(m, 1/2) counts the values above; m − X has the same law, so
     * P(X <= k) = P(X >= m − k). */
    s.p_above = binomial_half_tail(k, m);
    s.p_below = binomial_half_tail(m - k, m);
    double p = 2 * fmin(s.p_above, s.p_below);
    s.p_two_sided = p < 1 ? p : 1;
    double a = 1 - level;
    s.prop = (double)k / m;
    s.prop_lo = k == 0 ? 0.0 : gsl_cdf_beta_Pinv(a / 2, k, m - k + 1);
    s.prop_hi = k == m ? 1.0 : gsl_cdf_beta_Pinv(1 - a / 2, k + 1, m - k);
    return s;
}

/* ---- one-sided p-values ----------------------------------------------------------- */

double t_p_above(interval iv, double threshold)
{
    if (iv.n < 2 || iv.n_dropped > 0 || !isfinite(threshold) || !isfinite(iv.mean)) return NAN;
    if (iv.se == 0) return iv.mean > threshold ? 0.0 : 1.0;
    return gsl_cdf_tdist_Q((iv.mean - threshold) / iv.se, iv.n - 1);
}

double t_p_below(interval iv, double threshold)
{
    if (iv.n < 2 || iv.n_dropped > 0 || !isfinite(threshold) || !isfinite(iv.mean)) return NAN;
    if (iv.se == 0) return iv.mean < threshold ? 0.0 : 1.0;
    return gsl_cdf_tdist_P((iv.mean - threshold) / iv.se, iv.n - 1);
}

share_test share_test_of(double k, double n, double p0, double level)
{
    check_level("share_test_of", level);
    if (!(k >= 0 && n >= k && k == floor(k) && n == floor(n) && n < 4e9))
        die_user("share_test_of: counts must be integers 0 <= k <= n (got %g of %g)", k, n);
    if (!(p0 > 0 && p0 < 1)) die_user("share_test_of: the threshold share must be in (0, 1), got %g", p0);
    share_test t = {.k = k, .n = n, .level = level, .prop = NAN, .lo = NAN, .hi = NAN, .p_above = 1, .p_below = 1};
    if (n == 0) return t;
    unsigned ku = (unsigned)k, nu = (unsigned)n;
    t.prop = k / n;
    t.p_above = ku == 0 ? 1.0 : gsl_cdf_binomial_Q(ku - 1, p0, nu);
    t.p_below = gsl_cdf_binomial_P(ku, p0, nu);
    double a = 1 - level;
    t.lo = ku == 0 ? 0.0 : gsl_cdf_beta_Pinv(a / 2, k, n - k + 1);
    t.hi = ku == nu ? 1.0 : gsl_cdf_beta_Pinv(1 - a / 2, k + 1, n - k);
    return t;
}

void holm_adjust(const double *p, int m, double *adj)
{
    int *order = xmalloc((size_t)(m > 0 ? m : 1) * sizeof *order);
    for (int i = 0; i < m; i++) order[i] = i;
    for (int i = 1; i < m; i++) /* insertion sort by p, NaN last (m is a family: a handful) */
        for (int j = i; j > 0; j--) {
            double a = p[order[j - 1]], b = p[order[j]];
            if (!(isnan(a) || a > b) || isnan(b)) break;
            int t = order[j - 1];
            order[j - 1] = order[j];
            order[j] = t;
        }
    double running = 0;
    for (int r = 0; r < m; r++) {
        double q = p[order[r]];
        if (isnan(q)) { adj[order[r]] = NAN; continue; }
        q *= m - r;
        running = fmax(running, q < 1 ? q : 1);
        adj[order[r]] = running;
    }
    free(order);
}

/* ---- verdicts ------------------------------------------------------------------- */

static void check_side(claim_side side)
{
    if (side != CLAIM_ABOVE && side != CLAIM_BELOW) DIE("bad claim_side %d", (int)side);
}

static int interval_invalid(const interval *s, double threshold)
{
    return s->n < 2 || s->n_dropped > 0 || !isfinite(s->lo) || !isfinite(s->hi) || !isfinite(threshold) ||
           s->lo > s->hi;
}

/* PASS / FAIL / INCONCLUSIVE of a valid interval. */
static verdict interval_rule(const interval *s, claim_side side, double threshold)
{
    int above = s->lo > threshold, below = s->hi < threshold;
    if (side == CLAIM_ABOVE) return above ? VERDICT_PASS : below ? VERDICT_FAIL : VERDICT_INCONCLUSIVE;
    return below ? VERDICT_PASS : above ? VERDICT_FAIL : VERDICT_INCONCLUSIVE;
}

verdict verdict_of(interval stat, claim_side side, double threshold, const interval *control)
{
    check_side(side);
    if (control && !(control->level == stat.level))
        die_user("verdict_of: control interval at level %g, statistic at level %g", control->level, stat.level);
    if (interval_invalid(&stat, threshold) || (control && interval_invalid(control, threshold)))
        return VERDICT_INVALID;
    verdict v = interval_rule(&stat, side, threshold);
    if (v == VERDICT_PASS && control && interval_rule(control, side, threshold) != VERDICT_FAIL)
        return VERDICT_NO_POWER; /* a PASS is vouched for only by a control the rule decidedly rejects */
    return v;
}

static int sign_invalid(const sign_test *s)
{
    return s->n_dropped > 0 || s->n_above + s->n_below + s->n_ties < 2 || !isfinite(s->p_above) ||
           !isfinite(s->p_below);
}

static verdict sign_rule(const sign_test *s, claim_side side, double alpha)
{
    double p_claim = side == CLAIM_ABOVE ? s->p_above : s->p_below;
    double p_other = side == CLAIM_ABOVE ? s->p_below : s->p_above;
    return p_claim <= alpha ? VERDICT_PASS : p_other <= alpha ? VERDICT_FAIL : VERDICT_INCONCLUSIVE;
}

verdict verdict_of_sign(sign_test s, claim_side side, double alpha, const sign_test *control)
{
    check_side(side);
    if (!(alpha > 0 && alpha < 0.5)) die_user("verdict_of_sign: alpha must be in (0, 0.5), got %g", alpha);
    if (sign_invalid(&s) || (control && sign_invalid(control))) return VERDICT_INVALID;
    verdict v = sign_rule(&s, side, alpha);
    if (v == VERDICT_PASS && control && sign_rule(control, side, alpha) != VERDICT_FAIL) return VERDICT_NO_POWER;
    return v;
}

const char *verdict_name(verdict v)
{
    switch (v) {
    case VERDICT_PASS: return "PASS";
    case VERDICT_FAIL: return "FAIL";
    case VERDICT_INCONCLUSIVE: return "INCONCLUSIVE";
    case VERDICT_NO_POWER: return "NO POWER";
    case VERDICT_INVALID: return "INVALID";
    }
    DIE("bad verdict %d", (int)v);
}

