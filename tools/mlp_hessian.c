/* mlp_hessian — the exact Hessian of a saved MLP, whole or by column ranges that
 * separate processes (or machines) compute and a last call merges.
 *
 * Reads what experiments/fig2 saved: <from>/model.csv, X_eval.npy, y_eval.npy
 * and weights_<tag>.npy. Writes <out>/H.npy (P×P), or with --cols j0,j1 the
 * columns j0..j1-1 as <out>/H_cols_<j0>_<j1>.npy (shape (j1-j0, P), streamed
 * one panel at a time, with H_cols_<j0>_<j1>.npy.range recording "columns j0
 * j1 of P"); --merge FILE,FILE,... stacks column-range files, in any order,
 * into <out>/H.npy: each part's range comes from its .range file, else from
 * its name H_cols_<j0>_<j1>.npy, and is checked against the rows it holds; the
 * ranges must tile 0..P (a gap, an overlap or a missing part is a user error).
 * model.csv's P must be the P its sizes give; an empty X_eval is a user error.
 *
 *   mlp_hessian --from results/fig2 --tag end --cols 0,3000 --out part
 *   mlp_hessian --from results/fig2 --tag end --cols 3000,6370 --out part
 *   mlp_hessian --merge part/H_cols_0_3000.npy,part/H_cols_3000_6370.npy --out whole
 */
#include "core/core.h"
#include "hessian/hessian.h"
#include "mlp/mlp.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* model.csv: header then "in,width,classes,act,bias,loss,P". */
static mlp_config read_model_csv(const char *dir)
{
    char *path = path_join(dir, "model.csv");
    FILE *fp = fopen(path, "r");
    if (!fp) {
        char msg[600];
        snprintf(msg, sizeof msg, "cannot read %s: %s", path, strerror(errno));
        free(path);
        die_user("%s (run fig2 first, or point --from at its output folder)", msg);
    }
    /* exactly the header fig2 writes, then one row (digits only for P, nothing
     * after it but the line end), then nothing */
    char head[256], line[256], act[32] = "", loss[32] = "", Ptext[32] = "";
    mlp_config c = {0};
    int used = -1;
    int ok = fgets(head, sizeof head, fp) && strcmp(head, "in,width,classes,act,bias,loss,P\n") == 0 &&
             fgets(line, sizeof line, fp) &&
             sscanf(line, "%d,%d,%d,%31[^,],%d,%31[^,],%31[0-9]%n", &c.in, &c.width, &c.classes, act, &c.bias, loss,
                    Ptext, &used) == 7 &&
             used > 0 && (strcmp(line + used, "\n") == 0 || line[used] == '\0') && fgetc(fp) == EOF;
    int rerr = ferror(fp);
    fclose(fp);
    if (!ok || rerr) {
        char msg[600];
        snprintf(msg, sizeof msg, "%s: expected the header 'in,width,classes,act,bias,loss,P' and one row of those values",
                 path);
        free(path);
        die_user("%s", msg);
    }
    free(path);
    if (c.in < 1 || c.width < 1 || c.classes < 2 || (c.bias != 0 && c.bias != 1))
        die_user("%s/model.csv: bad sizes (in %d, width %d, classes %d, bias %d)", dir, c.in, c.width, c.classes, c.bias);
    c.act = act_parse(act);
    if (strcmp(loss, "xent") && strcmp(loss, "squared")) die_user("model.csv: unknown loss '%s'", loss);
    c.loss = strcmp(loss, "xent") == 0 ? LOSS_XENT : LOSS_SQUARED;
    /* the P column must be the P these sizes give (fc1, fc2 and the biases) */
    size_t P = (size_t)c.width * ((size_t)c.in + c.bias) + (size_t)c.classes * ((size_t)c.width + c.bias);
    errno = 0;
    unsigned long long Pfile = strtoull(Ptext, NULL, 10);
    if (errno || Pfile != P)
        die_user("%s/model.csv: P = %s but in %d, width %d, classes %d, bias %d give P = %zu", dir, Ptext, c.in,
                 c.width, c.classes, c.bias, P);
    return c;
}

/* A .npy from dir whose shape must be (d0,) or (d0, d1); d0 = 0 accepts any first
 * dimension and returns it in *got0. On a bad file the arrays in held[] are freed first. */
static double *read_npy(const char *dir, const char *name, int ndim, size_t d0, size_t d1, size_t *got0,
                        double **held, int nheld)
{
    char *path = path_join(dir, name);
    int nd;
    size_t shape[4];
    double *a = npy_read(path, &nd, shape);
    if (nd != ndim || (d0 && shape[0] != d0) || (ndim == 2 && shape[1] != d1)) {
        char msg[600], want[64];
        if (ndim == 1) snprintf(want, sizeof want, "(%zu,)", d0);
        else if (d0) snprintf(want, sizeof want, "(%zu, %zu)", d0, d1);
        else snprintf(want, sizeof want, "(N, %zu)", d1);
        snprintf(msg, sizeof msg, "%s: shape does not match model.csv (expected %s)", path, want);
        free(a);
        free(path);
        for (int i = 0; i < nheld; i++) free(held[i]);
        die_user("%s", msg);
    }
    if (got0) *got0 = shape[0];
    free(path);
    return a;
}

static void merge(const char *list, const char *out)
{
    char *copy = xstrdup(list), *save = NULL;
    const char *paths[LIST_MAX];
    int n = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == LIST_MAX) {
            free(copy);
            die_user("--merge: more than %d files", LIST_MAX);
        }
        paths[n++] = tok;
    }
    size_t P;
    double *H = hessian_merge(n, paths, &P);
    free(copy);
    double asym = hessian_asymmetry(P, H);
    char *path = path_join(out, "H.npy");
    size_t shape[2] = {P, P};
    npy_write(path, H, 2, shape);
    if (!core_quiet) fprintf(stderr, "mlp_hessian: merged %d files into %s; max|H-H'|/max|H| = %.2e\n", n, path, asym);
    free(path);
    free(H);
}

int main(int argc, char **argv)
{
    const char *from = "results/fig2", *tag = "end", *out = "results/mlp_hessian", *merge_list = NULL;
    int panel = 256, symmetric = 0;
    int_list cols = {0, {0}};
    const cli_opt opts[] = {
        {"from", OPT_STRING, &from, "folder written by fig2 (model.csv, X_eval.npy, y_eval.npy, weights_<tag>.npy)"},
        {"tag", OPT_STRING, &tag, "which weights: init, mid, end, ..."},
        {"cols", OPT_INT_LIST, &cols, "j0,j1: only columns j0..j1-1 (default: all of H)"},
        {"panel", OPT_INT, &panel, "columns per panel"},
        {"symmetric", OPT_FLAG, &symmetric, "whole H by the symmetric fast path (no symmetry report)"},
        {"merge", OPT_STRING, &merge_list, "comma-separated column-range files (any order; ranges from their .range files or H_cols_<j0>_<j1> names) to stack into H.npy"},
        {"out", OPT_STRING, &out, "output folder"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Exact Hessian (R-operator engine) of an MLP saved by fig2, whole or by column ranges\n"
              "that separate runs compute and --merge stacks.",
              opts, sizeof opts / sizeof *opts);
    if (panel < 1) die_user("--panel must be >= 1 (got %d)", panel);
    if (cols.n != 0 && cols.n != 2) die_user("--cols expects two numbers j0,j1");
    if (merge_list && cols.n) die_user("--merge and --cols do not go together");
    /* Column parts of separate runs share a folder (at the same time, too: each
     * writes its own files), and --out may be --from. */
    output_keep_previous();
    if (cols.n) output_shared_folder();
    ensure_dir(out);
    if (merge_list) {
        merge(merge_list, out);
        run_write_info(out, 0);
        return 0;
    }
    mlp_config cfg = read_model_csv(from);
    char wname[64];
    snprintf(wname, sizeof wname, "weights_%s.npy", tag);
    size_t N = 0, P = (size_t)cfg.width * (cfg.in + cfg.bias) + (size_t)cfg.classes * (cfg.width + cfg.bias);
    double *X = read_npy(from, "X_eval.npy", 2, 0, (size_t)cfg.in, &N, NULL, 0);
    double *w = read_npy(from, wname, 1, P, 0, NULL, &X, 1);
    double *held[2] = {X, w};
    if (N == 0 || N > 2147483647) {
        free(X);
        free(w);
        die_user("%s/X_eval.npy: %zu rows (the evaluation set must have 1..2147483647 samples)", from, N);
    }
    double *yd = read_npy(from, "y_eval.npy", 1, N, 0, NULL, held, 2);
    const char *bad = NULL;
    char msg[128];
    if (cols.n == 2 && (cols.v[0] < 0 || cols.v[1] <= cols.v[0] || (size_t)cols.v[1] > P)) {
        snprintf(msg, sizeof msg, "--cols %d,%d is not a range inside 0..%zu", cols.v[0], cols.v[1], P);
        bad = msg;
    }
    for (size_t n = 0; n < N && !bad; n++)
        if (!(yd[n] >= 0 && yd[n] < cfg.classes && yd[n] == (int)yd[n])) {
            snprintf(msg, sizeof msg, "y_eval.npy: label %g of sample %zu is not in 0..%d", yd[n], n, cfg.classes - 1);
            bad = msg;
        }
    if (bad) {
        free(X);
        free(w);
        free(yd);
        die_user("%s", bad);
    }
    model *m = mlp_new(&cfg);
    int *y = xmalloc((size_t)N * sizeof(int));
    for (size_t n = 0; n < N; n++) y[n] = (int)yd[n];
    memcpy(m->params, w, P * sizeof(double));
    free(w);
    free(yd);
    mlp_set_batch(m, X, y, (int)N);
    free(X);
    free(y);
    hessian_opts o = hessian_defaults();
    o.panel = panel;
    o.label = "Hessian columns";
    double t0 = wall_seconds();
    if (cols.n == 2) {
        char name[64];
        snprintf(name, sizeof name, "H_cols_%d_%d.npy", cols.v[0], cols.v[1]);
        char *path = path_join(out, name);
        hessian_write_cols(m, (size_t)cols.v[0], (size_t)cols.v[1], &o, path);
        if (!core_quiet) fprintf(stderr, "mlp_hessian: %s in %.2f s\n", path, wall_seconds() - t0);
        free(path);
    } else {
        o.symmetric = symmetric;
        double *H = hessian_full(m, &o);
        double t = wall_seconds() - t0;
        char *path = path_join(out, "H.npy");
        size_t shape[2] = {P, P};
        npy_write(path, H, 2, shape);
        if (!core_quiet) {
            fprintf(stderr, "mlp_hessian: H (%zu x %zu) in %.2f s -> %s", P, P, t, path);
            if (!symmetric) fprintf(stderr, "; max|H-H'|/max|H| = %.2e", hessian_asymmetry(P, H));
            fprintf(stderr, "\n");
        }
        free(path);
        free(H);
    }
    model_free(m);
    run_write_info(out, 0);
    return 0;
}
