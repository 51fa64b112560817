/* Every control of the claim table can pass and can fail (docs/verdicts.md, "Controls that
 * can pass"). For each claim with a control, ten seeds of constructed values: the claim's
 * statistic well on the claim's side; the control (a) on the claim's side too — the control
 * passes its rule and the claim is NO POWER — and (b) on the other side — the control is a
 * decided FAIL and the claim PASSes. A control that no input could pass (a rule that can never
 * hold, an orientation that cannot be reached) fails (a); one that no input could fail fails
 * (b). That each control is also a realistic null — one a reasonable input passes — is shown
 * where it is computed: test_hessian (the column splits), test_quad (the random D), and the
 * study's own numbers (docs/verdicts.md). */
#include "check.h"
#include "verdict/verdict.h"

enum { N = 10 };

/* Per-seed values of a statistic on the claim's side (on = 1) or the other (on = 0) of its rule;
 * shares as counts of 20 items per seed. */
static void make_values(const claim_rule *r, int on, double *x, double *count, double *total)
{
    int above = (r->side == CLAIM_ABOVE) == on;
    for (int k = 0; k < N; k++) {
        double wiggle = 0.01 * (k - N / 2); /* a spread, so the interval has a width */
        if (r->kind == RULE_SHARE) {
            double p = above ? r->threshold + 0.9 * (1 - r->threshold) : 0.1 * r->threshold;
            total[k] = 20, count[k] = round(p * 20);
            x[k] = count[k] / total[k];
        } else {
            double scale = fabs(r->threshold) > 1 ? fabs(r->threshold) : 1;
            x[k] = r->threshold + (above ? 1 : -1) * scale * (1 + wiggle);
        }
    }
}

static verdict judge(const claim_rule *r, int control_on)
{
    double x[N], cx[N], c[N], t[N], cc[N], ct[N], d[N];
    make_values(r, 1, x, c, t);
    make_values(r, control_on, cx, cc, ct);
    const double alpha = 0.05;
    claim_reading s = reading_over_seeds(r->kind, r->side, r->threshold, x, c, t, N, alpha);
    claim_reading k = reading_over_seeds(r->kind, r->side, r->threshold, cx, cc, ct, N, alpha);
    for (int i = 0; i < N; i++) d[i] = x[i] - cx[i];
    claim_reading p = reading_over_seeds(r->kind == RULE_SHARE ? RULE_SIGN : r->kind, r->side, 0, d, NULL, NULL, N,
                                         alpha);
    char why[256];
    return claim_verdict(&s, s.p_claim, s.p_other, &k, r->kind == RULE_EXACT ? NULL : &p, alpha, why, sizeof why);
}

int main(void)
{
    const claim_rule *rules;
    int n = claim_rules(&rules), with_control = 0;
    for (int i = 0; i < n; i++) {
        const claim_rule *r = &rules[i];
        if (!r->control || r->kind == RULE_EXACT) continue;
        with_control++;
        verdict passes = judge(r, 1), fails = judge(r, 0);
        CHECK(passes == VERDICT_NO_POWER, "%s: a control on the claim's side passes its rule (claim %s)", r->id,
              verdict_name(passes));
        CHECK(fails == VERDICT_PASS, "%s: a control on the other side fails it and the claim passes (claim %s)",
              r->id, verdict_name(fails));
    }
    CHECK(with_control >= 40, "%d claims with a control", with_control);
    return check_summary();
}
