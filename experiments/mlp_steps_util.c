/* The MLP's softmax probabilities and the softmax factor p(1 − p) of Collobert's
 * argument (mlp_steps_util.h). */
#include "experiments/mlp_steps_util.h"
#include "core/core.h"
#include "core/model.h"
#include "mlp/mlp.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* With one sample in the batch, the gradient of the output bias is dL/dz itself:
 * softmax(z) − onehot(y) for cross-entropy, z − onehot(y) for the squared loss
 * (mlp/mlp.h: the loss is a mean over the batch). So the outputs come from
 * mlp.c's own forward pass, without a second copy of it here. */
void mlp_softmax_probs(model *m, const double *X, const int *y, int n, double *p)
{
    const mlp_config *c = mlp_get_config(m);
    int tb = model_find_tensor(m, "fc2.bias"), C = c->classes;
    if (tb < 0) DIE("mlp_softmax_probs needs the output bias (an MLP with biases)");
    size_t ob = m->tensors[tb].offset;
    double *g = xmalloc(m->P * sizeof(double));
    for (int i = 0; i < n; i++) {
        mlp_set_batch(m, X + (size_t)i * c->in, y + i, 1);
        m->grad(m, g);
        double *pi = p + (size_t)i * C;
        for (int k = 0; k < C; k++) pi[k] = g[ob + k] + (k == y[i]);
        if (c->loss == LOSS_SQUARED) {   /* pi holds the outputs z: their softmax */
            double mx = pi[0], sum = 0;
            for (int k = 1; k < C; k++) mx = fmax(mx, pi[k]);
            for (int k = 0; k < C; k++) sum += pi[k] = exp(pi[k] - mx);
            for (int k = 0; k < C; k++) pi[k] /= sum;
        }
    }
    free(g);
}

softmax_pq softmax_pq_of(const double *p, const int *y, int n, int classes)
{
    softmax_pq s = {0, 0};
    for (int i = 0; i < n; i++) {
        const double *pi = p + (size_t)i * classes;
        for (int k = 0; k < classes; k++) s.mean += pi[k] * (1 - pi[k]);
        s.true_class += pi[y[i]] * (1 - pi[y[i]]);
    }
    s.mean /= (double)n * classes;
    s.true_class /= n;
    return s;
}

double loglog_slope(const double *x, const double *y, int n)
{
    double mx = 0, my = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        if (!(x[i] > 0) || !(y[i] > 0)) return NAN;
        mx += log(x[i]) / n;
        my += log(y[i]) / n;
    }
    for (int i = 0; i < n; i++) {
        double dx = log(x[i]) - mx;
        sxx += dx * dx;
        sxy += dx * (log(y[i]) - my);
    }
    return sxx > 0 ? sxy / sxx : NAN;
}
