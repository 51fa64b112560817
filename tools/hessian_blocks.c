/* hessian_blocks — the block analysis of an exact Hessian, streamed panel by
 * panel without storing H (hessian/stream.h), for the tiny Transformer (any
 * size) or the MLP at a training checkpoint, on one process or spread over the
 * ranks of an MPI job (make MPI=1; docs/cluster.md).
 *
 * Each rank builds its own copy of the model at the checkpoint (rank 0 trains
 * and broadcasts the parameters and v̂), streams its contiguous share of H's
 * column panels, and sends its packed stream to rank 0, which merges them in
 * rank order and writes what one process writes (bitwise with full panels, the
 * default; --lower: the symmetric fast path, about 0.65x the R-pass time, every
 * output bitwise but the row masses, which agree to ~1e-16).
 *
 * --path full computes the same outputs from the full H (hessian_full, then
 * block_extract / block_analyze / mass_ratio / heatmap_pool): the reference the
 * tests hold the streamed path to (1e-12). --full-spectrum adds every eigenvalue
 * of H (ScaLAPACK's pdsyevr over a process grid under MPI, LAPACK otherwise),
 * --write-h the full H as one .npy (MPI-IO).
 *
 * Outputs in --out (rank 0): summary.csv (name,value), tensors.csv, blocks.csv
 * (one row per block: where it is, its offsets in blocks.npy / block_eigs.npy,
 * ‖H_bb‖², share of ‖H‖², row-mass ratio, τ, spectrum, κ both ways, κ(D H_b)),
 * blocks.npy (every H_bb, concatenated), block_eigs.npy (their eigenvalues),
 * row_mass.npy (‖H_{i,:}‖²), tensor_mass.csv/.npy (Σ H_ij² per tensor pair),
 * heat.csv (pooled |H| for gnuplot) + heat_bounds.csv (tensor boundaries),
 * vhat.npy, spectrum.npy/.csv (--full-spectrum), H.npy (--write-h), train/
 * (the Transformer's training run), run.txt.
 */
#include "core/core.h"
#include "core/dist.h"
#include "core/model.h"
#include "harness/models.h"
#include "hessian/hdist.h"
#include "hessian/hessian.h"
#include "hessian/stream.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

typedef struct {
    model_cli mc;              /* --model and its flags */
    const char *out, *part_name, *pool_name, *path_name, *eig_name;
    int pixels, lower, full_spectrum, write_h, skip_blocks;
    int_list eig_range;
    /* state */
    int full;                  /* --path full */
    model_ckpt k;              /* the model at the checkpoint, v̂, ε */
    double *d;                 /* (P) D_Adam's diagonal */
    partition *p;
} run;

/* Everything the outputs need, from either path. */
typedef struct {
    double total, ratio;
    const double *row_mass, *tmass, *heat;
    size_t pr, pc, factor;
    const double **Hb;         /* (nblocks) each H_bb */
    block_metrics *bm;
    double seconds, cpu;
} results;

/* ---- setup ---------------------------------------------------------------------------------- */

/* What can only be checked against the model — a partition file, --eig-range
 * — checked before any training and before the output folder, on the model
 * at its initialisation (model_ckpt_start: the one model_ckpt_open trains):
 * under MPI every rank meets the error together (rank 0's one line), and no
 * train/ is left behind. */
static void check_against_layout(run *r)
{
    model_ckpt_start(&r->k);
    size_t P = r->k.m->P;
    if (r->eig_range.n == 2 && (r->eig_range.v[0] < 1 || r->eig_range.v[1] < r->eig_range.v[0] ||
                                (size_t)r->eig_range.v[1] > P))
        die_user("--eig-range %d,%d is not inside 1..%zu", r->eig_range.v[0], r->eig_range.v[1], P);
    partition_free(model_partition(&r->k, r->part_name)); /* a file: read against the layout */
}

/* The model at the checkpoint on every rank (rank 0 trains and writes train/),
 * and D_Adam from its v̂. */
static void build_model(run *r)
{
    char *train_dir = path_join(r->out, "train");
    model_ckpt_open(&r->k, train_dir);
    free(train_dir);
    r->d = xmalloc(r->k.m->P * sizeof(double));
    adam_diag(r->k.m->P, r->k.vhat, r->k.eps, r->d);
    int workers = dist_workers();
    blas_memory_guard(workers, "TOOLKIT_RANK_THREADS=1"); /* the panel workers call BLAS at once */
}

static hessian_opts engine_opts(const run *r)
{
    hessian_opts o = hessian_defaults();
    o.panel = r->mc.cli.panel;
    o.symmetric = r->lower;
    o.label = "Hessian panels"; /* in messages after the program's name: not the name again */
    return o;
}

/* ---- the two paths -------------------------------------------------------------------------- */

/* CPU seconds of this process, all its threads. */
static double cpu_seconds(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec * 1e-6;
}

static hstream *streamed(run *r, results *res)
{
    hstream_opts so = {.p = r->p, .keep_blocks = 1, .heat_pixels = r->pixels, .heat_pool = pool_parse(r->pool_name)};
    hstream *s = hstream_new(r->k.m, &so);
    hessian_opts o = engine_opts(r);
    double t0 = wall_seconds(), c0 = cpu_seconds();
    hstream_run_dist(s, r->k.m, &o);
    res->seconds = wall_seconds() - t0;
    res->cpu = dist_sum(cpu_seconds() - c0);   /* every rank's CPU time of the H part, workers included */
    if (dist_rank() > 0) {
        hstream_free(s);
        return NULL;
    }
    int nb = r->p->nblocks;
    res->total = hstream_total_fro2(s);
    res->ratio = hstream_mass_ratio(s);
    res->row_mass = hstream_row_mass(s);
    res->tmass = hstream_tensor_mass(s);
    res->heat = hstream_heatmap(s, &res->pr, &res->pc, &res->factor);
    res->Hb = xmalloc((size_t)nb * sizeof(double *));
    res->bm = xmalloc((size_t)nb * sizeof(block_metrics));
    for (int b = 0; b < nb; b++) {
        res->Hb[b] = hstream_block(s, b);
        res->bm[b] = hstream_block_metrics(s, b, r->d);
    }
    return s;
}

/* The reference: the full H and the library's whole-matrix functions. */
static double *full_path(run *r, results *res)
{
    hessian_opts o = engine_opts(r);
    double t0 = wall_seconds(), c0 = cpu_seconds();
    double *H = hessian_full(r->k.m, &o);
    res->seconds = wall_seconds() - t0;
    res->cpu = cpu_seconds() - c0;
    size_t P = r->k.m->P;
    int nb = r->p->nblocks, T = r->k.m->ntensors;
    double *rm = xmalloc(P * sizeof(double));
    res->total = 0;
    for (size_t i = 0; i < P; i++) {
        rm[i] = frobenius_sq(P, H + i * P);
        res->total += rm[i];
    }
    res->row_mass = rm;
    res->ratio = mass_ratio(H, P, r->p);
    double *tm = xmalloc((size_t)T * T * sizeof(double));
    for (int a = 0; a < T; a++)
        for (int b = 0; b < T; b++) {
            const tensor_info *ta = &r->k.m->tensors[a], *tb = &r->k.m->tensors[b];
            block ba = {.start = ta->offset, .n = tensor_size(ta), .stride = 1, .tensor = a};
            block bb = {.start = tb->offset, .n = tensor_size(tb), .stride = 1, .tensor = b};
            double *X = block_cross(H, P, &ba, &bb);
            tm[a * T + b] = frobenius_sq(ba.n * bb.n, X);
            free(X);
        }
    res->tmass = tm;
    res->heat = heatmap_pool(H, P, P, P, r->pixels, pool_parse(r->pool_name), &res->pr, &res->pc, &res->factor);
    res->Hb = xmalloc((size_t)nb * sizeof(double *));
    res->bm = xmalloc((size_t)nb * sizeof(block_metrics));
    for (int b = 0; b < nb; b++) {
        res->Hb[b] = block_extract(H, P, &r->p->b[b]);
        res->bm[b] = block_analyze(H, P, &r->p->b[b], r->d);
    }
    return H;
}

/* ---- outputs (rank 0) ----------------------------------------------------------------------- */

/* The tensor a block starts in (a partition file's block may name none). */
static const char *tensor_at(const model *m, const block *b)
{
    if (b->tensor >= 0 && b->tensor < m->ntensors) return m->tensors[b->tensor].name;
    for (int t = m->ntensors - 1; t >= 0; t--)
        if (m->tensors[t].offset <= b->start) return m->tensors[t].name;
    return "-";
}

static void write_results(const run *r, const results *res)
{
    const model *m = r->k.m;
    size_t P = m->P;
    int nb = r->p->nblocks, T = m->ntensors;
    outfile *f = csv_open_in(r->out, "tensors.csv", "index,name,role,offset,rows,cols,heads,layer");
    for (int t = 0; t < T; t++) {
        const tensor_info *ti = &m->tensors[t];
        csv_row(f, "%d,%s,%s,%zu,%d,%d,%d,%d", t, ti->name, role_name(ti->role), ti->offset, ti->rows, ti->cols,
                ti->heads, ti->layer);
    }
    csv_close(f);

    /* every H_bb and its eigenvalues, concatenated; offsets in blocks.csv */
    size_t nH = 0, nE = 0;
    for (int b = 0; b < nb; b++) {
        nH += r->p->b[b].n * r->p->b[b].n;
        nE += r->p->b[b].n;
    }
    char *bpath = path_join(r->out, "blocks.npy");
    outfile *fh = npy_open(bpath, 1, &nH);
    free(bpath);
    double *eig = xmalloc((nE ? nE : 1) * sizeof(double));
    f = csv_open_in(r->out, "blocks.csv",
                    "block,name,tensor,start,n,stride,H_offset,eig_offset,fro2,mass_share,row_mass_ratio,tau,lambda_min,"
                    "lambda_max,abs_lambda_min,abs_lambda_max,kappa,n_negative,kappa_DH_eig,n_negative_DH,kappa_DH_svd");
    size_t oh = 0, oe = 0;
    for (int b = 0; b < nb; b++) {
        const block *bl = &r->p->b[b];
        const block_metrics *bm = &res->bm[b];
        npy_write_chunk(fh, res->Hb[b], bl->n * bl->n);
        sym_eigvals((int)bl->n, res->Hb[b], eig + oe);
        csv_row(f, "%d,%s,%s,%zu,%zu,%zu,%zu,%zu,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%d,%.17g,%d,%.17g", b,
                bl->name, tensor_at(m, bl), bl->start, bl->n, bl->stride, oh, oe, bm->fro2,
                res->total > 0 ? bm->fro2 / res->total : NAN, bm->row_mass, bm->tau, bm->s.lmin, bm->s.lmax,
                bm->s.absmin, bm->s.absmax, bm->s.kappa, bm->s.nneg, bm->sd.kappa, bm->sd.nneg, bm->kappa_dh_svd);
        oh += bl->n * bl->n;
        oe += bl->n;
    }
    csv_close(f);
    outfile_commit(fh);
    npy_write_in(r->out, "block_eigs.npy", eig, 1, &nE);
    free(eig);

    npy_write_in(r->out, "row_mass.npy", res->row_mass, 1, &P);
    npy_write_in(r->out, "vhat.npy", r->k.vhat, 1, &P);
    size_t tshape[2] = {(size_t)T, (size_t)T};
    npy_write_in(r->out, "tensor_mass.npy", res->tmass, 2, tshape);
    f = csv_open_in(r->out, "tensor_mass.csv", "tensor_a,tensor_b,mass,share");
    for (int a = 0; a < T; a++)
        for (int b = 0; b < T; b++)
            csv_row(f, "%s,%s,%.17g,%.17g", m->tensors[a].name, m->tensors[b].name, res->tmass[a * T + b],
                    res->total > 0 ? res->tmass[a * T + b] / res->total : NAN);
    csv_close(f);

    char note[160];
    snprintf(note, sizeof note, "|H| of %s (P = %zu) at step %ld, %s-pooled", m->kind, P, r->k.step, r->pool_name);
    char *path = path_join(r->out, "heat.csv");
    heatmap_write(path, res->heat, res->pr, res->pc, res->factor, note);
    free(path);
    partition *tp = partition_alg2(m);
    path = path_join(r->out, "heat_bounds.csv");
    heatmap_write_bounds(path, tp, 0, res->factor);
    free(path);
    partition_free(tp);

    double blocks_fro2 = 0;
    for (int b = 0; b < nb; b++) blocks_fro2 += res->bm[b].fro2;
    f = csv_open_in(r->out, "summary.csv", "name,value");
    csv_row(f, "model,%s", m->kind);
    csv_row(f, "P,%zu", P);
    csv_row(f, "partition,%s", r->part_name);
    csv_row(f, "blocks,%d", nb);
    csv_row(f, "panels,%s", r->lower ? "lower" : "full");
    csv_row(f, "checkpoint_step,%ld", r->k.step);
    csv_row(f, "total_steps,%ld", r->k.total);
    csv_row(f, "loss_checkpoint,%.17g", r->k.loss);
    csv_row(f, "hessian_fro2,%.17g", res->total);
    csv_row(f, "blocks_fro2,%.17g", blocks_fro2);
    csv_row(f, "mass_ratio,%.17g", res->ratio);
    csv_row(f, "heat_pixels,%zu", res->pr);
    csv_row(f, "heat_factor,%zu", res->factor);
    csv_close(f);
}

static void full_spectrum(const run *r)
{
    size_t P = r->k.m->P;
    hfull_opts fo = hfull_defaults();
    fo.method = !strcmp(r->eig_name, "evd") ? EIG_EVD : EIG_EVR;
    if (r->eig_range.n == 2) {
        fo.il = r->eig_range.v[0];
        fo.iu = r->eig_range.v[1];
    }
    hessian_opts o = engine_opts(r);
    o.label = "full H";
    double *w = xmalloc(P * sizeof(double));
    char *hpath = r->write_h ? path_join(r->out, "H.npy") : NULL;
    double t0 = wall_seconds();
    int n = hessian_eigs_dist(r->k.m, &o, &fo, hpath, w);
    double t = wall_seconds() - t0;
    free(hpath);
    if (dist_rank() == 0) {
        size_t nn = (size_t)n;
        npy_write_in(r->out, "spectrum.npy", w, 1, &nn);
        spectrum s = spectrum_of(n, w);
        outfile *f = csv_open_in(r->out, "spectrum.csv", "P,count,il,iu,lambda_min,lambda_max,abs_lambda_min,"
                                                         "abs_lambda_max,kappa,n_negative");
        csv_row(f, "%zu,%d,%d,%d,%.17g,%.17g,%.17g,%.17g,%.17g,%d", P, n, fo.il ? fo.il : 1, fo.il ? fo.iu : (int)P,
                s.lmin, s.lmax, s.absmin, s.absmax, s.kappa, s.nneg);
        csv_close(f);
        run_note("full spectrum seconds: %.3f", t);
        if (!core_quiet)
            fprintf(stderr, "hessian_blocks: full spectrum of H (%d eigenvalues) in %.2f s: lambda %.6g .. %.6g\n", n, t,
                    s.lmin, s.lmax);
    }
    free(w);
}

static void parse_args(run *r, int argc, char **argv)
{
    *r = (run){.out = "results/hessian_blocks", .part_name = "alg3", .pool_name = "max",
               .path_name = "stream", .eig_name = "evr", .pixels = 256};
    model_cli_init(&r->mc);
    const cli_opt opts[] = {
        MODEL_CLI_OPTS(&r->mc),
        {"partition", OPT_STRING, &r->part_name, "alg3, alg3-value-whole, alg2 (= tensors), rows, cols, whole, or a partition file"},
        {"path", OPT_STRING, &r->path_name, "stream (panel by panel, no H held) or full (the full H: the reference; one process)"},
        {"lower", OPT_FLAG, &r->lower, "symmetric fast path (lower panels, ~0.65x the R-passes; row masses then equal across rank counts to ~1e-16, not bitwise)"},
        {"pixels", OPT_INT, &r->pixels, "pooled |H| heatmap: at most this many pixels per side"},
        {"pool", OPT_STRING, &r->pool_name, "heatmap pooling: max or mean"},
        {"full-spectrum", OPT_FLAG, &r->full_spectrum, "also every eigenvalue of H (ScaLAPACK over the ranks under MPI, else LAPACK)"},
        {"eig", OPT_STRING, &r->eig_name, "--full-spectrum solver: evr (pdsyevr, eigenvalues only) or evd (pdsyevd, with vectors: 2x memory)"},
        {"eig-range", OPT_INT_LIST, &r->eig_range, "il,iu: only eigenvalues il..iu (1-based, ascending; evr), e.g. the extremes"},
        {"write-h", OPT_FLAG, &r->write_h, "with --full-spectrum: write H.npy (P x P; MPI-IO under MPI)"},
        {"skip-blocks", OPT_FLAG, &r->skip_blocks, "with --full-spectrum: no block analysis"},
        {"out", OPT_STRING, &r->out, "output folder"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Block analysis of the exact Hessian at a training checkpoint, streamed panel by panel without\n"
              "storing H: every diagonal block H_bb of a partition with its spectrum, kappa (|l|max/|l|min and\n"
              "kappa(D H_b) with D_Adam from the checkpoint's v-hat, eigenvalue and 2-norm versions), tau, its\n"
              "mass and row-mass ratio; ||H||^2 and the partition's mass ratio; row masses; tensor x tensor\n"
              "masses; a pooled |H| heatmap. Models: the tiny Transformer at --checkpoint of AdamW training (the\n"
              "flags of fig6, any size) or the MLP (Adam; flags of partition_check). Under MPI (make MPI=1;\n"
              "mpirun -np N build-mpi/bin/hessian_blocks ...) the column panels are spread over the ranks and\n"
              "rank 0 writes what one process writes; each rank runs 1 worker thread unless\n"
              "TOOLKIT_RANK_THREADS says otherwise (one process: OPENBLAS_NUM_THREADS or every core).",
              opts, sizeof opts / sizeof *opts);
    int full = strcmp(r->path_name, "full") == 0;
    if (!full && strcmp(r->path_name, "stream") != 0) die_user("--path must be stream or full (got '%s')", r->path_name);
    if (full && dist_size() > 1) die_user("--path full is the one-process reference: run it without mpirun");
    if (r->pixels < 1 || r->pixels > 4096) die_user("--pixels must be in 1..4096 (got %d)", r->pixels);
    pool_parse(r->pool_name);
    if (strcmp(r->eig_name, "evr") && strcmp(r->eig_name, "evd")) die_user("--eig must be evr or evd (got '%s')", r->eig_name);
    if (r->eig_range.n && r->eig_range.n != 2) die_user("--eig-range expects two numbers il,iu");
    if (r->eig_range.n == 2 && !strcmp(r->eig_name, "evd")) die_user("--eig-range needs --eig evr");
    if ((r->write_h || r->skip_blocks || r->eig_range.n) && !r->full_spectrum)
        die_user("--write-h, --skip-blocks and --eig-range go with --full-spectrum");
    r->full = full;
    model_ckpt_check(&r->k, &r->mc, r->mc.model_name);
}

/* The block analysis (stream or full path) and its outputs on rank 0. */
static void block_analysis(run *r)
{
    results res = {0};
    hstream *s = NULL;
    double *H = NULL;
    if (r->full) H = full_path(r, &res);
    else s = streamed(r, &res);
    if (dist_rank() == 0) {
        double t0 = wall_seconds();
        write_results(r, &res);
        run_note("hessian seconds: %.3f", res.seconds);
        run_note("hessian cpu seconds, all ranks: %.3f", res.cpu);
        run_note("metrics and output seconds: %.3f", wall_seconds() - t0);
        run_note("ranks: %d, workers per rank: %d", dist_size(), dist_workers());
        if (!core_quiet)
            fprintf(stderr, "hessian_blocks: H streamed (%s path) in %.2f s; mass ratio %.6f; outputs in %.2f s -> %s\n",
                    r->full ? "full" : "stream", res.seconds, res.ratio, wall_seconds() - t0, r->out);
    }
    if (r->full) {
        for (int b = 0; b < r->p->nblocks; b++) free((double *)res.Hb[b]);
        free((double *)res.row_mass);
        free((double *)res.tmass);
        free((double *)res.heat);
        free(H);
    }
    free(res.Hb);
    free(res.bm);
    hstream_free(s);
}

int main(int argc, char **argv)
{
    dist_init(&argc, &argv);
    run r = {0};
    parse_args(&r, argc, argv);
    check_against_layout(&r);
    if (dist_rank() == 0) ensure_dir(r.out);
    dist_barrier();
    dist_own_work();

    build_model(&r);
    r.p = model_partition(&r.k, r.part_name);
    if (!core_quiet)
        fprintf(stderr, "hessian_blocks: %s, P = %zu, %d blocks (%s), checkpoint step %ld, %d rank%s x %d worker%s, %s panels\n",
                r.k.m->kind, r.k.m->P, r.p->nblocks, r.part_name, r.k.step, dist_size(), dist_size() > 1 ? "s" : "",
                dist_workers(), dist_workers() > 1 ? "s" : "", r.lower ? "lower" : "full");
    if (!r.skip_blocks) block_analysis(&r);
    if (r.full_spectrum) full_spectrum(&r);
    if (dist_rank() == 0) run_write_info(r.out, (unsigned long)r.mc.cli.seed);

    partition_free(r.p);
    free(r.d);
    model_ckpt_free(&r.k);
    model_cli_free(&r.mc);
    dist_finalize();
    return 0;
}
