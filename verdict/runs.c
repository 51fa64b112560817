/* One seed's run folder as the judge reads it: its stats.csv, parsed strictly,
 * and its run.txt, for provenance (verdict.h). */
#include "verdict.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void set_why(seed_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_why(seed_run *r, const char *fmt, ...)
{
    if (!r->ok) return; /* the first reason is the one reported */
    r->ok = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
}

/* A run's files are small (a stats.csv holds KBs, a run.txt a line per file written):
 * anything larger, a FIFO or a device is a seed's problem, not the judge's. */
#define RUN_FILE_MAX ((size_t)64 << 20)

/* A value as stats_put writes it (%.17g: -?d+(.d+)?(e[+-]d+)?, nan, inf, -inf): the
 * whole field, nothing before or after, no hex, no '+'; a literal that underflows to
 * zero (-1e-400) is refused (%.17g never writes one; a subnormal is kept). */
static int parse_value(const char *s, double *v)
{
    if (!strcmp(s, "nan")) { *v = NAN; return 1; }
    if (!strcmp(s, "inf")) { *v = INFINITY; return 1; }
    if (!strcmp(s, "-inf")) { *v = -INFINITY; return 1; }
    const char *p = s + (*s == '-');
    size_t d = strspn(p, "0123456789");
    if (!d) return 0;
    int nonzero = strcspn(p, "123456789") < d;
    p += d;
    if (*p == '.') {
        size_t f = strspn(p + 1, "0123456789");
        if (!f) return 0;
        nonzero |= strcspn(p + 1, "123456789") < f;
        p += 1 + f;
    }
    if (*p == 'e') {
        if ((p[1] != '+' && p[1] != '-') || !strspn(p + 2, "0123456789")) return 0;
        p += 2 + strspn(p + 2, "0123456789");
    }
    if (*p) return 0;
    double x = strtod(s, NULL);
    if (!isfinite(x) || (x == 0 && nonzero)) return 0;
    *v = x;
    return 1;
}

/* A statistic's name as stats_put writes it: printable, no blank, comma or quote. */
static int good_name(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (*s <= ' ' || *s > '~' || *s == ',' || *s == '"') return 0;
    return 1;
}

static int row_cmp(const void *a, const void *b) { return strcmp(((const stat_row *)a)->name, ((const stat_row *)b)->name); }

/* stats.csv: the header "name,value", then "name,value" lines, every line
 * ending in a newline (a file cut mid-line is refused), no blank line, no name
 * twice, no NUL byte; a regular file of at most RUN_FILE_MAX. */
static void read_stats(seed_run *r, const char *path)
{
    size_t len;
    char err[1200];
    char *buf = input_read_all(path, "stats.csv", RUN_FILE_MAX, &len, err, sizeof err);
    if (!buf) { set_why(r, "%s", err); return; }
    if (strlen(buf) != len) { set_why(r, "stats.csv holds a NUL byte"); free(buf); return; }
    if (len == 0 || buf[len - 1] != '\n') { set_why(r, "stats.csv does not end in a newline (cut short?)"); free(buf); return; }
    char *line = buf, *next = strchr(line, '\n');
    *next = '\0';
    if (strcmp(line, "name,value")) { set_why(r, "stats.csv has no 'name,value' header"); free(buf); return; }
    int lineno = 1;
    for (line = next + 1; *line && r->ok; line = next + 1) {
        lineno++;
        next = strchr(line, '\n');
        *next = '\0';
        char *comma = strchr(line, ',');
        double v;
        if (comma) *comma = '\0';
        if (!comma || !good_name(line) || !parse_value(comma + 1, &v)) {
            if (comma) *comma = ',';
            set_why(r, "stats.csv line %d is not 'name,value' as stats_put writes it: '%.60s'", lineno, line);
            break;
        }
        if ((r->nstats & (r->nstats - 1)) == 0) /* 0, 1, 2, 4, ...: double the room */
            r->stats = xrealloc(r->stats, (size_t)(r->nstats ? 2 * r->nstats : 1) * sizeof *r->stats);
        r->stats[r->nstats++] = (stat_row){xstrdup(line), v};
    }
    free(buf);
    /* sorted by name: a name twice shows as neighbours, and lookups are binary searches */
    if (r->nstats) qsort(r->stats, (size_t)r->nstats, sizeof *r->stats, row_cmp);
    for (int i = 1; i < r->nstats && r->ok; i++)
        if (!strcmp(r->stats[i].name, r->stats[i - 1].name)) set_why(r, "stats.csv names '%.100s' twice", r->stats[i].name);
}

/* Splits a run.txt command line into words: blanks separate, 'single quotes'
 * and "double quotes" group, a backslash escapes the next character. */
static int split_words(const char *s, char ***out)
{
    int n = 0;
    char **w = NULL;
    while (*s) {
        while (*s == ' ' || *s == '\t') s++;
        if (!*s) break;
        char *word = xmalloc(strlen(s) + 1), *o = word;
        for (char q = 0; *s && (q || (*s != ' ' && *s != '\t')); s++) {
            if (q && *s == q) q = 0;
            else if (!q && (*s == '\'' || *s == '"')) q = *s;
            else if (*s == '\\' && s[1] && q != '\'') *o++ = *++s;
            else *o++ = *s;
        }
        *o = '\0';
        w = xrealloc(w, (size_t)(n + 1) * sizeof *w);
        w[n++] = word;
    }
    *out = w;
    return n;
}

static int is_flag(const char *w, const char *name) /* "--name" or "--name=..." */
{
    size_t n = strlen(name);
    return w[0] == '-' && w[1] == '-' && !strncmp(w + 2, name, n) && (w[2 + n] == '\0' || w[2 + n] == '=');
}

/* The flags that define the run, comparable over seeds: the program's own
 * name, every flag in order but --out (where) and --quiet (how loud), and the
 * values of --seed and --data-seed as SEED when they are the folder's seed. */
static void normalise_command(seed_run *r, const char *command, long seed)
{
    char **w;
    int n = split_words(command, &w);
    size_t cap = strlen(command) + 64, len = 0;
    r->flags = xmalloc(cap);
    r->flags[0] = '\0';
    char seedtxt[32];
    snprintf(seedtxt, sizeof seedtxt, "%ld", seed);
    for (int i = 0; i < n; i++) {
        const char *word = w[i], *value = NULL;
        char buf[64];
        if (i == 0) {
            const char *base = strrchr(word, '/');
            word = base ? base + 1 : word;
        } else if (is_flag(word, "out") || is_flag(word, "quiet")) {
            if (!strcmp(word, "--out")) i++; /* its value */
            continue;
        } else if (is_flag(word, "seed") || is_flag(word, "data-seed")) {
            const char *eq = strchr(word, '=');
            value = eq ? eq + 1 : i + 1 < n ? w[i + 1] : "";
            if (!eq) i++;
            if (strcmp(value, seedtxt)) set_why(r, "run.txt: %.*s %s, not the folder's seed %ld",
                                                (int)(eq ? eq - word : (long)strlen(word)), word, value, seed);
            snprintf(buf, sizeof buf, "%.*s SEED", (int)(eq ? eq - word : (long)strlen(word)), word);
            word = buf;
        } else if (is_flag(word, "scale")) {
            const char *eq = strchr(word, '=');
            snprintf(r->scale, sizeof r->scale, "%s", eq ? eq + 1 : i + 1 < n ? w[i + 1] : "");
        }
        len += snprintf(r->flags + len, cap - len, "%s%s", len ? " " : "", word);
    }
    for (int i = 0; i < n; i++) free(w[i]);
    free(w);
}

/* run.txt: "command: ", "git commit: " and "wall seconds: " lines (the last
 * is written when the run ends: a run.txt without it is incomplete). */
static void read_runtxt(seed_run *r, const char *path, long seed)
{
    size_t len;
    char err[1200];
    char *buf = input_read_all(path, "run.txt", RUN_FILE_MAX, &len, err, sizeof err);
    if (!buf) { set_why(r, "%s", err); return; }
    if (strlen(buf) != len) { set_why(r, "run.txt holds a NUL byte"); free(buf); return; }
    if (strchr(buf, '\r')) { /* the toolkit writes none: its lines would compare unequal in silence */
        set_why(r, "run.txt holds a carriage return (CR LF line ends: edited on another system?)");
        free(buf);
        return;
    }
    int have_cmd = 0, have_wall = 0;
    char *save = NULL, line_scale[sizeof r->scale] = "";
    for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *end;
        if (!strncmp(line, "command: ", 9) && !have_cmd) {
            have_cmd = 1;
            normalise_command(r, line + 9, seed);
        } else if (!strncmp(line, "seed: ", 6)) {
            errno = 0;
            long v = strtol(line + 6, &end, 10);
            r->run_seed = line[6] >= '0' && line[6] <= '9' && !*end && !errno ? v : -2;
        } else if (!strncmp(line, "scale: ", 7)) {
            snprintf(line_scale, sizeof line_scale, "%s", line + 7);
        } else if (!strncmp(line, "git commit: ", 12)) {
            snprintf(r->commit, sizeof r->commit, "%s", line + 12);
        } else if (!strncmp(line, "wall seconds: ", 14)) {
            have_wall = 1;
        }
    }
    free(buf);
    /* the scale the program ran at: its run.txt's line (the default included), else
     * --scale in the command, else the default of every program with a scale, quick */
    if (line_scale[0]) snprintf(r->scale, sizeof r->scale, "%s", line_scale);
    else if (!r->scale[0]) snprintf(r->scale, sizeof r->scale, "quick");
    if (!have_cmd || !r->commit[0] || !have_wall || r->run_seed == -1)
        set_why(r, "run.txt is incomplete (no command, seed, commit or wall time)");
    else if (r->run_seed < 0)
        set_why(r, "run.txt's seed line is not a whole number");
}

int stats_index(const seed_run *r, const char *name)
{
    stat_row key = {(char *)name, 0};
    const stat_row *hit = r->nstats ? bsearch(&key, r->stats, (size_t)r->nstats, sizeof *r->stats, row_cmp) : NULL;
    return hit ? (int)(hit - r->stats) : -1;
}

int seed_run_get(const seed_run *r, const char *name, double *value)
{
    int i = stats_index(r, name);
    if (i < 0) return -1;
    *value = r->stats[i].value;
    return i;
}

void seed_run_read(seed_run *r, const char *dir, long seed)
{
    memset(r, 0, sizeof *r);
    r->ok = 1;
    r->seed = seed;
    r->run_seed = -1;
    char *p = path_join(dir, "stats.csv");
    read_stats(r, p);
    free(p);
    p = path_join(dir, "run.txt");
    read_runtxt(r, p, seed);
    free(p);
    if (!r->flags) r->flags = xstrdup("");
}

void seed_run_free(seed_run *r)
{
    for (int i = 0; i < r->nstats; i++) free(r->stats[i].name);
    free(r->stats);
    free(r->flags);
    memset(r, 0, sizeof *r);
}
