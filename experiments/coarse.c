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
 * in p's place (docs/coarse.md).
 *
 * Biases are off and weight decay is 0 because the optimizer decides weight decay and
 * Adam's per-entry v of biases by the tensor a block starts in: a block that spans several
 * tensors (whole, random) would otherwise also change those, and the block layout would not
 * be the only thing that differs between the partitions.
 */
#include "harness/coarse_util.h"
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

static run_cell cell_of(const ttexp_record *rec, double lr, long steps, double L_ref, double L0)
{
    run_cell c = {rec, lr, 1, 1, 0};
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

int main(int argc, char **argv)
{
    ttexp_args a = TTEXP_ARGS("results/coarse");
    int layers = 0;
    const cli_opt opts[] = {
        TTEXP_OPTS(a, "quick (2 layers, 200 steps, 4-point first grids) or paper (4 layers, 1000 steps, 7 points)",
                   "points of each partition's first learning-rate grid, 2..50 (0: from --scale)"),
        {"layers", OPT_INT, &layers, "Transformer layers, 1..12 (0: from --scale: 2 quick, 4 paper)"},
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
    ttexp_args_finish(&a, 200, 1000, 4, 7, 50);
    ttexp e;
    ttexp_schedule sc = ttexp_begin(&e, ttexp_layered_setup(&a, &layers), &a);
    model *m = e.m;

    partition *parts[NPART];
    parts[P_ALG3] = partition_alg3(m, 0);
    parts[P_ALG2] = partition_alg2(m);
    parts[P_WHOLE] = partition_whole(m);
    parts[P_MERGED] = partition_merged_heads(m);
    gsl_rng *draws = rng_new(seed_for((unsigned long)a.seed, SEED_DRAWS));
    parts[P_RANDOM] = partition_random_layout(parts[P_ALG3], m->P, draws);
    rng_free(draws);

    /* every partition's learning-rate search */
    ttexp_search grids[NPART];
    int at_bound = 0;
    outfile *f = ttexp_grid_open(a.out);
    for (int p = 0; p < NPART; p++) {
        ttexp_method mt = ttexp_method_of(NAMES[p], OPTIM_ADAM_MINI, parts[p], 0);
        mt.cfg.weight_decay = 0;
        ttexp_search_run(&grids[p], NAMES[p], e.s, &sc, &mt, lr_range_of(LR_ADAM_MINI), a.grid, NULL, NULL,
                         a.threads);
        ttexp_write_search(f, &grids[p]);
        at_bound += ttexp_search_at_bound(&grids[p]);
    }
    csv_close(f);
    if (grids[P_ALG3].best < 0) die_diverged("Algorithm 3 (the reference) diverged at every learning rate of its grid");

    /* 2x and 4x every partition's best lr, and the control: Algorithm 3 with another batch order at 1x and 2x */
    ttexp_job jobs[NPART * (NMULT - 1) + NCLAIM_MULT];
    int at[NPART][NMULT], njobs = 0;
    for (int p = 0; p < NPART; p++)
        for (int x = 1; x < NMULT; x++) {
            at[p][x] = -1;
            if (grids[p].best < 0) continue;
            ttexp_job *j = &jobs[njobs];
            *j = (ttexp_job){ttexp_search_best(&grids[p])->method, {0}, NULL};
            j->method.lr *= MULTS[x];
            ttexp_record_alloc(&j->rec, &sc, m->P, 0);
            at[p][x] = njobs++;
        }
    int ctrl0 = njobs;
    for (int x = 0; x < NCLAIM_MULT; x++) {
        ttexp_job *j = &jobs[njobs++];
        *j = (ttexp_job){ttexp_search_best(&grids[P_ALG3])->method, {0}, NULL};
        j->method.lr *= MULTS[x];
        j->method.batch_offset = 1;
        ttexp_record_alloc(&j->rec, &sc, m->P, 0);
    }
    ttexp_run_jobs(e.s, &sc, jobs, njobs, a.threads, "multiples of the best lr");

    const ttexp_record *ref = &ttexp_search_best(&grids[P_ALG3])->rec;
    double L0 = ref->eval_loss[0], L_ref = ref->final_eval;
    if (!(L0 > L_ref)) die_diverged("Algorithm 3 at its best lr made no progress (held-out %.4f from %.4f)", L_ref, L0);
    run_cell cells[NPART][NMULT], ctrl[NCLAIM_MULT];
    for (int p = 0; p < NPART; p++) {
        double lr = grids[p].best >= 0 ? ttexp_search_value(&grids[p]) : NAN;
        for (int x = 0; x < NMULT; x++) {
            const ttexp_record *r = grids[p].best < 0 ? NULL : x == 0 ? &ttexp_search_best(&grids[p])->rec
                                                                      : &jobs[at[p][x]].rec;
            cells[p][x] = cell_of(r, lr * MULTS[x], sc.steps, L_ref, L0);
        }
    }
    for (int x = 0; x < NCLAIM_MULT; x++)
        ctrl[x] = cell_of(&jobs[ctrl0 + x].rec, cells[P_ALG3][x].lr, sc.steps, L_ref, L0);

    /* runs.csv, curves */
    f = csv_open_in(a.out, "runs.csv", "partition,mult,lr,final_eval,share,diverged,spikes,steps_done,blocks");
    for (int p = 0; p < NPART; p++)
        for (int x = 0; x < NMULT; x++) {
            const run_cell *c = &cells[p][x];
            csv_row(f, "%s,%g,%.6g,%.10g,%.10g,%d,%ld,%ld,%d", NAMES[p], MULTS[x], c->lr,
                    c->rec ? c->rec->final_eval : INFINITY, c->share, c->diverged, c->spikes,
                    c->rec ? c->rec->steps_done : 0L, parts[p]->nblocks);
        }
    for (int x = 0; x < NCLAIM_MULT; x++)
        csv_row(f, "alg3_other_batches,%g,%.6g,%.10g,%.10g,%d,%ld,%ld,%d", MULTS[x], ctrl[x].lr, ctrl[x].rec->final_eval,
                ctrl[x].share, ctrl[x].diverged, ctrl[x].spikes, ctrl[x].rec->steps_done, parts[P_ALG3]->nblocks);
    csv_close(f);
    {
        const ttexp_record *recs[NPART * NMULT];
        char names[NPART * NMULT][40];
        const char *cols[NPART * NMULT];
        int n = 0;
        for (int p = 0; p < NPART; p++)
            for (int x = 0; x < NMULT; x++)
                if (cells[p][x].rec) {
                    snprintf(names[n], sizeof names[n], "%s_x%g", NAMES[p], MULTS[x]);
                    cols[n] = names[n];
                    recs[n++] = cells[p][x].rec;
                }
        char *path = path_join(a.out, "eval.csv");
        ttexp_write_curves(path, cols, recs, n, &sc, 1);
        free(path);
        path = path_join(a.out, "train.csv");
        ttexp_write_curves(path, cols, recs, n, &sc, 0);
        free(path);
    }
    ttexp_write_reference(&e, a.out);

    /* statistics */
    double hurt[NPART], control = hurt_of(ctrl, cells[P_ALG3]);
    for (int p = 0; p < NPART; p++) hurt[p] = hurt_of(cells[p], cells[P_ALG3]);
    outfile *st = stats_open(a.out);
    stats_put(st, "coarse.whole_hurt", hurt[P_WHOLE]);
    stats_put(st, "coarse.alg2_hurt", hurt[P_ALG2]);
    stats_put(st, "coarse.control.alg3_other_batches_hurt", control);
    stats_put(st, "coarse.merged_heads_hurt", hurt[P_MERGED]);
    stats_put(st, "coarse.random_hurt", hurt[P_RANDOM]);
    /* each multiplier alone (coarse.whole_unstable judges 2x; added after seeing seeds 1-4, docs/verdicts.md) */
    for (int p = 0; p < NPART; p++)
        for (int x = 0; x < NMULT; x++)
            stats_putf(st, cells[p][x].share - cells[P_ALG3][x].share, "coarse.%s_hurt.x%g", NAMES[p], MULTS[x]);
    for (int x = 0; x < NCLAIM_MULT; x++)
        stats_putf(st, ctrl[x].share - cells[P_ALG3][x].share, "coarse.control.alg3_other_batches_hurt.x%g", MULTS[x]);
    for (int p = 0; p < NPART; p++) {
        stats_putf(st, cells[p][0].lr, "coarse.lr.%s", NAMES[p]);
        stats_putf(st, parts[p]->nblocks, "coarse.blocks.%s", NAMES[p]);
        for (int x = 0; x < NMULT; x++) {
            stats_putf(st, cells[p][x].share, "coarse.share.%s.x%g", NAMES[p], MULTS[x]);
            stats_putf(st, cells[p][x].diverged, "coarse.diverged.%s.x%g", NAMES[p], MULTS[x]);
            stats_putf(st, (double)cells[p][x].spikes, "coarse.spikes.%s.x%g", NAMES[p], MULTS[x]);
        }
    }
    stats_put(st, "coarse.layers", layers);
    stats_put(st, "coarse.grids_at_bound", at_bound);
    csv_close(st);

    char *path = path_join(a.out, "claims.txt");
    f = outfile_open(path);
    FILE *c = outfile_fp(f);
    fprintf(c, "coarse: Adam-mini on the %d-layer Transformer (no biases, weight decay 0), P = %zu, %ld steps, seed %ld; "
               "held-out loss at the start %.4f, entropy floor %.4f\n", layers, m->P, a.steps, a.seed, L0,
            ttexp_optimal_loss(&e));
    fprintf(c, "learning-rate searches (%d of %d not interior):\n", at_bound, NPART);
    for (int p = 0; p < NPART; p++) ttexp_print_search(c, &grids[p]);
    fprintf(c, "per partition (blocks) and multiple of its best lr: held-out loss, s = share of Algorithm 3's progress "
               "lost (capped at 1), spikes (> %.1fx running min), diverged:\n", COARSE_SPIKE_FACTOR);
    for (int p = 0; p < NPART; p++) {
        fprintf(c, "  %-38s (%4d)", LABELS[p], parts[p]->nblocks);
        for (int x = 0; x < NMULT; x++) {
            const run_cell *r = &cells[p][x];
            fprintf(c, "  x%g: %.4f s %+.3f %ld%s", MULTS[x], r->rec ? r->rec->final_eval : INFINITY, r->share,
                    r->spikes, r->diverged ? " DIVERGED" : "");
        }
        fprintf(c, "\n");
    }
    fprintf(c, "  %-45s", "Algorithm 3, another batch order (control)");
    for (int x = 0; x < NCLAIM_MULT; x++)
        fprintf(c, "  x%g: %.4f s %+.3f %ld%s", MULTS[x], ctrl[x].rec->final_eval, ctrl[x].share, ctrl[x].spikes,
                ctrl[x].diverged ? " DIVERGED" : "");
    fprintf(c, "\nmin over 1x and 2x of s(p) - s(alg3): whole %+.4f, alg2 %+.4f, merged heads %+.4f, random %+.4f; "
               "control %+.4f\n", hurt[P_WHOLE], hurt[P_ALG2], hurt[P_MERGED], hurt[P_RANDOM], control);
    ttexp_print_claim(c, "coarse.whole_hurts", hurt[P_WHOLE], control);
    ttexp_print_claim(c, "coarse.alg2_hurts", hurt[P_ALG2], control);
    ttexp_print_claim(c, "coarse.whole_unstable", cells[P_WHOLE][1].share - cells[P_ALG3][1].share,
                      ctrl[1].share - cells[P_ALG3][1].share);
    outfile_commit(f);
    echo_file(path);
    free(path);
    run_write_info(a.out, (unsigned long)a.seed);

    for (int j = 0; j < njobs; j++) ttexp_record_free(&jobs[j].rec);
    for (int p = 0; p < NPART; p++) {
        ttexp_search_free(&grids[p]);
        partition_free(parts[p]);
    }
    ttexp_close(&e);
    return 0;
}
