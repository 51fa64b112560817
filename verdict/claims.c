/* The claim table: one file of families per experiment (verdict/claims/<experiment>.c),
 * collected here in the order of the results table, checked, and resolved into the
 * claim_rules the judge reads (verdict.h, verdict/claims/claims.h). */
#include "verdict/claims/claims.h"
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- the list ------------------------------------------------------------------------------
 * Each file's claim_file (CLAIM_FILE at its end), in the order of the results table; sections
 * follow the README's order. Every change of a rule after seeing data is listed in
 * docs/verdicts.md with its reason. */
extern const claim_file claims_fig4, claims_fig3, claims_fig2, claims_fig6, claims_partition_check,
    claims_block_structure, claims_table_kappa, claims_table1_memory, claims_train_compare, claims_exp2_blockwise_gd,
    claims_leave_out, claims_ablation_vstat, claims_trajectory, claims_hetero, claims_vspread, claims_mlp_steps,
    claims_coarse, claims_value_split;
static const claim_file *const FILES[] = {
    &claims_fig4, &claims_fig3, &claims_fig2,                                                     /* quadratics, MLP */
    &claims_fig6, &claims_partition_check, &claims_block_structure, &claims_table_kappa,          /* Transformer H */
    &claims_table1_memory,                                                                        /* memory */
    &claims_train_compare, &claims_exp2_blockwise_gd, &claims_leave_out, &claims_ablation_vstat, /* optimizers */
    &claims_trajectory,
    &claims_hetero, &claims_vspread, &claims_mlp_steps, &claims_coarse, &claims_value_split,     /* extensions */
};
#define NFILES (int)(sizeof FILES / sizeof *FILES)

/* ---- the check -----------------------------------------------------------------------------
 * Each problem is counted; the first one is said in why. */
typedef struct {
    int n;
    char *why;
    size_t size;
} problems;

__attribute__((format(printf, 2, 3))) static void problem(problems *p, const char *fmt, ...)
{
    if (p->n++ || !p->why) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->why, p->size, fmt, ap);
    va_end(ap);
}

static int empty(const char *s) { return !s || !s[0]; }

/* One name per experiment: an id or a statistic is "<experiment>.<what>" (NULL: nothing to check). */
static void check_prefix(problems *p, const char *who, const char *what, const char *name, const char *experiment)
{
    size_t len = strlen(experiment);
    if (name && (strncmp(name, experiment, len) || name[len] != '.' || !name[len + 1]))
        problem(p, "%s: %s %s is not %s.<what> (one name per experiment)", who, what, name, experiment);
}

static int reading_count(const claim_family *f)
{
    int n = 0;
    while (n < READING_MAX && f->reading[n].id) n++;
    return n;
}

static int family_alt_count(const claim_family *f)
{
    int n = 0;
    while (n < ALT_MAX && f->alt[n].name) n++;
    return n;
}

static const reading_alt *reading_alt_of(const family_reading *r, const char *name)
{
    for (int k = 0; k < ALT_MAX && r->alt[k].alt; k++)
        if (!strcmp(r->alt[k].alt, name)) return &r->alt[k];
    return NULL;
}

/* A rule: a known kind and side, a finite threshold, a share's threshold in (0, 1). */
static void check_rule(problems *p, const char *who, rule_kind kind, claim_side side, double threshold)
{
    if (kind < RULE_INTERVAL || kind > RULE_EXACT) problem(p, "%s: rule kind %d is none of RULE_*", who, (int)kind);
    if (side != CLAIM_ABOVE && side != CLAIM_BELOW) problem(p, "%s: side %d is none of CLAIM_*", who, (int)side);
    if (!isfinite(threshold)) problem(p, "%s: threshold %g is not finite", who, threshold);
    if (kind == RULE_SHARE && !(threshold > 0 && threshold < 1))
        problem(p, "%s: a share's threshold must lie in (0, 1) (got %g)", who, threshold);
}

static void check_reading(problems *p, const claim_family *f, const family_reading *r)
{
    const char *id = r->id;
    check_prefix(p, id, "the id", id, f->experiment);
    check_prefix(p, id, "statistic", r->stat, f->experiment);
    check_prefix(p, id, "control", r->control, f->experiment);
    if (empty(r->claim) || empty(r->stat) || empty(r->stat_what))
        problem(p, "%s: the claim, its statistic and what the statistic is are required", id);
    check_rule(p, id, r->kind, r->side, r->threshold);
    const char *control_what = r->control_what ? r->control_what : f->control_what;
    if (r->control && (empty(r->control) || empty(control_what)))
        problem(p, "%s: control %s needs its description (control_what)", id, r->control);
    if (!r->control && r->control_what) problem(p, "%s: control_what without a control", id);
    if (r->control && r->stat && !strcmp(r->control, r->stat)) problem(p, "%s: the control is the statistic", id);
    if (empty(r->depends ? r->depends : f->depends)) problem(p, "%s: depends is required", id);
    if (r->paper_value.numeric && !(isfinite(r->paper_value.lo) && isfinite(r->paper_value.hi) &&
                                    r->paper_value.lo <= r->paper_value.hi && r->paper_value.text))
        problem(p, "%s: the paper's number needs its words and finite lo <= hi", id);
    for (int k = 0; k < ALT_MAX && r->alt[k].alt; k++) {
        int found = 0;
        for (int a = 0; a < family_alt_count(f); a++) found |= !strcmp(f->alt[a].name, r->alt[k].alt);
        if (!found) problem(p, "%s: alternative %s is not one of its family's", id, r->alt[k].alt);
        if (empty(r->alt[k].stat)) problem(p, "%s: alternative %s: its statistic is required", id, r->alt[k].alt);
        check_prefix(p, id, "statistic", r->alt[k].stat, f->experiment);
        check_prefix(p, id, "control", r->alt[k].control, f->experiment);
    }
    if (r->alt[ALT_MAX - 1].alt) problem(p, "%s: more than %d alternative statistics", id, ALT_MAX - 1);
}

static void check_alternative(problems *p, const claim_family *f, int a)
{
    const alternative *x = &f->alt[a];
    const char *first = f->reading[0].id ? f->reading[0].id : "(no reading)";
    if (empty(x->choice) || empty(x->why))
        problem(p, "%s: alternative %s: its choice and why are required", first, x->name);
    for (int b = 0; b < a; b++)
        if (!strcmp(f->alt[b].name, x->name)) problem(p, "%s: alternative %s declared twice", first, x->name);
    if (x->own_rule) check_rule(p, x->name, x->kind, x->side, x->threshold);
    check_prefix(p, first, "statistic", x->stat, f->experiment);
    check_prefix(p, first, "control", x->control, f->experiment);
    if (x->flags) return;
    for (int i = 0; i < reading_count(f); i++) { /* no flags: another statistic, for every reading */
        const reading_alt *ra = reading_alt_of(&f->reading[i], x->name);
        if (empty(x->stat) && !(ra && ra->stat))
            problem(p, "%s: alternative %s has neither flags nor a statistic", f->reading[i].id, x->name);
    }
}

static void check_family(problems *p, const claim_family *f)
{
    int n = reading_count(f);
    const char *first = n ? f->reading[0].id : "(no reading)";
    if (n == 0) problem(p, "a family of %s quoting \"%.40s\" has no reading", f->experiment, f->paper ? f->paper : "");
    if (empty(f->experiment) || empty(f->paper) || empty(f->place))
        problem(p, "%s: its family needs the experiment, the paper's sentence and its place", first);
    if (n > 1 && empty(f->holm)) problem(p, "%s: a family of %d readings needs its Holm name (holm)", first, n);
    if (f->reading[READING_MAX - 1].id) problem(p, "%s: more than %d readings in one family", first, READING_MAX - 1);
    if (f->alt[ALT_MAX - 1].name) problem(p, "%s: more than %d alternatives in one family", first, ALT_MAX - 1);
    if (empty(f->experiment)) return; /* the names below are checked against it */
    for (int a = 0; a < family_alt_count(f); a++) check_alternative(p, f, a);
    for (int i = 0; i < n; i++) check_reading(p, f, &f->reading[i]);
}

static int same_text(const char *a, const char *b) { return (!a && !b) || (a && b && !strcmp(a, b)); }

/* Across the table: ids unique; within an experiment one alternative name is one set of flags. */
static void check_across(problems *p, const claim_rule *r, int n)
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < i; k++) {
            if (!strcmp(r[i].id, r[k].id)) problem(p, "%s: the id is used twice", r[i].id);
            if (strcmp(r[i].experiment, r[k].experiment)) continue;
            for (int a = 0; a < claim_alt_count(&r[i]); a++)
                for (int b = 0; b < claim_alt_count(&r[k]); b++)
                    if (!strcmp(r[i].alt[a].name, r[k].alt[b].name) && !same_text(r[i].alt[a].flags, r[k].alt[b].flags))
                        problem(p, "%s: alternative %s of %s has other flags than %s's", r[i].id, r[i].alt[a].name,
                                r[i].experiment, r[k].id);
        }
}

int claims_check(const claim_file *files, int n, char *why, size_t size)
{
    problems p = {0, why, size};
    if (why && size) why[0] = '\0';
    for (int i = 0; i < n; i++)
        for (int k = 0; k < files[i].n; k++) check_family(&p, &files[i].family[k]);
    if (p.n) return p.n; /* resolving a malformed table could read past its slots */
    int m = claims_resolve(files, n, NULL);
    claim_rule *r = xcalloc((size_t)(m ? m : 1), sizeof *r);
    claims_resolve(files, n, r);
    check_across(&p, r, m);
    free(r);
    return p.n;
}

/* ---- resolving -------------------------------------------------------------------------------- */
static claim_rule resolve(const claim_family *f, const family_reading *r)
{
#define OWN(field) (r->field ? r->field : f->field)
    claim_rule c = {.id = r->id, .experiment = f->experiment, .paper = f->paper, .place = OWN(place),
                    .claim = r->claim, .stat = r->stat, .stat_what = r->stat_what, .side = r->side,
                    .threshold = r->threshold, .kind = r->kind, .control = r->control,
                    .control_what = r->control ? OWN(control_what) : NULL, .depends = OWN(depends),
                    .family = f->holm, .after_data = OWN(after_data), .after_confirmation = OWN(after_confirmation),
                    .paper_setting = OWN(paper_setting), .paper_scale = OWN(paper_scale),
                    .paper_value = r->paper_value, .hypothesis = r->hypothesis};
#undef OWN
    for (int a = 0; a < family_alt_count(f); a++) {
        c.alt[a] = f->alt[a];
        const reading_alt *ra = reading_alt_of(r, f->alt[a].name);
        if (ra) {
            c.alt[a].stat = ra->stat;
            if (ra->control) c.alt[a].control = ra->control;
        }
    }
    return c;
}

int claims_resolve(const claim_file *files, int n, claim_rule *out)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < files[i].n; k++) {
            const claim_family *f = &files[i].family[k];
            for (int j = 0; j < reading_count(f); j++, m++)
                if (out) out[m] = resolve(f, &f->reading[j]);
        }
    return m;
}

/* The files of the list, as an array (claims_check and claims_resolve take one). */
static void table_files(claim_file files[NFILES])
{
    for (int i = 0; i < NFILES; i++) files[i] = *FILES[i];
}

int claims_check_table(char *why, size_t size)
{
    claim_file files[NFILES];
    table_files(files);
    return claims_check(files, NFILES, why, size);
}

int claim_rules(const claim_rule **out)
{
    static claim_rule *rules;
    static int n;
    if (!rules) {
        claim_file files[NFILES];
        table_files(files);
        char why[512];
        if (claims_check(files, NFILES, why, sizeof why)) DIE("the claim table (verdict/claims/): %s", why);
        n = claims_resolve(files, NFILES, NULL);
        rules = xcalloc((size_t)n, sizeof *rules);
        claims_resolve(files, NFILES, rules);
    }
    *out = rules;
    return n;
}

int claim_alt_count(const claim_rule *r)
{
    int n = 0;
    while (n < ALT_MAX && r->alt[n].name) n++;
    return n;
}

const alternative *claim_alt(const claim_rule *r, const char *name)
{
    for (int i = 0; i < claim_alt_count(r); i++)
        if (!strcmp(r->alt[i].name, name)) return &r->alt[i];
    return NULL;
}
