/* The per-run statistics file, stats.csv: "name,value" rows (verdict.h). */
#include "verdict.h"
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

outfile *stats_open(const char *dir) { return csv_open_in(dir, "stats.csv", "name,value"); }

void stats_put(outfile *f, const char *name, double value)
{
    if (isnan(value)) csv_row(f, "%s,nan", name);
    else if (isinf(value)) csv_row(f, "%s,%sinf", name, value < 0 ? "-" : "");
    else csv_row(f, "%s,%.17g", name, value);
}

void stats_putf(outfile *f, double value, const char *fmt, ...)
{
    char name[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    stats_put(f, name, value);
}

void stats_put_share(outfile *f, long count, long total, const char *fmt, ...)
{
    char name[240];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    stats_put(f, name, total > 0 ? (double)count / total : NAN);
    stats_putf(f, (double)count, "%s.count", name);
    stats_putf(f, (double)total, "%s.total", name);
}
