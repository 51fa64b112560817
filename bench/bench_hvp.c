/* bench_hvp — Hessian-vector products of nanoGPT-layout Transformers (the
 * worked example's layout: vocabulary 32, block 64, 4 heads, MLP 4C, biases,
 * tied head; a batch of 16 × 64 tokens), one worker thread, float64, timed in
 * CPU seconds (what other processes on a shared machine change least):
 *   - directions per second with one direction per hvp call (what Lanczos on
 *     the whole model and Hutchinson run) and with 32 per call, at P ≈ 1e4
 *     (C 24, 1 layer) and 1e5 (C 64, 2 layers); --big adds 1e6 (C 128, 5
 *     layers: a few minutes);
 *   - the FLOP count of one H v (the dgemm flops the kernels issue; the
 *     elementwise work is a few percent more) and its rate as a share of this
 *     run's dgemm GFLOP/s (1000³, one thread);
 *   - the cost of a block-restricted direction (hvp_tensors) against a full
 *     H v, for every Algorithm 3 block type in the first and the last layer of
 *     a 5-layer model (C 32): time and dgemm flops;
 *   - per-block SLQ (m 20, n_v 1 unless --m, --nv) over the 8 query heads of
 *     the 1e5 model with the restricted product and with masked full ones.
 * --size S (0, 1, 2) [--export DIR]: only the size S, printed as name,value
 * lines (peak_rss_gb: the process's peak after the one-direction calls); with --export, the model (model.safetensors), its tokens, 32
 * directions and their H v (V.npy, HV.npy: toolkit order), the query heads'
 * blocks, probes and SLQ tridiagonals (heads.csv, probes.npy, slq_alpha.npy,
 * slq_beta.npy) into DIR: what bench/torch_hvp.py runs PyTorch on (make bench
 * does when Debian's python3-torch is installed). Numbers only, not a test. */
#include "bench/bench.h"
#include "harness/groups.h"
#include "tinytransformer/tt.h"
#include "hessian/spectra.h"
#include "tinytransformer/tt_kernels.h" /* tt_dgemm_flops */
#include <math.h>
#include <string.h>

static const struct {
    int C, layers;
} sizes[3] = {{24, 1}, {64, 2}, {128, 5}};

typedef struct {
    int m, nv, big, size, reps;
    const char *export;
} opts;

/* The worked example's layout at width C, `layers` blocks; 16 Markov sequences of 64 + 1 tokens. */
static model *nanogpt(int C, int layers, int **tokens)
{
    tt_config c = {.V = 32, .C = C, .heads = 4, .M = 4 * C, .layers = layers, .T = 64, .bias = 1, .tied = 1,
                   .seed = 7};
    model *m = tt_new(&c);
    tt_data *d = tt_data_markov(c.V, 2, 2, 3);
    gsl_rng *r = rng_new(4);
    int *tok = xmalloc(16 * 65 * sizeof(int));
    tt_data_batch(d, r, 16, c.T, tok);
    tt_set_batch(m, tok, 16);
    tt_set_threads(m, 1);
    rng_free(r);
    tt_data_free(d);
    if (tokens) *tokens = tok;
    else free(tok);
    return m;
}

static double *gaussian(size_t n, unsigned long seed)
{
    gsl_rng *r = rng_new(seed);
    double *x = xmalloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) x[i] = rng_gaussian(r, 1);
    rng_free(r);
    return x;
}

/* Directions per second of hvp on k directions: calls for at least `budget`
 * seconds (at least one), the best of `reps` such rounds; *flops: dgemm flops per direction. */
static double rate(model *m, const double *V, double *HV, int k, double budget, int reps, double *flops)
{
    m->hvp(m, V, HV, k); /* the base pass, outside the timing */
    double best = 0;
    for (int r = 0; r < reps; r++) {
        long long f0 = tt_dgemm_flops();
        double t0 = cpu_seconds(), t;
        int calls = 0;
        do {
            m->hvp(m, V, HV, k);
            calls++;
        } while ((t = cpu_seconds() - t0) < budget);
        best = fmax(best, (double)k * calls / t);
        if (flops) *flops = (double)(tt_dgemm_flops() - f0) / ((double)k * calls);
    }
    return best;
}

/* Seconds of SLQ over the blocks of p (probes nv, m steps); restricted 0: the
 * model's hvp on masked full directions instead of hvp_tensors. */
static double slq_seconds(model *m, const partition *p, const opts *o, int restricted, slq_data *d)
{
    void (*keep)(model *, const double *, double *, int, const int *, const int *) = m->hvp_tensors;
    if (!restricted) m->hvp_tensors = NULL;
    spectra_op *A = spectra_op_blocks(m, p, 32);
    slq_opts so = slq_defaults();
    so.probes = o->nv, so.steps = o->m;
    slq_data_init(d, A, o->nv, o->m);
    double t0 = cpu_seconds();
    slq_run(d, A, &so);
    double t = cpu_seconds() - t0;
    spectra_op_free(A);
    m->hvp_tensors = keep;
    return t;
}

/* The query heads' SLQ, restricted and not, as name,value lines (and the
 * exported blocks, probes and tridiagonals); returns the restricted seconds. */
static void heads_slq(model *m, const opts *o, int print)
{
    partition *p3 = partition_alg3(m, 0);
    int *idx;
    partition *q = partition_match(p3, "h*.attn.query[head *]", &idx);
    slq_data dr, du;
    double tr = slq_seconds(m, q, o, 1, &dr), tu = slq_seconds(m, q, o, 0, &du);
    size_t nrun = (size_t)q->nblocks * o->nv * o->m;
    int same = memcmp(dr.alpha, du.alpha, nrun * sizeof(double)) == 0 && memcmp(dr.beta, du.beta, nrun * sizeof(double)) == 0;
    if (print) {
        printf("  per-block SLQ over the %d query heads (%d parameters each), m %d, n_v %d: restricted %.2f s, "
               "masked full H v %.2f s: x%.2f; tridiagonals %s\n", q->nblocks, (int)q->b[0].n, o->m, o->nv, tr, tu,
               tu / tr, same ? "bitwise equal" : "DIFFER");
    } else {
        printf("slq_restricted_s,%.6f\nslq_masked_s,%.6f\nslq_blocks,%d\nslq_same,%d\n", tr, tu, q->nblocks, same);
    }
    if (o->export) {
        char *path = path_join(o->export, "heads.csv");
        outfile *f = csv_open(path, "name,start,n,layer,head");
        for (int b = 0; b < q->nblocks; b++) {
            int layer = -1, head = -1;
            sscanf(q->b[b].name, "h%d.attn.query[head %d]", &layer, &head);
            csv_row(f, "%s,%zu,%zu,%d,%d", q->b[b].name, q->b[b].start, q->b[b].n, layer, head);
        }
        csv_close(f);
        free(path);
        size_t n = q->b[0].n, nz = (size_t)q->nblocks * o->nv * n;
        double *z = xmalloc(nz * sizeof(double));
        for (int b = 0; b < q->nblocks; b++)
            for (int i = 0; i < o->nv; i++)
                rademacher(z + ((size_t)b * o->nv + i) * n, n, seed_hash(SEED_PROBES, slq_defaults().seed, (uint64_t)b, (uint64_t)i));
        size_t sz[3] = {(size_t)q->nblocks, (size_t)o->nv, n}, st[3] = {(size_t)q->nblocks, (size_t)o->nv, (size_t)o->m};
        npy_write_in(o->export, "probes.npy", z, 3, sz);
        npy_write_in(o->export, "slq_alpha.npy", dr.alpha, 3, st);
        npy_write_in(o->export, "slq_beta.npy", dr.beta, 3, st);
        free(z);
    }
    slq_data_free(&dr), slq_data_free(&du);
    free(idx);
    partition_free(q), partition_free(p3);
}

/* One size: k = 1 and k = 32 rates, flops, their share of dgemm. */
static void one_size(int s, const opts *o, double ref, int print)
{
    int *tok;
    model *m = nanogpt(sizes[s].C, sizes[s].layers, &tok);
    size_t P = m->P;
    double *V = gaussian(P, 11), *HV = xmalloc(P * sizeof(double)), flops;
    double budget = s == 2 ? 0 : 1.0;
    double r1 = rate(m, V, HV, 1, budget, o->reps, &flops), peak1 = peak_rss_gb(); /* at one direction */
    free(V), free(HV);
    V = gaussian(32 * P, 11), HV = xmalloc(32 * P * sizeof(double)); /* row 0 the same direction */
    double r32 = rate(m, V, HV, 32, budget, s == 2 ? 1 : o->reps, NULL);
    double gf = r1 * flops / 1e9;
    if (print) {
        printf("C %d, %d layer%s, P = %zu: one direction per call %.2f directions/s, 32 per call %.2f: "
               "ratio %.2f (target >= 0.8)\n", sizes[s].C, sizes[s].layers, sizes[s].layers > 1 ? "s" : "", P, r1, r32,
               r1 / r32);
        printf("  H v: %.3g GFLOP (dgemm), at one per call %.1f GFLOP/s = %.0f%% of dgemm\n", flops / 1e9, gf,
               100 * gf / ref);
    } else {
        printf("P,%zu\nC,%d\nlayers,%d\nk1_dir_per_s,%.6f\nk32_dir_per_s,%.6f\nflops_per_dir,%.6g\ndgemm_gflops,%.3f\n"
               "peak_rss_gb,%.3f\n", P, sizes[s].C, sizes[s].layers, r1, r32, flops, ref, peak1);
    }
    if (o->export) {
        ensure_dir(o->export);
        char *path = path_join(o->export, "model.safetensors");
        tt_save_nanogpt(m, NULL, path, 0);
        free(path);
        double *t = xmalloc(16 * 65 * sizeof(double));
        for (int i = 0; i < 16 * 65; i++) t[i] = tok[i];
        npy_write_in(o->export, "tokens.npy", t, 2, (size_t[]){16, 65});
        m->hvp(m, V, HV, 32);
        npy_write_in(o->export, "V.npy", V, 2, (size_t[]){32, P});
        npy_write_in(o->export, "HV.npy", HV, 2, (size_t[]){32, P});
        free(t);
    }
    if (s == 1) heads_slq(m, o, print);
    free(V), free(HV), free(tok);
    model_free(m);
}

/* CPU seconds of a direction on block b (hvp_tensors) and of a full H v (hvp
 * on a dense direction), measured in turn, the best of 4 each; their dgemm flops. */
static void block_seconds(model *m, const block *b, const double *dense, double s[2], double f[2])
{
    size_t P = m->P;
    double *v = xcalloc(P, sizeof(double)), *hv = xmalloc(P * sizeof(double));
    for (size_t e = 0; e < b->n; e++) v[b->start + e * b->stride] = dense[b->start + e * b->stride];
    int t = b->tensor;
    m->hvp(m, v, hv, 1); /* the base pass */
    s[0] = s[1] = 1e300;
    for (int r = 0; r < 8; r++) {
        long long f0 = tt_dgemm_flops();
        double t0 = cpu_seconds();
        if (r % 2 == 0) m->hvp_tensors(m, v, hv, 1, &t, &t);
        else m->hvp(m, dense, hv, 1);
        s[r % 2] = fmin(s[r % 2], cpu_seconds() - t0);
        f[r % 2] = (double)(tt_dgemm_flops() - f0);
    }
    free(v), free(hv);
}

/* Every Algorithm 3 block type in the first and the last layer of a 5-layer
 * model (the types outside the layers once): restricted / full H v. */
static void block_types_table(void)
{
    model *m = nanogpt(32, 5, NULL);
    partition *p = partition_alg3(m, 0);
    int *type = xmalloc((size_t)p->nblocks * sizeof(int));
    char (*names)[BLOCK_TYPE_LEN] = xmalloc(64 * sizeof *names);
    int nt = block_types(type, names, 64, m, p);
    double *dense = gaussian(m->P, 12);
    printf("a block-restricted direction against a full H v (time, dgemm flops), 5 layers, C 32, P = %zu:\n", m->P);
    printf("  %-24s %-16s %-16s\n", "block type", "first layer", "last layer");
    double full = 0;
    for (int t = 0; t < nt; t++) {
        char cell[2][40] = {"-", "-"};
        for (int side = 0; side < 2; side++)
            for (int b = 0; b < p->nblocks; b++) {
                int layer = m->tensors[p->b[b].tensor].layer;
                if (type[b] != t || (layer >= 0 && layer != (side ? 4 : 0)) || (layer < 0 && side)) continue;
                double s[2], f[2];
                block_seconds(m, &p->b[b], dense, s, f);
                snprintf(cell[side], sizeof cell[side], "%.2f, %.2f", s[0] / s[1], f[0] / f[1]);
                full = s[1];
                break;
            }
        printf("  %-24s %-16s %-16s\n", names[t], cell[0], cell[1]);
    }
    printf("  (a full H v: %.4f s)\n", full);
    free(type), free(names), free(dense);
    partition_free(p);
    model_free(m);
}

int main(int argc, char **argv)
{
    opts o = {.m = 20, .nv = 1, .size = -1, .reps = 3};
    const cli_opt opts_[] = {
        {"big", OPT_FLAG, &o.big, "also P ~ 1e6 (C 128, 5 layers; a few minutes)"},
        {"size", OPT_INT, &o.size, "only this size (0: P ~ 1e4, 1: 1e5, 2: 1e6), as name,value lines"},
        {"export", OPT_STRING, &o.export, "with --size: write the model, tokens, directions, H v and SLQ blocks here"},
        {"m", OPT_INT, &o.m, "SLQ: Lanczos steps"},
        {"nv", OPT_INT, &o.nv, "SLQ: probes per block"},
        {"reps", OPT_INT, &o.reps, "timing rounds (the best is kept)"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Hessian-vector products of nanoGPT-layout Transformers at P ~ 1e4, 1e5 (--big: 1e6), one thread:\n"
              "directions per second at one and 32 directions per call, the FLOP rate against dgemm, the cost of\n"
              "block-restricted directions by block type, per-block SLQ restricted and not. Numbers only.",
              opts_, sizeof opts_ / sizeof *opts_);
    if (o.size < -1 || o.size > 2) die_user("--size must be 0, 1 or 2 (got %d)", o.size);
    if (o.export && o.size < 0) die_user("--export goes with --size");
    if (o.m < 1 || o.nv < 1 || o.reps < 1) die_user("--m, --nv and --reps must be >= 1");
    core_quiet = 1;
    openblas_set_num_threads(1);
    double ref = dgemm_gflops_on(1000, 3, 1, 1);
    if (o.size >= 0) {
        one_size(o.size, &o, ref, 0);
        return 0;
    }
    printf("bench_hvp: one thread, float64; dgemm reference (1000^3, same run) %.1f GFLOP/s\n", ref);
    for (int s = 0; s < (o.big ? 3 : 2); s++) one_size(s, &o, ref, 1);
    block_types_table();
    return 0;
}
