/* fig4 — κ(D_Adam H)/κ(H) against τ(H) for rotated random PD matrices
 * (paper Fig. 4).
 *
 * Panel a: κ = 500 over several d; panel b: d = 50 over several κ. For each
 * (d, κ): nthetas angle draws, each scaled by R = k/(nr-1), k = 0..nr-1, and
 * npoints points x per matrix. Writes <out>/fig4a.csv and fig4b.csv (one row
 * per (d, κ, R)), fig4a_phase.csv and fig4b_phase.csv (samples binned by the
 * τ of their matrix), stats.csv (the claim's share of falling curves in four
 * readings, its shuffled-τ control, and every curve's Spearman ρ), claims.txt,
 * run.txt.
 */
#include "harness/harness.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* phase diagram: PHASE_BINS bins of log10 τ over [PHASE_LOG_LO, 0] */
#define PHASE_BINS 24
#define PHASE_LOG_LO (-2.4)

static const char *SUMMARY =
    "Paper Fig. 4: r = kappa(D_Adam H)/kappa(H) against tau(H) for H = Q diag(kappa,1,...,1) Q',\n"
    "Q from d(d-1)/2 Givens rotations with angles R*theta, theta_ij ~ U[-pi/2, pi/2], R = k/(nr-1).\n"
    "D_Adam = diag(1/|g|), g = Hx, x ~ N(0, 1/sqrt(d)) (variance 1/sqrt(d)); r by two kappa definitions:\n"
    "  a (default in plots): lambda_max/lambda_min of D^1/2 H D^1/2 (the spectrum of DH);\n"
    "  b: sigma_max/sigma_min of DH (numpy's cond).\n"
    "A point x with some g_i = 0 is skipped and counted (column 'skipped').\n"
    "Choices where the paper is silent: fresh x for every matrix (every R); theta drawn independently for\n"
    "every (d, kappa) from a stream seeded by (seed, d, kappa, draw), so results do not depend on --threads\n"
    "and the (50, 500) curve is the same in both panels; kappa(H) in r is 1 + (kappa-1)|q|^2 (= kappa).\n"
    "CSV rows give mean, median and quartiles of r. The median is the primary statistic (the mean of r is\n"
    "infinite in theory: 1/min|g_i| has no finite mean for Gaussian x); the mean is the paper's averaging.\n"
    "Panel a: kappa = --kappa over --ds; panel b: d = --d over --kappas. The paper lists neither set;\n"
    "these defaults are ours. Scales: quick (8 theta x 20 x x 51 R) and paper (40 x 100 x 51).\n"
    "Claim (claims.txt, stats.csv): per curve, rho = Spearman correlation of the statistic of r at each R\n"
    "with the mean tau there, over ALL R; the curve 'falls as tau -> 1' when rho <= -0.5. Per seed: the share\n"
    "of curves that fall; 'most' = more than half. Four readings: kappa definition a or b x median or mean\n"
    "of r per R (a with the median is primary). Control: the same with tau shuffled across R in each curve\n"
    "(the baselines stream of --seed). Reference: rho over R = 0..R* (the smallest mean tau) only, the first version's rule.\n"
    "Seeds (--seed S): the theta and x draws from its draws stream (streams: harness.h seed_for).";

typedef struct {
    int d;
    double kappa;
    quad_sweep_result *s;
} sweep_entry;

/* One sweep per distinct (d, κ); panels share the (50, 500) one. */
typedef struct {
    int n;
    sweep_entry e[2 * LIST_MAX];
} sweep_cache;

static quad_sweep_result *cache_find(sweep_cache *c, int d, double kappa)
{
    for (int i = 0; i < c->n; i++)
        if (c->e[i].d == d && c->e[i].kappa == kappa) return c->e[i].s;
    return NULL;
}

static void cache_add(sweep_cache *c, int d, double kappa)
{
    for (int i = 0; i < c->n; i++)
        if (c->e[i].d == d && c->e[i].kappa == kappa) return;
    c->e[c->n++] = (sweep_entry){d, kappa, NULL};
}

/* The four readings of the claim "r falls as tau -> 1": kappa definition (a:
 * eigenvalues of D^1/2 H D^1/2, b: singular values of DH) x the statistic of r
 * over the samples at each R (median; mean, the paper's "averaging"). The first is
 * primary, the other three are robustness checks. */
enum { A_MEDIAN, B_MEDIAN, A_MEAN, B_MEAN, NREAD };
static const char *READING[NREAD] = {"a_median", "b_median", "a_mean", "b_mean"};

static double reading_of(const quad_sweep_row *r, int m)
{
    switch (m) {
    case A_MEDIAN: return r->ra_median;
    case B_MEDIAN: return r->rb_median;
    case A_MEAN: return r->ra_mean;
    default: return r->rb_mean;
    }
}

/* One curve of a panel, judged every way. */
typedef struct {
    char panel;
    int d;
    double kappa;
    double rho[NREAD];          /* Spearman(mean tau, statistic of r) over every R: the claim */
    double rho_shuffled[NREAD]; /* the same with tau shuffled across R: the negative control */
    double rho_branch[NREAD];   /* over R = 0..R* only (the first version's rule; reference) */
    int kstar;                  /* index of the smallest mean tau */
    double R_star, tau_min;
    double at_tau1[NREAD], at_densest[NREAD];  /* the statistic at R = 0 and at R* */
    double share_ge1[2];        /* share of samples with r >= 1 at R*, definitions a and b */
} curve_eval;

/* Share of the finite samples r[(t, k, p)] >= 1 at one R index k. */
static double share_at_least_one(const quad_sweep_result *s, const double *r, int k)
{
    long ge = 0, n = 0;
    for (int t = 0; t < s->nthetas; t++)
        for (int p = 0; p < s->npoints; p++) {
            double v = r[((size_t)t * s->nr + k) * s->npoints + p];
            if (isfinite(v)) n++, ge += v >= 1;
        }
    return n ? (double)ge / n : NAN;
}

/* tau is not monotone in R: it falls from 1 (R = 0) to its minimum at R* and
 * rises a little again, while r keeps changing. The claim is judged over every
 * R (the paper's R in {k/50}); R = 0..R* alone is kept for reference. */
static curve_eval evaluate(char panel, const quad_sweep_result *s, const quad_sweep_row *rows, const int *perm)
{
    int nr = s->nr;
    curve_eval c = {.panel = panel, .d = s->d, .kappa = s->kappa};
    double *tau = xmalloc(nr * sizeof(double)), *v = xmalloc(nr * sizeof(double));
    for (int k = 0; k < nr; k++) {
        tau[k] = rows[k].tau_mean;
        if (tau[k] < tau[c.kstar]) c.kstar = k;
    }
    c.R_star = rows[c.kstar].R, c.tau_min = tau[c.kstar];
    for (int m = 0; m < NREAD; m++) {
        for (int k = 0; k < nr; k++) v[k] = reading_of(&rows[k], m);
        c.rho[m] = quad_trend_rho(tau, v, NULL, nr);
        c.rho_shuffled[m] = quad_trend_rho(tau, v, perm, nr);
        c.rho_branch[m] = c.kstar >= 2 ? quad_trend_rho(tau, v, NULL, c.kstar + 1) : NAN;
        c.at_tau1[m] = v[0], c.at_densest[m] = v[c.kstar];
    }
    c.share_ge1[0] = share_at_least_one(s, s->ra, c.kstar);
    c.share_ge1[1] = share_at_least_one(s, s->rb, c.kstar);
    free(tau), free(v);
    return c;
}

/* One panel's CSVs; each curve's evaluation appended to ev. */
static void write_panel(const char *out, char panel, sweep_cache *cache, const int *ds, const double *kappas,
                        int ncurves, gsl_rng *shuffle, curve_eval *ev, int *nev)
{
    char name[32];
    snprintf(name, sizeof name, "fig4%c.csv", panel);
    outfile *f = csv_open_in(out, name, "d,kappa,R,tau_mean,tau_min,tau_max,ra_mean,ra_median,ra_q1,ra_q3,"
                                "rb_mean,rb_median,rb_q1,rb_q3,samples,skipped");
    snprintf(name, sizeof name, "fig4%c_phase.csv", panel);
    outfile *ph = csv_open_in(out, name, "row,d,kappa,tau_lo,tau_hi,tau_mid,samples,ra_mean,ra_median,rb_mean,rb_median");
    for (int c = 0; c < ncurves; c++) {
        quad_sweep_result *s = cache_find(cache, ds[c], kappas[c]);
        quad_sweep_row *rows = xmalloc(s->nr * sizeof *rows);
        quad_sweep_summary(rows, s);
        long per = (long)s->nthetas * s->npoints;
        for (int k = 0; k < s->nr; k++) {
            quad_sweep_row *r = &rows[k];
            csv_row(f, "%d,%g,%.6f,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%ld,%ld", s->d,
                    s->kappa, r->R, r->tau_mean, r->tau_min, r->tau_max, r->ra_mean, r->ra_median, r->ra_q1, r->ra_q3,
                    r->rb_mean, r->rb_median, r->rb_q1, r->rb_q3, r->n, per - r->n);
        }
        /* phase diagram: every sample binned by the τ of its own matrix */
        size_t cap = (size_t)s->nthetas * s->nr * s->npoints;
        double *ba = xmalloc(cap * sizeof(double)), *bb = xmalloc(cap * sizeof(double));
        for (int b = 0; b < PHASE_BINS; b++) {
            double lo = pow(10, PHASE_LOG_LO * (1 - (double)b / PHASE_BINS));
            double hi = pow(10, PHASE_LOG_LO * (1 - (double)(b + 1) / PHASE_BINS));
            if (b == 0) lo = 0;
            size_t n = 0;
            double suma = 0, sumb = 0;
            for (int t = 0; t < s->nthetas; t++)
                for (int k = 0; k < s->nr; k++) {
                    double tau = s->tau[(size_t)t * s->nr + k];
                    if (!(tau >= lo && (tau < hi || (b == PHASE_BINS - 1 && tau <= hi)))) continue;
                    for (int p = 0; p < s->npoints; p++) {
                        size_t i = ((size_t)t * s->nr + k) * s->npoints + p;
                        if (!isfinite(s->ra[i])) continue;
                        ba[n] = s->ra[i], bb[n] = s->rb[i];
                        suma += ba[n], sumb += bb[n];
                        n++;
                    }
                }
            if (n)
                csv_row(ph, "%d,%d,%g,%.6g,%.6g,%.6g,%zu,%.10g,%.10g,%.10g,%.10g", c, s->d, s->kappa, lo, hi,
                        sqrt(fmax(lo, pow(10, PHASE_LOG_LO)) * hi), n, suma / n, quantile(ba, n, 0.5), sumb / n,
                        quantile(bb, n, 0.5));
        }
        free(ba), free(bb);
        int *perm = xmalloc(s->nr * sizeof(int));
        random_permutation(perm, shuffle, s->nr);
        ev[(*nev)++] = evaluate(panel, s, rows, perm);
        free(perm);
        free(rows);
    }
    csv_close(f);
    csv_close(ph);
}

/* "a_d50_k500": a curve's name in stats.csv. */
static void curve_name(char *buf, size_t n, const curve_eval *c)
{
    snprintf(buf, n, "%c_d%d_k%g", c->panel, c->d, c->kappa);
}

static void write_stats(const char *out, const curve_eval *ev, int n)
{
    outfile *st = stats_open(out);
    double *rho = xmalloc((size_t)n * sizeof(double)), *sh = xmalloc((size_t)n * sizeof(double));
    double *br = xmalloc((size_t)n * sizeof(double));
    char cn[48];
    for (int m = 0; m < NREAD; m++) {
        for (int i = 0; i < n; i++) rho[i] = ev[i].rho[m], sh[i] = ev[i].rho_shuffled[m], br[i] = ev[i].rho_branch[m];
        stats_putf(st, quad_share_falling(rho, n, QUAD_FALLS_RHO), "fig4.share_falling.%s", READING[m]);
        stats_putf(st, quad_share_falling(sh, n, QUAD_FALLS_RHO), "fig4.control.share_falling.%s", READING[m]);
        stats_putf(st, quad_share_falling(br, n, QUAD_FALLS_RHO), "fig4.ref.branch.share_falling.%s", READING[m]);
    }
    for (int m = 0; m < NREAD; m++)
        for (int i = 0; i < n; i++) {
            curve_name(cn, sizeof cn, &ev[i]);
            stats_putf(st, ev[i].rho[m], "fig4.rho.%s.%s", READING[m], cn);
            stats_putf(st, ev[i].rho_shuffled[m], "fig4.control.rho.%s.%s", READING[m], cn);
            stats_putf(st, ev[i].rho_branch[m], "fig4.ref.branch.rho.%s.%s", READING[m], cn);
        }
    csv_close(st);
    free(rho), free(sh), free(br);
}

static void write_claims(const char *out, const curve_eval *ev, int n, int nthetas, int npoints, int nr, long seed)
{
    outfile *cf = outfile_open_in(out, "claims.txt");
    FILE *cl = outfile_fp(cf);
    fprintf(cl, "E1 (paper Fig. 4): for most d and kappa, r = kappa(D_Adam H)/kappa(H) falls as tau -> 1.\n"
                "Per curve, rho = Spearman correlation of the statistic of r at each R with the mean tau there,\n"
                "over all %d R; the curve falls when rho <= %g. Per seed: the share of the %d curves that fall\n"
                "(a curve in both panels counts in each); 'most' = more than half. Four readings: kappa by\n"
                "(a) eigenvalues of D^1/2 H D^1/2 or (b) singular values of DH, statistic median or mean of r;\n"
                "a_median is the primary claim. Control: the same share with tau shuffled across R in each curve.\n"
                "Reference (the first version's rule): rho over R = 0..R* only. make verdicts judges over seeds.\n"
                "Counts: %d theta x %d x x %d R per (d, kappa), seed %ld.\n\n",
            nr, QUAD_FALLS_RHO, n, nthetas, npoints, nr, seed);
    /* one column of 8 characters per reading, in both rho blocks */
    fprintf(cl, "%-12s |%-32s |%-32s | %-8s | %s\n%-12s |", "", " rho over all R (* = falls)",
            " rho, tau shuffled (control)", "R <= R*", "a_median r: at tau = 1 -> at the densest R; r >= 1 there (a, b)",
            "curve");
    const char *shortname[NREAD] = {"a_med", "b_med", "a_mean", "b_mean"};
    for (int w = 0; w < 2; w++) {
        for (int m = 0; m < NREAD; m++) fprintf(cl, " %-7s", shortname[m]);
        fprintf(cl, " |");
    }
    fprintf(cl, " a_med    |\n");
    for (int i = 0; i < n; i++) {
        const curve_eval *c = &ev[i];
        char cn[48];
        curve_name(cn, sizeof cn, c);
        fprintf(cl, "%-12s |", cn);
        for (int m = 0; m < NREAD; m++) fprintf(cl, " %+.3f%c", c->rho[m], c->rho[m] <= QUAD_FALLS_RHO ? '*' : ' ');
        fprintf(cl, " |");
        for (int m = 0; m < NREAD; m++) fprintf(cl, " %+.3f ", c->rho_shuffled[m]);
        fprintf(cl, " | %+.3f   | %.3g -> %.3g at tau %.3f (R* %.2f); %.0f%%, %.0f%%\n", c->rho_branch[A_MEDIAN],
                c->at_tau1[A_MEDIAN], c->at_densest[A_MEDIAN], c->tau_min, c->R_star, 100 * c->share_ge1[0],
                100 * c->share_ge1[1]);
    }
    double *v = xmalloc((size_t)n * sizeof(double));
    fprintf(cl, "\n");
    for (int m = 0; m < NREAD; m++) {
        int k[3];
        for (int w = 0; w < 3; w++) {
            for (int i = 0; i < n; i++) v[i] = w == 0 ? ev[i].rho[m] : w == 1 ? ev[i].rho_shuffled[m] : ev[i].rho_branch[m];
            k[w] = (int)lround(n * quad_share_falling(v, n, QUAD_FALLS_RHO));
        }
        fprintf(cl, "E1 %-9s %s: %d of %d curves fall over all R (%s in this seed); shuffled tau: %d of %d; "
                    "R<=R* only: %d of %d\n",
                READING[m], m == A_MEDIAN ? "(primary)   " : "(robustness)", k[0], n, 2 * k[0] > n ? "most" : "not most",
                k[1], n, k[2], n);
    }
    free(v);
    outfile_commit(cf);
}

#define KAPPA_MAX 1e12 /* largest kappa(H) --kappa and --kappas accept (see main) */

int main(int argc, char **argv)
{
    const char *scale = "quick", *out = "results/fig4", *panels = "ab";
    int nthetas = 0, npoints = 0, nr = 51, threads = 2, d_b = 50;
    double kappa_a = 500;
    long seed = 1;
    int_list ds = {6, {2, 5, 10, 20, 50, 100}};
    double_list kappas = {5, {10, 100, 500, 1000, 5000}};
    const cli_opt opts[] = {
        {"scale", OPT_STRING, &scale, "quick or paper: sets --thetas and --points"},
        {"thetas", OPT_INT, &nthetas, "angle draws per (d, kappa) (0 = from --scale: 8 quick, 40 paper)"},
        {"points", OPT_INT, &npoints, "points x per matrix (0 = from --scale: 20 quick, 100 paper)"},
        {"rs", OPT_INT, &nr, "number of R values k/(rs-1), k = 0..rs-1"},
        {"panels", OPT_STRING, &panels, "which panels: a, b or ab"},
        {"ds", OPT_INT_LIST, &ds, "panel a: dimensions d"},
        {"kappa", OPT_DOUBLE, &kappa_a, "panel a: kappa(H), in [1, 1e12]"},
        {"d", OPT_INT, &d_b, "panel b: dimension d"},
        {"kappas", OPT_DOUBLE_LIST, &kappas, "panel b: condition numbers kappa(H), each in [1, 1e12]"},
        {"threads", OPT_INT, &threads, "worker threads (results do not depend on it)"},
        {"seed", OPT_LONG, &seed, "the run's seed: theta and x draws (draws stream), the control's shuffles (baselines stream)"},
        {"out", OPT_STRING, &out, "output folder"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv, SUMMARY, opts, sizeof opts / sizeof *opts);
    int paper = 0;
    if (strcmp(scale, "paper") == 0) paper = 1;
    else if (strcmp(scale, "quick") != 0) die_user("--scale must be quick or paper (got '%s')", scale);
    if (nthetas < 0) die_user("--thetas must be >= 1 (got %d)", nthetas);
    if (npoints < 0) die_user("--points must be >= 1 (got %d)", npoints);
    if (nthetas == 0) nthetas = paper ? 40 : 8;
    if (npoints == 0) npoints = paper ? 100 : 20;
    if (nr < 2) die_user("--rs must be >= 2 (got %d)", nr);
    if (threads < 1 || threads > 256) die_user("--threads must be in 1..256 (got %d)", threads);
    blas_memory_guard(threads, "--threads 1"); /* the sweep workers call BLAS at once */
    if (seed < 0) die_user("--seed must be >= 0 (got %ld)", seed);
    /* kappa(H) in [1, 1e12]: above ~1/eps = 4.5e15 the small eigenvalue is lost
     * in round-off (r means nothing), above ~1e154 r itself is NaN. */
    if (!(kappa_a >= 1 && kappa_a <= KAPPA_MAX)) die_user("--kappa must be in [1, 1e12] (got %g)", kappa_a);
    for (int i = 0; i < kappas.n; i++)
        if (!(kappas.v[i] >= 1 && kappas.v[i] <= KAPPA_MAX))
            die_user("--kappas must be in [1, 1e12] (got %g)", kappas.v[i]);
    int do_a = strchr(panels, 'a') != NULL, do_b = strchr(panels, 'b') != NULL;
    if (!panels[0] || strspn(panels, "ab") != strlen(panels))
        die_user("--panels must be a, b or ab (got '%s')", panels);
    int da[LIST_MAX], db[LIST_MAX];
    double ka[LIST_MAX], kb[LIST_MAX];
    sweep_cache cache = {0};
    for (int i = 0; do_a && i < ds.n; i++) {
        quad_check_sweep(ds.v[i], kappa_a, nthetas, npoints, nr);
        da[i] = ds.v[i], ka[i] = kappa_a;
        cache_add(&cache, da[i], ka[i]);
    }
    for (int i = 0; do_b && i < kappas.n; i++) {
        quad_check_sweep(d_b, kappas.v[i], nthetas, npoints, nr);
        db[i] = d_b, kb[i] = kappas.v[i];
        cache_add(&cache, db[i], kb[i]);
    }
    ensure_dir(out);

    progress prog;
    progress_start(&prog, "fig4", (long)cache.n * nthetas);
    double t0 = wall_seconds();
    unsigned long draws = seed_for((unsigned long)seed, SEED_DRAWS);
    for (int i = 0; i < cache.n; i++) {
        quad_sweep_config c = {cache.e[i].d, cache.e[i].kappa, nthetas, npoints, nr, draws, threads, &prog,
                               (long)i * nthetas};
        cache.e[i].s = quad_sweep_run(&c);
    }
    progress_end(&prog);
    double secs = wall_seconds() - t0;

    gsl_rng *shuffle = rng_new(seed_for((unsigned long)seed, SEED_BASELINES));
    curve_eval *ev = xmalloc(((size_t)ds.n + kappas.n) * sizeof *ev);
    int nev = 0;
    if (do_a) write_panel(out, 'a', &cache, da, ka, ds.n, shuffle, ev, &nev);
    if (do_b) write_panel(out, 'b', &cache, db, kb, kappas.n, shuffle, ev, &nev);
    write_stats(out, ev, nev);
    write_claims(out, ev, nev, nthetas, npoints, nr, seed);
    char *path = path_join(out, "claims.txt");
    echo_file(path);
    free(path);
    if (!core_quiet) fprintf(stderr, "fig4: %d sweeps in %.2f s (%d threads)\n", cache.n, secs, threads);
    run_write_info(out, (unsigned long)seed);
    free(ev);
    rng_free(shuffle);
    for (int i = 0; i < cache.n; i++) quad_sweep_free(cache.e[i].s);
    return 0;
}
