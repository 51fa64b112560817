/* spectra — per-block spectra of a model's Hessian past what the exact engine
 * holds: for every block of a partition (Algorithm 3, Algorithm 2 = tensors,
 * the whole model, a file), stochastic Lanczos quadrature (the spectral density
 * from n_v Rademacher probes × m Lanczos steps), Hutchinson's trace with its
 * standard error, and optionally Lanczos extremes with a residual test (and
 * their Ritz vectors) — all from block-restricted Hessian-vector products
 * (hessian/spectra.h: one hvp panel serves as many blocks as it has
 * directions). --method exact computes the same files from the exact block
 * spectra of the streamed analysis (hessian/stream.h), the reference.
 *
 * The model and its checkpoint come from the flags hessian_blocks takes (the
 * same flags give the same H). Deterministic per --probe-seed: probe i of
 * block b is the Rademacher vector of splitmix64(seed, b, i); the results do
 * not depend on the thread count or (make MPI=1) on the number of ranks, over
 * which the batches of Lanczos runs are spread (rank 0 writes).
 *
 * Outputs (--out): blocks.csv (per block: where, type, n, the estimated
 * λmin, λmax, |λ|min, |λ|max, κ = |λ|max/|λ|min over the quadrature nodes, the
 * mass on λ < 0 and at 0, the trace and its standard error, log10 |λ|max, how
 * far λmax moved from m/2 to m steps (an a posteriori check of its
 * convergence), the Lanczos extremes with residuals), types.csv (per block type: blocks, mean and
 * sd of log10 |λ|max), density.npy (blocks × grid: each block's smoothed
 * density), grid.npy, density_types.csv (per type, the density of the pooled
 * measure, eigenvalue-count weighted, area 1 over |λ| > zero), nodes.npy and
 * weights.npy (blocks × probes·steps, zero weight after a run's last step; the
 * exact method: blocks × max n, the eigenvalues with weight 1/n),
 * slq_alpha.npy / slq_beta.npy / slq_count.npy (the Lanczos tridiagonals, blocks
 * × probes × steps), lanczos.csv and ritz_vectors.npy (with --nev), summary.csv,
 * train/ (the Transformer's training run), run.txt.
 */
#include "core/core.h"
#include "core/dist.h"
#include "core/model.h"
#include "harness/groups.h"
#include "harness/models.h"
#include "hessian/hdist.h"
#include "hessian/hessian.h"
#include "hessian/spectra.h"
#include "tools/spectra_util.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TYPES 64

typedef struct {
    model_cli mc;
    const char *out, *part_name, *method, *grid_name, *blocks;
    int probes, steps, nev, lanczos_steps, trace_probes, ritz_vectors, grid_points, max_per_type;
    long probe_seed;
    double lanczos_tol, sigma, basis_gb, zero_rel, grid_lo, grid_hi;
    /* state */
    int exact, log_grid;
    model_ckpt k;
    partition *full, *p;          /* the partition; the blocks analysed (p ⊆ full) */
    int *kept;                    /* p's block b is full's kept[b] */
    int ntypes, *type;            /* p's blocks' types */
    char (*type_names)[BLOCK_TYPE_LEN];
    /* per block: the estimated measure (nodes, weights; count each) */
    int width;                    /* nodes per block in the arrays */
    double *nodes, *weights;
    int *count;
    double *trace, *trace_se;
    slq_data slq;
    extremes_data ext;
    double *ritz;
    size_t *ritz_off;
    double seconds;
    long directions;
} run;

/* ---- the two methods ------------------------------------------------------------------------ */

static void run_slq(run *r)
{
    int nb = r->p->nblocks;
    spectra_op *A = spectra_op_blocks(r->k.m, r->p, r->mc.cli.panel);
    slq_opts o = slq_defaults();
    /* m is at most the block size: the arrays are sized by the largest block's, not by --m
     * (--nv 100000 --m 10000 on 8-wide blocks asked for 504 GB) */
    size_t widest = 1;
    for (int b = 0; b < nb; b++) widest = r->p->b[b].n > widest ? r->p->b[b].n : widest;
    if ((size_t)r->steps > widest) r->steps = (int)widest;
    double need = 4.0 * nb * r->probes * r->steps * sizeof(double), avail = mem_available_bytes();
    if (avail >= 0 && need > avail)
        die_user("--nv %d with m = %d (--m, at most the largest block, %zu) on %d blocks: the Lanczos coefficients and "
                 "quadrature nodes need %.3f GB, %.3f GB is available: lower --nv or --m", r->probes, r->steps, widest,
                 nb, need / 1e9, avail / 1e9);
    o.probes = r->probes, o.steps = r->steps, o.seed = (uint64_t)r->probe_seed, o.basis_bytes = r->basis_gb * 1e9;
    slq_data_init(&r->slq, A, r->probes, r->steps);
    slq_run_dist(&r->slq, A, &o);
    if (r->nev > 0) {
        extremes_init(&r->ext, nb, r->nev);
        if (r->ritz_vectors) {
            r->ritz_off = xmalloc(((size_t)nb + 1) * sizeof(size_t));
            r->ritz_off[0] = 0;
            for (int b = 0; b < nb; b++) r->ritz_off[b + 1] = r->ritz_off[b] + 2 * (size_t)r->nev * r->p->b[b].n;
            memory_check("Ritz vectors", (double)r->ritz_off[nb] * sizeof(double));
            r->ritz = xmalloc((r->ritz_off[nb] ? r->ritz_off[nb] : 1) * sizeof(double));
        }
        extremes_run_dist(&r->ext, A, r->lanczos_steps, r->lanczos_tol, &o, r->ritz, r->ritz_off);
    }
    r->trace = xmalloc((size_t)nb * sizeof(double));
    r->trace_se = xmalloc((size_t)nb * sizeof(double));
    /* the trace probes: domain SEED_TRACE of the seed hash (it enters as seed ^ domain), apart from the SLQ probes */
    if (r->trace_probes > 0)
        hutchinson_dist(A, r->trace_probes, (uint64_t)r->probe_seed ^ SEED_TRACE, NULL, r->trace, r->trace_se);
    spectra_op_free(A);
    if (dist_rank() > 0) return;
    r->width = r->probes * r->steps;
    r->nodes = xcalloc((size_t)nb * r->width, sizeof(double));
    r->weights = xcalloc((size_t)nb * r->width, sizeof(double));
    r->count = xmalloc((size_t)nb * sizeof(int));
    r->directions = (long)nb * r->trace_probes;
    for (int b = 0; b < nb; b++) {
        r->count[b] = slq_measure(&r->slq, b, r->probes, r->steps, r->nodes + (size_t)b * r->width,
                                  r->weights + (size_t)b * r->width);
        if (r->trace_probes == 0) slq_trace(&r->slq, b, r->probes, &r->trace[b], &r->trace_se[b]);
        r->directions += r->count[b];
        if (r->nev > 0) r->directions += r->ext.steps[b];
    }
}

static void run_exact(run *r)
{
    hessian_opts o = hessian_defaults();
    o.panel = r->mc.cli.panel;
    o.label = "spectra (exact)";
    size_t *off = xmalloc(((size_t)r->full->nblocks + 1) * sizeof(size_t));
    double *eig = exact_block_eigs(r->k.m, r->full, &o, off);
    if (dist_rank() == 0) {
        int nb = r->p->nblocks;
        r->width = 1;
        for (int b = 0; b < nb; b++) r->width = (int)r->p->b[b].n > r->width ? (int)r->p->b[b].n : r->width;
        r->nodes = xcalloc((size_t)nb * r->width, sizeof(double));
        r->weights = xcalloc((size_t)nb * r->width, sizeof(double));
        r->count = xmalloc((size_t)nb * sizeof(int));
        r->trace = xmalloc((size_t)nb * sizeof(double));
        r->trace_se = xcalloc((size_t)nb, sizeof(double));
        for (int b = 0; b < nb; b++) {
            size_t n = r->p->b[b].n;
            const double *w = eig + off[r->kept[b]];
            r->count[b] = (int)n;
            r->trace[b] = 0;
            for (size_t i = 0; i < n; i++) {
                r->nodes[(size_t)b * r->width + i] = w[i];
                r->weights[(size_t)b * r->width + i] = 1.0 / n;
                r->trace[b] += w[i];
            }
        }
        r->directions = (long)r->k.m->P;
    }
    free(eig);
    free(off);
}

/* ---- outputs (rank 0) ----------------------------------------------------------------------- */

static const char *tensor_name(const model *m, const block *b)
{
    return b->tensor >= 0 && b->tensor < m->ntensors ? m->tensors[b->tensor].name : "-";
}

/* What the outputs share: each block's measure summary, λref (the largest |λ|
 * over the blocks), the zero threshold, log10 |λ|max (NAN for blocks with no
 * curvature beyond round-off: left out of the spread) and how many have it. */
typedef struct {
    measure_stats *st;
    double ref, zero, *h;
    int kept;
} block_stats;

static block_stats block_stats_of(const run *r)
{
    int nb = r->p->nblocks, W = r->width;
    block_stats bs = {xmalloc((size_t)nb * sizeof(measure_stats)), 0, 0, xmalloc((size_t)nb * sizeof(double)), 0};
    for (int b = 0; b < nb; b++)
        bs.ref = fmax(bs.ref, measure_stats_of(r->nodes + (size_t)b * W, r->weights + (size_t)b * W, r->count[b], 0).absmax);
    bs.zero = r->zero_rel * bs.ref;
    for (int b = 0; b < nb; b++) {
        bs.st[b] = measure_stats_of(r->nodes + (size_t)b * W, r->weights + (size_t)b * W, r->count[b], bs.zero);
        bs.h[b] = bs.st[b].absmax > bs.zero ? log10(bs.st[b].absmax) : NAN;
        bs.kept += !isnan(bs.h[b]);
    }
    return bs;
}

/* blocks.csv: one row per block. */
static void write_blocks(const run *r, const block_stats *bs)
{
    const model *m = r->k.m;
    int nb = r->p->nblocks, W = r->width, nev = r->nev;
    const measure_stats *st = bs->st;
    const double *h = bs->h;
    outfile *f = csv_open_in(r->out, "blocks.csv",
                             "block,name,tensor,type,type_index,start,n,stride,method,probes,steps,nodes,lambda_min,lambda_max,"
                             "abs_lambda_min,abs_lambda_max,kappa,neg_mass,zero_mass,trace,trace_se,log10_abs_lambda_max,"
                             "lambda_max_change_half_m,lanczos_steps,lanczos_converged,lanczos_min,lanczos_max,lanczos_resid_min,lanczos_resid_max");
    for (int b = 0; b < nb; b++) {
        const block *bl = &r->p->b[b];
        const measure_stats *s = &st[b];
        double lmin = NAN, lmax = NAN, rmin = NAN, rmax = NAN;
        int ls = 0, lc = 0;
        if (nev > 0) {
            lmin = r->ext.theta[(size_t)b * 2 * nev], lmax = r->ext.theta[(size_t)b * 2 * nev + 2 * nev - 1];
            rmin = r->ext.resid[(size_t)b * 2 * nev], rmax = r->ext.resid[(size_t)b * 2 * nev + 2 * nev - 1];
            ls = r->ext.steps[b], lc = r->ext.converged[b];
        }
        /* a posteriori: how much λmax moved from m/2 to m steps (the same tridiagonals), relative */
        double half = NAN;
        if (!r->exact && r->steps >= 2) {
            double *hn = xmalloc((size_t)W * sizeof(double)), *hw = xmalloc((size_t)W * sizeof(double));
            int hc = slq_measure(&r->slq, b, r->probes, r->steps / 2, hn, hw);
            measure_stats hs = measure_stats_of(hn, hw, hc, 0);
            half = s->absmax > 0 ? fabs(s->lmax - hs.lmax) / s->absmax : 0;
            free(hn), free(hw);
        }
        csv_row(f, "%d,%s,%s,%s,%d,%zu,%zu,%zu,%s,%d,%d,%d,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.6g,%d,%d,"
                   "%.17g,%.17g,%.17g,%.17g",
                b, bl->name, tensor_name(m, bl), r->type_names[r->type[b]], r->type[b], bl->start, bl->n, bl->stride,
                r->exact ? "exact" : "slq", r->exact ? 0 : r->probes, r->exact ? (int)bl->n : r->steps, r->count[b], s->lmin,
                s->lmax, s->absmin, s->absmax, s->kappa, s->neg_mass, s->zero_mass, r->trace[b], r->trace_se[b], h[b], half, ls,
                lc, lmin, lmax, rmin, rmax);
    }
    csv_close(f);

}

/* types.csv: per block type, the mean and sd of log10 |λ|max. */
static void write_types(const run *r, const block_stats *bs)
{
    int nb = r->p->nblocks;
    const double *h = bs->h;
    outfile *f;
    /* per type: the spread of log10 |λ|max */
    f = csv_open_in(r->out, "types.csv", "type,name,blocks,kept,mean_log10_abs_lambda_max,sd_log10_abs_lambda_max");
    double *x = xmalloc((size_t)nb * sizeof(double));
    for (int t = 0; t < r->ntypes; t++) {
        int n = 0, all = 0;
        for (int b = 0; b < nb; b++)
            if (r->type[b] == t) {
                all++;
                if (!isnan(h[b])) x[n++] = h[b];
            }
        spread_stats ss = spread_of(x, NULL, n);
        csv_row(f, "%d,%s,%d,%d,%.17g,%.17g", t, r->type_names[t], all, n, ss.mean, ss.sd);
    }
    csv_close(f);
    free(x);

}

/* grid.npy, density.npy (per block) and density_types.csv (per type, the pooled measure, eigenvalue-count
 * weighted, area 1 over |λ| > zero); returns σ. */
static double write_densities(const run *r, const block_stats *bs)
{
    int nb = r->p->nblocks, W = r->width;
    const measure_stats *st = bs->st;
    double ref = bs->ref;
    outfile *f;
    /* densities: per block, and per type the pooled measure (eigenvalue-count weighted), area 1 above zero */
    int G = r->grid_points;
    double *grid = xmalloc((size_t)G * sizeof(double)), *rho = xcalloc((size_t)nb * G, sizeof(double));
    for (int g = 0; g < G; g++) grid[g] = r->grid_lo + (r->grid_hi - r->grid_lo) * g / (G - 1);
    double sigma = r->sigma > 0 ? r->sigma : r->log_grid ? 0.1 : 0.02;
    double *scaled = xmalloc((size_t)W * sizeof(double));
    for (int b = 0; b < nb; b++) {
        /* x = λ/λref (linear) or log10(|λ|/λref) (log) */
        for (int i = 0; i < r->count[b]; i++) scaled[i] = r->nodes[(size_t)b * W + i] / (ref > 0 ? ref : 1);
        smoothed_density(rho + (size_t)b * G, grid, G, scaled, r->weights + (size_t)b * W, r->count[b], sigma, r->log_grid,
                         r->zero_rel);
    }
    npy_write_in(r->out, "grid.npy", grid, 1, (size_t[]){(size_t)G});
    npy_write_in(r->out, "density.npy", rho, 2, (size_t[]){(size_t)nb, (size_t)G});
    size_t hl = 16;
    for (int t = 0; t < r->ntypes; t++) hl += strlen(r->type_names[t]) + 1;
    char *header = xmalloc(hl);
    strcpy(header, "x");
    for (int t = 0; t < r->ntypes; t++) strcat(strcat(header, ","), r->type_names[t]);
    double *tr = xcalloc((size_t)r->ntypes * G, sizeof(double)), *tm = xcalloc((size_t)r->ntypes, sizeof(double));
    for (int b = 0; b < nb; b++) {
        double mass = 1 - st[b].zero_mass, n = (double)r->p->b[b].n;
        if (!(mass > 0)) continue;
        for (int g = 0; g < G; g++) tr[(size_t)r->type[b] * G + g] += n * rho[(size_t)b * G + g];
        tm[r->type[b]] += n * mass;
    }
    f = csv_open_in(r->out, "density_types.csv", header);
    for (int g = 0; g < G; g++) {
        fprintf(outfile_fp(f), "%.10g", grid[g]);
        for (int t = 0; t < r->ntypes; t++) fprintf(outfile_fp(f), ",%.10g", tm[t] > 0 ? tr[(size_t)t * G + g] / tm[t] : 0);
        fputc('\n', outfile_fp(f));
    }
    csv_close(f);
    free(header), free(tr), free(tm), free(grid), free(rho), free(scaled);

    return sigma;
}

/* nodes.npy, weights.npy, the tridiagonals, lanczos.csv and the Ritz vectors. */
static void write_raw(const run *r)
{
    int nb = r->p->nblocks, W = r->width, nev = r->nev;
    outfile *f;
    size_t shape[2] = {(size_t)nb, (size_t)W};
    npy_write_in(r->out, "nodes.npy", r->nodes, 2, shape);
    npy_write_in(r->out, "weights.npy", r->weights, 2, shape);
    if (!r->exact) {
        size_t s3[3] = {(size_t)nb, (size_t)r->probes, (size_t)r->steps}, runs = (size_t)nb * r->probes;
        npy_write_in(r->out, "slq_alpha.npy", r->slq.alpha, 3, s3);
        npy_write_in(r->out, "slq_beta.npy", r->slq.beta, 3, s3);
        double *c = xmalloc(runs * sizeof(double));
        for (size_t i = 0; i < runs; i++) c[i] = r->slq.count[i];
        npy_write_in(r->out, "slq_count.npy", c, 2, s3);
        free(c);
    }
    if (nev > 0) {
        f = csv_open_in(r->out, "lanczos.csv", "block,name,index,side,ritz_value,residual,steps,converged");
        for (int b = 0; b < nb; b++)
            for (int i = 0; i < 2 * nev; i++)
                csv_row(f, "%d,%s,%d,%s,%.17g,%.17g,%d,%d", b, r->p->b[b].name, i < nev ? i + 1 : 2 * nev - i,
                        i < nev ? "smallest" : "largest", r->ext.theta[(size_t)b * 2 * nev + i],
                        r->ext.resid[(size_t)b * 2 * nev + i], r->ext.steps[b], r->ext.converged[b]);
        csv_close(f);
        if (r->ritz) npy_write_in(r->out, "ritz_vectors.npy", r->ritz, 1, (size_t[]){r->ritz_off[nb]});
    }

}

/* summary.csv */
static void write_summary(const run *r, const block_stats *bs, double sigma)
{
    const model *m = r->k.m;
    int nb = r->p->nblocks;
    outfile *f;
    spread_stats all = spread_of(bs->h, r->type, nb);
    f = csv_open_in(r->out, "summary.csv", "name,value");
    csv_row(f, "model,%s", m->kind);
    csv_row(f, "P,%zu", m->P);
    csv_row(f, "partition,%s", r->part_name);
    csv_row(f, "method,%s", r->exact ? "exact" : "slq");
    csv_row(f, "blocks,%d", nb);
    csv_row(f, "blocks_in_partition,%d", r->full->nblocks);
    csv_row(f, "probes,%d", r->exact ? 0 : r->probes);
    csv_row(f, "steps,%d", r->exact ? 0 : r->steps);
    csv_row(f, "probe_seed,%ld", r->probe_seed);
    csv_row(f, "checkpoint_step,%ld", r->k.step);
    csv_row(f, "total_steps,%ld", r->k.total);
    csv_row(f, "loss_checkpoint,%.17g", r->k.loss);
    csv_row(f, "hvp_directions,%ld", r->directions);
    csv_row(f, "lambda_ref,%.17g", bs->ref);
    csv_row(f, "zero,%.17g", bs->zero);
    csv_row(f, "blocks_with_curvature,%d", bs->kept);
    csv_row(f, "spread_sd_log10_abs_lambda_max,%.17g", all.sd);
    csv_row(f, "spread_iqr_log10_abs_lambda_max,%.17g", all.iqr);
    csv_row(f, "spread_eta2_by_type,%.17g", all.eta2);
    csv_row(f, "grid,%s", r->log_grid ? "log10(|lambda|/lambda_ref)" : "lambda/lambda_ref");
    csv_row(f, "sigma,%.6g", sigma);
    csv_close(f);
}

static void write_outputs(const run *r)
{
    block_stats bs = block_stats_of(r);
    write_blocks(r, &bs);
    write_types(r, &bs);
    double sigma = write_densities(r, &bs);
    write_raw(r);
    write_summary(r, &bs, sigma);
    free(bs.st), free(bs.h);
}

static void parse_args(run *r, int argc, char **argv)
{
    *r = (run){.out = "results/spectra", .part_name = "alg3", .method = "slq", .grid_name = "log", .probes = 4,
               .steps = 20, .lanczos_steps = 100, .lanczos_tol = 1e-6, .grid_points = 300, .grid_lo = NAN,
               .grid_hi = NAN, .probe_seed = 1, .basis_gb = 1, .zero_rel = 1e-12};
    model_cli_init(&r->mc);
    const cli_opt opts[] = {
        {"method", OPT_STRING, &r->method, "slq (stochastic Lanczos quadrature) or exact (the streamed exact block spectra: the reference)"},
        {"partition", OPT_STRING, &r->part_name, "alg3, alg3-value-whole, alg2 (= tensors), rows, cols, whole, or a partition file"},
        {"nv", OPT_INT, &r->probes, "SLQ: Rademacher probes n_v per block"},
        {"m", OPT_INT, &r->steps, "SLQ: Lanczos steps m per probe (at most the block size; the largest block's sizes the arrays)"},
        {"probe-seed", OPT_LONG, &r->probe_seed, "probe i of block b: the Rademacher vector of splitmix64(seed, b, i)"},
        {"trace-probes", OPT_INT, &r->trace_probes, "Hutchinson trace from this many probes of its own (0: from the SLQ probes)"},
        {"nev", OPT_INT, &r->nev, "Lanczos extremes: the nev smallest and largest eigenvalues per block by a residual test (0: none)"},
        {"lanczos-steps", OPT_INT, &r->lanczos_steps, "--nev: most Lanczos steps per block"},
        {"lanczos-tol", OPT_DOUBLE, &r->lanczos_tol, "--nev: residual bound relative to the block's max |Ritz value|"},
        {"ritz-vectors", OPT_FLAG, &r->ritz_vectors, "--nev: also write the Ritz vectors (ritz_vectors.npy)"},
        {"blocks", OPT_STRING, &r->blocks, "analyse only the blocks whose names (as in blocks.csv) match one of these comma-separated patterns: * any run of characters, ? one, e.g. 'h*.attn.query[head *]'"},
        {"max-per-type", OPT_INT, &r->max_per_type, "analyse at most this many blocks of each type, evenly spaced (0: every block)"},
        {"grid", OPT_STRING, &r->grid_name, "density grid: log (log10(|lambda|/lambda_ref)) or linear (lambda/lambda_ref)"},
        {"grid-points", OPT_INT, &r->grid_points, "density grid points"},
        {"grid-lo", OPT_DOUBLE, &r->grid_lo, "density grid start (default -8 log, -1.05 linear)"},
        {"grid-hi", OPT_DOUBLE, &r->grid_hi, "density grid end (default 0.5 log, 1.05 linear)"},
        {"sigma", OPT_DOUBLE, &r->sigma, "Gaussian smoothing width in grid units (0: 0.1 log, 0.02 linear)"},
        {"zero", OPT_DOUBLE, &r->zero_rel, "|lambda| <= this x lambda_ref counts as zero (zero mass; left out of the log density)"},
        {"basis-gb", OPT_DOUBLE, &r->basis_gb, "most GB of Lanczos bases one batch of runs holds"},
        MODEL_CLI_OPTS(&r->mc),
        {"out", OPT_STRING, &r->out, "output folder"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Per-block spectra of a model's Hessian by stochastic Lanczos quadrature (density, extremes, kappa,\n"
              "negative mass), Hutchinson's trace with its standard error and Lanczos extremes with a residual test,\n"
              "from block-restricted Hessian-vector products (one hvp panel serves one direction of each of many\n"
              "blocks). --method exact writes the same files from the exact block spectra (streamed). Models and\n"
              "checkpoints as in hessian_blocks. Under MPI (make MPI=1) the batches of Lanczos runs are spread over\n"
              "the ranks; the files are byte-identical to one process's. Defaults m = 20, n_v = 4: from the table\n"
              "of make spectra-check (docs/spectra.md).",
              opts, sizeof opts / sizeof *opts);
}

/* Range checks of every flag (one user error each), before any output. */
static void check_args(run *r)
{
    r->exact = !strcmp(r->method, "exact");
    if (!r->exact && strcmp(r->method, "slq")) die_user("--method must be slq or exact (got '%s')", r->method);
    r->log_grid = !strcmp(r->grid_name, "log");
    if (!r->log_grid && strcmp(r->grid_name, "linear")) die_user("--grid must be log or linear (got '%s')", r->grid_name);
    if (r->probes < 1 || r->probes > 100000) die_user("--nv must be in 1..100000 (got %d)", r->probes);
    if (r->steps < 1 || r->steps > 10000) die_user("--m must be in 1..10000 (got %d)", r->steps);
    if (r->trace_probes < 0 || r->trace_probes > 1000000) die_user("--trace-probes must be in 0..1000000 (got %d)", r->trace_probes);
    if (r->nev < 0 || r->nev > 1000) die_user("--nev must be in 0..1000 (got %d)", r->nev);
    if (r->lanczos_steps < 1 || r->lanczos_steps > 100000) die_user("--lanczos-steps must be in 1..100000 (got %d)", r->lanczos_steps);
    if (!(r->lanczos_tol > 0 && r->lanczos_tol < 1)) die_user("--lanczos-tol must be in (0, 1) (got %g)", r->lanczos_tol);
    if (r->ritz_vectors && r->nev == 0) die_user("--ritz-vectors needs --nev");
    if (r->exact && (r->nev || r->trace_probes)) die_user("--nev and --trace-probes go with --method slq");
    if (r->max_per_type < 0) die_user("--max-per-type must be >= 0 (got %d)", r->max_per_type);
    if (r->grid_points < 2 || r->grid_points > 100000) die_user("--grid-points must be in 2..100000 (got %d)", r->grid_points);
    if (isnan(r->grid_lo)) r->grid_lo = r->log_grid ? -8 : -1.05;
    if (isnan(r->grid_hi)) r->grid_hi = r->log_grid ? 0.5 : 1.05;
    if (!(r->grid_hi > r->grid_lo)) die_user("--grid-hi must be above --grid-lo (got %g, %g)", r->grid_lo, r->grid_hi);
    if (!(r->sigma >= 0)) die_user("--sigma must be >= 0 (got %g)", r->sigma);
    if (!(r->zero_rel >= 0 && r->zero_rel < 1)) die_user("--zero must be in [0, 1) (got %g)", r->zero_rel);
    if (!(r->basis_gb > 0)) die_user("--basis-gb must be > 0 (got %g)", r->basis_gb);
    if (r->probe_seed < 0) die_user("--probe-seed must be >= 0 (got %ld)", r->probe_seed);
    model_ckpt_check(&r->k, &r->mc, r->mc.model_name);
}

/* The blocks analysed: the partition's (a partition file need not cover the
 * model: what it leaves out is not analysed), those --blocks names, at most
 * --max-per-type of each type (r->kept: their indices in r->full); each
 * block's type, numbered over the types analysed. */
static void choose_blocks(run *r)
{
    r->full = model_partition_blocks(&r->k, r->part_name);
    if (r->exact) partition_check_cover(r->full, r->k.m->P, "--method exact's partition");
    int nf = r->full->nblocks, *ftype = xmalloc(((size_t)nf + 1) * sizeof(int));
    char (*names)[BLOCK_TYPE_LEN] = xmalloc(MAX_TYPES * sizeof *names);
    int nftypes = block_types_any(ftype, names, MAX_TYPES, r->k.m, r->full);
    int *sel = NULL, *kept;
    partition *s = r->blocks ? partition_match(r->full, r->blocks, &sel) : r->full;
    int *stype = xmalloc(((size_t)s->nblocks + 1) * sizeof(int));
    for (int b = 0; b < s->nblocks; b++) stype[b] = ftype[sel ? sel[b] : b];
    r->p = partition_sample_types(s, stype, r->max_per_type, &kept);
    /* the types of the blocks kept, in the partition's order of types */
    int *renum = xmalloc(((size_t)nftypes + 1) * sizeof(int));
    for (int t = 0; t < nftypes; t++) renum[t] = -1;
    r->type = xmalloc(((size_t)r->p->nblocks + 1) * sizeof(int));
    r->kept = xmalloc(((size_t)r->p->nblocks + 1) * sizeof(int));
    for (int b = 0; b < r->p->nblocks; b++) r->kept[b] = sel ? sel[kept[b]] : kept[b], renum[ftype[r->kept[b]]] = 0;
    r->type_names = xmalloc(MAX_TYPES * sizeof *r->type_names);
    r->ntypes = 0;
    for (int t = 0; t < nftypes; t++)
        if (renum[t] == 0) {
            renum[t] = r->ntypes;
            memcpy(r->type_names[r->ntypes++], names[t], BLOCK_TYPE_LEN);
        }
    for (int b = 0; b < r->p->nblocks; b++) r->type[b] = renum[ftype[r->kept[b]]];
    if (s != r->full) partition_free(s);
    free(ftype), free(names), free(sel), free(kept), free(stype), free(renum);
}

static void run_free(run *r)
{
    free(r->nodes), free(r->weights), free(r->count), free(r->trace), free(r->trace_se), free(r->ritz), free(r->ritz_off);
    if (!r->exact) slq_data_free(&r->slq);
    if (r->nev > 0 && !r->exact) extremes_free(&r->ext);
    free(r->type), free(r->type_names), free(r->kept);
    partition_free(r->p);
    partition_free(r->full);
    model_ckpt_free(&r->k);
    model_cli_free(&r->mc);
}

int main(int argc, char **argv)
{
    dist_init(&argc, &argv);
    run r;
    parse_args(&r, argc, argv);
    check_args(&r);
    if (dist_rank() == 0) ensure_dir(r.out);
    dist_barrier();
    dist_own_work();

    char *train_dir = path_join(r.out, "train");
    model_ckpt_open(&r.k, train_dir);
    free(train_dir);
    choose_blocks(&r);
    if (!core_quiet)
        fprintf(stderr, "spectra: %s, P = %zu, %d of %d blocks (%s), %s%s, %d rank%s x %d worker%s\n", r.k.m->kind, r.k.m->P,
                r.p->nblocks, r.full->nblocks, r.part_name, r.exact ? "exact" : "SLQ",
                r.exact ? "" : (r.nev ? " + Lanczos extremes" : ""), dist_size(), dist_size() > 1 ? "s" : "", dist_workers(),
                dist_workers() > 1 ? "s" : "");

    double t0 = wall_seconds();
    if (r.exact) run_exact(&r);
    else run_slq(&r);
    r.seconds = wall_seconds() - t0;
    if (dist_rank() == 0) {
        write_outputs(&r);
        run_note("spectra seconds: %.3f", r.seconds);
        run_note("ranks: %d, workers per rank: %d", dist_size(), dist_workers());
        run_write_info(r.out, (unsigned long)r.mc.cli.seed);
        if (!core_quiet)
            fprintf(stderr, "spectra: %ld Hessian-vector products in %.2f s (%.0f per s) -> %s\n", r.directions, r.seconds,
                    r.directions / fmax(r.seconds, 1e-9), r.out);
    }

    run_free(&r);
    dist_finalize();
    return 0;
}
