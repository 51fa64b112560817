/* Tests of verdict/stats and judge: t intervals, sign tests, verdicts, extending lr grids, median.
 * Expected values are closed forms worked out by hand in the comments. */
#include "check.h"
#include <gsl/gsl_cdf.h>
#include "core/core.h"
#include "harness/lr_grid.h"
#include "verdict/verdict.h"
#include <stdlib.h>

#define T_0975_4 2.7764451051977987 /* Student t quantile 0.975 with 4 degrees of freedom */

/* ---- t_interval ------------------------------------------------------------------- */

static void test_t_interval(void)
{
    /* x = 1..5: mean 3, Σ(x−3)² = 10, sd = √(10/4) = √2.5, se = sd/√5 = √0.5,
     * half-width = t_{0.975,4}·√0.5 = 1.963243161477561. */
    const double x[5] = {1, 2, 3, 4, 5};
    interval r = t_interval(x, 5, 0.95);
    CHECK(r.n == 5 && r.n_dropped == 0, "n %d dropped %d", r.n, r.n_dropped);
    CHECK_CLOSE(r.mean, 3.0, 1e-15, "mean");
    CHECK_CLOSE(r.sd, sqrt(2.5), 1e-15, "sd (n−1)");
    CHECK_CLOSE(r.se, sqrt(0.5), 1e-15, "se");
    CHECK_CLOSE((r.hi - r.mean) / r.se, T_0975_4, 1e-12, "t quantile 0.975, 4 df");
    CHECK_CLOSE(r.lo, 3 - 1.963243161477561, 1e-12, "lo");
    CHECK_CLOSE(r.hi, 3 + 1.963243161477561, 1e-12, "hi");
    CHECK(r.level == 0.95, "level %g", r.level);

    /* 1 degree of freedom: the t distribution is Cauchy, quantile tan(π(p − 1/2)).
     * x = {0, 2}: mean 1, sd √2, se 1; level 0.9 → p = 0.95, t = tan(0.45π) = 6.3137514654. */
    const double y[2] = {0, 2};
    r = t_interval(y, 2, 0.9);
    CHECK_CLOSE(r.se, 1.0, 1e-15, "se of {0,2}");
    CHECK_CLOSE(r.hi - 1, tan(M_PI * 0.45), 1e-12, "Cauchy quantile 0.95");
    r = t_interval(y, 2, 0.95);
    CHECK_CLOSE(r.hi - 1, 12.706204736174707, 1e-12, "t quantile 0.975, 1 df");

    /* n = 1 and n = 0 */
    r = t_interval(x, 1, 0.95);
    CHECK(r.n == 1 && r.mean == 1 && isnan(r.sd) && isnan(r.se) && isnan(r.lo) && isnan(r.hi),
          "n=1: mean %g sd %g lo %g hi %g", r.mean, r.sd, r.lo, r.hi);
    r = t_interval(NULL, 0, 0.95);
    CHECK(r.n == 0 && isnan(r.mean) && isnan(r.lo) && isnan(r.hi), "n=0: mean %g", r.mean);

    /* all equal: sd 0, a zero-width interval at the mean */
    const double c[3] = {2.5, 2.5, 2.5};
    r = t_interval(c, 3, 0.95);
    CHECK(r.sd == 0 && r.lo == 2.5 && r.hi == 2.5, "constant: sd %g lo %g hi %g", r.sd, r.lo, r.hi);

    /* non-finite values are counted out: the same interval as 1..5, three dropped */
    const double z[8] = {1, NAN, 2, 3, INFINITY, 4, 5, -INFINITY};
    r = t_interval(z, 8, 0.95);
    CHECK(r.n == 5 && r.n_dropped == 3, "n %d dropped %d", r.n, r.n_dropped);
    CHECK_CLOSE(r.lo, 3 - 1.963243161477561, 1e-12, "lo with NaN dropped");
    const double allnan[2] = {NAN, NAN};
    r = t_interval(allnan, 2, 0.95);
    CHECK(r.n == 0 && r.n_dropped == 2 && isnan(r.mean) && isnan(r.lo), "all NaN: n %d", r.n);

    EXPECT_USER_ERROR(t_interval(x, 5, 1.0), "level must be in (0,1)");
    EXPECT_USER_ERROR(t_interval(x, 5, 0.0), "level must be in (0,1)");
    EXPECT_USER_ERROR(t_interval(x, 5, NAN), "level must be in (0,1)");
    EXPECT_USER_ERROR(t_interval(x, -1, 0.95), "n must be >= 0");
    EXPECT_USER_ERROR(t_interval(NULL, 3, 0.95), "NULL");
}

static void test_paired_interval(void)
{
    /* a − b = 1..5: the interval of test_t_interval */
    const double a[7] = {2, 4, 6, 8, 10, NAN, INFINITY}, b[7] = {1, 2, 3, 4, 5, 0, INFINITY};
    interval r = paired_interval(a, b, 5, 0.95);
    CHECK(r.n == 5 && r.n_dropped == 0, "n %d", r.n);
    CHECK_CLOSE(r.mean, 3.0, 1e-15, "paired mean");
    CHECK_CLOSE(r.se, sqrt(0.5), 1e-15, "paired se");
    CHECK_CLOSE(r.hi, 3 + 1.963243161477561, 1e-12, "paired hi");
    r = paired_interval(a, b, 7, 0.95); /* NaN − 0 and inf − inf are dropped */
    CHECK(r.n == 5 && r.n_dropped == 2, "pairs with NaN, inf: n %d dropped %d", r.n, r.n_dropped);
    CHECK_CLOSE(r.hi, 3 + 1.963243161477561, 1e-12, "paired hi with pairs dropped");
    /* finite inputs whose difference overflows are dropped too */
    const double big[2] = {1e308, 1}, negbig[2] = {-1e308, 0};
    r = paired_interval(big, negbig, 2, 0.95);
    CHECK(r.n == 1 && r.n_dropped == 1, "overflowing difference: n %d dropped %d", r.n, r.n_dropped);
}

/* ---- sign test ---------------------------------------------------------------------- */

static void test_sign_test(void)
{
    /* 5 of 5 above: P(X ≥ 5) = 1/32, two-sided 1/16; Clopper–Pearson lower bound
     * solves P(Bin(5,p) ≥ 5) = p⁵ = 0.025, so p = 0.025^(1/5); the upper bound is 1. */
    const double x[5] = {1, 2, 3, 4, 5};
    sign_test s = sign_test_of(x, 5, 0.5, 0.95);
    CHECK(s.n_above == 5 && s.n_below == 0 && s.n_ties == 0 && s.n_dropped == 0, "counts %d %d %d", s.n_above,
          s.n_below, s.n_ties);
    CHECK_CLOSE(s.p_above, 1.0 / 32, 1e-14, "p_above 5/5");
    CHECK_CLOSE(s.p_below, 1.0, 1e-14, "p_below 5/5");
    CHECK_CLOSE(s.p_two_sided, 1.0 / 16, 1e-14, "two-sided 5/5");
    CHECK(s.prop == 1, "prop %g", s.prop);
    CHECK_CLOSE(s.prop_lo, pow(0.025, 0.2), 1e-12, "Clopper–Pearson lower 5/5");
    CHECK(s.prop_hi == 1, "Clopper–Pearson upper %g", s.prop_hi);

    /* 0 of 5 above: mirror image; upper bound 1 − 0.025^(1/5) */
    s = sign_test_of(x, 5, 10, 0.95);
    CHECK(s.n_above == 0 && s.n_below == 5, "counts %d %d", s.n_above, s.n_below);
    CHECK_CLOSE(s.p_above, 1.0, 1e-14, "p_above 0/5");
    CHECK_CLOSE(s.p_below, 1.0 / 32, 1e-14, "p_below 0/5");
    CHECK(s.prop_lo == 0, "lower %g", s.prop_lo);
    CHECK_CLOSE(s.prop_hi, 1 - pow(0.025, 0.2), 1e-12, "Clopper–Pearson upper 0/5");

    /* ties dropped: 3 values equal to the threshold leave the 5/5 result unchanged */
    const double t[8] = {1, 1, 1, 2, 3, 4, 5, 6};
    s = sign_test_of(t, 8, 1, 0.95);
    CHECK(s.n_above == 5 && s.n_ties == 3 && s.n_below == 0, "ties: %d above %d ties", s.n_above, s.n_ties);
    CHECK_CLOSE(s.p_above, 1.0 / 32, 1e-14, "p_above with ties dropped");
    CHECK_CLOSE(s.p_two_sided, 1.0 / 16, 1e-14, "two-sided with ties dropped");

    /* 5 above, 1 below, 1 tie: m = 6, P(X ≥ 5) = (C(6,5)+C(6,6))/64 = 7/64,
     * P(X ≤ 5) = 63/64, two-sided 14/64. */
    const double u[7] = {0, 2, 3, 4, 5, 6, 1};
    s = sign_test_of(u, 7, 1, 0.95);
    CHECK(s.n_above == 5 && s.n_below == 1 && s.n_ties == 1, "counts %d %d %d", s.n_above, s.n_below, s.n_ties);
    CHECK_CLOSE(s.p_above, 7.0 / 64, 1e-14, "p_above 5 of 6");
    CHECK_CLOSE(s.p_below, 63.0 / 64, 1e-14, "p_below 5 of 6");
    CHECK_CLOSE(s.p_two_sided, 14.0 / 64, 1e-14, "two-sided 5 of 6");

    /* 8 above of 10: P(X ≥ 8) = (45+10+1)/1024, P(X ≤ 8) = 1 − 11/1024 */
    const double v[10] = {1, 1, 1, 1, 1, 1, 1, 1, -1, -1};
    s = sign_test_of(v, 10, 0, 0.95);
    CHECK_CLOSE(s.p_above, 56.0 / 1024, 1e-14, "p_above 8 of 10");
    CHECK_CLOSE(s.p_below, 1013.0 / 1024, 1e-14, "p_below 8 of 10");
    CHECK_CLOSE(s.p_two_sided, 112.0 / 1024, 1e-14, "two-sided 8 of 10");
    CHECK_CLOSE(s.prop, 0.8, 1e-15, "prop 8 of 10");

    /* 1 of 2: Beta(1,2) CDF 1−(1−p)², Beta(2,1) CDF p² → bounds 1 − √0.975 and √0.975;
     * balanced counts: both one-sided p = 3/4, two-sided capped at 1. */
    const double w[2] = {1, -1};
    s = sign_test_of(w, 2, 0, 0.95);
    CHECK_CLOSE(s.prop_lo, 1 - sqrt(0.975), 1e-12, "Clopper–Pearson lower 1/2");
    CHECK_CLOSE(s.prop_hi, sqrt(0.975), 1e-12, "Clopper–Pearson upper 1/2");
    CHECK_CLOSE(s.p_above, 0.75, 1e-14, "p_above 1 of 2");
    CHECK(s.p_two_sided == 1, "two-sided capped: %g", s.p_two_sided);

    /* exactness: for m <= 62 the tails are exact integer sums, rounded once */
    CHECK(sign_test_of(x, 5, 0.5, 0.95).p_above == 1.0 / 32, "p_above 5/5 exactly 1/32");
    CHECK(sign_test_of(v, 10, 0, 0.95).p_above == 56.0 / 1024, "p_above 8/10 exactly 56/1024");
    /* larger m, expected values from Python's fractions: Σ_{j≥k} C(m,j) / 2^m rounded once */
    double big[100];
    for (int i = 0; i < 100; i++) big[i] = i < 40 ? 1 : -1;
    s = sign_test_of(big, 62, 0, 0.95); /* 40 above of 62 (exact path, last size) */
    CHECK(s.p_above == 0.015007932174533646, "p_above 40 of 62: %.17g", s.p_above);
    s = sign_test_of(big, 100, 0, 0.95); /* 40 above of 100 (GSL path): P(X ≤ 40) = P(X ≥ 60) */
    CHECK_CLOSE(s.p_below, 0.028443966820490395, 1e-12, "p_below 40 of 100");
    CHECK_CLOSE(s.p_above, 0.9823998998911476, 1e-12, "p_above 40 of 100");
    for (int i = 0; i < 70; i++) big[i] = i < 35 ? 1 : -1;
    s = sign_test_of(big, 70, 0, 0.95); /* 35 of 70: (1 + C(70,35)/2^70)/2 */
    CHECK_CLOSE(s.p_above, 0.5475127367702688, 1e-12, "p_above 35 of 70");
    CHECK(s.p_two_sided == 1, "balanced 70: two-sided %g", s.p_two_sided);
    for (int i = 0; i < 100; i++) big[i] = 1;
    s = sign_test_of(big, 100, 0, 0.95);
    CHECK_CLOSE(s.p_above / ldexp(1, -100), 1.0, 1e-10, "p_above 100 of 100 = 2^-100");

    /* non-finite values are counted out; all ties leave m = 0 */
    const double nf[5] = {1, NAN, 2, INFINITY, -INFINITY};
    s = sign_test_of(nf, 5, 0, 0.95);
    CHECK(s.n_above == 2 && s.n_dropped == 3, "above %d dropped %d", s.n_above, s.n_dropped);
    const double ties[3] = {4, 4, 4};
    s = sign_test_of(ties, 3, 4, 0.95);
    CHECK(s.n_ties == 3 && s.p_above == 1 && s.p_below == 1 && s.p_two_sided == 1 && isnan(s.prop) &&
              isnan(s.prop_lo),
          "all ties: p %g %g prop %g", s.p_above, s.p_below, s.prop);

    EXPECT_USER_ERROR(sign_test_of(x, 5, NAN, 0.95), "threshold must be finite");
    EXPECT_USER_ERROR(sign_test_of(x, 5, 0, 1.5), "level must be in (0,1)");
    EXPECT_USER_ERROR(sign_test_of(x, -2, 0, 0.95), "n must be >= 0");
}

/* ---- verdicts ------------------------------------------------------------------------ */

static interval iv(double lo, double hi)
{
    interval r = {.n = 5, .n_dropped = 0, .mean = 0.5 * (lo + hi), .sd = 1, .se = 1, .lo = lo, .hi = hi, .level = 0.95};
    return r;
}

#define CHECK_VERDICT(expr, want)                                                                           \
    do {                                                                                                    \
        verdict got_ = (expr);                                                                              \
        CHECK(got_ == (want), "%s: got %s, expected %s", #expr, verdict_name(got_), verdict_name(want));  \
    } while (0)

static void test_verdict_of(void)
{
    /* CLAIM_ABOVE, threshold 0 */
    CHECK_VERDICT(verdict_of(iv(1, 2), CLAIM_ABOVE, 0, NULL), VERDICT_PASS);
    CHECK_VERDICT(verdict_of(iv(-2, -1), CLAIM_ABOVE, 0, NULL), VERDICT_FAIL);
    CHECK_VERDICT(verdict_of(iv(-1, 1), CLAIM_ABOVE, 0, NULL), VERDICT_INCONCLUSIVE);
    CHECK_VERDICT(verdict_of(iv(0, 1), CLAIM_ABOVE, 0, NULL), VERDICT_INCONCLUSIVE);   /* endpoint on it */
    CHECK_VERDICT(verdict_of(iv(-1, 0), CLAIM_ABOVE, 0, NULL), VERDICT_INCONCLUSIVE);
    /* CLAIM_BELOW, threshold 0: the mirror image */
    CHECK_VERDICT(verdict_of(iv(-2, -1), CLAIM_BELOW, 0, NULL), VERDICT_PASS);
    CHECK_VERDICT(verdict_of(iv(1, 2), CLAIM_BELOW, 0, NULL), VERDICT_FAIL);
    CHECK_VERDICT(verdict_of(iv(-1, 1), CLAIM_BELOW, 0, NULL), VERDICT_INCONCLUSIVE);
    CHECK_VERDICT(verdict_of(iv(-1, 0), CLAIM_BELOW, 0, NULL), VERDICT_INCONCLUSIVE);
    /* a nonzero threshold */
    CHECK_VERDICT(verdict_of(iv(1, 2), CLAIM_ABOVE, 1.5, NULL), VERDICT_INCONCLUSIVE);
    CHECK_VERDICT(verdict_of(iv(1, 2), CLAIM_BELOW, 2.5, NULL), VERDICT_PASS);

    /* negative controls: one built to pass the rule turns PASS into NO POWER,
     * and so does one the rule cannot decide (INCONCLUSIVE): only a control
     * the rule decidedly rejects vouches for a PASS */
    interval pass_above = iv(0.5, 3), fail_above = iv(-3, -0.5), incon = iv(-1, 1);
    CHECK_VERDICT(verdict_of(iv(1, 2), CLAIM_ABOVE, 0, &pass_above), VERDICT_NO_POWER);
    CHECK_VERDICT(verdict_of(iv(1, 2), CLAIM_ABOVE, 0, &fail_above), VERDICT_PASS);
    CHECK_VERDICT(verdict_of(iv(1, 2), CLAIM_ABOVE, 0, &incon), VERDICT_NO_POWER);
    CHECK_VERDICT(verdict_of(iv(-2, -1), CLAIM_BELOW, 0, &fail_above), VERDICT_NO_POWER);
    CHECK_VERDICT(verdict_of(iv(-2, -1), CLAIM_BELOW, 0, &pass_above), VERDICT_PASS);
    CHECK_VERDICT(verdict_of(iv(-2, -1), CLAIM_BELOW, 0, &incon), VERDICT_NO_POWER);
    /* a control does not change FAIL or INCONCLUSIVE */
    CHECK_VERDICT(verdict_of(iv(-2, -1), CLAIM_ABOVE, 0, &pass_above), VERDICT_FAIL);
    CHECK_VERDICT(verdict_of(iv(-1, 1), CLAIM_ABOVE, 0, &pass_above), VERDICT_INCONCLUSIVE);

    /* INVALID, both sides */
    for (int side = CLAIM_ABOVE; side <= CLAIM_BELOW; side++) {
        claim_side cs = (claim_side)side;
        double thr = side == CLAIM_ABOVE ? 0 : 3; /* iv(1,2) would PASS on both sides */
        CHECK_VERDICT(verdict_of(iv(1, 2), cs, thr, NULL), VERDICT_PASS);
        interval r = iv(1, 2);
        r.n = 1;
        CHECK_VERDICT(verdict_of(r, cs, thr, NULL), VERDICT_INVALID);
        r = iv(1, 2);
        r.n_dropped = 1;
        CHECK_VERDICT(verdict_of(r, cs, thr, NULL), VERDICT_INVALID);
        CHECK_VERDICT(verdict_of(iv(NAN, 2), cs, thr, NULL), VERDICT_INVALID);
        CHECK_VERDICT(verdict_of(iv(1, INFINITY), cs, thr, NULL), VERDICT_INVALID);
        CHECK_VERDICT(verdict_of(iv(-INFINITY, 2), cs, thr, NULL), VERDICT_INVALID);
        CHECK_VERDICT(verdict_of(iv(2, 1), cs, thr, NULL), VERDICT_INVALID);
        CHECK_VERDICT(verdict_of(iv(1, 2), cs, NAN, NULL), VERDICT_INVALID);
        interval bad_control = iv(NAN, NAN);
        CHECK_VERDICT(verdict_of(iv(1, 2), cs, thr, &bad_control), VERDICT_INVALID);
    }

    /* from data: x = 1..5 (interval 3 ± 1.96) against 0 */
    const double x[5] = {1, 2, 3, 4, 5};
    const double ctl_pass[5] = {1.1, 2.2, 0.9, 1.7, 1.3};   /* clearly above 0 */
    const double ctl_fail[5] = {-0.1, 0.2, -0.3, 0.1, 0.05}; /* straddles 0 */
    interval s = t_interval(x, 5, 0.95), cp = t_interval(ctl_pass, 5, 0.95), cf = t_interval(ctl_fail, 5, 0.95);
    CHECK_VERDICT(verdict_of(s, CLAIM_ABOVE, 0, NULL), VERDICT_PASS);
    CHECK_VERDICT(verdict_of(s, CLAIM_ABOVE, 0, &cp), VERDICT_NO_POWER);
    CHECK_VERDICT(verdict_of(s, CLAIM_ABOVE, 0, &cf), VERDICT_NO_POWER); /* it straddles 0: not rejected */
    const double ctl_low[5] = {-1.1, -0.8, -1.3, -0.9, -1.0};
    interval cl = t_interval(ctl_low, 5, 0.95);
    CHECK_VERDICT(verdict_of(s, CLAIM_ABOVE, 0, &cl), VERDICT_PASS);
    CHECK_VERDICT(verdict_of(s, CLAIM_ABOVE, 4, NULL), VERDICT_INCONCLUSIVE);
    CHECK_VERDICT(verdict_of(s, CLAIM_ABOVE, 5, NULL), VERDICT_FAIL); /* hi = 4.96 */
    CHECK_VERDICT(verdict_of(s, CLAIM_BELOW, 0, NULL), VERDICT_FAIL);
    /* one NaN seed: never a PASS from NaN */
    const double xn[6] = {1, 2, 3, 4, 5, NAN};
    CHECK_VERDICT(verdict_of(t_interval(xn, 6, 0.95), CLAIM_ABOVE, 0, NULL), VERDICT_INVALID);
    CHECK_VERDICT(verdict_of(t_interval(x, 1, 0.95), CLAIM_ABOVE, 0, NULL), VERDICT_INVALID);

    interval other_level = t_interval(ctl_pass, 5, 0.9);
    EXPECT_USER_ERROR(verdict_of(s, CLAIM_ABOVE, 0, &other_level), "level");

    CHECK(strcmp(verdict_name(VERDICT_PASS), "PASS") == 0 && strcmp(verdict_name(VERDICT_FAIL), "FAIL") == 0 &&
              strcmp(verdict_name(VERDICT_INCONCLUSIVE), "INCONCLUSIVE") == 0 &&
              strcmp(verdict_name(VERDICT_NO_POWER), "NO POWER") == 0 &&
              strcmp(verdict_name(VERDICT_INVALID), "INVALID") == 0,
          "verdict names");
}

static void test_verdict_of_sign(void)
{
    const double up5[5] = {1, 2, 3, 4, 5}, down5[5] = {-1, -2, -3, -4, -5}, up4[4] = {1, 2, 3, 4};
    const double mixed[5] = {1, 2, 3, -4, -5}, with_nan[6] = {1, 2, 3, 4, 5, NAN}, one[1] = {1}, ties[3] = {0, 0, 0};
    sign_test a5 = sign_test_of(up5, 5, 0, 0.95);   /* p_above 1/32 */
    sign_test b5 = sign_test_of(down5, 5, 0, 0.95); /* p_below 1/32 */
    sign_test a4 = sign_test_of(up4, 4, 0, 0.95);   /* p_above 1/16 > 0.05 */
    sign_test mx = sign_test_of(mixed, 5, 0, 0.95);
    sign_test nn = sign_test_of(with_nan, 6, 0, 0.95);
    sign_test n1 = sign_test_of(one, 1, 0, 0.95);
    sign_test tt = sign_test_of(ties, 3, 0, 0.95);

    CHECK_VERDICT(verdict_of_sign(a5, CLAIM_ABOVE, 0.05, NULL), VERDICT_PASS);
    CHECK_VERDICT(verdict_of_sign(a5, CLAIM_BELOW, 0.05, NULL), VERDICT_FAIL);
    CHECK_VERDICT(verdict_of_sign(b5, CLAIM_BELOW, 0.05, NULL), VERDICT_PASS);
    CHECK_VERDICT(verdict_of_sign(b5, CLAIM_ABOVE, 0.05, NULL), VERDICT_FAIL);
    /* 1/32 = 0.03125: PASS at alpha = 1/32 exactly (≤), INCONCLUSIVE at 0.03 */
    CHECK_VERDICT(verdict_of_sign(a5, CLAIM_ABOVE, 1.0 / 32, NULL), VERDICT_PASS);
    CHECK_VERDICT(verdict_of_sign(a5, CLAIM_ABOVE, 0.03, NULL), VERDICT_INCONCLUSIVE);
    /* 4 seeds can never pass at 0.05 */
    CHECK_VERDICT(verdict_of_sign(a4, CLAIM_ABOVE, 0.05, NULL), VERDICT_INCONCLUSIVE);
    CHECK_VERDICT(verdict_of_sign(a4, CLAIM_ABOVE, 0.1, NULL), VERDICT_PASS);
    CHECK_VERDICT(verdict_of_sign(mx, CLAIM_ABOVE, 0.05, NULL), VERDICT_INCONCLUSIVE);
    CHECK_VERDICT(verdict_of_sign(mx, CLAIM_BELOW, 0.05, NULL), VERDICT_INCONCLUSIVE);
    CHECK_VERDICT(verdict_of_sign(tt, CLAIM_ABOVE, 0.05, NULL), VERDICT_INCONCLUSIVE);
    /* controls */
    CHECK_VERDICT(verdict_of_sign(a5, CLAIM_ABOVE, 0.05, &a5), VERDICT_NO_POWER);
    CHECK_VERDICT(verdict_of_sign(a5, CLAIM_ABOVE, 0.05, &mx), VERDICT_NO_POWER); /* mixed: not rejected */
    CHECK_VERDICT(verdict_of_sign(a5, CLAIM_ABOVE, 0.05, &b5), VERDICT_PASS);
    CHECK_VERDICT(verdict_of_sign(b5, CLAIM_BELOW, 0.05, &b5), VERDICT_NO_POWER);
    CHECK_VERDICT(verdict_of_sign(b5, CLAIM_BELOW, 0.05, &a5), VERDICT_PASS);
    CHECK_VERDICT(verdict_of_sign(a5, CLAIM_BELOW, 0.05, &b5), VERDICT_FAIL);
    /* INVALID, both sides */
    for (int side = CLAIM_ABOVE; side <= CLAIM_BELOW; side++) {
        CHECK_VERDICT(verdict_of_sign(nn, (claim_side)side, 0.05, NULL), VERDICT_INVALID);
        CHECK_VERDICT(verdict_of_sign(n1, (claim_side)side, 0.05, NULL), VERDICT_INVALID);
        CHECK_VERDICT(verdict_of_sign(side == CLAIM_ABOVE ? a5 : b5, (claim_side)side, 0.05, &nn), VERDICT_INVALID);
    }
    EXPECT_USER_ERROR(verdict_of_sign(a5, CLAIM_ABOVE, 0.5, NULL), "alpha must be in (0, 0.5)");
    EXPECT_USER_ERROR(verdict_of_sign(a5, CLAIM_ABOVE, 0, NULL), "alpha must be in (0, 0.5)");
}

/* ---- lr grids ------------------------------------------------------------------------- */

static double lr_star;
static double score_bowl(double lr) { return pow(log10(lr) - log10(lr_star), 2); }
/* decreasing in lr, diverges at lr ≥ 2e-2 */
static double score_diverge_inf(double lr) { return lr < 2e-2 ? -log10(lr) : INFINITY; }
static double score_diverge_nan(double lr) { return lr < 2e-2 ? -log10(lr) : NAN; }
static double score_decreasing(double lr) { return -log10(lr); }
static double score_all_diverge(double lr) { (void)lr; return INFINITY; }
/* diverges above 5e-4, a bowl at 1e-5 below */
static double score_recover(double lr) { return lr > 5e-4 ? INFINITY : pow(log10(lr) + 5, 2); }

/* The caller's loop: evaluate each batch lr_grid_next returns, add it, repeat.
 * Returns the number of batches (capped, so a broken grid cannot loop forever). */
static int run_grid(lr_grid *g, double (*f)(double))
{
    double lrs[LR_GRID_MAX], sc[LR_GRID_MAX];
    int rounds = 0;
    for (int k; rounds < 100 && (k = lr_grid_next(g, lrs)) > 0; rounds++) {
        for (int i = 0; i < k; i++) sc[i] = f(lrs[i]);
        for (int i = 0; i < k; i++) lr_grid_add(g, lrs[i], sc[i]);
    }
    return rounds;
}

static int log_spaced(const lr_grid *g)
{
    for (int i = 0; i + 1 < g->n; i++)
        if (fabs(g->lr[i + 1] / g->lr[i] / g->step - 1) > 1e-9) return 0;
    return 1;
}

static void test_lr_grid_extends(void)
{
    lr_grid g;
    const double half_decade = 0.5; /* log10 of the step of a 5-point grid over two decades */

    /* optimum below the grid: 1e-3..1e-1 → 10^-3.5, -4, -4.5, -5; best 10^-4.5 (|Δ| = 0.023 decades) */
    lr_star = 3e-5;
    lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-8, 1);
    CHECK_CLOSE(g.step, sqrt(10), 1e-14, "step of 5 points over two decades");
    int rounds = run_grid(&g, score_bowl);
    int b = lr_grid_best(&g);
    CHECK(rounds == 5 && g.n == 9 && g.extended_lo == 4 && g.extended_hi == 0, "rounds %d n %d ext %d/%d", rounds,
          g.n, g.extended_lo, g.extended_hi);
    CHECK(lr_grid_status(&g) == GRID_INTERIOR, "status %s", grid_status_name(lr_grid_status(&g)));
    CHECK(b > 0 && b < g.n - 1 && g.score[b - 1] > g.score[b] && g.score[b + 1] > g.score[b], "best %d of %d", b,
          g.n);
    CHECK(fabs(log10(g.lr[b]) - log10(lr_star)) <= half_decade, "best lr %g vs lr* %g", g.lr[b], lr_star);
    CHECK_CLOSE(log10(g.lr[b]), -4.5, 1e-9, "best lr is 10^-4.5");
    CHECK(log_spaced(&g), "extensions keep the log spacing");

    /* optimum above the grid: → 10^-0.5, 0, 0.5, 1; best 10^0.5 = 3.16 */
    lr_star = 3;
    lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-8, 100);
    rounds = run_grid(&g, score_bowl);
    b = lr_grid_best(&g);
    CHECK(g.n == 9 && g.extended_lo == 0 && g.extended_hi == 4, "n %d ext %d/%d", g.n, g.extended_lo,
          g.extended_hi);
    CHECK(lr_grid_status(&g) == GRID_INTERIOR && b > 0 && b < g.n - 1, "status %s best %d",
          grid_status_name(lr_grid_status(&g)), b);
    CHECK(fabs(log10(g.lr[b]) - log10(lr_star)) <= half_decade, "best lr %g vs lr* %g", g.lr[b], lr_star);
    CHECK(log_spaced(&g), "extensions keep the log spacing");

    /* optimum inside the first grid: no extension at all */
    lr_star = 1e-2;
    lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-8, 1);
    rounds = run_grid(&g, score_bowl);
    CHECK(rounds == 1 && g.n == 5 && lr_grid_status(&g) == GRID_INTERIOR && lr_grid_best(&g) == 2,
          "interior first grid: rounds %d n %d", rounds, g.n);
}

static void test_lr_grid_bounds(void)
{
    lr_grid g;
    /* a lower bound on the lattice (1e-4 = 1e-3/√10²) is reached, then the extension stops */
    lr_star = 3e-5;
    lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-4, 1);
    run_grid(&g, score_bowl);
    CHECK(g.extended_lo == 2 && g.lr[0] == 1e-4 && lr_grid_best(&g) == 0, "ext %d lr[0] %.17g best %d",
          g.extended_lo, g.lr[0], lr_grid_best(&g));
    CHECK(lr_grid_status(&g) == GRID_EDGE_AT_BOUND, "status %s", grid_status_name(lr_grid_status(&g)));
    /* a bound between lattice points stops one step earlier */
    lr_grid_init(&g, 1e-3, 1e-1, 5, 2e-4, 1);
    run_grid(&g, score_bowl);
    CHECK(g.extended_lo == 1 && lr_grid_status(&g) == GRID_EDGE_AT_BOUND, "ext %d status %s", g.extended_lo,
          grid_status_name(lr_grid_status(&g)));
    /* the upper bound */
    lr_star = 3;
    lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-8, 0.5);
    run_grid(&g, score_bowl);
    CHECK(g.extended_hi == 1 && lr_grid_best(&g) == g.n - 1 && lr_grid_status(&g) == GRID_EDGE_AT_BOUND,
          "ext %d status %s", g.extended_hi, grid_status_name(lr_grid_status(&g)));
    /* a bound at the first grid's edge: no extension */
    lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-8, 1e-1);
    run_grid(&g, score_bowl);
    CHECK(g.n == 5 && lr_grid_status(&g) == GRID_EDGE_AT_BOUND, "n %d", g.n);

    /* a first grid computed as x·step that lands a rounding error beyond a bound is planned at the bound
     * (leave_out's joint pass: 10^2.5 · 10^0.5 = 1000.0000000000003 against the bound 1e3 died here) */
    double mu = 316.227766016838, st = 3.1622776601683795;
    CHECK(mu * st > 1e3, "the case needs a product above the bound: %.17g", mu * st);
    lr_grid_init(&g, mu / st, mu * st, 3, 1e-6, 1e3);
    CHECK(g.plan_hi == 1e3 && g.plan_lo == mu / st, "planned %.17g..%.17g", g.plan_lo, g.plan_hi);
    lr_grid_init(&g, 1e-6 * (1 - 1e-12), 1e-4, 3, 1e-6, 1e3);
    CHECK(g.plan_lo == 1e-6, "planned low %.17g", g.plan_lo);
    EXPECT_USER_ERROR(lr_grid_init(&g, 1, 1e3 * (1 + 1e-6), 3, 1e-6, 1e3), "need 0 < lo_bound <= lo < hi <= hi_bound");
    EXPECT_USER_ERROR(lr_grid_init(&g, 1e-6 * (1 - 1e-6), 1, 3, 1e-6, 1e3), "need 0 < lo_bound <= lo < hi <= hi_bound");

    /* capacity: 63 planned points, best at the top → one more, then EDGE AT BOUND with 64 points */
    lr_grid_init(&g, 1e-3, 1e-1, 63, 1e-8, 1e6);
    run_grid(&g, score_decreasing);
    CHECK(g.n == LR_GRID_MAX && g.extended_hi == 1 && lr_grid_status(&g) == GRID_EDGE_AT_BOUND, "n %d status %s",
          g.n, grid_status_name(lr_grid_status(&g)));
    EXPECT_USER_ERROR(lr_grid_add(&g, 1.5e-3, 0), "grid full");
    /* both ends tied with one free slot: the lower end gets it */
    lr_grid_init(&g, 1e-3, 1e-1, 63, 1e-8, 1e6);
    double lrs[LR_GRID_MAX];
    int k = lr_grid_next(&g, lrs);
    for (int i = 0; i < k; i++) lr_grid_add(&g, lrs[i], 1.0);
    k = lr_grid_next(&g, lrs);
    CHECK(k == 1 && lrs[0] < 1e-3, "last slot: %d points, first %g", k, lrs[0]);
}

static void test_lr_grid_divergence(void)
{
    lr_grid g;
    /* scores 3, 2.5, 2, inf, inf: the best (1e-2) is interior, no extension */
    lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-8, 1);
    int rounds = run_grid(&g, score_diverge_inf);
    CHECK(rounds == 1 && g.n == 5 && lr_grid_best(&g) == 2 && lr_grid_status(&g) == GRID_INTERIOR,
          "diverged above (inf): rounds %d best %d status %s", rounds, lr_grid_best(&g),
          grid_status_name(lr_grid_status(&g)));
    lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-8, 1);
    rounds = run_grid(&g, score_diverge_nan);
    CHECK(rounds == 1 && lr_grid_best(&g) == 2 && lr_grid_status(&g) == GRID_INTERIOR,
          "diverged above (NaN): rounds %d best %d", rounds, lr_grid_best(&g));
    /* the same scores without divergence extend upward to the bound */
    lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-8, 1);
    run_grid(&g, score_decreasing);
    CHECK(g.extended_hi == 2 && lr_grid_status(&g) == GRID_EDGE_AT_BOUND, "no divergence: ext %d status %s",
          g.extended_hi, grid_status_name(lr_grid_status(&g)));

    /* all diverged: extend downward only, to the bound → 10^-3.5, -4, -4.5, -5, NONE FINITE */
    lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-5, 1);
    run_grid(&g, score_all_diverge);
    CHECK(g.n == 9 && g.extended_lo == 4 && g.extended_hi == 0 && lr_grid_best(&g) == -1 &&
              lr_grid_status(&g) == GRID_NONE_FINITE,
          "all diverged: n %d ext %d/%d status %s", g.n, g.extended_lo, g.extended_hi,
          grid_status_name(lr_grid_status(&g)));
    /* all diverged on the first grid, a bowl at 1e-5 below: extend down until bracketed */
    lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-8, 1);
    run_grid(&g, score_recover);
    int b = lr_grid_best(&g);
    CHECK(lr_grid_status(&g) == GRID_INTERIOR && b == 1 && g.extended_lo == 5, "recover: status %s best %d ext %d",
          grid_status_name(lr_grid_status(&g)), b, g.extended_lo);
    CHECK_CLOSE(log10(g.lr[b]), -5, 1e-9, "recovered best at 1e-5");
}

/* Add the planned points of g with the given scores. */
static void fill(lr_grid *g, const double *scores)
{
    double lrs[LR_GRID_MAX];
    int k = lr_grid_next(g, lrs);
    for (int i = 0; i < k; i++) lr_grid_add(g, lrs[i], scores[i]);
}

static void test_lr_grid_ties_and_plan(void)
{
    lr_grid g;
    double lrs[LR_GRID_MAX];
    const double s = sqrt(10);

    /* the plan: exactly lo and hi at the ends, log-spaced, nothing evaluated */
    lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-8, 1);
    CHECK(g.n == 0 && lr_grid_best(&g) == -1 && lr_grid_status(&g) == GRID_UNFINISHED, "fresh grid n %d", g.n);
    int k = lr_grid_next(&g, lrs);
    CHECK(k == 5 && lrs[0] == 1e-3 && lrs[4] == 1e-1 && fabs(lrs[2] / 1e-2 - 1) < 1e-15, "plan %d: %g %g %g", k,
          lrs[0], lrs[2], lrs[4]);
    /* added out of order and partly: the rest is still pending, kept sorted */
    lr_grid_add(&g, lrs[3], 2);
    lr_grid_add(&g, lrs[1], 1);
    k = lr_grid_next(&g, lrs);
    CHECK(k == 3 && lrs[0] == 1e-3 && lrs[2] == 1e-1 && g.lr[0] < g.lr[1] && g.n == 2, "pending %d", k);
    CHECK(lr_grid_status(&g) == GRID_UNFINISHED, "status %s", grid_status_name(lr_grid_status(&g)));

    /* plateau at the lower edge: {1,1,1,2,3} → best 0, extend down */
    lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-8, 1);
    fill(&g, (double[]){1, 1, 1, 2, 3});
    k = lr_grid_next(&g, lrs);
    CHECK(lr_grid_best(&g) == 0 && k == 1 && fabs(lrs[0] / (1e-3 / s) - 1) < 1e-12, "low plateau: best %d k %d %g",
          lr_grid_best(&g), k, lrs[0]);
    /* plateau reaching the upper edge: {3,2,1,1,1} → best 2 (first), still extend up */
    lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-8, 1);
    fill(&g, (double[]){3, 2, 1, 1, 1});
    k = lr_grid_next(&g, lrs);
    CHECK(lr_grid_best(&g) == 2 && k == 1 && fabs(lrs[0] / (1e-1 * s) - 1) < 1e-12,
          "high plateau: best %d k %d %g", lr_grid_best(&g), k, lrs[0]);
    /* tie between the two ends: extend both */
    lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-8, 1);
    fill(&g, (double[]){1, 2, 3, 2, 1});
    k = lr_grid_next(&g, lrs);
    CHECK(lr_grid_best(&g) == 0 && k == 2 && lrs[0] < 1e-3 && lrs[1] > 1e-1, "both ends: k %d", k);
    /* interior plateau: bracketed */
    lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-8, 1);
    fill(&g, (double[]){2, 1, 1, 1, 2});
    CHECK(lr_grid_best(&g) == 1 && lr_grid_next(&g, lrs) == 0 && lr_grid_status(&g) == GRID_INTERIOR,
          "interior plateau: best %d", lr_grid_best(&g));
    /* diverged below the best: bracketed on that side */
    lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-8, 1);
    fill(&g, (double[]){NAN, INFINITY, 1, 2, 3});
    CHECK(lr_grid_best(&g) == 2 && lr_grid_next(&g, lrs) == 0 && lr_grid_status(&g) == GRID_INTERIOR,
          "diverged below: best %d", lr_grid_best(&g));
    /* -inf is diverged, not best */
    lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-8, 1);
    fill(&g, (double[]){-INFINITY, 2, 1, 2, 3});
    CHECK(lr_grid_best(&g) == 2 && lr_grid_status(&g) == GRID_INTERIOR, "-inf: best %d", lr_grid_best(&g));

    CHECK(strcmp(grid_status_name(GRID_INTERIOR), "INTERIOR") == 0 &&
              strcmp(grid_status_name(GRID_EDGE_AT_BOUND), "EDGE AT BOUND") == 0 &&
              strcmp(grid_status_name(GRID_NONE_FINITE), "NONE FINITE") == 0 &&
              strcmp(grid_status_name(GRID_UNFINISHED), "UNFINISHED") == 0,
          "grid status names");
}

static void test_lr_grid_errors(void)
{
    lr_grid g;
    EXPECT_USER_ERROR(lr_grid_init(&g, 1e-3, 1e-1, 1, 1e-8, 1), "points");
    EXPECT_USER_ERROR(lr_grid_init(&g, 1e-3, 1e-1, LR_GRID_MAX + 1, 1e-8, 1), "points");
    EXPECT_USER_ERROR(lr_grid_init(&g, 1e-1, 1e-3, 5, 1e-8, 1), "lo < hi");
    EXPECT_USER_ERROR(lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-2, 1), "lo_bound <= lo");
    EXPECT_USER_ERROR(lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-8, 1e-2), "hi <= hi_bound");
    EXPECT_USER_ERROR(lr_grid_init(&g, 1e-3, 1e-1, 5, 0, 1), "0 < lo_bound");
    EXPECT_USER_ERROR(lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-8, INFINITY), "finite");
    lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-8, 1);
    lr_grid_add(&g, 1e-3, 1);
    EXPECT_USER_ERROR(lr_grid_add(&g, 1e-3 * (1 + 1e-12), 1), "already in the grid");
    EXPECT_USER_ERROR(lr_grid_add(&g, 0, 1), "finite and > 0");
    EXPECT_USER_ERROR(lr_grid_add(&g, NAN, 1), "finite and > 0");
    EXPECT_USER_ERROR(lr_grid_add(&g, 2, 1), "outside the bounds");
    EXPECT_USER_ERROR(lr_grid_add(&g, 1e-9, 1), "outside the bounds");
    CHECK(g.n == 1, "rejected adds left n = %d", g.n);
}

/* ---- median ------------------------------------------------------------------------------ */

/* ---- one-sided p-values, shares, Holm, claim verdicts ------------------------------- */

static void test_p_values(void)
{
    const double x[5] = {1, 2, 3, 4, 5};
    interval s = t_interval(x, 5, 0.95);
    /* the 95% interval's ends are where the one-sided p is 2.5% */
    CHECK_CLOSE(t_p_above(s, s.lo), 0.025, 1e-12, "p above at the lower end of the 95%% interval");
    CHECK_CLOSE(t_p_below(s, s.hi), 0.025, 1e-12, "p below at the upper end");
    CHECK_CLOSE(t_p_above(s, 3), 0.5, 1e-12, "p at the mean is 1/2");
    CHECK_CLOSE(t_p_above(s, 0) + t_p_below(s, 0), 1, 1e-12, "the two sides add to 1");
    const double same[3] = {2, 2, 2};
    interval c = t_interval(same, 3, 0.95);
    CHECK(t_p_above(c, 1) == 0 && t_p_above(c, 2) == 1 && t_p_below(c, 3) == 0, "se = 0: 0 or 1");
    CHECK(isnan(t_p_above(t_interval(x, 1, 0.95), 0)), "one value: no p");
}

static void test_share_test(void)
{
    share_test a = share_test_of(10, 10, 0.5, 0.9);
    CHECK_CLOSE(a.p_above, 1.0 / 1024, 1e-15, "10 of 10 above 1/2: p = 2^-10");
    CHECK_CLOSE(a.p_below, 1, 1e-15, "p below 1");
    CHECK_CLOSE(a.lo, pow(0.05, 0.1), 1e-12, "Clopper-Pearson lower end (alpha/2)^(1/n)");
    CHECK(a.hi == 1 && a.prop == 1, "upper end 1");
    share_test z = share_test_of(0, 10, 0.5, 0.9);
    CHECK(z.lo == 0 && fabs(z.hi - (1 - pow(0.05, 0.1))) < 1e-12 && z.p_above == 1, "0 of 10: mirror image");
    share_test h = share_test_of(3, 4, 0.5, 0.9);
    CHECK_CLOSE(h.p_above, 5.0 / 16, 1e-15, "P(X >= 3), X ~ Bin(4, 1/2) = 5/16");
    CHECK_CLOSE(h.p_below, 15.0 / 16, 1e-15, "P(X <= 3) = 15/16");
    share_test q = share_test_of(9, 10, 0.9, 0.9);
    CHECK_CLOSE(q.p_below, 1 - pow(0.9, 10), 1e-12, "P(X <= 9), X ~ Bin(10, 0.9) = 1 - 0.9^10");
    CHECK(isnan(share_test_of(0, 0, 0.5, 0.9).prop), "no items: no share");
    EXPECT_USER_ERROR(share_test_of(3, 2, 0.5, 0.9), "counts");
    EXPECT_USER_ERROR(share_test_of(1.5, 2, 0.5, 0.9), "counts");
    EXPECT_USER_ERROR(share_test_of(1, 2, 1, 0.9), "threshold");
}

static void test_holm(void)
{
    const double p[4] = {0.01, 0.04, 0.03, 0.005};
    double adj[4];
    holm_adjust(p, 4, adj);
    /* sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 -> made non-decreasing */
    CHECK(fabs(adj[0] - 0.03) < 1e-15 && fabs(adj[1] - 0.06) < 1e-15 && fabs(adj[2] - 0.06) < 1e-15 &&
              fabs(adj[3] - 0.02) < 1e-15,
          "Holm: %g %g %g %g", adj[0], adj[1], adj[2], adj[3]);
    const double q[3] = {0.5, NAN, 0.9};
    double b[3];
    holm_adjust(q, 3, b);
    CHECK(isnan(b[1]) && b[0] == 1 && b[2] == 1, "NaN takes no rank; capped at 1 (%g %g)", b[0], b[2]);
    double one;
    holm_adjust(&p[0], 1, &one);
    CHECK(one == p[0], "a family of one is not adjusted");
}

static verdict judge_values(const double *x, const double *c, int n, rule_kind kind, claim_side side, double thr,
                            char *why)
{
    const double a = 0.05;
    claim_reading r = reading_over_seeds(kind, side, thr, x, NULL, NULL, n, a);
    claim_reading rc = c ? reading_over_seeds(kind, side, thr, c, NULL, NULL, n, a) : r;
    double d[8];
    for (int i = 0; i < n; i++) d[i] = c ? x[i] - c[i] : 0;
    claim_reading rd = reading_over_seeds(kind == RULE_SIGN ? RULE_SIGN : RULE_INTERVAL, side, 0, d, NULL, NULL, n, a);
    return claim_verdict(&r, r.p_claim, r.p_other, c ? &rc : NULL, c ? &rd : NULL, a, why, 200);
}

static void test_claim_verdict(void)
{
    char why[200];
    const double up[5] = {1.1, 2.3, 2.9, 4.2, 5.0}, low[5] = {-1.2, -0.7, -1.4, -0.9, -1.1};
    const double straddle[5] = {-0.4, 0.6, -0.2, 0.5, 0.1};
    CHECK_VERDICT(judge_values(up, low, 5, RULE_INTERVAL, CLAIM_ABOVE, 0, why), VERDICT_PASS);
    /* an INCONCLUSIVE control vouches for nothing */
    CHECK_VERDICT(judge_values(up, straddle, 5, RULE_INTERVAL, CLAIM_ABOVE, 0, why), VERDICT_NO_POWER);
    CHECK(strstr(why, "INCONCLUSIVE") != NULL, "the reason names the control's verdict: %s", why);
    /* a control that passes too: NO POWER */
    CHECK_VERDICT(judge_values(up, up, 5, RULE_INTERVAL, CLAIM_ABOVE, 0, why), VERDICT_NO_POWER);
    /* identical values on every seed: a zero-width interval is no interval */
    const double same[5] = {0.7, 0.7, 0.7, 0.7, 0.7};
    CHECK_VERDICT(judge_values(same, low, 5, RULE_INTERVAL, CLAIM_ABOVE, 0.5, why), VERDICT_INVALID);
    CHECK(strstr(why, "zero-width") != NULL, "said why: %s", why);
    /* ... but an exact rule takes it as it is, and refuses values that differ */
    CHECK_VERDICT(judge_values(same, NULL, 5, RULE_EXACT, CLAIM_ABOVE, 0.5, why), VERDICT_PASS);
    CHECK_VERDICT(judge_values(up, NULL, 5, RULE_EXACT, CLAIM_ABOVE, 0.5, why), VERDICT_INVALID);
    /* a diverged control run (-inf: the worst outcome for it) does not make the claim INVALID:
     * the sign test orders it like any value */
    const double low_div[5] = {-1.2, -INFINITY, -1.4, -0.9, -1.1};
    CHECK_VERDICT(judge_values(up, low_div, 5, RULE_INTERVAL, CLAIM_ABOVE, 0, why), VERDICT_PASS);
    claim_reading rd = reading_over_seeds(RULE_INTERVAL, CLAIM_ABOVE, 0, low_div, NULL, NULL, 5, 0.05);
    CHECK(rd.test == RULE_SIGN && rd.n_inf == 1 && rd.n_missing == 0, "+-inf: the sign test, counted as diverged");
    /* NaN (a missing number) stays INVALID */
    const double up_nan[5] = {1.1, 2.3, NAN, 4.2, 5.0};
    CHECK_VERDICT(judge_values(up_nan, low, 5, RULE_INTERVAL, CLAIM_ABOVE, 0, why), VERDICT_INVALID);
    /* claim and control both decided, but their paired difference is not: NO POWER */
    const double cl[5] = {-0.2, -0.1, -0.3, -0.15, -0.25}, cx[5] = {0.3, 0.1, 0.6, 0.05, 0.2};
    claim_reading r = reading_over_seeds(RULE_INTERVAL, CLAIM_ABOVE, 0, cx, NULL, NULL, 5, 0.05);
    claim_reading rc = reading_over_seeds(RULE_INTERVAL, CLAIM_ABOVE, 0, cl, NULL, NULL, 5, 0.05);
    const double dflat[5] = {0.1, -0.1, 0.2, -0.2, 0.05};
    claim_reading rd2 = reading_over_seeds(RULE_INTERVAL, CLAIM_ABOVE, 0, dflat, NULL, NULL, 5, 0.05);
    CHECK_VERDICT(claim_verdict(&r, 0.01, 0.99, &rc, &rd2, 0.05, why, sizeof why), VERDICT_NO_POWER);
    /* Holm: a p that passes alone fails once adjusted */
    CHECK_VERDICT(claim_verdict(&r, 0.06, 0.99, &rc, NULL, 0.05, why, sizeof why), VERDICT_INCONCLUSIVE);
    /* shares from pooled counts: 5 seeds of 9 of 10 against 0.5 */
    const double cnt[5] = {9, 9, 8, 10, 9}, tot[5] = {10, 10, 10, 10, 10}, sh[5] = {0.9, 0.9, 0.8, 1, 0.9};
    claim_reading rs = reading_over_seeds(RULE_SHARE, CLAIM_ABOVE, 0.5, sh, cnt, tot, 5, 0.05);
    CHECK(rs.k == 45 && rs.total == 50 && rs.lo > 0.5 && rs.hi < 1 && rs.p_claim < 1e-6, "pooled share 45/50 [%g, %g]",
          rs.lo, rs.hi);
    claim_reading rn = reading_over_seeds(RULE_SHARE, CLAIM_ABOVE, 0.5, sh, NULL, NULL, 5, 0.05);
    CHECK(rn.n_missing > 0, "a share without counts is missing");
    /* a sign test's values the same on every seed: the seeds did not enter (issue 27 item 1) */
    const double low_same[5] = {-1.2, -1.2, -1.2, -1.2, -1.2};
    CHECK_VERDICT(judge_values(low_same, up, 5, RULE_SIGN, CLAIM_BELOW, 0, why), VERDICT_INVALID);
    CHECK(strstr(why, "the same value on every seed") != NULL, "said why: %s", why);
    CHECK_VERDICT(judge_values(low, up, 5, RULE_SIGN, CLAIM_BELOW, 0, why), VERDICT_PASS);
    const double c7[5] = {7, 7, 7, 7, 7}, t10[5] = {10, 10, 10, 10, 10}, s7[5] = {0.7, 0.7, 0.7, 0.7, 0.7};
    /* a share is judged on its pooled counts, which may repeat (a few items per seed): 7 of 10
     * on every seed is 35 of 50 */
    claim_reading r7 = reading_over_seeds(RULE_SHARE, CLAIM_ABOVE, 0.5, s7, c7, t10, 5, 0.05);
    CHECK_VERDICT(claim_verdict(&r7, r7.p_claim, r7.p_other, NULL, NULL, 0.05, why, sizeof why), VERDICT_PASS);
    /* all, or none, on every seed; the paired difference then the same on every seed too */
    const double s1[5] = {1, 1, 1, 1, 1}, s0[5] = {0, 0, 0, 0, 0}, z[5] = {0, 0, 0, 0, 0};
    claim_reading rall = reading_over_seeds(RULE_SHARE, CLAIM_ABOVE, 0.5, s1, t10, t10, 5, 0.05);
    claim_reading rnone = reading_over_seeds(RULE_SHARE, CLAIM_ABOVE, 0.5, s0, z, t10, 5, 0.05);
    claim_reading rdiff = reading_over_seeds(RULE_SIGN, CLAIM_ABOVE, 0, s1, NULL, NULL, 5, 0.05);
    CHECK_VERDICT(claim_verdict(&rall, rall.p_claim, rall.p_other, &rnone, &rdiff, 0.05, why, sizeof why), VERDICT_PASS);
    /* every seed diverged (+inf under a claim below): judged as the worst outcome, a FAIL */
    const double div[5] = {INFINITY, INFINITY, INFINITY, INFINITY, INFINITY};
    CHECK_VERDICT(judge_values(div, NULL, 5, RULE_INTERVAL, CLAIM_BELOW, 0, why), VERDICT_FAIL);
}

static void test_median(void)
{
    double odd[3] = {3, 1, 2}, even[4] = {4, 1, 3, 2};
    CHECK(median_of(odd, 3) == 2, "median odd %g", median_of(odd, 3));
    CHECK(median_of(even, 4) == 2.5, "median even %g", median_of(even, 4));
    CHECK(odd[0] == 3 && even[0] == 4, "input not modified");
    CHECK(median_of(odd, 1) == 3, "median of one");
    const double inf1[3] = {1, INFINITY, 2}, inf2[2] = {1, INFINITY}, infs[2] = {-INFINITY, INFINITY};
    CHECK(median_of(inf1, 3) == 2, "median with +inf %g", median_of(inf1, 3));
    CHECK(median_of(inf2, 2) == INFINITY, "median {1, inf} %g", median_of(inf2, 2));
    CHECK(isnan(median_of(infs, 2)), "median {-inf, inf} %g", median_of(infs, 2));
    const double nan3[3] = {1, NAN, 2}, nan5[5] = {NAN, 1, 2, 3, 4};
    CHECK(isnan(median_of(nan3, 3)) && isnan(median_of(odd, 0)), "NaN in, NaN out");
    CHECK(isnan(median_of(nan5, 5)), "NaN away from the middle: %g", median_of(nan5, 5));
    /* agrees with core's quantile(0.5) on finite data */
    const double r[6] = {0.3, -1.2, 7.5, 2.25, 2.5, -0.125};
    CHECK(median_of(r, 6) == quantile(r, 6, 0.5), "median %g quantile %g", median_of(r, 6), quantile(r, 6, 0.5));
}

/* What it would take: seeds to decide at the observed effect and spread, against hand counts. */
static void test_seeds_to_decide(void)
{
    /* interval: mean 1 above the threshold with sd 2: |d| sqrt(n)/sd >= t_{0.95, n-1} first at n = 13
     * (t_{0.95,12} = 1.782 <= 0.5 sqrt(13) = 1.803; t_{0.95,11} = 1.796 > 0.5 sqrt(12) = 1.732) */
    double x[4] = {-1, 3, -1, 3}; /* mean 1, sd 2.309 */
    int n = seeds_to_decide(RULE_INTERVAL, CLAIM_ABOVE, 0, x, 4, 0, 0, 0.05, 1000);
    double sd = sqrt(16.0 / 3);
    int want = 2;
    while (!(1 * sqrt((double)want) / sd >= gsl_cdf_tdist_Pinv(0.95, want - 1))) want++;
    CHECK(n == want && n > 4, "interval: %d seeds (by the t quantiles %d)", n, want);
    double y[3] = {2, 2.1, 1.9};
    CHECK(seeds_to_decide(RULE_INTERVAL, CLAIM_BELOW, 0, y, 3, 0, 0, 0.05, 1000) == 2, "a clear effect: 2 seeds");
    double z[3] = {1, -1, NAN};
    CHECK(seeds_to_decide(RULE_INTERVAL, CLAIM_ABOVE, 0, z, 3, 0, 0, 0.05, 1000) == -1, "no effect: -1");
    /* sign: every seed on one side: 5 seeds (2^-5 = 1/32 <= 0.05 < 1/16) */
    double s[3] = {INFINITY, 1, 2};
    CHECK(seeds_to_decide(RULE_SIGN, CLAIM_ABOVE, 0, s, 3, 0, 0, 0.05, 1000) == 5, "sign, all above: 5 seeds");
    /* share: 7 of 10 items per seed against 0.5; by hand the n where P(X >= 7n | Bin(10n, 0.5)) <= 0.05 */
    int sh = seeds_to_decide(RULE_SHARE, CLAIM_ABOVE, 0.5, NULL, 1, 7, 10, 0.05, 1000);
    int ws = 2;
    while (!(gsl_cdf_binomial_Q((unsigned)(7 * ws) - 1, 0.5, (unsigned)(10 * ws)) <= 0.05)) ws++;
    CHECK(sh == ws, "share 0.7 of 10 per seed: %d seeds (by hand %d)", sh, ws);
    CHECK(seeds_to_decide(RULE_SHARE, CLAIM_ABOVE, 0.5, NULL, 2, 10, 20, 0.05, 1000) == -1, "share at the threshold: -1");
    CHECK(seeds_to_decide(RULE_EXACT, CLAIM_ABOVE, 0.5, y, 3, 0, 0, 0.05, 1000) == 1, "exact: 1");
}

int main(void)
{
    test_seeds_to_decide();
    test_t_interval();
    test_paired_interval();
    test_sign_test();
    test_verdict_of();
    test_verdict_of_sign();
    test_lr_grid_extends();
    test_lr_grid_bounds();
    test_lr_grid_divergence();
    test_lr_grid_ties_and_plan();
    test_lr_grid_errors();
    test_median();
    test_p_values();
    test_share_test();
    test_holm();
    test_claim_verdict();
    return check_summary();
}
