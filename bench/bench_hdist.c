/* bench_hdist — the Hessian block analysis past one machine's memory, measured
 * on the programs a user runs (hessian_blocks), each in a child process whose
 * time and peak memory (wait4's ru_maxrss: the largest process of its tree, so
 * the largest rank under mpirun) are its own. Ratios against baselines of the
 * same run; numbers only, not a timed test.
 *
 * A. streamed vs full H on the 2-layer Transformer (C 32, M 64, 4 heads, P =
 *    17,920; Hessian batch 64, as bench_tt): both with the symmetric (lower)
 *    panels and two worker threads, Algorithm 3 blocks, every block's metrics.
 * B. the same streamed analysis over MPI ranks (needs make MPI=1; skipped
 *    otherwise): np 1 with 1 worker, np 2 with 1 worker each (the like-for-like
 *    pair: the same number of threads per core), and np 1 with 2 workers (what
 *    one process does with both cores) — full panels, the MPI default; the
 *    files of the three runs are compared byte for byte. Hessian batch 16 by
 *    default (--mpi-batch) to keep make bench short.
 * C. (--big, opt-in: minutes) a streamed analysis of a model with P >= 100,000,
 *    whose full H would need 80 GB: the 2-layer Transformer C 64, M 256, V 64
 *    (P = 108,800), Hessian batch 8, one process with two workers; with MPI also
 *    np 2.
 */
#include "bench/bench.h"
#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    double wall, peak_gb, hess, cpu, hess_cpu;
    int ok;
} result;

/* The 1-minute load average: how busy the machine was (other jobs share it). */
static double loadavg(void)
{
    double l = -1;
    FILE *fp = fopen("/proc/loadavg", "r");
    if (fp) {
        if (fscanf(fp, "%lf", &l) != 1) l = -1;
        fclose(fp);
    }
    return l;
}

/* Runs argv with the extra environment (NAME=value strings) in a child; its
 * output goes to log. */
static result run(char *const *argv, char *const *env, const char *log)
{
    result r = {0, 0, -1, 0, -1, 0};
    fflush(NULL);
    double t0 = wall_seconds();
    pid_t pid = fork();
    if (pid < 0) DIE("fork failed");
    if (pid == 0) {
        for (int i = 0; env && env[i]; i++) putenv(env[i]);
        FILE *f = freopen(log, "w", stdout);
        if (!f || dup2(fileno(stdout), STDERR_FILENO) < 0) _exit(127);
        execvp(argv[0], argv);
        _exit(127);
    }
    int st;
    struct rusage ru;
    while (wait4(pid, &st, 0, &ru) < 0)
        if (errno != EINTR) DIE("wait4 failed");
    r.wall = wall_seconds() - t0;
    r.peak_gb = ru.ru_maxrss * 1024.0 / 1e9;
    r.cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
    r.ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    return r;
}

/* "<key>: X" from the run's run.txt ("hessian seconds": the R-passes, stream and
 * reduction; "hessian cpu seconds, all ranks": their CPU time summed over ranks). */
static double note_value(const char *dir, const char *key)
{
    char path[1024], line[256];
    snprintf(path, sizeof path, "%s/run.txt", dir);
    FILE *fp = fopen(path, "r");
    double v = -1;
    if (!fp) return v;
    size_t n = strlen(key);
    while (fgets(line, sizeof line, fp))
        if (!strncmp(line, key, n) && line[n] == ':' && sscanf(line + n + 1, "%lf", &v) == 1) break;
    fclose(fp);
    return v;
}

static int same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        int ca = fgetc(fa), cb = fgetc(fb);
        if (ca != cb) same = 0;
        if (ca == EOF || cb == EOF) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

static int same_outputs(const char *d1, const char *d2)
{
    static const char *files[] = {"blocks.csv", "blocks.npy", "summary.csv", "row_mass.npy", "tensor_mass.npy", "heat.csv"};
    char a[1024], b[1024];
    for (int i = 0; i < 6; i++) {
        snprintf(a, sizeof a, "%s/%s", d1, files[i]);
        snprintf(b, sizeof b, "%s/%s", d2, files[i]);
        if (!same_file(a, b)) return 0;
    }
    return 1;
}

/* Up to 48 arguments: the program (and mpirun before it), the model, the rest. */
typedef struct {
    char *v[64];
    int n;
} args;
static void add(args *a, const char *s) { a->v[a->n++] = (char *)s, a->v[a->n] = NULL; }
static void add_model(args *a, const char *const *model)
{
    for (int i = 0; model[i]; i++) add(a, model[i]);
}

static result hb_run(const char *mpirun, int np, const char *bin, const char *const *model, const char *extra1,
                     const char *extra2, const char *out, char *const *env)
{
    args a = {{0}, 0};
    char npbuf[16];
    if (mpirun) {
        snprintf(npbuf, sizeof npbuf, "%d", np);
        add(&a, mpirun);
        add(&a, "-q");
        add(&a, "--oversubscribe");
        add(&a, "--bind-to");   /* OpenMPI binds np <= 2 to one core each by default: the workers of a */
        add(&a, "none");        /* one-rank run would share a core, and no rank could move off a busy one */
        if (geteuid() == 0) add(&a, "--allow-run-as-root");
        add(&a, "-np");
        add(&a, npbuf);
    }
    add(&a, bin);
    add_model(&a, model);
    if (extra1) add(&a, extra1);
    if (extra2) add(&a, extra2);
    add(&a, "--quiet");
    add(&a, "--out");
    add(&a, out);
    char log[1100];
    snprintf(log, sizeof log, "%s.log", out);
    result r = run(a.v, env, log);
    r.hess = note_value(out, "hessian seconds");
    r.hess_cpu = note_value(out, "hessian cpu seconds, all ranks");
    if (!r.ok) printf("  FAILED: %s (log %s)\n", bin, log);
    return r;
}

static int exists(const char *p) { return access(p, X_OK) == 0; }

/* The machine's own two-process throughput: two independent one-process runs at
 * once, against one alone (2 = two free cores; less when other jobs, or vCPUs
 * that share a physical core, take their share). */
static double pair_speedup(const char *mpirun, const char *bin, const char *const *model, const char *dir, double alone)
{
    char o[2][1100];
    pid_t pid[2];
    double t0 = wall_seconds();
    for (int k = 0; k < 2; k++) {
        snprintf(o[k], sizeof o[k], "%s/b_pair%d", dir, k);
        fflush(NULL);
        pid[k] = fork();
        if (pid[k] < 0) DIE("fork failed");
        if (pid[k] == 0) {
            char *one[] = {"OPENBLAS_NUM_THREADS=1", NULL};
            result r = hb_run(mpirun, 1, bin, model, NULL, NULL, o[k], one);
            _exit(r.ok ? 0 : 1);
        }
    }
    int ok = 1;
    for (int k = 0; k < 2; k++) {
        int st;
        while (waitpid(pid[k], &st, 0) < 0)
            if (errno != EINTR) DIE("waitpid failed");
        ok &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    double t = wall_seconds() - t0;
    return ok ? 2 * alone / t : -1;
}

int main(int argc, char **argv)
{
    const char *bin_dir = "build/bin", *mpi_dir = "build-mpi/bin", *mpirun = "mpirun", *keep = NULL;
    int big = 0, no_mpi = 0, skip_a = 0, mpi_batch = 16, a_batch = 64;
    cli_opt opts[] = {
        {"big", OPT_FLAG, &big, "also part C: P = 108,800 streamed (minutes)"},
        {"no-mpi", OPT_FLAG, &no_mpi, "skip part B"},
        {"skip-a", OPT_FLAG, &skip_a, "skip part A"},
        {"a-batch", OPT_INT, &a_batch, "part A: Hessian batch (sequences)"},
        {"mpi-batch", OPT_INT, &mpi_batch, "part B: Hessian batch (sequences)"},
        {"bin", OPT_STRING, &bin_dir, "folder of the default build's programs"},
        {"mpi-bin", OPT_STRING, &mpi_dir, "folder of the MPI build's programs (make MPI=1)"},
        {"mpirun", OPT_STRING, &mpirun, "the MPI launcher"},
        {"keep", OPT_STRING, &keep, "keep the runs' outputs in this folder (default: a temporary, removed)"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Streamed Hessian block analysis vs the full-H path (time, peak memory) on the 2-layer Transformer\n"
              "(P = 17,920), its speed-up over MPI ranks (np 1 vs 2), and with --big a model with P >= 100,000.",
              opts, sizeof opts / sizeof opts[0]);
    if (a_batch < 1 || mpi_batch < 1) die_user("batches must be >= 1");
    char tmpl[] = "/tmp/bench_hdist.XXXXXX";
    const char *dir = keep;
    if (!dir) {
        if (!mkdtemp(tmpl)) DIE("mkdtemp failed");
        dir = tmpl;
    } else {
        ensure_dir(dir);
    }
    char hb[1024], hbm[1024], o1[1100], o2[1100], o3[1100];
    snprintf(hb, sizeof hb, "%s/hessian_blocks", bin_dir);
    snprintf(hbm, sizeof hbm, "%s/hessian_blocks", mpi_dir);
    if (!exists(hb)) die_user("%s missing: run make first", hb);
    char abatch[16], mbatch[16];
    snprintf(abatch, sizeof abatch, "%d", a_batch);
    snprintf(mbatch, sizeof mbatch, "%d", mpi_batch);
    const char *tt2[] = {"--layers", "2", "--C", "32", "--M", "64", "--heads", "4", "--steps", "10", "--hess-batch",
                         abatch, NULL};
    char *two[] = {"OPENBLAS_NUM_THREADS=2", NULL}, *one[] = {"OPENBLAS_NUM_THREADS=1", NULL};
    printf("bench_hdist (outputs in %s); load average %.1f on %ld cores before (other jobs slow every run alike)\n", dir,
           loadavg(), sysconf(_SC_NPROCESSORS_ONLN));

    /* A */
    printf("A. 2-layer Transformer C 32, M 64, 4 heads (P = 17,920), Hessian batch %d, Algorithm 3 blocks, lower panels, "
           "one process, 2 workers:\n", a_batch);
    snprintf(o1, sizeof o1, "%s/a_stream", dir);
    snprintf(o2, sizeof o2, "%s/a_full", dir);
    result s = {0}, f = {0};
    if (!skip_a) {
        s = hb_run(NULL, 1, hb, tt2, "--lower", NULL, o1, two);
        f = hb_run(NULL, 1, hb, tt2, "--lower", "--path=full", o2, two);
    }
    if (s.ok && f.ok) {
        printf("  streamed: %.1f s (H part %.1f s), peak %.3f GB;  full H: %.1f s (H part %.1f s), peak %.3f GB\n",
               s.wall, s.hess, s.peak_gb, f.wall, f.hess, f.peak_gb);
        printf("  streamed / full: time %.2f, peak memory %.3f (H alone: 2.57 GB)\n", s.wall / f.wall, s.peak_gb / f.peak_gb);
    }

    /* B */
    if (no_mpi) {
        printf("B. skipped (--no-mpi)\n");
    } else if (!exists(hbm)) {
        printf("B. skipped: %s missing (make MPI=1 builds it)\n", hbm);
    } else {
        const char *ttb[] = {"--layers", "2", "--C", "32", "--M", "64", "--heads", "4", "--steps", "10", "--hess-batch",
                             mbatch, NULL};
        char *rank1[] = {"OPENBLAS_NUM_THREADS=1", "TOOLKIT_RANK_THREADS=1", NULL};
        printf("B. the same model, Hessian batch %d, full panels (the MPI default), mpirun:\n", mpi_batch);
        snprintf(o1, sizeof o1, "%s/b_np1w1", dir);
        snprintf(o2, sizeof o2, "%s/b_np2w1", dir);
        snprintf(o3, sizeof o3, "%s/b_np1w2", dir);
        result r1 = hb_run(mpirun, 1, hbm, ttb, NULL, NULL, o1, one);
        result r2 = hb_run(mpirun, 2, hbm, ttb, NULL, NULL, o2, rank1);
        result r3 = hb_run(mpirun, 1, hbm, ttb, NULL, NULL, o3, two);
        if (r1.ok && r2.ok && r3.ok) {
            printf("  np 1 x 1 worker: %.1f s (H part %.1f s), peak %.3f GB\n", r1.wall, r1.hess, r1.peak_gb);
            printf("  np 2 x 1 worker: %.1f s (H part %.1f s), peak per rank %.3f GB\n", r2.wall, r2.hess, r2.peak_gb);
            printf("  np 1 x 2 workers: %.1f s (H part %.1f s), peak %.3f GB\n", r3.wall, r3.hess, r3.peak_gb);
            printf("  efficiency np 2 vs np 1 (1 worker per rank, H part): %.0f%% (speed-up %.2f); end to end %.0f%%; "
                   "np 2 x 1 vs np 1 x 2 workers: time ratio %.2f\n",
                   100 * r1.hess / (2 * r2.hess), r1.hess / r2.hess, 100 * r1.wall / (2 * r2.wall), r2.hess / r3.hess);
            printf("  CPU seconds of the H part, all ranks: np 1 x 1 %.1f, np 2 x 1 %.1f, np 1 x 2 %.1f: CPU efficiency "
                   "np 2 vs np 1 %.0f%% (the wall-clock efficiency on 2 free cores; spin-waits count as work); whole "
                   "runs %.1f / %.1f / %.1f CPU s; load average now %.1f\n", r1.hess_cpu, r2.hess_cpu, r3.hess_cpu,
                   100 * r1.hess_cpu / r2.hess_cpu, r1.cpu, r2.cpu, r3.cpu, loadavg());
            double pair = pair_speedup(mpirun, hbm, ttb, dir, r1.wall);
            printf("  this machine now: two independent one-process runs at once go %.2fx as fast as one (2.00 on two "
                   "free cores): np 2's speed-up %.2f is %.0f%% of what the machine gives two processes\n", pair,
                   r1.wall / r2.wall, 100 * (r1.wall / r2.wall) / pair);
            printf("  files of np 1, np 2 and np 1 x 2 workers byte-identical: %s\n",
                   same_outputs(o1, o2) && same_outputs(o1, o3) ? "yes" : "NO");
        }
    }

    /* C */
    if (!big) {
        printf("C. P >= 100,000: opt-in (bench_hdist --big; several minutes)\n");
    } else {
        const char *ttc[] = {"--layers", "2", "--C", "64", "--M", "256", "--heads", "4", "--V", "64", "--steps", "10",
                             "--hess-batch", "8", "--panel", "128", NULL};
        printf("C. 2-layer Transformer C 64, M 256, V 64 (P = 108,800; full H 94.7 GB), Hessian batch 8, Algorithm 3, "
               "streamed:\n");
        snprintf(o1, sizeof o1, "%s/c_np1w2", dir);
        result c1 = hb_run(NULL, 1, hb, ttc, "--lower", NULL, o1, two);
        if (c1.ok)
            printf("  one process, 2 workers, lower panels: %.1f s (H part %.1f s), peak %.3f GB (%.4f of H's 94.7 GB)\n",
                   c1.wall, c1.hess, c1.peak_gb, c1.peak_gb / 94.7);
        if (!no_mpi && exists(hbm)) {
            char *rank1[] = {"OPENBLAS_NUM_THREADS=1", "TOOLKIT_RANK_THREADS=1", NULL};
            snprintf(o2, sizeof o2, "%s/c_np2w1", dir);
            result c2 = hb_run(mpirun, 2, hbm, ttc, "--lower", NULL, o2, rank1);
            if (c2.ok && c1.ok)
                printf("  np 2 x 1 worker, lower panels: %.1f s (H part %.1f s), peak per rank %.3f GB; time ratio to one "
                       "process with 2 workers %.2f\n", c2.wall, c2.hess, c2.peak_gb, c2.hess / c1.hess);
        }
    }
    if (!keep) {
        if (remove_tree(dir) != 0) printf("could not remove %s\n", dir);
    }
    return 0;
}
