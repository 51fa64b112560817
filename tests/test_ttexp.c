/* Tests of the Transformer experiment harness (harness/ttexp.h): the
 * entropy floor of the Markov source, determinism across thread counts, the
 * shared batch sequence, paired differences, learning-rate searches that extend
 * past their first grid, full-batch training sets, excess shares, the normalised
 * trajectory distance, and the optimizer claims' rules against their controls. */
#include "check.h"
#include "core/core.h"
#include "core/model.h"
#include "harness/lr_grid.h"
#include "harness/seeds.h"
#include "harness/ttexp.h"
#include "optim/optim.h"
#include "tinytransformer/llama.h"
#include "tinytransformer/tt.h"
#include "verdict/verdict.h"

static ttexp_setup small_setup(int order)
{
    ttexp_setup s = {.cfg = tt_defaults(), .B = 8, .eval_B = 64, .order = order, .successors = 2, .seed = 3,
                     .data_seed = 3};
    s.cfg.C = 8;
    s.cfg.heads = 2;
    s.cfg.M = 16;
    s.cfg.T = 5;
    return s;
}

static int cmp_u64(const void *a, const void *b)
{
    unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;
    return (x > y) - (x < y);
}

/* Every (seed, stream, instance) of seeds 1..1000 draws its own sequence: the
 * first two 32-bit draws of each, as one 64-bit key, are all distinct. Under the
 * old offsets (batches = S+1, baselines = S+2, data = S) seed S's batch stream
 * was seed S+1's initialisation and the data shared the weights' stream. */
static void test_seed_streams_independent(void)
{
    enum { SEEDS = 1000, STREAMS = SEED_HELD_OUT + 1, NTH = 3 };
    size_t n = (size_t)SEEDS * STREAMS * NTH, k = 0;
    unsigned long *key = malloc(n * sizeof *key);
    gsl_rng *r = rng_new(1);
    for (unsigned long s = 1; s <= SEEDS; s++)
        for (int st = 0; st < STREAMS; st++)
            for (unsigned long i = 0; i < NTH; i++) {
                rng_seed(r, seed_for_nth(s, (seed_stream)st, i));
                unsigned long a = gsl_rng_get(r), b = gsl_rng_get(r);
                key[k++] = a << 32 | b;
            }
    qsort(key, n, sizeof *key, cmp_u64);
    int same = 0;
    for (size_t i = 1; i < n; i++) same += key[i] == key[i - 1];
    CHECK(same == 0, "%d pairs of (seed, stream, instance) share their first draws", same);
    CHECK(seed_for(5, SEED_DATA) != seed_for(5, SEED_INIT), "data and initialisation must differ at --data-seed = --seed");
    CHECK(seed_for(7, SEED_BATCHES) == seed_for_nth(7, SEED_BATCHES, 0), "instance 0 is seed_for's stream");
    rng_free(r);
    free(key);
}

/* The floor equals a Monte Carlo estimate of −log p(next | previous order tokens). */
static void test_optimal_loss(void)
{
    for (int order = 1; order <= 2; order++) {
        ttexp_setup s = small_setup(order);
        ttexp e;
        ttexp_open(&e, &s);
        const double *P = tt_data_transitions(e.data);
        int V = s.cfg.V, T = s.cfg.T, B = 20000;
        int *tok = xmalloc((size_t)B * (T + 1) * sizeof(int));
        gsl_rng *r = rng_new(11);
        tt_data_batch(e.data, r, B, T, tok);
        double sum = 0, sum2 = 0;
        for (int b = 0; b < B; b++) {
            const int *row = tok + (size_t)b * (T + 1);
            double l = 0;
            for (int t = 0; t < T; t++) {
                if (t + 1 < order) {
                    l += log(V);
                    continue;
                }
                size_t c = 0;
                for (int i = order - 1; i >= 0; i--) c = c * V + row[t - i];
                l -= log(P[c * V + row[t + 1]]);
            }
            sum += l / T;
            sum2 += (l / T) * (l / T);
        }
        double mean = sum / B, se = sqrt((sum2 / B - mean * mean) / B);
        double floor_loss = ttexp_optimal_loss(&e);
        CHECK(fabs(floor_loss - mean) < 4 * se, "order %d: floor %.5f vs Monte Carlo %.5f +- %.5f", order, floor_loss,
              mean, se);
        free(tok);
        rng_free(r);
        ttexp_close(&e);
    }
}

/* The same jobs on 1 and 2 threads give bit-identical records; every run sees the
 * same batches (two identical methods agree), another batch order differs. */
static void check_jobs_deterministic(ttexp_setup s)
{
    ttexp_schedule sc = {20, 1, 5};
    size_t P = ttexp_param_count(&s);
    ttexp_job a[3], b[3];
    for (int k = 0; k < 3; k++) {
        a[k].method = ttexp_method_of("adamw", OPTIM_ADAMW, NULL, 0.01);
        a[k].method.batch_offset = k == 2;
        ttexp_record_alloc(&a[k].rec, &sc, P, 1);
        b[k].method = a[k].method;
        ttexp_record_alloc(&b[k].rec, &sc, P, 0);
    }
    int quiet = core_quiet;
    core_quiet = 1;
    ttexp_run_jobs(&s, &sc, a, 3, 1, "t1");
    ttexp_run_jobs(&s, &sc, b, 3, 2, "t2");
    core_quiet = quiet;
    int same = 1;
    for (int k = 0; k < 3; k++) {
        same &= memcmp(a[k].rec.train_loss, b[k].rec.train_loss, sc.steps * sizeof(double)) == 0;
        same &= memcmp(a[k].rec.final_params, b[k].rec.final_params, P * sizeof(double)) == 0;
    }
    CHECK(same, "records must not depend on the thread count");
    CHECK(memcmp(a[0].rec.train_loss, a[1].rec.train_loss, sc.steps * sizeof(double)) == 0,
          "two runs of one method see the same batches");
    CHECK(a[0].rec.train_loss[5] != a[2].rec.train_loss[5], "another batch order gives other losses");
    CHECK(a[0].rec.steps_done == 20 && isfinite(a[0].rec.final_eval) && isfinite(a[0].rec.score),
          "a finished run has a finite score (%g)", a[0].rec.score);
    /* snapshots: the first is params0, the last the final parameters */
    ttexp e;
    ttexp_open(&e, &s);
    int nev = ttexp_nevals(&sc);
    CHECK(memcmp(a[0].rec.snapshots, e.params0, P * sizeof(double)) == 0, "snapshot 0 is the initialisation");
    CHECK(memcmp(a[0].rec.snapshots + (size_t)(nev - 1) * P, a[0].rec.final_params, P * sizeof(double)) == 0,
          "the last snapshot is the final parameters");
    CHECK_CLOSE(a[0].rec.eval_loss[nev - 1], a[0].rec.final_eval, 1e-15, "last eval point == final_eval");
    double d, se;
    ttexp_paired_diff(&e, a[0].rec.final_params, a[0].rec.final_params, &d, &se);
    CHECK(d == 0 && se == 0, "paired difference of a vector with itself: %g +- %g", d, se);
    ttexp_paired_diff(&e, e.params0, a[0].rec.final_params, &d, &se);
    memcpy(e.m->params, e.params0, P * sizeof(double));
    double l0 = ttexp_eval_loss(&e);
    memcpy(e.m->params, a[0].rec.final_params, P * sizeof(double));
    CHECK_CLOSE(d, l0 - ttexp_eval_loss(&e), 1e-12, "paired mean difference == difference of mean losses");
    CHECK(se > 0, "standard error %g", se);
    CHECK(a[0].rec.final_eval < l0, "held-out loss fell in 20 AdamW steps (%g -> %g)", l0, a[0].rec.final_eval);
    /* the per-position losses the paired comparison reads average to the loss */
    double *lp = xmalloc((size_t)s.eval_B * s.cfg.T * sizeof(double)), mean = 0;
    double ret = e.eval_m->token_losses(e.eval_m, lp);
    for (int i = 0; i < s.eval_B * s.cfg.T; i++) mean += lp[i] / (s.eval_B * s.cfg.T);
    CHECK_CLOSE(mean, e.eval_m->loss(e.eval_m), 1e-12, "token_losses average to the loss");
    CHECK_CLOSE(ret, mean, 1e-12, "token_losses returns their mean");
    free(lp);
    CHECK(model_is_llama(e.m) == s.llama && e.m->P == P, "the setup's model (%s, P = %zu)", e.m->kind, e.m->P);
    ttexp_close(&e);
    for (int k = 0; k < 3; k++) {
        ttexp_record_free(&a[k].rec);
        ttexp_record_free(&b[k].rec);
    }
}

/* Runs do not depend on the thread count, see their batches, snapshot and
 * compare in pairs — for the tiny GPT and for the Llama-style model. */
static void test_jobs_deterministic(void)
{
    check_jobs_deterministic(small_setup(2));
    ttexp_setup l = small_setup(2);
    l.llama = 1;
    l.llama_flags = llama_cli_defaults();
    l.llama_flags.kv_heads = 1;          /* grouped-query: both query heads read one */
    check_jobs_deterministic(l);
}

/* A diverging learning rate is recorded as diverged: score and final loss +inf. */
static void test_divergence(void)
{
    ttexp_setup s = small_setup(1);
    ttexp_schedule sc = {40, 0, 10};
    ttexp_job j;
    j.method = ttexp_method_of("gd", OPTIM_GD, NULL, 1e6);
    ttexp_record_alloc(&j.rec, &sc, tt_param_count(&s.cfg), 0);
    int quiet = core_quiet;
    core_quiet = 1;
    ttexp_run_jobs(&s, &sc, &j, 1, 1, "div");
    core_quiet = quiet;
    CHECK(j.rec.steps_done < 40 && isinf(j.rec.score) && isinf(j.rec.final_eval), "diverged run: %ld steps, score %g",
          j.rec.steps_done, j.rec.score);
    ttexp_record_free(&j.rec);
}

/* Partitions of the real model cover every parameter once, and Adam-mini's state
 * is P + one v per non-bias block + one per bias entry. */
static void test_partitions_on_model(void)
{
    for (int layers = 1; layers <= 2; layers++)
        for (int bias = 0; bias <= 1; bias++) {
            tt_config c = tt_defaults();
            c.layers = layers;
            c.bias = bias;
            model *m = tt_new(&c);
            partition *ps[4] = {partition_alg3(m, 0), partition_alg3(m, 1), partition_alg2(m),
                                partition_uniform(m, SPLIT_ROWS)};
            for (int k = 0; k < 4; k++) {
                partition_check_cover(ps[k], m->P, "model partition");
                CHECK(1, "partition %d covers P = %zu", k, m->P);
            }
            size_t expect = m->P, heads_q = 0;
            for (int b = 0; b < ps[0]->nblocks; b++) {
                const tensor_info *ti = &m->tensors[ps[0]->b[b].tensor];
                expect += ti->role == ROLE_BIAS ? ps[0]->b[b].n : 1;
                heads_q += ti->role == ROLE_QUERY;
            }
            CHECK(heads_q == (size_t)(c.heads * layers), "query split into %zu head blocks", heads_q);
            optim_config oc = optim_defaults(OPTIM_ADAM_MINI);
            optimizer *o = optim_new(OPTIM_ADAM_MINI, &oc, m->P, ps[0], m);
            CHECK(optim_state_floats(o) == expect, "Adam-mini state %zu, expected %zu", optim_state_floats(o), expect);
            optim_free(o);
            for (int k = 0; k < 4; k++) partition_free(ps[k]);
            model_free(m);
        }
}

/* A synthetic learning-rate response with a known minimum outside the first grid:
 * GD at lr = x/4 while x <= X_STAR (the 20-step score falls with lr from 0.0025
 * up to 0.5, below GD's stability limit on this model; the factor keeps the top
 * point stable whatever the initialisation), a diverging lr above it. So the best point of the grid is the largest lattice point
 * <= X_STAR, bracketed by a diverged one. */
#define X_STAR 2.0
#define LR_SCALE 0.25
static void set_synthetic(ttexp_method *mt, double x, double **owned, void *ctx)
{
    (void)owned;
    (void)ctx;
    mt->lr = x <= X_STAR ? x * LR_SCALE : 1e6;
}

static void test_search_extends(void)
{
    ttexp_setup s = small_setup(2);
    ttexp_schedule sc = {20, 1, 5};
    ttexp_method gd = ttexp_method_of("gd", OPTIM_GD, NULL, 1);
    lr_range range = {"synthetic", 1e-2, 1e-1, 1e-6, 100, "first grid two lattice steps below the minimum"};
    ttexp_search r;
    int quiet = core_quiet;
    core_quiet = 1;
    ttexp_search_run(&r, "synthetic", &s, &sc, &gd, &range, 3, set_synthetic, NULL, 2);
    /* lattice 1e-2·√10^k: the best is 1, the next point (3.16) diverges */
    CHECK(r.status == GRID_INTERIOR, "extended until interior (status %s)", grid_status_name(r.status));
    CHECK_CLOSE(ttexp_search_value(&r), 1, 1e-12, "best lr is the largest lattice point below X_STAR");
    CHECK(r.g.n == 6 && r.g.extended_hi == 3 && r.g.extended_lo == 0, "grid of %d points, %d above, %d below", r.g.n,
          r.g.extended_hi, r.g.extended_lo);
    int ordered = 1, consistent = 1;
    for (int i = 0; i < r.g.n; i++) {
        if (i > 0) ordered &= r.g.lr[i] > r.g.lr[i - 1] && (i >= r.g.n - 1 || r.g.score[i] < r.g.score[i - 1]);
        consistent &= r.jobs[i].method.lr == (r.g.lr[i] <= X_STAR ? r.g.lr[i] * LR_SCALE : 1e6) &&
                      r.jobs[i].rec.score == r.g.score[i];
    }
    CHECK(ordered, "ascending lrs, scores falling up to the best");
    CHECK(consistent, "jobs[i] ran at g.lr[i] and scored g.score[i]");
    CHECK(isinf(r.g.score[r.g.n - 1]), "the point above the minimum diverged");
    ttexp_search_free(&r);

    /* a bound below the minimum stops the extension: edge at bound */
    range.hi_bound = 0.5;
    ttexp_search_run(&r, "bounded", &s, &sc, &gd, &range, 3, set_synthetic, NULL, 1);
    CHECK(r.status == GRID_EDGE_AT_BOUND && ttexp_search_at_bound(&r), "bounded search: %s",
          grid_status_name(r.status));
    CHECK_CLOSE(ttexp_search_value(&r), pow(10, -0.5), 1e-12, "best at the last point below the bound");
    ttexp_search_free(&r);

    /* no setter: the searched value is the method's lr; the first grid is interior */
    range = (lr_range){"adamw", 1e-3, 1e-1, 1e-5, 1, ""};
    ttexp_method adamw = ttexp_method_of("adamw", OPTIM_ADAMW, NULL, 0);
    ttexp_search_run(&r, "adamw", &s, &sc, &adamw, &range, 2, NULL, NULL, 2);
    int same = 1;
    for (int i = 0; i < r.g.n; i++) same &= r.jobs[i].method.lr == r.g.lr[i];
    CHECK(same && r.g.n >= 2, "lr set from the grid (%d points)", r.g.n);
    core_quiet = quiet;
    ttexp_search_free(&r);
}

/* A training set: every step on the whole set, the same for every run and batch order. */
static void test_full_batch(void)
{
    ttexp_setup s = small_setup(2);
    s.train_set = 16;
    ttexp_schedule sc = {10, 1, 5};
    size_t P = tt_param_count(&s.cfg);
    ttexp_job j[2];
    for (int k = 0; k < 2; k++) {
        j[k] = (ttexp_job){ttexp_method_of("adamw", OPTIM_ADAMW, NULL, 0.01), {0}, NULL};
        j[k].method.batch_offset = k;
        ttexp_record_alloc(&j[k].rec, &sc, P, 0);
    }
    int quiet = core_quiet;
    core_quiet = 1;
    ttexp_run_jobs(&s, &sc, j, 2, 1, "full");
    core_quiet = quiet;
    CHECK(memcmp(j[0].rec.train_loss, j[1].rec.train_loss, sc.steps * sizeof(double)) == 0,
          "full batch: the batch order does not enter");
    ttexp e;
    ttexp_open(&e, &s);
    tt_set_batch(e.m, e.tokens, s.train_set);
    memcpy(e.m->params, e.params0, P * sizeof(double));
    CHECK_CLOSE(j[0].rec.train_loss[0], e.m->loss(e.m), 1e-14, "first step's loss is the set's loss at params0");
    memcpy(e.m->params, j[0].rec.final_params, P * sizeof(double));
    CHECK_CLOSE(j[0].rec.final_train, e.m->loss(e.m), 1e-14, "final_train is the set's loss at the end");
    CHECK(j[0].rec.final_train < j[0].rec.train_loss[0], "the set's loss fell (%g -> %g)", j[0].rec.train_loss[0],
          j[0].rec.final_train);
    CHECK(ttexp_train_excess_share(&e, &j[0].rec, &j[0].rec) == 0, "train excess of a run over itself is 0");
    ttexp_close(&e);
    for (int k = 0; k < 2; k++) ttexp_record_free(&j[k].rec);
}

/* Excess shares: 0 for the reference itself, exactly 1 for a model that did not train
 * (what a frozen control reaches when nothing it touches trains), +inf when diverged. */
static void test_excess_share(void)
{
    ttexp_setup s = small_setup(2);
    ttexp_schedule sc = {20, 1, 5};
    size_t P = tt_param_count(&s.cfg);
    ttexp_job j = {ttexp_method_of("adamw", OPTIM_ADAMW, NULL, 0.01), {0}, NULL};
    ttexp_record_alloc(&j.rec, &sc, P, 0);
    int quiet = core_quiet;
    core_quiet = 1;
    ttexp_run_jobs(&s, &sc, &j, 1, 1, "ref");
    core_quiet = quiet;
    ttexp e;
    ttexp_open(&e, &s);
    double se;
    CHECK(ttexp_excess_share(&e, &j.rec, &j.rec, &se) == 0 && se == 0, "excess of the reference over itself");
    ttexp_record untrained = j.rec;
    untrained.final_params = e.params0;
    memcpy(e.m->params, e.params0, P * sizeof(double));
    untrained.final_eval = ttexp_eval_loss(&e);
    CHECK_CLOSE(ttexp_excess_share(&e, &untrained, &j.rec, NULL), 1, 1e-12, "an untrained model's excess is 1");
    untrained.final_eval = INFINITY;
    CHECK(isinf(ttexp_excess_share(&e, &untrained, &j.rec, NULL)), "a diverged run's excess is +inf");
    CHECK(isnan(ttexp_excess_share(&e, &j.rec, &untrained, NULL)), "a diverged reference gives NAN");
    ttexp_close(&e);
    ttexp_record_free(&j.rec);
}

/* A diverged run counts as its method's worst outcome in a margin, never NaN: a diverged
 * winner beats nothing (-inf), a diverged loser is beaten by everything (+inf). */
static void test_margin_divergence(void)
{
    CHECK(ttexp_margin(0.4, 0.1) == 0.4 - 0.1, "finite: loser - winner");
    CHECK(ttexp_margin(INFINITY, 0.1) == INFINITY, "diverged loser: +inf");
    CHECK(ttexp_margin(0.4, INFINITY) == -INFINITY, "diverged winner: -inf");
    CHECK(ttexp_margin(INFINITY, INFINITY) == -INFINITY, "both diverged: the winner's worst outcome, -inf");
    CHECK(isnan(ttexp_margin(NAN, 0.1)) && isnan(ttexp_margin(0.1, NAN)), "a missing number stays NAN");
    ttexp_record r = {.steps_done = 10, .final_eval = 1.5};
    ttexp_schedule sc = {.steps = 10, .warmup = 0, .eval_every = 5};
    CHECK(!ttexp_diverged(&r, &sc), "a finished run did not diverge");
    r.final_eval = INFINITY;
    CHECK(ttexp_diverged(&r, &sc), "a non-finite final loss diverged");
    r.final_eval = 1.5, r.steps_done = 7;
    CHECK(ttexp_diverged(&r, &sc), "a run that stopped early diverged");
}

static void test_normalised_distance(void)
{
    const double w0[2] = {1, 1}, x[2] = {2, 1}, y[2] = {1, 2}, z[2] = {0, 1};
    CHECK(ttexp_normalised_distance(x, x, w0, 2) == 0, "same weights: 0");
    CHECK_CLOSE(ttexp_normalised_distance(x, y, w0, 2), 1, 1e-15, "orthogonal displacements: 1");
    CHECK_CLOSE(ttexp_normalised_distance(w0, x, w0, 2), 1, 1e-15, "a run that did not move: 1");
    CHECK_CLOSE(ttexp_normalised_distance(z, x, w0, 2), sqrt(2), 1e-15, "opposite displacements: sqrt 2");
    CHECK(isnan(ttexp_normalised_distance(w0, w0, w0, 2)), "neither moved: NAN");
}

/* Every optimizer claim: the on-par and beats thresholds are TTEXP_ON_PAR, and on synthetic
 * per-seed data the control's value by construction (what its setup gives when the claim
 * does not hold: an untrained model's excess 1, a run that does not move at distance 1,
 * a method against itself 0, ...) fails its rule, while claim values on the claim's side
 * pass — and would be NO POWER were the control on that side too. */
static void test_claim_controls(void)
{
    const double w0[2] = {0, 0}, moved[2] = {1, 0};
    double not_moved = ttexp_normalised_distance(w0, moved, w0, 2); /* GD at the shared lr */
    const double jitter[5] = {0, 0.01, -0.01, 0.005, -0.005};
    struct {
        const char *id;
        double claim, control; /* per-seed centres; jitter added */
        int on_par;            /* threshold is TTEXP_ON_PAR */
    } cases[] = {
        {"train_compare.mini_on_par", 0.0, 1.0, 1},          /* control: untrained-like excess */
        {"train_compare.adaptive_beats_gd", 0.4, 0.0, 1},    /* control: GD against GD */
        {"train_compare.blockgd_beats_gd", 0.1, 0.0, 1},
        {"exp2_blockwise_gd.blockgd_vs_adamw", 0.0, 0.4, 1},
        {"exp2_blockwise_gd.heavy_ball_vs_adamw", 0.0, 0.1, 1},
        {"exp2_blockwise_gd.blockgd_vs_adam_b1_0", 0.0, 0.4, 1},
        {"exp2_blockwise_gd.full_batch", 0.0, 0.1, 1},
        {"leave_out.per_tensor", 1.0, 0.4, 0},               /* control: share of tensors frozen on par */
        {"leave_out.random_x", 0.0, 1.0, 1},
        {"ablation_vstat.mean_best", 0.05, -0.2, 0},         /* control: min's margin */
        {"trajectory.mini_close", 0.3, not_moved, 0},
        {"trajectory.mini_closest", -0.3, log(not_moved / 0.5), 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const claim_rule *r = ttexp_claim(cases[k].id);
        CHECK(strcmp(r->id, cases[k].id) == 0 && r->control && (r->kind == RULE_INTERVAL || r->kind == RULE_SHARE), "%s: in the table",
              cases[k].id);
        if (cases[k].on_par) CHECK(r->threshold == TTEXP_ON_PAR, "%s: threshold %g", r->id, r->threshold);
        double v[5], c[5];
        for (int i = 0; i < 5; i++) {
            v[i] = cases[k].claim + jitter[i] * (cases[k].on_par ? 0.3 : 1);
            c[i] = cases[k].control + jitter[i];
        }
        interval iv = t_interval(v, 5, 0.95), civ = t_interval(c, 5, 0.95);
        CHECK(verdict_of(civ, r->side, r->threshold, NULL) == VERDICT_FAIL, "%s: its control fails the rule", r->id);
        CHECK(verdict_of(iv, r->side, r->threshold, &civ) == VERDICT_PASS, "%s: the claim passes beside it", r->id);
        CHECK(verdict_of(iv, r->side, r->threshold, &iv) == VERDICT_NO_POWER, "%s: a control like the claim: NO POWER",
              r->id);
    }
}

int main(void)
{
    test_seed_streams_independent();
    test_partitions_on_model();
    test_optimal_loss();
    test_jobs_deterministic();
    test_divergence();
    test_search_extends();
    test_full_batch();
    test_excess_share();
    test_margin_divergence();
    test_normalised_distance();
    test_claim_controls();
    return check_summary();
}
