/* A run's life: its start (program name, BLAS threads, the memory guard, the
 * clock), its metadata (run.txt) and progress lines. */
#include "core.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static char run_command[4096];
static char run_notes[4096];
static double run_t0;
static time_t run_started;

void run_begin(int argc, char **argv)
{
    size_t len = 0;
    run_command[0] = '\0';
    for (int i = 0; i < argc && len + 4 < sizeof run_command; i++)
        len += snprintf(run_command + len, sizeof run_command - len, "%s%s", i ? " " : "", argv[i]);
    run_t0 = wall_seconds();
    run_started = time(NULL);
}

void openblas_set_num_threads(int);

void run_start(int argc, char **argv)
{
    set_program_name(argv[0]);
    blas_memory_guard();
    openblas_set_num_threads(1);
    run_begin(argc, argv);
}

/* The git commit of the working directory, with "-dirty" if it has changes. */
static void git_commit(char *out, size_t n)
{
    snprintf(out, n, "unknown");
    FILE *p = popen("git rev-parse --short=12 HEAD 2>/dev/null && "
                    "(git diff --quiet HEAD 2>/dev/null || echo dirty)", "r");
    if (!p) return;
    char line[64], buf[96] = "";
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = '\0';
        size_t used = strlen(buf);
        snprintf(buf + used, sizeof buf - used, "%s%s", used ? "-" : "", line);
    }
    if (pclose(p) == 0 && buf[0]) snprintf(out, n, "%s", buf);
}

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
    char commit[96], when[64];
    git_commit(commit, sizeof commit);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S%z", localtime(&run_started));
    char *path = path_join(dir, "run.txt");
    outfile *f = outfile_open(path);
    fprintf(outfile_fp(f), "command: %s\nseed: %lu\ngit commit: %s\nstarted: %s\nwall seconds: %.3f\n%s",
            run_command, seed, commit, when, wall_seconds() - run_t0, run_notes);
    output_list_committed(outfile_fp(f), dir);
    outfile_commit(f);
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
