/* ablation_vstat — Adam-mini's block learning rate from mean(g_b²) (the
 * official choice) vs its 2-norm, 1-norm, max and min (paper appendix
 * "Ablation Studies"), on the tiny Transformer with the Algorithm 3 partition.
 *
 * Each statistic gets its own learning-rate grid (the lowest mean training
 * loss over the last 10% of steps wins).
 * Adam-mini keeps no per-coordinate v, so the statistic is applied to the
 * current g_b⊙g_b before the β2 average (our reading of the ablation).
 */
#include "experiments/ttexp.h"

int main(int argc, char **argv)
{
    const char *out = "results/ablation_vstat", *scale = "quick", *text = NULL;
    long seed = 1, data_seed = 1, steps = 0;
    int threads = 2, nlr = 0;
    const cli_opt opts[] = {
        {"scale", OPT_STRING, &scale, "quick (300 steps, 7 learning rates per statistic) or paper (2000, 13)"},
        {"steps", OPT_LONG, &steps, "training steps (0: from --scale)"},
        {"lrs", OPT_INT, &nlr, "learning rates per statistic (0: from --scale)"},
        {"seed", OPT_LONG, &seed, "model initialisation seed"},
        {"data-seed", OPT_LONG, &data_seed, "Markov chain and batch seed"},
        {"text", OPT_STRING, &text, "train on the bytes of this text file instead of the Markov source"},
        {"threads", OPT_INT, &threads, "training runs in parallel"},
        {"out", OPT_STRING, &out, "output folder"},
    };
    cli_parse(argc, argv,
              "Adam-mini with the block statistic mean (official), l2, l1, max or min of g_b^2, on the paper's\n"
              "1-layer Transformer (Algorithm 3 partition, batch 64), each with a log grid of learning rates\n"
              "in [1e-4, 1]; same initialisation and batches; 5% warmup then cosine to 10%.",
              opts, sizeof opts / sizeof *opts);
    int paper = ttexp_parse_scale(scale);
    if (steps == 0) steps = paper ? 2000 : 300;
    if (nlr == 0) nlr = paper ? 13 : 7;
    if (steps < 20) die_user("--steps must be >= 20 (got %ld)", steps);
    if (nlr < 1 || nlr > 50) die_user("--lrs must be in 1..50 (got %d)", nlr);
    if (seed < 0 || data_seed < 0) die_user("seeds must be >= 0");
    if (threads < 1 || threads > 64) die_user("--threads must be in 1..64 (got %d)", threads);
    ensure_dir(out);

    ttexp_setup setup = {tt_defaults(), 64, 512, 2, 2, (unsigned long)data_seed, text};
    setup.cfg.seed = (unsigned long)seed;
    ttexp e;
    ttexp_open(&e, &setup);
    ttexp_schedule sc = {steps, steps / 20, ttexp_eval_every(steps)};
    partition *alg3 = partition_alg3(e.m, 0);

    ttexp_job *grids[VSTAT_COUNT];
    const ttexp_record *best[VSTAT_COUNT];
    const char *cols[VSTAT_COUNT];
    double L[VSTAT_COUNT], best_lr[VSTAT_COUNT];
    int best_at[VSTAT_COUNT];
    char *path = path_join(out, "grid.csv");
    outfile *f = csv_open(path, TTEXP_GRID_HEADER);
    for (int s = 0; s < VSTAT_COUNT; s++) {
        ttexp_method mt = ttexp_method_of(vstat_name(s), OPTIM_ADAM_MINI, alg3, 0);
        mt.cfg.weight_decay = 0.1;
        mt.cfg.vstat = s;
        int b;
        grids[s] = ttexp_grid(&setup, &sc, &mt, 1e-4, 1, nlr, threads, &b);
        ttexp_write_grid(f, vstat_name(s), grids[s], nlr, b);
        best[s] = &grids[s][b].rec;
        cols[s] = vstat_name(s);
        L[s] = best[s]->final_eval;
        best_lr[s] = grids[s][b].method.lr;
        best_at[s] = b;
    }
    csv_close(f);
    free(path);
    path = path_join(out, "eval.csv");
    ttexp_write_curves(path, cols, best, VSTAT_COUNT, &sc, 1);
    free(path);

    int winner = 0;
    for (int s = 1; s < VSTAT_COUNT; s++)
        if (L[s] < L[winner]) winner = s;
    path = path_join(out, "claims.txt");
    f = outfile_open(path);
    FILE *c = outfile_fp(f);
    fprintf(c, "ablation_vstat: Adam-mini (Algorithm 3) on the 1-layer Transformer, %ld steps, best of %d "
               "learning rates each; final held-out loss (floor %.4f)\n", steps, nlr, ttexp_optimal_loss(&e));
    for (int s = 0; s < VSTAT_COUNT; s++)
        fprintf(c, "  %-5s best lr %-10.4g final loss %.4f%s%s\n", vstat_name(s), best_lr[s], L[s],
                isfinite(L[s]) ? "" : " (diverged at every learning rate)", ttexp_edge_note(best_at[s], nlr));
    fprintf(c, "%s: mean(v) is the best statistic (paper appendix: all candidates perform worse than mean): "
               "best is %s (%.4f), mean %.4f\n", winner == VSTAT_MEAN ? "PASS" : "FAIL", vstat_name(winner),
            L[winner], L[VSTAT_MEAN]);
    outfile_commit(f);
    ttexp_echo(path);
    free(path);
    ttexp_write_reference(&e, out);
    run_write_info(out, (unsigned long)seed);
    for (int s = 0; s < VSTAT_COUNT; s++) ttexp_jobs_free(grids[s], nlr);
    partition_free(alg3);
    ttexp_close(&e);
    return 0;
}
