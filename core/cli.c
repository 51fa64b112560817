/* Command-line parsing: a table of options over getopt_long, --help and
 * --quiet for every program. Parsing only: what a run sets up (BLAS threads,
 * the memory guard, run metadata) is run_start's (run.c). */
#include "core.h"
#include <errno.h>
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
        const char *digits = text + (*text == '-');
        long v = strtol(text, &end, 10);
        if (end == text || *end || errno || !*digits || strspn(digits, "0123456789") != strlen(digits))
            die_user("--%s expects an integer, got '%s'", flag, text);
        if (kind == OPT_INT) {
            if (v < -2147483647L || v > 2147483647L) die_user("--%s: %s is out of range", flag, text);
            *(int *)target = (int)v;
        } else {
            *(long *)target = v;
        }
    }
}

/* The comma-separated items of text, each parsed by item(); an empty item (",,", a
 * comma first or last) is an error, as is more than LIST_MAX items. */
static int list_items(const char *flag, const char *text, const char *expects, void *out, size_t stride, size_t cap,
                      int (*item)(const char *, void *))
{
    int n = 0;
    for (const char *p = text;; p++) {
        size_t len = strcspn(p, ",");
        char tok[128];
        if (n == (int)cap) die_user("--%s: more than %d values", flag, LIST_MAX);
        snprintf(tok, sizeof tok, "%.*s", (int)(len < sizeof tok - 1 ? len : sizeof tok - 1), p);
        if (len == 0 || len >= sizeof tok || item(tok, (char *)out + (size_t)n * stride))
            die_user("--%s expects %s, got '%.100s'", flag, expects, text);
        n++;
        p += len;
        if (!*p) break;
    }
    return n;
}

static int double_item(const char *tok, void *out) { return to_double(tok, out); }

/* A whole number as written: optional '-', decimal digits, in int's range (no
 * exponent, no point: "1e3" is refused, not read as 1000). */
static int int_item(const char *tok, void *out)
{
    const char *d = tok + (*tok == '-');
    if (!*d || strspn(d, "0123456789") != strlen(d)) return -1;
    errno = 0;
    long v = strtol(tok, NULL, 10);
    if (errno || v < -2147483647L || v > 2147483647L) return -1;
    *(int *)out = (int)v;
    return 0;
}

void parse_double_list(const char *flag, const char *text, double_list *out)
{
    out->n = list_items(flag, text, "comma-separated numbers", out->v, sizeof out->v[0], LIST_MAX, double_item);
}

void parse_int_list(const char *flag, const char *text, int_list *out)
{
    out->n = list_items(flag, text, "comma-separated integers", out->v, sizeof out->v[0], LIST_MAX, int_item);
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

/* The targets of the options the last cli_parse met on the command line. */
static const void *given[256];
static int ngiven = 0;

int cli_was_given(const void *target)
{
    for (int i = 0; i < ngiven; i++)
        if (given[i] == target) return 1;
    return 0;
}

void cli_parse(int argc, char **argv, const char *summary, const cli_opt *opts, int nopts)
{
    set_program_name(argv[0]);
    ngiven = 0;
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
        if (ngiven < 256 && !cli_was_given(o->target)) given[ngiven++] = o->target;
        switch (o->kind) {
        case OPT_FLAG: *(int *)o->target = 1; break;
        case OPT_STRING: *(const char **)o->target = optarg; break;
        case OPT_DOUBLE_LIST: parse_double_list(o->name, optarg, o->target); break;
        case OPT_INT_LIST: parse_int_list(o->name, optarg, o->target); break;
        default: parse_number(o->name, optarg, o->kind, o->target); break;
        }
    }
    if (optind < argc) die_user("unexpected argument '%s' (see --help)", argv[optind]);
    const char *scale = "none"; /* run.txt's scale: the value a run used, the default included */
    for (int i = 0; i < nopts; i++)
        if (opts[i].kind == OPT_STRING && !strcmp(opts[i].name, "scale") && *(const char **)opts[i].target)
            scale = *(const char **)opts[i].target;
    run_set_scale(scale);
}


int scale_parse(const char *scale)
{
    if (strcmp(scale, "paper") == 0) return 1;
    if (strcmp(scale, "quick") == 0) return 0;
    die_user("--scale must be quick or paper (got '%s')", scale);
}
