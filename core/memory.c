/* Memory and threads: how many worker threads a run uses, how much it may
 * still allocate, the check every large allocation goes through, and
 * huge-page-backed buffers for large matrices. */
#include "core.h"
#include <cblas.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

int toolkit_threads(void)
{
    const char *env = getenv("OPENBLAS_NUM_THREADS");
    char *end;
    long n = env ? strtol(env, &end, 10) : 0;
    if (!env || end == env || *end || n < 1) n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

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

/* Headroom (limit − usage) of one cgroup folder; -1 if it sets no limit. v2 folders
 * hold memory.max ("max" when unlimited), v1 memory.limit_in_bytes (a huge number
 * when unlimited). */
static double cgroup_dir_headroom(const char *dir, int v2)
{
    char path[1100];
    if (snprintf(path, sizeof path, "%s/%s", dir, v2 ? "memory.max" : "memory.limit_in_bytes") >= (int)sizeof path)
        return -1;
    double max = file_number(path);
    if (max < 0 || max >= 0x1p60) return -1;
    if (snprintf(path, sizeof path, "%s/%s", dir, v2 ? "memory.current" : "memory.usage_in_bytes") >= (int)sizeof path)
        return max;
    double cur = file_number(path);
    return cur < 0 ? max : fmax(max - cur, 0);
}

/* The smallest headroom of this process's memory cgroup and its ancestors (a
 * parent's limit binds the children too); -1 if none sets a limit or none is
 * readable. cgroup v2 (line "0::<path>", under /sys/fs/cgroup) or v1 (a line
 * whose controllers include "memory", under /sys/fs/cgroup/memory). */
static double cgroup_headroom(void)
{
    FILE *fp = fopen("/proc/self/cgroup", "r");
    if (!fp) return -1;
    char line[512], rel[512] = "";
    int v2 = 0;
    while (fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        *c2 = '\0';
        const char *ctrl = c1 + 1;
        int is_v2 = strcmp(line, "0") == 0 && ctrl[0] == '\0';
        int is_v1 = !is_v2 && (strcmp(ctrl, "memory") == 0 || strstr(ctrl, "memory,") == ctrl ||
                               strstr(ctrl, ",memory") != NULL);
        if (is_v1 || (is_v2 && !rel[0])) {
            snprintf(rel, sizeof rel, "%s", c2 + 1);
            v2 = is_v2;
            if (is_v1) break; /* a v1 memory controller holds the limits (hybrid setups) */
        }
    }
    fclose(fp);
    if (!rel[0]) return -1;
    const char *base = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
    double best = -1;
    for (;;) {
        char dir[1100];
        snprintf(dir, sizeof dir, "%s%s", base, strcmp(rel, "/") == 0 ? "" : rel);
        double h = cgroup_dir_headroom(dir, v2);
        if (h >= 0 && (best < 0 || h < best)) best = h;
        char *slash = strrchr(rel, '/');
        if (!slash || slash == rel) {
            if (strcmp(rel, "/") == 0) break;
            strcpy(rel, "/");
        } else {
            *slash = '\0';
        }
    }
    return best;
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
 * workers call BLAS concurrently). Every count of threads that call BLAS goes
 * through it: run_start's (toolkit_threads) and a program's own (--threads),
 * each with the room for all its threads (a buffer lives with its thread). Per thread: the buffer, the 64 MB that
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

void blas_memory_guard(int threads, const char *fewer)
{
    double room = rlimit_headroom();
    if (room < 0) return; /* no address-space limit: OpenBLAS allocates as it goes */
    int n = threads < 1 ? 1 : threads > 64 ? 64 : threads;
    /* all n, whatever an earlier call took: OpenBLAS keeps a thread's buffer
     * with the thread (its thread-local allocator), and the warm-up threads are
     * gone; new worker threads take new buffers */
    double need = n * BLAS_BUFFER_BYTES;
    if (room < need) {
        if (n > 1)
            die_user("the address-space limit (ulimit -v) leaves %.0f MB; the BLAS library needs about %.0f MB "
                     "for %d threads that call it at once: raise the limit, or use fewer threads (%s)",
                     room / 1048576, need / 1048576, n, fewer);
        die_user("the address-space limit (ulimit -v) leaves %.0f MB; the BLAS library needs about %.0f MB for its "
                 "work buffer: raise the limit", room / 1048576, need / 1048576);
    }
    pthread_barrier_t all_in;
    pthread_barrier_init(&all_in, NULL, (unsigned)n);
    warmup_arg w = {&all_in};
    pthread_t tid[64];
    int started = 1;
    for (; started < n; started++)
        if (pthread_create(&tid[started], NULL, dgemm_warmup, &w)) break;
    if (started < n) { /* could not start them all: no concurrent warm-up, one buffer only */
        pthread_barrier_destroy(&all_in);
        die_user("cannot start %d threads under the current limits; use fewer (%s)", n, fewer);
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
