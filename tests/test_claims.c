/* Tests of the claim table (verdict/claims.c, verdict/claims/): the table passes its check;
 * each kind of malformed family is caught, with its reason; a family's fields reach every
 * reading and a reading's own win; the toolkit's own hypotheses, the paper's numbers and the
 * changes after the confirmation run reach the study's files, hypotheses apart and uncounted. */
#include "check.h"
#include "verdict/claims/claims.h"
#include <stdlib.h>
#include <sys/stat.h>

/* A toy experiment: a family of two readings (Holm "toy", an alternative run and an
 * alternative statistic) and a family of one reading without a control. */
static const claim_family TOY[] = {
    {.experiment = "toy",
     .paper = "the paper's sentence",
     .place = "Sec. 1",
     .control_what = "the family's null",
     .depends = "nothing",
     .holm = "toy",
     .after_data = "the family's note",
     .alt = {{.choice = "horizon", .name = "long", .flags = "--steps 9", .why = "longer"},
             {.choice = "statistic", .name = "end", .why = "at the end"}},
     .reading = {{.id = "toy.a",
                  .claim = "a holds",
                  .stat = "toy.a",
                  .stat_what = "a share",
                  .side = CLAIM_ABOVE,
                  .threshold = 0.5,
                  .kind = RULE_SHARE,
                  .control = "toy.control.a",
                  .alt = {{"end", "toy.a.end", "toy.control.a.end"}}},
                 {.id = "toy.b",
                  .claim = "b holds",
                  .stat = "toy.b",
                  .stat_what = "b, decades",
                  .side = CLAIM_BELOW,
                  .threshold = 0,
                  .kind = RULE_INTERVAL,
                  .control = "toy.control.b",
                  .hypothesis = 1,
                  .paper_value = {.text = "'about 10^6'", .numeric = 1, .lo = 5, .hi = 7},
                  .alt = {{"end", "toy.b.end", NULL}},
                  .control_what = "b's own null",
                  .after_data = "b's own note"}}},
    {.experiment = "toy",
     .paper = "another sentence",
     .place = "Sec. 2",
     .depends = "something",
     .after_confirmation = "its threshold moved after the confirmation run",
     .reading = {{.id = "toy.c",
                  .claim = "c holds",
                  .stat = "toy.c",
                  .stat_what = "c",
                  .side = CLAIM_ABOVE,
                  .threshold = 1,
                  .kind = RULE_INTERVAL}}},
};
#define NTOY (int)(sizeof TOY / sizeof *TOY)

static claim_family fam[NTOY]; /* a copy to break */

static int check_toy(char *why, size_t size)
{
    claim_file file = {fam, NTOY};
    return claims_check(&file, 1, why, size);
}

/* The copy of TOY, with one thing broken by the caller, must fail the check naming `reason`. */
#define EXPECT_PROBLEM(breakage, reason)                                                                   \
    do {                                                                                                   \
        memcpy(fam, TOY, sizeof fam);                                                                      \
        breakage;                                                                                          \
        char why_[512];                                                                                    \
        int n_ = check_toy(why_, sizeof why_);                                                             \
        CHECK(n_ > 0 && strstr(why_, reason), "%.120s: %d problems, first '%.200s' (expected '%.120s')",     \
              #breakage, n_, why_, reason);                                                                \
    } while (0)

/* Every slot of a family filled: the compiler drops what an initialiser has beyond them. */
static void overfill_alternatives(claim_family *f)
{
    for (int k = 0; k < ALT_MAX; k++) f->alt[k] = (alternative){.choice = "c", .name = "n", .flags = "f", .why = "w"};
}

static void overfill_readings(claim_family *f)
{
    static const char *ids[READING_MAX] = {"toy.c1", "toy.c2", "toy.c3", "toy.c4", "toy.c5",
                                           "toy.c6", "toy.c7", "toy.c8", "toy.c9"};
    f->holm = "toy.c";
    for (int k = 0; k < READING_MAX; k++) f->reading[k] = TOY[1].reading[0], f->reading[k].id = ids[k];
}

static void test_check(void)
{
    char why[512];
    CHECK(claims_check_table(why, sizeof why) == 0 && !why[0], "the table passes its own check: %.300s", why);
    memcpy(fam, TOY, sizeof fam);
    CHECK(check_toy(why, sizeof why) == 0, "the toy table passes: %.300s", why);

    EXPECT_PROBLEM(fam[1].reading[0].id = "toy.a", "toy.a: the id is used twice");
    /* one name per experiment: the program's, for the ids and for every statistic */
    EXPECT_PROBLEM(fam[1].reading[0].id = "toys.c", "toys.c: the id toys.c is not toy.<what>");
    EXPECT_PROBLEM(fam[1].reading[0].id = "toy.", "toy.: the id toy. is not toy.<what>");
    EXPECT_PROBLEM(fam[1].reading[0].stat = "tox.c", "toy.c: statistic tox.c is not toy.<what>");
    EXPECT_PROBLEM(fam[0].reading[0].control = "other.control.a", "toy.a: control other.control.a is not toy.<what>");
    EXPECT_PROBLEM(fam[0].reading[0].alt[0].stat = "toy_a.end", "toy.a: statistic toy_a.end is not toy.<what>");
    EXPECT_PROBLEM((fam[0].alt[1].stat = "t.end", fam[0].reading[0].alt[0].alt = NULL,
                    fam[0].reading[1].alt[0].alt = NULL),
                   "toy.a: statistic t.end is not toy.<what>");
    EXPECT_PROBLEM(fam[1].experiment = NULL, "toy.c: its family needs the experiment");
    EXPECT_PROBLEM(fam[1].reading[0].id = NULL, "has no reading");
    EXPECT_PROBLEM(fam[0].holm = NULL, "toy.a: a family of 2 readings needs its Holm name");
    EXPECT_PROBLEM(fam[1].paper = NULL, "toy.c: its family needs the experiment, the paper's sentence and its place");
    EXPECT_PROBLEM(fam[1].place = "", "toy.c: its family needs the experiment, the paper's sentence and its place");
    EXPECT_PROBLEM(fam[0].alt[1] = fam[0].alt[0], "alternative long declared twice");
    EXPECT_PROBLEM(fam[0].alt[0].flags = NULL, "toy.a: alternative long has neither flags nor a statistic");
    EXPECT_PROBLEM(fam[0].reading[1].alt[0].stat = NULL, "toy.b: alternative end has neither flags nor a statistic");
    EXPECT_PROBLEM((fam[0].reading[0].alt[1] = (reading_alt){"nope", "toy.a.nope", NULL}),
                   "toy.a: alternative nope is not one of its family's");
    EXPECT_PROBLEM(fam[0].alt[0].why = NULL, "alternative long: its choice and why are required");
    EXPECT_PROBLEM((fam[1].reading[0].control = "toy.c", fam[1].control_what = "x"), "the control is the statistic");
    EXPECT_PROBLEM(fam[1].reading[0].control = "toy.control.c", "control toy.control.c needs its description");
    EXPECT_PROBLEM(fam[1].reading[0].control_what = "x", "toy.c: control_what without a control");
    EXPECT_PROBLEM(fam[1].reading[0].stat_what = NULL, "toy.c: the claim, its statistic and what");
    EXPECT_PROBLEM(fam[1].depends = NULL, "toy.c: depends is required");
    EXPECT_PROBLEM(fam[0].reading[0].threshold = 1.5, "toy.a: a share's threshold must lie in (0, 1)");
    EXPECT_PROBLEM(fam[0].reading[1].threshold = NAN, "toy.b: threshold nan is not finite");
    EXPECT_PROBLEM(fam[1].reading[0].kind = (rule_kind)7, "toy.c: rule kind 7 is none of RULE_*");
    EXPECT_PROBLEM(fam[1].reading[0].side = (claim_side)2, "toy.c: side 2 is none of CLAIM_*");
    EXPECT_PROBLEM((fam[0].alt[1].own_rule = 1, fam[0].alt[1].kind = RULE_SHARE, fam[0].alt[1].threshold = 2),
                   "end: a share's threshold must lie in (0, 1)");
    EXPECT_PROBLEM(fam[0].reading[1].paper_value.hi = 4,
                   "toy.b: the paper's number needs its words and finite lo <= hi");
    /* one alternative name is one set of flags within an experiment (its runs' folder) */
    EXPECT_PROBLEM((fam[1].alt[0] = (alternative){.choice = "horizon", .name = "long", .flags = "--steps 99",
                                                   .why = "x"}),
                   "alternative long of toy has other flags than");
    /* a family's slots: the last stays empty, so an overfull initialiser is caught here */
    EXPECT_PROBLEM(overfill_alternatives(&fam[1]), "toy.c: more than 5 alternatives in one family");
    EXPECT_PROBLEM(overfill_readings(&fam[1]), "toy.c1: more than 8 readings in one family");
}

static void test_resolve(void)
{
    claim_file file = {TOY, NTOY};
    CHECK(claims_resolve(&file, 1, NULL) == 3, "three readings");
    claim_rule r[3];
    claims_resolve(&file, 1, r);
    CHECK(!strcmp(r[0].id, "toy.a") && !strcmp(r[1].id, "toy.b") && !strcmp(r[2].id, "toy.c"), "in table order");
    /* a family's fields reach each of its readings */
    for (int i = 0; i < 2; i++)
        CHECK(!strcmp(r[i].experiment, "toy") && !strcmp(r[i].paper, "the paper's sentence") &&
                  !strcmp(r[i].place, "Sec. 1") && !strcmp(r[i].depends, "nothing") && !strcmp(r[i].family, "toy") &&
                  claim_alt_count(&r[i]) == 2,
              "%s carries its family's fields", r[i].id);
    CHECK(!strcmp(r[0].control_what, "the family's null") && !strcmp(r[0].after_data, "the family's note"),
          "toy.a: the family's control description and note");
    /* a reading's own fields win */
    CHECK(!strcmp(r[1].control_what, "b's own null") && !strcmp(r[1].after_data, "b's own note"),
          "toy.b: its own control description and note");
    CHECK(r[1].hypothesis && !r[0].hypothesis && r[1].paper_value.numeric && r[1].paper_value.lo == 5 &&
              r[1].paper_value.hi == 7 && !strcmp(r[1].paper_value.text, "'about 10^6'") && !r[0].paper_value.text,
          "toy.b: a hypothesis with the paper's number; toy.a neither");
    /* alternatives: the run is the family's; the statistic is the reading's own */
    const alternative *la = claim_alt(&r[0], "long"), *ea = claim_alt(&r[0], "end"), *eb = claim_alt(&r[1], "end");
    CHECK(la && !strcmp(la->flags, "--steps 9") && !la->stat && !la->control, "toy.a: the run alternative as declared");
    CHECK(ea && !strcmp(ea->stat, "toy.a.end") && !strcmp(ea->control, "toy.control.a.end"),
          "toy.a: its statistic and control under 'end'");
    CHECK(eb && !strcmp(eb->stat, "toy.b.end") && !eb->control, "toy.b: its statistic under 'end', its own control");
    /* a one-reading family without a Holm name is its own family; no control, no description */
    CHECK(!r[2].family && !r[2].control && !r[2].control_what && claim_alt_count(&r[2]) == 0 &&
              !strcmp(r[2].after_confirmation, "its threshold moved after the confirmation run") && !r[2].after_data,
          "toy.c: its own family, no control, changed after the confirmation run");
}

/* ---- the study's files: hypotheses apart, the paper's number, the C note ---- */
static char *slurp(const char *dir, const char *name)
{
    char *path = path_join(dir, name);
    FILE *f = fopen(path, "rb");
    free(path);
    if (!f) return NULL;
    char *buf = xcalloc(1 << 20, 1);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* One seed's run of the toy experiment: a held by 9 of 10 items, b well below 0, c above 1. */
static void toy_run(const char *runs, int seed)
{
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s/toy/seed%d", runs, seed);
    ensure_dir(dir);
    snprintf(path, sizeof path, "%s/stats.csv", dir);
    FILE *f = fopen(path, "w");
    fprintf(f, "name,value\ntoy.a,0.9\ntoy.a.count,9\ntoy.a.total,10\ntoy.control.a,0.1\ntoy.control.a.count,1\n"
               "toy.control.a.total,10\ntoy.a.end,0.9\ntoy.a.end.count,9\ntoy.a.end.total,10\n"
               "toy.control.a.end,0.2\ntoy.control.a.end.count,2\ntoy.control.a.end.total,10\n"
               "toy.b,%g\ntoy.control.b,%g\ntoy.b.end,%g\ntoy.c,%g\n",
            -3.0 - 0.1 * seed, 2.0 + 0.1 * seed, -2.0 - 0.1 * seed, 5.0 + 0.2 * seed);
    fclose(f);
    snprintf(path, sizeof path, "%s/run.txt", dir);
    f = fopen(path, "w");
    fprintf(f, "command: build/bin/toy --seed %d --data-seed %d --out %s --quiet\nseed: %d\ngit commit: abc123\n"
               "started: 2026-11-26T00:00:00+0000\nwall seconds: 1.000\nfile: stats.csv\n",
            seed, seed, dir, seed);
    fclose(f);
}

static void test_report(void)
{
    char tmpl[] = "/tmp/test_claims.XXXXXX";
    char *tmp = mkdtemp(tmpl);
    CHECK(tmp != NULL, "a temporary folder");
    if (!tmp) return;
    char runs[256], out[256];
    snprintf(runs, sizeof runs, "%s/runs", tmp);
    snprintf(out, sizeof out, "%s/out", tmp);
    for (int s = 1; s <= 5; s++) toy_run(runs, s);
    claim_file file = {TOY, NTOY};
    claim_rule r[3];
    claims_resolve(&file, 1, r);
    claim_study st = {.runs = runs, .scale = "quick", .alpha = 0.05, .seeds = {5, {1, 2, 3, 4, 5}}};
    core_quiet = 1;
    study_run(&st, r, 3, NULL, 0);
    CHECK(st.n == 3 && st.claim[0].main.v == VERDICT_PASS && st.claim[1].main.v == VERDICT_PASS &&
              st.claim[2].main.v == VERDICT_PASS,
          "the toy claims PASS (%s %s %s)", verdict_name(st.claim[0].main.v), verdict_name(st.claim[1].main.v),
          verdict_name(st.claim[2].main.v));
    ensure_dir(out);
    study_write(out, &st, NULL);
    study_free(&st);
    char *sum = slurp(out, "summary.md"), *md = slurp(out, "verdicts.md"), *csv = slurp(out, "verdicts.csv");
    CHECK(sum && md && csv, "the study's files are written");
    if (sum && md && csv) {
        /* the headline counts the paper's two claims; the hypothesis is counted apart */
        CHECK(strstr(sum, "2 claims at quick scale") && strstr(sum, "**2 PASS**"), "the headline counts 2 claims");
        CHECK(strstr(sum, "1 more are the toolkit's own hypotheses"), "the hypothesis is counted apart");
        const char *apart = strstr(sum, "The toolkit's own hypotheses (not the paper's claims");
        const char *row_b = strstr(sum, "| `toy.b`"), *row_c = strstr(sum, "| `toy.c`");
        CHECK(apart && row_b && row_c && row_c < apart && row_b > apart, "summary.md: toy.b in its own table, after");
        CHECK(strstr(sum, "| C |") && strstr(sum, "C changed after the confirmation run"), "toy.c's C note, explained");
        CHECK(strstr(sum, "; the paper: 'about 10^6'"), "the paper's words beside ours in the table");
        const char *h = strstr(md, "## The toolkit's own hypotheses"), *mb = strstr(md, "## toy.b"),
                   *mc = strstr(md, "## toy.c");
        CHECK(h && mb && mc && mc < h && mb > h, "verdicts.md: toy.b's evidence apart, after the paper's");
        CHECK(strstr(md, "- The paper's own number: 'about 10^6' (5 to 7 on the statistic's scale); measured: -3.3."),
              "verdicts.md: the paper's number beside the measured mean");
        CHECK(strstr(md, "- Changed after the confirmation run: its threshold moved after the confirmation run."),
              "verdicts.md: the change after the confirmation run");
        CHECK(strstr(csv, ",hypothesis,paper_lo,paper_hi,seeds_to_decide\n") && strstr(csv, ",1,5,7,") &&
                  strstr(csv, ",0,nan,nan,"),
              "verdicts.csv: the hypothesis flag, the paper's number, the seeds to decide");
    }
    free(sum), free(md), free(csv);
    CHECK(remove_tree(tmp) == 0, "cleaned up %s", tmp);
}

int main(void)
{
    test_check();
    test_resolve();
    test_report();
    return check_summary();
}
