/* The shared optimizers (optim/) on the quadratic f(w) = ½ wᵀHw, g = Hw:
 * loss traces and a learning-rate search on a grid that extends at its edges. */
#include "experiments/fig3_util.h"
#include "core/core.h"
#include "core/model.h"
#include "harness/lr_grid.h"
#include "optim/optim.h"
#include "quad/quad.h"
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
                            const partition *blocks, double lo, double hi, int nlr, double lo_bound,
                            double hi_bound, long steps)
{
    quad_grid *gr = xcalloc(1, sizeof *gr);
    lr_grid_init(&gr->grid, lo, hi, nlr, lo_bound, hi_bound);
    size_t T = (size_t)steps + 1, per = checked_mul(T, sizeof(double), "grid losses");
    double *runs = NULL;  /* the curves in the order evaluated */
    double run_lr[LR_GRID_MAX], lrs[LR_GRID_MAX];
    int nrun = 0;
    for (int k; (k = lr_grid_next(&gr->grid, lrs)) > 0;)
        for (int i = 0; i < k; i++) {
            runs = xrealloc(runs, checked_mul((size_t)nrun + 1, per, "grid losses"));
            double *curve = runs + (size_t)nrun * T;
            quad_train(curve, H, w0, n, kind, cfg, blocks, lrs[i], steps);
            lr_grid_add(&gr->grid, lrs[i], quad_mean_log_loss(curve, steps));
            run_lr[nrun++] = lrs[i];
        }
    /* the curves in the grid's ascending order */
    gr->loss = xmalloc((size_t)nrun * per);
    gr->final_loss = xmalloc((size_t)nrun * sizeof(double));
    for (int k = 0; k < gr->grid.n; k++) {
        int r = 0;
        while (run_lr[r] != gr->grid.lr[k]) r++;
        memcpy(gr->loss + (size_t)k * T, runs + (size_t)r * T, per);
        gr->final_loss[k] = gr->loss[(size_t)k * T + steps];
    }
    free(runs);
    gr->status = lr_grid_status(&gr->grid);
    gr->best = lr_grid_best(&gr->grid);
    return gr;
}

void quad_grid_free(quad_grid *g)
{
    if (!g) return;
    free(g->final_loss);
    free(g->loss);
    free(g);
}
