/* Tests of the Transformer experiment harness (experiments/ttexp.h): the
 * entropy floor of the Markov source, determinism across thread counts, the
 * shared batch sequence, paired differences, and the reference file. */
#include "check.h"
#include "harness/ttexp.h"

static ttexp_setup small_setup(int order)
{
    ttexp_setup s = {tt_defaults(), 8, 64, order, 2, 3, 3, NULL, 0};
    s.cfg.C = 8;
    s.cfg.heads = 2;
    s.cfg.M = 16;
    s.cfg.T = 5;
    return s;
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
static void test_jobs_deterministic(void)
{
    ttexp_setup s = small_setup(2);
    ttexp_schedule sc = {20, 1, 5};
    size_t P = tt_param_count(&s.cfg);
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
    ttexp_close(&e);
    for (int k = 0; k < 3; k++) {
        ttexp_record_free(&a[k].rec);
        ttexp_record_free(&b[k].rec);
    }
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

int main(void)
{
    test_partitions_on_model();
    test_optimal_loss();
    test_jobs_deterministic();
    test_divergence();
    return check_summary();
}
