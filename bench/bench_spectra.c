/* bench_spectra — block-restricted Hessian-vector products (hessian/spectra.h)
 * against a full-H column panel on the same model, in one run: directions per
 * second of
 *   (a) the model's column panel hess_cols (k unit directions: k columns of H),
 *       the exact streamed analysis' unit of work (the baseline);
 *   (b) hvp on a panel of k dense random directions;
 *   (c) block_hvp on a panel of k directions, each on another Algorithm 3 block
 *       (what SLQ and Lanczos run: one direction per block, k blocks per
 *       R-pass), and on Algorithm 2's tensors;
 * and the ratios (b)/(a), (c)/(a). A direction of (c) is one R-pass like a
 * column of (a), restricted to the block's tensors where the model has
 * hvp_tensors (the Transformer; docs/spectra.md), so SLQ of n_v probes × m
 * steps on a block of n parameters costs about n_v·m/n · (c's cost over a's)
 * of the block's share of the exact H (docs/cluster.md).
 * Best of 3 repetitions of `panels` panels each. Not a timed test: numbers only. */
#include "bench/bench.h"
#include "tests/fixtures.h"
#include "hessian/spectra.h"
#include "mlp/mlp.h"
#include "tinytransformer/tt.h"
#include <math.h>
#include <string.h>

static model *markov_tt(int layers, int C, int M, int heads, int B)
{
    tt_config c = tt_defaults();
    c.layers = layers, c.C = C, c.M = M, c.heads = heads;
    model *m = tt_new(&c);
    gsl_rng *r = rng_new(2);
    fixture_markov_batch(m, &c, B, 1, r);
    rng_free(r);
    return m;
}

/* Directions per second of `panels` panels of k, best of 3. kind 0: hess_cols (or hvp on unit
 * vectors when the model has none), 1: hvp on dense directions, 2: block_hvp on p's blocks. */
static double rate(model *m, int kind, const partition *p, int k, int panels)
{
    size_t P = m->P;
    double *V = xcalloc((size_t)k * P, sizeof(double)), *HV = xmalloc((size_t)k * P * sizeof(double));
    gsl_rng *r = rng_new(9);
    const block **bl = xmalloc((size_t)k * sizeof(block *));
    double **X = xmalloc((size_t)k * sizeof(double *)), **Y = xmalloc((size_t)k * sizeof(double *));
    if (kind == 1)
        for (size_t i = 0; i < (size_t)k * P; i++) V[i] = rng_gaussian(r, 1);
    if (kind == 2)
        for (int j = 0; j < k; j++) {
            bl[j] = &p->b[(j * 7919) % p->nblocks];   /* k blocks spread over the partition */
            X[j] = xmalloc(bl[j]->n * sizeof(double));
            Y[j] = xmalloc(bl[j]->n * sizeof(double));
            for (size_t e = 0; e < bl[j]->n; e++) X[j][e] = rng_gaussian(r, 1);
        }
    m->hvp(m, V, HV, 1);   /* the base pass, outside the timing */
    double best = 1e300;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = wall_seconds();
        for (int q = 0; q < panels; q++) {
            if (kind == 0) {
                size_t j0 = ((size_t)q * k * 131) % (P - (size_t)k);
                if (m->hess_cols) m->hess_cols(m, j0, k, HV);
                else {
                    for (int j = 0; j < k; j++) V[(size_t)j * P + j0 + j] = 1;
                    m->hvp(m, V, HV, k);
                    for (int j = 0; j < k; j++) V[(size_t)j * P + j0 + j] = 0;
                }
            } else if (kind == 1) {
                m->hvp(m, V, HV, k);
            } else {
                block_hvp(m, k, bl, (const double *const *)X, Y, V, HV);
            }
        }
        double t = wall_seconds() - t0;
        best = t < best ? t : best;
    }
    if (kind == 2)
        for (int j = 0; j < k; j++) free(X[j]), free(Y[j]);
    free(X), free(Y), free(bl), free(V), free(HV);
    rng_free(r);
    return (double)k * panels / best;
}

static void bench_model(const char *what, model *m, int k, int panels)
{
    partition *p3 = partition_alg3(m, 0), *p2 = partition_alg2(m);
    double cols = rate(m, 0, NULL, k, panels), dense = rate(m, 1, NULL, k, panels);
    double b3 = rate(m, 2, p3, k, panels), b2 = rate(m, 2, p2, k, panels);
    printf("%s, P = %zu, panels of %d:\n", what, m->P, k);
    printf("  full-H columns (hess_cols)           %9.0f directions/s  (baseline)\n", cols);
    printf("  hvp, dense directions                %9.0f directions/s  ratio %.2f\n", dense, dense / cols);
    printf("  block-restricted, Algorithm 3 blocks %9.0f directions/s  ratio %.2f  (%d blocks, one direction each)\n", b3,
           b3 / cols, p3->nblocks);
    printf("  block-restricted, Algorithm 2 tensors%9.0f directions/s  ratio %.2f  (%d tensors)\n", b2, b2 / cols,
           p2->nblocks);
    partition_free(p3);
    partition_free(p2);
}

int main(int argc, char **argv)
{
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Block-restricted Hessian-vector products (one direction per block, many blocks per R-pass) against\n"
              "a full-H column panel on the same model: directions per second and their ratio, best of 3, on the\n"
              "paper's Transformer, a 2-layer C 64 Transformer and an MLP 49-32-10. Prints numbers only.",
              NULL, 0);
    core_quiet = 1;
    printf("bench_spectra: Hessian-vector products per second, %d worker threads\n", toolkit_threads());
    model *m = markov_tt(1, 16, 32, 4, 64);
    bench_model("tiny Transformer (1 layer, C 16), Hessian batch 64 sequences", m, 64, 4);
    model_free(m);
    m = markov_tt(2, 64, 128, 4, 8);
    bench_model("Transformer 2 layers, C 64, M 128, Hessian batch 8 sequences", m, 64, 2);
    model_free(m);
    m = fixture_mlp(&(mlp_config){.in = 49, .width = 32, .classes = 10, .act = ACT_TANH, .bias = 1, .loss = LOSS_XENT},
                    1000, 3);
    bench_model("MLP 49-32-10, 1,000 images", m, 64, 8);
    model_free(m);
    return 0;
}
