/* core — small shared C for every program of the toolkit:
 * errors, checked allocation, seeded RNG (GSL), .npy / .csv output with atomic
 * rename, run metadata, command-line parsing, progress lines, and the dense
 * linear-algebra helpers (eigenvalues, singular values, κ, τ).
 *
 * Conventions: matrices are float64, row-major (C order); a function that
 * fills an array takes it first (then its inputs, then sizes) where it is a
 * kernel, and a dimension is named next to the array it describes elsewhere;
 * functions that can fail on user input call die_user().
 */
#ifndef CORE_H
#define CORE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <gsl/gsl_rng.h>

/* ---- errors and exit codes --------------------------------------------------
 * Every program exits 0 when it succeeds, 1 on an internal error, 2 on bad
 * input, 3 when training diverged.
 * die_user:     bad flag, bad file, bad value — one line "prog: message" on
 *               stderr, exit code 2. Uncommitted output files are removed first.
 * die_diverged: a training run diverged (a non-finite or exploding loss) — one
 *               line, exit code 3; files already committed stay (they hold the
 *               steps before it).
 * DIE:          an internal error (a bug or an impossible state) — file:line,
 *               exit code 1.
 */
enum { EXIT_INTERNAL = 1, EXIT_USER = 2, EXIT_DIVERGED = 3 };
void die_user(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void die_diverged(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
#define DIE(...) die_internal(__FILE__, __LINE__, __VA_ARGS__)
void die_internal(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
/* Name printed before every error line (default: basename of argv[0], set by run_start). */
void set_program_name(const char *name);
const char *program_name(void);
/* Tests may catch user errors in-process: the hook receives the message and
 * must not return (it longjmps). NULL restores print-and-exit. */
typedef void (*user_error_hook)(const char *msg);
void set_user_error_hook(user_error_hook hook);
/* Called with the exit code at the end of every error path (die_user,
 * die_diverged, DIE), after the message and the removal of the temporaries,
 * instead of _exit; must not return. core/dist.h sets it under MPI, so that
 * a failing rank stops the whole job (MPI_Abort). NULL: _exit. */
typedef void (*exit_hook)(int code);
void set_exit_hook(exit_hook hook);
/* Called on every error path before the exit hook: output.c registers the
 * removal of its uncommitted temporaries here, so errors.c calls nothing above it. */
void set_cleanup_hook(void (*hook)(void));
/* --quiet: no progress or advice lines on stderr (errors are always printed). */
extern int core_quiet;

/* ---- checked allocation (internal error on failure) ------------------------- */
void *xmalloc(size_t bytes);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t bytes);
char *xstrdup(const char *s);
/* count*size with overflow check; user error naming `what` if it overflows. */
size_t checked_mul(size_t count, size_t size, const char *what);

/* ---- memory -------------------------------------------------------------------------
 * mem_available_bytes: what this process may still allocate, in bytes — the
 * smallest of MemAvailable (/proc/meminfo), the headroom under the address-space
 * limit (ulimit -v, RLIMIT_AS) and under the cgroup's memory.max; -1 if unknown.
 * memory_check: prints "<what>: needs X GB; available Y GB" on stderr for 100 MB
 * and more (unless --quiet) and stops with a user error, before anything is
 * allocated, when X exceeds what is available.
 * huge_alloc: count doubles on 2 MB-aligned memory with transparent huge pages
 * requested (release with free()); user error if the allocation fails. On this
 * kind of VM first-touch page faults of a large H cost more than its arithmetic
 * (1.4 s vs 0.16 s for 325 MB). */
double mem_available_bytes(void);
void memory_check(const char *what, double bytes);
/* For `threads` threads that will call BLAS at the same time: a user error when
 * an address-space limit leaves too little room for their work buffers
 * (OpenBLAS would retry its allocation for ever, a hang), then the buffers are
 * taken. run_start calls it for toolkit_threads(); a program that starts
 * threads of its own (--threads) calls it again with their number, before it
 * starts them; `fewer` names how to ask for fewer ("--threads 1"). */
void blas_memory_guard(int threads, const char *fewer);
double *huge_alloc(size_t count, const char *what);

/* ---- random numbers (rng.c): one gsl_rng_mt19937 stream per purpose -------------
 * seed_hash: the toolkit's one seed hash, from which every random stream of
 * every program is seeded: h = splitmix64-chain over the words (seed ^ domain,
 * tag, index) — each word enters through a bijective mix of the running hash
 * xor the word — so no two (seed, tag, index) of a domain share a stream,
 * whatever the seeds (seed + 1 would make one seed's second stream the next
 * seed's first), and distinct triples collide only by a 2^-64-order chance.
 * The domain keeps apart families of streams that are numbered alike:
 *   SEED_RUN    (pi's digits) a run's generators: harness's seed_for streams
 *               (tag = the purpose, index = its instance), quad's draws, the
 *               synthetic images;
 *   SEED_PROBES (0) the probe vectors of hessian/spectra.h (tag = the block,
 *               index = the probe): Lanczos and SLQ;
 *   SEED_TRACE  (0x7ace) spectra's Hutchinson trace probes, independent of the
 *               SLQ probes of the same --probe-seed. */
#define SEED_RUN 0x243f6a8885a308d3ULL
#define SEED_PROBES 0x0ULL
#define SEED_TRACE 0x7aceULL
uint64_t seed_hash(uint64_t domain, uint64_t seed, uint64_t tag, uint64_t index);
/* splitmix64 (Steele, Lea, Flood 2014): advances *x by the golden-ratio
 * increment and returns a bijective 64-bit mix of it (also the probe stream of
 * hessian/spectra.c). */
uint64_t splitmix64(uint64_t *x);
gsl_rng *rng_new(unsigned long seed);
/* Seeds r (an mt19937) so that distinct 64-bit seeds give distinct streams.
 * GSL's own seeding reads only the low 32 bits and maps 0 to its default 4357;
 * seeds 1 .. 2^32-1 keep GSL's stream, 0 and seeds >= 2^32 get a state of their
 * own (GSL's state for the low bits, every word mixed with the whole seed). */
void rng_seed(gsl_rng *r, unsigned long seed);
void rng_free(gsl_rng *r);
/* Variates without including <gsl/gsl_randist.h>, whose gsl_cblas.h clashes
 * with OpenBLAS's <cblas.h> in the same file. */
double rng_gaussian(gsl_rng *r, double sigma);            /* N(0, sigma²) */
double rng_uniform_in(gsl_rng *r, double a, double b);    /* U[a, b) */
unsigned long rng_int(gsl_rng *r, unsigned long n);       /* uniform in 0..n-1 */

/* ---- output files ---------------------------------------------------------------
 * Every output is written to "<path>.tmp.<pid>" and renamed onto <path> by
 * outfile_commit, so an interrupted or failed run never leaves a half file.
 * Uncommitted temporaries are removed on die_user/DIE, on exit and on
 * SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE (then the program dies of that signal);
 * SIGXFSZ is ignored, so a file-size limit is a clean "File too large" error. */
typedef struct outfile outfile;
outfile *outfile_open(const char *path);
FILE *outfile_fp(outfile *f);
void outfile_commit(outfile *f);   /* flush, check, rename; frees f */
void outfile_discard(outfile *f);  /* remove the temporary; frees f */
/* The temporary's name (other processes write into it with MPI-IO before commit). */
const char *outfile_tmp_path(const outfile *f);
/* Removes every uncommitted temporary now (the error paths call it before _exit). */
void outfile_remove_temporaries(void);
/* A child process that writes a temporary (0: none): SIGINT, SIGTERM, SIGHUP or
 * SIGQUIT to this process SIGKILLs and reaps it before the temporaries go. */
void output_watch_child(int pid);
/* mkdir -p; user error if it cannot be created or written. Then the folder is
 * locked for this run: "<dir>/.lock" (flock, held until the process ends; an
 * exclusive holder removes the file when it ends): a second run into the same
 * folder stops with "folder X is in use by process PID" (exit 2), so two runs
 * never mix their files. The folder is then cleared of the previous run's files:
 * those its run.txt lists (a finished run) or its journal ".files" lists (a run
 * killed before its run.txt), the two lists, and the temporaries of processes that
 * no longer run: an interrupted re-run leaves only its own files and no run.txt,
 * never a mix of two runs. Only regular files inside the folder are removed, never
 * through a symbolic link, never the lock. docs/reliability.md. */
void ensure_dir(const char *path);
/* Programs whose runs add to a folder (heatmap into the run it reads,
 * mlp_hessian --cols parts) keep what earlier runs wrote there. */
void output_keep_previous(void);
/* Runs that may write into one folder at the same time (mlp_hessian --cols
 * parts: distinct files) share its lock: a normal run into it is refused
 * while they run, and they while it runs. */
void output_shared_folder(void);
/* Ranks other than 0 of an MPI job (dist_init): rank 0 clears and locks the
 * folders; this process only writes into them. */
void output_rank_follows(void);
/* rm -r without a shell and without following links (temporary folders of
 * tests and benchmarks); 0 on success. */
int remove_tree(const char *dir);
/* "file: <name>" lines for the files this process committed under dir (run.txt). */
void output_list_committed(FILE *fp, const char *dir);
/* run.txt under dir now lists the run's files: the journals ("<folder>/.files", kept
 * since the first commit so that a run killed before its run.txt is cleared too)
 * of dir and the folders under it that this process locked go. */
void output_journal_done(const char *dir);
/* "<dir>/<name>" in a fresh string (caller frees). */
char *path_join(const char *dir, const char *name);
/* outfile_open, csv_open and npy_write of <dir>/<name>. */
outfile *outfile_open_in(const char *dir, const char *name);

/* CSV: header row then rows; csv_row appends a newline. */
outfile *csv_open(const char *path, const char *header);
outfile *csv_open_in(const char *dir, const char *name, const char *header);
void csv_row(outfile *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define csv_close outfile_commit

/* .npy, format 1.0, little-endian float64 '<f8', C order, ndim <= 4. */
void npy_write(const char *path, const double *data, int ndim, const size_t *shape);
void npy_write_in(const char *dir, const char *name, const double *data, int ndim, const size_t *shape);
/* Streaming writer for large arrays: header now, data in chunks, then commit. */
outfile *npy_open(const char *path, int ndim, const size_t *shape);
void npy_write_chunk(outfile *f, const double *data, size_t count);
/* Returns a malloc'ed array; fills ndim and shape[0..ndim-1]. User error on a
 * missing, truncated or non-float64 file. */
double *npy_read(const char *path, int *ndim, size_t shape[4]);
/* 1 if path names a folder: readers report "X is a folder, expected a file". */
int path_is_folder(const char *path);
/* Copies a committed text file to stderr (a program's claims), unless --quiet;
 * outfile_commit_echo: outfile_commit, then the same. */
void echo_file(const char *path);
void outfile_commit_echo(outfile *f);

/* ---- input files (input.c) ------------------------------------------------------------
 * Every reader of a data file opens it here: a regular file (a link to one is
 * followed) of at most max_bytes (0: any size), opened without blocking — a FIFO
 * would block for ever, /dev/zero never end. NULL with one line in err naming
 * `what`: "... is a folder, expected a file", "... is not a regular file (a FIFO,
 * a device or a socket)", "... is N MB, more than the M MB such a file may hold",
 * or the system's reason. *size: the file's size (NULL: not wanted). */
FILE *input_open(const char *path, const char *what, size_t max_bytes, size_t *size, char *err, size_t nerr);
/* The whole file (input_open's checks; a file that grows past max_bytes too) in a
 * fresh buffer with a NUL after its *len bytes; NULL with the reason in err. */
char *input_read_all(const char *path, const char *what, size_t max_bytes, size_t *len, char *err, size_t nerr);

/* ---- a run (run.c) ------------------------------------------------------------------
 * run_start: what every program does first, before parsing its options — names
 * the program for error lines, refuses an address-space limit too small for the
 * BLAS buffers (blas_memory_guard), pins BLAS to one thread (see toolkit_threads)
 * and records argv and the start time (run_begin). run_write_info writes
 * <dir>/run.txt with the command line, seed, git commit and wall time. */
void run_start(int argc, char **argv);
void run_begin(int argc, char **argv);
void run_write_info(const char *dir, unsigned long seed);
/* Adds a line (e.g. "hessian seconds: 1.23") to the run.txt that run_write_info
 * writes next: what varies from run to run (times) lives there, so that the
 * data files of two runs with one seed are byte-identical. */
void run_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The "scale: " line of run.txt: cli_parse sets it to a program's --scale value (its
 * default when the flag is absent), or "none" for a program without a --scale option
 * (one setting, the same at every scale); the verdicts judge checks it. */
void run_set_scale(const char *scale);
double wall_seconds(void); /* monotonic clock */

/* ---- threads (memory.c, parallel.c) ---------------------------------------------------
 * Inside the programs BLAS runs on one thread (run_start pins it): its
 * reductions depend on its thread count (e.g. dsymv inside LAPACK's
 * eigensolvers, dgemm's small-matrix path), ours do not. The parallelism a
 * user asks for with OPENBLAS_NUM_THREADS (else every online core) goes to
 * the toolkit's own worker threads instead — Hessian panels, training runs,
 * sweeps — which split work in a fixed layout, so no result depends on it. */
int toolkit_threads(void);
/* The workers of a model or a loop asked for `asked` threads (0: toolkit_threads()), at most 64. */
int toolkit_workers(int asked);
/* The one worker loop: fn(ctx, i, worker) for every item i in 0..n-1, each
 * exactly once, on parallel_workers(n, threads) threads — the caller's own is
 * worker 0, the others 1.. — items handed out in increasing order, one at a
 * time, to whichever worker is free. `worker` names the thread, for a
 * workspace of its own (allocated on its first item, or before the loop).
 * Deterministic when fn(i) writes only item i's results (and reads nothing
 * another item writes): then nothing depends on the threads or the schedule.
 * prog (NULL: none) is advanced to prog_done0 + the items done. A worker that
 * cannot start is an internal error. */
struct progress;
typedef void (*parallel_fn)(void *ctx, int i, int worker);
void parallel_for(int n, int threads, parallel_fn fn, void *ctx, struct progress *prog, long prog_done0);
/* min(max(threads, 1), n): the workers parallel_for starts for n items (0 when n < 1). */
int parallel_workers(int n, int threads);

/* ---- command line (cli.c) -------------------------------------------------------------
 * A table of options parsed with getopt_long (after run_start). --help prints the summary, every
 * option with its help and default, and exits 0. A bad value or unknown flag is
 * a user error (exit 2). --quiet is always available and sets core_quiet. */
typedef enum { OPT_INT, OPT_LONG, OPT_DOUBLE, OPT_STRING, OPT_FLAG, OPT_DOUBLE_LIST, OPT_INT_LIST } opt_kind;
#define LIST_MAX 64
typedef struct { int n; double v[LIST_MAX]; } double_list;
typedef struct { int n; int v[LIST_MAX]; } int_list;
typedef struct {
    const char *name;   /* long name without dashes */
    opt_kind kind;
    void *target;       /* int*, long*, double*, const char**, int* (flag), double_list*, int_list* */
    const char *help;
} cli_opt;
/* summary: one paragraph printed by --help before the options (may hold newlines). */
void cli_parse(int argc, char **argv, const char *summary, const cli_opt *opts, int nopts);
/* 1 if the last cli_parse set the option whose target this is from the command line
 * (not its default): a flag that must agree with a file says so only when given. */
int cli_was_given(const void *target);
void parse_double_list(const char *flag, const char *text, double_list *out);
void parse_int_list(const char *flag, const char *text, int_list *out);
/* --scale, the flag every experiment takes: "quick" -> 0, "paper" -> 1; user error otherwise. */
int scale_parse(const char *scale);

/* ---- progress on stderr -------------------------------------------------------------
 * A bar when stderr is a terminal, a line every ~10% otherwise, nothing when quiet. */
typedef struct progress {
    const char *label;
    long total, last_shown;
    double t0;
    int tty;
} progress;
void progress_start(progress *p, const char *label, long total);
void progress_update(progress *p, long done);
void progress_end(progress *p);

/* ---- dense linear algebra (LAPACKE), row-major, inputs not modified ----------------- */
/* All eigenvalues of symmetric A (n×n), ascending, into w[n]. */
void sym_eigvals(int n, const double *A, double *w);
/* Eigenvalues il..iu (1-based, ascending order) via dsyevr's index range; returns count. */
int sym_eigvals_range(int n, const double *A, int il, int iu, double *w);
/* Singular values of A (m×n), descending, into s[min(m,n)] (dgesdd). */
void singular_values(int m, int n, const double *A, double *s);

typedef struct {
    double lmin, lmax;       /* smallest and largest eigenvalue */
    double absmin, absmax;   /* smallest and largest |eigenvalue| */
    double kappa;            /* absmax/absmin (= lmax/lmin for SPD); inf if singular */
    int nneg;                /* number of eigenvalues < 0 */
} spectrum;
spectrum sym_spectrum(int n, const double *A);
spectrum spectrum_of(int n, const double *w);   /* from eigenvalues already computed */
double kappa_spd(int n, const double *A);         /* λmax/λmin, user error if not PD */
double kappa_svd(int m, int n, const double *A);  /* σmax/σmin */
/* τ(A) = Σ_i |A_ii| / Σ_ij |A_ij|  (paper eq. (2)); 1 for a diagonal matrix. */
double tau_ratio(int n, const double *A);
/* Quantile p ∈ [0,1] of v[n] by linear interpolation (numpy's default), from a
 * sorted copy (v is not modified); NAN for n = 0. */
double quantile(const double *v, size_t n, double p);
/* Median of x[0..n-1] (mean of the two middle values for even n). ±inf take
 * part as ordinary values; NAN if n ≤ 0 or any x is NaN (or the two middle
 * values are −inf and +inf). x is not modified. */
double median_of(const double *x, int n);
/* Dense helpers kept here so every module shares them. */
double frobenius_sq(size_t count, const double *a);
double max_abs(size_t count, const double *a);
/* Differences of two arrays: max|a−b|; max|a−b| / max|b|; ‖a−b‖₂ / ‖b‖₂
 * (the relative ones are absolute when b = 0). */
double max_abs_diff(size_t count, const double *a, const double *b);
double rel_max_diff(size_t count, const double *a, const double *b);
double rel_l2_diff(size_t count, const double *a, const double *b);

#endif
