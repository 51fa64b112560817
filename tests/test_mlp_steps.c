/* mlp_steps' measurements on cases with known answers: the softmax read off the
 * MLP, the factor p(1 − p), Collobert's formula for the Hessian entries between
 * two hidden neurons (the quantity the claims are about), the log-log slope,
 * and the two controls failing their rules where they are made to. */
#include "core/core.h"
#include "core/model.h"
#include "experiments/mlp_steps_util.h"
#include "hessian/hessian.h"
#include "mlp/mlp.h"
#include "quad/quad.h"
#include "tests/check.h"
#include "verdict/verdict.h"
#include <stdlib.h>

enum { IN = 3, WIDTH = 2, C = 4, N = 5 };

/* A tiny MLP (biases on) with seeded parameters and a seeded batch. */
static model *tiny(mlp_act act, mlp_loss loss, double *X, int *y)
{
    mlp_config cfg = {IN, WIDTH, C, act, 1, loss, 7};
    model *m = mlp_new(&cfg);
    gsl_rng *g = rng_new(11);
    for (int i = 0; i < N * IN; i++) X[i] = rng_gaussian(g, 1.0);
    for (int i = 0; i < N; i++) y[i] = (int)rng_int(g, C);
    rng_free(g);
    return m;
}

/* The logits of sample x by hand: fc1 rows are each neuron's weights then its bias. */
static void logits(const model *m, mlp_act act, const double *x, double *z, double *s1)
{
    const double *W1 = m->params, *W2 = W1 + WIDTH * (IN + 1), *b2 = W2 + C * WIDTH;
    double a[WIDTH];
    for (int i = 0; i < WIDTH; i++) {
        double u = W1[i * (IN + 1) + IN];
        for (int j = 0; j < IN; j++) u += W1[i * (IN + 1) + j] * x[j];
        a[i] = act == ACT_TANH ? tanh(u) : u > 0 ? u : 0;
        if (s1) s1[i] = act == ACT_TANH ? 1 - a[i] * a[i] : u > 0;
    }
    for (int c = 0; c < C; c++) {
        z[c] = b2[c];
        for (int i = 0; i < WIDTH; i++) z[c] += W2[c * WIDTH + i] * a[i];
    }
}

static void softmax(const double *z, double *p)
{
    double mx = z[0], s = 0;
    for (int c = 1; c < C; c++) mx = fmax(mx, z[c]);
    for (int c = 0; c < C; c++) s += p[c] = exp(z[c] - mx);
    for (int c = 0; c < C; c++) p[c] /= s;
}

static void test_softmax_probs(void)
{
    for (int l = 0; l < 2; l++) {
        mlp_loss loss = l ? LOSS_SQUARED : LOSS_XENT;
        double X[N * IN], p[N * C], z[C], want[C];
        int y[N];
        model *m = tiny(ACT_TANH, loss, X, y);
        mlp_softmax_probs(m, X, y, N, p);
        double err = 0, nll = 0;
        for (int n = 0; n < N; n++) {
            logits(m, ACT_TANH, X + n * IN, z, NULL);
            softmax(z, want);
            for (int c = 0; c < C; c++) err = fmax(err, fabs(p[n * C + c] - want[c]));
            nll -= log(p[n * C + y[n]]) / N;
        }
        CHECK(err < 1e-14, "%s: the softmax read off the output bias's gradient, max error %g", loss_kind_name(loss), err);
        if (loss == LOSS_XENT) {
            mlp_set_batch(m, X, y, N);
            CHECK_CLOSE(nll, m->loss(m), 1e-13, "cross-entropy = mean -log p_y");
        }
        model_free(m);
    }
}

static void test_softmax_pq(void)
{
    enum { K = 4 };
    double p[3 * K] = {0.25, 0.25, 0.25, 0.25, /* uniform */ 0, 1, 0, 0, /* saturated */ 0.5, 0.5, 0, 0};
    int y[3] = {2, 1, 0};
    softmax_pq s = softmax_pq_of(p, y, 1, K);
    CHECK_CLOSE(s.mean, 0.25 * 0.75, 1e-15, "uniform: p_c(1 - p_c) = (1/C)(1 - 1/C)");
    CHECK_CLOSE(s.true_class, 0.25 * 0.75, 1e-15, "uniform: the true class's");
    s = softmax_pq_of(p + K, y + 1, 1, K);
    CHECK(s.mean == 0 && s.true_class == 0, "saturated on the label: 0 (%g, %g)", s.mean, s.true_class);
    s = softmax_pq_of(p, y, 3, K);
    CHECK_CLOSE(s.mean, (0.75 + 0 + 0.5) / 12, 1e-15, "mean over samples and classes");
    CHECK_CLOSE(s.true_class, (0.1875 + 0 + 0.25) / 3, 1e-15, "mean over samples of p_y(1 - p_y)");
}

/* Collobert's formula (the paper's eq. in App. 'More Discussions', for C
 * classes): the entry of H between input a of neuron i and input b of neuron
 * j ≠ i is mean_n (v_iᵀ A_n v_j) σ'_i σ'_j x̃_a x̃_b, A_n = diag p − ppᵀ for
 * cross-entropy and the identity for the squared loss (no p(1 − p) there). */
static void test_collobert_offblock(void)
{
    for (int l = 0; l < 2; l++) {
        mlp_loss loss = l ? LOSS_SQUARED : LOSS_XENT;
        double X[N * IN], p[N * C];
        int y[N];
        model *m = tiny(ACT_TANH, loss, X, y);
        mlp_softmax_probs(m, X, y, N, p);
        mlp_set_batch(m, X, y, N);
        hessian_opts o = hessian_defaults();
        o.label = "test";
        double *H = hessian_full(m, &o);
        const double *W2 = m->params + WIDTH * (IN + 1);
        size_t P = m->P;
        double err = 0, mx = 0;
        for (int a = 0; a <= IN; a++)
            for (int b = 0; b <= IN; b++) {
                double want = 0, z[C], s1[WIDTH];
                for (int n = 0; n < N; n++) {
                    const double *x = X + n * IN, *pn = p + n * C;
                    logits(m, ACT_TANH, x, z, s1);
                    double vav = 0;   /* v_0ᵀ A v_1 */
                    for (int c = 0; c < C; c++)
                        for (int d = 0; d < C; d++) {
                            double A = loss == LOSS_SQUARED ? c == d : (c == d) * pn[c] - pn[c] * pn[d];
                            vav += W2[c * WIDTH + 0] * A * W2[d * WIDTH + 1];
                        }
                    double xa = a < IN ? x[a] : 1, xb = b < IN ? x[b] : 1;
                    want += vav * s1[0] * s1[1] * xa * xb / N;
                }
                double got = H[(size_t)a * P + (IN + 1) + b];
                err = fmax(err, fabs(got - want));
                mx = fmax(mx, fabs(want));
            }
        CHECK(mx > 0 && err < 1e-12 * mx, "%s: off-block entries of fc1-fc1 follow Collobert's formula (max error %g of %g)",
              loss_kind_name(loss), err, mx);
        free(H);
        model_free(m);
    }
}

static void test_loglog_slope(void)
{
    double x[4] = {0.1, 0.2, 0.5, 3}, y[4], neg[4] = {1, -1, 2, 3}, same[4] = {2, 2, 2, 2};
    for (int i = 0; i < 4; i++) y[i] = 3 * x[i] * x[i];
    CHECK_CLOSE(loglog_slope(x, y, 4), 2.0, 1e-13, "y = 3x^2 has slope 2");
    CHECK(isnan(loglog_slope(x, neg, 4)), "a value <= 0: NAN");
    CHECK(isnan(loglog_slope(same, y, 4)), "all x equal: NAN");
}

/* The hidden-layer excess e of a tiny MLP's H on its batch. */
static double hidden_excess(model *m, const double *X, const int *y, int n)
{
    mlp_set_batch(m, X, y, n);
    hessian_opts o = hessian_defaults();
    o.label = "test";
    double *H = hessian_full(m, &o);
    partition *hid = partition_new();
    partition_add_tensor(hid, m, 0, SPLIT_ROWS);
    double e = offdiag_structure(H, m->P, hid).excess;
    partition_free(hid);
    free(H);
    return e;
}

/* The softmax-factor claim and its ReLU control on weights made so that the
 * factor is exactly 1/C on the span of W2's columns: two identical neurons, W2's
 * columns ±v with Σ_c v_c = 0 and no output bias, so every logit is 0, p is
 * uniform and A v = v/C. Cross-entropy's Gauss–Newton part is then the squared
 * loss's over C, while the σ'' term, which lies inside the blocks, is the same
 * in both (p − y = z − y on v). ReLU (σ'' = 0): H is all Gauss–Newton, the
 * factor cancels in e and the difference is 0 (the control fails the rule);
 * tanh: the factor shrinks only the Gauss–Newton part and e rises. */
static void test_softmax_factor_control(void)
{
    const double v[C] = {0.9, -0.4, -0.2, -0.3}, w[IN + 1] = {0.3, -0.5, 0.2, 0.1};
    double X[N * IN];
    int y[N];
    gsl_rng *g = rng_new(3);
    for (int i = 0; i < N * IN; i++) X[i] = rng_gaussian(g, 1.0);
    for (int i = 0; i < N; i++) y[i] = (int)rng_int(g, C);
    rng_free(g);
    double diff[2];
    for (int a = 0; a < 2; a++) {
        mlp_act act = a ? ACT_TANH : ACT_RELU;
        double e[2];
        for (int l = 0; l < 2; l++) {
            mlp_config cfg = {IN, WIDTH, C, act, 1, l ? LOSS_SQUARED : LOSS_XENT, 1};
            model *m = mlp_new(&cfg);
            double *W1 = m->params, *W2 = W1 + WIDTH * (IN + 1), *b2 = W2 + C * WIDTH;
            for (int i = 0; i < WIDTH; i++)
                for (int j = 0; j <= IN; j++) W1[i * (IN + 1) + j] = w[j];
            for (int c = 0; c < C; c++) W2[c * WIDTH] = v[c], W2[c * WIDTH + 1] = -v[c], b2[c] = 0;
            e[l] = hidden_excess(m, X, y, N);
            model_free(m);
        }
        diff[a] = e[0] - e[1];
    }
    CHECK(fabs(diff[0]) < 1e-10, "ReLU: the factor cannot change e (difference %g)", diff[0]);
    CHECK(diff[1] > 0.1, "tanh: the factor shrinks the Gauss-Newton part only, e rises (difference %g)", diff[1]);
}

/* The control of pq_shrinks: a squared-loss MLP fitted exactly (outputs =
 * onehot(y)) still has p(1 − p) near its uniform value: p_y = e/(e + C − 1). */
static void test_squared_cannot_saturate(void)
{
    enum { K = 100 };
    mlp_config cfg = {1, 1, K, ACT_TANH, 1, LOSS_SQUARED, 1};
    model *m = mlp_new(&cfg);
    for (size_t j = 0; j < m->P; j++) m->params[j] = 0;
    int y = 17;
    double x = 0.5, *p = xmalloc(K * sizeof(double));
    m->params[m->P - K + y] = 1;   /* the output bias: z = onehot(y) */
    mlp_softmax_probs(m, &x, &y, 1, p);
    double py = exp(1) / (exp(1) + K - 1), po = 1 / (exp(1) + K - 1);
    CHECK_CLOSE(p[y], py, 1e-15, "p_y = e/(e + C - 1)");
    softmax_pq s = softmax_pq_of(p, &y, 1, K);
    double uniform = (1.0 / K) * (1 - 1.0 / K), ratio = s.mean / uniform;
    CHECK_CLOSE(s.mean, (py * (1 - py) + (K - 1) * po * (1 - po)) / K, 1e-15, "p(1 - p) at the exact fit");
    CHECK(ratio > 0.5, "p(1 - p) at the exact fit over uniform %.4f: the control cannot pass 'halved'", ratio);
    free(p);
    model_free(m);
}

/* The rule of offblock_falls_with_pq and its control over 5 seeds: the
 * control passes (NO POWER) when the twin's off-block series falls on the same
 * clock, and fails its rule when the series rises or is unrelated. */
static void test_rho_rule(void)
{
    enum { K = 14, S = 5 };
    double pq[K], fall[K], rise[K], rho[S], ctl_fall[S], ctl_rise[S];
    for (int k = 0; k < K; k++) pq[k] = 0.09 - 0.004 * k, fall[k] = 0.3 - 0.01 * k, rise[k] = 0.1 + 0.02 * k;
    for (int s = 0; s < S; s++) {
        rho[s] = spearman(fall, pq, K) - 0.01 * s;
        ctl_fall[s] = spearman(fall, pq, K) - 0.02 * s;
        ctl_rise[s] = spearman(rise, pq, K) + 0.01 * s;
    }
    interval iv = t_interval(rho, S, 0.95), cf = t_interval(ctl_fall, S, 0.95), cr = t_interval(ctl_rise, S, 0.95);
    CHECK(verdict_of(iv, CLAIM_ABOVE, 0.5, &cr) == VERDICT_PASS, "falls with p(1-p), twin rises: PASS");
    CHECK(verdict_of(cr, CLAIM_ABOVE, 0.5, NULL) == VERDICT_FAIL, "the rising twin fails the rule");
    CHECK(verdict_of(iv, CLAIM_ABOVE, 0.5, &cf) == VERDICT_NO_POWER, "the twin falls on the same clock: NO POWER");
}

int main(void)
{
    core_quiet = 1;
    test_softmax_probs();
    test_softmax_pq();
    test_collobert_offblock();
    test_loglog_slope();
    test_softmax_factor_control();
    test_squared_cannot_saturate();
    test_rho_rule();
    return check_summary();
}
