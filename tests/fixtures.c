/* fixtures.c — small models on random data for the tests and the benchmarks. */
#include "tests/fixtures.h"
#include <cblas.h>
#include <math.h>
#include <stdlib.h>

model *fixture_mlp(const mlp_config *cfg, int N, unsigned long seed)
{
    model *m = mlp_new(cfg);
    gsl_rng *r = rng_new(seed);
    mlp_init_params(m, gsl_rng_get(r));
    size_t nx = (size_t)N * cfg->in;
    double *X = xmalloc(nx * sizeof(double));
    int *y = xmalloc((size_t)N * sizeof(int));
    for (size_t e = 0; e < nx; e++) X[e] = rng_gaussian(r, 1.0);
    for (int n = 0; n < N; n++) y[n] = (int)rng_int(r, (unsigned long)cfg->classes);
    mlp_set_batch(m, X, y, N);
    free(X);
    free(y);
    rng_free(r);
    return m;
}

void fixture_tt_params(model *m, gsl_rng *r)
{
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        double *p = m->params + ti->offset;
        for (size_t i = 0; i < tensor_size(ti); i++)
            p[i] = ti->role == ROLE_NORM ? 1 + rng_gaussian(r, 0.3) : rng_gaussian(r, ti->role == ROLE_BIAS ? 0.2 : 0.5);
    }
}

model *fixture_tt(const tt_config *c, int B, unsigned long seed)
{
    model *m = tt_new(c);
    gsl_rng *r = rng_new(seed);
    fixture_tt_params(m, r);
    size_t n = (size_t)B * (c->T + 1);
    int *tok = xmalloc(n * sizeof(int));
    for (size_t i = 0; i < n; i++) tok[i] = (int)rng_int(r, (unsigned long)c->V);
    tt_set_batch(m, tok, B);
    free(tok);
    rng_free(r);
    return m;
}

model *fixture_tt_markov(void)
{
    tt_config c = {.V = 5, .C = 8, .heads = 2, .M = 12, .layers = 1, .T = 4, .bias = 1, .seed = 3};
    model *m = tt_new(&c);
    gsl_rng *r = rng_new(103);
    fixture_tt_params(m, r);
    fixture_markov_batch(m, &c, 6, 1, r);
    rng_free(r);
    return m;
}

void fixture_markov_batch(model *m, const tt_config *c, int B, unsigned long chain_seed, gsl_rng *r)
{
    tt_data *d = tt_data_markov(c->V, 2, 2, chain_seed);
    int *tok = xmalloc((size_t)B * (c->T + 1) * sizeof(int));
    tt_data_batch(d, r, B, c->T, tok);
    tt_set_batch(m, tok, B);
    free(tok);
    tt_data_free(d);
}

double *fixture_gn_by_differences(model *m, double (*forward)(model *, double *, double *), size_t N, int V)
{
    size_t P = m->P, NV = N * V;
    double *J = xmalloc(NV * P * sizeof(double)), *lp = xmalloc(NV * sizeof(double)),
           *lm = xmalloc(NV * sizeof(double)), *probs = xmalloc(NV * sizeof(double));
    double h = 1e-5;
    for (size_t j = 0; j < P; j++) { /* column j of J = ∂logits/∂θ_j */
        double w = m->params[j];
        m->params[j] = w + h;
        forward(m, lp, NULL);
        m->params[j] = w - h;
        forward(m, lm, NULL);
        m->params[j] = w;
        for (size_t i = 0; i < NV; i++) J[i * P + j] = (lp[i] - lm[i]) / (2 * h);
    }
    forward(m, lp, NULL);
    for (size_t n = 0; n < N; n++) { /* the softmax of the base logits */
        double mx = lp[n * V], s = 0;
        for (int v = 1; v < V; v++) mx = fmax(mx, lp[n * V + v]);
        for (int v = 0; v < V; v++) s += probs[n * V + v] = exp(lp[n * V + v] - mx);
        for (int v = 0; v < V; v++) probs[n * V + v] /= s;
    }
    double *SJ = xcalloc(NV * P, sizeof(double)), *G = xmalloc(P * P * sizeof(double));
    for (size_t n = 0; n < N; n++)
        for (int a = 0; a < V; a++)
            for (int b = 0; b < V; b++) {
                double pa = probs[n * V + a], pb = probs[n * V + b];
                double s = ((a == b ? pa : 0) - pa * pb) / (double)N;
                for (size_t j = 0; j < P; j++) SJ[(n * V + a) * P + j] += s * J[(n * V + b) * P + j];
            }
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)P, (int)P, (int)NV, 1, J, (int)P, SJ, (int)P, 0, G,
                (int)P);
    free(J), free(lp), free(lm), free(probs), free(SJ);
    return G;
}
