/* A study: every claim of the table judged over one set of seeds, from the
 * main runs and the alternatives' runs, with each run's provenance checked and
 * Holm's correction over each family of readings (verdict.h). */
#include "verdict.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int folder_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The most common of n strings among the usable runs (ties: the first seed's). */
static const char *most_common(const seed_runs *set, int which)
{
    const char *best = NULL;
    int best_count = 0;
    for (int i = 0; i < set->n; i++) {
        if (!set->run[i].ok) continue;
        const char *a = which ? set->run[i].commit : set->run[i].flags;
        int count = 0;
        for (int j = 0; j < set->n; j++)
            if (set->run[j].ok && !strcmp(a, which ? set->run[j].commit : set->run[j].flags)) count++;
        if (count > best_count) best = a, best_count = count;
    }
    return best ? best : "";
}

static void mark(seed_run *r, const char *fmt, const char *a, const char *b)
{
    if (!r->ok) return;
    r->ok = 0;
    snprintf(r->why, sizeof r->why, fmt, a, b);
}

/* Two runs' statistics equal name for name and value for value (NaN equal to NaN). */
static int same_stats(const seed_run *a, const seed_run *b)
{
    if (a->nstats != b->nstats || a->nstats == 0) return 0;
    for (int i = 0; i < a->nstats; i++) {
        double v;
        if (seed_run_get(b, a->stats[i].name, &v) < 0) return 0;
        if (!(v == a->stats[i].value || (isnan(v) && isnan(a->stats[i].value)))) return 0;
    }
    return 1;
}

/* A random experiment's run must be its seed's: run.txt's seed line (the seed the
 * program used, its default when the command has no --seed) is the folder's, and no
 * two seeds' statistics are the same in every value (a copy of one run). */
static void check_seeds(seed_runs *set)
{
    char a[32], b[32];
    for (int i = 0; i < set->n; i++) {
        seed_run *r = &set->run[i];
        snprintf(a, sizeof a, "%ld", r->run_seed);
        snprintf(b, sizeof b, "%ld", r->seed);
        if (r->ok && r->run_seed != r->seed) mark(r, "run.txt says seed %s, not the folder's seed %s", a, b);
    }
    for (int i = 0; i < set->n; i++)
        for (int j = 0; j < i; j++)
            if (set->run[i].ok && set->run[j].ok && same_stats(&set->run[i], &set->run[j])) {
                snprintf(a, sizeof a, "%ld", set->run[j].seed);
                snprintf(b, sizeof b, "%ld", set->run[i].seed);
                mark(&set->run[i], "stats.csv equals seed %s's in every value (seed %s's run is a copy, or the "
                                   "seed does not enter)", a, b);
                set->run[j].ok = 0;
                snprintf(set->run[j].why, sizeof set->run[j].why, "%s", set->run[i].why);
            }
}

/* Provenance over the seeds: one command (but the seed), one commit, the study's scale,
 * and for a random experiment each seed's own run (check_seeds). */
static void check_provenance(seed_runs *set, const char *scale, const seed_runs *main_set, const alternative *alt,
                             int random)
{
    if (random) check_seeds(set);
    snprintf(set->commit, sizeof set->commit, "%s", most_common(set, 1));
    set->flags = xstrdup(most_common(set, 0));
    char *want = NULL;
    if (main_set) { /* an alternative: the main runs' flags plus its own */
        size_t n = strlen(main_set->flags) + strlen(alt->flags) + 2;
        want = xmalloc(n);
        snprintf(want, n, "%s %s", main_set->flags, alt->flags);
    }
    for (int i = 0; i < set->n; i++) {
        seed_run *r = &set->run[i];
        if (strcmp(r->flags, set->flags)) mark(r, "run with other flags than the other seeds' ('%s', not '%s')", r->flags, set->flags);
        if (strcmp(r->commit, set->commit)) mark(r, "from commit %s, the other seeds' from %s", r->commit, set->commit);
        if (strcmp(r->scale, "none") && strcmp(r->scale, scale))
            mark(r, "run at scale '%s', the study's is '%s'", r->scale, scale);
        if (want && strcmp(r->flags, want)) mark(r, "not the main run's flags plus the alternative's ('%s', not '%s')", r->flags, want);
        if (main_set && main_set->present && strcmp(r->commit, main_set->commit))
            mark(r, "from commit %s, the main runs' from %s", r->commit, main_set->commit);
    }
    free(want);
}

static seed_runs *get_set(claim_study *s, const char *experiment, const alternative *alt, int random)
{
    const char *name = alt ? alt->name : NULL;
    for (int i = 0; i < s->nsets; i++)
        if (!strcmp(s->set[i].experiment, experiment) && (name ? s->set[i].alt && !strcmp(s->set[i].alt, name) : !s->set[i].alt))
            return &s->set[i];
    seed_runs *main_set = alt ? get_set(s, experiment, NULL, random) : NULL; /* first, so that it exists before the realloc */
    size_t main_index = main_set ? (size_t)(main_set - s->set) : 0;
    s->set = xrealloc(s->set, (size_t)(s->nsets + 1) * sizeof *s->set);
    main_set = alt ? &s->set[main_index] : NULL;
    seed_runs *set = &s->set[s->nsets++];
    memset(set, 0, sizeof *set);
    set->experiment = experiment;
    set->alt = name;
    set->n = s->seeds.n;
    for (int k = 0; k < s->seeds.n; k++) {
        char rel[256];
        if (alt) snprintf(rel, sizeof rel, "%s/%s/seed%d", experiment, name, s->seeds.v[k]);
        else snprintf(rel, sizeof rel, "%s/seed%d", experiment, s->seeds.v[k]);
        char *dir = path_join(alt ? s->sensitivity : s->runs, rel);
        set->present |= folder_exists(dir);
        seed_run_read(&set->run[k], dir, s->seeds.v[k]);
        free(dir);
    }
    check_provenance(set, s->scale, main_set, alt, random);
    return set;
}

/* The per-seed values of one statistic (NAN where the run is not usable or
 * the name is missing) and, for a share, its counts. */
static void values_of(const seed_runs *set, const char *name, double *x, double *count, double *total)
{
    char cname[256], tname[256];
    snprintf(cname, sizeof cname, "%s.count", name);
    snprintf(tname, sizeof tname, "%s.total", name);
    for (int k = 0; k < set->n; k++) {
        const seed_run *r = &set->run[k];
        x[k] = NAN;
        if (count) count[k] = total[k] = NAN;
        if (!r->ok) continue;
        if (seed_run_get(r, name, &x[k]) < 0) x[k] = NAN;
        if (count && (seed_run_get(r, cname, &count[k]) < 0 || seed_run_get(r, tname, &total[k]) < 0))
            count[k] = total[k] = NAN;
    }
}

/* The paired difference claim minus control per seed, tested against 0 on the
 * claim's side: the claim's kind (a share: the sign test of the per-seed
 * shares' differences; identical differences: the sign test too). */
static claim_reading paired_reading(const judged_setting *j, int n, double alpha)
{
    double d[LIST_MAX];
    int same = 1;
    for (int k = 0; k < n; k++) {
        d[k] = j->x[k] - j->c[k]; /* inf − inf is NaN: missing */
        same &= k == 0 || d[k] == d[0];
    }
    rule_kind kind = j->kind == RULE_SHARE || same ? RULE_SIGN : j->kind;
    return reading_over_seeds(kind, j->side, 0, d, NULL, NULL, n, alpha);
}

static void evaluate(claim_study *s, const claim_rule *r, const alternative *alt, judged_setting *j, int random)
{
    int n = s->seeds.n;
    if (alt && alt->flags && !s->sensitivity) return; /* its runs were not asked for: not evaluated */
    seed_runs *set = get_set(s, r->experiment, alt && alt->flags ? alt : NULL, random);
    j->evaluated = !(alt && alt->flags) || set->present;
    if (!j->evaluated) return;
    const char *stat = alt && alt->stat ? alt->stat : r->stat;
    const char *control = alt && alt->control ? alt->control : r->control;
    int own = alt && alt->own_rule;
    j->kind = own ? alt->kind : r->kind;
    j->side = own ? alt->side : r->side;
    j->threshold = own ? alt->threshold : r->threshold;
    double cnt[LIST_MAX], tot[LIST_MAX], ccnt[LIST_MAX], ctot[LIST_MAX];
    int share = j->kind == RULE_SHARE;
    values_of(set, stat, j->x, share ? cnt : NULL, share ? tot : NULL);
    j->stat = reading_over_seeds(j->kind, j->side, j->threshold, j->x, cnt, tot, n, s->alpha);
    j->has_control = control != NULL;
    if (control) {
        values_of(set, control, j->c, share ? ccnt : NULL, share ? ctot : NULL);
        j->control = reading_over_seeds(j->kind, j->side, j->threshold, j->c, ccnt, ctot, n, s->alpha);
        j->control_v = reading_verdict(&j->control, s->alpha);
        j->has_paired = j->kind != RULE_EXACT;
        if (j->has_paired) j->paired = paired_reading(j, n, s->alpha);
    }
    char dname[128];
    snprintf(dname, sizeof dname, "%s.diverged", r->experiment);
    values_of(set, dname, j->diverged, NULL, NULL);
    for (int k = 0; k < n; k++) /* a run not usable says why in the verdict */
        if (!set->run[k].ok && !j->why[0])
            snprintf(j->why, sizeof j->why, "seed %d: %s", s->seeds.v[k], set->run[k].why);
}

static const char *family_of(const claim_rule *r) { return r->family ? r->family : r->id; }

/* The setting of claim m that goes with claim c's setting `a` (-1: main): m's
 * alternative of the same name if it has one, else its main one. */
static judged_setting *partner(judged_claim *m, const judged_claim *c, int a)
{
    if (a < 0) return &m->main;
    const char *name = c->r->alt[a].name;
    for (int i = 0; i < m->n_alt; i++)
        if (!strcmp(m->r->alt[i].name, name)) return &m->alt[i];
    return &m->main;
}

/* Holm over c's family, each member in the setting that goes with c's setting a. */
static void adjust(claim_study *s, judged_claim *c, int a)
{
    judged_setting *mine = a < 0 ? &c->main : &c->alt[a];
    double pc[64], po[64], ac[64], ao[64];
    int m = 0, self = -1;
    for (int i = 0; i < s->n && m < 64; i++) {
        judged_claim *o = &s->claim[i];
        if (strcmp(family_of(o->r), family_of(c->r))) continue;
        judged_setting *js = o == c ? mine : partner(o, c, a);
        if (o == c) self = m;
        pc[m] = js->evaluated ? js->stat.p_claim : NAN;
        po[m] = js->evaluated ? js->stat.p_other : NAN;
        m++;
    }
    holm_adjust(pc, m, ac);
    holm_adjust(po, m, ao);
    mine->p_claim_adj = ac[self];
    mine->p_other_adj = ao[self];
}

static void decide(claim_study *s, judged_setting *j)
{
    if (!j->evaluated) return;
    char why[320];
    j->v = claim_verdict(&j->stat, j->p_claim_adj, j->p_other_adj, j->has_control ? &j->control : NULL,
                         j->has_paired ? &j->paired : NULL, s->alpha, why, sizeof why);
    if (j->v == VERDICT_INVALID && j->why[0]) return; /* the run's own reason says more */
    if (why[0] || j->v != VERDICT_INVALID) snprintf(j->why, sizeof j->why, "%s", why);
}

int study_present(const claim_study *s)
{
    for (int i = 0; i < s->nsets; i++)
        if (!s->set[i].alt && s->set[i].present) return 1;
    return 0;
}

const char *robustness(const judged_claim *j)
{
    if (j->n_run == 0) return "-";
    return j->n_same == j->n_run ? "ROBUST" : "FRAGILE";
}

/* An experiment is random when a rule of it (a claim's or an alternative's own) tests over
 * seeds; one judged only by exact rules is deterministic (its runs may share a seed). */
static int experiment_random(const claim_rule *rules, int nrules, const char *experiment)
{
    for (int i = 0; i < nrules; i++) {
        if (strcmp(rules[i].experiment, experiment)) continue;
        if (rules[i].kind != RULE_EXACT) return 1;
        for (int a = 0; a < claim_alt_count(&rules[i]); a++)
            if (rules[i].alt[a].own_rule && rules[i].alt[a].kind != RULE_EXACT) return 1;
    }
    return 0;
}

void study_run(claim_study *s, const claim_rule *rules, int nrules, const char *const *skip, int nskip)
{
    s->claim = xcalloc((size_t)(nrules ? nrules : 1), sizeof *s->claim);
    s->n = 0;
    for (int i = 0; i < nrules; i++) {
        int skipped = 0;
        for (int k = 0; k < nskip; k++) skipped |= !strcmp(skip[k], rules[i].experiment);
        if (skipped) continue;
        judged_claim *c = &s->claim[s->n++];
        c->r = &rules[i];
        c->n_alt = claim_alt_count(c->r);
        int random = experiment_random(rules, nrules, c->r->experiment);
        evaluate(s, c->r, NULL, &c->main, random);
        for (int a = 0; a < c->n_alt; a++) evaluate(s, c->r, &c->r->alt[a], &c->alt[a], random);
    }
    for (int i = 0; i < s->n; i++) {
        judged_claim *c = &s->claim[i];
        adjust(s, c, -1);
        decide(s, &c->main);
        for (int a = 0; a < c->n_alt; a++) {
            if (!c->alt[a].evaluated) continue;
            adjust(s, c, a);
            decide(s, &c->alt[a]);
            if (c->alt[a].v == VERDICT_INVALID || c->main.v == VERDICT_INVALID) continue; /* no evidence either way */
            c->n_run++;
            c->n_same += c->alt[a].v == c->main.v;
        }
    }
}

void study_free(claim_study *s)
{
    for (int i = 0; i < s->nsets; i++) {
        for (int k = 0; k < s->set[i].n; k++) seed_run_free(&s->set[i].run[k]);
        free(s->set[i].flags);
    }
    free(s->set);
    free(s->claim);
    s->set = NULL;
    s->claim = NULL;
}
