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

/* A whole file into memory; NULL (errno set) if it cannot be read. */
static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = xmalloc(cap);
    for (size_t got; (got = fread(buf + n, 1, cap - n - 1, fp)) > 0;) {
        n += got;
        if (n + 1 == cap) buf = xrealloc(buf, cap *= 2);
    }
    int bad = ferror(fp);
    fclose(fp);
    if (bad) { free(buf); errno = EIO; return NULL; }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* A value as stats_put writes it: %.17g, nan, inf, -inf; the whole field. */
static int parse_value(const char *s, double *v)
{
    if (!strcmp(s, "nan")) { *v = NAN; return 1; }
    if (!strcmp(s, "inf")) { *v = INFINITY; return 1; }
    if (!strcmp(s, "-inf")) { *v = -INFINITY; return 1; }
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (end == s || *end || !isfinite(x)) return 0;
    *v = x;
    return 1;
}

/* stats.csv: the header "name,value", then "name,value" lines, every line
 * ending in a newline (a file cut mid-line is refused), no name twice, no
 * empty name, no NUL byte; lines of any length. */
static void read_stats(seed_run *r, const char *path)
{
    size_t len;
    char *buf = slurp(path, &len);
    if (!buf) { set_why(r, "no stats.csv (%s)", strerror(errno)); return; }
    if (strlen(buf) != len) { set_why(r, "stats.csv holds a NUL byte"); free(buf); return; }
    if (len == 0 || buf[len - 1] != '\n') { set_why(r, "stats.csv does not end in a newline (cut short?)"); free(buf); return; }
    char *save = NULL, *line = strtok_r(buf, "\n", &save);
    if (!line || strcmp(line, "name,value")) { set_why(r, "stats.csv has no 'name,value' header"); free(buf); return; }
    int lineno = 1;
    for (line = strtok_r(NULL, "\n", &save); line && r->ok; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        char *comma = strchr(line, ',');
        double v;
        if (!comma || comma == line || strchr(comma + 1, ',') || !parse_value(comma + 1, &v)) {
            set_why(r, "stats.csv line %d is not 'name,value'", lineno);
            break;
        }
        *comma = '\0';
        if (stats_index(r, line) >= 0) {
            set_why(r, "stats.csv names '%s' twice", line);
            break;
        }
        r->stats = xrealloc(r->stats, (size_t)(r->nstats + 1) * sizeof *r->stats);
        r->stats[r->nstats++] = (stat_row){xstrdup(line), v};
    }
    free(buf);
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
    char *buf = slurp(path, &len);
    if (!buf) { set_why(r, "no run.txt (%s)", strerror(errno)); return; }
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
    for (int i = 0; i < r->nstats; i++)
        if (!strcmp(r->stats[i].name, name)) return i;
    return -1;
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
