/* trajectory — how far Adam-mini's, blockwise GD's and GD's weights stay from
 * AdamW's along training, from the same initialisation and batches (paper appendix "Why using average v": Adam-mini's trajectory resembles Adam's).
 *
 * AdamW, GD and blockwise GD get their best learning rate from a log grid
 * (lowest mean training loss over the last 10% of steps); Adam-mini runs at AdamW's, as the paper uses it (same
 * hyperparameters as AdamW). The runs are then repeated with parameter snapshots at ~20
 * points, and ‖w_X(t) − w_AdamW(t)‖₂ is reported against ‖w_AdamW(t) − w_0‖₂.
 */
#include "harness/ttexp.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* T_ADAMW2 is AdamW again with another batch order: the distance that batch noise
 * alone puts between two runs of the same optimizer. */
enum { T_ADAMW, T_MINI, T_ADAMW2, T_BLOCKGD, T_GD, NT };
static const char *LABELS[NT] = {"AdamW", "Adam-mini", "AdamW (other batches)", "blockwise GD", "GD"};
static const char *COLUMNS[NT] = {"adamw", "adam_mini", "adamw_other_batches", "blockgd", "gd"};
static const optim_kind KINDS[NT] = {OPTIM_ADAMW, OPTIM_ADAM_MINI, OPTIM_ADAMW, OPTIM_BLOCK_GD, OPTIM_GD};
static const lr_method RANGES[NT] = {LR_ADAMW, LR_ADAM_MINI, LR_ADAMW, LR_BLOCKGD, LR_GD};

static double dist(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (a[i] - b[i]) * (a[i] - b[i]);
    return sqrt(s);
}

int main(int argc, char **argv)
{
    ttexp_args a = TTEXP_ARGS("results/trajectory");
    const cli_opt opts[] = {
        TTEXP_OPTS(a, "quick (300 steps, 5 learning rates per method) or paper (2000, 9)",
                   "learning rates per method in the grid (0: from --scale)"),
    };
    cli_parse(argc, argv,
              "l2 distance of Adam-mini's, blockwise GD's and GD's weights to AdamW's along training on the\n"
              "paper's 1-layer Transformer (same initialisation and batches), next to the distance between\n"
              "two AdamW runs that differ only in the batch order; each method at the best learning\n"
              "rate of its log grid (Adam-mini at AdamW's). Blockwise GD: eta_b = c / |lambda|max(H_bb) at\n"
              "initialisation (as in train_compare). Weight decay 0.1 for AdamW and Adam-mini.",
              opts, sizeof opts / sizeof *opts);
    ttexp_args_finish(&a, 300, 2000, 5, 9, 50);
    long steps = a.steps;
    ttexp e;
    ttexp_schedule sc = ttexp_begin(&e, ttexp_default_setup(&a), &a);
    size_t P = e.m->P;
    int nev = ttexp_nevals(&sc);
    partition *alg3 = partition_alg3(e.m, 0);
    double *block_lr = xmalloc(alg3->nblocks * sizeof(double));
    ttexp_block_lr_from_hessian(&e, alg3, e.s->B, block_lr);

    /* best learning rate of each method, then one run with snapshots */
    ttexp_job runs[NT];
    memset(runs, 0, sizeof runs);
    outfile *f = csv_open_in(a.out, "grid.csv", TTEXP_GRID_HEADER);
    for (int k = 0; k < NT; k++) {
        if (k == T_MINI || k == T_ADAMW2) continue; /* at AdamW's learning rate, below */
        ttexp_method mt = ttexp_method_of(LABELS[k], KINDS[k], NULL, 0);
        if (KINDS[k] == OPTIM_ADAM_MINI) mt.cfg.weight_decay = 0.1;
        if (KINDS[k] == OPTIM_BLOCK_GD) mt.cfg.block_lr = block_lr;
        if (KINDS[k] == OPTIM_BLOCK_GD || KINDS[k] == OPTIM_ADAM_MINI) mt.blocks = alg3;
        int b;
        int n = KINDS[k] == OPTIM_BLOCK_GD ? ttexp_blockgd_points(a.grid) : a.grid;
        const lr_range *range = lr_range_of(RANGES[k]);
        ttexp_job *g = ttexp_grid(e.s, &sc, &mt, range->lo, range->hi, n, a.threads, &b);
        ttexp_write_grid(f, COLUMNS[k], g, n, b);
        runs[k].method = g[b].method;
        ttexp_record_alloc(&runs[k].rec, &sc, P, 1);
        ttexp_jobs_free(g, n);
    }
    csv_close(f);
    runs[T_MINI].method = ttexp_method_of(LABELS[T_MINI], OPTIM_ADAM_MINI, alg3, runs[T_ADAMW].method.lr);
    runs[T_MINI].method.cfg.weight_decay = runs[T_ADAMW].method.cfg.weight_decay;
    runs[T_ADAMW2].method = runs[T_ADAMW].method;
    runs[T_ADAMW2].method.label = LABELS[T_ADAMW2];
    runs[T_ADAMW2].method.batch_offset = 1;
    ttexp_record_alloc(&runs[T_MINI].rec, &sc, P, 1);
    ttexp_record_alloc(&runs[T_ADAMW2].rec, &sc, P, 1);
    ttexp_run_jobs(e.s, &sc, runs, NT, a.threads, "trajectory");

    /* distances to AdamW at each snapshot */
    f = csv_open_in(a.out, "distance.csv", "step,adamw_from_init,adam_mini,adamw_other_batches,blockgd,gd,adam_mini_rel,"
                                         "adamw_other_batches_rel,blockgd_rel,gd_rel");
    const double *wa = runs[T_ADAMW].rec.snapshots;
    double final_rel[NT] = {0};
    for (int i = 0; i < nev; i++) {
        const double *a = wa + (size_t)i * P;
        double from_init = dist(a, e.params0, P), d[NT];
        for (int k = 1; k < NT; k++) {
            const double *x = runs[k].rec.snapshots + (size_t)i * P;
            d[k] = runs[k].rec.steps_done == steps || i * sc.eval_every <= runs[k].rec.steps_done ? dist(x, a, P) : NAN;
        }
        fprintf(outfile_fp(f), "%ld,%.10g", (long)i * sc.eval_every, from_init);
        for (int k = 1; k < NT; k++) fprintf(outfile_fp(f), ",%.10g", d[k]);
        for (int k = 1; k < NT; k++) fprintf(outfile_fp(f), ",%.10g", d[k] / from_init);
        fputc('\n', outfile_fp(f));
        if (i == nev - 1)
            for (int k = 1; k < NT; k++) final_rel[k] = d[k] / from_init;
    }
    csv_close(f);
    const ttexp_record *recs[NT];
    for (int k = 0; k < NT; k++) recs[k] = &runs[k].rec;
    char *path = path_join(a.out, "eval.csv");
    ttexp_write_curves(path, COLUMNS, recs, NT, &sc, 1);
    free(path);

    path = path_join(a.out, "claims.txt");
    f = outfile_open(path);
    FILE *c = outfile_fp(f);
    fprintf(c, "trajectory: 1-layer Transformer, %ld steps; distance to AdamW's weights at the end, relative to "
               "AdamW's distance from the initialisation:\n", steps);
    for (int k = 1; k < NT; k++)
        fprintf(c, "  %-21s lr %-9.4g relative distance %.4f (final held-out loss %.4f; AdamW %.4f)\n", LABELS[k],
                runs[k].method.lr, final_rel[k], runs[k].rec.final_eval, runs[T_ADAMW].rec.final_eval);
    fprintf(c, "%s: Adam-mini stays as close to AdamW as AdamW itself with another batch order (paper: Adam-mini's "
               "trajectory resembles Adam's): %.4f vs %.4f\n",
            final_rel[T_MINI] <= final_rel[T_ADAMW2] ? "PASS" : "FAIL", final_rel[T_MINI], final_rel[T_ADAMW2]);
    fprintf(c, "note: GD and blockwise GD end at %.4f and %.4f; a method that barely leaves the initialisation "
               "sits near 1 on this scale, so these are not a closeness ranking\n", final_rel[T_GD],
            final_rel[T_BLOCKGD]);
    outfile_commit(f);
    echo_file(path);
    free(path);
    ttexp_write_reference(&e, a.out);
    run_write_info(a.out, (unsigned long)a.seed);
    for (int k = 0; k < NT; k++) ttexp_record_free(&runs[k].rec);
    free(block_lr);
    partition_free(alg3);
    ttexp_close(&e);
    return 0;
}
