/* Memory: how much a run may still allocate, the check every large allocation
 * goes through, and huge-page-backed buffers for large matrices. */
#include "core.h"
#include <cblas.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

/* A "Key:   N kB" line of a /proc file, in bytes; -1 if absent. */
static double proc_kb(const char *path, const char *key)
{
    FILE *fp = fopen(path, "r");
    if (!fp) return -1;
    char line[256];
    size_t n = strlen(key);
    double kb = -1;
    while (fgets(line, sizeof line, fp))
        if (strncmp(line, key, n) == 0 && line[n] == ':') {
            if (sscanf(line + n + 1, "%lf", &kb) != 1) kb = -1;
            break;
        }
    fclose(fp);
    return kb < 0 ? -1 : kb * 1024;
}

/* One number from a file ("max" reads as unlimited: -1). */
static double file_number(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp) return -1;
    char buf[64] = "";
    double v = -1;
    if (fgets(buf, sizeof buf, fp) && strncmp(buf, "max", 3) != 0 && sscanf(buf, "%lf", &v) != 1) v = -1;
    fclose(fp);
    return v;
}

/* Headroom under this process's cgroup (v2) memory.max; -1 if unlimited or unknown. */
static double cgroup_headroom(void)
{
    FILE *fp = fopen("/proc/self/cgroup", "r");
    if (!fp) return -1;
    char line[512], rel[512] = "";
    while (fgets(line, sizeof line, fp))
        if (strncmp(line, "0::", 3) == 0) {
            snprintf(rel, sizeof rel, "%s", line + 3);
            rel[strcspn(rel, "\n")] = '\0';
            break;
        }
    fclose(fp);
    if (!rel[0]) return -1;
    char path[700];
    snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.max", strcmp(rel, "/") == 0 ? "" : rel);
    double max = file_number(path);
    if (max < 0) return -1;
    snprintf(path, sizeof path, "/sys/fs/cgroup%s/memory.current", strcmp(rel, "/") == 0 ? "" : rel);
    double cur = file_number(path);
    return cur < 0 ? max : fmax(max - cur, 0);
}

/* Headroom under the address-space limit (ulimit -v); -1 if unlimited. */
static double rlimit_headroom(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return -1;
    double used = proc_kb("/proc/self/status", "VmSize");
    return fmax((double)rl.rlim_cur - (used > 0 ? used : 0), 0);
}

double mem_available_bytes(void)
{
    double avail = proc_kb("/proc/meminfo", "MemAvailable");
    const double limits[2] = {rlimit_headroom(), cgroup_headroom()};
    for (int i = 0; i < 2; i++)
        if (limits[i] >= 0 && (avail < 0 || limits[i] < avail)) avail = limits[i];
    return avail;
}

/* OpenBLAS takes a work buffer of about 128 MB for each thread that calls it at
 * the same time and, when that allocation fails, retries for ever; so under an
 * address-space limit the room for one buffer per worker thread is checked
 * before any BLAS call, and the buffers are then taken, all at once (the
 * workers call BLAS concurrently). Per thread: the buffer, the 64 MB that
 * glibc reserves for a thread's own malloc arena, its stack, and a margin. */
#define BLAS_BUFFER_BYTES (256.0 * 1024 * 1024)

typedef struct {
    pthread_barrier_t *all_in;
} warmup_arg;

static void *dgemm_warmup(void *arg)
{
    warmup_arg *w = arg;
    double a = 1, b = 1, c = 0;
    if (w) pthread_barrier_wait(w->all_in);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0, &a, 1, &b, 1, 0.0, &c, 1);
    return NULL;
}

void blas_memory_guard(void)
{
    double room = rlimit_headroom();
    if (room < 0) return; /* no address-space limit: OpenBLAS allocates as it goes */
    int n = toolkit_threads();
    if (room < n * BLAS_BUFFER_BYTES)
        die_user("the address-space limit (ulimit -v) leaves %.0f MB; the BLAS library needs about %.0f MB for %d "
                 "worker thread%s: raise the limit, or use fewer threads (OPENBLAS_NUM_THREADS=1)",
                 room / 1048576, n * BLAS_BUFFER_BYTES / 1048576, n, n > 1 ? "s" : "");
    pthread_barrier_t all_in;
    pthread_barrier_init(&all_in, NULL, (unsigned)n);
    warmup_arg w = {&all_in};
    pthread_t tid[64];
    int started = 1;
    for (; started < n; started++)
        if (pthread_create(&tid[started], NULL, dgemm_warmup, &w)) break;
    if (started < n) { /* could not start them all: no concurrent warm-up, one buffer only */
        pthread_barrier_destroy(&all_in);
        die_user("cannot start %d threads under the current limits; use fewer (OPENBLAS_NUM_THREADS=1)", n);
    }
    dgemm_warmup(&w);
    for (int t = 1; t < n; t++) pthread_join(tid[t], NULL);
    pthread_barrier_destroy(&all_in);
}

void memory_check(const char *what, double bytes)
{
    double avail = mem_available_bytes();
    if (!core_quiet && bytes >= 1e8) { /* only what is worth knowing: 100 MB and more */
        if (avail >= 0) fprintf(stderr, "%s: needs %.3f GB; available %.3f GB\n", what, bytes / 1e9, avail / 1e9);
        else fprintf(stderr, "%s: needs %.3f GB (available memory unknown)\n", what, bytes / 1e9);
    }
    if (avail >= 0 && bytes > avail)
        die_user("%s needs %.3f GB but only %.3f GB of memory is available (use a smaller model or batch, or "
                 "compute Hessian column ranges in separate runs)", what, bytes / 1e9, avail / 1e9);
}

double *huge_alloc(size_t count, const char *what)
{
    size_t bytes = checked_mul(count, sizeof(double), what);
    void *p = NULL;
    if (posix_memalign(&p, (size_t)1 << 21, bytes ? bytes : 1) != 0)
        die_user("out of memory allocating %s (%.3f GB)", what, bytes / 1e9);
    madvise(p, bytes, MADV_HUGEPAGE);
    return p;
}
