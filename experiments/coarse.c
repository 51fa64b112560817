/* coarse — does a partition coarser than Algorithm 3 hurt Adam-mini? (paper Sec. 2.3 and
 * App. "Hessian structure and partition principle": "naive or default partitions ... would
 * cause training instability"; "if the partition is too coarse and violates Principle 1,
 * we might accidentally remove some crucial learning rates ... causing training failure").
 *
 * Adam-mini on a tiny Transformer (quick: 2 layers, paper: 4; V 8, C 16, 4 heads, M 32,
 * T 8, no biases, weight decay 0) with five partitions (harness/coarse_util.h):
 *   alg3          the paper's Algorithm 3 (value by output neurons), the reference;
 *   alg2          one block per tensor (PyTorch's default partition, Algorithm 2);
 *   whole         one block for the whole model;
 *   merged_heads  Algorithm 3 with query and key one block per tensor, not per head;
 *   random        Algorithm 3's block sizes in a random order laid over [0, P).
 * Each partition gets its own learning-rate search (the lowest mean training loss over the
 * last 10% of steps on a grid that extends at its edges), then runs at 2x and 4x its best
 * learning rate. Per run: the final held-out loss, whether it diverged, and its loss spikes
 * (steps whose training loss exceeds 1.5x the running minimum of the earlier steps).
 *
 * Compared as the capped share of Algorithm 3's progress a run loses,
 * s = min(1, (L − L_alg3)/(L_0 − L_alg3)), L_alg3 Algorithm 3 at its best lr (a diverged
 * run: s = 1). The claims' statistic for a partition p is min over x ∈ {1, 2} of
 * s(p, x·lr_p) − s(alg3, x·lr_alg3): how much more p loses than Algorithm 3 at its own best
 * learning rate and at twice it; the control is Algorithm 3 itself with another batch order
 * in p's place (docs/coarse.md). A diverged run is its method's worst outcome, s = 1 (the
 * cap: all of Algorithm 3's progress lost), so no statistic is NaN or infinite because of a
 * divergence; coarse.diverged counts the final runs (every cell and the control's) that
 * diverged, a partition whose whole search diverged counting as diverged at 1x, 2x and 4x.
 *
 * Biases are off and weight decay is 0 because the optimizer decides weight decay and
 * Adam's per-entry v of biases by the tensor a block starts in: a block that spans several
 * tensors (whole, random) would otherwise also change those, and the block layout would not
 * be the only thing that differs between the partitions.
 */
#include "core/core.h"
#include "core/model.h"
#include "harness/coarse_util.h"
#include "harness/lr_grid.h"
#include "harness/seeds.h"
#include "harness/ttexp.h"
#include "optim/optim.h"
#include "verdict/verdict.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { P_ALG3, P_ALG2, P_WHOLE, P_MERGED, P_RANDOM, NPART };
static const char *NAMES[NPART] = {"alg3", "alg2", "whole", "merged_heads", "random"};
static const char *LABELS[NPART] = {"Algorithm 3", "Algorithm 2 (one block per tensor)", "one block (whole model)",
                                    "Algorithm 3, query/key merged", "random layout of Algorithm 3's sizes"};
#define NMULT 3
static const double MULTS[NMULT] = {1, 2, 4};
/* the claims' multipliers: the best lr and twice it */
#define NCLAIM_MULT 2

typedef struct {
    const ttexp_record *rec; /* NULL: not run (every lr of the partition's search diverged) */
    double lr, share;
    int diverged;
    long spikes;
} run_cell;

/* The runs: every partition's search, then 2x and 4x each best lr and the control
 * (Algorithm 3 with another batch order at 1x and 2x its best lr). */
typedef struct {
    ttexp_search grids[NPART];
    int at_bound;                                  /* searches that did not end interior */
    ttexp_job jobs[NPART * (NMULT - 1) + NCLAIM_MULT];
    int njobs;
    int at[NPART][NMULT];                          /* job of partition p at multiple x >= 1; -1: not run */
    int ctrl0;                                     /* the control's first job */
} runs;

/* Every run judged against Algorithm 3 at its best lr. */
typedef struct {
    double L0, L_ref;                              /* held-out loss at the start; Algorithm 3's at the end */
    run_cell cells[NPART][NMULT], ctrl[NCLAIM_MULT];
    double hurt[NPART], control;                   /* min over 1x and 2x of s(p) - s(alg3); the control's */
    int diverged;                                  /* cells and control runs that diverged */
} judged;

/* ---- set up ------------------------------------------------------------------------------------ */

static void parse_args(ttexp_args *a, int *layers, int argc, char **argv)
{
    *a = (ttexp_args)TTEXP_ARGS("results/coarse");
    *layers = 0;
    const cli_opt opts[] = {
        TTEXP_OPTS(*a, "quick (2 layers, 200 steps, 4-point first grids) or paper (4 layers, 1000 steps, 7 points)",
                   "points of each partition's first learning-rate grid, 2..50 (0: from --scale)"),
        {"layers", OPT_INT, layers, "Transformer layers, 1..12 (0: from --scale: 2 quick, 4 paper)"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Adam-mini with partitions coarser than (or misaligned with) the paper's Algorithm 3: Algorithm 2\n"
              "(one block per tensor), one block for the whole model, Algorithm 3 with query/key merged, and\n"
              "Algorithm 3's block sizes in a random order laid over [0, P) (seeded from --seed, its draws stream),\n"
              "against Algorithm 3 itself, on a tiny Transformer (V 8, C 16, 4 heads, M 32, T 8, no biases,\n"
              "batch 64; 2 layers at quick scale, 4 at paper scale), weight decay 0, beta (0.9, 0.999), eps\n"
              "1e-8, 5% warmup then cosine to 10%. Each partition: its own learning-rate search (log grid,\n"
              "first [1e-3, 1e-1], extended at its edges; lowest training loss over the last 10% wins), then\n"
              "2x and 4x its best lr. Per run (runs.csv): final loss on the held-out sequences, diverged or not,\n"
              "loss spikes (steps whose training loss exceeds 1.5x the running minimum of the earlier steps),\n"
              "and s = min(1, (L - L_alg3)/(L_0 - L_alg3)), the share of Algorithm 3's progress lost (1 if\n"
              "diverged). Claims (stats.csv, make verdicts): min over 1x and 2x of s(p) - s(alg3) for p = whole\n"
              "and alg2; control: Algorithm 3 with another batch order (docs/coarse.md).",
              opts, sizeof opts / sizeof *opts);
    ttexp_args_finish(a, 200, 1000, 4, 7, 50);
}

static void partitions_of(partition **parts, const model *m, long seed)
{
    parts[P_ALG3] = partition_alg3(m, 0);
    parts[P_ALG2] = partition_alg2(m);
    parts[P_WHOLE] = partition_whole(m);
    parts[P_MERGED] = partition_merged_heads(m);
    gsl_rng *draws = rng_new(seed_for((unsigned long)seed, SEED_DRAWS));
    parts[P_RANDOM] = partition_random_layout(parts[P_ALG3], m->P, draws);
    rng_free(draws);
}

/* ---- run --------------------------------------------------------------------------------------- */

/* Every partition's learning-rate search (grid.csv). */
static void search_all(runs *r, ttexp *e, const ttexp_schedule *sc, const ttexp_args *a, partition *const *parts)
{
    r->at_bound = 0;
    outfile *f = ttexp_grid_open(a->out);
    for (int p = 0; p < NPART; p++) {
        ttexp_method mt = ttexp_method_of(NAMES[p], OPTIM_ADAM_MINI, parts[p], 0);
        mt.cfg.weight_decay = 0;
        ttexp_search_run(&r->grids[p], NAMES[p], e->s, sc, &mt, lr_range_of(LR_ADAM_MINI), a->grid, NULL, NULL,
                         a->threads);
        ttexp_write_search(f, &r->grids[p]);
        r->at_bound += ttexp_search_at_bound(&r->grids[p]);
    }
    csv_close(f);
    if (r->grids[P_ALG3].best < 0)
        die_diverged("Algorithm 3 (the reference) diverged at every learning rate of its grid");
}

/* A job: the best method of a search at `mult` times its lr, on batch order `offset`. */
static ttexp_job *add_job(runs *r, const ttexp_search *g, double mult, unsigned long offset,
                         const ttexp_schedule *sc, size_t P)
{
    ttexp_job *j = &r->jobs[r->njobs++];
    *j = (ttexp_job){.method = ttexp_search_best(g)->method};
    j->method.lr *= mult;
    j->method.batch_offset = offset;
    ttexp_record_alloc(&j->rec, sc, P, 0);
    return j;
}

/* 2x and 4x every partition's best lr, and the control: Algorithm 3 with another batch order at 1x and 2x. */
static void run_multiples(runs *r, ttexp *e, const ttexp_schedule *sc, const ttexp_args *a)
{
    r->njobs = 0;
    for (int p = 0; p < NPART; p++)
        for (int x = 1; x < NMULT; x++) {
            r->at[p][x] = -1;
            if (r->grids[p].best < 0) continue;
            r->at[p][x] = r->njobs;
            add_job(r, &r->grids[p], MULTS[x], 0, sc, e->m->P);
        }
    r->ctrl0 = r->njobs;
    for (int x = 0; x < NCLAIM_MULT; x++) add_job(r, &r->grids[P_ALG3], MULTS[x], 1, sc, e->m->P);
    ttexp_run_jobs(e->s, sc, r->jobs, r->njobs, a->threads, "multiples of the best lr");
}

static void runs_free(runs *r)
{
    for (int j = 0; j < r->njobs; j++) ttexp_record_free(&r->jobs[j].rec);
    for (int p = 0; p < NPART; p++) ttexp_search_free(&r->grids[p]);
}

/* ---- judge ------------------------------------------------------------------------------------- */

static run_cell cell_of(const ttexp_record *rec, double lr, long steps, double L_ref, double L0)
{
    run_cell c = {.rec = rec, .lr = lr, .share = 1, .diverged = 1, .spikes = 0};
    if (!rec) return c;
    c.diverged = rec->steps_done < steps || !isfinite(rec->final_eval);
    c.share = capped_loss_share(rec->final_eval, L_ref, L0);
    c.spikes = count_spikes(rec->train_loss, rec->steps_done, COARSE_SPIKE_FACTOR);
    return c;
}

/* min over the claims' multipliers of s(p) − s(alg3) */
static double hurt_of(const run_cell *p, const run_cell *ref)
{
    double h = INFINITY;
    for (int x = 0; x < NCLAIM_MULT; x++) h = fmin(h, p[x].share - ref[x].share);
    return h;
}

static judged judge(const runs *r, const ttexp_schedule *sc)
{
    judged J;
    const ttexp_record *ref = &ttexp_search_best(&r->grids[P_ALG3])->rec;
    J.L0 = ref->eval_loss[0], J.L_ref = ref->final_eval;
    if (!(J.L0 > J.L_ref))
        die_diverged("Algorithm 3 at its best lr made no progress (held-out %.4f from %.4f)", J.L_ref, J.L0);
    for (int p = 0; p < NPART; p++) {
        const ttexp_search *g = &r->grids[p];
        double lr = g->best >= 0 ? ttexp_search_value(g) : NAN;
        for (int x = 0; x < NMULT; x++) {
            const ttexp_record *rec = g->best < 0 ? NULL : x == 0 ? &ttexp_search_best(g)->rec : &r->jobs[r->at[p][x]].rec;
            J.cells[p][x] = cell_of(rec, lr * MULTS[x], sc->steps, J.L_ref, J.L0);
        }
    }
    for (int x = 0; x < NCLAIM_MULT; x++)
        J.ctrl[x] = cell_of(&r->jobs[r->ctrl0 + x].rec, J.cells[P_ALG3][x].lr, sc->steps, J.L_ref, J.L0);
    J.control = hurt_of(J.ctrl, J.cells[P_ALG3]);
    for (int p = 0; p < NPART; p++) J.hurt[p] = hurt_of(J.cells[p], J.cells[P_ALG3]);
    J.diverged = 0;
    for (int p = 0; p < NPART; p++)
        for (int x = 0; x < NMULT; x++) J.diverged += J.cells[p][x].diverged;
    for (int x = 0; x < NCLAIM_MULT; x++) J.diverged += J.ctrl[x].diverged;
    return J;
}

/* ---- write ------------------------------------------------------------------------------------- */

static void write_runs(const char *out, const judged *J, partition *const *parts)
{
    outfile *f = csv_open_in(out, "runs.csv", "partition,mult,lr,final_eval,share,diverged,spikes,steps_done,blocks");
    for (int p = 0; p < NPART; p++)
        for (int x = 0; x < NMULT; x++) {
            const run_cell *c = &J->cells[p][x];
            csv_row(f, "%s,%g,%.6g,%.10g,%.10g,%d,%ld,%ld,%d", NAMES[p], MULTS[x], c->lr,
                    c->rec ? c->rec->final_eval : INFINITY, c->share, c->diverged, c->spikes,
                    c->rec ? c->rec->steps_done : 0L, parts[p]->nblocks);
        }
    for (int x = 0; x < NCLAIM_MULT; x++) {
        const run_cell *c = &J->ctrl[x];
        csv_row(f, "alg3_other_batches,%g,%.6g,%.10g,%.10g,%d,%ld,%ld,%d", MULTS[x], c->lr, c->rec->final_eval,
                c->share, c->diverged, c->spikes, c->rec->steps_done, parts[P_ALG3]->nblocks);
    }
    csv_close(f);
}

/* eval.csv and train.csv: every run of every partition that ran. */
static void write_curves(const char *out, const judged *J, const ttexp_schedule *sc)
{
    const ttexp_record *recs[NPART * NMULT];
    char names[NPART * NMULT][40];
    const char *cols[NPART * NMULT];
    int n = 0;
    for (int p = 0; p < NPART; p++)
        for (int x = 0; x < NMULT; x++)
            if (J->cells[p][x].rec) {
                snprintf(names[n], sizeof names[n], "%s_x%g", NAMES[p], MULTS[x]);
                cols[n] = names[n];
                recs[n++] = J->cells[p][x].rec;
            }
    char *path = path_join(out, "eval.csv");
    ttexp_write_curves(path, cols, recs, n, sc, 1);
    free(path);
    path = path_join(out, "train.csv");
    ttexp_write_curves(path, cols, recs, n, sc, 0);
    free(path);
}

static void write_stats(const char *out, const judged *J, partition *const *parts, int layers, int at_bound)
{
    outfile *st = stats_open(out);
    stats_put(st, "coarse.whole_hurt", J->hurt[P_WHOLE]);
    stats_put(st, "coarse.alg2_hurt", J->hurt[P_ALG2]);
    stats_put(st, "coarse.control.alg3_other_batches_hurt", J->control);
    stats_put(st, "coarse.merged_heads_hurt", J->hurt[P_MERGED]);
    stats_put(st, "coarse.random_hurt", J->hurt[P_RANDOM]);
    /* each multiplier alone (coarse.whole_unstable judges 2x; added after seeing seeds 1-4, docs/verdicts.md) */
    for (int p = 0; p < NPART; p++)
        for (int x = 0; x < NMULT; x++)
            stats_putf(st, J->cells[p][x].share - J->cells[P_ALG3][x].share, "coarse.%s_hurt.x%g", NAMES[p], MULTS[x]);
    for (int x = 0; x < NCLAIM_MULT; x++)
        stats_putf(st, J->ctrl[x].share - J->cells[P_ALG3][x].share, "coarse.control.alg3_other_batches_hurt.x%g",
                   MULTS[x]);
    for (int p = 0; p < NPART; p++) {
        stats_putf(st, J->cells[p][0].lr, "coarse.lr.%s", NAMES[p]);
        stats_putf(st, parts[p]->nblocks, "coarse.blocks.%s", NAMES[p]);
        for (int x = 0; x < NMULT; x++) {
            stats_putf(st, J->cells[p][x].share, "coarse.share.%s.x%g", NAMES[p], MULTS[x]);
            stats_putf(st, J->cells[p][x].diverged, "coarse.diverged.%s.x%g", NAMES[p], MULTS[x]);
            stats_putf(st, (double)J->cells[p][x].spikes, "coarse.spikes.%s.x%g", NAMES[p], MULTS[x]);
        }
    }
    stats_put(st, "coarse.layers", layers);
    stats_put(st, "coarse.grids_at_bound", at_bound);
    stats_put(st, "coarse.diverged", J->diverged);
    csv_close(st);
}

/* One run's line in claims.txt: "x<m>: <loss> s <share> <spikes>[ DIVERGED]". */
static void print_cell(FILE *c, double mult, const run_cell *r)
{
    fprintf(c, "  x%g: %.4f s %+.3f %ld%s", mult, r->rec ? r->rec->final_eval : INFINITY, r->share, r->spikes,
            r->diverged ? " DIVERGED" : "");
}

static void write_claims(ttexp *e, const ttexp_args *a, int layers, const runs *r, const judged *J,
                         partition *const *parts)
{
    outfile *f = outfile_open_in(a->out, "claims.txt");
    FILE *c = outfile_fp(f);
    fprintf(c, "coarse: Adam-mini on the %d-layer Transformer (no biases, weight decay 0), P = %zu, %ld steps, seed %ld; "
               "held-out loss at the start %.4f, entropy floor %.4f\n", layers, e->m->P, a->steps, a->seed, J->L0,
            ttexp_optimal_loss(e));
    fprintf(c, "learning-rate searches (%d of %d not interior):\n", r->at_bound, NPART);
    for (int p = 0; p < NPART; p++) ttexp_print_search(c, &r->grids[p]);
    fprintf(c, "per partition (blocks) and multiple of its best lr: held-out loss, s = share of Algorithm 3's progress "
               "lost (capped at 1), spikes (> %.1fx running min), diverged:\n", COARSE_SPIKE_FACTOR);
    for (int p = 0; p < NPART; p++) {
        fprintf(c, "  %-38s (%4d)", LABELS[p], parts[p]->nblocks);
        for (int x = 0; x < NMULT; x++) print_cell(c, MULTS[x], &J->cells[p][x]);
        fprintf(c, "\n");
    }
    fprintf(c, "  %-45s", "Algorithm 3, another batch order (control)");
    for (int x = 0; x < NCLAIM_MULT; x++) print_cell(c, MULTS[x], &J->ctrl[x]);
    fprintf(c, "\nmin over 1x and 2x of s(p) - s(alg3): whole %+.4f, alg2 %+.4f, merged heads %+.4f, random %+.4f; "
               "control %+.4f\n", J->hurt[P_WHOLE], J->hurt[P_ALG2], J->hurt[P_MERGED], J->hurt[P_RANDOM], J->control);
    ttexp_print_claim(c, "coarse.whole_hurts", J->hurt[P_WHOLE], J->control);
    ttexp_print_claim(c, "coarse.alg2_hurts", J->hurt[P_ALG2], J->control);
    ttexp_print_claim(c, "coarse.whole_unstable", J->cells[P_WHOLE][1].share - J->cells[P_ALG3][1].share,
                      J->ctrl[1].share - J->cells[P_ALG3][1].share);
    outfile_commit_echo(f);
}

int main(int argc, char **argv)
{
    ttexp_args a;
    int layers;
    parse_args(&a, &layers, argc, argv);
    ttexp e;
    ttexp_schedule sc = ttexp_begin(&e, ttexp_layered_setup(&a, &layers), &a);
    partition *parts[NPART];
    partitions_of(parts, e.m, a.seed);

    runs r;
    search_all(&r, &e, &sc, &a, parts);
    run_multiples(&r, &e, &sc, &a);
    judged J = judge(&r, &sc);

    write_runs(a.out, &J, parts);
    write_curves(a.out, &J, &sc);
    ttexp_write_reference(&e, a.out);
    write_stats(a.out, &J, parts, layers, r.at_bound);
    write_claims(&e, &a, layers, &r, &J, parts);
    run_write_info(a.out, (unsigned long)a.seed);

    runs_free(&r);
    for (int p = 0; p < NPART; p++) partition_free(parts[p]);
    ttexp_close(&e);
    return 0;
}
