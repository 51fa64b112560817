/* Writing a study: verdicts.csv and sensitivity.csv (one row per claim, per
 * claim and alternative), verdicts.md (the evidence, claim by claim) and
 * summary.md (the results table) (verdict.h). */
#include "verdict.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *side_word(claim_side s) { return s == CLAIM_ABOVE ? "above" : "below"; }

static const char *test_name(rule_kind k)
{
    switch (k) {
    case RULE_INTERVAL: return "t-test";
    case RULE_SIGN: return "sign test";
    case RULE_SHARE: return "binomial (pooled counts)";
    case RULE_EXACT: return "exact";
    }
    return "?";
}

/* A reading for a table cell: "mean [lo, hi]", "median m; k of n above t",
 * "share (k/n) [lo, hi]", "v (exact)"; "n/a" when nothing was read. */
static void fmt_reading(char *buf, size_t size, const claim_reading *r, claim_side side, double threshold)
{
    if (r->n == 0 && r->test != RULE_SHARE) { snprintf(buf, size, "n/a"); return; }
    switch (r->test) {
    case RULE_INTERVAL: snprintf(buf, size, "%.4g [%.4g, %.4g]", r->mean, r->lo, r->hi); break;
    case RULE_SIGN:
        snprintf(buf, size, "median %.4g; %.0f of %.0f %s %g", r->mean, r->k, r->total, side_word(side), threshold);
        break;
    case RULE_SHARE:
        if (!(r->total > 0)) snprintf(buf, size, "no counts");
        else snprintf(buf, size, "%.4g (%.0f/%.0f) [%.4g, %.4g]", r->mean, r->k, r->total, r->lo, r->hi);
        break;
    case RULE_EXACT: snprintf(buf, size, "%.6g (exact)", r->mean); break;
    }
    if (r->n_inf) snprintf(buf + strlen(buf), size - strlen(buf), "; %d diverged", r->n_inf);
}

static void fmt_values(char *buf, size_t size, const double *v, int n, const char *sep)
{
    buf[0] = '\0';
    for (int k = 0; k < n; k++) {
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%.6g", k ? sep : "", v[k]);
    }
}

static void fmt_seeds(char *buf, size_t size, const int_list *seeds, const char *sep)
{
    buf[0] = '\0';
    for (int k = 0; k < seeds->n; k++) {
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%d", k ? sep : "", seeds->v[k]);
    }
}

/* The per-row notes of the table: letters, explained under it. */
static void fmt_notes(char *buf, size_t size, const judged_claim *j)
{
    snprintf(buf, size, "%s%s%s%s%s", j->r->after_data ? "D" : "", j->r->after_confirmation ? "C" : "",
             j->r->paper_setting ? "P" : "", j->r->paper_scale ? "S" : "", j->main.stat.n_inf ? "X" : "");
}

static int smoke(const claim_study *s) { return s->seeds.n < 5; }

/* What it would take to decide an INCONCLUSIVE or NO POWER verdict, if the effect and the spread
 * seen held on more seeds (power.c, an estimate): the claim's seeds and, for NO POWER, the
 * control's (it must become a decided FAIL: when it leans to its own PASS, more seeds will not
 * do). Returns the seeds (-1: no number) and says why in buf; buf empty for other verdicts. */
#define SEEDS_CAP 1000
/* The readings in r's Holm family (1 for a family of its own). */
static int holm_size(const claim_study *s, const claim_rule *r)
{
    if (!r->family) return 1;
    int m = 0;
    for (int i = 0; i < s->n; i++) m += s->claim[i].r->family && !strcmp(s->claim[i].r->family, r->family);
    return m > 0 ? m : 1;
}

/* The claim's own test at alpha / (its Holm family's size), the correction's worst case. */
static int would_take(char *buf, size_t size, const claim_study *s, const judged_claim *j, const judged_setting *js)
{
    buf[0] = '\0';
    if (js->v != VERDICT_INCONCLUSIVE && js->v != VERDICT_NO_POWER) return -1;
    int n = seeds_to_decide(js->stat.test, js->side, js->threshold, js->x, s->seeds.n, js->stat.k, js->stat.total,
                            s->alpha / holm_size(s, j->r), SEEDS_CAP);
    if (js->v == VERDICT_NO_POWER && js->has_control) {
        double p_pass = js->control.p_claim, p_fail = js->control.p_other;
        if (!(p_fail < p_pass)) {
            snprintf(buf, size, "more seeds will not decide it: the control leans to passing too");
            return -1;
        }
        int nc = seeds_to_decide(js->control.test, js->side, js->threshold, js->c, s->seeds.n, js->control.k,
                                 js->control.total, s->alpha, SEEDS_CAP);
        if (nc < 0) { snprintf(buf, size, "the control would not be decided within %d seeds", SEEDS_CAP); return -1; }
        if (nc > n) n = nc;
    }
    if (n < 0) snprintf(buf, size, "no effect to decide (at the threshold, or beyond %d seeds)", SEEDS_CAP);
    else snprintf(buf, size, "about %d seeds at the effect and spread seen (an estimate)", n);
    return n;
}

/* How many families the paper's claims form (chance verdicts are bounded per family). */
static int family_count(const claim_study *s)
{
    int f = 0;
    for (int i = 0; i < s->n; i++) {
        if (s->claim[i].r->hypothesis) continue;
        const char *fam = s->claim[i].r->family ? s->claim[i].r->family : s->claim[i].r->id;
        int seen = 0;
        for (int k = 0; k < i && !seen; k++) {
            if (s->claim[k].r->hypothesis) continue;
            const char *g = s->claim[k].r->family ? s->claim[k].r->family : s->claim[k].r->id;
            seen = !strcmp(fam, g);
        }
        f += !seen;
    }
    return f;
}

static const char *commit_of(const claim_study *s)
{
    for (int i = 0; i < s->nsets; i++)
        if (!s->set[i].alt && s->set[i].commit[0]) return s->set[i].commit;
    return "unknown";
}

static int hypothesis_count(const claim_study *s)
{
    int n = 0;
    for (int i = 0; i < s->n; i++) n += s->claim[i].r->hypothesis;
    return n;
}

/* The headline: counts of each verdict of the paper's claims, robust ones apart, and what
 * chance alone gives; the toolkit's own hypotheses are counted apart. */
static void write_headline(FILE *fp, const claim_study *s)
{
    int count[5] = {0}, robust[5] = {0}, fragile = 0, judged_alt = 0, nh = hypothesis_count(s);
    for (int i = 0; i < s->n; i++) {
        const judged_claim *j = &s->claim[i];
        if (j->r->hypothesis) continue;
        count[j->main.v]++;
        if (!strcmp(robustness(j), "ROBUST")) robust[j->main.v]++;
        fragile += !strcmp(robustness(j), "FRAGILE");
        judged_alt += j->n_run > 0;
    }
    char seeds[256];
    fmt_seeds(seeds, sizeof seeds, &s->seeds, ", ");
    int F = family_count(s);
    if (smoke(s))
        fprintf(fp, "**SMOKE RUN** — %d seeds: a sign test needs 5 seeds on one side to reach p <= %g, and intervals "
                    "over so few seeds are wide; read nothing from these verdicts.\n\n", s->seeds.n, s->alpha);
    fprintf(fp, "%d claims at %s scale over seeds %s, runs from commit %s: **%d PASS** (%d robust), **%d FAIL** (%d "
                "robust), %d INCONCLUSIVE, %d NO POWER, %d INVALID; %d claims judged under their alternatives, %d "
                "of them FRAGILE.\n\n",
            s->n - nh, s->scale, seeds, commit_of(s), count[VERDICT_PASS], robust[VERDICT_PASS], count[VERDICT_FAIL],
            robust[VERDICT_FAIL], count[VERDICT_INCONCLUSIVE], count[VERDICT_NO_POWER], count[VERDICT_INVALID],
            judged_alt, fragile);
    fprintf(fp, "Chance: every test is one-sided at alpha = %g, with Holm's correction inside each of the %d families "
                "(a family: the readings of one paper claim). Were every claim false, at most %g false PASS would be "
                "expected over the table (alpha per family), and as many false FAIL were every claim true.\n\n",
            s->alpha, F, s->alpha * F);
    if (nh)
        fprintf(fp, "%d more are the toolkit's own hypotheses, not the paper's claims: listed apart, never counted for "
                    "or against the paper.\n\n", nh);
}

static int any_after_confirmation(const claim_study *s)
{
    for (int i = 0; i < s->n; i++)
        if (s->claim[i].r->after_confirmation) return 1;
    return 0;
}

/* The rows of the paper's claims (hypothesis 0) or of the toolkit's own hypotheses (1). */
static void write_rows(FILE *fp, const claim_study *s, int hypothesis)
{
    fprintf(fp, "| claim | paper | statistic over %d seeds (%g%% interval) | negative control | verdict | same verdict "
                "under alternatives | notes |\n|---|---|---|---|---|---|---|\n", s->seeds.n, 100 * (1 - 2 * s->alpha));
    for (int i = 0; i < s->n; i++) {
        const judged_claim *j = &s->claim[i];
        if (j->r->hypothesis != hypothesis) continue;
        const claim_rule *r = j->r;
        char a[400], b[160], notes[16], alt[48];
        fmt_reading(a, sizeof a, &j->main.stat, r->side, r->threshold);
        if (j->main.has_control) fmt_reading(b, sizeof b, &j->main.control, r->side, r->threshold);
        fmt_notes(notes, sizeof notes, j);
        if (j->n_alt == 0) snprintf(alt, sizeof alt, "none declared");
        else if (j->n_run == 0) snprintf(alt, sizeof alt, "not run");
        else snprintf(alt, sizeof alt, "%d of %d: %s", j->n_same, j->n_run, robustness(j));
        if (r->paper_value.text) /* the magnitude the paper states, beside the one measured */
            snprintf(a + strlen(a), sizeof a - strlen(a), "; the paper: %s", r->paper_value.text);
        char take[160], vcell[200];
        int nt = would_take(take, sizeof take, s, j, &j->main);
        if (nt > 0) snprintf(vcell, sizeof vcell, "**%s** (~%d seeds would decide)", verdict_name(j->main.v), nt);
        else if (take[0]) snprintf(vcell, sizeof vcell, "**%s** (%s)", verdict_name(j->main.v), take);
        else snprintf(vcell, sizeof vcell, "**%s**", verdict_name(j->main.v));
        fprintf(fp, "| `%s`: %s | %s | %s (%s %g) | %s%s%s | %s | %s | %s |\n", r->id, r->claim, r->place, a,
                side_word(r->side), r->threshold, j->main.has_control ? b : "none", j->main.has_control ? ": " : "",
                j->main.has_control ? verdict_name(j->main.control_v) : "", vcell, alt, notes);
    }
}

static void write_table(FILE *fp, const claim_study *s)
{
    write_rows(fp, s, 0);
    if (hypothesis_count(s)) {
        fprintf(fp, "\nThe toolkit's own hypotheses (not the paper's claims; never counted for or against it):\n\n");
        write_rows(fp, s, 1);
    }
    fprintf(fp, "\nNotes: D the rule was set or changed after seeing data; %sP the paper's own setting differs; S the "
                "verdict differed at paper scale; X a diverged run counted as the worst outcome. verdicts.md holds "
                "each claim's evidence, its alternatives and the reasons.\n",
            any_after_confirmation(s) ? "C changed after the confirmation run (back in development); " : "");
}

static void write_setting_md(FILE *fp, const claim_study *s, const judged_claim *j, const judged_setting *js)
{
    char seeds[256], vals[1024], a[160];
    fmt_seeds(seeds, sizeof seeds, &s->seeds, ", ");
    fmt_values(vals, sizeof vals, js->x, s->seeds.n, ", ");
    fmt_reading(a, sizeof a, &js->stat, js->side, js->threshold);
    fprintf(fp, "- Per seed (%s): %s.\n", seeds, vals);
    int has_div = 0;
    for (int k = 0; k < s->seeds.n; k++) has_div |= !isnan(js->diverged[k]);
    if (has_div) {
        fmt_values(vals, sizeof vals, js->diverged, s->seeds.n, ", ");
        fprintf(fp, "- Runs that diverged, per seed: %s.\n", vals);
    }
    fprintf(fp, "- %s: %s; one-sided p %.3g on the claim's side (Holm-adjusted %.3g), %.3g on the other (%.3g).\n",
            test_name(js->stat.test), a, js->stat.p_claim, js->p_claim_adj, js->stat.p_other, js->p_other_adj);
    if (js->has_control) {
        fmt_values(vals, sizeof vals, js->c, s->seeds.n, ", ");
        fmt_reading(a, sizeof a, &js->control, js->side, js->threshold);
        fprintf(fp, "- Negative control per seed: %s; %s: %s under the same rule.\n", vals, a,
                verdict_name(js->control_v));
    }
    if (js->has_paired) {
        fmt_reading(a, sizeof a, &js->paired, js->side, 0);
        fprintf(fp, "- Claim minus control, paired by seed (%s, %s 0): %s: %s.\n", test_name(js->paired.test),
                side_word(js->side), a, verdict_name(reading_verdict(&js->paired, s->alpha)));
    }
    if (js->why[0]) fprintf(fp, "- Why %s: %s.\n", verdict_name(js->v), js->why);
    char take[160];
    would_take(take, sizeof take, s, j, js);
    if (take[0]) fprintf(fp, "- What it would take: %s.\n", take);
}

/* The paper's own number beside the measured one (on the statistic's scale when given as a number). */
static void write_paper_number(FILE *fp, const paper_number *p, double measured)
{
    if (!p->text) return;
    fprintf(fp, "- The paper's own number: %s", p->text);
    if (p->numeric && p->lo == p->hi) fprintf(fp, " (%g on the statistic's scale)", p->lo);
    else if (p->numeric) fprintf(fp, " (%g to %g on the statistic's scale)", p->lo, p->hi);
    fprintf(fp, "; measured: %.4g.\n", measured);
}

static void write_claim_md(FILE *fp, const claim_study *s, const judged_claim *j)
{
    const claim_rule *r = j->r;
    fprintf(fp, "\n## %s — %s (%s)\n\n> \"%s\" (%s)\n\n", r->id, verdict_name(j->main.v), robustness(j), r->paper,
            r->place);
    fprintf(fp, "- Claim tested: %s (`%s`).\n", r->claim, r->experiment);
    fprintf(fp, "- Statistic: %s (`%s`). Rule: %s over seeds, %s %g, one-sided at alpha %g%s%s%s.\n", r->stat_what,
            r->stat, test_name(r->kind), side_word(r->side), r->threshold, s->alpha,
            r->family ? "; family `" : "", r->family ? r->family : "", r->family ? "` (Holm)" : "");
    write_setting_md(fp, s, j, &j->main);
    if (r->control) fprintf(fp, "- The control: %s (`%s`).\n", r->control_what, r->control);
    else fprintf(fp, "- The control: none.\n");
    write_paper_number(fp, &r->paper_value, j->main.stat.mean);
    if (r->after_data) fprintf(fp, "- Set after seeing data: %s.\n", r->after_data);
    if (r->after_confirmation) fprintf(fp, "- Changed after the confirmation run: %s.\n", r->after_confirmation);
    if (r->paper_setting) fprintf(fp, "- The paper's setting differs: %s.\n", r->paper_setting);
    if (r->paper_scale) fprintf(fp, "- At paper scale: %s.\n", r->paper_scale);
    fprintf(fp, "- Depends on: %s.\n", r->depends);
    if (j->n_alt == 0) return;
    fprintf(fp, "\nOpen choices (declared before the runs):\n\n| choice | alternative | why a reasonable reading | "
                "statistic | verdict |\n|---|---|---|---|---|\n");
    for (int a = 0; a < j->n_alt; a++) {
        const alternative *alt = &r->alt[a];
        const judged_setting *js = &j->alt[a];
        char v[200] = "not run";
        if (js->evaluated) {
            fmt_reading(v, sizeof v, &js->stat, js->side, js->threshold);
            if (alt->own_rule) snprintf(v + strlen(v), sizeof v - strlen(v), " (%s %g)", side_word(js->side), js->threshold);
        }
        char verdict_cell[400];
        snprintf(verdict_cell, sizeof verdict_cell, "%s%s%s%s", js->evaluated ? verdict_name(js->v) : "-",
                 js->why[0] ? " (" : "", js->why, js->why[0] ? ")" : "");
        for (char *p = verdict_cell; *p; p++) if (*p == '|') *p = '/';
        fprintf(fp, "| %s | `%s`%s%s%s | %s | %s | %s |\n", alt->choice, alt->name, alt->flags ? " (" : "",
                alt->flags ? alt->flags : "", alt->flags ? ")" : alt->stat ? " (another statistic)" : "", alt->why,
                v, verdict_cell);
    }
}

static void write_csv(const char *out, const claim_study *s)
{
    outfile *f = csv_open_in(out, "verdicts.csv",
                             "id,experiment,family,test,side,threshold,seeds,values,mean,lo,hi,k,total,p_claim,"
                             "p_claim_holm,p_other_holm,diverged_seeds,control,control_values,control_mean,control_lo,"
                             "control_hi,control_verdict,paired_mean,paired_verdict,verdict,alternatives_run,"
                             "alternatives_same,robustness,notes,commit,why,hypothesis,paper_lo,paper_hi,seeds_to_decide");
    char seeds[256];
    fmt_seeds(seeds, sizeof seeds, &s->seeds, ";");
    for (int i = 0; i < s->n; i++) {
        const judged_claim *j = &s->claim[i];
        const judged_setting *m = &j->main;
        const claim_rule *r = j->r;
        char vals[1024], cvals[1024], notes[16], why[400];
        fmt_values(vals, sizeof vals, m->x, s->seeds.n, ";");
        fmt_values(cvals, sizeof cvals, m->c, s->seeds.n, ";");
        fmt_notes(notes, sizeof notes, j);
        snprintf(why, sizeof why, "%s", m->why);
        for (char *p = why; *p; p++) if (*p == ',' || *p == '"' || *p == '\n') *p = ';'; /* one field */
        double plo = r->paper_value.numeric ? r->paper_value.lo : NAN;
        double phi = r->paper_value.numeric ? r->paper_value.hi : NAN;
        char take[160];
        int nt = would_take(take, sizeof take, s, j, m); /* -1: decided, or no number */
        csv_row(f, "%s,%s,%s,%s,%s,%.10g,%s,%s,%.10g,%.10g,%.10g,%.10g,%.10g,%.6g,%.6g,%.6g,%d,%s,%s,%.10g,%.10g,%.10g,%s,"
                   "%.10g,%s,%s,%d,%d,%s,%s,%s,%s,%d,%.10g,%.10g,%d",
                r->id, r->experiment, r->family ? r->family : r->id, test_name(m->stat.test), side_word(r->side),
                r->threshold, seeds, vals, m->stat.mean, m->stat.lo, m->stat.hi, m->stat.k, m->stat.total,
                m->stat.p_claim, m->p_claim_adj, m->p_other_adj, m->stat.n_inf, r->control ? r->control : "",
                r->control ? cvals : "", m->control.mean, m->control.lo, m->control.hi,
                r->control ? verdict_name(m->control_v) : "", m->paired.mean,
                m->has_paired ? verdict_name(reading_verdict(&m->paired, s->alpha)) : "", verdict_name(m->v),
                j->n_run, j->n_same, robustness(j), notes, commit_of(s), why, r->hypothesis, plo, phi, nt);
    }
    csv_close(f);
    f = csv_open_in(out, "sensitivity.csv", "id,choice,alternative,flags,statistic,mean,lo,hi,verdict,main_verdict");
    for (int i = 0; i < s->n; i++) {
        const judged_claim *j = &s->claim[i];
        for (int a = 0; a < j->n_alt; a++) {
            const alternative *alt = &j->r->alt[a];
            const judged_setting *js = &j->alt[a];
            csv_row(f, "%s,%s,%s,%s,%s,%.10g,%.10g,%.10g,%s,%s", j->r->id, alt->choice, alt->name,
                    alt->flags ? alt->flags : "", alt->stat ? alt->stat : j->r->stat,
                    js->evaluated ? js->stat.mean : NAN, js->evaluated ? js->stat.lo : NAN,
                    js->evaluated ? js->stat.hi : NAN, js->evaluated ? verdict_name(js->v) : "not run",
                    verdict_name(j->main.v));
        }
    }
    csv_close(f);
}

/* The flags each experiment's runs were made with, and their commit. */
static void write_provenance(FILE *fp, const claim_study *s)
{
    fprintf(fp, "\n## Runs\n\n| experiment | alternative | flags (SEED: the seed) | commit | seeds not usable |\n"
                "|---|---|---|---|---|\n");
    for (int i = 0; i < s->nsets; i++) {
        const seed_runs *set = &s->set[i];
        if (set->alt && !set->present) continue;
        char bad[1024] = "";
        for (int k = 0; k < set->n; k++)
            if (!set->run[k].ok) {
                size_t len = strlen(bad);
                snprintf(bad + len, sizeof bad - len, "%sseed %ld: %s", len ? "; " : "", set->run[k].seed,
                         set->run[k].why);
            }
        for (char *p = bad; *p; p++) if (*p == '|') *p = '/';
        fprintf(fp, "| `%s` | %s | `%s` | %s | %s |\n", set->experiment, set->alt ? set->alt : "main", set->flags,
                set->commit[0] ? set->commit : "-", bad[0] ? bad : "none");
    }
}

void study_write(const char *out, const claim_study *s, const char *skipped)
{
    write_csv(out, s);
    outfile *o = outfile_open_in(out, "verdicts.md");
    FILE *fp = outfile_fp(o);
    fprintf(fp, "# Verdicts\n\n");
    write_headline(fp, s);
    if (skipped && skipped[0]) fprintf(fp, "Not judged (not run, `--skip`): %s.\n\n", skipped);
    write_table(fp, s);
    fprintf(fp, "\nTests (each one-sided at alpha %g; intervals shown at %g%%, one-sided %g%% bounds): a t-test claim "
                "PASSes when the mean over seeds lies above (below) the threshold at p <= alpha; a sign-test claim "
                "when that many seeds lie on the claim's side; a share claim when the counts pooled over seeds give "
                "an exact binomial p <= alpha against the threshold share; an exact claim when its deterministic "
                "number lies on the claim's side. A claim FAILs when the other side is decided. Holm's correction "
                "applies inside each family. A PASS also needs its negative control to be a decided FAIL and the "
                "paired difference claim minus control to be decided on the claim's side; otherwise NO POWER. A "
                "diverged run counts as the worst outcome for the method that diverged (+-inf), judged by the sign "
                "test; INVALID only for a missing or corrupt run, or one made with other flags, from another commit "
                "or scale.\n",
            s->alpha, 100 * (1 - 2 * s->alpha), 100 * (1 - s->alpha));
    for (int i = 0; i < s->n; i++)
        if (!s->claim[i].r->hypothesis) write_claim_md(fp, s, &s->claim[i]);
    if (hypothesis_count(s)) fprintf(fp, "\n## The toolkit's own hypotheses (not the paper's claims)\n");
    for (int i = 0; i < s->n; i++)
        if (s->claim[i].r->hypothesis) write_claim_md(fp, s, &s->claim[i]);
    write_provenance(fp, s);
    outfile_commit(o);
    o = outfile_open_in(out, "summary.md");
    write_headline(outfile_fp(o), s);
    write_table(outfile_fp(o), s);
    outfile_commit(o);
}
