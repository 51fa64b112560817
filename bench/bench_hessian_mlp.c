/* bench_hessian_mlp — exact Hessians of 1-hidden-layer MLPs against a dgemm of
 * similar size measured in the same run (targets: 784-8-10 tanh on 1,000
 * samples in <= 1 s at >= 40% of dgemm GFLOP/s; the CIFAR-sized 3072-8-100).
 *
 * GFLOP/s count the dgemm flops the model actually issued (2·M·N·K per call,
 * from mlp_flops); the elementwise work is not counted, so the rate is a lower
 * bound. Three paths: the symmetric hess_cols path (rows >= j0 of each panel,
 * the rest mirrored), the full hess_cols path, and the generic R-operator on
 * unit directions (~4·N·P² flops). */
#include "bench/bench.h"
#include "hessian/hessian.h"
#include "mlp/mlp.h"
#include "tests/fixtures.h"
#include <math.h>
#include <string.h>
#include <unistd.h>

/* Times one full assembly; returns H and prints seconds, GFLOP/s and the ratio to a
 * dgemm measured just before (the machine may be shared: both see the same load). */
static double *timed(model *m, const char *name, int use_cols, int lower, int panel, double *secs)
{
    double ref = dgemm_gflops(1000, 3);
    hessian_opts o = hessian_defaults();
    o.use_hess_cols = use_cols;
    o.symmetric = lower;
    o.panel = panel;
    o.label = name;
    double f0 = mlp_flops(m), t0 = wall_seconds();
    double *H = hessian_full(m, &o);
    double t = wall_seconds() - t0, gf = (mlp_flops(m) - f0) / t / 1e9;
    printf("  %-34s %7.3f s  %7.1f GFLOP/s  dgemm %5.1f GFLOP/s  ratio %5.1f%%\n", name, t, gf, ref, 100 * gf / ref);
    *secs = t;
    return H;
}

/* The 1-minute load average: the benchmark machine may be shared. */
static double loadavg(void)
{
    FILE *fp = fopen("/proc/loadavg", "r");
    double l = -1;
    if (fp) {
        if (fscanf(fp, "%lf", &l) != 1) l = -1;
        fclose(fp);
    }
    return l;
}

/* Seconds to allocate and first-touch count doubles as hessian_full does (page faults). */
static double first_touch_seconds(size_t count)
{
    double t0 = wall_seconds();
    double *a = huge_alloc(count, "first-touch probe");
    memset(a, 0, count * sizeof(double));
    double t = wall_seconds() - t0;
    free(a);
    return t;
}

int main(int argc, char **argv)
{
    int skip_cifar = 0;
    const cli_opt opts[] = {{"no-cifar", OPT_FLAG, &skip_cifar, "skip the CIFAR-sized 3072-8-100 MLP (H of 5.2 GB)"}};
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Exact-Hessian benchmark of the MLP: the 784-8-10 tanh MLP on 1,000 samples (P = 6,370) by each\n"
              "engine path (symmetric hess_cols, full columns, hvp on unit vectors), against the dgemm rate\n"
              "measured in the same run; then the CIFAR-sized 3072-8-100 MLP (P = 25,484) if memory allows.\n"
              "Prints times, GFLOP/s and the share of dgemm's rate; not a test.",
              opts, 1);
    core_quiet = 1;
    printf("dgemm reference: 1000x1000x1000, best of 3, measured in this run just before each Hessian\n");
    printf("machine: %ld cores online, 1-min load average %.2f at start\n", sysconf(_SC_NPROCESSORS_ONLN), loadavg());

    /* tanh MLPs with cross-entropy on 1,000 random samples (tests/fixtures.c) */
    mlp_config cfg = {.in = 784, .width = 8, .classes = 10, .act = ACT_TANH, .bias = 1, .loss = LOSS_XENT};
    model *m = fixture_mlp(&cfg, 1000, 1);
    size_t P = m->P;
    printf("MLP 784-8-10 tanh, N = 1000, P = %zu (H %.2f GB):\n", P, 8.0 * P * P / 1e9);
    double ts, tc, tf, tg;
    free(timed(m, "hess_cols, symmetric, cold memory", 1, 1, 256, &tc));
    double *Hs = timed(m, "hess_cols, symmetric (fastest)", 1, 1, 256, &ts);
    double *Hf = timed(m, "hess_cols, full columns", 1, 0, 256, &tf);
    double *Hg = timed(m, "R-op hvp on unit vectors", 0, 0, 256, &tg);
    printf("  symmetry of the full-column H: max|H-H'|/max|H| = %.2e\n", hessian_asymmetry(P, Hf));
    printf("  agreement: symmetric vs full %.2e, hvp vs full %.2e (of max|H|)\n", rel_max_diff(P * P, Hs, Hf),
           rel_max_diff(P * P, Hg, Hf));
    printf("  target <= 1 s: %s (%.3f s; %.3f s in the first run of the process, whose H pages are new to the VM); "
           "speed-up over generic R-op %.1fx\n", ts <= 1 ? "met" : "MISSED", ts, tc, tg / ts);
    printf("  allocating + first touch of 0.32 GB of fresh memory alone: %.3f s\n", first_touch_seconds(P * P));
    free(Hs);
    free(Hf);
    free(Hg);
    model_free(m);
    printf("  peak RSS so far %.2f GB\n", peak_rss_gb());

    if (skip_cifar) return 0;
    cfg.in = 3072;
    cfg.classes = 100;
    m = fixture_mlp(&cfg, 1000, 2);
    P = m->P;
    printf("MLP 3072-8-100 tanh (CIFAR-sized), N = 1000, P = %zu (H %.2f GB):\n", P, 8.0 * P * P / 1e9);
    double need = hessian_bytes(P, P, 785), avail = mem_available_bytes();
    if (avail >= 0 && need > 0.9 * avail) {
        printf("  skipped: needs %.2f GB, MemAvailable %.2f GB\n", need / 1e9, avail / 1e9);
    } else {
        double *H = timed(m, "hess_cols, symmetric (fastest)", 1, 1, 512, &ts);
        printf("  (H is new memory here: its first touch is inside this time)\n");
        printf("  peak RSS %.2f GB (H alone %.2f GB)\n", peak_rss_gb(), 8.0 * P * P / 1e9);
        free(H);
    }
    model_free(m);
    printf("1-min load average %.2f at the end\n", loadavg());
    return 0;
}
