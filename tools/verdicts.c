/* verdicts — every claim of the paper the toolkit tests, judged over seeds.
 *
 * Reads the per-seed statistics that `make verdicts` had each experiment
 * write (<runs>/<experiment>/seed<s>/stats.csv) and applies each claim's rule
 * from harness's claim table (fixed before the runs): a Student-t interval of
 * the mean over seeds against a threshold, or an exact sign test over seeds,
 * together with the same rule on the claim's negative control. Verdicts:
 * PASS, FAIL, INCONCLUSIVE (the interval holds the threshold), NO POWER (the
 * control passes the rule too), INVALID (a seed missing or not finite).
 *
 * Writes <out>/verdicts.csv (one row per claim), <out>/verdicts.md (the
 * evidence, claim by claim) and <out>/summary.md (the table the README shows).
 * --skip leaves out the claims of experiments that were not run (make verdicts
 * VERDICT_SKIP=...), so a partial set of runs is judged without INVALID rows.
 */
#include "harness/harness.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const claim_rule *r;
    int n;
    double v[LIST_MAX], c[LIST_MAX]; /* per seed: statistic, control (NAN: missing) */
    int missing, cmissing;
    interval iv, civ;
    sign_test st, cst;
    verdict verdict, control_verdict;
} judged;

static void read_values(judged *j, const char *runs, const int_list *seeds)
{
    j->n = seeds->n;
    for (int k = 0; k < seeds->n; k++) {
        char rel[256];
        snprintf(rel, sizeof rel, "%s/seed%d/stats.csv", j->r->experiment, seeds->v[k]);
        char *path = path_join(runs, rel);
        j->v[k] = j->c[k] = NAN;
        if (!stats_get(path, j->r->stat, &j->v[k])) j->missing++;
        if (j->r->control && !stats_get(path, j->r->control, &j->c[k])) j->cmissing++;
        free(path);
    }
}

static void judge(judged *j, double level, double alpha)
{
    const claim_rule *r = j->r;
    j->iv = t_interval(j->v, j->n, level);
    j->civ = t_interval(j->c, j->n, level);
    if (r->kind == RULE_SIGN) {
        j->st = sign_test_of(j->v, j->n, r->threshold, level);
        j->cst = sign_test_of(j->c, j->n, r->threshold, level);
        j->control_verdict = r->control ? verdict_of_sign(j->cst, r->side, alpha, NULL) : VERDICT_INVALID;
        j->verdict = verdict_of_sign(j->st, r->side, alpha, r->control ? &j->cst : NULL);
    } else {
        j->control_verdict = r->control ? verdict_of(j->civ, r->side, r->threshold, NULL) : VERDICT_INVALID;
        j->verdict = verdict_of(j->iv, r->side, r->threshold, r->control ? &j->civ : NULL);
    }
}

static const char *side_word(claim_side s) { return s == CLAIM_ABOVE ? "above" : "below"; }

/* "mean [lo, hi]" of an interval, or "n/a". */
static void fmt_interval(char *buf, size_t n, interval iv)
{
    if (iv.n < 1) snprintf(buf, n, "n/a");
    else if (iv.n < 2 || !isfinite(iv.lo)) snprintf(buf, n, "%.4g", iv.mean);
    else snprintf(buf, n, "%.4g [%.4g, %.4g]", iv.mean, iv.lo, iv.hi);
}

static void fmt_values(char *buf, size_t n, const double *v, int count, const char *sep)
{
    buf[0] = '\0';
    for (int k = 0; k < count; k++) {
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, "%s%.6g", k ? sep : "", v[k]);
    }
}

static void write_csv(const char *out, const judged *J, int n, const int_list *seeds)
{
    outfile *f = csv_open_in(out, "verdicts.csv", "id,experiment,statistic,side,threshold,test,seeds,values,mean,lo,"
                                                  "hi,p_claim_side,control,control_values,control_mean,control_lo,"
                                                  "control_hi,control_verdict,verdict");
    char s[512] = "", vals[1024], cvals[1024];
    for (int k = 0; k < seeds->n; k++) {
        size_t len = strlen(s);
        snprintf(s + len, sizeof s - len, "%s%d", k ? ";" : "", seeds->v[k]);
    }
    for (int i = 0; i < n; i++) {
        const judged *j = &J[i];
        const claim_rule *r = j->r;
        fmt_values(vals, sizeof vals, j->v, j->n, ";");
        fmt_values(cvals, sizeof cvals, j->c, j->n, ";");
        double p = r->kind == RULE_SIGN ? (r->side == CLAIM_ABOVE ? j->st.p_above : j->st.p_below) : NAN;
        csv_row(f, "%s,%s,%s,%s,%.10g,%s,%s,%s,%.10g,%.10g,%.10g,%.6g,%s,%s,%.10g,%.10g,%.10g,%s,%s", r->id,
                r->experiment, r->stat, side_word(r->side), r->threshold, r->kind == RULE_SIGN ? "sign" : "t-interval",
                s, vals, j->iv.mean, j->iv.lo, j->iv.hi, p, r->control ? r->control : "", cvals, j->civ.mean,
                j->civ.lo, j->civ.hi, r->control ? verdict_name(j->control_verdict) : "", verdict_name(j->verdict));
    }
    csv_close(f);
}

/* The README's table: one row per claim. */
static void write_summary(FILE *fp, const judged *J, int n, int nseeds)
{
    fprintf(fp, "| paper | claim | experiment | statistic over %d seeds: mean [95%% interval] | negative control | "
                "verdict |\n|---|---|---|---|---|---|\n", nseeds);
    for (int i = 0; i < n; i++) {
        const judged *j = &J[i];
        char a[96], b[96];
        fmt_interval(a, sizeof a, j->iv);
        fmt_interval(b, sizeof b, j->civ);
        if (j->r->kind == RULE_SIGN)
            snprintf(a + strlen(a), sizeof a - strlen(a), "; %d of %d %s %g", j->r->side == CLAIM_ABOVE ?
                     j->st.n_above : j->st.n_below, j->n, side_word(j->r->side), j->r->threshold);
        fprintf(fp, "| %s | %s | `%s` | %s (%s %g) | %s: %s | **%s** |\n", j->r->place, j->r->claim, j->r->experiment,
                a, side_word(j->r->side), j->r->threshold, j->r->control ? b : "none",
                j->r->control ? verdict_name(j->control_verdict) : "-", verdict_name(j->verdict));
    }
}

/* --skip: experiment names, comma-separated, each one of the claim table's. */
typedef struct {
    int n;
    char name[32][64];
} name_list;

static name_list parse_skip(const char *skip, const claim_rule *rules, int n_rules)
{
    name_list s = {0};
    for (const char *p = skip; p && *p; p += *p == ',') {
        size_t len = strcspn(p, ",");
        if (s.n == 32) die_user("--skip: more than 32 experiments");
        snprintf(s.name[s.n], sizeof s.name[0], "%.*s", (int)(len < 63 ? len : 63), p);
        int known = 0;
        for (int i = 0; i < n_rules && !known; i++) known = !strcmp(rules[i].experiment, s.name[s.n]);
        if (!known) die_user("--skip: '%s' is no experiment of the claim table (see --list)", s.name[s.n]);
        s.n++;
        p += len;
    }
    return s;
}

static int skipped(const name_list *s, const char *experiment)
{
    for (int k = 0; k < s->n; k++)
        if (!strcmp(s->name[k], experiment)) return 1;
    return 0;
}

static void write_md(const char *out, const judged *J, int n, const int_list *seeds, const char *scale, double level,
                     double alpha, const char *skip, int n_skipped)
{
    outfile *o = outfile_open_in(out, "verdicts.md");
    FILE *fp = outfile_fp(o);
    char s[512] = "";
    for (int k = 0; k < seeds->n; k++) snprintf(s + strlen(s), sizeof s - strlen(s), "%s%d", k ? ", " : "", seeds->v[k]);
    int count[5] = {0};
    for (int i = 0; i < n; i++) count[J[i].verdict]++;
    fprintf(fp, "# Verdicts\n\n%d claims at %s scale over seeds %s (each seed sets --seed and --data-seed): "
                "%d PASS, %d FAIL, %d INCONCLUSIVE, %d NO POWER, %d INVALID. Rules are in verdict/claims.c, "
                "fixed before the runs; docs/verdicts.md explains each rule and control.\n\n",
            n, scale, s, count[VERDICT_PASS], count[VERDICT_FAIL], count[VERDICT_INCONCLUSIVE], count[VERDICT_NO_POWER],
            count[VERDICT_INVALID]);
    if (n_skipped)
        fprintf(fp, "Not judged (not run, `--skip`): %s, %d claim%s.\n\n", skip, n_skipped, n_skipped > 1 ? "s" : "");
    write_summary(fp, J, n, seeds->n);
    fprintf(fp, "\nTests: a t-interval claim PASSes when its %.0f%% Student-t interval of the mean over seeds lies "
                "strictly on the claim's side of the threshold, FAILs when it lies strictly on the other side, and is "
                "INCONCLUSIVE when it holds the threshold; a sign-test claim PASSes when the exact one-sided sign test "
                "over seeds gives p <= %g on the claim's side (FAIL on the other side). Either is NO POWER when the "
                "negative control passes the same rule, and INVALID when a seed's number is missing or not finite.\n",
            100 * level, alpha);
    for (int i = 0; i < n; i++) {
        const judged *j = &J[i];
        const claim_rule *r = j->r;
        char a[96], b[96], vals[1024], cvals[1024];
        fmt_interval(a, sizeof a, j->iv);
        fmt_interval(b, sizeof b, j->civ);
        fmt_values(vals, sizeof vals, j->v, j->n, ", ");
        fmt_values(cvals, sizeof cvals, j->c, j->n, ", ");
        fprintf(fp, "\n## %s — %s\n\n> \"%s\" (%s)\n\n", r->id, verdict_name(j->verdict), r->paper, r->place);
        fprintf(fp, "- Claim tested: %s (`%s`).\n", r->claim, r->experiment);
        fprintf(fp, "- Statistic: %s (`%s`). Rule: %s, %s %g.\n", r->stat_what, r->stat,
                r->kind == RULE_SIGN ? "exact sign test over seeds" : "t-interval of the mean over seeds",
                side_word(r->side), r->threshold);
        fprintf(fp, "- Per seed (%s): %s%s.\n", s, vals, j->missing ? " (some seeds missing)" : "");
        if (r->kind == RULE_SIGN)
            fprintf(fp, "- %d above, %d below, %d ties; one-sided p %.4g (claim's side); mean %s.\n", j->st.n_above,
                    j->st.n_below, j->st.n_ties, r->side == CLAIM_ABOVE ? j->st.p_above : j->st.p_below, a);
        else
            fprintf(fp, "- Mean and %.0f%% interval: %s.\n", 100 * level, a);
        if (r->control)
            fprintf(fp, "- Negative control: %s (`%s`). Per seed: %s; %s; under the same rule: %s.\n", r->control_what,
                    r->control, cvals, b, verdict_name(j->control_verdict));
        else
            fprintf(fp, "- Negative control: none.\n");
        fprintf(fp, "- Depends on: %s.\n", r->depends);
    }
    outfile_commit(o);
    o = outfile_open_in(out, "summary.md");
    write_summary(outfile_fp(o), J, n, seeds->n);
    outfile_commit(o);
}

/* --runs must be a folder; --out must not be inside it (a seed's folder holds
 * a run.txt: writing there would first clear that run's files). */
static void check_runs_and_out(const char *runs, const char *out)
{
    if (!path_is_folder(runs))
        die_user("--runs %s is not a folder (expected the per-seed runs, <runs>/<experiment>/seed<s>/)", runs);
    char *r = realpath(runs, NULL), *o = realpath(out, NULL);
    size_t n = r ? strlen(r) : 0;
    int inside = r && o && strncmp(o, r, n) == 0 && (o[n] == '/' || o[n] == '\0' || n == 1);
    free(r);
    free(o);
    if (inside)
        die_user("--out %s is inside --runs %s: a run there would be cleared; give a folder outside the runs", out, runs);
}

int main(int argc, char **argv)
{
    const char *runs = "results/verdicts/runs", *out = "results/verdicts", *scale = "quick", *skip = NULL;
    int_list seeds = {5, {1, 2, 3, 4, 5}};
    double level = 0.95, alpha = 0.05;
    int list = 0;
    const cli_opt opts[] = {
        {"runs", OPT_STRING, &runs, "folder of the per-seed runs: <runs>/<experiment>/seed<s>/stats.csv"},
        {"seeds", OPT_INT_LIST, &seeds, "the seeds to judge over"},
        {"scale", OPT_STRING, &scale, "quick or paper (named in verdicts.md)"},
        {"level", OPT_DOUBLE, &level, "confidence level of the intervals"},
        {"alpha", OPT_DOUBLE, &alpha, "significance level of the sign tests"},
        {"skip", OPT_STRING, &skip, "experiments not run, comma-separated: their claims are left out"},
        {"list", OPT_FLAG, &list, "print the claims and their rules, and exit"},
        {"out", OPT_STRING, &out, "output folder"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Judges every claim of the paper the toolkit tests over seeds: the rule of each claim (harness's\n"
              "claim table, fixed before the runs) on the per-seed statistics that make verdicts had each\n"
              "experiment write, and the same rule on the claim's negative control. Verdicts: PASS, FAIL,\n"
              "INCONCLUSIVE (the interval holds the threshold), NO POWER (the control passes too), INVALID.",
              opts, sizeof opts / sizeof *opts);
    scale_parse(scale);
    if (!(level > 0 && level < 1)) die_user("--level must be in (0, 1) (got %g)", level);
    if (!(alpha > 0 && alpha < 0.5)) die_user("--alpha must be in (0, 0.5) (got %g)", alpha);
    for (int k = 0; k < seeds.n; k++)
        if (seeds.v[k] < 0) die_user("--seeds must be >= 0 (got %d)", seeds.v[k]);
    const claim_rule *rules;
    int n = claim_rules(&rules);
    if (list) {
        for (int i = 0; i < n; i++)
            printf("%-34s %-18s %s %s %g (%s); control: %s\n", rules[i].id, rules[i].experiment, rules[i].stat,
                   side_word(rules[i].side), rules[i].threshold, rules[i].kind == RULE_SIGN ? "sign test" : "t-interval",
                   rules[i].control ? rules[i].control : "none");
        return 0;
    }
    if (seeds.n < 2) die_user("--seeds: at least 2 seeds are needed for an interval (got %d)", seeds.n);
    name_list skips = parse_skip(skip, rules, n);
    check_runs_and_out(runs, out);
    ensure_dir(out);
    judged *J = xcalloc((size_t)n, sizeof *J);
    int nj = 0;
    for (int i = 0; i < n; i++) {
        if (skipped(&skips, rules[i].experiment)) continue;
        J[nj].r = &rules[i];
        read_values(&J[nj], runs, &seeds);
        judge(&J[nj], level, alpha);
        nj++;
    }
    write_csv(out, J, nj, &seeds);
    write_md(out, J, nj, &seeds, scale, level, alpha, skip, n - nj);
    char *path = path_join(out, "summary.md");
    echo_file(path);
    free(path);
    run_write_info(out, (unsigned long)seeds.v[0]);
    free(J);
    return 0;
}
