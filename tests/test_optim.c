/* Tests of optim/: each optimizer's steps against hand-computed values on a
 * 3-entry vector, the equivalences between them, state sizes, the β2 → 1
 * limit, schedules and bad input. */
#include "check.h"
#include "core/model.h"
#include "optim/optim.h"
#include <stdlib.h>

/* f(w) = ½ Σ a_i w_i², g = a ⊙ w. */
static const double A3[3] = {1.0, 4.0, 0.25};
static const double W0[3] = {1.0, -2.0, 0.5};

static void run3(optimizer *o, double *w, int steps, double lr, double trace[][3])
{
    double g[3];
    memcpy(w, W0, sizeof W0);
    for (int s = 0; s < steps; s++) {
        for (int i = 0; i < 3; i++) g[i] = A3[i] * w[i];
        optim_step(o, w, g, lr);
        if (trace) memcpy(trace[s], w, sizeof W0);
    }
}

static void check_trace(double got[][3], const double want[][3], int steps, double tol, const char *what)
{
    for (int s = 0; s < steps; s++)
        for (int i = 0; i < 3; i++) {
            char label[96];
            snprintf(label, sizeof label, "%s step %d w[%d]", what, s + 1, i);
            CHECK_CLOSE(got[s][i], want[s][i], tol, label);
        }
}

/* Values computed by hand (independent Python transcription of torch.optim's update). */
static const double ADAM_WANT[3][3] = {
    {0.90000000099999999, -1.9000000001249999, 0.40000000799999935},
    {0.80041222971233816, -1.8001664858630053, 0.30118743615948029},
    {0.70158627450441502, -1.7006233916636408, 0.20487127481435818}};
static const double ADAMW_WANT[3][3] = { /* λ = 0.1 */
    {0.89000000099999999, -1.8800000001249999, 0.39500000799999935},
    {0.78157185695416098, -1.7614089503325472, 0.29233871870827344},
    {0.67510122318920063, -1.6443686831798794, 0.19341562636657011}};
static const double MINI_WANT[3][3] = { /* one block of 3: v = mean(g²) */
    {0.97851913550450054, -1.8281530840360045, 0.49731489193806255},
    {0.95636112501106707, -1.6569700439734132, 0.49452138654870809},
    {0.93350040551952629, -1.4869265331903998, 0.49161286228327611}};

static partition *one_block(size_t P)
{
    partition *p = partition_new();
    partition_add(p, 0, P, 1, -1, "all");
    return p;
}

static partition *entry_blocks(size_t P)
{
    partition *p = partition_new();
    for (size_t i = 0; i < P; i++) partition_add(p, i, 1, 1, -1, "entry");
    return p;
}

static void test_gd(void)
{
    optim_config c = optim_defaults(OPTIM_GD);
    optimizer *o = optim_new(OPTIM_GD, &c, 3, NULL, NULL);
    double w[3], tr[3][3];
    run3(o, w, 3, 0.1, tr);
    /* w_t = (1 − 0.1 a)^t w0 */
    for (int s = 0; s < 3; s++)
        for (int i = 0; i < 3; i++) CHECK_CLOSE(tr[s][i], pow(1 - 0.1 * A3[i], s + 1) * W0[i], 1e-15, "gd");
    CHECK(optim_state_floats(o) == 0, "gd state %zu", optim_state_floats(o));
    optim_free(o);

    /* blockwise GD: blocks {0,1} and {2} with lr multipliers 1 and 4 */
    partition *p = partition_new();
    partition_add(p, 0, 2, 1, -1, "a");
    partition_add(p, 2, 1, 1, -1, "b");
    double mult[2] = {1, 4};
    c.block_lr = mult;
    o = optim_new(OPTIM_BLOCK_GD, &c, 3, p, NULL);
    run3(o, w, 3, 0.1, tr);
    double lr_i[3] = {0.1, 0.1, 0.4};
    for (int i = 0; i < 3; i++) CHECK_CLOSE(w[i], pow(1 - lr_i[i] * A3[i], 3) * W0[i], 1e-15, "blockgd");
    optim_free(o);
    partition_free(p);
}

static void test_adam_family(void)
{
    double w[3], tr[3][3], tr2[3][3];
    optim_config c = optim_defaults(OPTIM_ADAM);
    optimizer *o = optim_new(OPTIM_ADAM, &c, 3, NULL, NULL);
    run3(o, w, 3, 0.1, tr);
    check_trace(tr, ADAM_WANT, 3, 1e-14, "adam");
    CHECK(optim_state_floats(o) == 6, "adam state %zu", optim_state_floats(o));
    optim_free(o);

    c = optim_defaults(OPTIM_ADAMW);
    CHECK(c.weight_decay == 0.1, "adamw default decay %g", c.weight_decay);
    o = optim_new(OPTIM_ADAMW, &c, 3, NULL, NULL);
    run3(o, w, 3, 0.1, tr);
    check_trace(tr, ADAMW_WANT, 3, 1e-14, "adamw");
    optim_free(o);

    c.weight_decay = 0; /* AdamW with λ = 0 equals Adam */
    o = optim_new(OPTIM_ADAMW, &c, 3, NULL, NULL);
    run3(o, w, 3, 0.1, tr);
    check_trace(tr, ADAM_WANT, 3, 0, "adamw(0) == adam");
    optim_free(o);

    c = optim_defaults(OPTIM_ADAM_MINI);
    partition *p = one_block(3);
    o = optim_new(OPTIM_ADAM_MINI, &c, 3, p, NULL);
    run3(o, w, 3, 0.1, tr);
    check_trace(tr, MINI_WANT, 3, 1e-14, "adam-mini");
    CHECK(optim_state_floats(o) == 3 + 1, "adam-mini state %zu (P + 1 block)", optim_state_floats(o));
    optim_free(o);
    partition_free(p);

    /* Adam-mini with one-entry blocks is Adam, for every statistic of a single g² */
    p = entry_blocks(3);
    for (int s = 0; s < VSTAT_COUNT; s++) {
        if (s == VSTAT_L1 || s == VSTAT_MEAN || s == VSTAT_L2 || s == VSTAT_MAX || s == VSTAT_MIN) {
            c.vstat = s;
            o = optim_new(OPTIM_ADAM_MINI, &c, 3, p, NULL);
            run3(o, w, 3, 0.1, tr2);
            char what[64];
            snprintf(what, sizeof what, "adam-mini(1-entry blocks, %s) == adam", vstat_name(s));
            check_trace(tr2, ADAM_WANT, 3, 1e-15, what);
            optim_free(o);
        }
    }
    partition_free(p);
}

/* Leave-out Adam: no left-out block → AdamW; a left-out block → momentum GD with its lr. */
static void test_leave_out(void)
{
    double w[3], tr[3][3];
    partition *p = partition_new();
    partition_add(p, 0, 2, 1, -1, "adam");
    partition_add(p, 2, 1, 1, -1, "left out");
    double none[2] = {0, 0}, one[2] = {0, 2.0};
    optim_config c = optim_defaults(OPTIM_ADAM_LEAVE_OUT);
    c.block_lr = none;
    optimizer *o = optim_new(OPTIM_ADAM_LEAVE_OUT, &c, 3, p, NULL);
    run3(o, w, 3, 0.1, tr);
    check_trace(tr, ADAM_WANT, 3, 0, "leave-out with nothing left out == adam");
    optim_free(o);
    c.block_lr = one;
    o = optim_new(OPTIM_ADAM_LEAVE_OUT, &c, 3, p, NULL);
    run3(o, w, 3, 0.1, tr);
    for (int s = 0; s < 3; s++)
        for (int i = 0; i < 2; i++) CHECK_CLOSE(tr[s][i], ADAM_WANT[s][i], 0, "leave-out: Adam part unchanged");
    /* by hand: w2 with m̂_t = m_t/(1−0.9^t), lr_b = 0.1·2, g = 0.25·w */
    double x = W0[2], m = 0;
    for (int t = 1; t <= 3; t++) {
        m = 0.9 * m + 0.1 * 0.25 * x;
        x -= 0.2 * m / (1 - pow(0.9, t));
        CHECK_CLOSE(tr[t - 1][2], x, 1e-15, "leave-out block: momentum GD");
    }
    optim_free(o);
    partition_free(p);
}

static void test_vstats(void)
{
    /* one block of 3, one step, β1 = 0, β2 = 0: v = stat(g²), w1 = w0 − lr g/(√v + ε) */
    double g0[3];
    for (int i = 0; i < 3; i++) g0[i] = A3[i] * W0[i]; /* 1, -8, 0.125 */
    double g2[3] = {1, 64, 0.015625};
    double want_v[VSTAT_COUNT] = {
        (g2[0] + g2[1] + g2[2]) / 3, sqrt(g2[0] * g2[0] + g2[1] * g2[1] + g2[2] * g2[2]),
        g2[0] + g2[1] + g2[2], 64, 0.015625};
    partition *p = one_block(3);
    for (int s = 0; s < VSTAT_COUNT; s++) {
        optim_config c = optim_defaults(OPTIM_ADAM_MINI);
        c.beta1 = 0;
        c.beta2 = 0;
        c.eps = 0;
        c.vstat = s;
        optimizer *o = optim_new(OPTIM_ADAM_MINI, &c, 3, p, NULL);
        double w[3];
        memcpy(w, W0, sizeof w);
        optim_step(o, w, g0, 0.1);
        double vh[3];
        optim_vhat(o, vh);
        CHECK_CLOSE(vh[1], want_v[s], 1e-15, vstat_name(s));
        CHECK_CLOSE(w[1], W0[1] - 0.1 * g0[1] / sqrt(want_v[s]), 1e-15, vstat_name(s));
        optim_free(o);
    }
    partition_free(p);
}

/* β2 = 1: v̂_t is the running mean of g² (SPEC E2), and β2 → 1 approaches it. */
static void test_beta2_limit(void)
{
    optim_config c = optim_defaults(OPTIM_ADAM);
    c.beta1 = 0;
    c.beta2 = 1;
    optimizer *o = optim_new(OPTIM_ADAM, &c, 3, NULL, NULL);
    c.beta2 = 1 - 1e-9;
    optimizer *near = optim_new(OPTIM_ADAM, &c, 3, NULL, NULL);
    double w[3], wn[3], g[3], sum[3] = {0};
    memcpy(w, W0, sizeof w);
    memcpy(wn, W0, sizeof wn);
    int ok = 1;
    for (int t = 1; t <= 5; t++) {
        double w_before[3];
        memcpy(w_before, w, sizeof w);
        for (int i = 0; i < 3; i++) g[i] = A3[i] * w[i];
        optim_step(o, w, g, 0.05);
        optim_step(near, wn, g, 0.05);
        double vh[3];
        optim_vhat(o, vh);
        for (int i = 0; i < 3; i++) {
            sum[i] += g[i] * g[i];
            double v_mean = sum[i] / t;
            ok &= fabs(vh[i] - v_mean) <= 1e-15 * v_mean;
            ok &= fabs(w[i] - (w_before[i] - 0.05 * g[i] / (sqrt(v_mean) + 1e-8))) <= 1e-15;
            ok &= fabs(w[i] - wn[i]) <= 1e-7;
        }
    }
    CHECK(ok, "adam(beta2=1) must equal the running-mean formula and the beta2 -> 1 limit");
    optim_free(o);
    optim_free(near);

    /* the same limit for Adam-mini: v_b = running mean of mean(g_b²) */
    c.beta2 = 1;
    partition *p = one_block(3);
    o = optim_new(OPTIM_ADAM_MINI, &c, 3, p, NULL);
    memcpy(w, W0, sizeof w);
    double acc = 0;
    for (int t = 1; t <= 3; t++) {
        for (int i = 0; i < 3; i++) g[i] = A3[i] * w[i];
        acc += (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]) / 3;
        optim_step(o, w, g, 0.05);
    }
    double vh[3];
    optim_vhat(o, vh);
    CHECK_CLOSE(vh[0], acc / 3, 1e-15, "adam-mini beta2=1 running mean");
    optim_free(o);
    partition_free(p);
}

/* A model table with a weight, a LayerNorm gain and a bias: decay only on the weight,
 * Adam-mini keeps one v per bias entry. */
static void test_roles(void)
{
    tensor_info t[3] = {
        {"w", ROLE_MLP_FC, 0, 2, 3, 1, 0},
        {"ln", ROLE_NORM, 6, 2, 1, 1, 0},
        {"b", ROLE_BIAS, 8, 2, 1, 1, 0},
    };
    model m = {.kind = "fake", .P = 10, .ntensors = 3, .tensors = t};
    partition *p = partition_alg3(&m, 0);
    optim_config c = optim_defaults(OPTIM_ADAM_MINI);
    c.weight_decay = 0.5;
    optimizer *o = optim_new(OPTIM_ADAM_MINI, &c, 10, p, &m);
    /* blocks: 2 rows of w, ln, b (per entry) → v floats: 2 + 1 + 2 */
    CHECK(optim_state_floats(o) == 10 + 3 + 2, "adam-mini state %zu = P + non-bias blocks + bias entries",
          optim_state_floats(o));
    double w[10], g[10] = {0};
    for (int i = 0; i < 10; i++) w[i] = 1;
    optim_step(o, w, g, 0.1); /* zero gradient: only decay moves w */
    CHECK(w[0] == 0.95 && w[5] == 0.95, "weights decayed to %g", w[0]);
    CHECK(w[6] == 1 && w[9] == 1, "norm/bias not decayed (%g, %g)", w[6], w[9]);
    optim_free(o);

    /* bias entries behave like Adam: one step with g = (0,…,0, 3, -1e-3) moves each by ≈ lr */
    c.weight_decay = 0;
    o = optim_new(OPTIM_ADAM_MINI, &c, 10, p, &m);
    for (int i = 0; i < 10; i++) w[i] = 0;
    g[8] = 3;
    g[9] = -1e-3;
    optim_step(o, w, g, 0.1);
    CHECK_CLOSE(w[8], -0.1 * 3 / (3 + 1e-8), 1e-15, "bias entry 0 (plain Adam)");
    CHECK_CLOSE(w[9], 0.1 * 1e-3 / (1e-3 + 1e-8), 1e-15, "bias entry 1 (plain Adam)");
    optim_free(o);
    partition_free(p);
}

static void test_schedules(void)
{
    CHECK_CLOSE(lr_at(SCHED_CONSTANT, 0.3, 50, 100, 0, 0), 0.3, 0, "constant");
    CHECK_CLOSE(lr_at(SCHED_COSINE, 1.0, 0, 100, 0, 0), 1.0, 1e-15, "cosine start");
    CHECK_CLOSE(lr_at(SCHED_COSINE, 1.0, 50, 100, 0, 0), 0.5, 1e-15, "cosine middle");
    CHECK_CLOSE(lr_at(SCHED_COSINE, 1.0, 100, 100, 0, 0.1), 0.1, 1e-15, "cosine end at final_frac");
    CHECK_CLOSE(lr_at(SCHED_WARMUP_COSINE, 1.0, 0, 100, 10, 0), 0.1, 1e-15, "warmup first step");
    CHECK_CLOSE(lr_at(SCHED_WARMUP_COSINE, 1.0, 10, 100, 10, 0), 1.0, 1e-15, "warmup done");
    CHECK_CLOSE(lr_at(SCHED_WARMUP_COSINE, 1.0, 55, 100, 10, 0), 0.5, 1e-15, "warmup-cosine middle");
}

static void test_bad_input(void)
{
    optim_config c = optim_defaults(OPTIM_ADAM);
    EXPECT_USER_ERROR(optim_parse("sgdd"), "unknown optimizer 'sgdd'");
    EXPECT_USER_ERROR(vstat_parse("median"), "unknown block statistic");
    EXPECT_USER_ERROR(schedule_parse("step"), "unknown schedule");
    EXPECT_USER_ERROR(optim_check_config(&c, 0), "learning rate must be > 0");
    EXPECT_USER_ERROR(optim_check_config(&c, -1), "learning rate must be > 0");
    c.beta1 = 1;
    EXPECT_USER_ERROR(optim_check_config(&c, 1e-3), "beta1 must be in [0, 1)");
    c.beta1 = 0.9;
    c.beta2 = 1.5;
    EXPECT_USER_ERROR(optim_check_config(&c, 1e-3), "beta2");
    c.beta2 = -0.1;
    EXPECT_USER_ERROR(optim_check_config(&c, 1e-3), "beta2");
    c.beta2 = 1;
    optim_check_config(&c, 1e-3);
    CHECK(1, "beta2 = 1 accepted");
    partition *p = partition_new();
    partition_add(p, 0, 2, 1, -1, "short");
    EXPECT_USER_ERROR(optim_new(OPTIM_ADAM_MINI, &c, 3, p, NULL), "in no block");
    partition_free(p);
}

/* A 3-parameter quadratic model for the training loop. */
static double quad_loss(model *m)
{
    double f = 0;
    for (int i = 0; i < 3; i++) f += 0.5 * A3[i] * m->params[i] * m->params[i];
    return f;
}
static double quad_grad(model *m, double *g)
{
    for (int i = 0; i < 3; i++) g[i] = A3[i] * m->params[i];
    return quad_loss(m);
}

static int after_calls;
static double last_loss;
static void count_after(void *ctx, long step, double loss, double lr)
{
    (void)ctx;
    (void)step;
    (void)lr;
    after_calls++;
    last_loss = loss;
}

static void test_train_loop(void)
{
    double params[3];
    memcpy(params, W0, sizeof params);
    tensor_info t[1] = {{"w", ROLE_MATRIX, 0, 3, 1, 1, -1}};
    model m = {.kind = "quad3", .P = 3, .ntensors = 1, .tensors = t, .params = params,
               .loss = quad_loss, .grad = quad_grad};
    optim_config c = optim_defaults(OPTIM_ADAM);
    optimizer *o = optim_new(OPTIM_ADAM, &c, 3, NULL, &m);
    train_config tc = {3, 0.1, SCHED_CONSTANT, 0, 0};
    train_hooks h = {NULL, count_after, NULL};
    int diverged;
    long done = train_run(&m, o, &tc, &h, &diverged);
    CHECK(done == 3 && !diverged && after_calls == 3, "steps %ld, hooks %d", done, after_calls);
    for (int i = 0; i < 3; i++) CHECK_CLOSE(params[i], ADAM_WANT[2][i], 1e-14, "train_run == adam steps");
    optim_free(o);

    /* GD with a step far beyond 2/L diverges: stopped with finite parameters kept */
    c = optim_defaults(OPTIM_GD);
    o = optim_new(OPTIM_GD, &c, 3, NULL, &m);
    tc = (train_config){100000, 10.0, SCHED_CONSTANT, 0, 0};
    done = train_run(&m, o, &tc, &h, &diverged);
    CHECK(diverged && done < 100000 && isfinite(last_loss), "divergence stops the run (%ld steps)", done);
    CHECK(isfinite(params[0]) && isfinite(params[1]), "parameters before the bad step kept");
    optim_free(o);
}

int main(void)
{
    test_train_loop();
    test_gd();
    test_adam_family();
    test_vstats();
    test_leave_out();
    test_beta2_limit();
    test_roles();
    test_schedules();
    test_bad_input();
    return check_summary();
}
