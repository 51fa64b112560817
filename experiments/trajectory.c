/* trajectory — how far the weights of Adam-mini, the memory-efficient optimizers
 * Adafactor and SM3, and GD stay from AdamW's along training (paper Sec. 4, "Adam-mini
 * generates similar trajectories to that of AdamW, while other methods cannot"; the
 * appendix launches "AdamW, Adam-mini, and other memory-efficient optimizers under
 * the same random seed and same learning rate 1e-5").
 *
 * The paper's setup: every optimizer from the same initialisation, on the same batches,
 * at one shared small peak learning rate (--shared-lr, 1e-3: the low end of AdamW's grid,
 * about 1/30 of AdamW's best here, as 1e-5 is about 1/30 of the usual 3e-4; the paper's own
 * 1e-5 is an alternative). Distances are
 * normalised so that runs that moved in unrelated directions sit at 1:
 *     d_X(t) = ‖w_X(t) − w_A(t)‖ / √(‖w_X(t) − w_0‖² + ‖w_A(t) − w_0‖²),
 * d² = 1 − cos θ · 2ab/(a² + b²) with a, b the two displacements from w_0 and θ their
 * angle: 0 for the same weights, 1 for orthogonal displacements or for a run that did
 * not move (GD at this lr), up to √2 for opposite ones. AdamW again with another batch
 * order shows what batch noise alone does.
 *
 * The claims are judged over every snapshot after step 0, not by the largest distance
 * (which the first snapshot decides): the share of snapshots where Adam-mini is within
 * 0.5 of AdamW, and where it is closer than both Adafactor and SM3, with the mean gap
 * d_mini − min(d_adafactor, d_sm3) over the snapshots and both readings at the last one.
 * The control is GD in Adam-mini's place. The largest-distance statistics are kept.
 * A run that diverged is at distance +inf from the time it stops (its method's worst
 * outcome: it is close to nothing, and a gap or log ratio of a diverged X is +inf while
 * that of a diverged comparator is −inf), so no statistic is NaN because of a divergence;
 * trajectory.diverged counts the runs (shared and tuned) that diverged.
 *
 * The first version's setup is kept for comparison: AdamW, GD and blockwise GD at
 * their best searched learning rates (Adam-mini and AdamW with other batches at
 * AdamW's), with ‖w_X(t) − w_A(t)‖ / ‖w_A(t) − w_0‖, where decorrelated runs of
 * unequal length are not recognisable (GD that barely moves sits near 1).
 */
#include "core/core.h"
#include "core/model.h"
#include "harness/lr_grid.h"
#include "harness/ttexp.h"
#include "optim/optim.h"
#include "verdict/verdict.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Shared-lr runs (T_ADAMW first: the reference). */
enum { T_ADAMW, T_MINI, T_ADAFACTOR, T_SM3, T_GD, T_ADAMW2, NT };
static const char *LABELS[NT] = {"AdamW", "Adam-mini", "Adafactor", "SM3", "GD", "AdamW (other batches)"};
static const char *COLUMNS[NT] = {"adamw", "adam_mini", "adafactor", "sm3", "gd", "adamw_other_batches"};
static const optim_kind KINDS[NT] = {OPTIM_ADAMW, OPTIM_ADAM_MINI, OPTIM_ADAFACTOR, OPTIM_SM3, OPTIM_GD, OPTIM_ADAMW};
/* The first version's runs at tuned learning rates. */
enum { U_ADAMW, U_MINI, U_ADAMW2, U_BLOCKGD, U_GD, NU };
static const char *U_LABELS[NU] = {"AdamW", "Adam-mini", "AdamW (other batches)", "blockwise GD", "GD"};
static const char *U_COLUMNS[NU] = {"tuned_adamw", "tuned_adam_mini", "tuned_adamw_other_batches", "tuned_blockgd",
                                    "tuned_gd"};

#define SHARED_LR 1e-3  /* --shared-lr's default */
#define SHARED_LR_HELP                                                                                          \
    "every optimizer's shared peak lr; the paper's 1e-5 barely trains in the quick run's 300 steps (seed 1: "   \
    "AdamW's held-out loss 2.075 -> 2.062, about 1% of the way to the entropy floor 1.02)"
#define CLOSE_DISTANCE 0.5 /* "similar trajectories": the claim's threshold on d (docs/verdicts.md) */

static double dist(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += (a[i] - b[i]) * (a[i] - b[i]);
    return sqrt(s);
}

/* Snapshot i of run r, or NULL after it diverged. */
static const double *snap(const ttexp_job *r, int i, const ttexp_schedule *sc, size_t P)
{
    return (long)i * sc->eval_every <= r->rec.steps_done ? r->rec.snapshots + (size_t)i * P : NULL;
}

/* ttexp_normalised_distance, +inf where a snapshot is missing (a diverged run: as far as it gets). */
static double normalised(const double *x, const double *a, const double *w0, size_t P)
{
    return x && a ? ttexp_normalised_distance(x, a, w0, P) : INFINITY;
}

/* log(d_X / d_others) with a diverged X's worst outcome: +inf if d_X is, whatever the others. */
static double log_ratio(double x, double others)
{
    return x == INFINITY ? INFINITY : log(x / others);
}

/* The runs: the paper's setup at one shared lr, the first version's at tuned lrs. */
typedef struct {
    ttexp_job shared[NT];
    ttexp_job tuned[NU];
    ttexp_search grids[3];        /* the tuned setup's searches: AdamW, blockwise GD, GD */
    int at_bound;                 /* of them, not interior */
    double *block_lr;             /* blockwise GD's per-block rates over c (alg3's blocks) */
    int diverged;                 /* shared and tuned runs that diverged */
} runs;

/* Distances to AdamW at every snapshot i (nev), NAN where a run is missing. */
typedef struct {
    int nev;
    double *d[NT];                /* shared lr, normalised (d[T_ADAMW] unused) */
    double *rel[NU];              /* tuned, |w_X - w_A| / |w_A - w_0| */
    double *normalised[NU];       /* tuned, normalised */
} distances;

/* A distance curve summarised: its largest value after step 0 (NAN if any is missing) and its last. */
typedef struct {
    double max, end;
} curve_summary;

/* The claims over every snapshot i >= 1, for method X (Adam-mini, or GD as the control). */
typedef struct {
    int n;                  /* snapshots after step 0 */
    int below;              /* of them, d_X < CLOSE_DISTANCE */
    int closest;            /* of them, d_X < min(d_adafactor, d_sm3) */
    double area;            /* mean over them of d_X − min(d_adafactor, d_sm3) */
    double below_end;       /* d_X at the last snapshot */
    double closest_end;     /* d_X − min(d_adafactor, d_sm3) there */
} snapshot_claims;

/* ---- set up ------------------------------------------------------------------------------------ */

static void parse_args(ttexp_args *a, double *shared_lr, int argc, char **argv)
{
    *a = (ttexp_args)TTEXP_ARGS("results/trajectory");
    *shared_lr = SHARED_LR;
    const cli_opt opts[] = {
        TTEXP_OPTS(*a, "quick (300 steps, 5-point first grids) or paper (2000, 9)",
                   "points of the first grids of the tuned comparison, 2..50 (0: from --scale)"),
        {"shared-lr", OPT_DOUBLE, shared_lr, SHARED_LR_HELP},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Distance of the weights of Adam-mini, Adafactor, SM3 (beta1 0.9, as in the paper) and GD to\n"
              "AdamW's along training on the paper's 1-layer Transformer, all from the same initialisation\n"
              "and batches at one shared peak learning rate --shared-lr (the paper: the same lr 1e-5 for all),\n"
              "normalised |w_X - w_A| / sqrt(|w_X - w_0|^2 + |w_A - w_0|^2) (1: unrelated directions); AdamW\n"
              "with another batch order as the noise reference. Kept for comparison: the first version's\n"
              "setup, each method at its best searched lr (Adam-mini at AdamW's), |w_X - w_A| / |w_A - w_0|.\n"
              "Weight decay 0.1 for AdamW and Adam-mini; stats.csv for make verdicts (docs/verdicts.md): the claims\n"
              "over every snapshot (share within 0.5 of AdamW, share closer than Adafactor and SM3, the mean gap,\n"
              "the end), GD in Adam-mini's place as the control, and the first version's largest distances.",
              opts, sizeof opts / sizeof *opts);
    ttexp_args_finish(a, 300, 2000, 5, 9, 50);
    if (!(*shared_lr > 0 && *shared_lr <= 1000)) die_user("--shared-lr must be in (0, 1000] (got %g)", *shared_lr);
}

/* ---- run --------------------------------------------------------------------------------------- */

/* The paper's setup: every optimizer at one shared lr, with snapshots. */
static void run_shared(runs *r, ttexp *e, const ttexp_schedule *sc, const ttexp_args *a, const partition *alg3,
                       double lr)
{
    for (int k = 0; k < NT; k++) {
        ttexp_method mt = ttexp_method_of(LABELS[k], KINDS[k], KINDS[k] == OPTIM_ADAM_MINI ? alg3 : NULL, lr);
        r->shared[k] = (ttexp_job){.method = mt};
        if (KINDS[k] == OPTIM_ADAM_MINI) r->shared[k].method.cfg.weight_decay = 0.1;
        r->shared[k].method.batch_offset = k == T_ADAMW2;
        ttexp_record_alloc(&r->shared[k].rec, sc, e->m->P, 1);
    }
    ttexp_run_jobs(e->s, sc, r->shared, NT, a->threads, "shared lr");
}

/* The first version's setup: AdamW, blockwise GD and GD at their best searched lrs (grid.csv),
 * Adam-mini and AdamW with other batches at AdamW's. */
static void run_tuned(runs *r, ttexp *e, const ttexp_schedule *sc, const ttexp_args *a, const partition *alg3)
{
    r->block_lr = xmalloc(alg3->nblocks * sizeof(double));
    ttexp_block_lr_from_hessian(e, alg3, e->s->B, r->block_lr);
    const int searched[3] = {U_ADAMW, U_BLOCKGD, U_GD};
    const lr_method ranges[3] = {LR_ADAMW, LR_BLOCKGD, LR_GD};
    r->at_bound = 0;
    outfile *f = ttexp_grid_open(a->out);
    for (int i = 0; i < 3; i++) {
        int k = searched[i];
        ttexp_method mt = k == U_ADAMW     ? ttexp_method_of(U_LABELS[k], OPTIM_ADAMW, NULL, 0)
                          : k == U_BLOCKGD ? ttexp_method_of(U_LABELS[k], OPTIM_BLOCK_GD, alg3, 0)
                                           : ttexp_method_of(U_LABELS[k], OPTIM_GD, NULL, 0);
        if (k == U_BLOCKGD) mt.cfg.block_lr = r->block_lr;
        ttexp_search_run(&r->grids[i], U_COLUMNS[k], e->s, sc, &mt, lr_range_of(ranges[i]), a->grid, NULL, NULL,
                         a->threads);
        ttexp_write_search(f, &r->grids[i]);
        r->at_bound += ttexp_search_at_bound(&r->grids[i]);
        if (r->grids[i].best < 0) die_diverged("%s diverged at every learning rate of its grid", U_LABELS[k]);
        r->tuned[k] = (ttexp_job){.method = ttexp_search_best(&r->grids[i])->method};
    }
    csv_close(f);
    ttexp_job *t = r->tuned;
    t[U_MINI] = (ttexp_job){.method = ttexp_method_of(U_LABELS[U_MINI], OPTIM_ADAM_MINI, alg3, t[U_ADAMW].method.lr)};
    t[U_MINI].method.cfg.weight_decay = t[U_ADAMW].method.cfg.weight_decay;
    t[U_ADAMW2] = t[U_ADAMW];
    t[U_ADAMW2].method.label = U_LABELS[U_ADAMW2];
    t[U_ADAMW2].method.batch_offset = 1;
    for (int k = 0; k < NU; k++) ttexp_record_alloc(&t[k].rec, sc, e->m->P, 1);
    ttexp_run_jobs(e->s, sc, t, NU, a->threads, "tuned lr");
}

static int count_diverged(const runs *r, const ttexp_schedule *sc)
{
    int n = 0;
    for (int k = 0; k < NT; k++) n += ttexp_diverged(&r->shared[k].rec, sc);
    for (int k = 0; k < NU; k++) n += ttexp_diverged(&r->tuned[k].rec, sc);
    return n;
}

static void runs_free(runs *r)
{
    for (int k = 0; k < NT; k++) ttexp_record_free(&r->shared[k].rec);
    for (int k = 0; k < NU; k++) ttexp_record_free(&r->tuned[k].rec);
    for (int i = 0; i < 3; i++) ttexp_search_free(&r->grids[i]);
    free(r->block_lr);
}

/* ---- judge ------------------------------------------------------------------------------------- */

static distances distances_of(const runs *r, const ttexp *e, const ttexp_schedule *sc)
{
    size_t P = e->m->P;
    distances D = {.nev = ttexp_nevals(sc)};
    for (int k = 0; k < NT; k++) D.d[k] = xcalloc((size_t)D.nev, sizeof(double));
    for (int k = 0; k < NU; k++) {
        D.rel[k] = xcalloc((size_t)D.nev, sizeof(double));
        D.normalised[k] = xcalloc((size_t)D.nev, sizeof(double));
    }
    for (int i = 0; i < D.nev; i++) {
        const double *wa = snap(&r->shared[T_ADAMW], i, sc, P), *ua = snap(&r->tuned[U_ADAMW], i, sc, P);
        for (int k = 1; k < NT; k++) D.d[k][i] = normalised(snap(&r->shared[k], i, sc, P), wa, e->params0, P);
        for (int k = 1; k < NU; k++) {
            const double *x = snap(&r->tuned[k], i, sc, P);
            D.rel[k][i] = x && ua ? dist(x, ua, P) / dist(ua, e->params0, P) : INFINITY;
            D.normalised[k][i] = normalised(x, ua, e->params0, P);
        }
    }
    return D;
}

static void distances_free(distances *D)
{
    for (int k = 0; k < NT; k++) free(D->d[k]);
    for (int k = 0; k < NU; k++) free(D->rel[k]), free(D->normalised[k]);
}

static curve_summary summarise(const double *d, int nev)
{
    curve_summary c = {.max = 0, .end = d[nev - 1]};
    for (int i = 1; i < nev; i++) c.max = isnan(d[i]) || isnan(c.max) ? NAN : fmax(c.max, d[i]);
    return c;
}

/* "closer than Adafactor and SM3" at snapshot i: d_X − min(d_adafactor, d_sm3); +inf when X
 * diverged (whatever the others did), −inf when only both others did. */
static double gap_at(const distances *D, int x, int i)
{
    if (D->d[x][i] == INFINITY) return INFINITY;
    return D->d[x][i] - fmin(D->d[T_ADAFACTOR][i], D->d[T_SM3][i]);
}

static snapshot_claims judge_snapshots(const distances *D, int x)
{
    snapshot_claims c = {.n = D->nev - 1, .area = 0};
    int x_diverged = 0;
    for (int i = 1; i < D->nev; i++) {
        double g = gap_at(D, x, i);
        c.below += D->d[x][i] < CLOSE_DISTANCE;
        c.closest += g < 0;
        if (g == INFINITY) x_diverged = 1;
        else c.area += g / c.n;
    }
    if (x_diverged) c.area = INFINITY; /* X's worst outcome, before any −inf of a diverged comparator */
    c.below_end = D->d[x][D->nev - 1];
    c.closest_end = gap_at(D, x, D->nev - 1);
    return c;
}

/* ---- write ------------------------------------------------------------------------------------- */

static void write_distances(const char *out, const distances *D, const ttexp_schedule *sc)
{
    char header[1024] = "step";
    for (int k = 1; k < NT; k++) snprintf(header + strlen(header), sizeof header - strlen(header), ",%s", COLUMNS[k]);
    for (int k = 1; k < NU; k++)
        snprintf(header + strlen(header), sizeof header - strlen(header), ",%s_rel", U_COLUMNS[k]);
    for (int k = 1; k < NU; k++)
        snprintf(header + strlen(header), sizeof header - strlen(header), ",%s_normalised", U_COLUMNS[k]);
    outfile *f = csv_open_in(out, "distance.csv", header);
    FILE *fp = outfile_fp(f);
    for (int i = 0; i < D->nev; i++) {
        fprintf(fp, "%ld", (long)i * sc->eval_every);
        for (int k = 1; k < NT; k++) fprintf(fp, ",%.10g", D->d[k][i]);
        for (int k = 1; k < NU; k++) fprintf(fp, ",%.10g", D->rel[k][i]);
        for (int k = 1; k < NU; k++) fprintf(fp, ",%.10g", D->normalised[k][i]);
        fputc('\n', fp);
    }
    csv_close(f);
}

static void write_curves(const char *out, const runs *r, const ttexp_schedule *sc)
{
    const ttexp_record *recs[NT];
    for (int k = 0; k < NT; k++) recs[k] = &r->shared[k].rec;
    char *path = path_join(out, "eval.csv");
    ttexp_write_curves(path, COLUMNS, recs, NT, sc, 1);
    free(path);
}

/* "<prefix>.mini_below_half.*" and "<prefix>.mini_closest.*" of one method. */
static void put_snapshot_claims(outfile *st, const char *prefix, const snapshot_claims *c)
{
    stats_put_share(st, c->below, c->n, "%s.mini_below_half.share", prefix);
    stats_putf(st, c->below_end, "%s.mini_below_half.end", prefix);
    stats_put_share(st, c->closest, c->n, "%s.mini_closest.share", prefix);
    stats_putf(st, c->area, "%s.mini_closest.area", prefix);
    stats_putf(st, c->closest_end, "%s.mini_closest.end", prefix);
}

static void write_stats(const char *out, const curve_summary *s, const curve_summary *u, const double *urel_end,
                        const snapshot_claims *x, double shared_lr, const runs *r)
{
    double others = fmin(s[T_ADAFACTOR].max, s[T_SM3].max);
    outfile *st = stats_open(out);
    /* the claims over every snapshot; the control: GD in Adam-mini's place; reference: AdamW
     * with another batch order there (what batch noise alone does) */
    put_snapshot_claims(st, "trajectory", &x[T_MINI]);
    put_snapshot_claims(st, "trajectory.control", &x[T_GD]);
    put_snapshot_claims(st, "trajectory.ref.adamw_other_batches", &x[T_ADAMW2]);
    /* Adafactor in Adam-mini's place: the paper's "other methods", the null of "stays close" */
    put_snapshot_claims(st, "trajectory.adafactor", &x[T_ADAFACTOR]);
    stats_put(st, "trajectory.shared_lr", shared_lr);
    /* the first version's statistics: the largest distance over the snapshots */
    stats_put(st, "trajectory.mini_max_distance", s[T_MINI].max);
    stats_put(st, "trajectory.control.gd_max_distance", s[T_GD].max);
    stats_put(st, "trajectory.mini_log_ratio_to_memory_efficient", log_ratio(s[T_MINI].max, others));
    stats_put(st, "trajectory.control.gd_log_ratio_to_memory_efficient", log_ratio(s[T_GD].max, others));
    /* reported beside the claims: the same comparison at the end of training only */
    stats_put(st, "trajectory.end.mini_log_ratio_to_memory_efficient",
              log_ratio(s[T_MINI].end, fmin(s[T_ADAFACTOR].end, s[T_SM3].end)));
    stats_put(st, "trajectory.end.mini_distance", s[T_MINI].end);
    stats_put(st, "trajectory.adafactor_max_distance", s[T_ADAFACTOR].max);
    stats_put(st, "trajectory.sm3_max_distance", s[T_SM3].max);
    stats_put(st, "trajectory.adamw_other_batches_max_distance", s[T_ADAMW2].max);
    stats_put(st, "trajectory.tuned.mini_rel_end", urel_end[U_MINI]);
    stats_put(st, "trajectory.tuned.adamw_other_batches_rel_end", urel_end[U_ADAMW2]);
    stats_put(st, "trajectory.tuned.gd_rel_end", urel_end[U_GD]);
    stats_put(st, "trajectory.tuned.mini_max_distance", u[U_MINI].max);
    stats_put(st, "trajectory.tuned.gd_max_distance", u[U_GD].max);
    stats_put(st, "trajectory.grids_at_bound", r->at_bound);
    stats_put(st, "trajectory.diverged", r->diverged);
    csv_close(st);
}

/* claims.txt's lines of the snapshot readings for method X. */
static void print_snapshot_claims(FILE *c, const char *who, const snapshot_claims *x)
{
    fprintf(c, "  %-22s within %.1f of AdamW at %d of %d snapshots (end %.4f); closer than Adafactor and SM3 at %d "
               "of %d (mean gap %+.4f, end %+.4f)\n", who, CLOSE_DISTANCE, x->below, x->n, x->below_end, x->closest,
            x->n, x->area, x->closest_end);
}

static void write_claims(const ttexp_args *a, const runs *r, const curve_summary *s, const curve_summary *u,
                         const double *urel_end, const snapshot_claims *x, double shared_lr)
{
    double others = fmin(s[T_ADAFACTOR].max, s[T_SM3].max);
    outfile *f = outfile_open_in(a->out, "claims.txt");
    FILE *c = outfile_fp(f);
    fprintf(c, "trajectory: 1-layer Transformer, %ld steps, seed %ld; every optimizer at peak lr %g; normalised "
               "distance to AdamW's weights |w_X - w_A| / sqrt(|w_X - w_0|^2 + |w_A - w_0|^2) (1: unrelated), largest "
               "over the snapshots and at the end:\n", a->steps, a->seed, shared_lr);
    for (int k = 1; k < NT; k++)
        fprintf(c, "  %-22s max %.4f, end %.4f (held-out loss %.4f; AdamW %.4f)\n", LABELS[k], s[k].max, s[k].end,
                r->shared[k].rec.final_eval, r->shared[T_ADAMW].rec.final_eval);
    fprintf(c, "over every snapshot after step 0 (the claims' readings; GD in Adam-mini's place is the control; %d "
               "runs diverged, at distance +inf from then on):\n", r->diverged);
    print_snapshot_claims(c, "Adam-mini", &x[T_MINI]);
    print_snapshot_claims(c, "GD (control)", &x[T_GD]);
    print_snapshot_claims(c, "AdamW (other batches)", &x[T_ADAMW2]);
    fprintf(c, "the first version's readings (largest distance over the snapshots):\n");
    ttexp_print_claim(c, "trajectory.mini_close", s[T_MINI].max, s[T_GD].max);
    ttexp_print_claim(c, "trajectory.mini_closest", log_ratio(s[T_MINI].max, others), log_ratio(s[T_GD].max, others));
    fprintf(c, "the first version's setup (each at its best lr; %d of 3 searches not interior):\n", r->at_bound);
    for (int i = 0; i < 3; i++) ttexp_print_search(c, &r->grids[i]);
    for (int k = 1; k < NU; k++)
        fprintf(c, "  %-22s lr %-9.4g |w_X - w_A|/|w_A - w_0| at the end %.4f; normalised max %.4f, end %.4f\n",
                U_LABELS[k], r->tuned[k].method.lr, urel_end[k], u[k].max, u[k].end);
    outfile_commit_echo(f);
}

int main(int argc, char **argv)
{
    ttexp_args a;
    double shared_lr;
    parse_args(&a, &shared_lr, argc, argv);
    ttexp e;
    ttexp_schedule sc = ttexp_begin(&e, ttexp_default_setup(&a), &a);
    partition *alg3 = partition_alg3(e.m, 0);

    runs r;
    run_shared(&r, &e, &sc, &a, alg3, shared_lr);
    run_tuned(&r, &e, &sc, &a, alg3);

    distances D = distances_of(&r, &e, &sc);
    curve_summary s[NT], u[NU];
    double urel_end[NU];
    for (int k = 1; k < NT; k++) s[k] = summarise(D.d[k], D.nev);
    for (int k = 1; k < NU; k++) u[k] = summarise(D.normalised[k], D.nev), urel_end[k] = D.rel[k][D.nev - 1];
    snapshot_claims x[NT];
    for (int k = 1; k < NT; k++) x[k] = judge_snapshots(&D, k);

    write_distances(a.out, &D, &sc);
    write_curves(a.out, &r, &sc);
    r.diverged = count_diverged(&r, &sc);
    write_stats(a.out, s, u, urel_end, x, shared_lr, &r);
    write_claims(&a, &r, s, u, urel_end, x, shared_lr);
    ttexp_write_reference(&e, a.out);
    run_write_info(a.out, (unsigned long)a.seed);

    distances_free(&D);
    runs_free(&r);
    partition_free(alg3);
    ttexp_close(&e);
    return 0;
}
