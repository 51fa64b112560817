/* sweep — any program of the toolkit over a grid of flag values and seeds, and
 * every statistic its runs wrote in one table (make sweep; docs/running.md).
 *
 *   sweep --prog fig6 --vary '--C 16 32 64; --heads 2 4' --seeds 3 --stat fig6.value.log10_ratio
 *
 * runs build/bin/fig6 once per (C, heads, seed) into
 * <out>/runs/C=16,heads=2/seed1/ ... (the program's own run folder: stats.csv,
 * run.txt), at most --jobs at a time, each with one BLAS thread, reusing a run
 * whose run.txt is there; then writes <out>/sweep.csv (one row per run: the
 * varied flags' values, the seed, then every statistic any run wrote, in the
 * order first seen; "nan" where a run lacks it) and, with --stat, <out>/band.csv
 * (that statistic over seeds per point: n, mean, sd, min, max; x = the first
 * varied flag, one series per value of the others) for plots/sweep.gp.
 * --tasks FILE writes the missing runs' command lines for run_tasks (MPI
 * ranks, make sweep-mpi) instead of running them; --collect-only only writes
 * the tables. The flags of a run: --base (the program's verdict flags; the word
 * SEED stands for the seed), --flags, then the grid point's values, then --out.
 * Every word must be plain ([A-Za-z0-9._,:=+/-]): a command line never needs a
 * quote, so the task list is safe for /bin/sh. A sweep folder remembers its
 * plan (sweep.txt); another plan into it is refused.
 */
#include "core/core.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_WORDS 128
#define MAX_AXES 6
#define MAX_VALUES 32

typedef struct {
    char flag[64];                 /* "--C" */
    int n;
    char value[MAX_VALUES][64];
} axis;

typedef struct {
    const char *bin, *prog, *base, *flags, *vary, *stat, *out, *tasks;
    int seeds, seed0, jobs, collect_only;
    int naxes;
    axis ax[MAX_AXES];
    int nbase, nflags;
    char *base_copy, *flags_copy;  /* the words point into these */
    char *base_w[MAX_WORDS], *flags_w[MAX_WORDS];
} sweep_args;

typedef struct {
    int combo, seed;               /* combo: mixed-radix index over the axes */
    char dir[1024];
    char *argv[2 * MAX_WORDS + 8];
    int argc;
} run_plan;

static const char *SUMMARY =
    "Runs a program of the toolkit over a grid of flag values and seeds, and gathers every statistic its\n"
    "runs wrote (stats.csv) into one table: <out>/sweep.csv, one row per run (the varied flags, the seed,\n"
    "then every statistic); with --stat, <out>/band.csv: that statistic per grid point over the seeds\n"
    "(n, mean, sd, min, max; x = the first varied flag, one series per value of the others), which\n"
    "plots/sweep.gp draws (make sweep PROG=fig6 VARY='--C 16 32 64' SEEDS=3 STAT=fig6.value.log10_ratio).\n"
    "Runs: <out>/runs/<flag=value,...>/seed<s>/, one BLAS thread each, --jobs at a time; a run whose run.txt\n"
    "exists is reused. Each run's flags: --base (the word SEED stands for the seed), --flags, the grid\n"
    "point's values, --out, --quiet. --tasks FILE writes the missing runs as shell lines for run_tasks\n"
    "(MPI ranks) instead of running them. Words must be plain: letters, digits and . _ , : = + / -.";

/* ---- parsing ----------------------------------------------------------------------- */

static int plain_word(const char *w)
{
    return *w && strspn(w, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._,:=+/-") == strlen(w);
}

/* Splits text at blanks into words (each plain), in place. */
static int split_words(char *text, char **w, int cap, const char *what)
{
    int n = 0;
    for (char *tok = strtok(text, " \t"); tok; tok = strtok(NULL, " \t")) {
        if (!plain_word(tok))
            die_user("%s: '%s' is not a plain word (letters, digits and . _ , : = + / - only)", what, tok);
        if (n == cap) die_user("%s: more than %d words", what, cap);
        w[n++] = tok;
    }
    return n;
}

/* --vary: groups separated by ';', each "--flag v1 v2 ...". */
static void parse_vary(sweep_args *a)
{
    char *text = xstrdup(a->vary);
    for (char *group = text, *next; group; group = next) {
        next = strchr(group, ';');
        if (next) *next++ = '\0';
        char *w[MAX_VALUES + 1];
        int n = split_words(group, w, MAX_VALUES + 1, "--vary");
        if (n == 0) continue;
        if (a->naxes == MAX_AXES) die_user("--vary: more than %d flags", MAX_AXES);
        if (strncmp(w[0], "--", 2) != 0 || !w[0][2] || strlen(w[0]) >= 64)
            die_user("--vary: each group starts with a flag (--name), got '%s'", w[0]);
        if (n < 2) die_user("--vary: %s has no values", w[0]);
        axis *x = &a->ax[a->naxes++];
        snprintf(x->flag, sizeof x->flag, "%s", w[0]);
        for (int i = 1; i < n; i++) {
            if (strncmp(w[i], "--", 2) == 0) die_user("--vary: '%s' after %s: separate flags with ';'", w[i], w[0]);
            if (strlen(w[i]) >= 64) die_user("--vary: value '%.20s...' too long", w[i]);
            snprintf(x->value[x->n++], 64, "%s", w[i]);
        }
        for (int j = 0; j < a->naxes - 1; j++)
            if (!strcmp(a->ax[j].flag, x->flag)) die_user("--vary: %s given twice", x->flag);
    }
    free(text);
    if (a->naxes == 0) die_user("--vary: nothing to vary (e.g. --vary '--C 16 32 64')");
}

static void parse_args(sweep_args *a, int argc, char **argv)
{
    *a = (sweep_args){.bin = NULL, .prog = "", .base = "", .flags = "", .vary = "", .stat = "", .out = "",
                      .seeds = 3, .seed0 = 1, .jobs = 0};
    const cli_opt opts[] = {
        {"prog", OPT_STRING, &a->prog, "the program to run (a name in --bin: fig6, train_compare, ...)"},
        {"bin", OPT_STRING, &a->bin, "the folder of the toolkit's programs (default: this program's own)"},
        {"vary", OPT_STRING, &a->vary, "the grid: '--flag v1 v2 ...; --flag2 w1 w2' (every combination is run)"},
        {"base", OPT_STRING, &a->base, "flags every run gets first; SEED stands for the run's seed (make sweep: the program's verdict flags)"},
        {"flags", OPT_STRING, &a->flags, "more flags every run gets (after --base, before the grid's)"},
        {"seeds", OPT_INT, &a->seeds, "seeds per grid point"},
        {"seed0", OPT_INT, &a->seed0, "the first seed (seeds seed0 .. seed0+seeds-1)"},
        {"stat", OPT_STRING, &a->stat, "a statistic of stats.csv to summarise over seeds into band.csv"},
        {"jobs", OPT_INT, &a->jobs, "runs at a time (0: every core)"},
        {"tasks", OPT_STRING, &a->tasks, "write the missing runs' command lines here (for run_tasks) instead of running them"},
        {"collect-only", OPT_FLAG, &a->collect_only, "run nothing: only write sweep.csv (and band.csv) from the runs there"},
        {"out", OPT_STRING, &a->out, "the sweep's folder"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv, SUMMARY, opts, sizeof opts / sizeof *opts);
    if (!a->prog[0] || strspn(a->prog, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(a->prog))
        die_user("--prog must name a program of the toolkit (lower-case letters, digits, _), got '%s'", a->prog);
    if (!a->out[0]) die_user("--out: the sweep's folder is required");
    if (a->seeds < 1 || a->seeds > 1000) die_user("--seeds must be in 1..1000 (got %d)", a->seeds);
    if (a->seed0 < 0) die_user("--seed0 must be >= 0 (got %d)", a->seed0);
    if (a->jobs < 0 || a->jobs > 256) die_user("--jobs must be in 0..256 (got %d)", a->jobs);
    if (a->jobs == 0) a->jobs = (int)sysconf(_SC_NPROCESSORS_ONLN) > 0 ? (int)sysconf(_SC_NPROCESSORS_ONLN) : 1;
    if (a->stat[0] && !plain_word(a->stat)) die_user("--stat: '%s' is not a statistic's name", a->stat);
    parse_vary(a);
    a->base_copy = xstrdup(a->base), a->flags_copy = xstrdup(a->flags);
    a->nbase = split_words(a->base_copy, a->base_w, MAX_WORDS, "--base");
    a->nflags = split_words(a->flags_copy, a->flags_w, MAX_WORDS, "--flags");
    for (int i = 0; i < a->nbase + a->nflags; i++) {
        const char *w = i < a->nbase ? a->base_w[i] : a->flags_w[i - a->nbase];
        if (!strcmp(w, "--out") || !strcmp(w, "--seed")) {
            if (!strcmp(w, "--seed") && i < a->nbase) continue; /* --base's own --seed SEED */
            die_user("--flags: %s is the sweep's to set", w);
        }
    }
    if (!a->bin) {
        static char self[4096];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0) die_user("cannot find this program's folder: give --bin");
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) *slash = '\0';
        a->bin = self;
    }
}

/* ---- the plan ------------------------------------------------------------------------ */

static int ncombos(const sweep_args *a)
{
    int n = 1;
    for (int i = 0; i < a->naxes; i++) n *= a->ax[i].n;
    return n;
}

/* The value index of axis i in combo c (the last axis varies fastest). */
static int value_of(const sweep_args *a, int c, int i)
{
    for (int j = a->naxes - 1; j > i; j--) c /= a->ax[j].n;
    return c % a->ax[i].n;
}

/* "C=16,heads=2": a grid point's folder name. */
static void combo_name(char *buf, size_t cap, const sweep_args *a, int c)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < a->naxes; i++)
        used += (size_t)snprintf(buf + used, used < cap ? cap - used : 0, "%s%s=%s", i ? "," : "", a->ax[i].flag + 2,
                                 a->ax[i].value[value_of(a, c, i)]);
    if (used >= cap) die_user("--vary: a grid point's name is too long");
}

static char *seed_word(const char *w, int seed)
{
    if (strcmp(w, "SEED") != 0) return xstrdup(w);
    char buf[24];
    snprintf(buf, sizeof buf, "%d", seed);
    return xstrdup(buf);
}

static run_plan *make_plan(const sweep_args *a, int *nruns)
{
    int nc = ncombos(a), n = nc * a->seeds;
    run_plan *p = xcalloc((size_t)n, sizeof *p);
    for (int c = 0; c < nc; c++)
        for (int s = 0; s < a->seeds; s++) {
            run_plan *r = &p[c * a->seeds + s];
            r->combo = c, r->seed = a->seed0 + s;
            char name[512];
            combo_name(name, sizeof name, a, c);
            snprintf(r->dir, sizeof r->dir, "%s/runs/%s/seed%d", a->out, name, r->seed);
            char prog[2048];
            snprintf(prog, sizeof prog, "%s/%s", a->bin, a->prog);
            r->argv[r->argc++] = xstrdup(prog);
            for (int i = 0; i < a->nbase; i++) r->argv[r->argc++] = seed_word(a->base_w[i], r->seed);
            for (int i = 0; i < a->nflags; i++) r->argv[r->argc++] = xstrdup(a->flags_w[i]);
            for (int i = 0; i < a->naxes; i++) {
                r->argv[r->argc++] = xstrdup(a->ax[i].flag);
                r->argv[r->argc++] = xstrdup(a->ax[i].value[value_of(a, c, i)]);
            }
            if (!a->nbase) { /* no --base: the seed still varies */
                r->argv[r->argc++] = xstrdup("--seed");
                r->argv[r->argc++] = seed_word("SEED", r->seed);
            }
            r->argv[r->argc++] = xstrdup("--out");
            r->argv[r->argc++] = xstrdup(r->dir);
            r->argv[r->argc++] = xstrdup("--quiet");
            r->argv[r->argc] = NULL;
        }
    *nruns = n;
    return p;
}

static void free_plan(run_plan *p, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < p[i].argc; j++) free(p[i].argv[j]);
    free(p);
}

/* <out>/sweep.txt: what the folder's runs are — the program, its flags and the names of
 * the varied flags on the first four lines, the values after. A folder whose first four
 * lines differ holds another sweep and is refused; more values or seeds may be added
 * (a grid point's runs are the same runs). */
static void check_plan_file(const sweep_args *a)
{
    char head[4096], values[4096] = "";
    int used = snprintf(head, sizeof head, "prog: %s\nbase: %s\nflags: %s\naxes:", a->prog, a->base, a->flags);
    for (int i = 0; i < a->naxes; i++) used += snprintf(head + used, sizeof head - (size_t)used, " %s", a->ax[i].flag);
    snprintf(head + used, sizeof head - (size_t)used, "\n");
    used = 0;
    for (int i = 0; i < a->naxes; i++) {
        used += snprintf(values + used, sizeof values - (size_t)used, "values %s:", a->ax[i].flag);
        for (int j = 0; j < a->ax[i].n; j++) used += snprintf(values + used, sizeof values - (size_t)used, " %s", a->ax[i].value[j]);
        used += snprintf(values + used, sizeof values - (size_t)used, "\n");
    }
    char *path = path_join(a->out, "sweep.txt");
    FILE *f = fopen(path, "r");
    if (f) {
        char have[4096];
        size_t n = fread(have, 1, sizeof have - 1, f);
        have[n] = '\0';
        fclose(f);
        if (strncmp(have, head, strlen(head)) != 0)
            die_user("%s holds a sweep of other flags (its sweep.txt): give another --out (make sweep SWEEP_NAME=...)", a->out);
    }
    outfile *o = outfile_open(path);
    fprintf(outfile_fp(o), "%s%s", head, values);
    outfile_commit(o);
    free(path);
}

/* ---- running ----------------------------------------------------------------------- */

static int run_done(const run_plan *r)
{
    char *p = path_join(r->dir, "run.txt");
    int ok = access(p, F_OK) == 0;
    free(p);
    return ok;
}

/* mkdir -p of the run's parent (the run locks and fills its own folder). */
static void make_parents(const char *dir)
{
    char *d = xstrdup(dir);
    for (char *s = d + 1; *s; s++)
        if (*s == '/') {
            *s = '\0';
            if (mkdir(d, 0777) != 0 && errno != EEXIST) die_user("cannot create %s: %s", d, strerror(errno));
            *s = '/';
        }
    free(d);
}

static pid_t start_run(const run_plan *r)
{
    make_parents(r->dir);
    char log[1100];
    snprintf(log, sizeof log, "%s.log", r->dir);
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) die_user("cannot write %s: %s", log, strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) die_user("cannot start a run: %s", strerror(errno));
    if (pid == 0) {
        dup2(fd, STDOUT_FILENO), dup2(fd, STDERR_FILENO);
        setenv("OPENBLAS_NUM_THREADS", "1", 1);
        execv(r->argv[0], r->argv);
        fprintf(stderr, "cannot run %s: %s\n", r->argv[0], strerror(errno));
        _exit(127);
    }
    close(fd);
    return pid;
}

/* The last line of a run's log, for the one-line error. */
static void last_log_line(const run_plan *r, char *buf, size_t cap)
{
    char log[1100];
    snprintf(log, sizeof log, "%s.log", r->dir);
    buf[0] = '\0';
    FILE *f = fopen(log, "r");
    if (!f) return;
    char line[1024];
    while (fgets(line, sizeof line, f))
        if (line[0] != '\n') snprintf(buf, cap, "%.*s", (int)strcspn(line, "\n"), line);
    fclose(f);
}

static void run_all(run_plan *p, int n, int jobs)
{
    pid_t *pid = xcalloc((size_t)n, sizeof *pid);
    int next = 0, running = 0, done = 0, todo = 0, failed = -1;
    for (int i = 0; i < n; i++) todo += !run_done(&p[i]);
    progress prog;
    progress_start(&prog, "sweep", todo);
    for (;;) {
        while (failed < 0 && running < jobs && next < n) {
            if (!run_done(&p[next])) pid[next] = start_run(&p[next]), running++;
            next++;
        }
        if (running == 0) break;
        int st;
        pid_t w = wait(&st);
        if (w < 0) {
            if (errno == EINTR) continue;
            break;
        }
        running--, done++;
        progress_update(&prog, done);
        for (int i = 0; i < n; i++)
            if (pid[i] == w) {
                pid[i] = 0;
                if ((!WIFEXITED(st) || WEXITSTATUS(st) != 0) && failed < 0) failed = i;
            }
    }
    progress_end(&prog);
    free(pid);
    if (failed >= 0) {
        char why[1024];
        last_log_line(&p[failed], why, sizeof why);
        die_user("the run into %s failed: %s (its log: %s.log)", p[failed].dir, why[0] ? why : "no message",
                 p[failed].dir);
    }
}

static void write_tasks(const sweep_args *a, run_plan *p, int n)
{
    outfile *o = outfile_open(a->tasks);
    FILE *f = outfile_fp(o);
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (run_done(&p[i])) continue;
        fprintf(f, "mkdir -p %s && OPENBLAS_NUM_THREADS=1", p[i].dir);
        for (int j = 0; j < p[i].argc; j++) fprintf(f, " %s", p[i].argv[j]);
        fprintf(f, "\n");
        k++;
    }
    outfile_commit(o);
    if (!core_quiet) fprintf(stderr, "sweep: %d of %d runs to do, in %s\n", k, n, a->tasks);
}

/* ---- the tables ---------------------------------------------------------------------- */

typedef struct {
    int n, cap;
    char **name;
} name_list;

static int name_index(name_list *l, const char *name, int add)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->name[i], name)) return i;
    if (!add) return -1;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->name = xrealloc(l->name, (size_t)l->cap * sizeof *l->name);
    }
    l->name[l->n] = xstrdup(name);
    return l->n++;
}

/* One run's stats.csv: "name,value" rows (the values kept as written). */
typedef struct {
    int n;
    int *col;
    char **value;
} run_stats;

static run_stats read_stats(const run_plan *r, name_list *names)
{
    run_stats s = {0};
    char *path = path_join(r->dir, "stats.csv");
    FILE *f = fopen(path, "r");
    if (!f) die_user("%s: cannot read (%s): the run is missing or failed", path, strerror(errno));
    char line[4096];
    int cap = 0, lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (lineno == 1 && !strcmp(line, "name,value")) continue; /* the header */
        char *comma = strchr(line, ',');
        if (!comma || comma == line || !plain_word(comma + 1) || strchr(comma + 1, ','))
            die_user("%s line %d: expected 'name,value'", path, lineno);
        *comma = '\0';
        if (s.n == cap) {
            cap = cap ? 2 * cap : 64;
            s.col = xrealloc(s.col, (size_t)cap * sizeof *s.col);
            s.value = xrealloc(s.value, (size_t)cap * sizeof *s.value);
        }
        s.col[s.n] = name_index(names, line, 1);
        s.value[s.n++] = xstrdup(comma + 1);
    }
    fclose(f);
    free(path);
    return s;
}

static void free_stats(run_stats *s)
{
    for (int i = 0; i < s->n; i++) free(s->value[i]);
    free(s->col), free(s->value);
}

static void write_sweep_csv(const sweep_args *a, const run_plan *p, run_stats *st, int n, const name_list *names)
{
    char *path = path_join(a->out, "sweep.csv");
    outfile *o = outfile_open(path);
    FILE *f = outfile_fp(o);
    for (int i = 0; i < a->naxes; i++) fprintf(f, "%s,", a->ax[i].flag + 2);
    fprintf(f, "seed");
    for (int j = 0; j < names->n; j++) fprintf(f, ",%s", names->name[j]);
    fprintf(f, "\n");
    const char **row = xcalloc((size_t)(names->n ? names->n : 1), sizeof *row);
    for (int r = 0; r < n; r++) {
        for (int j = 0; j < names->n; j++) row[j] = "nan";
        for (int k = 0; k < st[r].n; k++) row[st[r].col[k]] = st[r].value[k];
        for (int i = 0; i < a->naxes; i++) fprintf(f, "%s,", a->ax[i].value[value_of(a, p[r].combo, i)]);
        fprintf(f, "%d", p[r].seed);
        for (int j = 0; j < names->n; j++) fprintf(f, ",%s", row[j]);
        fprintf(f, "\n");
    }
    free(row);
    outfile_commit(o);
    free(path);
}

/* band.csv: --stat per grid point over the seeds; x = the first axis, the series = the others. */
static void write_band(const sweep_args *a, const run_plan *p, run_stats *st, int n, name_list *names)
{
    int col = name_index(names, a->stat, 0);
    if (col < 0) die_user("--stat: no run wrote '%s' (sweep.csv has every statistic)", a->stat);
    char *path = path_join(a->out, "band.csv");
    outfile *o = outfile_open(path);
    FILE *f = outfile_fp(o);
    fprintf(f, "# %s over seeds %d..%d against --%s (sweep of %s)\n", a->stat, a->seed0, a->seed0 + a->seeds - 1,
            a->ax[0].flag + 2, a->prog);
    fprintf(f, "series,%s,n,mean,sd,min,max\n", a->ax[0].flag + 2);
    int nc = ncombos(a), per = nc / a->ax[0].n;
    double *v = xmalloc((size_t)a->seeds * sizeof(double));
    for (int g = 0; g < per; g++)          /* the series: the other axes' values */
        for (int x = 0; x < a->ax[0].n; x++) {
            int c = x * per + g, k = 0;
            for (int r = 0; r < n; r++) {
                if (p[r].combo != c) continue;
                for (int j = 0; j < st[r].n; j++)
                    if (st[r].col[j] == col) {
                        double val = strtod(st[r].value[j], NULL);
                        if (isfinite(val)) v[k++] = val;
                    }
            }
            double mean = 0, sd = 0, lo = INFINITY, hi = -INFINITY;
            for (int i = 0; i < k; i++) mean += v[i] / k, lo = fmin(lo, v[i]), hi = fmax(hi, v[i]);
            for (int i = 0; i < k; i++) sd += (v[i] - mean) * (v[i] - mean);
            sd = k > 1 ? sqrt(sd / (k - 1)) : 0;
            char series[512] = "all";
            if (a->naxes > 1) {
                size_t used = 0;
                for (int i = 1; i < a->naxes; i++)
                    used += (size_t)snprintf(series + used, sizeof series - used, "%s%s=%s", i > 1 ? " " : "",
                                             a->ax[i].flag + 2, a->ax[i].value[value_of(a, c, i)]);
            }
            if (k) fprintf(f, "%s,%s,%d,%.10g,%.10g,%.10g,%.10g\n", series, a->ax[0].value[x], k, mean, sd, lo, hi);
            else fprintf(f, "%s,%s,0,nan,nan,nan,nan\n", series, a->ax[0].value[x]);
        }
    free(v);
    outfile_commit(o);
    free(path);
}

static void collect(const sweep_args *a, const run_plan *p, int n)
{
    name_list names = {0};
    run_stats *st = xcalloc((size_t)n, sizeof *st);
    for (int r = 0; r < n; r++) st[r] = read_stats(&p[r], &names);
    write_sweep_csv(a, p, st, n, &names);
    if (a->stat[0]) write_band(a, p, st, n, &names);
    for (int r = 0; r < n; r++) free_stats(&st[r]);
    for (int j = 0; j < names.n; j++) free(names.name[j]);
    free(names.name), free(st);
}

int main(int argc, char **argv)
{
    sweep_args a;
    parse_args(&a, argc, argv);
    int n;
    run_plan *p = make_plan(&a, &n);
    if (access(p[0].argv[0], X_OK) != 0) die_user("--prog: %s is not a program (build it first: make)", p[0].argv[0]);
    char *inside = path_join(a.out, "x");
    make_parents(inside);
    free(inside);
    check_plan_file(&a);
    if (a.tasks) write_tasks(&a, p, n);
    else {
        if (!a.collect_only) run_all(p, n, a.jobs);
        collect(&a, p, n);
        if (!core_quiet) fprintf(stderr, "sweep: %d runs of %s in %s/sweep.csv\n", n, a.prog, a.out);
    }
    free_plan(p, n);
    free(a.base_copy), free(a.flags_copy);
    return 0;
}
