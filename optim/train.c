/* The training loop shared by every model: batch, loss and gradient, step. */
#include "optim.h"
#include "core/core.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int all_finite(size_t n, const double *x)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

long train_run(model *m, optimizer *o, const train_config *tc, const train_hooks *h, int *diverged)
{
    double *g = xmalloc(m->P * sizeof(double)), *before = xmalloc(m->P * sizeof(double));
    double loss0 = NAN;
    long s;
    *diverged = 0;
    for (s = 0; s < tc->steps; s++) {
        if (h && h->set_batch) h->set_batch(h->ctx, s);
        double loss = m->grad(m, g);
        if (s == 0) loss0 = loss;
        if (!isfinite(loss) || !all_finite(m->P, g) || loss > TRAIN_DIVERGE_FACTOR * fabs(loss0)) {
            *diverged = 1;
            break;
        }
        double lr = lr_at(tc->schedule, tc->lr, s, tc->steps, tc->warmup, tc->final_frac);
        memcpy(before, m->params, m->P * sizeof(double));
        optim_step(o, m->params, g, lr);
        if (!all_finite(m->P, m->params)) { /* e.g. eps = 0 and a zero second moment */
            memcpy(m->params, before, m->P * sizeof(double));
            *diverged = 1;
            break;
        }
        if (h && h->after_step) h->after_step(h->ctx, s, loss, lr);
    }
    free(g);
    free(before);
    return s;
}
