/* fig4 — κ(D_Adam H)/κ(H) against τ(H) for rotated random PD matrices
 * (paper Fig. 4).
 *
 * Panel a: κ = 500 over several d; panel b: d = 50 over several κ. For each
 * (d, κ): nthetas angle draws, each scaled by R = k/(nr-1), k = 0..nr-1, and
 * npoints points x per matrix. Writes <out>/fig4a.csv and fig4b.csv (one row
 * per (d, κ, R)), fig4a_phase.csv and fig4b_phase.csv (samples binned by the
 * τ of their matrix), fig4a_matrices.csv and fig4b_matrices.csv (every matrix:
 * R, τ, median and mean r), stats.csv, claims.txt, run.txt.
 *
 * The claims are read against each matrix's own τ (τ is not monotone in R, so a
 * reading against R tests another sentence; quad.h "read against τ"): r falls
 * as τ → 1 (Spearman over log-τ bins), the level (r < 1 near diagonal, r > 1
 * when dense), and "τ is the only changing factor" (what R explains of log r at
 * fixed τ). The first version's readings against R stay in stats.csv as
 * references (fig4.share_falling*, fig4.rho*).
 *
 * The control: the same sweep with D = diag(1/|z|), z ~ N(0, I) drawn independently
 * of H (and of x) for every sample, from the baselines stream of --seed: a diagonal
 * scaling that knows nothing of H, the null for "D_Adam (from g = Hx) helps as τ → 1".
 * It can pass: the rule asks only that r fall as τ → 1, which a scaling blind to H
 * may show too.
 */
#include "core/core.h"
#include "harness/seeds.h"
#include "quad/quad.h"
#include "verdict/verdict.h"
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
    "Claims (claims.txt, stats.csv fig4.tau.*), read against each matrix's own tau (tau is not monotone in R),\n"
    "per curve, with r of a matrix the median (or mean) over its points: (1) r falls as tau -> 1: Spearman\n"
    "rho <= -0.5 between tau and r over 24 log-tau bins (median tau, median r per bin; also over the matrices\n"
    "themselves); (2) the level: median r < 1 over the matrices with tau >= 0.9 and > 1 over the tenth with\n"
    "the smallest tau; (3) tau the only changing factor: R explains < 25% of log r at fixed tau (partial R^2\n"
    "of R after log tau within 10 equal-count tau bins). Per seed: the share of curves for which each holds.\n"
    "Control: the same with D = diag(1/|z|), z ~ N(0, I) drawn independently of H for every sample (the\n"
    "baselines stream of --seed): a scaling that knows nothing of H. fig4<panel>_matrices.csv has every matrix.\n"
    "References (the first version's readings against R): rho with the mean tau at each R over all R and\n"
    "over R = 0..R*, and tau shuffled across R (stats.csv fig4.share_falling*, fig4.rho*).\n"
    "Seeds (--seed S): the theta and x draws from its draws stream (streams: harness/seeds.h seed_for).";

/* The four readings of the claim "r falls as tau -> 1": kappa definition (a:
 * eigenvalues of D^1/2 H D^1/2, b: singular values of DH) x the statistic of r
 * over the samples at each R (median; mean, the paper's "averaging"). The first is
 * primary, the other three are robustness checks. */
enum { A_MEDIAN, B_MEDIAN, A_MEAN, B_MEAN, NREAD };
static const char *READING[NREAD] = {"a_median", "b_median", "a_mean", "b_mean"};

#define KAPPA_MAX 1e12
/* Read against each matrix's tau: "close to diagonal" is tau >= 0.9, "dense" the tenth of the
 * matrices with the smallest tau; "tau is the only changing factor" holds on a curve when R
 * explains less than a quarter of log r's variance within 10 equal-count tau bins. */
static const quad_tau_options TAU_OPTIONS = {.diag_tau = 0.9, .dense_share = 0.1, .nbins = 10,
                                             .nlog = PHASE_BINS, .log_lo = PHASE_LOG_LO};
#define TAU_ONLY_R2 0.25 /* largest kappa(H) --kappa and --kappas accept (see parse_args) */

typedef struct {
    const char *scale, *out, *panels;
    int nthetas, npoints, nr, threads, d_b;
    double kappa_a;
    long seed;
    int_list ds;
    double_list kappas;
} fig4_args;

/* One curve of a panel: its (d, kappa), the sweep it reads (shared by the panels for the
 * same (d, kappa)) and the sweep's summary per R. */
typedef struct {
    char panel;
    int d;
    double kappa;
    const quad_sweep_result *s;
    quad_sweep_row *rows;       /* (s->nr) */
} curve;

/* One sweep per distinct (d, kappa); panels share the (50, 500) one. */
typedef struct {
    int n;
    int d[2 * LIST_MAX];
    double kappa[2 * LIST_MAX];
    quad_sweep_result *s[2 * LIST_MAX];
} sweep_cache;

/* One curve, judged every way. */
typedef struct {
    double rho[NREAD];          /* Spearman(mean tau, statistic of r) over every R: the claim */
    double rho_control[NREAD];  /* the same for the random D: the negative control */
    double rho_shuffled[NREAD]; /* the claim's with tau shuffled across R: the first control (reference) */
    double rho_branch[NREAD];   /* over R = 0..R* only: the "as tau -> 1" reading */
    double rho_control_branch[NREAD]; /* the random D's over R = 0..R* */
    int kstar;                  /* index of the smallest mean tau */
    double R_star, tau_min;
    double at_tau1[NREAD], at_densest[NREAD];  /* the statistic at R = 0 and at R* */
    double control_at_tau1[NREAD], control_at_densest[NREAD]; /* the random D's */
    double share_ge1[2];        /* share of samples with r >= 1 at R*, definitions a and b */
    quad_tau_reading tau[NREAD], tau_control[NREAD]; /* read against each matrix's own tau */
} curve_eval;

/* ---- set up --------------------------------------------------------------------------- */

static void parse_args(fig4_args *a, int argc, char **argv)
{
    *a = (fig4_args){.scale = "quick", .out = "results/fig4", .panels = "ab", .nr = 51, .threads = 2, .d_b = 50,
                     .kappa_a = 500, .seed = 1, .ds = {.n = 6, .v = {2, 5, 10, 20, 50, 100}},
                     .kappas = {.n = 5, .v = {10, 100, 500, 1000, 5000}}};
    const cli_opt opts[] = {
        {"scale", OPT_STRING, &a->scale, "quick or paper: sets --thetas and --points"},
        {"thetas", OPT_INT, &a->nthetas, "angle draws per (d, kappa) (0 = from --scale: 8 quick, 40 paper)"},
        {"points", OPT_INT, &a->npoints, "points x per matrix (0 = from --scale: 20 quick, 100 paper)"},
        {"rs", OPT_INT, &a->nr, "number of R values k/(rs-1), k = 0..rs-1"},
        {"panels", OPT_STRING, &a->panels, "which panels: a, b or ab"},
        {"ds", OPT_INT_LIST, &a->ds, "panel a: dimensions d"},
        {"kappa", OPT_DOUBLE, &a->kappa_a, "panel a: kappa(H), in [1, 1e12]"},
        {"d", OPT_INT, &a->d_b, "panel b: dimension d"},
        {"kappas", OPT_DOUBLE_LIST, &a->kappas, "panel b: condition numbers kappa(H), each in [1, 1e12]"},
        {"threads", OPT_INT, &a->threads, "worker threads (results do not depend on it)"},
        {"seed", OPT_LONG, &a->seed, "the run's seed: theta and x draws (draws stream), the control's shuffles (baselines stream)"},
        {"out", OPT_STRING, &a->out, "output folder"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv, SUMMARY, opts, sizeof opts / sizeof *opts);
    int paper = 0;
    if (strcmp(a->scale, "paper") == 0) paper = 1;
    else if (strcmp(a->scale, "quick") != 0) die_user("--scale must be quick or paper (got '%s')", a->scale);
    if (a->nthetas < 0) die_user("--thetas must be >= 1 (got %d)", a->nthetas);
    if (a->npoints < 0) die_user("--points must be >= 1 (got %d)", a->npoints);
    if (a->nthetas == 0) a->nthetas = paper ? 40 : 8;
    if (a->npoints == 0) a->npoints = paper ? 100 : 20;
    if (a->nr < 2) die_user("--rs must be >= 2 (got %d)", a->nr);
    if (a->threads < 1 || a->threads > 256) die_user("--threads must be in 1..256 (got %d)", a->threads);
    blas_memory_guard(a->threads, "--threads 1"); /* the sweep workers call BLAS at once */
    if (a->seed < 0) die_user("--seed must be >= 0 (got %ld)", a->seed);
    /* kappa(H) in [1, 1e12]: above ~1/eps = 4.5e15 the small eigenvalue is lost
     * in round-off (r means nothing), above ~1e154 r itself is NaN. */
    if (!(a->kappa_a >= 1 && a->kappa_a <= KAPPA_MAX)) die_user("--kappa must be in [1, 1e12] (got %g)", a->kappa_a);
    for (int i = 0; i < a->kappas.n; i++)
        if (!(a->kappas.v[i] >= 1 && a->kappas.v[i] <= KAPPA_MAX))
            die_user("--kappas must be in [1, 1e12] (got %g)", a->kappas.v[i]);
    if (!a->panels[0] || strspn(a->panels, "ab") != strlen(a->panels))
        die_user("--panels must be a, b or ab (got '%s')", a->panels);
}

/* The curves of the panels asked for, panel a first; each (d, kappa) checked. */
static int curves_of(curve *cv, const fig4_args *a)
{
    int n = 0;
    for (int i = 0; strchr(a->panels, 'a') && i < a->ds.n; i++)
        cv[n++] = (curve){.panel = 'a', .d = a->ds.v[i], .kappa = a->kappa_a};
    for (int i = 0; strchr(a->panels, 'b') && i < a->kappas.n; i++)
        cv[n++] = (curve){.panel = 'b', .d = a->d_b, .kappa = a->kappas.v[i]};
    for (int i = 0; i < n; i++) quad_check_sweep(cv[i].d, cv[i].kappa, a->nthetas, a->npoints, a->nr);
    return n;
}

/* ---- run ------------------------------------------------------------------------------- */

static int cache_index(const sweep_cache *c, int d, double kappa)
{
    for (int i = 0; i < c->n; i++)
        if (c->d[i] == d && c->kappa[i] == kappa) return i;
    return -1;
}

/* One sweep per distinct (d, kappa) of the curves, in the curves' order; each curve
 * points at its sweep and gets its summary per R. Returns the sweeps' wall time. */
static double run_sweeps(sweep_cache *c, curve *cv, int ncurves, const fig4_args *a)
{
    for (int i = 0; i < ncurves; i++)
        if (cache_index(c, cv[i].d, cv[i].kappa) < 0) {
            c->d[c->n] = cv[i].d, c->kappa[c->n] = cv[i].kappa;
            c->n++;
        }
    progress prog;
    progress_start(&prog, "fig4", (long)c->n * a->nthetas);
    double t0 = wall_seconds();
    unsigned long draws = seed_for((unsigned long)a->seed, SEED_DRAWS);
    for (int i = 0; i < c->n; i++) {
        quad_sweep_config cfg = {.d = c->d[i], .kappa = c->kappa[i], .nthetas = a->nthetas, .npoints = a->npoints,
                                 .nr = a->nr, .seed = draws, .threads = a->threads, .prog = &prog,
                                 .prog_base = (long)i * a->nthetas, .control = 1,
                                 .control_seed = seed_for((unsigned long)a->seed, SEED_BASELINES)};
        c->s[i] = quad_sweep_run(&cfg);
    }
    progress_end(&prog);
    double secs = wall_seconds() - t0;
    for (int i = 0; i < ncurves; i++) {
        cv[i].s = c->s[cache_index(c, cv[i].d, cv[i].kappa)];
        cv[i].rows = xmalloc(cv[i].s->nr * sizeof *cv[i].rows);
        quad_sweep_summary(cv[i].rows, cv[i].s);
    }
    return secs;
}

/* ---- judge ----------------------------------------------------------------------------- */

static double reading_of(const quad_sweep_row *r, int m)
{
    switch (m) {
    case A_MEDIAN: return r->ra_median;
    case B_MEDIAN: return r->rb_median;
    case A_MEAN: return r->ra_mean;
    default: return r->rb_mean;
    }
}

/* The same reading of the random-D control's r. */
static double control_reading_of(const quad_sweep_row *r, int m)
{
    switch (m) {
    case A_MEDIAN: return r->ca_median;
    case B_MEDIAN: return r->cb_median;
    case A_MEAN: return r->ca_mean;
    default: return r->cb_mean;
    }
}

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

/* The sample array and the median/mean choice of reading m, for D_Adam or the control. */
static const double *samples_of(const quad_sweep_result *s, int m, int control)
{
    int b = m == B_MEDIAN || m == B_MEAN;
    return control ? (b ? s->cb : s->ca) : (b ? s->rb : s->ra);
}

/* Every reading of the curve against the tau of each of its matrices (quad.h). */
static void read_against_tau(curve_eval *c, const quad_sweep_result *s)
{
    int n = s->nthetas * s->nr;
    double *rm = xmalloc((size_t)n * sizeof(double)), *R = xmalloc((size_t)n * sizeof(double));
    for (int t = 0; t < s->nthetas; t++)
        for (int k = 0; k < s->nr; k++) R[(size_t)t * s->nr + k] = (double)k / (s->nr - 1);
    for (int m = 0; m < NREAD; m++)
        for (int control = 0; control < 2; control++) {
            quad_matrix_stat(rm, s, samples_of(s, m, control), m == A_MEAN || m == B_MEAN);
            quad_tau_reading q = quad_read_against_tau(s->tau, rm, R, n, &TAU_OPTIONS);
            if (control) c->tau_control[m] = q;
            else c->tau[m] = q;
        }
    free(rm), free(R);
}

/* tau is not monotone in R: it falls from 1 (R = 0) to its minimum at R* and
 * rises a little again, while r keeps changing. The claim is judged over every
 * R (the paper's R in {k/50}); R = 0..R* alone is kept for reference. */
static curve_eval evaluate(const curve *cv, const int *perm)
{
    const quad_sweep_result *s = cv->s;
    const quad_sweep_row *rows = cv->rows;
    int nr = s->nr;
    curve_eval c = {.kstar = 0};
    double *tau = xmalloc(nr * sizeof(double)), *v = xmalloc(nr * sizeof(double)), *vc = xmalloc(nr * sizeof(double));
    for (int k = 0; k < nr; k++) {
        tau[k] = rows[k].tau_mean;
        if (tau[k] < tau[c.kstar]) c.kstar = k;
    }
    c.R_star = rows[c.kstar].R, c.tau_min = tau[c.kstar];
    for (int m = 0; m < NREAD; m++) {
        for (int k = 0; k < nr; k++) v[k] = reading_of(&rows[k], m), vc[k] = control_reading_of(&rows[k], m);
        c.rho[m] = quad_trend_rho(tau, v, NULL, nr);
        c.rho_control[m] = quad_trend_rho(tau, vc, NULL, nr);
        c.rho_shuffled[m] = quad_trend_rho(tau, v, perm, nr);
        c.rho_branch[m] = c.kstar >= 2 ? quad_trend_rho(tau, v, NULL, c.kstar + 1) : NAN;
        c.rho_control_branch[m] = c.kstar >= 2 ? quad_trend_rho(tau, vc, NULL, c.kstar + 1) : NAN;
        c.at_tau1[m] = v[0], c.at_densest[m] = v[c.kstar];
        c.control_at_tau1[m] = vc[0], c.control_at_densest[m] = vc[c.kstar];
    }
    c.share_ge1[0] = share_at_least_one(s, s->ra, c.kstar);
    c.share_ge1[1] = share_at_least_one(s, s->rb, c.kstar);
    read_against_tau(&c, s);
    free(tau), free(v), free(vc);
    return c;
}

/* Every curve judged, in order; the control's permutation of each curve's R drawn
 * from `shuffle` in the same order. */
static void judge(curve_eval *ev, const curve *cv, int ncurves, gsl_rng *shuffle)
{
    for (int i = 0; i < ncurves; i++) {
        int *perm = xmalloc(cv[i].s->nr * sizeof(int));
        random_permutation(perm, shuffle, cv[i].s->nr);
        ev[i] = evaluate(&cv[i], perm);
        free(perm);
    }
}

/* ---- write ----------------------------------------------------------------------------- */

/* One curve's rows of fig4<panel>.csv: the summary of r at every R. */
static void write_curve_rows(outfile *f, const curve *cv)
{
    const quad_sweep_result *s = cv->s;
    long per = (long)s->nthetas * s->npoints;
    for (int k = 0; k < s->nr; k++) {
        const quad_sweep_row *r = &cv->rows[k];
        csv_row(f, "%d,%g,%.6f,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%ld,%ld,%.10g,%.10g,"
                   "%.10g,%.10g", s->d, s->kappa, r->R, r->tau_mean, r->tau_min, r->tau_max, r->ra_mean, r->ra_median,
                r->ra_q1, r->ra_q3, r->rb_mean, r->rb_median, r->rb_q1, r->rb_q3, r->n, per - r->n, r->ca_mean,
                r->ca_median, r->cb_mean, r->cb_median);
    }
}

/* Phase-diagram bin b of log10 tau: PHASE_BINS bins over [PHASE_LOG_LO, 0], the first open below. */
static void phase_bin(int b, double *lo, double *hi)
{
    *lo = pow(10, PHASE_LOG_LO * (1 - (double)b / PHASE_BINS));
    *hi = pow(10, PHASE_LOG_LO * (1 - (double)(b + 1) / PHASE_BINS));
    if (b == 0) *lo = 0;
}

/* One curve's rows of fig4<panel>_phase.csv: every sample binned by the tau of its own matrix. */
static void write_curve_phase(outfile *ph, int row, const quad_sweep_result *s)
{
    size_t cap = (size_t)s->nthetas * s->nr * s->npoints;
    double *ba = xmalloc(cap * sizeof(double)), *bb = xmalloc(cap * sizeof(double));
    for (int b = 0; b < PHASE_BINS; b++) {
        double lo, hi;
        phase_bin(b, &lo, &hi);
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
            csv_row(ph, "%d,%d,%g,%.6g,%.6g,%.6g,%zu,%.10g,%.10g,%.10g,%.10g", row, s->d, s->kappa, lo, hi,
                    sqrt(fmax(lo, pow(10, PHASE_LOG_LO)) * hi), n, suma / n, quantile(ba, n, 0.5), sumb / n,
                    quantile(bb, n, 0.5));
    }
    free(ba), free(bb);
}

/* One curve's rows of fig4<panel>_matrices.csv: every matrix, its R, its tau, and the median of r
 * over its points (a, b; D_Adam and the random-D control). */
static void write_curve_matrices(outfile *f, int row, const quad_sweep_result *s)
{
    size_t n = (size_t)s->nthetas * s->nr;
    double *st[6];
    for (int j = 0; j < 6; j++) st[j] = xmalloc(n * sizeof(double));
    quad_matrix_stat(st[0], s, s->ra, 0), quad_matrix_stat(st[1], s, s->rb, 0);
    quad_matrix_stat(st[2], s, s->ra, 1), quad_matrix_stat(st[3], s, s->rb, 1);
    quad_matrix_stat(st[4], s, s->ca, 0), quad_matrix_stat(st[5], s, s->cb, 0);
    for (int t = 0; t < s->nthetas; t++)
        for (int k = 0; k < s->nr; k++) {
            size_t m = (size_t)t * s->nr + k;
            csv_row(f, "%d,%d,%g,%d,%.6f,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g", row, s->d, s->kappa, t,
                    (double)k / (s->nr - 1), s->tau[m], st[0][m], st[1][m], st[2][m], st[3][m], st[4][m], st[5][m]);
        }
    for (int j = 0; j < 6; j++) free(st[j]);
}

/* fig4<panel>.csv, fig4<panel>_phase.csv and fig4<panel>_matrices.csv over the panel's curves
 * (row: the curve's index in its panel). */
static void write_panel(const char *out, char panel, const curve *cv, int ncurves)
{
    char name[32];
    snprintf(name, sizeof name, "fig4%c.csv", panel);
    outfile *f = csv_open_in(out, name, "d,kappa,R,tau_mean,tau_min,tau_max,ra_mean,ra_median,ra_q1,ra_q3,"
                                "rb_mean,rb_median,rb_q1,rb_q3,samples,skipped,control_ra_mean,control_ra_median,"
                                "control_rb_mean,control_rb_median");
    snprintf(name, sizeof name, "fig4%c_phase.csv", panel);
    outfile *ph = csv_open_in(out, name, "row,d,kappa,tau_lo,tau_hi,tau_mid,samples,ra_mean,ra_median,rb_mean,rb_median");
    snprintf(name, sizeof name, "fig4%c_matrices.csv", panel);
    outfile *mx = csv_open_in(out, name, "row,d,kappa,draw,R,tau,ra_median,rb_median,ra_mean,rb_mean,"
                                         "control_ra_median,control_rb_median");
    int row = 0;
    for (int i = 0; i < ncurves; i++) {
        if (cv[i].panel != panel) continue;
        write_curve_rows(f, &cv[i]);
        write_curve_matrices(mx, row, cv[i].s);
        write_curve_phase(ph, row++, cv[i].s);
    }
    csv_close(f);
    csv_close(ph);
    csv_close(mx);
}

/* "a_d50_k500": a curve's name in stats.csv. */
static void curve_name(char *buf, size_t n, const curve *c)
{
    snprintf(buf, n, "%c_d%d_k%g", c->panel, c->d, c->kappa);
}

/* The rho of every curve in one reading: over all R, the random-D control, tau shuffled, over
 * R <= R*, the control's over R <= R*. */
enum { RHO_ALL, RHO_CONTROL, RHO_SHUFFLED, RHO_BRANCH, RHO_CONTROL_BRANCH, NRHO };

static double rho_of(const curve_eval *e, int which, int m)
{
    switch (which) {
    case RHO_ALL: return e->rho[m];
    case RHO_CONTROL: return e->rho_control[m];
    case RHO_SHUFFLED: return e->rho_shuffled[m];
    case RHO_BRANCH: return e->rho_branch[m];
    default: return e->rho_control_branch[m];
    }
}

/* How many of the n curves fall in reading m by one of the three rho (a NaN rho does not). */
static int falling(const curve_eval *ev, int n, int which, int m)
{
    int k = 0;
    for (int i = 0; i < n; i++) k += rho_of(&ev[i], which, m) <= QUAD_FALLS_RHO;
    return k;
}

/* The three sentences read against each matrix's tau, per curve: r falls as tau -> 1; the
 * level (r < 1 near diagonal, r > 1 when dense); tau the only changing factor. */
enum { TAU_FALLS, TAU_FALLS_MATRICES, TAU_LEVEL, TAU_ONLY, NTAU };
static const char *TAU_SHARE[NTAU] = {"share_falling", "share_falling_matrices", "share_level", "share_tau_only"};

static int tau_holds(const quad_tau_reading *q, int which)
{
    switch (which) {
    case TAU_FALLS: return q->rho_bins <= QUAD_FALLS_RHO;
    case TAU_FALLS_MATRICES: return q->rho <= QUAD_FALLS_RHO;
    case TAU_LEVEL: return q->level;
    default: return q->r2_R < TAU_ONLY_R2;
    }
}

static void write_tau_stats(outfile *st, const curve *cv, const curve_eval *ev, int n)
{
    char cn[48];
    for (int m = 0; m < NREAD; m++)
        for (int control = 0; control < 2; control++) {
            const char *pre = control ? "fig4.control.tau" : "fig4.tau";
            for (int w = 0; w < NTAU; w++) {
                int k = 0;
                for (int i = 0; i < n; i++) k += tau_holds(control ? &ev[i].tau_control[m] : &ev[i].tau[m], w);
                stats_put_share(st, k, n, "%s.%s.%s", pre, TAU_SHARE[w], READING[m]);
            }
            /* the level read as the first reading: r at R = 0 (tau = 1) against r at R* */
            int k = 0;
            for (int i = 0; i < n; i++) {
                double d0 = control ? ev[i].control_at_tau1[m] : ev[i].at_tau1[m];
                double ds = control ? ev[i].control_at_densest[m] : ev[i].at_densest[m];
                k += d0 < 1 && ds > 1;
            }
            stats_put_share(st, k, n, "%s.share_level_rstar.%s", pre, READING[m]);
            for (int i = 0; i < n; i++) {
                const quad_tau_reading *q = control ? &ev[i].tau_control[m] : &ev[i].tau[m];
                curve_name(cn, sizeof cn, &cv[i]);
                stats_putf(st, q->rho_bins, "%s.rho.%s.%s", pre, READING[m], cn);
                stats_putf(st, q->rho, "%s.rho_matrices.%s.%s", pre, READING[m], cn);
                stats_putf(st, q->r_diag, "%s.r_diag.%s.%s", pre, READING[m], cn);
                stats_putf(st, q->r_dense, "%s.r_dense.%s.%s", pre, READING[m], cn);
                stats_putf(st, q->r2_R, "%s.r2_R.%s.%s", pre, READING[m], cn);
            }
        }
}

static void write_stats(const char *out, const curve *cv, const curve_eval *ev, int n)
{
    static const char *SHARE_NAME[NRHO] = {"fig4.share_falling", "fig4.control.share_falling",
                                           "fig4.shuffled.share_falling", "fig4.share_falling_rstar",
                                           "fig4.control.share_falling_rstar"};
    static const char *RHO_NAME[NRHO] = {"fig4.rho", "fig4.control.rho", "fig4.shuffled.rho", "fig4.ref.branch.rho",
                                         "fig4.control.rho_rstar"};
    outfile *st = stats_open(out);
    char cn[48];
    for (int m = 0; m < NREAD; m++) {
        for (int w = 0; w < NRHO; w++) stats_put_share(st, falling(ev, n, w, m), n, "%s.%s", SHARE_NAME[w], READING[m]);
        /* the R <= R* share under its first name (a reference before it became a reading) */
        stats_put_share(st, falling(ev, n, RHO_BRANCH, m), n, "fig4.ref.branch.share_falling.%s", READING[m]);
    }
    for (int m = 0; m < NREAD; m++)
        for (int i = 0; i < n; i++) {
            curve_name(cn, sizeof cn, &cv[i]);
            for (int w = 0; w < NRHO; w++) stats_putf(st, rho_of(&ev[i], w, m), "%s.%s.%s", RHO_NAME[w], READING[m], cn);
        }
    write_tau_stats(st, cv, ev, n);
    csv_close(st);
}

/* claims.txt's table: one row per curve, its rho in every reading. */
static void write_curve_table(FILE *cl, const curve *cv, const curve_eval *ev, int n)
{
    /* one column of 8 characters per reading, in both rho blocks */
    fprintf(cl, "%-12s |%-32s |%-32s | %-8s | %s\n%-12s |", "", " rho over all R (* = falls)",
            " rho, random D (control)", "R <= R*", "a_median r: at tau = 1 -> at the densest R; r >= 1 there (a, b)",
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
        curve_name(cn, sizeof cn, &cv[i]);
        fprintf(cl, "%-12s |", cn);
        for (int m = 0; m < NREAD; m++) fprintf(cl, " %+.3f%c", c->rho[m], c->rho[m] <= QUAD_FALLS_RHO ? '*' : ' ');
        fprintf(cl, " |");
        for (int m = 0; m < NREAD; m++)
            fprintf(cl, " %+.3f%c", c->rho_control[m], c->rho_control[m] <= QUAD_FALLS_RHO ? '*' : ' ');
        fprintf(cl, " | %+.3f   | %.3g -> %.3g at tau %.3f (R* %.2f); %.0f%%, %.0f%%\n", c->rho_branch[A_MEDIAN],
                c->at_tau1[A_MEDIAN], c->at_densest[A_MEDIAN], c->tau_min, c->R_star, 100 * c->share_ge1[0],
                100 * c->share_ge1[1]);
    }
}

/* claims.txt's second table: every curve read against its matrices' own tau (a_median). */
static void write_tau_table(FILE *cl, const curve *cv, const curve_eval *ev, int n)
{
    fprintf(cl, "Read against each matrix's own tau (a_median; control = random D):\n"
                "%-12s | %-15s | %-27s | %-15s\n", "curve", "rho (bins)", "level: r diag -> r dense",
            "R at fixed tau");
    for (int i = 0; i < n; i++) {
        const quad_tau_reading *q = &ev[i].tau[A_MEDIAN], *c = &ev[i].tau_control[A_MEDIAN];
        char cn[48];
        curve_name(cn, sizeof cn, &cv[i]);
        fprintf(cl, "%-12s | %+.3f%c (%+.2f) | %7.3g -> %-7.3g%c (%5.2g) | %.2f%c (%.2f)\n", cn, q->rho_bins,
                tau_holds(q, TAU_FALLS) ? '*' : ' ', c->rho_bins, q->r_diag, q->r_dense, q->level ? '*' : ' ',
                c->r_diag, q->r2_R, tau_holds(q, TAU_ONLY) ? '*' : ' ', c->r2_R);
    }
    fprintf(cl, "(* = holds on the curve: rho <= %g; r < 1 near diagonal and > 1 dense; R explains < %g)\n\n",
            QUAD_FALLS_RHO, TAU_ONLY_R2);
}

static void write_claims(const fig4_args *a, const curve *cv, const curve_eval *ev, int n)
{
    outfile *cf = outfile_open_in(a->out, "claims.txt");
    FILE *cl = outfile_fp(cf);
    fprintf(cl, "E1 (paper Fig. 4, Sec. 2.1): \"for H_b with most dimension d and kappa(H_b), r decreases as tau -> 1.\n"
                "That is, D_Adam is effective when H_b is close to diagonal, and D_Adam is not so effective when H_b is\n"
                "dense\"; \"This ensures tau is the only changing factor\". Read against each matrix's own tau (tau is\n"
                "not monotone in R). Per seed: the share of the %d curves (a curve in both panels counts in each) on\n"
                "which each sentence holds; make verdicts judges them over seeds beside the random-D control.\n"
                "Counts: %d theta x %d x x %d R per (d, kappa), seed %ld.\n\n",
            n, a->nthetas, a->npoints, a->nr, a->seed);
    write_tau_table(cl, cv, ev, n);
    fprintf(cl, "References, read against R (the first version's rule):\n");
    write_curve_table(cl, cv, ev, n);
    fprintf(cl, "\n");
    for (int m = 0; m < NREAD; m++) {
        int k[NRHO];
        for (int w = 0; w < NRHO; w++) k[w] = falling(ev, n, w, m);
        fprintf(cl, "ref %-9s %s: %d of %d curves fall over all R (%s in this seed); control (random D): %d of %d; "
                    "R<=R* only: %d of %d (control %d of %d); shuffled tau: %d of %d\n",
                READING[m], m == A_MEDIAN ? "(primary)   " : "(robustness)", k[RHO_ALL], n,
                2 * k[RHO_ALL] > n ? "most" : "not most", k[RHO_CONTROL], n, k[RHO_BRANCH], n, k[RHO_CONTROL_BRANCH], n,
                k[RHO_SHUFFLED], n);
    }
    outfile_commit_echo(cf);
}

int main(int argc, char **argv)
{
    fig4_args a;
    parse_args(&a, argc, argv);
    curve cv[2 * LIST_MAX];
    int ncurves = curves_of(cv, &a);
    ensure_dir(a.out);

    sweep_cache cache = {.n = 0};
    double secs = run_sweeps(&cache, cv, ncurves, &a);

    gsl_rng *shuffle = rng_new(seed_for((unsigned long)a.seed, SEED_BASELINES));
    curve_eval *ev = xmalloc((size_t)(ncurves ? ncurves : 1) * sizeof *ev);
    judge(ev, cv, ncurves, shuffle);

    for (const char *panel = "ab"; *panel; panel++)
        if (strchr(a.panels, *panel)) write_panel(a.out, *panel, cv, ncurves);
    write_stats(a.out, cv, ev, ncurves);
    write_claims(&a, cv, ev, ncurves);
    if (!core_quiet) fprintf(stderr, "fig4: %d sweeps in %.2f s (%d threads)\n", cache.n, secs, a.threads);
    run_write_info(a.out, (unsigned long)a.seed);
    free(ev);
    rng_free(shuffle);
    for (int i = 0; i < ncurves; i++) free(cv[i].rows);
    for (int i = 0; i < cache.n; i++) quad_sweep_free(cache.s[i]);
    return 0;
}
