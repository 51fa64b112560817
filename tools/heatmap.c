/* heatmap — one named block of a Hessian at full resolution: a tensor, a head,
 * an output or input neuron, or an index range, cut from a saved H (.npy, read
 * row by row: H never has to fit in memory), from the blocks a streamed run
 * kept (hessian_blocks' blocks.npy: the block must lie inside one kept H_bb —
 * --partition alg2 keeps every tensor's), or computed from a Transformer
 * trained elsewhere (--model, nanoGPT's layout in .safetensors: only the
 * block's columns of H, by the R-operator, on the Hessian batch fig6 --model
 * uses: --hess-batch held-out sequences of the --data source). Rendered by plots/heatmap.gp (the
 * style of plots/fig6.gp: |H| in log colour, heads solid, output neurons dotted).
 *
 *   heatmap --h results/fig6/H.npy --block h0.attn.query --png q.png
 *   heatmap --run results/hessian_blocks --block 'h1.attn.key[head 2]' --png k2.png
 *   heatmap --h H.npy --block 0:512 --cols 'h0.mlp.fc_1[row 3]'        (an off-diagonal block)
 *   heatmap --model gpt.safetensors --data text --block h0.attn.value --png v.png
 *
 * Outputs in --out: block.npy (rows × cols of H), heat.csv (|H|, pooled only
 * with --pixels), bounds_{rows,cols}_{major,minor}.csv, plotvars.gp; the PNG with
 * --png (gnuplot, written atomically).
 *
 * gnuplot runs without a shell (fork/exec, `gnuplot -c heatmap.gp RES OUT`: the
 * folder and the PNG's path are arguments, data to the script, never code), its
 * output is kept and an error is reduced to its last line; a signal that stops
 * heatmap stops gnuplot too and leaves no temporary. The script is found next
 * to the program (build/bin/heatmap -> plots/heatmap.gp) unless --script says.
 */
#include "core/core.h"
#include "core/model.h"
#include "harness/data.h"
#include "harness/models.h"
#include "harness/tt_ckpt.h"
#include "hessian/hessian.h"
#include "hessian/hview.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the block from a saved H ------------------------------------------------------------ */

/* Opens a (P, P) float64 C-order .npy and returns the data's byte offset. */
static long npy_matrix_open(const char *path, size_t P, FILE **out)
{
    if (path_is_folder(path)) die_user("%s is a folder, expected H.npy", path);
    FILE *fp = fopen(path, "rb");
    if (!fp) die_user("cannot read %s: %s", path, strerror(errno));
    unsigned char pre[10];
    char dict[65536];
    size_t want = 0, got0 = 0, got1 = 0;
    int end = 0;
    if (fread(pre, 1, 10, fp) != 10 || memcmp(pre, "\x93NUMPY", 6) || pre[6] != 1) {
        fclose(fp);
        die_user("%s: not a .npy file (format 1.0)", path);
    }
    want = pre[8] | (size_t)pre[9] << 8;
    if (fread(dict, 1, want, fp) != want) {
        fclose(fp);
        die_user("%s: truncated header", path);
    }
    dict[want] = '\0';
    const char *sh = strstr(dict, "'shape': (");
    if (!strstr(dict, "'descr': '<f8'") || !strstr(dict, "'fortran_order': False") || !sh ||
        sscanf(sh, "'shape': (%zu, %zu)%n", &got0, &got1, &end) != 2 || !end || got0 != P || got1 != P) {
        fclose(fp);
        die_user("%s: expected a float64 C-order (%zu, %zu) matrix (the layout's P)", path, P, P);
    }
    long off = 10 + (long)want;
    if (fseek(fp, 0, SEEK_END) || ftell(fp) < off + (long)(8 * P * P)) {
        fclose(fp);
        die_user("%s: shorter than its header says", path);
    }
    *out = fp;
    return off;
}

/* H_RC from the file: each row of R read over the hull of C's columns. */
static double *cut_from_h(const char *path, size_t P, const block *R, const block *C)
{
    FILE *fp;
    long off = npy_matrix_open(path, P, &fp);
    size_t c0 = C->start, span = (C->n - 1) * C->stride + 1;
    double *row = xmalloc(span * sizeof(double)), *out = xmalloc(checked_mul(R->n * C->n, sizeof(double), "block"));
    for (size_t r = 0; r < R->n; r++) {
        size_t i = R->start + r * R->stride;
        if (fseek(fp, off + (long)(8 * (i * P + c0)), SEEK_SET) || fread(row, 8, span, fp) != span) {
            fclose(fp);
            die_user("%s: read failed at row %zu", path, i);
        }
        for (size_t c = 0; c < C->n; c++) out[r * C->n + c] = row[c * C->stride];
    }
    fclose(fp);
    free(row);
    return out;
}

/* ---- the block from a streamed run's kept blocks ---------------------------------------- */

static double *cut_from_run(const char *dir, size_t P, const block *R, const block *C)
{
    char *path = path_join(dir, "blocks.csv");
    FILE *fp = fopen(path, "r");
    if (!fp) die_user("cannot read %s: %s (a hessian_blocks output folder?)", path, strerror(errno));
    char line[2048];
    block kept = {0};
    size_t hoff = 0;
    int found = 0;
    if (!fgets(line, sizeof line, fp)) line[0] = '\0';
    while (!found && fgets(line, sizeof line, fp)) {
        block k = {0};
        int idx;
        char name[96], tname[64];
        if (sscanf(line, "%d,%95[^,],%63[^,],%zu,%zu,%zu,%zu", &idx, name, tname, &k.start, &k.n, &k.stride, &hoff) != 7)
            break;
        if (block_inside(&k, R, NULL) && block_inside(&k, C, NULL)) {
            kept = k;
            snprintf(kept.name, sizeof kept.name, "%s", name);
            found = 1;
        }
    }
    fclose(fp);
    free(path);
    if (!found)
        die_user("%s: no kept block holds both %s and %s (run hessian_blocks with a partition whose blocks hold it, "
                 "e.g. --partition alg2 for any block inside a tensor)", dir, R->name, C->name);
    size_t n = kept.n, *pr = xmalloc(R->n * sizeof(size_t)), *pc = xmalloc(C->n * sizeof(size_t));
    block_inside(&kept, R, pr);
    block_inside(&kept, C, pc);
    path = path_join(dir, "blocks.npy");
    int nd;
    size_t shape[4];
    double *all = npy_read(path, &nd, shape);   /* Σ n_b² doubles: the kept blocks, small by construction */
    free(path);
    if (nd != 1 || shape[0] < hoff + n * n) {
        free(all), free(pr), free(pc);
        die_user("%s/blocks.npy does not match its blocks.csv", dir);
    }
    double *out = xmalloc(checked_mul(R->n * C->n, sizeof(double), "block"));
    for (size_t r = 0; r < R->n; r++)
        for (size_t c = 0; c < C->n; c++) out[r * C->n + c] = all[hoff + pr[r] * n + pc[c]];
    (void)P;
    free(all), free(pr), free(pc);
    return out;
}

/* ---- the block from a model file: the block's columns of H, by the R-operator ----------- */

static double *cut_from_model(model *m, const block *R, const block *C)
{
    size_t P = m->P;
    int kp = 32;
    double *cols = xmalloc(checked_mul((size_t)kp * P, sizeof(double), "Hessian columns"));
    double *out = xmalloc(checked_mul(R->n * C->n, sizeof(double), "block"));
    for (size_t c0 = 0; c0 < C->n; c0 += (size_t)kp) {
        int k = (int)(C->n - c0 < (size_t)kp ? C->n - c0 : (size_t)kp);
        if (C->stride == 1 && m->hess_cols) {
            m->hess_cols(m, C->start + c0, k, cols);
        } else { /* strided columns, or a model without hess_cols (model.h: optional): unit directions through hvp */
            double *E = xcalloc((size_t)k * P, sizeof(double));
            for (int d = 0; d < k; d++) E[(size_t)d * P + C->start + (c0 + d) * C->stride] = 1;
            m->hvp(m, E, cols, k);
            free(E);
        }
        for (int d = 0; d < k; d++)
            for (size_t r = 0; r < R->n; r++) out[r * C->n + c0 + d] = cols[(size_t)d * P + R->start + r * R->stride];
    }
    free(cols);
    return out;
}

/* ---- outputs ------------------------------------------------------------------------------ */

static int write_lines(const char *out, const char *name, const partition *p, size_t offset, size_t factor)
{
    char *path = path_join(out, name);
    partition empty = {0};
    heatmap_write_bounds(path, p ? p : &empty, offset, factor);
    free(path);
    return p && p->nblocks > 1;
}

/* text as a gnuplot single-quoted string (data: no escapes, no substitution
 * but '' for a quote) for the enhanced-text title: its markup characters
 * escaped with a backslash, backquotes and control characters as '?'. */
static void gp_string(char *dst, size_t cap, const char *src)
{
    size_t o = 0;
    dst[o++] = '\'';
    for (; *src && o + 4 < cap; src++) {
        unsigned char c = (unsigned char)*src;
        if (c == '_' || c == '^' || c == '{' || c == '}' || c == '@' || c == '&' || c == '~' || c == '\\')
            dst[o++] = '\\';
        if (c == '\'') dst[o++] = '\'';
        dst[o++] = c < 32 || c == 127 || c == '`' ? '?' : (char)c;
    }
    dst[o++] = '\'';
    dst[o] = '\0';
}

/* plots/heatmap.gp of the toolkit this program belongs to: next to the
 * program's own file (build/bin/heatmap -> ../../plots), or installed beside it
 * (bin/heatmap -> ../share/adam-mini-toolkit). NULL if neither exists. */
static char *find_script(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return NULL;
    *slash = '\0';
    static const char *rel[] = {"../../plots/heatmap.gp", "../share/adam-mini-toolkit/heatmap.gp"};
    for (int i = 0; i < 2; i++) {
        char *p = path_join(exe, rel[i]);
        if (access(p, R_OK) == 0) return p;
        free(p);
    }
    return NULL;
}

/* The last non-empty line of what gnuplot printed (its error), at most cap-1 bytes. */
static void last_line_of(FILE *fp, char *out, size_t cap)
{
    char line[1024];
    out[0] = '\0';
    rewind(fp);
    while (fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *s = line + strspn(line, " \t");
        if (*s) snprintf(out, cap, "%s", s);
    }
}

/* gnuplot -c script dir tmp, without a shell; the PNG is an outfile (its
 * temporary removed on any error or signal), committed when gnuplot succeeded. */
static void render(const char *script, const char *dir, const char *png)
{
    outfile *o = outfile_open(png);
    FILE *cap = tmpfile();
    int capfd = cap ? fileno(cap) : -1;
    fflush(NULL);
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    sigset_t block, old;
    sigemptyset(&block);
    for (int i = 0; i < 4; i++) sigaddset(&block, sigs[i]);
    sigprocmask(SIG_BLOCK, &block, &old); /* the child is watched before a signal can come */
    pid_t pid = fork();
    if (pid < 0) die_user("cannot start gnuplot: %s", strerror(errno));
    if (pid == 0) {
        for (int i = 0; i < 4; i++) {
            struct sigaction sa;
            if (sigaction(sigs[i], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN) signal(sigs[i], SIG_DFL);
        }
        sigprocmask(SIG_SETMASK, &old, NULL);
        int fd = capfd >= 0 ? capfd : open("/dev/null", O_WRONLY);
        if (fd >= 0) dup2(fd, STDOUT_FILENO), dup2(fd, STDERR_FILENO);
        execlp("gnuplot", "gnuplot", "-c", script, dir, outfile_tmp_path(o), (char *)NULL);
        fprintf(stderr, "cannot run gnuplot: %s\n", strerror(errno));
        _exit(127);
    }
    output_watch_child(pid);
    sigprocmask(SIG_SETMASK, &old, NULL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    output_watch_child(0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        char why[600] = "";
        if (cap) last_line_of(cap, why, sizeof why);
        if (!why[0] && WIFSIGNALED(st)) snprintf(why, sizeof why, "gnuplot killed by signal %d", WTERMSIG(st));
        outfile_discard(o);
        die_user("rendering %s with gnuplot (%s) failed: %s", png, script, why[0] ? why : "no message");
    }
    if (cap) fclose(cap);
    outfile_commit(o);
}

typedef struct {
    const char *spec, *cspec;  /* the block's rows and columns */
    const char *hpath, *tensors, *run, *out, *pool, *png, *script;
    model_cli mc;              /* --model FILE: a Transformer trained elsewhere, its data and Hessian batch */
    char *script_found;        /* the default script's path, found from the program's location */
    int pixels, max_lines;
    double decades;
} hm_args;

static hm_args parse_args(int argc, char **argv)
{
    hm_args x = {.out = "results/heatmap", .pool = "max", .max_lines = 256, .decades = 6};
    model_cli_init(&x.mc);
    x.mc.model_name = NULL;
    ckpt_cli *k = &x.mc.cli;
    const cli_opt opts[] = {
        {"block", OPT_STRING, &x.spec, "the block's rows: NAME, NAME[head h], NAME[row r], NAME[col c] or i0:i1"},
        {"cols", OPT_STRING, &x.cspec, "its columns, the same way (default: the rows: a diagonal block)"},
        {"h", OPT_STRING, &x.hpath, "a saved H (.npy, P x P), read row by row"},
        {"tensors", OPT_STRING, &x.tensors, "the layout (tensors.csv; default: next to --h, or in --run)"},
        {"run", OPT_STRING, &x.run, "a hessian_blocks output folder: the block is cut from its kept blocks"},
        {"model", OPT_STRING, &x.mc.model_name, "a Transformer trained elsewhere, nanoGPT's layout (.safetensors) or a "
                                                "Hugging Face GPT-2 or Llama folder: the block computed"},
        {"model-config", OPT_STRING, &k->model_config, "with --model: its config JSON when the metadata lacks n_head"},
        TT_DATA_OPTS(k->data),
        {"hess-batch", OPT_INT, &k->hess_batch, "with --model: held-out sequences H is taken on (0: 256)"},
        {"data-seed", OPT_LONG, &k->data_seed, "with --model: the data's seed (Markov chain, held-out sequences)"},
        {"pixels", OPT_INT, &x.pixels, "0: full resolution; else pool to at most this many pixels per side"},
        {"pool", OPT_STRING, &x.pool, "with --pixels: max or mean"},
        {"decades", OPT_DOUBLE, &x.decades, "log colour range below max |H|, in decades"},
        {"max-lines", OPT_INT, &x.max_lines, "draw neuron lines only up to this many neurons"},
        {"png", OPT_STRING, &x.png, "render the PNG here with gnuplot"},
        {"script", OPT_STRING, &x.script,
         "the gnuplot script (default: plots/heatmap.gp of the toolkit, found from the program's own location)"},
        {"out", OPT_STRING, &x.out, "output folder"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "One block of an exact Hessian at full resolution: a tensor, a head, a neuron or an index range,\n"
              "from a saved H (.npy), from the blocks a streamed hessian_blocks run kept, or computed from a\n"
              "Transformer trained elsewhere (--model, nanoGPT's layout; the block's columns of H on --hess-batch\n"
              "held-out sequences of --data); writes it as block.npy and a heatmap (|H|, log colour) with\n"
              "tensor / head / neuron lines for plots/heatmap.gp.",
              opts, sizeof opts / sizeof *opts);
    if (!x.spec) die_user("--block is required (e.g. --block h0.attn.query)");
    if ((x.hpath != NULL) + (x.run != NULL) + (x.mc.model_name != NULL) != 1)
        die_user("give exactly one of --h (a saved H), --run (a hessian_blocks folder) and --model (a .safetensors)");
    if (k->model_config && !x.mc.model_name) die_user("--model-config goes with --model");
    if (x.mc.model_name && model_kind_named(x.mc.model_name))
        die_user("--model %s: a model file is needed here (its block at its own weights), not a kind", x.mc.model_name);
    if (x.pixels < 0 || x.pixels > 16384) die_user("--pixels must be in 0..16384 (got %d)", x.pixels);
    pool_parse(x.pool);
    if (!(x.decades >= 1 && x.decades <= 16)) die_user("--decades must be in 1..16 (got %g)", x.decades);
    if (x.max_lines < 0) die_user("--max-lines must be >= 0 (got %d)", x.max_lines);
    if (x.png && !x.script) {
        x.script = x.script_found = find_script();
        if (!x.script) die_user("cannot find plots/heatmap.gp next to the program; give its path with --script");
    }
    if (x.png && access(x.script, R_OK) != 0) die_user("cannot read the gnuplot script %s: %s", x.script, strerror(errno));
    return x;
}

/* The layout: the model's own with --model; else --tensors, else tensors.csv in --run or next to --h. */
static model *read_layout(hm_args *x, model_ckpt *k)
{
    if (x->mc.model_name) { /* fig6 --model's model and Hessian batch, at its own weights */
        model_ckpt_check(k, &x->mc, x->mc.model_name);
        model_ckpt_start(k);
        return k->m;
    }
    char *tpath;
    if (x->tensors) {
        tpath = xstrdup(x->tensors);
    } else if (x->run) {
        tpath = path_join(x->run, "tensors.csv");
    } else {
        const char *slash = strrchr(x->hpath, '/');
        char *dir = slash ? strndup(x->hpath, (size_t)(slash - x->hpath)) : xstrdup(".");
        tpath = path_join(dir, "tensors.csv");
        free(dir);
    }
    model *lay = layout_read(tpath);
    free(tpath);
    return lay;
}

/* heat.csv, the line files and plotvars.gp for plots/heatmap.gp; the PNG with --png. */
static void write_heatmap(const hm_args *x, const model *lay, const block *R, const block *C, const double *A)
{
    size_t pr, pc, factor;
    int px = x->pixels ? x->pixels : (int)(R->n > C->n ? R->n : C->n);
    double *img = heatmap_pool(A, R->n, C->n, C->n, px, pool_parse(x->pool), &pr, &pc, &factor);
    char note[256];
    snprintf(note, sizeof note, "|H| block %s x %s", R->name, C->name);
    char *path = path_join(x->out, "heat.csv");
    heatmap_write(path, img, pr, pc, factor, note);
    free(path);
    partition *rmaj, *rmin, *cmaj, *cmin;
    block_lines(lay, R, x->max_lines, &rmaj, &rmin);
    block_lines(lay, C, x->max_lines, &cmaj, &cmin);
    int has[4] = {write_lines(x->out, "bounds_rows_major.csv", rmaj, R->start, factor),
                  write_lines(x->out, "bounds_rows_minor.csv", rmin, R->start, factor),
                  write_lines(x->out, "bounds_cols_major.csv", cmaj, C->start, factor),
                  write_lines(x->out, "bounds_cols_minor.csv", cmin, C->start, factor)};
    double mx = max_abs(R->n * C->n, A), sum = 0;
    for (size_t e = 0; e < R->n * C->n; e++) sum += fabs(A[e]);
    char title[700], sub2[700], t1[300], t2[300];
    if (x->cspec) snprintf(t1, sizeof t1, "Hessian block %s x %s", R->name, C->name);
    else snprintf(t1, sizeof t1, "Hessian block %s", R->name);
    gp_string(title, sizeof title, t1);
    snprintf(t2, sizeof t2, "%s%s", x->hpath || x->mc.model_name ? "from " : "from the kept blocks of ",
             x->hpath ? x->hpath : x->run ? x->run : x->mc.model_name);
    char t3[400];
    snprintf(t3, sizeof t3, "%s; solid: heads (or neurons, tensors), dotted: neurons in heads", t2);
    gp_string(sub2, sizeof sub2, t3);
    outfile *o = outfile_open_in(x->out, "plotvars.gp");
    fprintf(outfile_fp(o),
            "npr = %zu\nnpc = %zu\nfactor = %zu\ncbmax = %.6g\ncbmin = %.6g\n"
            "has_rmaj = %d\nhas_rmin = %d\nhas_cmaj = %d\nhas_cmin = %d\n"
            "title_text = %s\n"
            "sub1 = \"%zu x %zu (indices %zu.. stride %zu, %zu.. stride %zu); max |H| %.2e, mean |H| %.2e; log colour\"\n"
            "sub2 = %s\n",
            pr, pc, factor, mx > 0 ? mx : 1, (mx > 0 ? mx : 1) * pow(10, -x->decades), has[0], has[1], has[2], has[3],
            title, R->n, C->n, R->start, R->stride, C->start, C->stride, mx, sum / (double)(R->n * C->n), sub2);
    outfile_commit(o);
    if (x->png) render(x->script, x->out, x->png);
    if (!core_quiet)
        fprintf(stderr, "heatmap: %s (%zu x %zu) -> %s/block.npy%s%s\n", t2, R->n, C->n, x->out, x->png ? ", " : "",
                x->png ? x->png : "");
    partition_free(rmaj), partition_free(rmin), partition_free(cmaj), partition_free(cmin);
    free(img);
}

int main(int argc, char **argv)
{
    hm_args x = parse_args(argc, argv);
    model_ckpt k = {0};
    model *lay = read_layout(&x, &k);
    block R = block_named(lay, x.spec), C = block_named(lay, x.cspec ? x.cspec : x.spec);
    output_keep_previous(); /* --out may be the --run folder it reads */
    ensure_dir(x.out);
    double *A = x.hpath ? cut_from_h(x.hpath, lay->P, &R, &C)
                : x.run ? cut_from_run(x.run, lay->P, &R, &C)
                        : cut_from_model(k.m, &R, &C);
    for (size_t e = 0; e < R.n * C.n; e++)
        if (!isfinite(A[e]))
            die_user("%s: the block holds a non-finite value (%g) at row %zu, column %zu: not a Hessian to draw",
                     x.hpath ? x.hpath : x.run ? x.run : x.mc.model_name, A[e], e / C.n, e % C.n);
    size_t shape[2] = {R.n, C.n};
    npy_write_in(x.out, "block.npy", A, 2, shape);
    write_heatmap(&x, lay, &R, &C, A);
    run_write_info(x.out, 0);
    free(A);
    if (k.m) model_ckpt_free(&k);
    else model_free(lay);
    model_cli_free(&x.mc);
    free(x.script_found);
    return 0;
}
