/* A run's life: its start (program name, BLAS threads, the memory guard, the
 * clock), its metadata (run.txt) and progress lines. */
#include "core.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
/* The toolkit's commit at build time (the Makefile generates the header). */
#if defined(__has_include)
#if __has_include("toolkit_commit.h")
#include "toolkit_commit.h"
#endif
#endif
#ifndef TOOLKIT_COMMIT
#define TOOLKIT_COMMIT "unknown"
#endif

double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static char *run_command; /* the whole command line, quoted: never cut */
static char run_notes[4096];
static char run_scale[16];
static double run_t0;
static time_t run_started;

/* Appends one argument to out (len used of cap) quoted for a POSIX shell, so
 * that the command line in run.txt is one line that splits back into the same
 * arguments: as is when it holds only safe characters, else in single quotes
 * ('\'' for a quote), and as $'...' (bash, with \n, \t, \xHH) when it holds
 * control characters. Returns the new length (cap: room for the quoted argument,
 * which run_begin allocates). */
static size_t append_quoted(char *out, size_t len, size_t cap, const char *arg)
{
    static const char *safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=,+@%^-";
    int control = 0;
    for (const unsigned char *c = (const unsigned char *)arg; *c; c++) control |= *c < 32 || *c == 127;
    int plain = arg[0] && strspn(arg, safe) == strlen(arg);
    char piece[8];
    const char *open = plain ? "" : control ? "$'" : "'";
    len += snprintf(out + len, cap - len, "%s", open);
    for (const unsigned char *c = (const unsigned char *)arg; *c && len + 8 < cap; c++) {
        if (control) {
            if (*c == '\n') snprintf(piece, sizeof piece, "\\n");
            else if (*c == '\t') snprintf(piece, sizeof piece, "\\t");
            else if (*c < 32 || *c == 127) snprintf(piece, sizeof piece, "\\x%02x", *c);
            else if (*c == '\\' || *c == '\'') snprintf(piece, sizeof piece, "\\%c", *c);
            else snprintf(piece, sizeof piece, "%c", *c);
        } else if (!plain && *c == '\'') {
            snprintf(piece, sizeof piece, "'\\''");
        } else {
            snprintf(piece, sizeof piece, "%c", *c);
        }
        len += snprintf(out + len, cap - len, "%s", piece);
    }
    if (len + 2 < cap && !plain) len += snprintf(out + len, cap - len, "'");
    return len;
}

void run_begin(int argc, char **argv)
{
    size_t len = 0, cap = 16; /* a byte quoted takes at most 4 ("\\xNN"), an argument 4 more and a blank */
    for (int i = 0; i < argc; i++) cap += 4 * strlen(argv[i]) + 5;
    free(run_command);
    run_command = xmalloc(cap);
    run_command[0] = '\0';
    for (int i = 0; i < argc; i++) {
        if (i) run_command[len++] = ' ', run_command[len] = '\0';
        len = append_quoted(run_command, len, cap, argv[i]);
    }
    run_t0 = wall_seconds();
    run_started = time(NULL);
}

void openblas_set_num_threads(int);

void run_start(int argc, char **argv)
{
    set_program_name(argv[0]);
    blas_memory_guard(toolkit_threads(), "OPENBLAS_NUM_THREADS=1");
    openblas_set_num_threads(1);
    run_begin(argc, argv);
}

void run_set_scale(const char *scale) { snprintf(run_scale, sizeof run_scale, "%s", scale); }

void run_note(const char *fmt, ...)
{
    size_t len = strlen(run_notes);
    if (len + 2 >= sizeof run_notes) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(run_notes + len, sizeof run_notes - len - 1, fmt, ap);
    va_end(ap);
    len = strlen(run_notes);
    run_notes[len] = '\n';
    run_notes[len + 1] = '\0';
}

void run_write_info(const char *dir, unsigned long seed)
{
    char when[64];
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S%z", localtime(&run_started));
    char *path = path_join(dir, "run.txt");
    outfile *f = outfile_open(path);
    fprintf(outfile_fp(f), "command: %s\nseed: %lu\n", run_command ? run_command : "", seed);
    if (run_scale[0]) fprintf(outfile_fp(f), "scale: %s\n", run_scale);
    fprintf(outfile_fp(f), "git commit: %s\nstarted: %s\nwall seconds: %.3f\n%s", TOOLKIT_COMMIT, when,
            wall_seconds() - run_t0, run_notes);
    output_list_committed(outfile_fp(f), dir);
    outfile_commit(f);
    output_journal_done(dir);
    free(path);
}

/* ---- progress ------------------------------------------------------------------------- */

void progress_start(progress *p, const char *label, long total)
{
    p->label = label;
    p->total = total > 0 ? total : 1;
    p->last_shown = -1;
    p->t0 = wall_seconds();
    p->tty = isatty(STDERR_FILENO);
}

void progress_update(progress *p, long done)
{
    if (core_quiet) return;
    long pct = 100 * done / p->total;
    if (p->tty) {
        if (pct == p->last_shown) return;
        int width = 30, fill = (int)(width * done / p->total);
        fprintf(stderr, "\r%s [%.*s%*s] %3ld%% %.1fs", p->label, fill,
                "##############################", width - fill, "", pct, wall_seconds() - p->t0);
        p->last_shown = pct;
    } else {
        long decile = pct / 10;
        if (decile == p->last_shown) return;
        fprintf(stderr, "%s: %ld%% (%ld/%ld) %.1fs\n", p->label, pct, done, p->total, wall_seconds() - p->t0);
        p->last_shown = decile;
    }
}

void progress_end(progress *p)
{
    if (core_quiet) return;
    if (p->tty) fprintf(stderr, "\r%s done in %.1fs%40s\n", p->label, wall_seconds() - p->t0, "");
    else if (p->last_shown < 10) fprintf(stderr, "%s: done in %.1fs\n", p->label, wall_seconds() - p->t0);
}
