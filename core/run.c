/* Run metadata (run.txt), command-line parsing and progress lines. */
#include "core.h"
#include <errno.h>
#include <float.h>
#include <stdarg.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int core_quiet = 0;

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

/* ---- command line ----------------------------------------------------------------- */

/* strtod with errno judged: ERANGE on a subnormal result (finite, non-zero,
 * below DBL_MIN in magnitude) is a valid number; overflow (±inf) and an
 * underflow to zero are not. Returns 0 on success. */
static int to_double(const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end || !isfinite(v)) return -1;
    if (errno && !(errno == ERANGE && v != 0 && fabs(v) < DBL_MIN)) return -1;
    *out = v;
    return 0;
}

static void parse_number(const char *flag, const char *text, opt_kind kind, void *target)
{
    char *end;
    errno = 0;
    if (kind == OPT_DOUBLE) {
        double v;
        if (to_double(text, &v)) die_user("--%s expects a number, got '%s'", flag, text);
        *(double *)target = v;
    } else {
        long v = strtol(text, &end, 10);
        if (end == text || *end || errno) die_user("--%s expects an integer, got '%s'", flag, text);
        if (kind == OPT_INT) {
            if (v < -2147483647L || v > 2147483647L) die_user("--%s: %s is out of range", flag, text);
            *(int *)target = (int)v;
        } else {
            *(long *)target = v;
        }
    }
}

void parse_double_list(const char *flag, const char *text, double_list *out)
{
    char *copy = xstrdup(text), *save = NULL;
    out->n = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (out->n == LIST_MAX) { free(copy); die_user("--%s: more than %d values", flag, LIST_MAX); }
        double v;
        if (to_double(tok, &v)) {
            char bad[64];
            snprintf(bad, sizeof bad, "%s", tok);
            free(copy);
            die_user("--%s expects comma-separated numbers, got '%s'", flag, bad);
        }
        out->v[out->n++] = v;
    }
    free(copy);
    if (out->n == 0) die_user("--%s expects at least one value", flag);
}

void parse_int_list(const char *flag, const char *text, int_list *out)
{
    double_list d;
    parse_double_list(flag, text, &d);
    out->n = d.n;
    for (int i = 0; i < d.n; i++) {
        if (d.v[i] != floor(d.v[i]) || fabs(d.v[i]) > 2147483647.0)
            die_user("--%s expects comma-separated integers, got '%s'", flag, text);
        out->v[i] = (int)d.v[i];
    }
}

static void print_default(FILE *fp, const cli_opt *o)
{
    switch (o->kind) {
    case OPT_INT: fprintf(fp, " (default %d)", *(int *)o->target); break;
    case OPT_LONG: fprintf(fp, " (default %ld)", *(long *)o->target); break;
    case OPT_DOUBLE: fprintf(fp, " (default %g)", *(double *)o->target); break;
    case OPT_STRING:
        if (*(const char **)o->target) fprintf(fp, " (default %s)", *(const char **)o->target);
        break;
    case OPT_DOUBLE_LIST: case OPT_INT_LIST: {
        const double_list *dl = o->target;
        const int_list *il = o->target;
        int n = o->kind == OPT_DOUBLE_LIST ? dl->n : il->n;
        if (!n) break;
        fprintf(fp, " (default ");
        for (int i = 0; i < n; i++) {
            if (o->kind == OPT_DOUBLE_LIST) fprintf(fp, "%s%g", i ? "," : "", dl->v[i]);
            else fprintf(fp, "%s%d", i ? "," : "", il->v[i]);
        }
        fprintf(fp, ")");
        break;
    }
    case OPT_FLAG: break;
    }
}

static void print_help(const char *summary, const cli_opt *opts, int nopts)
{
    printf("usage: %s [options]\n\n%s\n\noptions:\n", program_name(), summary);
    for (int i = 0; i < nopts; i++) {
        const cli_opt *o = &opts[i];
        const char *arg = o->kind == OPT_FLAG ? "" : o->kind == OPT_STRING ? " TEXT"
                        : o->kind == OPT_DOUBLE_LIST || o->kind == OPT_INT_LIST ? " LIST" : " N";
        char left[64];
        snprintf(left, sizeof left, "--%s%s", o->name, arg);
        printf("  %-24s %s", left, o->help);
        print_default(stdout, o);
        printf("\n");
    }
    printf("  %-24s %s\n  %-24s %s\n", "--quiet", "no progress output on stderr",
           "--help", "print this help and exit");
}

/* Name of long option i (the table's, then quiet and help). */
static const char *lo_names(const cli_opt *opts, int nopts, int i)
{
    return i < nopts ? opts[i].name : i == nopts ? "quiet" : "help";
}

void openblas_set_num_threads(int);

int toolkit_threads(void)
{
    const char *env = getenv("OPENBLAS_NUM_THREADS");
    char *end;
    long n = env ? strtol(env, &end, 10) : 0;
    if (!env || end == env || *end || n < 1) n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 64 ? 64 : (int)n;
}

void cli_parse(int argc, char **argv, const char *summary, const cli_opt *opts, int nopts)
{
    set_program_name(argv[0]);
    blas_memory_guard();
    openblas_set_num_threads(1);
    set_program_name(argv[0]);
    run_begin(argc, argv);
    /* On the stack: a bad value stops in die_user from inside the loop, and
     * nothing must be left allocated then (in-process tests catch it). */
    struct option lo[nopts + 3];
    memset(lo, 0, sizeof lo);
    for (int i = 0; i < nopts; i++) {
        lo[i].name = opts[i].name;
        lo[i].has_arg = opts[i].kind == OPT_FLAG ? no_argument : required_argument;
        lo[i].val = 1000 + i;
    }
    /* Every long option's val is >= 256 (quiet and help too), so after an error
     * getopt's optopt tells the cases apart: 0 an unknown (or ambiguous) long
     * option, named by argv[optind-1]; >= 256 a long option given a value it
     * does not take, or (':') missing one; 1..255 an unknown short option,
     * named by optopt itself (argv[optind-1] may be an earlier argument). */
    enum { VAL_QUIET = 998, VAL_HELP = 999 };
    lo[nopts] = (struct option){"quiet", no_argument, NULL, VAL_QUIET};
    lo[nopts + 1] = (struct option){"help", no_argument, NULL, VAL_HELP};
    opterr = 0;
    optind = 0; /* 0, not 1: glibc then resets its state too (a second argv after an error mid-cluster) */
    int c, idx;
    while ((c = getopt_long(argc, argv, ":", lo, &idx)) != -1) {
        if (c == VAL_HELP) { print_help(summary, opts, nopts); exit(0); }
        if (c == VAL_QUIET) { core_quiet = 1; continue; }
        if (c == '?' || c == ':') {
            int oo = optopt;
            const char *lname = oo == VAL_QUIET ? "quiet" : oo == VAL_HELP ? "help"
                              : oo >= 1000 && oo < 1000 + nopts ? opts[oo - 1000].name : NULL;
            char bad[80];
            if (oo > 0 && oo < 256) snprintf(bad, sizeof bad, "-%c", oo);
            else if (lname) snprintf(bad, sizeof bad, "--%s", lname);
            else snprintf(bad, sizeof bad, "%.*s", (int)strcspn(argv[optind - 1], "="), argv[optind - 1]);
            if (c == ':') die_user("option %s needs a value (see --help)", bad);
            if (lname) die_user("option %s takes no value (see --help)", bad);
            if (oo > 0 && oo < 256 && (oo < 32 || oo > 126))
                die_user("unknown option character 0x%02x (see --help)", (unsigned)oo);
            if (!oo && bad[0] == '-' && bad[1] == '-' && bad[2]) { /* an abbreviation of two or more? */
                char cands[160] = "";
                int nc = 0;
                size_t blen = strlen(bad + 2);
                for (int i = 0; i < nopts + 2; i++)
                    if (strncmp(lo_names(opts, nopts, i), bad + 2, blen) == 0) {
                        size_t used = strlen(cands);
                        snprintf(cands + used, sizeof cands - used, "%s--%s", nc++ ? ", " : "",
                                 lo_names(opts, nopts, i));
                    }
                if (nc > 1) die_user("ambiguous option %s (could be %s)", bad, cands);
            }
            die_user("unknown option %s (see --help)", bad);
        }
        const cli_opt *o = &opts[c - 1000];
        switch (o->kind) {
        case OPT_FLAG: *(int *)o->target = 1; break;
        case OPT_STRING: *(const char **)o->target = optarg; break;
        case OPT_DOUBLE_LIST: parse_double_list(o->name, optarg, o->target); break;
        case OPT_INT_LIST: parse_int_list(o->name, optarg, o->target); break;
        default: parse_number(o->name, optarg, o->kind, o->target); break;
        }
    }
    if (optind < argc) die_user("unexpected argument '%s' (see --help)", argv[optind]);
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
