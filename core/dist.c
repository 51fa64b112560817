/* The distributed-run layer (dist.h): MPI under -DTK_MPI, one rank otherwise. */
#include "core/dist.h"
#include "core.h"
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef TK_MPI
#include <mpi.h>
#endif

static int g_rank = 0, g_size = 1;

/* die_user with a message formatted from (fmt, ap): dist_fail_together's one line. */
static __attribute__((noreturn)) void die_user_va(const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    die_user("%s", msg);
}

int dist_rank(void) { return g_rank; }
int dist_size(void) { return g_size; }

int dist_mpi(void)
{
#ifdef TK_MPI
    return 1;
#else
    return 0;
#endif
}

int dist_workers(void)
{
    if (g_size == 1) return toolkit_threads();
    const char *env = getenv("TOOLKIT_RANK_THREADS");
    int n = env ? atoi(env) : 1;
    return n < 1 ? 1 : n > 64 ? 64 : n;
}

void dist_share(size_t n, size_t align, int rank, int size, size_t *j0, size_t *j1)
{
    if (align < 1) align = 1;
    size_t units = (n + align - 1) / align;
    size_t u0 = units * (size_t)rank / (size_t)size, u1 = units * (size_t)(rank + 1) / (size_t)size;
    *j0 = u0 * align < n ? u0 * align : n;
    *j1 = rank == size - 1 || u1 * align > n ? n : u1 * align;
}

#ifdef TK_MPI

enum { CHUNK = 1 << 30 };
static int g_replicated = 1, g_started = 0;

static __attribute__((noreturn)) void abort_job(int code)
{
    int fin = 0;
    MPI_Finalized(&fin);
    if (g_started && !fin && g_size > 1) MPI_Abort(MPI_COMM_WORLD, code);
    _exit(code);
}

void dist_abort(int code)
{
    outfile_remove_temporaries();
    fflush(NULL);
    abort_job(code);
}

/* Ranks > 0 while every rank does the same thing: rank 0 meets the same error
 * and aborts the job, so stay silent and wait for it; speak up only if it does
 * not come (an error of this rank alone). */
static void replicated_error(const char *msg)
{
    if (g_replicated) sleep(30);
    fprintf(stderr, "%s[rank %d]: %s\n", program_name(), g_rank, msg);
    outfile_remove_temporaries();
    fflush(NULL);
    abort_job(EXIT_USER);
}

static void finalize_at_exit(void) { dist_finalize(); }

void dist_init(int *argc, char ***argv)
{
    if (g_started) return;
    /* Every rank, from the start: a file-size limit (ulimit -f) makes a write
     * fail with EFBIG (a one-line error) instead of killing the rank. */
    signal(SIGXFSZ, SIG_IGN);
    int provided;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) DIE("MPI_Init failed");
    g_started = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    atexit(finalize_at_exit);
    set_exit_hook(abort_job);
    if (g_rank > 0) {
        core_quiet = 1;
        output_rank_follows(); /* rank 0 alone clears and locks the output folders */
        if (!freopen("/dev/null", "w", stdout)) DIE("cannot send rank %d's stdout to /dev/null", g_rank);
        set_user_error_hook(replicated_error);
    }
}

void dist_own_work(void)
{
    g_replicated = 0;
    if (g_rank > 0) {
        char name[96];
        snprintf(name, sizeof name, "%s[rank %d]", program_name(), g_rank);
        set_program_name(name);
        set_user_error_hook(NULL);
    }
}

void dist_barrier(void)
{
    if (g_size > 1) MPI_Barrier(MPI_COMM_WORLD);
}

void dist_bcast(void *buf, size_t bytes)
{
    if (g_size == 1) return;
    for (size_t o = 0; o < bytes; o += CHUNK) {
        size_t n = bytes - o < CHUNK ? bytes - o : CHUNK;
        MPI_Bcast((char *)buf + o, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
}

void dist_send(const void *buf, size_t bytes, int to)
{
    unsigned long long n64 = bytes;
    MPI_Send(&n64, 1, MPI_UNSIGNED_LONG_LONG, to, 1, MPI_COMM_WORLD);
    for (size_t o = 0; o < bytes; o += CHUNK) {
        size_t n = bytes - o < CHUNK ? bytes - o : CHUNK;
        MPI_Send((const char *)buf + o, (int)n, MPI_BYTE, to, 2, MPI_COMM_WORLD);
    }
}

void *dist_recv(int from, size_t *bytes)
{
    unsigned long long n64;
    MPI_Recv(&n64, 1, MPI_UNSIGNED_LONG_LONG, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    char *buf = xmalloc((size_t)n64);
    for (size_t o = 0; o < n64; o += CHUNK) {
        size_t n = n64 - o < CHUNK ? n64 - o : CHUNK;
        MPI_Recv(buf + o, (int)n, MPI_BYTE, from, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    *bytes = (size_t)n64;
    return buf;
}

void dist_send_ints(int to, int tag, const int v[2]) { MPI_Send(v, 2, MPI_INT, to, 100 + tag, MPI_COMM_WORLD); }

void dist_recv_ints(int from, int tag, int v[2])
{
    MPI_Recv(v, 2, MPI_INT, from, 100 + tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int dist_poll_ints(int tag, int *from, int v[2])
{
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, 100 + tag, MPI_COMM_WORLD, &flag, &st);
    if (!flag) return 0;
    *from = st.MPI_SOURCE;
    MPI_Recv(v, 2, MPI_INT, st.MPI_SOURCE, 100 + tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return 1;
}

void dist_fail_together(int failed, const char *fmt, ...)
{
    int any = failed;
    if (g_size > 1) MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!any) return;
    if (g_rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        die_user_va(fmt, ap);
        va_end(ap); /* not reached */
    }
    outfile_remove_temporaries();
    fflush(NULL);
    sleep(60); /* rank 0 stops the job (MPI_Abort) */
    abort_job(EXIT_USER);
}

double dist_max(double v)
{
    double out = v;
    if (g_size > 1) MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return out;
}

/* Gathered to rank 0 and added there in rank order (MPI_Allreduce's order is
 * the library's), then broadcast: the same sum for every rank count split. */
double dist_sum(double v)
{
    if (g_size == 1) return v;
    double *all = g_rank == 0 ? xmalloc((size_t)g_size * sizeof(double)) : NULL;
    MPI_Gather(&v, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double s = 0;
    if (g_rank == 0)
        for (int r = 0; r < g_size; r++) s += all[r];
    free(all);
    MPI_Bcast(&s, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return s;
}

void dist_finalize(void)
{
    int fin = 0;
    if (!g_started) return;
    MPI_Finalized(&fin);
    if (!fin) MPI_Finalize();
}

#else /* one rank */

void dist_init(int *argc, char ***argv) { (void)argc, (void)argv; }
void dist_own_work(void) {}
void dist_barrier(void) {}
void dist_bcast(void *buf, size_t bytes) { (void)buf, (void)bytes; }
void dist_send(const void *buf, size_t bytes, int to)
{
    (void)buf, (void)bytes;
    DIE("dist_send to rank %d without MPI", to);
}
void *dist_recv(int from, size_t *bytes)
{
    (void)bytes;
    DIE("dist_recv from rank %d without MPI", from);
}
double dist_max(double v) { return v; }
double dist_sum(double v) { return v; }
void dist_fail_together(int failed, const char *fmt, ...)
{
    if (!failed) return;
    va_list ap;
    va_start(ap, fmt);
    die_user_va(fmt, ap);
    va_end(ap); /* not reached */
}
void dist_send_ints(int to, int tag, const int v[2])
{
    (void)tag, (void)v;
    DIE("dist_send_ints to rank %d without MPI", to);
}
void dist_recv_ints(int from, int tag, int v[2])
{
    (void)tag, (void)v;
    DIE("dist_recv_ints from rank %d without MPI", from);
}
int dist_poll_ints(int tag, int *from, int v[2])
{
    (void)tag, (void)from, (void)v;
    return 0;
}
void dist_finalize(void) {}
void dist_abort(int code)
{
    outfile_remove_temporaries();
    fflush(NULL);
    _exit(code);
}

#endif
