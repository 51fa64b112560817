/* Tests of tinytransformer/: parameter counts and table, gradient and HVP
 * against central finite differences for every tensor role (1 and 2 layers,
 * with and without biases), the block-restricted H v (hvp_tensors) against the
 * full one and finite differences, Hessian symmetry, panel-width invariance, the
 * trivial-attention case (1 head, T = 1) against a hand-written forward,
 * causal masking, the linear forward/backward against loops, data sources and
 * user errors. */
#include "check.h"
#include "gn_check.h"
#include "core/core.h"
#include "core/model.h"
#include "harness/tt_train.h"
#include "hessian/hessian.h"
#include "optim/optim.h"
#include "tests/fixtures.h"
#include "tinytransformer/tt.h"
#include "tinytransformer/tt_kernels.h"
#include <cblas.h>
#include <stdlib.h>
#include <unistd.h>

static char tmpdir[256];

/* A small model with non-trivial parameters (gains ≠ 1, biases ≠ 0, weights
 * large enough that attention is not uniform) and a random batch. */
static model *small_model_gelu(int layers, int bias, int heads, int T, int B, unsigned long seed, int tied, int gelu)
{
    tt_config c = {.V = 5, .C = 8, .heads = heads, .M = 12, .layers = layers, .T = T, .bias = bias, .tied = tied,
                   .gelu = gelu, .seed = seed};
    return fixture_tt(&c, B, seed + 100);
}

static model *small_model_tied(int layers, int bias, int heads, int T, int B, unsigned long seed, int tied)
{
    return small_model_gelu(layers, bias, heads, T, B, seed, tied, TT_GELU_ERF);
}

static model *small_model(int layers, int bias, int heads, int T, int B, unsigned long seed)
{
    return small_model_tied(layers, bias, heads, T, B, seed, 0);
}

static double norm2(const double *x, size_t n) { return sqrt(frobenius_sq(n, x)); }

/* The key bias adds s q_t·b_k to every score of row t: softmax ignores it, so
 * its gradient and its Hessian rows and columns are identically zero. */
static int is_key_bias(const tensor_info *t) { return strstr(t->name, "attn.key.bias") != NULL; }

static void test_param_counts(void)
{
    tt_config c = tt_defaults();
    CHECK(tt_param_count(&c) == 2640, "paper model P = %zu, expected 2640", tt_param_count(&c));
    model *m = tt_new(&c);
    CHECK(m->P == 2640, "model P = %zu", m->P);
    model_check_tensors(m);
    static const char *names[] = {"wte", "wpe", "h0.ln_1.weight", "h0.ln_1.bias", "h0.attn.query",
                                  "h0.attn.query.bias", "h0.attn.key", "h0.attn.key.bias", "h0.attn.value",
                                  "h0.attn.value.bias", "h0.attn.proj", "h0.attn.proj.bias", "h0.ln_2.weight",
                                  "h0.ln_2.bias", "h0.mlp.fc_1", "h0.mlp.fc_1.bias", "h0.mlp.proj",
                                  "h0.mlp.proj.bias", "ln_f.weight", "ln_f.bias", "lm_head"};
    static const tensor_role roles[] = {ROLE_EMBED, ROLE_POS, ROLE_NORM, ROLE_BIAS, ROLE_QUERY, ROLE_BIAS,
                                        ROLE_KEY, ROLE_BIAS, ROLE_VALUE, ROLE_BIAS, ROLE_ATTN_PROJ, ROLE_BIAS,
                                        ROLE_NORM, ROLE_BIAS, ROLE_MLP_FC, ROLE_BIAS, ROLE_MLP_PROJ, ROLE_BIAS,
                                        ROLE_NORM, ROLE_BIAS, ROLE_OUTPUT};
    int n = sizeof names / sizeof *names;
    CHECK(m->ntensors == n, "%d tensors, expected %d", m->ntensors, n);
    for (int t = 0; t < n && t < m->ntensors; t++)
        CHECK(strcmp(m->tensors[t].name, names[t]) == 0 && m->tensors[t].role == roles[t],
              "tensor %d is %s (%s), expected %s (%s)", t, m->tensors[t].name, role_name(m->tensors[t].role),
              names[t], role_name(roles[t]));
    int q = model_find_tensor(m, "h0.attn.query"), fc = model_find_tensor(m, "h0.mlp.fc_1"),
        mp = model_find_tensor(m, "h0.mlp.proj");
    CHECK(m->tensors[q].heads == 4 && m->tensors[q].rows == 16 && m->tensors[q].cols == 16 && m->tensors[q].layer == 0,
          "query heads %d shape %dx%d", m->tensors[q].heads, m->tensors[q].rows, m->tensors[q].cols);
    CHECK(m->tensors[fc].rows == 32 && m->tensors[fc].cols == 16 && m->tensors[mp].rows == 16 && m->tensors[mp].cols == 32,
          "MLP shapes fc %dx%d proj %dx%d", m->tensors[fc].rows, m->tensors[fc].cols, m->tensors[mp].rows,
          m->tensors[mp].cols);
    /* GPT-2 init: gains 1, biases 0, weights with std ≈ 0.02 */
    double s2 = 0;
    size_t cnt = 0;
    int ok = 1;
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        for (size_t i = 0; i < tensor_size(ti); i++) {
            double p = m->params[ti->offset + i];
            if (ti->role == ROLE_NORM) ok &= p == 1;
            else if (ti->role == ROLE_BIAS) ok &= p == 0;
            else s2 += p * p, cnt++;
        }
    }
    CHECK(ok, "LayerNorm gains must be 1 and biases 0 at init");
    CHECK(fabs(sqrt(s2 / cnt) - 0.02) < 0.002, "init std %g, expected 0.02", sqrt(s2 / cnt));
    model_free(m);

    c.bias = 0;
    CHECK(tt_param_count(&c) == 2480, "no-bias P = %zu, expected 2480", tt_param_count(&c));
    c = tt_defaults();
    c.layers = 2, c.C = 32, c.M = 64;
    CHECK(tt_param_count(&c) == 17920, "2-layer C=32 P = %zu, expected 17920", tt_param_count(&c));
    m = tt_new(&c);
    CHECK(m->P == 17920 && model_find_tensor(m, "h1.mlp.proj.bias") >= 0, "2-layer table P = %zu", m->P);
    model_free(m);
}

/* Worst relative error per role of (a) the gradient vs central differences of
 * the loss, (b) H v vs central differences of the gradient, for one direction
 * per tensor (random entries in that tensor only) and one dense direction. */
static void check_fd(int layers, int bias, int tied, int gelu)
{
    model *m = small_model_gelu(layers, bias, 2, 4, 3, 7 + layers + 10 * bias, tied, gelu);
    size_t P = m->P;
    double *g = xmalloc(P * sizeof(double)), *gp = xmalloc(P * sizeof(double)), *gm = xmalloc(P * sizeof(double));
    double *fd = xmalloc(P * sizeof(double));
    m->grad(m, g);
    const double h = 1e-5;
    for (size_t i = 0; i < P; i++) {
        double p = m->params[i];
        m->params[i] = p + h;
        double lp = m->loss(m);
        m->params[i] = p - h;
        double lm = m->loss(m);
        m->params[i] = p;
        fd[i] = (lp - lm) / (2 * h);
    }
    double worst_g[ROLE_COUNT] = {0};
    int seen[ROLE_COUNT] = {0};
    double key_bias = 0; /* worst |entry| of the key-bias gradient and H rows/columns, relative */
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        seen[ti->role] = 1;
        if (is_key_bias(ti)) {
            key_bias = fmax(key_bias, norm2(g + ti->offset, tensor_size(ti)) / norm2(g, P));
            continue;
        }
        double e = rel_l2_diff(tensor_size(ti), g + ti->offset, fd + ti->offset);
        if (e > worst_g[ti->role]) worst_g[ti->role] = e;
    }

    /* HVP: one direction per tensor plus a dense one */
    int k = m->ntensors + 1;
    double *V = xcalloc((size_t)k * P, sizeof(double)), *HV = xmalloc((size_t)k * P * sizeof(double));
    gsl_rng *r = rng_new(3);
    for (int t = 0; t < m->ntensors; t++)
        for (size_t i = 0; i < tensor_size(&m->tensors[t]); i++)
            V[(size_t)t * P + m->tensors[t].offset + i] = rng_gaussian(r, 1);
    for (size_t i = 0; i < P; i++) V[(size_t)(k - 1) * P + i] = rng_gaussian(r, 1);
    rng_free(r);
    m->hvp(m, V, HV, k);
    double worst_col[ROLE_COUNT] = {0}, worst_row[ROLE_COUNT] = {0};
    double *p0 = xmalloc(P * sizeof(double));
    memcpy(p0, m->params, P * sizeof(double));
    for (int d = 0; d < k; d++) {
        const double *v = V + (size_t)d * P;
        for (size_t i = 0; i < P; i++) m->params[i] = p0[i] + h * v[i];
        m->grad(m, gp);
        for (size_t i = 0; i < P; i++) m->params[i] = p0[i] - h * v[i];
        m->grad(m, gm);
        for (size_t i = 0; i < P; i++) fd[i] = (gp[i] - gm[i]) / (2 * h);
        const double *hv = HV + (size_t)d * P;
        if (d < m->ntensors && is_key_bias(&m->tensors[d])) {
            key_bias = fmax(key_bias, norm2(hv, P) / norm2(HV + (size_t)(k - 1) * P, P));
        } else if (d < m->ntensors) { /* column block of tensor d: the whole H v */
            double e = rel_l2_diff(P, hv, fd);
            tensor_role role = m->tensors[d].role;
            if (e > worst_col[role]) worst_col[role] = e;
        } else { /* dense direction: each tensor's rows of H v */
            for (int t = 0; t < m->ntensors; t++) {
                const tensor_info *ti = &m->tensors[t];
                if (is_key_bias(ti)) {
                    key_bias = fmax(key_bias, norm2(hv + ti->offset, tensor_size(ti)) / norm2(hv, P));
                    continue;
                }
                double e = rel_l2_diff(tensor_size(ti), hv + ti->offset, fd + ti->offset);
                if (e > worst_row[ti->role]) worst_row[ti->role] = e;
            }
        }
    }
    memcpy(m->params, p0, P * sizeof(double));
    for (int role = 0; role < ROLE_COUNT; role++) {
        if (!seen[role]) continue;
        CHECK(worst_g[role] < 1e-6, "%d layers bias %d tied %d gelu %d: gradient of %s rel err %.3g", layers, bias,
              tied, gelu, role_name(role), worst_g[role]);
        CHECK(worst_col[role] < 1e-6, "%d layers bias %d tied %d gelu %d: H v for %s directions rel err %.3g", layers,
              bias, tied, gelu, role_name(role), worst_col[role]);
        CHECK(worst_row[role] < 1e-6, "%d layers bias %d tied %d gelu %d: rows of %s in H v rel err %.3g", layers,
              bias, tied, gelu, role_name(role), worst_row[role]);
    }
    CHECK(key_bias < 1e-12, "%d layers: key-bias gradient / H rows must vanish, got %.3g", layers, key_bias);
    CHECK(seen[ROLE_BIAS] == bias, "bias tensors present: %d, expected %d", seen[ROLE_BIAS], bias);
    CHECK(seen[ROLE_OUTPUT] == !tied && (model_find_tensor(m, "lm_head") < 0) == tied,
          "tied %d: an lm_head tensor exactly when untied", tied);
    printf("# fd %d layer(s) bias %d tied %d %s GELU: worst grad %.2g, H v %.2g\n", layers, bias, tied,
           gelu == TT_GELU_TANH ? "tanh" : "erf",
               max_abs(ROLE_COUNT, worst_g), fmax(max_abs(ROLE_COUNT, worst_col), max_abs(ROLE_COUNT, worst_row)));
    free(p0), free(V), free(HV), free(g), free(gp), free(gm), free(fd);
    model_free(m);
}

/* hvp_tensors, the block-restricted H v, on a 3-layer model: for a direction on
 * the first and on the last Algorithm 3 block of every tensor (every block type,
 * every layer), the rows of the block's tensor equal the full hvp's to
 * round-off and central differences of the gradient; the same directions as
 * one panel give each its own result bitwise (a direction does not depend on
 * its panel); and a restricted direction issues fewer dgemm flops than the full
 * one (at most half for the blocks of the last layer and after it). */
static void test_restricted(int bias, int tied)
{
    model *m = small_model_tied(3, bias, 2, 4, 3, 31 + bias + 2 * tied, tied);
    size_t P = m->P;
    partition *p = partition_alg3(m, 0);
    int k = 0, *pick = xmalloc(2 * (size_t)p->nblocks * sizeof(int));
    for (int b = 0; b < p->nblocks; b++) /* first and last block of each tensor */
        if (b == 0 || p->b[b].tensor != p->b[b - 1].tensor || b + 1 == p->nblocks || p->b[b + 1].tensor != p->b[b].tensor)
            pick[k++] = b;
    double *V = xcalloc((size_t)k * P, sizeof(double)), *HV = xmalloc((size_t)k * P * sizeof(double));
    double *R = xmalloc((size_t)k * P * sizeof(double)), *one = xmalloc(P * sizeof(double));
    double *gp = xmalloc(P * sizeof(double)), *gm = xmalloc(P * sizeof(double)), *p0 = xmalloc(P * sizeof(double));
    int *t = xmalloc(2 * (size_t)k * sizeof(int));
    gsl_rng *r = rng_new(5);
    for (int j = 0; j < k; j++) {
        const block *bl = &p->b[pick[j]];
        for (size_t e = 0; e < bl->n; e++) V[(size_t)j * P + bl->start + e * bl->stride] = rng_gaussian(r, 1);
        t[j] = t[k + j] = bl->tensor;
    }
    rng_free(r);
    m->hvp(m, V, HV, k);
    m->hvp_tensors(m, V, R, k, t, t + k);
    double scale = 0; /* H v's size (the key bias's rows of it vanish) */
    for (int j = 0; j < k; j++) scale = fmax(scale, norm2(HV + (size_t)j * P, P));
    double worst = 0, worst_fd = 0, worst_flops = 0;
    int panel_same = 1, fewer = 1;
    for (int j = 0; j < k; j++) { /* alone, restricted and full: the same bits as in the panel; fewer flops */
        const tensor_info *ti = &m->tensors[t[j]];
        const double *v = V + (size_t)j * P, *f = HV + (size_t)j * P, *rr = R + (size_t)j * P + ti->offset;
        for (size_t i = 0; i < tensor_size(ti); i++) worst = fmax(worst, fabs(rr[i] - f[ti->offset + i]) / scale);
        long long f0 = tt_dgemm_flops();
        m->hvp_tensors(m, v, one, 1, t + j, t + k + j);
        long long f1 = tt_dgemm_flops();
        panel_same &= memcmp(one + ti->offset, rr, tensor_size(ti) * sizeof(double)) == 0;
        m->hvp(m, v, one, 1);
        long long f2 = tt_dgemm_flops();
        panel_same &= memcmp(one, f, P * sizeof(double)) == 0;
        double ratio = (double)(f1 - f0) / (double)(f2 - f1);
        fewer &= ratio <= 1;
        if (ti->layer == 2 || (ti->layer < 0 && t[j] > 1)) worst_flops = fmax(worst_flops, ratio);
    }
    memcpy(p0, m->params, P * sizeof(double));
    const double h = 1e-5;
    for (int j = 0; j < k; j++) {
        const tensor_info *ti = &m->tensors[t[j]];
        const double *v = V + (size_t)j * P, *rr = R + (size_t)j * P + ti->offset;
        for (size_t i = 0; i < P; i++) m->params[i] = p0[i] + h * v[i];
        m->grad(m, gp);
        for (size_t i = 0; i < P; i++) m->params[i] = p0[i] - h * v[i];
        m->grad(m, gm);
        memcpy(m->params, p0, P * sizeof(double));
        double e = 0;
        for (size_t i = 0; i < tensor_size(ti); i++) {
            double fd = (gp[ti->offset + i] - gm[ti->offset + i]) / (2 * h);
            e += (rr[i] - fd) * (rr[i] - fd);
        }
        worst_fd = fmax(worst_fd, sqrt(e) / scale);
    }
    CHECK(worst <= 1e-13, "bias %d tied %d: restricted rows vs the full H v: %.3g", bias, tied, worst);
    CHECK(worst_fd <= 1e-6, "bias %d tied %d: restricted rows vs differences of the gradient: %.3g", bias, tied,
          worst_fd);
    CHECK(panel_same, "bias %d tied %d: a direction alone differs from itself in a panel", bias, tied);
    CHECK(fewer && worst_flops <= 0.5, "bias %d tied %d: restricted dgemm flops / full: last layer up to %.2f", bias,
          tied, worst_flops);
    printf("# restricted H v, bias %d tied %d, %d blocks: vs full %.2g, vs differences %.2g, flops of the last "
           "layer's blocks up to %.2f of the full H v\n", bias, tied, k, worst, worst_fd, worst_flops);
    free(V), free(HV), free(R), free(one), free(gp), free(gm), free(p0), free(t), free(pick);
    partition_free(p);
    model_free(m);
}

/* H from hvp on unit-vector panels of width k. */
static double *hessian_by_panels(model *m, int k)
{
    size_t P = m->P;
    double *H = xmalloc(P * P * sizeof(double)), *E = xcalloc((size_t)k * P, sizeof(double));
    for (size_t j0 = 0; j0 < P; j0 += k) {
        int kk = (int)(P - j0 < (size_t)k ? P - j0 : (size_t)k);
        memset(E, 0, (size_t)k * P * sizeof(double));
        for (int d = 0; d < kk; d++) E[(size_t)d * P + j0 + d] = 1;
        m->hvp(m, E, H + j0 * P, kk);
    }
    free(E);
    return H;
}

/* A tied model is the untied one with lm_head = wte composed with the map θ_tied
 * → (θ, wte copied into lm_head): its gradient is Jᵀ g_untied (wte's rows the
 * sum of the wte and lm_head rows) and its Hessian Jᵀ H_untied J (wte's block
 * the sum of the four wte/lm_head blocks). Exact, so to round-off. */
static void test_tied_is_summed_untied(void)
{
    for (int bias = 0; bias <= 1; bias++) {
        model *u = small_model_tied(2, bias, 2, 4, 3, 31 + bias, 0);
        tt_config c = *tt_config_of(u);
        c.tied = 1;
        model *t = tt_new(&c);
        int tw = model_find_tensor(u, "wte"), tl = model_find_tensor(u, "lm_head");
        size_t Pu = u->P, Pt = t->P, nw = tensor_size(&u->tensors[tw]);
        size_t wte = u->tensors[tw].offset, lm = u->tensors[tl].offset;
        CHECK(Pt + nw == Pu && lm + nw == Pu && t->tensors[t->ntensors - 1].offset + 8 == Pt,
              "tied P %zu = untied %zu - V*C; lm_head was last", Pt, Pu);
        memcpy(u->params + lm, u->params + wte, nw * sizeof(double));
        memcpy(t->params, u->params, Pt * sizeof(double));
        int *tok = xmalloc(3 * 5 * sizeof(int));
        for (int i = 0; i < 15; i++) tok[i] = (i * 7 + 3) % 5;
        tt_set_batch(t, tok, 3);
        tt_set_batch(u, tok, 3);
        free(tok);
        /* J maps index j of the tied model to j, and also to lm + (j - wte) inside wte */
        double *gu = xmalloc(Pu * sizeof(double)), *gt = xmalloc(Pt * sizeof(double)), *ge = xmalloc(Pt * sizeof(double));
        double lu = u->grad(u, gu), lt = t->grad(t, gt);
        for (size_t j = 0; j < Pt; j++) ge[j] = gu[j] + (j >= wte && j < wte + nw ? gu[lm + j - wte] : 0);
        CHECK(fabs(lu - lt) <= 1e-14 * fabs(lu), "bias %d: tied loss %.17g vs untied %.17g", bias, lt, lu);
        CHECK(rel_max_diff(Pt, gt, ge) <= 1e-12, "bias %d: tied gradient vs J^T g: %.3g", bias, rel_max_diff(Pt, gt, ge));
        hessian_opts o = hessian_defaults();
        double *Hu = hessian_full(u, &o), *Ht = hessian_full(t, &o), *He = xmalloc(Pt * Pt * sizeof(double));
        for (size_t i = 0; i < Pt; i++)
            for (size_t j = 0; j < Pt; j++) {
                int wi = i >= wte && i < wte + nw, wj = j >= wte && j < wte + nw;
                size_t li = lm + i - wte, lj = lm + j - wte;
                He[i * Pt + j] = Hu[i * Pu + j] + (wi ? Hu[li * Pu + j] : 0) + (wj ? Hu[i * Pu + lj] : 0) +
                                 (wi && wj ? Hu[li * Pu + lj] : 0);
            }
        CHECK(rel_max_diff(Pt * Pt, Ht, He) <= 1e-12, "bias %d: tied H vs J^T H J: %.3g", bias,
              rel_max_diff(Pt * Pt, Ht, He));
        CHECK(hessian_asymmetry(Pt, Ht) < 1e-12, "bias %d: tied H symmetric: %.3g", bias, hessian_asymmetry(Pt, Ht));
        free(gu), free(gt), free(ge), free(Hu), free(Ht), free(He);
        model_free(u);
        model_free(t);
    }
}

static void test_symmetry_and_panels(void)
{
    for (int layers = 1; layers <= 3; layers++) { /* 3: one layer, tied output head */
        model *m = small_model_tied(layers < 3 ? layers : 1, 1, 2, 4, 3, 21, layers == 3);
        size_t P = m->P;
        double *H = hessian_by_panels(m, (int)P);
        CHECK(hessian_asymmetry(P, H) < 1e-10, "%d layers: max|H - Ht|/max|H| = %.3g", layers, hessian_asymmetry(P, H));
        /* the engine's symmetric path with tt_hess_cols_lower, on 1 and 2 threads, and hess_cols */
        double *Hc = xmalloc(P * P * sizeof(double));
        for (int threads = 1; threads <= 2; threads++) {
            tt_set_threads(m, threads);
            tt_set_hvp_blocking(m, 5, 2); /* several sub-panels and chunks */
            for (int pw = 7; pw <= 64; pw *= 9) { /* panels starting inside tensors and across them */
                hessian_opts o = hessian_defaults();
                o.panel = pw;
                o.symmetric = 1;
                double *Hl = hessian_full(m, &o);
                CHECK(rel_max_diff(P * P, Hl, H) <= 1e-12, "%d layers, %d threads, panel %d: lower path vs hvp panels %.3g",
                      layers, threads, pw, rel_max_diff(P * P, Hl, H));
                free(Hl);
            }
            size_t j0 = 0;
            for (int k = 1; j0 < P; k = k % 40 + 3) { /* ragged column panels */
                int kk = (int)(P - j0 < (size_t)k ? P - j0 : (size_t)k);
                m->hess_cols(m, j0, kk, Hc + j0 * P);
                j0 += kk;
            }
            CHECK(rel_max_diff(P * P, Hc, H) <= 1e-12, "%d layers, %d threads: hess_cols vs hvp %.3g", layers, threads,
                  rel_max_diff(P * P, Hc, H));
        }
        tt_set_threads(m, 0);
        tt_set_hvp_blocking(m, 0, 0);
        free(Hc);
        if (layers == 1) {
            double *H1 = hessian_by_panels(m, 1), *H7 = hessian_by_panels(m, 7);
            CHECK(rel_max_diff(P * P, H1, H) <= 1e-12, "panel k=1 vs k=P: %.3g", rel_max_diff(P * P, H1, H));
            CHECK(rel_max_diff(P * P, H7, H) <= 1e-12, "panel k=7 vs k=P: %.3g", rel_max_diff(P * P, H7, H));
            /* internal blocking: 3 directions per R-pass, 1 sequence per chunk */
            tt_set_hvp_blocking(m, 3, 1);
            double *Hb = hessian_by_panels(m, (int)P);
            CHECK(rel_max_diff(P * P, Hb, H) <= 1e-12, "blocking (3,1) vs default: %.3g", rel_max_diff(P * P, Hb, H));
            tt_set_hvp_blocking(m, 0, 0);
            free(H1), free(H7), free(Hb);
        }
        free(H);
        model_free(m);
    }
}

/* Gauss–Newton mode (gn_check.h), 1 and 2 layers, untied. */
static void test_gauss_newton(void)
{
    for (int layers = 1; layers <= 2; layers++) {
        model *m = small_model(layers, 1, 2, 4, 3, 31 + layers);
        const tt_config *c = tt_config_of(m);
        gn_model g = {tt_set_gauss_newton, tt_gauss_newton, tt_forward, 3 * (size_t)c->T, c->V, "lm_head"};
        char what[32];
        snprintf(what, sizeof what, "%d layers", layers);
        check_gauss_newton(m, &g, what);
        model_free(m);
    }
    model *m = small_model(1, 1, 2, 4, 3, 31);
    EXPECT_USER_ERROR(tt_set_gauss_newton(m, 2), "Gauss-Newton mode");
    model_free(m);
}

/* 1 head, T = 1: softmax over one key is 1, so attention outputs the value
 * projection of the token itself. A forward written out by hand (no attention
 * code) must give the same loss, and query/key get zero gradient and zero
 * Hessian rows. */
static void ln_hand(double *y, const double *x, const double *g, const double *b, int C)
{
    double mu = 0, var = 0;
    for (int c = 0; c < C; c++) mu += x[c] / C;
    for (int c = 0; c < C; c++) var += (x[c] - mu) * (x[c] - mu) / C;
    for (int c = 0; c < C; c++) y[c] = g[c] * (x[c] - mu) / sqrt(var + 1e-5) + b[c];
}

static void matvec_hand(double *y, const double *W, const double *b, const double *x, int out, int in)
{
    for (int o = 0; o < out; o++) {
        y[o] = b ? b[o] : 0;
        for (int i = 0; i < in; i++) y[o] += W[o * in + i] * x[i];
    }
}

static void test_trivial_attention(void)
{
    model *m = small_model(1, 1, 1, 1, 4, 33);
    const tt_config *c = tt_config_of(m);
    int C = c->C, M = c->M, V = c->V;
#define PP(name) (m->params + m->tensors[model_find_tensor(m, name)].offset)
    double loss = 0;
    int tok[4][2];
    gsl_rng *r = rng_new(34);
    for (int b = 0; b < 4; b++) tok[b][0] = (int)rng_int(r, V), tok[b][1] = (int)rng_int(r, V);
    rng_free(r);
    tt_set_batch(m, &tok[0][0], 4);
    for (int b = 0; b < 4; b++) {
        double x[C], h[C], v[C], a[C], f[M], z[V];
        for (int i = 0; i < C; i++) x[i] = PP("wte")[tok[b][0] * C + i] + PP("wpe")[i];
        ln_hand(h, x, PP("h0.ln_1.weight"), PP("h0.ln_1.bias"), C);
        matvec_hand(v, PP("h0.attn.value"), PP("h0.attn.value.bias"), h, C, C); /* attention output = v */
        matvec_hand(a, PP("h0.attn.proj"), PP("h0.attn.proj.bias"), v, C, C);
        for (int i = 0; i < C; i++) x[i] += a[i];
        ln_hand(h, x, PP("h0.ln_2.weight"), PP("h0.ln_2.bias"), C);
        matvec_hand(f, PP("h0.mlp.fc_1"), PP("h0.mlp.fc_1.bias"), h, M, C);
        for (int i = 0; i < M; i++) f[i] = 0.5 * f[i] * (1 + erf(f[i] / sqrt(2)));
        matvec_hand(a, PP("h0.mlp.proj"), PP("h0.mlp.proj.bias"), f, C, M);
        for (int i = 0; i < C; i++) x[i] += a[i];
        ln_hand(h, x, PP("ln_f.weight"), PP("ln_f.bias"), C);
        matvec_hand(z, PP("lm_head"), NULL, h, V, C);
        double mx = z[0], s = 0;
        for (int i = 1; i < V; i++) mx = fmax(mx, z[i]);
        for (int i = 0; i < V; i++) s += exp(z[i] - mx);
        loss += (log(s) + mx - z[tok[b][1]]) / 4;
    }
#undef PP
    CHECK_CLOSE(m->loss(m), loss, 1e-13, "T=1 loss vs hand forward");
    size_t P = m->P;
    double *g = xmalloc(P * sizeof(double));
    m->grad(m, g);
    double *H = hessian_by_panels(m, 64);
    int zero = 1;
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        if (strncmp(ti->name, "h0.attn.query", 13) && strncmp(ti->name, "h0.attn.key", 11)) continue;
        for (size_t i = ti->offset; i < ti->offset + tensor_size(ti); i++) {
            zero &= g[i] == 0;
            for (size_t j = 0; j < P; j++) zero &= H[i * P + j] == 0 && H[j * P + i] == 0;
        }
    }
    CHECK(zero, "T=1: query/key gradient and Hessian rows must be exactly 0");
    /* value and proj do have curvature */
    int v = model_find_tensor(m, "h0.attn.value");
    size_t o = m->tensors[v].offset;
    CHECK(fabs(H[o * P + o]) + fabs(H[o * P + o + 1]) > 0, "value block of H is zero");
    free(g), free(H);
    model_free(m);
}

/* Changing a later token does not change any earlier position's logits or loss. */
static void test_causal(void)
{
    model *m = small_model(2, 1, 2, 6, 2, 44);
    const tt_config *c = tt_config_of(m);
    int T = c->T, V = c->V, B = 2;
    int tok[2 * 7];
    for (int i = 0; i < B * (T + 1); i++) tok[i] = (i * 3 + 1) % V;
    size_t NV = (size_t)B * T * V;
    double *z0 = xmalloc(NV * sizeof(double)), *z1 = xmalloc(NV * sizeof(double)), l0[12], l1[12];
    int t0 = 3;
    tt_set_batch(m, tok, B);
    tt_forward(m, z0, l0);
    tok[0 * (T + 1) + t0 + 1] = (tok[t0 + 1] + 2) % V; /* input at position t0+1 of sequence 0 (target of t0) */
    tok[1 * (T + 1) + T] = (tok[T + 1 + T] + 1) % V;   /* last target of sequence 1 */
    tt_set_batch(m, tok, B);
    tt_forward(m, z1, l1);
    int same = 1, diff_later = 0;
    for (int t = 0; t <= t0; t++) same &= memcmp(z0 + (size_t)t * V, z1 + (size_t)t * V, V * sizeof(double)) == 0;
    for (int t = 0; t < t0; t++) same &= l0[t] == l1[t];
    for (int t = 0; t < T; t++)
        same &= memcmp(z0 + (size_t)(T + t) * V, z1 + (size_t)(T + t) * V, V * sizeof(double)) == 0;
    for (int t = 0; t < T - 1; t++) same &= l0[T + t] == l1[T + t];
    for (int t = t0 + 1; t < T; t++) diff_later |= memcmp(z0 + (size_t)t * V, z1 + (size_t)t * V, V * sizeof(double)) != 0;
    CHECK(same, "earlier logits/losses changed when a later token changed");
    CHECK(diff_later && l0[t0] != l1[t0] && l0[2 * T - 1] != l1[2 * T - 1], "later positions must change");
    free(z0), free(z1);
    model_free(m);
}

static void fill(double *x, size_t n, gsl_rng *r)
{
    for (size_t i = 0; i < n; i++) x[i] = rng_gaussian(r, 1);
}

/* The linear layer's forward and backward (BLAS) against loops. (The R-kernels
 * are checked against their naive references in tests/test_ttdirminor.c.) */
static void test_linear_kernels(void)
{
    int N = 7, IC = 5, OC = 6;
    gsl_rng *r = rng_new(5);
    double *inp = xmalloc(N * IC * sizeof(double)), *dout = xmalloc(N * OC * sizeof(double));
    double *W = xmalloc(OC * IC * sizeof(double)), *b = xmalloc(OC * sizeof(double));
    fill(inp, N * IC, r), fill(dout, N * OC, r), fill(W, OC * IC, r), fill(b, OC, r);
    double *y = xmalloc(N * OC * sizeof(double)), *dW = xcalloc(OC * IC, sizeof(double)), *db = xcalloc(OC, sizeof(double));
    double *dx = xcalloc(N * IC, sizeof(double));
    tt_linear_forward(y, inp, W, b, N, IC, OC);
    tt_linear_backward(dx, dW, db, dout, inp, W, N, IC, OC);
    double e = 0;
    for (int n = 0; n < N; n++)
        for (int o = 0; o < OC; o++) {
            double s = b[o];
            for (int i = 0; i < IC; i++) s += inp[n * IC + i] * W[o * IC + i];
            e = fmax(e, fabs(s - y[n * OC + o]));
        }
    for (int o = 0; o < OC; o++)
        for (int i = 0; i < IC; i++) {
            double s = 0;
            for (int n = 0; n < N; n++) s += dout[n * OC + o] * inp[n * IC + i];
            e = fmax(e, fabs(s - dW[o * IC + i]));
        }
    for (int n = 0; n < N; n++)
        for (int i = 0; i < IC; i++) {
            double s = 0;
            for (int o = 0; o < OC; o++) s += dout[n * OC + o] * W[o * IC + i];
            e = fmax(e, fabs(s - dx[n * IC + i]));
        }
    for (int o = 0; o < OC; o++) {
        double s = 0;
        for (int n = 0; n < N; n++) s += dout[n * OC + o];
        e = fmax(e, fabs(s - db[o]));
    }
    CHECK(e < 1e-13, "linear forward/backward (out, dinp, dW, db) vs loops: %.3g", e);
    free(y), free(dW), free(db), free(dx);
    free(inp), free(dout), free(W), free(b);
    rng_free(r);
}

static void test_gelu(void)
{
    /* erf form: GELU(x) = x Φ(x); known values */
    CHECK_CLOSE(tt_gelu(0), 0, 1e-16, "GELU(0)");
    CHECK_CLOSE(tt_gelu(1), 0.8413447460685429, 1e-15, "GELU(1) = Φ(1)");
    CHECK_CLOSE(tt_gelu(-1), -0.15865525393145707, 1e-15, "GELU(-1) = -Φ(-1)");
    /* GPT-2's gelu_new: ½ x (1 + tanh(√(2/π)(x + 0.044715 x³))); PyTorch's gelu(approximate='tanh') gives the same */
    CHECK_CLOSE(tt_gelu_tanh(0), 0, 1e-16, "tanh GELU(0)");
    CHECK_CLOSE(tt_gelu_tanh(1), 0.8411919906082768, 1e-15, "tanh GELU(1)");
    CHECK_CLOSE(tt_gelu_tanh(-3), -0.0036373920817729943, 1e-17, "tanh GELU(-3)");
    double worst = 0; /* the two forms differ, by less than 5e-4 (the approximation's known error) */
    for (double x = -6; x <= 6; x += 0.01) worst = fmax(worst, fabs(tt_gelu_tanh(x) - tt_gelu(x)));
    CHECK(worst > 1e-4 && worst < 5e-4, "max |tanh GELU - erf GELU| = %.3g, expected 1e-4..5e-4", worst);
}

/* The tanh GELU through the model's other paths: H symmetric, hess_cols (the unit-direction panels) and
 * hess_cols_lower equal to hvp on unit vectors, the same bytes on 1 and 2 threads; and not the erf model's. */
static void test_gelu_tanh_model(void)
{
    model *m = small_model_gelu(1, 1, 2, 4, 3, 21, 1, TT_GELU_TANH), *e = small_model_tied(1, 1, 2, 4, 3, 21, 1);
    size_t P = m->P;
    double *H = hessian_by_panels(m, (int)P), *Hc = xmalloc(P * P * sizeof(double));
    CHECK(hessian_asymmetry(P, H) < 1e-10, "tanh GELU: max|H - Ht|/max|H| = %.3g", hessian_asymmetry(P, H));
    hessian_opts o = hessian_defaults();
    o.panel = 7, o.symmetric = 1;
    double *Hl = hessian_full(m, &o);
    CHECK(rel_max_diff(P * P, Hl, H) <= 1e-12, "tanh GELU: lower path vs hvp panels %.3g", rel_max_diff(P * P, Hl, H));
    for (int threads = 1; threads <= 2; threads++) {
        tt_set_threads(m, threads);
        m->hess_cols(m, 0, (int)P, Hc);
        if (threads == 1) memcpy(Hl, Hc, P * P * sizeof(double));
        CHECK(rel_max_diff(P * P, Hc, H) <= 1e-12, "tanh GELU, %d threads: hess_cols vs hvp %.3g", threads,
              rel_max_diff(P * P, Hc, H));
    }
    CHECK(memcmp(Hl, Hc, P * P * sizeof(double)) == 0, "tanh GELU: hess_cols the same bytes on 1 and 2 threads");
    CHECK(memcmp(m->params, e->params, P * sizeof(double)) == 0 && fabs(m->loss(m) - e->loss(e)) > 1e-8,
          "the tanh model's loss is not the erf model's on the same parameters: %.3g", fabs(m->loss(m) - e->loss(e)));
    free(H), free(Hc), free(Hl);
    model_free(m), model_free(e);
}

static void write_text(const char *path, const char *text, size_t n)
{
    FILE *fp = fopen(path, "wb");
    fwrite(text, 1, n, fp);
    fclose(fp);
}

/* Text sources: the vocabulary (all bytes, or the most frequent + other), the
 * split by position (training windows from the head, held-out windows from the
 * tail), a folder read in name order, nanoGPT's token files, user errors. */
static void test_text_source(gsl_rng *r)
{
    /* 40 bytes: 'a' x16, 'b' x12, 'c' x8, '\n' x4 */
    const char *text = "abcabcabcabcabcabcabcabababababaaaa\n\n\n\na";
    size_t len = strlen(text);
    char *path = path_join(tmpdir, "text.txt");
    write_text(path, text, len);
    tt_data *d = tt_data_text(path, 8, 3);
    CHECK(tt_data_vocab(d) == 4, "vocabulary %d, expected 4 ('\\n', a, b, c)", tt_data_vocab(d));
    CHECK(tt_data_symbol(d, 0) == '\n' && tt_data_symbol(d, 1) == 'a' && tt_data_symbol(d, 3) == 'c',
          "ids in byte order: %d %d %d", tt_data_symbol(d, 0), tt_data_symbol(d, 1), tt_data_symbol(d, 3));
    size_t na = 0;
    for (size_t i = 0; i < len; i++) na += text[i] == 'a';
    CHECK(tt_data_count(d, 1) == na, "count of 'a' %zu, expected %zu", tt_data_count(d, 1), na);
    CHECK(tt_data_length(d, 0) == 36 && tt_data_length(d, 1) == 4, "split %zu + %zu, expected 36 + 4 (last 10%%)",
          tt_data_length(d, 0), tt_data_length(d, 1));
    int tok[200 * 4];
    tt_data_batch(d, r, 200, 3, tok);
    int ok = 1, first_seen = 0, last_seen = 0;
    for (int i = 0; i < 200; i++) { /* a window of the first 36 bytes, decoded */
        char w[5] = {0};
        for (int t = 0; t < 4; t++) w[t] = (char)tt_data_symbol(d, tok[i * 4 + t]);
        char head[37];
        memcpy(head, text, 36), head[36] = 0;
        ok &= strstr(head, w) != NULL;
        first_seen |= memcmp(w, text, 4) == 0;
        last_seen |= memcmp(w, text + 32, 4) == 0;
    }
    CHECK(ok && first_seen && last_seen, "training windows inside the first 36 bytes, both ends drawn (%d %d %d)", ok,
          first_seen, last_seen);
    tt_data_held_out_batch(d, r, 20, 3, tok);
    ok = 1;
    for (int i = 0; i < 20; i++)
        for (int t = 0; t < 4; t++) ok &= tt_data_symbol(d, tok[i * 4 + t]) == text[36 + t];
    CHECK(ok, "held-out windows are the last 4 bytes");
    tt_data_free(d);

    /* vocabulary 3: the 2 most frequent ('a', 'b') in byte order, then other */
    d = tt_data_text(path, 3, 3);
    CHECK(tt_data_vocab(d) == 3 && tt_data_symbol(d, 0) == 'a' && tt_data_symbol(d, 1) == 'b' &&
              tt_data_symbol(d, 2) == TT_SYMBOL_OTHER,
          "top-2 + other: %d %d %d", tt_data_symbol(d, 0), tt_data_symbol(d, 1), tt_data_symbol(d, 2));
    CHECK(tt_data_count(d, 2) == len - na - 12, "other counts c and \\n: %zu", tt_data_count(d, 2));
    tt_data_free(d);
    EXPECT_USER_ERROR(tt_data_text(path, 8, 4), "held-out part");
    EXPECT_USER_ERROR(tt_data_text(path, 1, 3), "vocabulary size must be in 2..256");
    free(path);

    /* a folder: text files in name order; hidden, *.dat, links and subfolders skipped */
    char *dir = path_join(tmpdir, "corpus");
    ensure_dir(dir);
    char *f1 = path_join(dir, "b_second"), *f0 = path_join(dir, "a_first"), *fd = path_join(dir, "a_first.dat");
    char *fh = path_join(dir, ".hidden"), *fl = path_join(dir, "c_link"), *sub = path_join(dir, "off");
    write_text(f1, "yyyyyyyyyy", 10);
    write_text(f0, "xxxxxxxxxx", 10);
    write_text(fd, "zzzzzzzzzz", 10);
    write_text(fh, "zzzzzzzzzz", 10);
    CHECK(symlink(f0, fl) == 0, "symlink");
    ensure_dir(sub);
    char *fs = path_join(sub, "offensive");
    write_text(fs, "zzzzzzzzzz", 10);
    d = tt_data_text(dir, 8, 1);
    CHECK(tt_data_vocab(d) == 2 && tt_data_count(d, 0) == 10 && tt_data_count(d, 1) == 10,
          "folder: x and y only, 10 each (vocab %d)", tt_data_vocab(d));
    tt_data_batch(d, r, 50, 1, tok);
    ok = 1;
    for (int i = 0; i < 100; i++) ok &= i % 2 || tok[i] == 0 || tok[i + 1] == 1; /* x before y */
    tt_data_held_out_batch(d, r, 5, 1, tok);
    for (int i = 0; i < 10; i++) ok &= tt_data_symbol(d, tok[i]) == 'y';
    CHECK(ok, "folder read in name order (x then y), held out from the tail");
    tt_data_free(d);
    free(f0), free(f1), free(fd), free(fh), free(fl), free(fs), free(sub);
    char *empty_dir = path_join(tmpdir, "empty_corpus");
    ensure_dir(empty_dir);
    EXPECT_USER_ERROR(tt_data_text(empty_dir, 8, 1), "holds no text file");
    free(empty_dir);
    free(dir);

    /* nanoGPT token files: uint16 little endian */
    char *tr = path_join(tmpdir, "train.bin"), *va = path_join(tmpdir, "val.bin");
    unsigned char bin[40];
    for (int i = 0; i < 20; i++) bin[2 * i] = (unsigned char)(i % 7 == 3 ? 44 : i % 5), bin[2 * i + 1] = i % 7 == 3;
    write_text(tr, (const char *)bin, 40); /* tokens i%5, and 300 at i%7==3 */
    write_text(va, (const char *)bin, 10);
    d = tt_data_token_files(tr, va, 301, 4);
    CHECK(tt_data_vocab(d) == 301 && tt_data_length(d, 0) == 20 && tt_data_length(d, 1) == 5 &&
              tt_data_count(d, 300) == 3 + 1 && tt_data_symbol(d, 5) == TT_SYMBOL_TOKEN,
          "token files: V %d, %zu + %zu tokens, count(300) %zu", tt_data_vocab(d), tt_data_length(d, 0),
          tt_data_length(d, 1), tt_data_count(d, 300));
    tt_data_held_out_batch(d, r, 3, 4, tok);
    CHECK(tok[0] == 0 && tok[3] == 300 && tok[4] == 4, "the held-out window is val.bin: %d %d %d", tok[0], tok[3],
          tok[4]);
    tt_data_free(d);
    EXPECT_USER_ERROR(tt_data_token_files(tr, va, 300, 4), "token 300 at position 3 is outside the vocabulary");
    EXPECT_USER_ERROR(tt_data_token_files(tr, va, 301, 5), "each need T+1 = 6");
    write_text(va, (const char *)bin, 9);
    EXPECT_USER_ERROR(tt_data_token_files(tr, va, 301, 4), "not a whole number of uint16 tokens");
    free(tr), free(va);

    path = path_join(tmpdir, "empty.txt");
    write_text(path, "", 0);
    EXPECT_USER_ERROR(tt_data_text(path, 8, 4), "is empty");
    free(path);
    path = path_join(tmpdir, "missing.txt");
    EXPECT_USER_ERROR(tt_data_text(path, 8, 4), "cannot read data file");
    free(path);
}

static void test_data(void)
{
    tt_data *d = tt_data_markov(8, 1, 2, 9);
    const double *P = tt_data_transitions(d);
    int ok = 1;
    for (int s = 0; s < 8; s++) {
        double sum = 0;
        int big = 0;
        for (int j = 0; j < 8; j++) sum += P[s * 8 + j], big += P[s * 8 + j] > 0.1;
        ok &= fabs(sum - 1) < 1e-12 && big == 2;
    }
    CHECK(ok, "Markov rows must sum to 1 with 2 likely successors");
    gsl_rng *r = rng_new(1);
    int B = 2000, T = 8, *tok = xmalloc((size_t)B * (T + 1) * sizeof(int));
    tt_data_batch(d, r, B, T, tok);
    /* empirical transition frequencies follow the chain */
    double cnt[64] = {0}, row[8] = {0};
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++) {
            int a = tok[b * (T + 1) + t], c = tok[b * (T + 1) + t + 1];
            ok &= a >= 0 && a < 8 && c >= 0 && c < 8;
            cnt[a * 8 + c]++, row[a]++;
        }
    double worst = 0; /* in standard errors */
    for (int i = 0; i < 64; i++)
        worst = fmax(worst, fabs(cnt[i] / row[i / 8] - P[i]) / sqrt(P[i] * (1 - P[i]) / row[i / 8]));
    CHECK(ok && worst < 5, "Markov sample frequencies off by %.3g standard errors", worst);
    tt_data_free(d);

    test_text_source(r);
    EXPECT_USER_ERROR(tt_data_markov(8, 1, 9, 1), "successors");
    EXPECT_USER_ERROR(tt_data_markov(8, 0, 2, 1), "order");

    /* order 2: the next token follows the row of the (previous, current) context */
    d = tt_data_markov(4, 2, 1, 5);
    P = tt_data_transitions(d);
    CHECK(tt_data_order(d) == 2, "order %d", tt_data_order(d));
    int B2 = 4000, T2 = 6, *tk = xmalloc((size_t)B2 * (T2 + 1) * sizeof(int));
    tt_data_batch(d, r, B2, T2, tk);
    double c2[64] = {0}, r2[16] = {0};
    for (int b = 0; b < B2; b++)
        for (int t = 1; t < T2; t++) {
            const int *row2 = tk + b * (T2 + 1);
            int ctx = row2[t - 1] * 4 + row2[t];
            c2[ctx * 4 + row2[t + 1]]++, r2[ctx]++;
        }
    worst = 0;
    for (int i = 0; i < 64; i++)
        worst = fmax(worst, fabs(c2[i] / r2[i / 4] - P[i]) / sqrt(P[i] * (1 - P[i]) / r2[i / 4]));
    CHECK(worst < 5, "order-2 sample frequencies off by %.3g standard errors", worst);
    free(tk);
    tt_data_free(d);
    free(tok);
    rng_free(r);
}

/* AdamW on the Markov source learns (the loss falls well below log V), and
 * the checkpoints hold the parameters and v̂ after their step. */
static double read_loss_mean(const char *path, long from, long to)
{
    FILE *fp = fopen(path, "r");
    char line[256];
    double sum = 0;
    long n = 0, step;
    double loss, lr;
    if (!fp || !fgets(line, sizeof line, fp)) return NAN;
    while (fgets(line, sizeof line, fp))
        if (sscanf(line, "%ld,%lf,%lf", &step, &loss, &lr) == 3 && step >= from && step < to) sum += loss, n++;
    fclose(fp);
    return n ? sum / n : NAN;
}

static void test_training(void)
{
    tt_config c = tt_defaults();
    model *m = tt_new(&c);
    tt_data *d = tt_data_markov(c.V, 1, 2, 3);
    tt_train_opts o = tt_train_defaults();
    o.steps = 300, o.batch = 16, o.lr = 1e-2;
    o.nfracs = 2, o.fracs[0] = 0.5, o.fracs[1] = 1.0;
    char *out = path_join(tmpdir, "train");
    tt_train_result r = tt_train(m, d, &o, out);
    CHECK(r.steps_done == 300 && !r.diverged, "trained %ld steps, diverged %d", r.steps_done, r.diverged);
    char *lp = path_join(out, "loss.csv");
    double first = read_loss_mean(lp, 0, 1), last = read_loss_mean(lp, 250, 300);
    CHECK(fabs(first - log(8)) < 0.1 && last < 0.75 * first, "loss %.3f -> %.3f (log V = %.3f)", first, last, log(8));
    free(lp);
    CHECK(checkpoint_step(0.01, 300) == 3 && checkpoint_step(1e-6, 300) == 1, "checkpoint steps");
    char *p150 = path_join(out, "step000150_params.npy"), *p300 = path_join(out, "step000300_params.npy");
    char *v300 = path_join(out, "step000300_vhat.npy");
    int ndim;
    size_t shape[4];
    double *w300 = npy_read(p300, &ndim, shape), *vh = npy_read(v300, &ndim, shape);
    CHECK(ndim == 1 && shape[0] == m->P && memcmp(w300, m->params, m->P * sizeof(double)) == 0,
          "final checkpoint must hold the final parameters");
    int pos = 1;
    for (size_t i = 0; i < m->P; i++) pos &= isfinite(vh[i]) && vh[i] >= 0;
    CHECK(pos && max_abs(m->P, vh) > 0, "v-hat must be finite, >= 0 and not all zero");
    model *m2 = tt_new(&c);
    load_params(m2, p150);
    CHECK(memcmp(m2->params, m->params, m->P * sizeof(double)) != 0, "the 50%% checkpoint differs from the end");
    tt_config c2 = c;
    c2.C = 8, c2.M = 8;
    model *m3 = tt_new(&c2);
    EXPECT_USER_ERROR(load_params(m3, p300), "the model has P =");
    o.fracs[0] = 0;
    EXPECT_USER_ERROR(tt_train(m2, d, &o, out), "checkpoint fraction");
    /* GD has no second moment: parameters are checkpointed, v̂ is not */
    o = tt_train_defaults();
    o.optim = OPTIM_GD;
    o.ocfg = optim_defaults(OPTIM_GD);
    o.steps = 10;
    o.fracs[0] = 1;
    char *gd_out = path_join(tmpdir, "train_gd");
    tt_train_result rg = tt_train(m2, d, &o, gd_out);
    char *gp = path_join(gd_out, "step000010_params.npy"), *gv = path_join(gd_out, "step000010_vhat.npy");
    FILE *fg = fopen(gp, "rb"), *fv = fopen(gv, "rb");
    CHECK(rg.steps_done == 10 && !rg.diverged && fg && !fv, "GD checkpoint: params written, no v-hat file");
    if (fg) fclose(fg);
    if (fv) fclose(fv);
    /* a diverging run stops, and loss.csv holds exactly the steps done */
    o.lr = 1e8;
    o.steps = 200;
    tt_train_result rd = tt_train(m2, d, &o, gd_out);
    char *lossp = path_join(gd_out, "loss.csv");
    FILE *fl = fopen(lossp, "r");
    int lines = 0;
    for (int ch; fl && (ch = fgetc(fl)) != EOF;) lines += ch == '\n';
    if (fl) fclose(fl);
    CHECK(rd.diverged && rd.steps_done < 200 && lines == rd.steps_done + 1,
          "divergence: %ld steps done, loss.csv has %d lines", rd.steps_done, lines);
    free(gd_out), free(gp), free(gv), free(lossp);
    free(w300), free(vh), free(p150), free(p300), free(v300), free(out);
    model_free(m), model_free(m2), model_free(m3);
    tt_data_free(d);
}

static void test_user_errors(void)
{
    tt_config c = tt_defaults();
    c.heads = 3;
    EXPECT_USER_ERROR(tt_check_config(&c), "divide C");
    c = tt_defaults(), c.V = 1;
    EXPECT_USER_ERROR(tt_check_config(&c), "vocabulary size V");
    c = tt_defaults(), c.layers = 0;
    EXPECT_USER_ERROR(tt_check_config(&c), "layers");
    c = tt_defaults(), c.T = 0;
    EXPECT_USER_ERROR(tt_check_config(&c), "context length T");
    c = tt_defaults(), c.M = -2;
    EXPECT_USER_ERROR(tt_check_config(&c), "MLP width");
    c = tt_defaults();
    model *m = tt_new(&c);
    EXPECT_USER_ERROR(m->loss(m), "no batch set");
    int tok[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    EXPECT_USER_ERROR(tt_set_batch(m, tok, 1), "outside the vocabulary");
    EXPECT_USER_ERROR(tt_set_batch(m, tok, 0), "batch size");
    model_free(m);
}

int main(void)
{
    core_quiet = 1; /* the engine's memory line */
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_tt.%d", (int)getpid());
    ensure_dir(tmpdir);
    test_param_counts();
    test_gelu();
    test_linear_kernels();
    for (int layers = 1; layers <= 2; layers++)
        for (int bias = 0; bias <= 1; bias++)
            for (int tied = 0; tied <= 1; tied++) check_fd(layers, bias, tied, TT_GELU_ERF);
    check_fd(1, 1, 0, TT_GELU_TANH);
    check_fd(2, 1, 1, TT_GELU_TANH);
    test_gelu_tanh_model();
    for (int bias = 0; bias <= 1; bias++)
        for (int tied = 0; tied <= 1; tied++) test_restricted(bias, tied);
    test_symmetry_and_panels();
    test_tied_is_summed_untied();
    test_gauss_newton();
    test_trivial_attention();
    test_causal();
    test_data();
    test_training();
    test_user_errors();
    if (remove_tree(tmpdir) != 0) printf("# could not remove %s\n", tmpdir);
    return check_summary();
}
