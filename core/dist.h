/* dist — the distributed-run layer: the ranks of an MPI job when the toolkit is
 * built with `make MPI=1` (mpicc, -DTK_MPI), else one rank, every call a no-op
 * or a plain copy. Programs that spread work over ranks call dist_init first
 * thing in main; every other program never starts MPI (and runs as before).
 *
 * Conventions under MPI:
 *  - rank 0 writes every output file and prints; the other ranks run quiet
 *    (core_quiet) with stdout on /dev/null, so a run writes what one process
 *    writes;
 *  - a rank that fails (die_user, die_diverged, DIE) prints its one line
 *    ("prog[rank r]: message" on ranks > 0), removes its temporaries and stops
 *    the whole job with MPI_Abort(code): mpirun exits with that code. Until
 *    dist_own_work(), every rank does the same thing (parse the command line,
 *    check the setup), so an error there is rank 0's line only: the other ranks
 *    wait silently for the abort;
 *  - each rank runs dist_workers() worker threads (1 unless the user sets
 *    TOOLKIT_RANK_THREADS): one rank per core is the layout the shares assume.
 */
#ifndef DIST_H
#define DIST_H

#include <stddef.h>

void dist_init(int *argc, char ***argv);
/* The replicated part (command line, setup checks) is over: from here on a
 * rank's error is its own, printed with its rank. */
void dist_own_work(void);
int dist_rank(void);
int dist_size(void);
int dist_mpi(void);                 /* 1 in an MPI build */
/* Worker threads per rank: toolkit_threads() without MPI or with one rank,
 * else TOOLKIT_RANK_THREADS (default 1). */
int dist_workers(void);
/* This rank's contiguous share j0..j1-1 of 0..n-1, cut at multiples of `align`
 * (the last share takes the rest): rank r gets units r·U/size .. (r+1)·U/size of
 * U = ceil(n/align). */
void dist_share(size_t n, size_t align, int rank, int size, size_t *j0, size_t *j1);

/* Collectives over all ranks (any byte count: sent in pieces under 1 GB). */
void dist_barrier(void);
void dist_bcast(void *buf, size_t bytes);            /* from rank 0 */
void dist_send(const void *buf, size_t bytes, int to);
/* The next message from rank `from` (malloc'ed; *bytes its length). */
void *dist_recv(int from, size_t *bytes);
double dist_max(double v);                           /* over all ranks */
double dist_sum(double v);                           /* over all ranks, in rank order */
/* Two-int messages for a task farm: send, blocking receive from one rank, and a
 * non-blocking poll for one from any rank (1 and *from set when one arrived). */
void dist_send_ints(int to, int tag, const int v[2]);
void dist_recv_ints(int from, int tag, int v[2]);
int dist_poll_ints(int tag, int *from, int v[2]);
/* Collective (every rank calls it): if `failed` on any rank, one line from
 * rank 0 (fmt, as rank 0 formats it), its temporaries removed, and the job
 * stops with exit 2; else returns. For errors that any rank may meet alone
 * (an MPI-IO write) but that one line should name. */
void dist_fail_together(int failed, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Stop the whole job now with exit code `code` (MPI_Abort; _exit without MPI),
 * after the caller has printed its one line. */
void dist_abort(int code) __attribute__((noreturn));
/* MPI_Finalize (also at exit); a no-op without MPI. */
void dist_finalize(void);

#endif
