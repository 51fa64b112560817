/* Tests of optim/: each optimizer's steps against hand-computed values on a
 * 3-entry vector (heavy ball single and blockwise, leave-out with a frozen block too) (Adafactor and SM3: a 2×3 matrix and a 3-entry vector), the
 * equivalences between them, state sizes, the β2 → 1 limit, schedules and bad input. */
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
    /* a frozen block (block_lr < 0: left out at lr 0) never moves; the rest is Adam */
    double frozen[2] = {0, -1};
    c.block_lr = frozen;
    o = optim_new(OPTIM_ADAM_LEAVE_OUT, &c, 3, p, NULL);
    run3(o, w, 3, 0.1, tr);
    for (int s = 0; s < 3; s++) {
        for (int i = 0; i < 2; i++) CHECK_CLOSE(tr[s][i], ADAM_WANT[s][i], 0, "frozen leave-out: Adam part unchanged");
        CHECK(tr[s][2] == W0[2], "frozen block stays at %g (got %g)", W0[2], tr[s][2]);
    }
    optim_free(o);
    partition_free(p);
}

/* Values computed by hand (independent Python transcription of m ← 0.9 m + 0.1 g,
 * w ← w − lr·η_b·m/(1 − 0.9^t)), lr 0.1: one lr, and η = (1, 1, 4) over blocks {0, 1}, {2}. */
static const double HB_WANT[3][3] = {
    {0.9, -1.2, 0.4875},
    {0.8052631578947369, -0.5684210526315788, 0.4751644736842105},
    {0.7157700524373665, -0.08599728102544169, 0.46299736599339675}};
static const double BLOCK_HB_WANT[3][3] = {
    {0.9, -1.2, 0.45},
    {0.8052631578947369, -0.5684210526315788, 0.40263157894736845},
    {0.7157700524373665, -0.08599728102544169, 0.35788502621868323}};

/* Heavy ball: AdamW's bias-corrected momentum without v, one lr (per block). */
static void test_heavy_ball(void)
{
    double w[3], tr[3][3];
    CHECK(optim_parse("heavy-ball") == OPTIM_HEAVY_BALL && strcmp(optim_name(OPTIM_HEAVY_BALL), "heavy-ball") == 0,
          "heavy-ball name");
    optim_config c = optim_defaults(OPTIM_HEAVY_BALL);
    CHECK(c.beta1 == 0.9 && c.weight_decay == 0, "heavy ball defaults: beta1 0.9 (AdamW's), no decay");
    optimizer *o = optim_new(OPTIM_HEAVY_BALL, &c, 3, NULL, NULL);
    run3(o, w, 3, 0.1, tr);
    check_trace(tr, HB_WANT, 3, 1e-15, "heavy ball");
    CHECK(optim_state_floats(o) == 3 && !optim_has_vhat(o), "heavy ball keeps m only (%zu)", optim_state_floats(o));
    optim_free(o);

    partition *p = partition_new();
    partition_add(p, 0, 2, 1, -1, "a");
    partition_add(p, 2, 1, 1, -1, "b");
    double mult[2] = {1, 4};
    c.block_lr = mult;
    o = optim_new(OPTIM_HEAVY_BALL, &c, 3, p, NULL);
    run3(o, w, 3, 0.1, tr);
    check_trace(tr, BLOCK_HB_WANT, 3, 1e-15, "blockwise heavy ball");
    optim_free(o);

    /* β1 = 0: blockwise heavy ball is blockwise GD */
    c.beta1 = 0;
    double tr_gd[3][3];
    o = optim_new(OPTIM_HEAVY_BALL, &c, 3, p, NULL);
    run3(o, w, 3, 0.1, tr);
    optim_free(o);
    o = optim_new(OPTIM_BLOCK_GD, &c, 3, p, NULL);
    run3(o, w, 3, 0.1, tr_gd);
    optim_free(o);
    check_trace(tr, tr_gd, 3, 0, "heavy ball with beta1 = 0 == blockwise GD");
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

/* β2 = 1: v̂_t is the running mean of g², and β2 → 1 approaches it. */
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

/* ---- Adafactor and SM3 -----------------------------------------------------------------
 * A 2×3 weight (decayed) and a 3-entry LayerNorm gain (a vector, never decayed) in one
 * buffer of P = 9, f(w) = ½ Σ a_k w_k², g = a ⊙ w; lr 0.1, 0.05, 0.02 at steps 1..3 (a
 * changing lr pins down where Adafactor applies it: before its momentum, as HF does). */
static const double FS_W0[9] = {1, -2, 0.5, 0.3, 1.5, -0.7, 0.8, -1.2, 2.0};
static const double FS_A[9] = {1, 4, 0.25, 2, 0.5, 3, 1.5, 0.2, 0.6};
static const double FS_LR[3] = {0.1, 0.05, 0.02};

/* Expected w after each step and v̂ after step 3 (λ = 0.1, other settings default),
 * printed with %.17g by this independent Python transcription of the update rules
 * in optim.h (50-digit decimal arithmetic, so not the C code's rounding). Each row:
 * W row 0, W row 1, ln.
 *
 * # Reference steps for tests/test_optim.c: Adafactor (HF order) and SM3-II, 50-digit Decimal.
 * from decimal import Decimal as D, getcontext
 * getcontext().prec = 50
 * W0 = [D(x) for x in "1 -2 0.5 0.3 1.5 -0.7 0.8 -1.2 2.0".split()]   # 2x3 matrix, then a 3-vector
 * A = [D(x) for x in "1 4 0.25 2 0.5 3 1.5 0.2 0.6".split()]          # g = a*w
 * LR = [D("0.1"), D("0.05"), D("0.02")]; LAM = D("0.1"); B1 = D("0.9"); EPS = D("1e-30"); CLIP = D(1)
 * MAT, VEC = list(range(6)), list(range(6, 9))                        # the vector is a norm gain: no decay
 * def sqrt(x): return x.sqrt()
 * def adafactor(steps=3):
 *     w = W0[:]; m = [D(0)] * 9; Rw = [D(0)] * 2; Cw = [D(0)] * 3; v = [D(0)] * 3; out = []
 *     for t in range(1, steps + 1):
 *         lr = LR[t - 1]; g = [A[k] * w[k] for k in range(9)]; b2 = 1 - D(t) ** D("-0.8")
 *         G2 = [x * x + EPS for x in g]
 *         Rw = [b2 * Rw[i] + (1 - b2) * sum(G2[3 * i + j] for j in range(3)) / 3 for i in range(2)]
 *         Cw = [b2 * Cw[j] + (1 - b2) * sum(G2[3 * i + j] for i in range(2)) / 2 for j in range(3)]
 *         vh = [Rw[k // 3] * Cw[k % 3] / ((Rw[0] + Rw[1]) / 2) for k in MAT]
 *         v = [b2 * v[i] + (1 - b2) * G2[6 + i] for i in range(3)]
 *         vh += v
 *         u = [g[k] / sqrt(vh[k]) for k in range(9)]
 *         for T in (MAT, VEC):
 *             rms = sqrt(sum(u[k] ** 2 for k in T) / len(T)); d = max(D(1), rms / CLIP)
 *             for k in T:
 *                 m[k] = B1 * m[k] + (1 - B1) * (lr * u[k] / d)
 *                 w[k] = w[k] - (lr * LAM * w[k] if T is MAT else 0) - m[k]
 *         out.append(w[:])
 *     return out, vh
 * def sm3(steps=3):
 *     w = W0[:]; m = [D(0)] * 9; r = [D(0)] * 2; c = [D(0)] * 3; acc = [D(0)] * 3; out = []
 *     for t in range(1, steps + 1):
 *         lr = LR[t - 1]; g = [A[k] * w[k] for k in range(9)]
 *         nu = [min(r[k // 3], c[k % 3]) + g[k] ** 2 for k in MAT]
 *         acc = [acc[i] + g[6 + i] ** 2 for i in range(3)]
 *         nu += acc
 *         r = [max(nu[3 * i + j] for j in range(3)) for i in range(2)]
 *         c = [max(nu[3 * i + j] for i in range(2)) for j in range(3)]
 *         for k in range(9):
 *             u = g[k] / sqrt(nu[k] + EPS)
 *             m[k] = B1 * m[k] + (1 - B1) * u
 *             w[k] = w[k] - (lr * LAM * w[k] if k in MAT else 0) - lr * m[k]
 *         out.append(w[:])
 *     vh = [min(r[k // 3], c[k % 3]) for k in MAT] + acc
 *     return out, vh
 * def show(name, out, vh):
 *     fmt = lambda xs: ", ".join("%.17g" % float(x) for x in xs)
 *     row = lambda xs, ind: (",\n" + ind).join(fmt(xs[i:i + 3]) for i in (0, 3, 6))
 *     print("static const double %s_WANT[3][9] = {" % name)
 *     for s in out: print("    {" + row(s, "     ") + "},")
 *     print("};\nstatic const double %s_VHAT[9] = {\n    " % name + row(vh, "    ") + "};")
 * show("ADAFACTOR", *adafactor()); show("SM3", *sm3())
 */
static const double ADAFACTOR_WANT[3][9] = {
    {0.98493735156869899, -1.9741217636885808, 0.49464919164288595,
     0.28639349114993601, 1.4830757488426674, -0.67242107656553052,
     0.79000000000000004, -1.1899999999999999, 1.99},
    {0.9729130103541479, -1.9560184876086919, 0.49168153325482122,
     0.27017986494547325, 1.4729504387326187, -0.64021937996437039,
     0.7760268919125124, -1.1760178634443887, 1.9760106872523766},
    {0.96355089142792538, -1.9435147346327093, 0.49017968076525303,
     0.25428016986326574, 1.4671643297798065, -0.60884141293985361,
     0.76147834672861037, -1.1614519821904836, 1.961431070646372},
};
static const double ADAFACTOR_VHAT[9] = {
    1.1967524378510264, 58.352741656389021, 3.7249441629519824,
    0.092055214593460583, 4.4885424799647096, 0.28652587070132873,
    1.3926849108035113, 0.056332466972695186, 1.4209173866760605};
static const double SM3_WANT[3][9] = {
    {0.97999999999999998, -1.97, 0.48499999999999999,
     0.28699999999999998, 1.4750000000000001, -0.68300000000000005,
     0.79000000000000004, -1.1899999999999999, 1.99},
    {0.96710035708820175, -1.9521412831532605, 0.47778678952594589,
     0.27857590400596449, 1.4614682455826238, -0.67159318908577237,
     0.78198677163925345, -1.1819792899408283, 1.9819733381574125},
    {0.96114963684354826, -1.9442120327109649, 0.47502610535470569,
     0.27476322159667033, 1.4558455295222561, -0.66624079026904448,
     0.77796002835455225, -1.1779455740636882, 1.977934084738636},
};
static const double SM3_VHAT[9] = {
    2.8956831006801274, 187.06808943026013, 12.667737704637581,
    2.8956831006801274, 12.667737704637581, 12.667737704637581,
    4.220107449792259, 0.170127001673961, 4.2797945927400614};

static model fs_model(tensor_info *t)
{
    t[0] = (tensor_info){"W", ROLE_MLP_FC, 0, 2, 3, 1, 0};
    t[1] = (tensor_info){"ln", ROLE_NORM, 6, 3, 1, 1, 0};
    return (model){.kind = "fake", .P = 9, .ntensors = 2, .tensors = t};
}

static void run_fs(optimizer *o, double *w, int steps, double trace[][9])
{
    double g[9];
    memcpy(w, FS_W0, sizeof FS_W0);
    for (int s = 0; s < steps; s++) {
        for (int k = 0; k < 9; k++) g[k] = FS_A[k] * w[k];
        optim_step(o, w, g, FS_LR[s]);
        if (trace) memcpy(trace[s], w, sizeof FS_W0);
    }
}

/* |got − want| <= tol·|want| */
static void check_rel(double got, double want, double tol, const char *what, int s, int k)
{
    CHECK(fabs(got - want) <= tol * fabs(want), "%s step %d [%d]: got %.17g expected %.17g (rel tol %g)", what, s, k,
          got, want, tol);
}

static void test_factored_steps(void)
{
    tensor_info t[2];
    model m = fs_model(t);
    const optim_kind kinds[2] = {OPTIM_ADAFACTOR, OPTIM_SM3};
    const double (*want[2])[9] = {ADAFACTOR_WANT, SM3_WANT};
    const double *want_vhat[2] = {ADAFACTOR_VHAT, SM3_VHAT};
    for (int q = 0; q < 2; q++) {
        optim_config c = optim_defaults(kinds[q]);
        c.weight_decay = 0.1;
        optimizer *o = optim_new(kinds[q], &c, 9, NULL, &m);
        CHECK(optim_has_vhat(o), "%s has a v-hat", optim_name(kinds[q]));
        double w[9], tr[3][9], vh[9];
        optim_vhat(o, vh);
        for (int k = 0; k < 9; k++) CHECK(vh[k] == 0, "%s v-hat before any step: %g", optim_name(kinds[q]), vh[k]);
        run_fs(o, w, 3, tr);
        for (int s = 0; s < 3; s++)
            for (int k = 0; k < 9; k++) check_rel(tr[s][k], want[q][s][k], 1e-13, optim_name(kinds[q]), s + 1, k);
        optim_vhat(o, vh);
        for (int k = 0; k < 9; k++) check_rel(vh[k], want_vhat[q][k], 1e-13, optim_name(kinds[q]), 3, k);
        /* rows + cols of W, 3 for ln, P for m */
        CHECK(optim_state_floats(o) == 2 + 3 + 3 + 9, "%s state %zu", optim_name(kinds[q]), optim_state_floats(o));
        optim_free(o);

        /* the partition is ignored: the tensor table decides */
        partition *p = partition_alg3(&m, 0);
        o = optim_new(kinds[q], &c, 9, p, &m);
        double tr2[3][9];
        run_fs(o, w, 3, tr2);
        CHECK(memcmp(tr, tr2, sizeof tr) == 0, "%s ignores the partition", optim_name(kinds[q]));
        optim_free(o);
        partition_free(p);
    }
}

/* Adafactor's unfactored update on one vector, written out: β2_t = 1 − t^−0.8,
 * v ← β2_t v + (1−β2_t)(g² + 1e-30), u = g/√v clipped to RMS 1, m ← β1 m + (1−β1) lr u. */
static void adafactor_vector_by_hand(double b1, double lr, int steps, double want[][3])
{
    double x[3], v[3] = {0}, m[3] = {0};
    memcpy(x, W0, sizeof x);
    for (int t = 1; t <= steps; t++) {
        double b2 = 1 - pow(t, -0.8), u[3], ss = 0;
        for (int i = 0; i < 3; i++) {
            double g = A3[i] * x[i];
            v[i] = b2 * v[i] + (1 - b2) * (g * g + 1e-30);
            u[i] = g / sqrt(v[i]);
            ss += u[i] * u[i];
        }
        double d = fmax(1, sqrt(ss / 3));
        for (int i = 0; i < 3; i++) {
            double step = lr * u[i] / d;
            if (b1 > 0) step = m[i] = b1 * m[i] + (1 - b1) * step;
            x[i] -= step;
            want[t - 1][i] = x[i];
        }
    }
}

/* SM3 on a vector is AdaGrad with momentum: ν ← ν + g², u = g/√(ν + 1e-30). */
static void sm3_vector_by_hand(double b1, double lr, int steps, double want[][3])
{
    double x[3], nu[3] = {0}, m[3] = {0};
    memcpy(x, W0, sizeof x);
    for (int t = 1; t <= steps; t++)
        for (int i = 0; i < 3; i++) {
            double g = A3[i] * x[i];
            nu[i] += g * g;
            double u = g / sqrt(nu[i] + 1e-30);
            if (b1 > 0) u = m[i] = b1 * m[i] + (1 - b1) * u;
            x[i] -= lr * u;
            want[t - 1][i] = x[i];
        }
}

/* On a vector both equal their written-out formulas, with and without momentum;
 * without a model, and as an n×1 or 1×n tensor of one (never factored). β1 = 0
 * keeps no m. */
static void test_factored_vectors(void)
{
    tensor_info col[1] = {{"w", ROLE_MATRIX, 0, 3, 1, 1, -1}}, row[1] = {{"w", ROLE_MATRIX, 0, 1, 3, 1, -1}};
    model mc = {.kind = "fake", .P = 3, .ntensors = 1, .tensors = col};
    model mr = {.kind = "fake", .P = 3, .ntensors = 1, .tensors = row};
    const model *models[3] = {NULL, &mc, &mr};
    for (int q = 0; q < 2; q++) {
        optim_kind kind = q ? OPTIM_SM3 : OPTIM_ADAFACTOR;
        for (int mom = 0; mom < 2; mom++) {
            optim_config c = optim_defaults(kind);
            c.beta1 = mom ? 0.9 : 0;
            double want[5][3], tr[5][3], w[3];
            if (q) sm3_vector_by_hand(c.beta1, 0.1, 5, want);
            else adafactor_vector_by_hand(c.beta1, 0.1, 5, want);
            for (int mi = 0; mi < 3; mi++) {
                optimizer *o = optim_new(kind, &c, 3, NULL, models[mi]);
                run3(o, w, 5, 0.1, tr);
                char what[96];
                snprintf(what, sizeof what, "%s on a vector (beta1 %g, %s)", optim_name(kind), c.beta1,
                         mi == 0 ? "no model" : mi == 1 ? "3x1 tensor" : "1x3 tensor");
                check_trace(tr, want, 5, 1e-15, what);
                CHECK(optim_state_floats(o) == (mom ? 6u : 3u), "%s: state %zu", what, optim_state_floats(o));
                optim_free(o);
            }
        }
    }
}

/* A rank-1 G2 = (x_i y_j)² is factored exactly: after one step (β2_1 = 0) v̂ = G2, so
 * u = sign(g), RMS(u) = 1 (no clipping) and w moves by lr·(1 − β1) per entry. (G2 also
 * holds ε1 = 1e-30, below the round-off of these g² >= 2.5e-3.) */
static void test_adafactor_rank1(void)
{
    tensor_info t[1] = {{"W", ROLE_MATRIX, 0, 3, 4, 1, -1}};
    model m = {.kind = "fake", .P = 12, .ntensors = 1, .tensors = t};
    const double x[3] = {1, -3, 0.2}, y[4] = {0.5, 2, -0.25, 7};
    double g[12], w[12] = {0}, vh[12];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) g[i * 4 + j] = x[i] * y[j];
    optim_config c = optim_defaults(OPTIM_ADAFACTOR);
    optimizer *o = optim_new(OPTIM_ADAFACTOR, &c, 12, NULL, &m);
    CHECK(optim_state_floats(o) == 3 + 4 + 12, "adafactor 3x4 state %zu", optim_state_floats(o));
    optim_step(o, w, g, 0.1);
    optim_vhat(o, vh);
    int ok_v = 1, ok_w = 1;
    for (int k = 0; k < 12; k++) {
        ok_v &= fabs(vh[k] - g[k] * g[k]) <= 1e-15 * g[k] * g[k];
        ok_w &= fabs(w[k] + 0.1 * 0.1 * (g[k] > 0 ? 1 : -1)) <= 1e-16;
    }
    CHECK(ok_v, "adafactor: rank-1 G2 gives v-hat = g^2 after one step (v[0] %.17g vs %.17g)", vh[0], g[0] * g[0]);
    CHECK(ok_w, "adafactor: rank-1 step moves each entry by lr*(1-beta1) (w[0] %.17g)", w[0]);
    optim_free(o);
}

/* SM3's accumulators (r_i = max_j v̂_ij, c_j = max_i v̂_ij, since v̂ = min(r_i, c_j) and
 * max r = max c) never decrease, and v̂ bounds Σ_s g² from above (the cover property),
 * over 40 steps of gradients that change sign and size, with some zero rows and entries. */
static void test_sm3_accumulators(void)
{
    tensor_info t[2] = {{"W", ROLE_MATRIX, 0, 3, 4, 1, -1}, {"b", ROLE_BIAS, 12, 2, 1, 1, -1}};
    model m = {.kind = "fake", .P = 14, .ntensors = 2, .tensors = t};
    optim_config c = optim_defaults(OPTIM_SM3);
    optimizer *o = optim_new(OPTIM_SM3, &c, 14, NULL, &m);
    double w[14] = {0}, g[14], sum[14] = {0}, vh[14], r_old[3] = {0}, c_old[4] = {0}, b_old[2] = {0};
    int mono = 1, bound = 1;
    for (int s = 0; s < 40; s++) {
        for (int k = 0; k < 14; k++) {
            g[k] = sin(1.7 * k + 0.9 * s) * (1 + (k * s) % 5);
            if ((s % 7 == 3 && k < 4) || (k * 3 + s) % 11 == 0) g[k] = 0;
            sum[k] += g[k] * g[k];
        }
        optim_step(o, w, g, 0.01);
        optim_vhat(o, vh);
        for (int k = 0; k < 14; k++) bound &= vh[k] >= sum[k] * (1 - 1e-14);
        for (int i = 0; i < 3; i++) {
            double r = 0;
            for (int j = 0; j < 4; j++) r = fmax(r, vh[i * 4 + j]);
            mono &= r >= r_old[i];
            r_old[i] = r;
        }
        for (int j = 0; j < 4; j++) {
            double cj = 0;
            for (int i = 0; i < 3; i++) cj = fmax(cj, vh[i * 4 + j]);
            mono &= cj >= c_old[j];
            c_old[j] = cj;
        }
        for (int k = 0; k < 2; k++) {
            mono &= vh[12 + k] >= b_old[k];
            b_old[k] = vh[12 + k];
        }
    }
    CHECK(mono, "sm3 accumulators never decrease");
    CHECK(bound, "sm3 v-hat >= running sum of g^2");
    optim_free(o);
}

/* Decoupled weight decay only on weights: zero gradient, λ = 0.5, lr = 0.1. */
static void test_factored_decay_roles(void)
{
    tensor_info t[3] = {
        {"w", ROLE_MLP_FC, 0, 2, 3, 1, 0},
        {"ln", ROLE_NORM, 6, 2, 1, 1, 0},
        {"b", ROLE_BIAS, 8, 2, 1, 1, 0},
    };
    model m = {.kind = "fake", .P = 10, .ntensors = 3, .tensors = t};
    for (int q = 0; q < 2; q++) {
        optim_kind kind = q ? OPTIM_SM3 : OPTIM_ADAFACTOR;
        optim_config c = optim_defaults(kind);
        c.weight_decay = 0.5;
        optimizer *o = optim_new(kind, &c, 10, NULL, &m);
        double w[10], g[10] = {0};
        for (int i = 0; i < 10; i++) w[i] = 1;
        optim_step(o, w, g, 0.1);
        int ok = 1;
        for (int i = 0; i < 10; i++) ok &= w[i] == (i < 6 ? 0.95 : 1.0);
        CHECK(ok, "%s: weights decayed (%g), norm/bias not (%g, %g)", optim_name(kind), w[0], w[6], w[9]);
        optim_free(o);
    }
}

static void test_factored_config(void)
{
    CHECK(optim_parse("adafactor") == OPTIM_ADAFACTOR && optim_parse("sm3") == OPTIM_SM3, "parse names");
    CHECK(strcmp(optim_name(OPTIM_ADAFACTOR), "adafactor") == 0 && strcmp(optim_name(OPTIM_SM3), "sm3") == 0,
          "names");
    for (int q = 0; q < 2; q++) {
        optim_kind kind = q ? OPTIM_SM3 : OPTIM_ADAFACTOR;
        optim_config c = optim_defaults(kind);
        CHECK(c.beta1 == 0.9 && c.weight_decay == 0 && c.decay_rate == -0.8 && c.clip_threshold == 1 &&
                  c.eps1 == 1e-30,
              "%s defaults", optim_name(kind));
        optim_check_config(&c, 1e-3);
        c.decay_rate = 0;
        c.clip_threshold = INFINITY;
        c.eps1 = 0;
        optim_check_config(&c, 1e-3);
        CHECK(1, "decay rate 0, clip threshold inf, eps1 0 accepted");
    }
    optim_config c = optim_defaults(OPTIM_ADAFACTOR);
    c.decay_rate = 0.5;
    EXPECT_USER_ERROR(optim_check_config(&c, 1e-3),
                      "decay rate must be <= 0 and finite (beta2_t = 1 - t^decay_rate; got 0.5)");
    c.decay_rate = NAN;
    EXPECT_USER_ERROR(optim_check_config(&c, 1e-3), "got nan");
    c.decay_rate = -INFINITY;
    EXPECT_USER_ERROR(optim_check_config(&c, 1e-3), "decay rate");
    c = optim_defaults(OPTIM_ADAFACTOR);
    c.clip_threshold = 0;
    EXPECT_USER_ERROR(optim_check_config(&c, 1e-3), "clip threshold must be > 0 (got 0)");
    c.clip_threshold = NAN;
    EXPECT_USER_ERROR(optim_check_config(&c, 1e-3), "clip threshold");
    c = optim_defaults(OPTIM_SM3);
    c.eps1 = -1e-30;
    EXPECT_USER_ERROR(optim_check_config(&c, 1e-3), "eps1 must be >= 0 and finite (got -1e-30)");
    c.eps1 = INFINITY;
    EXPECT_USER_ERROR(optim_check_config(&c, 1e-3), "eps1");
    c = optim_defaults(OPTIM_SM3);
    c.beta1 = 1;
    EXPECT_USER_ERROR(optim_check_config(&c, 1e-3), "beta1 must be in [0, 1)");
}

/* Where ε1 sits shows at gradients of order √ε1 = 1e-15: Adafactor adds it to g²
 * before its means (G2 = g² + ε1), SM3 under the root (u = g/√(ν + ε1), not
 * g/(√ν + ε1) ≈ ±1). One step (β2_1 = 0, ν = g²), β1 = 0, lr 1, on a 2×2 matrix and
 * a 2-vector; the expected values written out from the formulas in optim.h. */
static void test_eps1_placement(void)
{
    tensor_info t[2] = {{"W", ROLE_MATRIX, 0, 2, 2, 1, -1}, {"b", ROLE_BIAS, 4, 2, 1, 1, -1}};
    model m = {.kind = "fake", .P = 6, .ntensors = 2, .tensors = t};
    const double g[6] = {1e-15, 2e-15, -3e-15, -6e-15, 5e-16, -2e-15}, eps1 = 1e-30;
    double G2[6], want_v[2][6], want_w[2][6];
    for (int k = 0; k < 6; k++) G2[k] = g[k] * g[k] + eps1;
    /* Adafactor: R_i = mean_j G2, C_j = mean_i G2, v̂ = R_i C_j / mean(R); vector v̂ = G2 */
    double R[2] = {(G2[0] + G2[1]) / 2, (G2[2] + G2[3]) / 2}, C[2] = {(G2[0] + G2[2]) / 2, (G2[1] + G2[3]) / 2};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) want_v[0][i * 2 + j] = R[i] * C[j] / ((R[0] + R[1]) / 2);
    want_v[0][4] = G2[4];
    want_v[0][5] = G2[5];
    /* SM3: ν = g² at step 1; v̂ = min(row max, column max) of g² for the matrix, g² for the vector */
    double g2[6];
    for (int k = 0; k < 6; k++) g2[k] = g[k] * g[k];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            want_v[1][i * 2 + j] = fmin(fmax(g2[i * 2], g2[i * 2 + 1]), fmax(g2[j], g2[2 + j]));
    want_v[1][4] = g2[4];
    want_v[1][5] = g2[5];
    for (int q = 0; q < 2; q++) {
        double ss[2] = {0}, u[6];
        for (int k = 0; k < 6; k++) {
            u[k] = q ? g[k] / sqrt(g2[k] + eps1) : g[k] / sqrt(want_v[0][k]);
            ss[k >= 4] += u[k] * u[k];
        }
        double d[2] = {fmax(1, sqrt(ss[0] / 4)), fmax(1, sqrt(ss[1] / 2))}; /* Adafactor's clipping */
        for (int k = 0; k < 6; k++) want_w[q][k] = q ? -u[k] : -u[k] / d[k >= 4];
    }
    for (int q = 0; q < 2; q++) {
        optim_kind kind = q ? OPTIM_SM3 : OPTIM_ADAFACTOR;
        optim_config c = optim_defaults(kind);
        c.beta1 = 0;
        optimizer *o = optim_new(kind, &c, 6, NULL, &m);
        double w[6] = {0}, vh[6];
        optim_step(o, w, g, 1.0);
        optim_vhat(o, vh);
        char what[64];
        snprintf(what, sizeof what, "%s tiny g: v-hat", optim_name(kind));
        for (int k = 0; k < 6; k++) check_rel(vh[k], want_v[q][k], 1e-14, what, 1, k);
        snprintf(what, sizeof what, "%s tiny g: w", optim_name(kind));
        for (int k = 0; k < 6; k++) check_rel(w[k], want_w[q][k], 1e-14, what, 1, k);
        CHECK(fabs(w[4]) < 0.5, "%s: eps1 matters here (|w[4]| = %g, about 1 without it)", optim_name(kind),
              fabs(w[4]));
        optim_free(o);
    }
}

/* With ε1 = 0, zero gradients give u = 0 (not 0/0): a never-used row and entry stay put. */
static void test_factored_zero_gradient(void)
{
    tensor_info t[2] = {{"W", ROLE_MATRIX, 0, 2, 2, 1, -1}, {"b", ROLE_BIAS, 4, 2, 1, 1, -1}};
    model m = {.kind = "fake", .P = 6, .ntensors = 2, .tensors = t};
    for (int q = 0; q < 2; q++) {
        optim_kind kind = q ? OPTIM_SM3 : OPTIM_ADAFACTOR;
        optim_config c = optim_defaults(kind);
        c.eps1 = 0;
        optimizer *o = optim_new(kind, &c, 6, NULL, &m);
        double w[6] = {1, 1, 1, 1, 1, 1}, g[6] = {0.5, -2, 0, 0, 3, 0};
        for (int s = 0; s < 3; s++) optim_step(o, w, g, 0.1);
        int ok = 1;
        for (int k = 0; k < 6; k++) ok &= isfinite(w[k]) && (g[k] != 0 || w[k] == 1);
        CHECK(ok, "%s eps1 = 0: finite, zero-gradient entries unchanged (%g %g %g)", optim_name(kind), w[2], w[3],
              w[5]);
        optim_free(o);
    }
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

    /* the threshold: GD at lr 2.1/L grows the loss by ~1.1² per step, so it stops at the
     * first loss above 1e6 × the first one, long before anything is non-finite */
    memcpy(params, W0, sizeof params);
    c = optim_defaults(OPTIM_GD);
    o = optim_new(OPTIM_GD, &c, 3, NULL, &m);
    tc = (train_config){100000, 2.1 / 4.0, SCHED_CONSTANT, 0, 0};
    after_calls = 0;
    done = train_run(&m, o, &tc, &h, &diverged);
    double l0 = 0.5 * (A3[0] * W0[0] * W0[0] + A3[1] * W0[1] * W0[1] + A3[2] * W0[2] * W0[2]);
    CHECK(diverged && after_calls == done && last_loss <= TRAIN_DIVERGE_FACTOR * l0 &&
          quad_loss(&m) > TRAIN_DIVERGE_FACTOR * l0 && quad_loss(&m) < 1e3 * TRAIN_DIVERGE_FACTOR * l0,
          "exploding loss stops at the threshold: %ld steps, last hooked loss %g, loss now %g, limit %g", done,
          last_loss, quad_loss(&m), TRAIN_DIVERGE_FACTOR * l0);
    optim_free(o);

    /* an update that makes a parameter non-finite (Adam with eps = 0 on a zero gradient
     * entry: 0/0) is undone, and its step is not reported */
    memcpy(params, W0, sizeof params);
    params[2] = 0;
    c = optim_defaults(OPTIM_ADAM);
    c.eps = 0;
    o = optim_new(OPTIM_ADAM, &c, 3, NULL, &m);
    tc = (train_config){10, 0.1, SCHED_CONSTANT, 0, 0};
    after_calls = 0;
    done = train_run(&m, o, &tc, &h, &diverged);
    CHECK(diverged && done == 0 && after_calls == 0 && params[0] == W0[0] && params[2] == 0,
          "non-finite update undone: %ld steps, %d hooks, w = (%g, %g, %g)", done, after_calls, params[0], params[1],
          params[2]);
    optim_free(o);
}

int main(void)
{
    test_train_loop();
    test_gd();
    test_adam_family();
    test_vstats();
    test_leave_out();
    test_heavy_ball();
    test_beta2_limit();
    test_roles();
    test_factored_steps();
    test_factored_vectors();
    test_adafactor_rank1();
    test_sm3_accumulators();
    test_factored_decay_roles();
    test_factored_config();
    test_factored_zero_gradient();
    test_eps1_placement();
    test_schedules();
    test_bad_input();
    return check_summary();
}
