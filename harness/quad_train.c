/* The shared optimizers (optim/) on the quadratic f(w) = ½ wᵀHw, g = Hw:
 * loss traces and a learning-rate grid search. */
#include "harness.h"
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

long quad_train(double *loss, const double *H, const double *w0, int n, optim_kind kind, const optim_config *cfg,
                const partition *blocks, double lr, long steps)
{
    optim_check_config(cfg, lr);
    double *w = xmalloc((size_t)n * sizeof(double)), *g = xmalloc((size_t)n * sizeof(double));
    memcpy(w, w0, (size_t)n * sizeof(double));
    optimizer *o = optim_new(kind, cfg, (size_t)n, blocks, NULL);
    loss[0] = quad_loss(H, w, n);
    double limit = 1e100 * fmax(loss[0], DBL_MIN);
    long t = 0;
    for (; t < steps; t++) {
        cblas_dsymv(CblasRowMajor, CblasUpper, n, 1.0, H, n, w, 1, 0.0, g, 1);  /* g = Hw */
        optim_step(o, w, g, lr);
        loss[t + 1] = quad_loss(H, w, n);
        if (!isfinite(loss[t + 1]) || loss[t + 1] > limit) {
            t++;
            break;
        }
    }
    for (long s = t + 1; s <= steps; s++) loss[s] = NAN;
    optim_free(o);
    free(w);
    free(g);
    return t;
}

quad_grid *quad_grid_search(const double *H, const double *w0, int n, optim_kind kind, const optim_config *cfg,
                            const partition *blocks, double lo, double hi, int nlr, long steps)
{
    if (!(lo > 0) || !(hi >= lo) || nlr < 1) die_user("bad learning-rate grid [%g, %g] with %d points", lo, hi, nlr);
    quad_grid *gr = xcalloc(1, sizeof *gr);
    gr->nlr = nlr;
    gr->lr = xmalloc((size_t)nlr * sizeof(double));
    gr->final_loss = xmalloc((size_t)nlr * sizeof(double));
    gr->loss = xmalloc(checked_mul((size_t)nlr, (size_t)(steps + 1) * sizeof(double), "grid losses"));
    double best = INFINITY, best_area = INFINITY;
    for (int k = 0; k < nlr; k++) {
        gr->lr[k] = nlr == 1 ? lo : lo * pow(hi / lo, (double)k / (nlr - 1));
        double *curve = gr->loss + (size_t)k * (steps + 1);
        quad_train(curve, H, w0, n, kind, cfg, blocks, gr->lr[k], steps);
        double f = curve[steps];
        gr->final_loss[k] = isfinite(f) ? f : INFINITY;
        /* ties (several runs at 0 after underflow) go to the faster curve: mean log loss */
        double area = 0;
        for (long t = 0; t <= steps; t++) area += log10(fmax(curve[t], 1e-300)) / (steps + 1);
        if (gr->final_loss[k] < best || (gr->final_loss[k] == best && area < best_area)) {
            best = gr->final_loss[k];
            best_area = area;
            gr->best = k;
        }
    }
    return gr;
}

void quad_grid_free(quad_grid *g)
{
    if (!g) return;
    free(g->lr);
    free(g->final_loss);
    free(g->loss);
    free(g);
}
