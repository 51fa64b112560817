/* The exact-Hessian engine: panels from hess_cols or hvp, memory checks,
 * column-range files, the symmetry report. Block metrics and heatmaps: blocks.c. */
#include "hessian.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

hessian_opts hessian_defaults(void)
{
    hessian_opts o = {128, 1, 1, "hessian"};
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
}

double *hessian_merge(int nfiles, const char *const *paths, size_t *P_out)
{
    double *H = NULL;
    size_t P = 0, filled = 0;
    for (int i = 0; i < nfiles; i++) {
        int ndim;
        size_t shape[4];
        double *part = npy_read(paths[i], &ndim, shape);
        const char *err = NULL;
        char msg[256];
        if (ndim != 2) err = "expected a 2-D column range (rows, P)";
        else if (i == 0) {
            P = shape[1];
            if (P == 0) err = "has P = 0";
            else H = huge_alloc(P * P, "merged Hessian");
        } else if (shape[1] != P) {
            snprintf(msg, sizeof msg, "has %zu columns but the first file has %zu (different models?)", shape[1], P);
            err = msg;
        }
        if (!err && filled + shape[0] > P) {
            snprintf(msg, sizeof msg, "rows %zu..%zu go past P = %zu (overlapping ranges?)", filled,
                     filled + shape[0], P);
            err = msg;
        }
        if (err) {
            free(part);
            free(H);
            die_user("%s: %s", paths[i], err);
        }
        memcpy(H + filled * P, part, shape[0] * P * sizeof(double));
        filled += shape[0];
        free(part);
    }
    if (nfiles < 1 || filled != P) {
        free(H);
        die_user("column ranges cover %zu of %zu columns (give every range, in column order)", filled, P);
    }
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
