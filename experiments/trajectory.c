/* trajectory — how far the weights of Adam-mini, the memory-efficient optimizers
 * Adafactor and SM3, and GD stay from AdamW's along training (paper Sec. 4, "Adam-mini
 * generates similar trajectories to that of AdamW, while other methods cannot"; the
 * appendix launches "AdamW, Adam-mini, and other memory-efficient optimizers under
 * the same random seed and same learning rate 1e-5").
 *
 * The paper's setup: every optimizer from the same initialisation, on the same batches,
 * at one shared small peak learning rate (1e-3: the low end of AdamW's grid, about 1/30
 * of AdamW's best here, as 1e-5 is about 1/30 of the usual 3e-4). Distances are
 * normalised so that runs that moved in unrelated directions sit at 1:
 *     d_X(t) = ‖w_X(t) − w_A(t)‖ / √(‖w_X(t) − w_0‖² + ‖w_A(t) − w_0‖²),
 * d² = 1 − cos θ · 2ab/(a² + b²) with a, b the two displacements from w_0 and θ their
 * angle: 0 for the same weights, 1 for orthogonal displacements or for a run that did
 * not move (GD at this lr), up to √2 for opposite ones. AdamW again with another batch
 * order shows what batch noise alone does.
 *
 * The first version's setup is kept for comparison: AdamW, GD and blockwise GD at
 * their best searched learning rates (Adam-mini and AdamW with other batches at
 * AdamW's), with ‖w_X(t) − w_A(t)‖ / ‖w_A(t) − w_0‖, where decorrelated runs of
 * unequal length are not recognisable (GD that barely moves sits near 1).
 */
#include "harness/ttexp.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Shared-lr runs (T_ADAMW first: the reference). */
enum { T_ADAMW, T_MINI, T_ADAFACTOR, T_SM3, T_GD, T_ADAMW2, NT };
static const char *LABELS[NT] = {"AdamW", "Adam-mini", "Adafactor", "SM3", "GD", "AdamW (other batches)"};
static const char *COLUMNS[NT] = {"adamw", "adam_mini", "adafactor", "sm3", "gd", "adamw_other_batches"};
static const optim_kind KINDS[NT] = {OPTIM_ADAMW, OPTIM_ADAM_MINI, OPTIM_ADAFACTOR, OPTIM_SM3, OPTIM_GD, OPTIM_ADAMW};
/* The first version's runs at tuned learning rates. */
enum { U_ADAMW, U_MINI, U_ADAMW2, U_BLOCKGD, U_GD, NU };
static const char *U_LABELS[NU] = {"AdamW", "Adam-mini", "AdamW (other batches)", "blockwise GD", "GD"};
static const char *U_COLUMNS[NU] = {"tuned_adamw", "tuned_adam_mini", "tuned_adamw_other_batches", "tuned_blockgd",
                                    "tuned_gd"};

#define SHARED_LR 1e-3

static double dist(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (a[i] - b[i]) * (a[i] - b[i]);
    return sqrt(s);
}

/* Snapshot i of run r, or NULL after it diverged. */
static const double *snap(const ttexp_job *r, int i, const ttexp_schedule *sc, size_t P)
{
    return (long)i * sc->eval_every <= r->rec.steps_done ? r->rec.snapshots + (size_t)i * P : NULL;
}

/* ttexp_normalised_distance, NAN where a snapshot is missing (a diverged run). */
static double normalised(const double *x, const double *a, const double *w0, size_t P)
{
    return x && a ? ttexp_normalised_distance(x, a, w0, P) : NAN;
}

int main(int argc, char **argv)
{
    ttexp_args a = TTEXP_ARGS("results/trajectory");
    const cli_opt opts[] = {
        TTEXP_OPTS(a, "quick (300 steps, 5-point first grids) or paper (2000, 9)",
                   "points of the first grids of the tuned comparison, 2..50 (0: from --scale)"),
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Distance of the weights of Adam-mini, Adafactor, SM3 (beta1 0.9, as in the paper) and GD to\n"
              "AdamW's along training on the paper's 1-layer Transformer, all from the same initialisation\n"
              "and batches at one shared peak learning rate 1e-3 (the paper: the same lr 1e-5 for all),\n"
              "normalised |w_X - w_A| / sqrt(|w_X - w_0|^2 + |w_A - w_0|^2) (1: unrelated directions); AdamW\n"
              "with another batch order as the noise reference. Kept for comparison: the first version's\n"
              "setup, each method at its best searched lr (Adam-mini at AdamW's), |w_X - w_A| / |w_A - w_0|.\n"
              "Weight decay 0.1 for AdamW and Adam-mini; stats.csv for make verdicts (docs/verdicts.md).",
              opts, sizeof opts / sizeof *opts);
    ttexp_args_finish(&a, 300, 2000, 5, 9, 50);
    ttexp e;
    ttexp_schedule sc = ttexp_begin(&e, ttexp_default_setup(&a), &a);
    size_t P = e.m->P;
    int nev = ttexp_nevals(&sc);
    partition *alg3 = partition_alg3(e.m, 0);

    /* the paper's setup: one shared lr */
    ttexp_job runs[NT];
    for (int k = 0; k < NT; k++) {
        runs[k] = (ttexp_job){ttexp_method_of(LABELS[k], KINDS[k], KINDS[k] == OPTIM_ADAM_MINI ? alg3 : NULL, SHARED_LR),
                              {0}, NULL};
        if (KINDS[k] == OPTIM_ADAM_MINI) runs[k].method.cfg.weight_decay = 0.1;
        runs[k].method.batch_offset = k == T_ADAMW2;
        ttexp_record_alloc(&runs[k].rec, &sc, P, 1);
    }
    ttexp_run_jobs(e.s, &sc, runs, NT, a.threads, "shared lr");

    /* the first version's setup: best learning rates */
    double *block_lr = xmalloc(alg3->nblocks * sizeof(double));
    ttexp_block_lr_from_hessian(&e, alg3, e.s->B, block_lr);
    ttexp_job tuned[NU];
    ttexp_search grids[3];
    const int searched[3] = {U_ADAMW, U_BLOCKGD, U_GD};
    const lr_method ranges[3] = {LR_ADAMW, LR_BLOCKGD, LR_GD};
    int at_bound = 0;
    outfile *f = ttexp_grid_open(a.out);
    for (int i = 0; i < 3; i++) {
        int k = searched[i];
        ttexp_method mt = k == U_ADAMW     ? ttexp_method_of(U_LABELS[k], OPTIM_ADAMW, NULL, 0)
                          : k == U_BLOCKGD ? ttexp_method_of(U_LABELS[k], OPTIM_BLOCK_GD, alg3, 0)
                                           : ttexp_method_of(U_LABELS[k], OPTIM_GD, NULL, 0);
        if (k == U_BLOCKGD) mt.cfg.block_lr = block_lr;
        ttexp_search_run(&grids[i], U_COLUMNS[k], e.s, &sc, &mt, lr_range_of(ranges[i]), a.grid, NULL, NULL, a.threads);
        ttexp_write_search(f, &grids[i]);
        at_bound += ttexp_search_at_bound(&grids[i]);
        if (grids[i].best < 0) die_diverged("%s diverged at every learning rate of its grid", U_LABELS[k]);
        tuned[k] = (ttexp_job){ttexp_search_best(&grids[i])->method, {0}, NULL};
    }
    csv_close(f);
    tuned[U_MINI] = (ttexp_job){ttexp_method_of(U_LABELS[U_MINI], OPTIM_ADAM_MINI, alg3, tuned[U_ADAMW].method.lr),
                                {0}, NULL};
    tuned[U_MINI].method.cfg.weight_decay = tuned[U_ADAMW].method.cfg.weight_decay;
    tuned[U_ADAMW2] = tuned[U_ADAMW];
    tuned[U_ADAMW2].method.label = U_LABELS[U_ADAMW2];
    tuned[U_ADAMW2].method.batch_offset = 1;
    for (int k = 0; k < NU; k++) ttexp_record_alloc(&tuned[k].rec, &sc, P, 1);
    ttexp_run_jobs(e.s, &sc, tuned, NU, a.threads, "tuned lr");

    /* distances to AdamW at each snapshot */
    char header[1024] = "step";
    for (int k = 1; k < NT; k++) snprintf(header + strlen(header), sizeof header - strlen(header), ",%s", COLUMNS[k]);
    for (int k = 1; k < NU; k++)
        snprintf(header + strlen(header), sizeof header - strlen(header), ",%s_rel", U_COLUMNS[k]);
    for (int k = 1; k < NU; k++)
        snprintf(header + strlen(header), sizeof header - strlen(header), ",%s_normalised", U_COLUMNS[k]);
    f = csv_open_in(a.out, "distance.csv", header);
    double dmax[NT] = {0}, dend[NT] = {0}, umax[NU] = {0}, uend[NU] = {0}, urel_end[NU] = {0};
    for (int i = 0; i < nev; i++) {
        fprintf(outfile_fp(f), "%ld", (long)i * sc.eval_every);
        const double *wa = snap(&runs[T_ADAMW], i, &sc, P);
        for (int k = 1; k < NT; k++) {
            double d = normalised(snap(&runs[k], i, &sc, P), wa, e.params0, P);
            fprintf(outfile_fp(f), ",%.10g", d);
            if (i > 0) dmax[k] = isnan(d) || isnan(dmax[k]) ? NAN : fmax(dmax[k], d);
            dend[k] = d;
        }
        const double *ua = snap(&tuned[U_ADAMW], i, &sc, P);
        for (int k = 1; k < NU; k++) {
            const double *x = snap(&tuned[k], i, &sc, P);
            double rel = x && ua ? dist(x, ua, P) / dist(ua, e.params0, P) : NAN;
            fprintf(outfile_fp(f), ",%.10g", rel);
            urel_end[k] = rel;
        }
        for (int k = 1; k < NU; k++) {
            double d = normalised(snap(&tuned[k], i, &sc, P), ua, e.params0, P);
            fprintf(outfile_fp(f), ",%.10g", d);
            if (i > 0) umax[k] = isnan(d) || isnan(umax[k]) ? NAN : fmax(umax[k], d);
            uend[k] = d;
        }
        fputc('\n', outfile_fp(f));
    }
    csv_close(f);
    const ttexp_record *recs[NT];
    for (int k = 0; k < NT; k++) recs[k] = &runs[k].rec;
    char *path = path_join(a.out, "eval.csv");
    ttexp_write_curves(path, COLUMNS, recs, NT, &sc, 1);
    free(path);

    double others = fmin(dmax[T_ADAFACTOR], dmax[T_SM3]);
    double closest = log(dmax[T_MINI] / others), closest_control = log(dmax[T_GD] / others);
    outfile *st = stats_open(a.out);
    stats_put(st, "trajectory.mini_max_distance", dmax[T_MINI]);
    stats_put(st, "trajectory.control.gd_max_distance", dmax[T_GD]);
    stats_put(st, "trajectory.mini_log_ratio_to_memory_efficient", closest);
    stats_put(st, "trajectory.control.gd_log_ratio_to_memory_efficient", closest_control);
    /* reported beside the claims: the same comparison at the end of training only */
    stats_put(st, "trajectory.end.mini_log_ratio_to_memory_efficient",
              log(dend[T_MINI] / fmin(dend[T_ADAFACTOR], dend[T_SM3])));
    stats_put(st, "trajectory.end.mini_distance", dend[T_MINI]);
    stats_put(st, "trajectory.adafactor_max_distance", dmax[T_ADAFACTOR]);
    stats_put(st, "trajectory.sm3_max_distance", dmax[T_SM3]);
    stats_put(st, "trajectory.adamw_other_batches_max_distance", dmax[T_ADAMW2]);
    stats_put(st, "trajectory.tuned.mini_rel_end", urel_end[U_MINI]);
    stats_put(st, "trajectory.tuned.adamw_other_batches_rel_end", urel_end[U_ADAMW2]);
    stats_put(st, "trajectory.tuned.gd_rel_end", urel_end[U_GD]);
    stats_put(st, "trajectory.tuned.mini_max_distance", umax[U_MINI]);
    stats_put(st, "trajectory.tuned.gd_max_distance", umax[U_GD]);
    stats_put(st, "trajectory.grids_at_bound", at_bound);
    csv_close(st);

    path = path_join(a.out, "claims.txt");
    f = outfile_open(path);
    FILE *c = outfile_fp(f);
    fprintf(c, "trajectory: 1-layer Transformer, %ld steps, seed %ld; every optimizer at peak lr %g; normalised "
               "distance to AdamW's weights |w_X - w_A| / sqrt(|w_X - w_0|^2 + |w_A - w_0|^2) (1: unrelated), largest "
               "over the snapshots and at the end:\n", a.steps, a.seed, SHARED_LR);
    for (int k = 1; k < NT; k++)
        fprintf(c, "  %-22s max %.4f, end %.4f (held-out loss %.4f; AdamW %.4f)\n", LABELS[k], dmax[k], dend[k],
                runs[k].rec.final_eval, runs[T_ADAMW].rec.final_eval);
    ttexp_print_claim(c, "trajectory.mini_close", dmax[T_MINI], dmax[T_GD]);
    ttexp_print_claim(c, "trajectory.mini_closest", closest, closest_control);
    fprintf(c, "the first version's setup (each at its best lr; %d of 3 searches not interior):\n", at_bound);
    for (int i = 0; i < 3; i++) ttexp_print_search(c, &grids[i]);
    for (int k = 1; k < NU; k++)
        fprintf(c, "  %-22s lr %-9.4g |w_X - w_A|/|w_A - w_0| at the end %.4f; normalised max %.4f, end %.4f\n",
                U_LABELS[k], tuned[k].method.lr, urel_end[k], umax[k], uend[k]);
    outfile_commit(f);
    echo_file(path);
    free(path);
    ttexp_write_reference(&e, a.out);
    run_write_info(a.out, (unsigned long)a.seed);
    for (int k = 0; k < NT; k++) ttexp_record_free(&runs[k].rec);
    for (int k = 0; k < NU; k++) ttexp_record_free(&tuned[k].rec);
    for (int i = 0; i < 3; i++) ttexp_search_free(&grids[i]);
    free(block_lr);
    partition_free(alg3);
    ttexp_close(&e);
    return 0;
}
