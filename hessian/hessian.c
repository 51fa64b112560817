/* The exact-Hessian engine: panels from hess_cols or hvp, memory checks,
 * column-range files, the symmetry report. Block metrics and heatmaps: blocks.c. */
#include "hessian.h"
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

hessian_opts hessian_defaults(void)
{
    hessian_opts o = {.panel = 128, .use_hess_cols = 1, .symmetric = 1, .label = "hessian"};
    return o;
}

static int panel_width(const hessian_opts *o) { return o && o->panel > 0 ? o->panel : 128; }

double hessian_bytes(size_t P, size_t ncols, int panel)
{
    return 8.0 * P * (double)ncols + 8.0 * P * (double)panel;
}

/* One panel of columns c..c+k-1 into dst (k×P). V: k×P zeros for the hvp path (restored to zeros). */
static void one_panel(model *m, const hessian_opts *o, size_t c, int k, double *V, double *dst)
{
    if (o->use_hess_cols && m->hess_cols) {
        m->hess_cols(m, c, k, dst);
        return;
    }
    size_t P = m->P;
    for (int d = 0; d < k; d++) V[(size_t)d * P + c + d] = 1;
    m->hvp(m, V, dst, k);
    for (int d = 0; d < k; d++) V[(size_t)d * P + c + d] = 0;
}

static hessian_opts opts_or_default(const hessian_opts *o) { return o ? *o : hessian_defaults(); }

void hessian_cols(model *m, size_t j0, size_t j1, const hessian_opts *opt, double *out)
{
    hessian_opts o = opts_or_default(opt);
    size_t P = m->P;
    if (j0 > j1 || j1 > P) DIE("hessian_cols: range %zu..%zu outside 0..%zu", j0, j1, P);
    int pw = panel_width(&o);
    double *V = (o.use_hess_cols && m->hess_cols) ? NULL : xcalloc((size_t)pw * P, sizeof(double));
    progress pr;
    progress_start(&pr, o.label ? o.label : "hessian", (long)(j1 - j0));
    for (size_t c = j0; c < j1; c += pw) {
        int k = (int)(j1 - c < (size_t)pw ? j1 - c : (size_t)pw);
        one_panel(m, &o, c, k, V, out + (c - j0) * P);
        progress_update(&pr, (long)(c + k - j0));
    }
    progress_end(&pr);
    free(V);
}

/* Rows c..c+k-1 of H, columns < c, from the transposed entries (filled earlier). */
static void mirror_panel(double *H, size_t P, size_t c, size_t k)
{
    const size_t T = 64;
    for (size_t i0 = 0; i0 < c; i0 += T) {
        size_t i1 = i0 + T < c ? i0 + T : c;
        for (size_t r = c; r < c + k; r++)
            for (size_t i = i0; i < i1; i++) H[r * P + i] = H[i * P + r];
    }
}

double *hessian_full(model *m, const hessian_opts *opt)
{
    hessian_opts o = opts_or_default(opt);
    size_t P = m->P;
    char what[96];
    snprintf(what, sizeof what, "%s: H of %zu x %zu float64", o.label ? o.label : "hessian", P, P);
    memory_check(what, hessian_bytes(P, P, panel_width(&o)));
    double *H = huge_alloc(P * P, "Hessian");
    if (!(o.symmetric && o.use_hess_cols && m->hess_cols_lower)) {
        hessian_cols(m, 0, P, &o, H);
        return H;
    }
    int pw = panel_width(&o);
    progress pr;
    progress_start(&pr, o.label ? o.label : "hessian", (long)P);
    for (size_t c = 0; c < P; c += pw) {
        int k = (int)(P - c < (size_t)pw ? P - c : (size_t)pw);
        m->hess_cols_lower(m, c, k, H + c * P);
        mirror_panel(H, P, c, (size_t)k);
        progress_update(&pr, (long)(c + k));
    }
    progress_end(&pr);
    return H;
}

void hessian_write_cols(model *m, size_t j0, size_t j1, const hessian_opts *opt, const char *path)
{
    hessian_opts o = opts_or_default(opt);
    size_t P = m->P;
    if (j0 >= j1 || j1 > P) die_user("column range %zu..%zu is not inside 0..%zu", j0, j1, P);
    int pw = panel_width(&o);
    char what[128];
    snprintf(what, sizeof what, "%s: columns %zu..%zu of H, one panel of %d in memory",
             o.label ? o.label : "hessian", j0, j1, pw);
    memory_check(what, hessian_bytes(P, (size_t)pw, pw));
    size_t shape[2] = {j1 - j0, P};
    outfile *f = npy_open(path, 2, shape);
    double *buf = xmalloc((size_t)pw * P * sizeof(double));
    double *V = (o.use_hess_cols && m->hess_cols) ? NULL : xcalloc((size_t)pw * P, sizeof(double));
    progress pr;
    progress_start(&pr, o.label ? o.label : "hessian", (long)(j1 - j0));
    for (size_t c = j0; c < j1; c += pw) {
        int k = (int)(j1 - c < (size_t)pw ? j1 - c : (size_t)pw);
        one_panel(m, &o, c, k, V, buf);
        npy_write_chunk(f, buf, (size_t)k * P);
        progress_update(&pr, (long)(c + k - j0));
    }
    progress_end(&pr);
    free(V);
    free(buf);
    outfile_commit(f);
    /* The range the file holds, for hessian_merge: "<path>.range". */
    char *rpath = xmalloc(strlen(path) + 8);
    sprintf(rpath, "%s.range", path);
    outfile *rf = outfile_open(rpath);
    fprintf(outfile_fp(rf), "columns %zu %zu of %zu\n", j0, j1, P);
    outfile_commit(rf);
    free(rpath);
}

/* ---- merging column ranges --------------------------------------------------------
 * A part's range comes from its sidecar "<path>.range" ("columns j0 j1 of P",
 * written by hessian_write_cols next to the .npy), else from a file name
 * H_cols_<j0>_<j1>.npy (what mlp_hessian --cols writes); neither is a user
 * error, and so is a sidecar that disagrees with the name. The parts may be
 * given in any order: they are sorted by j0, then must tile 0..P exactly (a
 * gap, an overlap or a missing end is named), and each file's shape must be
 * (j1-j0, P) with the same P. */
typedef struct { size_t j0, j1, P; int has_P; int file; } part_range;

/* Unsigned decimal at *s (digits only); advances *s. 0 on success. */
static int read_count(const char **s, size_t *v)
{
    if (**s < '0' || **s > '9') return -1;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(*s, &end, 10);
    if (errno || x > SIZE_MAX) return -1;
    *v = (size_t)x;
    *s = end;
    return 0;
}

/* The range of part `path`; returns an error text (in msg) or NULL. */
static const char *range_of(const char *path, part_range *r, char *msg, size_t len)
{
    int from_name = 0, from_side = 0;
    size_t n0 = 0, n1 = 0;
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *s = base;
    if (strncmp(s, "H_cols_", 7) == 0) {
        s += 7;
        from_name = !read_count(&s, &n0) && *s++ == '_' && !read_count(&s, &n1) && strcmp(s, ".npy") == 0;
    }
    char *rpath = xmalloc(strlen(path) + 8);
    sprintf(rpath, "%s.range", path);
    FILE *fp = fopen(rpath, "r");
    free(rpath);
    if (fp) {
        char line[128] = "";
        int ok = fgets(line, sizeof line, fp) != NULL && fgetc(fp) == EOF;
        fclose(fp);
        const char *t = line;
        ok = ok && strncmp(t, "columns ", 8) == 0 && (t += 8, !read_count(&t, &r->j0)) && *t++ == ' ' &&
             !read_count(&t, &r->j1) && strncmp(t, " of ", 4) == 0 && (t += 4, !read_count(&t, &r->P)) &&
             strcmp(t, "\n") == 0;
        if (!ok) return "its .range file is not one line 'columns j0 j1 of P'";
        r->has_P = 1;
        from_side = 1;
        if (from_name && (n0 != r->j0 || n1 != r->j1)) {
            snprintf(msg, len, "its .range file says columns %zu..%zu but its name says %zu..%zu", r->j0, r->j1,
                     n0, n1);
            return msg;
        }
    } else if (from_name) {
        r->j0 = n0;
        r->j1 = n1;
        r->has_P = 0;
    }
    if (!from_side && !from_name)
        return "cannot tell which columns it holds (no .range file beside it, and its name is not "
               "H_cols_<j0>_<j1>.npy)";
    if (r->j1 <= r->j0) {
        snprintf(msg, len, "column range %zu..%zu is empty", r->j0, r->j1);
        return msg;
    }
    return NULL;
}

static int by_j0(const void *a, const void *b)
{
    const part_range *x = a, *y = b;
    return x->j0 < y->j0 ? -1 : x->j0 > y->j0 ? 1 : x->j1 < y->j1 ? -1 : x->j1 > y->j1;
}

double *hessian_merge(int nfiles, const char *const *paths, size_t *P_out)
{
    if (nfiles < 1) die_user("no column-range files to merge");
    char msg[320];
    part_range *r = xcalloc((size_t)nfiles, sizeof *r);
    for (int i = 0; i < nfiles; i++) {
        const char *err = range_of(paths[i], &r[i], msg, sizeof msg);
        if (err) {
            char line[600];
            snprintf(line, sizeof line, "%s: %s", paths[i], err);
            free(r);
            die_user("%s", line);
        }
        r[i].file = i;
    }
    qsort(r, (size_t)nfiles, sizeof *r, by_j0);
    /* the ranges must tile 0..j1 of the last one, which the files' shapes then confirm as P */
    const char *err = NULL;
    for (int i = 0; i < nfiles && !err; i++) {
        size_t expect = i ? r[i - 1].j1 : 0;
        if (r[i].j0 > expect) {
            snprintf(msg, sizeof msg, "columns %zu..%zu are in no file (a range is missing)", expect, r[i].j0);
            err = msg;
        } else if (r[i].j0 < expect) {
            snprintf(msg, sizeof msg, "%s (columns %zu..%zu) and %s (columns %zu..%zu) are overlapping ranges",
                     paths[r[i - 1].file], r[i - 1].j0, r[i - 1].j1, paths[r[i].file], r[i].j0, r[i].j1);
            err = msg;
        }
    }
    if (err) {
        free(r);
        die_user("%s", err);
    }
    double *H = NULL;
    size_t P = 0;
    for (int i = 0; i < nfiles; i++) {
        const char *path = paths[r[i].file];
        int ndim;
        size_t shape[4];
        double *part = npy_read(path, &ndim, shape);
        if (ndim != 2) err = "expected a 2-D column range (rows, P)";
        else if (i == 0) {
            P = shape[1];
            if (P == 0) err = "has P = 0";
            else if (r[nfiles - 1].j1 != P) {
                snprintf(msg, sizeof msg, "has P = %zu columns but the column ranges cover %zu of %zu (give every "
                         "range)", P, r[nfiles - 1].j1, P);
                err = msg;
            }
        } else if (shape[1] != P) {
            snprintf(msg, sizeof msg, "has %zu columns but the first file has %zu (different models?)", shape[1], P);
            err = msg;
        }
        if (!err && r[i].has_P && r[i].P != shape[1]) {
            snprintf(msg, sizeof msg, "its .range file says P = %zu but it has %zu columns", r[i].P, shape[1]);
            err = msg;
        }
        if (!err && shape[0] != r[i].j1 - r[i].j0) {
            snprintf(msg, sizeof msg, "holds %zu rows but its range %zu..%zu needs %zu", shape[0], r[i].j0, r[i].j1,
                     r[i].j1 - r[i].j0);
            err = msg;
        }
        if (!err && !H) H = huge_alloc(checked_mul(P, P, "merged Hessian"), "merged Hessian");
        if (err) {
            char line[700];
            snprintf(line, sizeof line, "%s: %s", path, err);
            free(part);
            free(H);
            free(r);
            die_user("%s", line);
        }
        memcpy(H + r[i].j0 * P, part, shape[0] * P * sizeof(double));
        free(part);
    }
    free(r);
    *P_out = P;
    return H;
}

double hessian_asymmetry(size_t P, const double *H)
{
    double mx = max_abs(P * P, H), d = 0;
    for (size_t i = 0; i < P; i++)
        for (size_t j = i + 1; j < P; j++) {
            double e = fabs(H[i * P + j] - H[j * P + i]);
            if (e > d) d = e;
        }
    return mx > 0 ? d / mx : 0;
}
