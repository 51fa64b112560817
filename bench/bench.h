/* bench.h — shared pieces of the benchmarks: the same-run dgemm reference.
 * Benchmarks print ratios against a baseline measured in the same process. */
#ifndef BENCH_H
#define BENCH_H

#include "core/core.h"
#include <cblas.h>
#include <stdlib.h>
#include <time.h>

void openblas_set_num_threads(int);

/* CPU seconds of this process (every thread): on a shared machine a
 * one-thread benchmark's measure, which other processes barely change. */
static inline double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* GFLOP/s of C = A·B for n×n matrices (2n³ flops), best of `reps` runs, on
 * `threads` BLAS threads, timed by the wall clock (cpu 0) or in CPU seconds
 * (cpu 1: for one thread); BLAS is back on one thread afterwards, as the
 * programs run it. */
static inline double dgemm_gflops_on(int n, int reps, int threads, int cpu)
{
    openblas_set_num_threads(threads);
    size_t nn = (size_t)n * n;
    double *A = xmalloc(nn * sizeof(double)), *B = xmalloc(nn * sizeof(double)), *C = xmalloc(nn * sizeof(double));
    for (size_t i = 0; i < nn; i++) {
        A[i] = (double)(i % 7) - 3;
        B[i] = (double)(i % 5) - 2;
    }
    double best = 1e300;
    for (int r = 0; r < reps; r++) {
        double t0 = cpu ? cpu_seconds() : wall_seconds();
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, A, n, B, n, 0.0, C, n);
        double t = (cpu ? cpu_seconds() : wall_seconds()) - t0;
        if (t < best) best = t;
    }
    free(A);
    free(B);
    free(C);
    openblas_set_num_threads(1);
    return 2.0 * n * n * (double)n / best / 1e9;
}

/* The same on as many BLAS threads as the toolkit's workers use (toolkit_threads()). */
static inline double dgemm_gflops(int n, int reps) { return dgemm_gflops_on(n, reps, toolkit_threads(), 0); }

/* Peak resident set size of this process in GB (from /proc/self/status VmHWM). */
static inline double peak_rss_gb(void)
{
    FILE *fp = fopen("/proc/self/status", "r");
    if (!fp) return -1;
    char line[256];
    double kb = -1;
    while (fgets(line, sizeof line, fp))
        if (sscanf(line, "VmHWM: %lf kB", &kb) == 1) break;
    fclose(fp);
    return kb / 1e6 * 1.024;
}

#endif
