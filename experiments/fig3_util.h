/* fig3_util — the shared optimizers on a quadratic (fig3_util.c), for fig3. */
#ifndef FIG3_UTIL_H
#define FIG3_UTIL_H

#include "core/model.h"
#include "harness/lr_grid.h"
#include "optim/optim.h"

/* Run `steps` steps of the optimizer from w0 at learning rate lr, g = Hw; loss[t]
 * is f after t steps (loss[0] = f(w0)), length steps+1. Returns the number of
 * steps done: a run stops early (the rest of loss[] set to NaN) when the loss
 * is not finite or exceeds 1e100·f(w0) (diverged). */
long quad_train(double *loss /* (steps+1) */, const double *H /* (n,n) */, const double *w0, int n,
                optim_kind kind, const optim_config *cfg, const partition *blocks, double lr, long steps);
/* Learning-rate search on an extending log grid (harness/lr_grid.h): the
 * planned points lo·(hi/lo)^(k/(nlr-1)), k < nlr, then one point beyond each
 * edge the best is at, with the same spacing, until the best is interior or
 * [lo_bound, hi_bound] or LR_GRID_MAX stops it (status). Each run is scored by
 * quad_mean_log_loss, the statistic Fig. 3's claims compare (lower is better;
 * a diverged run scores NaN and is never best). User error: nlr outside
 * 2..LR_GRID_MAX or not 0 < lo_bound <= lo < hi <= hi_bound. */
typedef struct {
    lr_grid grid;            /* grid.n runs: grid.lr ascending, grid.score */
    grid_status status;      /* GRID_INTERIOR unless a bound stopped the extension or all diverged */
    int best;                /* index into grid.lr; -1 when every run diverged */
    double *final_loss;      /* (grid.n) loss after the last step, NaN if the run diverged */
    double *loss;            /* (grid.n, steps+1) the curve at grid.lr[k] */
} quad_grid;
quad_grid *quad_grid_search(const double *H, const double *w0, int n, optim_kind kind, const optim_config *cfg,
                            const partition *blocks, double lo, double hi, int nlr, double lo_bound,
                            double hi_bound, long steps);
void quad_grid_free(quad_grid *g);

#endif
