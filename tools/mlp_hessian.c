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
#include "core/model.h"
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

typedef struct {
    const char *from, *tag, *out, *merge_list;
    int panel, symmetric;
    int_list cols;             /* j0,j1 or empty */
} mh_args;

static mh_args parse_args(int argc, char **argv)
{
    mh_args x = {.from = "results/fig2", .tag = "end", .out = "results/mlp_hessian", .panel = 256};
    const cli_opt opts[] = {
        {"from", OPT_STRING, &x.from, "folder written by fig2 (model.csv, X_eval.npy, y_eval.npy, weights_<tag>.npy)"},
        {"tag", OPT_STRING, &x.tag, "which weights: init, mid, end, ..."},
        {"cols", OPT_INT_LIST, &x.cols, "j0,j1: only columns j0..j1-1 (default: all of H)"},
        {"panel", OPT_INT, &x.panel, "columns per panel"},
        {"symmetric", OPT_FLAG, &x.symmetric, "whole H by the symmetric fast path (no symmetry report)"},
        {"merge", OPT_STRING, &x.merge_list, "comma-separated column-range files (any order; ranges from their .range files or H_cols_<j0>_<j1> names) to stack into H.npy"},
        {"out", OPT_STRING, &x.out, "output folder"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Exact Hessian (R-operator engine) of an MLP saved by fig2, whole or by column ranges\n"
              "that separate runs compute and --merge stacks.",
              opts, sizeof opts / sizeof *opts);
    if (x.panel < 1) die_user("--panel must be >= 1 (got %d)", x.panel);
    if (x.cols.n != 0 && x.cols.n != 2) die_user("--cols expects two numbers j0,j1");
    if (x.merge_list && x.cols.n) die_user("--merge and --cols do not go together");
    return x;
}

/* The MLP of fig2's folder at the weights of x->tag, on its evaluation batch; every
 * file and --cols checked first (a user error frees what was read). */
static model *load_model(const mh_args *x)
{
    mlp_config cfg = read_model_csv(x->from);
    char wname[64];
    snprintf(wname, sizeof wname, "weights_%s.npy", x->tag);
    size_t N = 0, P = (size_t)cfg.width * (cfg.in + cfg.bias) + (size_t)cfg.classes * (cfg.width + cfg.bias);
    double *X = read_npy(x->from, "X_eval.npy", 2, 0, (size_t)cfg.in, &N, NULL, 0);
    double *w = read_npy(x->from, wname, 1, P, 0, NULL, &X, 1);
    double *held[2] = {X, w};
    if (N == 0 || N > 2147483647) {
        free(X);
        free(w);
        die_user("%s/X_eval.npy: %zu rows (the evaluation set must have 1..2147483647 samples)", x->from, N);
    }
    double *yd = read_npy(x->from, "y_eval.npy", 1, N, 0, NULL, held, 2);
    const char *bad = NULL;
    char msg[128];
    const int_list *cols = &x->cols;
    if (cols->n == 2 && (cols->v[0] < 0 || cols->v[1] <= cols->v[0] || (size_t)cols->v[1] > P)) {
        snprintf(msg, sizeof msg, "--cols %d,%d is not a range inside 0..%zu", cols->v[0], cols->v[1], P);
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
    return m;
}

/* H_cols_<j0>_<j1>.npy (--cols) or the whole H.npy. */
static void write_hessian(model *m, const mh_args *x)
{
    size_t P = m->P;
    hessian_opts o = hessian_defaults();
    o.panel = x->panel;
    o.label = "Hessian columns"; /* in messages after the program's name: not the name again */
    double t0 = wall_seconds();
    if (x->cols.n == 2) {
        char name[64];
        snprintf(name, sizeof name, "H_cols_%d_%d.npy", x->cols.v[0], x->cols.v[1]);
        char *path = path_join(x->out, name);
        hessian_write_cols(m, (size_t)x->cols.v[0], (size_t)x->cols.v[1], &o, path);
        if (!core_quiet) fprintf(stderr, "mlp_hessian: %s in %.2f s\n", path, wall_seconds() - t0);
        free(path);
        return;
    }
    o.symmetric = x->symmetric;
    double *H = hessian_full(m, &o);
    double t = wall_seconds() - t0;
    char *path = path_join(x->out, "H.npy");
    size_t shape[2] = {P, P};
    npy_write(path, H, 2, shape);
    if (!core_quiet) {
        fprintf(stderr, "mlp_hessian: H (%zu x %zu) in %.2f s -> %s", P, P, t, path);
        if (!x->symmetric) fprintf(stderr, "; max|H-H'|/max|H| = %.2e", hessian_asymmetry(P, H));
        fprintf(stderr, "\n");
    }
    free(path);
    free(H);
}

int main(int argc, char **argv)
{
    mh_args x = parse_args(argc, argv);
    /* Column parts of separate runs share a folder, and --out may be --from. */
    output_keep_previous();
    if (x.cols.n) output_shared_folder(); /* column parts of separate runs share it, at the same time too */
    ensure_dir(x.out);
    if (x.merge_list) {
        merge(x.merge_list, x.out);
    } else {
        model *m = load_model(&x);
        write_hessian(m, &x);
        model_free(m);
    }
    run_write_info(x.out, 0);
    return 0;
}
