/* verdicts — every claim of the paper the toolkit tests, judged over seeds.
 *
 * Reads the per-seed runs that `make verdicts` had each experiment write
 * (<runs>/<experiment>/seed<s>/: stats.csv and run.txt) and, with
 * --sensitivity, the runs of every alternative reading that `make sensitivity`
 * made (<sensitivity>/<experiment>/<alternative>/seed<s>/), and applies each
 * claim of the claim table (verdict/claims/, fixed before the runs): its test
 * over seeds, its negative control, the paired difference, Holm's correction
 * in its family, and its verdict under each declared alternative (ROBUST /
 * FRAGILE). A seed's run made with other flags, from another commit or scale,
 * or with a cut or malformed stats.csv is INVALID with the reason named.
 *
 * Writes <out>/verdicts.csv, sensitivity.csv, verdicts.md (the evidence, claim
 * by claim, and the runs' flags and commit) and summary.md (the results table).
 * --plan prints the runs the alternatives need ("experiment name flags" lines);
 * mk/sensitivity.mk makes them from it.
 */
#include "verdict/verdict.h"
#include <stdlib.h>
#include <string.h>

/* --skip: experiment names, comma-separated, each one of the claim table's. */
static int parse_skip(const char *text, const claim_rule *rules, int n, char names[][64], int cap)
{
    int count = 0;
    for (const char *p = text; p && *p; p += *p == ',') {
        size_t len = strcspn(p, ",");
        if (count == cap) die_user("--skip: more than %d experiments", cap);
        snprintf(names[count], 64, "%.*s", (int)(len < 63 ? len : 63), p);
        int known = 0;
        for (int i = 0; i < n && !known; i++) known = !strcmp(rules[i].experiment, names[count]);
        if (!known) die_user("--skip: '%s' is no experiment of the claim table (see --list)", names[count]);
        count++;
        p += len;
    }
    return count;
}

/* One line per run an alternative needs: experiment, name, flags (each once). */
static void print_plan(const claim_rule *rules, int n)
{
    for (int i = 0; i < n; i++)
        for (int a = 0; a < claim_alt_count(&rules[i]); a++) {
            const alternative *alt = &rules[i].alt[a];
            if (!alt->flags) continue;
            int seen = 0;
            for (int k = 0; k <= i && !seen; k++)
                for (int b = 0; b < claim_alt_count(&rules[k]) && !seen; b++)
                    seen = (k < i || b < a) && !strcmp(rules[k].experiment, rules[i].experiment) &&
                           rules[k].alt[b].flags && !strcmp(rules[k].alt[b].name, alt->name);
            if (!seen) printf("%s %s %s\n", rules[i].experiment, alt->name, alt->flags);
        }
}

static void print_list(const claim_rule *rules, int n)
{
    static const char *kinds[] = {"t-interval", "sign test", "binomial", "exact"};
    for (int i = 0; i < n; i++)
        printf("%-34s %-18s %s %s %g (%s); control: %s\n", rules[i].id, rules[i].experiment, rules[i].stat,
               rules[i].side == CLAIM_ABOVE ? "above" : "below", rules[i].threshold, kinds[rules[i].kind],
               rules[i].control ? rules[i].control : "none");
}

/* --dump: every field of every claim as resolved from its family, "id<TAB>field<TAB>value" per line
 * (a field left empty is not printed), so two versions of the table can be compared with diff. */
static void dump_text(const char *id, const char *field, const char *value)
{
    if (value) printf("%s\t%s\t%s\n", id, field, value);
}

static void dump_rule(const char *id, const char *field, rule_kind kind, claim_side side, double threshold,
                      const char *note)
{
    static const char *kinds[] = {"interval", "sign", "share", "exact"};
    printf("%s\t%s\t%s %s %.17g%s\n", id, field, kinds[kind], side == CLAIM_ABOVE ? "above" : "below", threshold, note);
}

static void print_dump(const claim_rule *rules, int n)
{
    for (int i = 0; i < n; i++) {
        const claim_rule *c = &rules[i];
        const char *id = c->id;
        dump_text(id, "experiment", c->experiment), dump_text(id, "paper", c->paper), dump_text(id, "place", c->place);
        dump_text(id, "claim", c->claim), dump_text(id, "stat", c->stat), dump_text(id, "stat_what", c->stat_what);
        dump_rule(id, "rule", c->kind, c->side, c->threshold, "");
        dump_text(id, "control", c->control), dump_text(id, "control_what", c->control_what);
        dump_text(id, "depends", c->depends), dump_text(id, "family", c->family);
        dump_text(id, "after_data", c->after_data), dump_text(id, "paper_setting", c->paper_setting);
        dump_text(id, "paper_scale", c->paper_scale), dump_text(id, "paper_value", c->paper_value.text);
        if (c->paper_value.numeric) printf("%s\tpaper_number\t%.17g %.17g\n", id, c->paper_value.lo, c->paper_value.hi);
        dump_text(id, "after_confirmation", c->after_confirmation);
        if (c->hypothesis) dump_text(id, "hypothesis", "yes");
        for (int a = 0; a < claim_alt_count(c); a++) {
            const alternative *x = &c->alt[a];
            char f[64];
#define ALT_FIELD(name, value) (snprintf(f, sizeof f, "alt%d.%s", a, name), dump_text(id, f, value))
            ALT_FIELD("choice", x->choice), ALT_FIELD("name", x->name), ALT_FIELD("flags", x->flags);
            ALT_FIELD("stat", x->stat ? x->stat : c->stat), ALT_FIELD("control", x->control ? x->control : c->control);
            ALT_FIELD("why", x->why);
#undef ALT_FIELD
            snprintf(f, sizeof f, "alt%d.rule", a);
            if (x->own_rule) dump_rule(id, f, x->kind, x->side, x->threshold, " own");
            else dump_rule(id, f, c->kind, c->side, c->threshold, "");
        }
    }
}

/* --names: every stats.csv name the table reads, "experiment name", each once: each reading's and
 * each alternative's statistic and control, with "<name>.count" and "<name>.total" under a share
 * rule (tests/lib_cli.sh expect_claim_stats checks them against a tiny run of each program). */
static int name_seen(const char *const *seen, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(seen[i], name)) return 1;
    return 0;
}

static void print_name(const char *experiment, const char *name, rule_kind kind, const char **seen, int *n, int cap)
{
    if (!name || name_seen(seen, *n, name)) return;
    if (*n == cap) DIE("more than %d statistic names", cap);
    seen[(*n)++] = name;
    printf("%s %s\n", experiment, name);
    if (kind == RULE_SHARE) printf("%s %s.count\n%s %s.total\n", experiment, name, experiment, name);
}

static void print_names(const claim_rule *rules, int n)
{
    const char *seen[1024];
    int nseen = 0, cap = (int)(sizeof seen / sizeof *seen);
    for (int i = 0; i < n; i++) {
        const claim_rule *r = &rules[i];
        print_name(r->experiment, r->stat, r->kind, seen, &nseen, cap);
        print_name(r->experiment, r->control, r->kind, seen, &nseen, cap);
        for (int a = 0; a < claim_alt_count(r); a++) {
            const alternative *x = &r->alt[a];
            rule_kind kind = x->own_rule ? x->kind : r->kind;
            print_name(r->experiment, x->stat ? x->stat : r->stat, kind, seen, &nseen, cap);
            print_name(r->experiment, x->control ? x->control : r->control, kind, seen, &nseen, cap);
        }
    }
}

/* --runs must be a folder; --out must not be inside it (a seed's folder holds
 * a run.txt: writing there would first clear that run's files). */
/* The folder of runs (--runs or --sensitivity) must be one, and --out must not lie
 * inside it: a verdicts folder there would clear a run's files. */
static void check_runs_and_out(const char *flag, const char *runs, const char *out)
{
    if (!path_is_folder(runs))
        die_user("--%s %s is not a folder (expected the per-seed runs, <%s>/<experiment>/.../seed<s>/)", flag, runs,
                 flag);
    char *r = realpath(runs, NULL), *o = realpath(out, NULL);
    size_t n = r ? strlen(r) : 0;
    int inside = r && o && strncmp(o, r, n) == 0 && (o[n] == '/' || o[n] == '\0' || n == 1);
    free(r);
    free(o);
    if (inside)
        die_user("--out %s is inside --%s %s: a run there would be cleared; give a folder outside the runs", out, flag,
                 runs);
}

int main(int argc, char **argv)
{
    const char *runs = "results/verdict-runs", *out = "results/verdicts", *scale = "quick", *skip = NULL,
               *sensitivity = NULL;
    int_list seeds = {5, {1, 2, 3, 4, 5}};
    double alpha = 0.05;
    int list = 0, plan = 0, dump = 0, stat_names = 0;
    const cli_opt opts[] = {
        {"runs", OPT_STRING, &runs, "folder of the per-seed runs: <runs>/<experiment>/seed<s>/{stats.csv,run.txt}"},
        {"sensitivity", OPT_STRING, &sensitivity,
         "folder of the alternatives' runs: <folder>/<experiment>/<alternative>/seed<s>/ (none: only the "
         "alternatives that read another statistic of the main runs)"},
        {"seeds", OPT_INT_LIST, &seeds, "the seeds to judge over (each once)"},
        {"scale", OPT_STRING, &scale, "quick or paper: every run must be of this scale"},
        {"alpha", OPT_DOUBLE, &alpha, "one-sided significance level of every test (intervals shown at 1 - 2 alpha)"},
        {"skip", OPT_STRING, &skip, "experiments not run, comma-separated: their claims are left out"},
        {"list", OPT_FLAG, &list, "print the claims and their rules, and exit"},
        {"plan", OPT_FLAG, &plan, "print the runs the alternatives need (experiment name flags), and exit"},
        {"names", OPT_FLAG, &stat_names,
         "print every statistic the claims read, 'experiment name' (with a share's .count and .total), and exit"},
        {"dump", OPT_FLAG, &dump,
         "print every field of every claim, id<TAB>field<TAB>value, and exit (to diff two tables)"},
        {"out", OPT_STRING, &out, "output folder"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Judges every claim of the paper the toolkit tests over seeds: each claim's test (claim table,\n"
              "verdict/claims/, fixed before the runs) on the per-seed statistics, its negative control, the\n"
              "paired difference, Holm's correction in its family, and the verdict under each declared\n"
              "alternative reading. Verdicts: PASS, FAIL, INCONCLUSIVE, NO POWER (the control is not a decided\n"
              "FAIL, or claim minus control is not decided), INVALID (a run missing, corrupt, or made with other\n"
              "flags, commit or scale). docs/verdicts.md explains every rule.",
              opts, sizeof opts / sizeof *opts);
    scale_parse(scale);
    if (!(alpha > 0 && alpha < 0.5)) die_user("--alpha must be in (0, 0.5) (got %g)", alpha);
    const claim_rule *rules;
    int n = claim_rules(&rules);
    if (list) { print_list(rules, n); return 0; }
    if (plan) { print_plan(rules, n); return 0; }
    if (dump) { print_dump(rules, n); return 0; }
    if (stat_names) { print_names(rules, n); return 0; }
    if (seeds.n < 2) die_user("--seeds: at least 2 seeds are needed (got %d)", seeds.n);
    for (int k = 0; k < seeds.n; k++) {
        if (seeds.v[k] < 0) die_user("--seeds must be >= 0 (got %d)", seeds.v[k]);
        for (int j = 0; j < k; j++)
            if (seeds.v[j] == seeds.v[k]) die_user("--seeds: seed %d is given twice (each seed once)", seeds.v[k]);
    }
    char names[32][64];
    int nskip = parse_skip(skip, rules, n, names, 32);
    const char *skipv[32];
    for (int k = 0; k < nskip; k++) skipv[k] = names[k];
    check_runs_and_out("runs", runs, out);
    if (sensitivity) check_runs_and_out("sensitivity", sensitivity, out);
    claim_study s = {.runs = runs, .sensitivity = sensitivity, .scale = scale, .alpha = alpha, .seeds = seeds};
    study_run(&s, rules, n, skipv, nskip);
    if (!study_present(&s)) die_user("--runs %s holds no run of any experiment of the claim table", runs);
    ensure_dir(out);
    study_write(out, &s, skip);
    char *path = path_join(out, "summary.md");
    if (!core_quiet) echo_file(path);
    free(path);
    run_write_info(out, (unsigned long)seeds.v[0]);
    study_free(&s);
    return 0;
}
