/* bench_hstream — the streamed block analysis (hessian/stream.h) against the
 * full-H path on the same model in one run: seconds and peak memory
 * (getrusage ru_maxrss) as ratios, and the stream's own share of the time
 * against the R-passes that produce the panels.
 *
 * Both paths do the same analysis: Algorithm 3 blocks kept, every block's
 * metrics (block_analyze with a D), the mass ratio, a pooled |H| heatmap.
 * Each model runs in a child process of its own (ru_maxrss is per process); in
 * it the streamed path runs first, so the peak after it is its own, and the full
 * path's peak (H of P² doubles) comes second. Not a timed test: numbers only. */
#include "bench/bench.h"
#include "hessian/stream.h"
#include "mlp/mlp.h"
#include "tests/fixtures.h"
#include "tinytransformer/tt.h"
#include <math.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static double maxrss_gb(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss * 1024.0 / 1e9;   /* kilobytes on Linux */
}

static model *markov_tt(int B, unsigned long seed)
{
    tt_config c = tt_defaults();
    model *m = tt_new(&c);
    gsl_rng *r = rng_new(seed + 1);
    fixture_markov_batch(m, &c, B, seed, r);
    rng_free(r);
    return m;
}

typedef struct {
    double ratio, truth;   /* mass ratio; the same in long double (full path only) */
} summary;

/* Streamed: panels from `lower` (or hess_cols), each fed to the stream; the
 * model's time and the stream's time are kept apart. */
static void streamed(model *m, const partition *p, int lower, int panel, int px, const double *d,
                     double *t_model, double *t_add, double *t_total, summary *out, double **heat, block_metrics **bm)
{
    double t0 = wall_seconds();
    hstream_opts so = {p, 1, px, POOL_MEAN};
    hstream *s = hstream_new(m, &so);
    size_t P = m->P;
    double *buf = huge_alloc((size_t)panel * P, "bench panel");
    *t_model = *t_add = 0;
    for (size_t c = 0; c < P; c += (size_t)panel) {
        int k = (int)(P - c < (size_t)panel ? P - c : (size_t)panel);
        double a = wall_seconds();
        if (lower) m->hess_cols_lower(m, c, k, buf);
        else m->hess_cols(m, c, k, buf);
        double b = wall_seconds();
        hstream_add(s, c, k, buf, lower);
        *t_add += wall_seconds() - b;
        *t_model += b - a;
    }
    free(buf);
    out->ratio = hstream_mass_ratio(s);
    size_t pr, pc, f;
    const double *img = hstream_heatmap(s, &pr, &pc, &f);
    *heat = xmalloc(pr * pc * sizeof(double));
    memcpy(*heat, img, pr * pc * sizeof(double));
    *bm = xmalloc((size_t)p->nblocks * sizeof(block_metrics));
    for (int b = 0; b < p->nblocks; b++) (*bm)[b] = hstream_block_metrics(s, b, d);
    hstream_free(s);
    *t_total = wall_seconds() - t0;
}

static void full_path(model *m, const partition *p, int lower, int panel, int px, const double *d,
                      double *t_total, summary *out, double **heat, block_metrics **bm)
{
    double t0 = wall_seconds();
    hessian_opts o = hessian_defaults();
    o.panel = panel;
    o.symmetric = lower;
    double *H = hessian_full(m, &o);
    size_t P = m->P, pr, pc, f;
    out->ratio = mass_ratio(H, P, p);
    /* the mass ratio once more in long double: which of the two double sums is off */
    int *lab = xmalloc(P * sizeof(int));
    for (int k = 0; k < p->nblocks; k++)
        for (size_t e = 0; e < p->b[k].n; e++) lab[p->b[k].start + e * p->b[k].stride] = k;
    long double num = 0, den = 0;
    for (size_t i = 0; i < P; i++)
        for (size_t j = 0; j < P; j++) {
            long double h = (long double)H[i * P + j] * H[i * P + j];
            den += h;
            if (lab[i] == lab[j]) num += h;
        }
    out->truth = (double)(num / den);
    free(lab);
    *heat = heatmap_pool(H, P, P, P, px, POOL_MEAN, &pr, &pc, &f);
    *bm = xmalloc((size_t)p->nblocks * sizeof(block_metrics));
    for (int b = 0; b < p->nblocks; b++) (*bm)[b] = block_analyze(H, P, &p->b[b], d);
    free(H);
    *t_total = wall_seconds() - t0;
}

static void bench_model(model *m, const char *name, int panel, int px)
{
    size_t P = m->P;
    partition *p = partition_alg3(m, 0);
    double *d = xmalloc(P * sizeof(double));
    for (size_t i = 0; i < P; i++) d[i] = 1 + (double)(i % 7);
    double keep = 0;
    for (int b = 0; b < p->nblocks; b++) keep += 8.0 * p->b[b].n * p->b[b].n;
    hstream_opts so = {p, 1, px, POOL_MEAN};
    printf("%s: P = %zu, H %.3f GB; Algorithm 3: %d blocks, Σ n_b² %.4f GB; panel %d, heatmap <= %d px, mean-pooled;\n"
           "  hstream_bytes (stream + one panel) %.4f GB\n",
           name, P, 8.0 * P * P / 1e9, p->nblocks, keep / 1e9, panel, px, hstream_bytes(m, &so, panel) / 1e9);
    double base = maxrss_gb();
    /* full panels (hess_cols), then lower panels (the symmetric fast path): the stream's share of each */
    for (int lw = 0; lw <= 1; lw++) {
        if (!lw && !m->hess_cols) continue;
        double tm, ta, tt;
        summary s;
        double *heat;
        block_metrics *bm;
        streamed(m, p, lw, panel, px, d, &tm, &ta, &tt, &s, &heat, &bm);
        printf("  streamed, %s panels: R-passes %.3f s, hstream_add %.3f s (%.1f%% of the R-passes, %.2f ns per H entry "
               "read), total %.3f s\n", lw ? "lower" : "full", tm, ta, 100 * ta / tm,
               1e9 * ta / (lw ? 0.5 * P * (P + 1.0) : (double)P * P), tt);
        free(heat);
        free(bm);
    }
    double peak_s = maxrss_gb();
    double tm, ta, ts, tf;
    summary ss, sf;
    double *hs, *hf;
    block_metrics *bs, *bf;
    streamed(m, p, 1, panel, px, d, &tm, &ta, &ts, &ss, &hs, &bs);
    full_path(m, p, 1, panel, px, d, &tf, &sf, &hf, &bf);
    double peak_f = maxrss_gb();
    size_t f = (P + px - 1) / px, R = (P + f - 1) / f;
    /* blocks of round-off (|λ|max below 1e-6 of the largest; e.g. the Transformer's key
     * bias, whose H rows are 0 up to round-off) have no meaningful relative error */
    double eh = rel_max_diff(R * R, hs, hf), eb = 0, top = 0;
    int noise = 0;
    for (int b = 0; b < p->nblocks; b++) top = fmax(top, bf[b].s.absmax);
    for (int b = 0; b < p->nblocks; b++) {
        if (bf[b].s.absmax < 1e-6 * top) {
            noise++;
            continue;
        }
        eb = fmax(eb, fabs(bs[b].s.lmax - bf[b].s.lmax) / bf[b].s.absmax);
        eb = fmax(eb, fabs(bs[b].tau - bf[b].tau) / fmax(bf[b].tau, 1e-300));
    }
    printf("  both with lower panels: streamed %.3f s, full-H path %.3f s: time ratio streamed/full %.2f\n", ts, tf, ts / tf);
    printf("  peak RSS: before %.3f GB, after streaming %.3f GB, after the full path %.3f GB: peak ratio streamed/full "
           "%.3f (growth over the start %.3f GB vs %.3f GB)\n", base, peak_s, peak_f, peak_s / peak_f, peak_s - base,
           peak_f - base);
    printf("  agreement (lower panels: the stream takes H_ij from row min(i,j), hessian_full mirrors per panel: the\n"
           "  entries differ by H's asymmetry; the mass ratios mostly by mass_ratio()'s own rounding): mass ratio %.15f vs %.15f (rel %.2e); heatmap max diff %.2e of max;\n"
           "  λmax (of |λ|max) and τ of every block rel %.2e (%d blocks of round-off skipped)\n"
           "  mass ratio against the same sums in long double on the full path's H: streamed rel %.2e, mass_ratio() rel %.2e\n",
           ss.ratio, sf.ratio, fabs(ss.ratio - sf.ratio) / sf.ratio, eh, eb, noise, fabs(ss.ratio - sf.truth) / sf.truth,
           fabs(sf.ratio - sf.truth) / sf.truth);
    free(hs);
    free(hf);
    free(bs);
    free(bf);
    free(d);
    partition_free(p);
}

int main(int argc, char **argv)
{
    int in = 784, width = 8, classes = 10, N = 1000, panel = 128, px = 256, tt_batch = 64, no_tt = 0, no_mlp = 0;
    cli_opt opts[] = {
        {"in", OPT_INT, &in, "MLP inputs"},
        {"width", OPT_INT, &width, "MLP hidden width"},
        {"classes", OPT_INT, &classes, "MLP classes"},
        {"batch", OPT_INT, &N, "MLP samples"},
        {"panel", OPT_INT, &panel, "columns per panel"},
        {"pixels", OPT_INT, &px, "heatmap pixels per side at most"},
        {"tt-batch", OPT_INT, &tt_batch, "Transformer sequences (the model is tt_defaults(), P = 2,640)"},
        {"no-tt", OPT_FLAG, &no_tt, "skip the Transformer"},
        {"no-mlp", OPT_FLAG, &no_mlp, "skip the MLP"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Streamed block analysis (hessian/stream.h) vs the full-H path on the same model: seconds and peak\n"
              "memory (getrusage ru_maxrss) as ratios, and hstream_add's share of the R-pass time.",
              opts, sizeof opts / sizeof opts[0]);
    if (panel < 1 || px < 1 || in < 1 || width < 1 || classes < 2 || N < 1 || tt_batch < 1)
        die_user("sizes must be positive (classes >= 2)");
    core_quiet = 1;
    for (int which = 0; which < 2; which++) {
        if ((which == 0 && no_mlp) || (which == 1 && no_tt)) continue;
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) DIE("fork failed");
        if (pid == 0) {
            char name[96];
            model *m;
            if (which == 0) {
                mlp_config cfg = {.in = in, .width = width, .classes = classes, .act = ACT_TANH, .bias = 1,
                                  .loss = LOSS_XENT};
                m = fixture_mlp(&cfg, N, 1); /* on N random samples (tests/fixtures.c) */
                snprintf(name, sizeof name, "MLP %d-%d-%d tanh, N = %d", in, width, classes, N);
            } else {
                m = markov_tt(tt_batch, 1);
                snprintf(name, sizeof name, "Transformer (tt_defaults), B = %d", tt_batch);
            }
            bench_model(m, name, panel, px);
            model_free(m);
            fflush(stdout);
            _exit(0);
        }
        int status;
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            DIE("benchmark child failed (status %d)", status);
    }
    return 0;
}
