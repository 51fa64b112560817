/* Judging one claim: a reading of its statistic over the seeds, its control's
 * and their paired difference's, and the verdict from them (verdict.h). */
#include "verdict.h"
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static double p_side(claim_side side, double p_above, double p_below, int claim)
{
    return (side == CLAIM_ABOVE) == (claim != 0) ? p_above : p_below;
}

/* The exact sign test (ties dropped; ±inf are ordered like any value). */
static void sign_reading(claim_reading *r, claim_side side, double threshold, const double *x, int n, double alpha)
{
    double *v = xmalloc((size_t)n * sizeof *v);
    int m = 0, above = 0, below = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(x[i])) {
            v[m++] = x[i];
            above += x[i] > threshold;
            below += x[i] < threshold;
        }
    /* sign_test_of counts ±inf out; the test needs only the signs, so feed ±1 around 0 */
    double *s = xmalloc((size_t)(m ? m : 1) * sizeof *s);
    for (int i = 0; i < m; i++) s[i] = v[i] > threshold ? 1 : v[i] < threshold ? -1 : 0;
    sign_test st = sign_test_of(s, m, 0, 1 - 2 * alpha);
    r->test = RULE_SIGN;
    r->mean = median_of(v, m);
    r->lo = r->hi = NAN;
    r->k = side == CLAIM_ABOVE ? above : below;
    r->total = m;
    r->p_claim = p_side(side, st.p_above, st.p_below, 1);
    r->p_other = p_side(side, st.p_above, st.p_below, 0);
    free(s);
    free(v);
}

static void share_reading(claim_reading *r, claim_side side, double threshold, const double *count, const double *total,
                          int n, double alpha)
{
    double k = 0, t = 0;
    for (int i = 0; i < n; i++) {
        int usable = count && total && isfinite(count[i]) && isfinite(total[i]) && count[i] >= 0 &&
                     total[i] >= count[i] && count[i] == floor(count[i]) && total[i] == floor(total[i]);
        if (!usable) { r->n_missing++; continue; }
        k += count[i];
        t += total[i];
    }
    r->test = RULE_SHARE;
    r->k = k;
    r->total = t;
    if (t == 0 || !(threshold > 0 && threshold < 1)) { r->n_missing += t == 0 ? n : 0; return; }
    share_test s = share_test_of(k, t, threshold, 1 - 2 * alpha);
    r->mean = s.prop;
    r->lo = s.lo;
    r->hi = s.hi;
    r->p_claim = p_side(side, s.p_above, s.p_below, 1);
    r->p_other = p_side(side, s.p_above, s.p_below, 0);
}

static void exact_reading(claim_reading *r, claim_side side, double threshold, const double *x, int n)
{
    r->test = RULE_EXACT;
    double v = NAN;
    for (int i = 0; i < n && isnan(v); i++) v = x[i];
    r->mean = r->lo = r->hi = v;
    int above = v > threshold, below = v < threshold;
    r->p_claim = (side == CLAIM_ABOVE ? above : below) ? 0.0 : 1.0;
    r->p_other = (side == CLAIM_ABOVE ? below : above) ? 0.0 : 1.0;
}

static void interval_reading(claim_reading *r, claim_side side, double threshold, const double *x, int n, double alpha)
{
    double *v = xmalloc((size_t)n * sizeof *v);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(x[i])) v[m++] = x[i];
    interval iv = t_interval(v, m, 1 - 2 * alpha);
    r->test = RULE_INTERVAL;
    r->mean = iv.mean;
    r->lo = iv.lo;
    r->hi = iv.hi;
    r->p_claim = side == CLAIM_ABOVE ? t_p_above(iv, threshold) : t_p_below(iv, threshold);
    r->p_other = side == CLAIM_ABOVE ? t_p_below(iv, threshold) : t_p_above(iv, threshold);
    free(v);
}

claim_reading reading_over_seeds(rule_kind kind, claim_side side, double threshold, const double *x, const double *count,
                   const double *total, int n, double alpha)
{
    if (!(alpha > 0 && alpha < 0.5)) die_user("alpha must be in (0, 0.5), got %g", alpha);
    claim_reading r = {.test = kind, .mean = NAN, .lo = NAN, .hi = NAN, .k = NAN, .total = NAN, .p_claim = NAN,
                 .p_other = NAN, .constant = 1};
    double first = NAN;
    for (int i = 0; i < n; i++) {
        if (isnan(x[i])) { r.n_missing++; continue; }
        if (r.n++ == 0) first = x[i];
        else if (x[i] != first) r.constant = 0;
        r.n_inf += isinf(x[i]) != 0;
    }
    if (kind == RULE_SHARE) share_reading(&r, side, threshold, count, total, n, alpha);
    else if (r.n == 0) return r;
    else if (kind == RULE_EXACT) exact_reading(&r, side, threshold, x, n);
    else if (kind == RULE_SIGN || r.n_inf > 0) sign_reading(&r, side, threshold, x, n, alpha);
    else interval_reading(&r, side, threshold, x, n, alpha);
    return r;
}

/* Why a reading cannot be judged ("" if it can). */
static const char *unusable(const claim_reading *r)
{
    if (r->n_missing > 0) return "a seed's value is missing or not a number";
    if (r->n < 2) return "fewer than 2 seeds";
    if (r->test == RULE_EXACT && !r->constant) return "an exact number that differs between seeds";
    if (r->test == RULE_INTERVAL && r->constant)
        return "the same value on every seed: a zero-width interval (the seeds do not enter)";
    /* a sign test's values the same on every seed: the seeds did not enter (a diverged run on
     * every seed, ±inf, is judged as such; a share is judged on its pooled counts, which may
     * well repeat: a few items per seed) */
    if (r->test == RULE_SIGN && r->constant && isfinite(r->mean))
        return "the same value on every seed (the seeds do not enter)";
    if (isnan(r->p_claim) || isnan(r->p_other)) return "no test possible";
    return "";
}

verdict reading_verdict(const claim_reading *r, double alpha)
{
    if (*unusable(r)) return VERDICT_INVALID;
    return r->p_claim <= alpha ? VERDICT_PASS : r->p_other <= alpha ? VERDICT_FAIL : VERDICT_INCONCLUSIVE;
}

static verdict because(verdict v, char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static verdict because(verdict v, char *why, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, size, fmt, ap);
    va_end(ap);
    return v;
}

verdict claim_verdict(const claim_reading *claim, double p_claim_adj, double p_other_adj, const claim_reading *control,
                      const claim_reading *paired, double alpha, char *why, size_t why_size)
{
    why[0] = '\0';
    const char *u = unusable(claim);
    if (*u) return because(VERDICT_INVALID, why, why_size, "%s", u);
    if (control && *(u = unusable(control))) return because(VERDICT_INVALID, why, why_size, "control: %s", u);
    if (p_other_adj <= alpha) return VERDICT_FAIL;
    if (!(p_claim_adj <= alpha)) return VERDICT_INCONCLUSIVE;
    if (control && reading_verdict(control, alpha) != VERDICT_FAIL)
        return because(VERDICT_NO_POWER, why, why_size, "the control is %s, not a decided FAIL",
                       verdict_name(reading_verdict(control, alpha)));
    /* the paired difference may be the same on every seed (two shares that repeat): the claim
     * and the control were each checked for values the seeds do not change */
    claim_reading pr = paired ? *paired : (claim_reading){0};
    pr.constant = 0;
    if (paired && reading_verdict(&pr, alpha) != VERDICT_PASS)
        return because(VERDICT_NO_POWER, why, why_size, "claim minus control is %s on the seeds, not decided",
                       verdict_name(reading_verdict(&pr, alpha)));
    return VERDICT_PASS;
}
