/* lr_grid — the learning-rate searches of the experiments (lr_grid.c): each
 * method's searched range, and the grid that extends at its edges. */
#ifndef HARNESS_LR_GRID_H
#define HARNESS_LR_GRID_H

#include "core/core.h"

/* The searched range of each method's learning rate (or factor): the first grid,
 * log-spaced in [lo, hi], which extends at its edges in the same spacing until the
 * best is interior or a bound [lo_bound, hi_bound] stops it (lr_grid below). */
typedef enum {
    LR_GD, LR_BLOCKGD, LR_HEAVY_BALL, LR_BLOCKHB, LR_ADAMW, LR_ADAM_MINI, LR_ADAM, LR_ADAFACTOR, LR_SM3, LR_VSTAT,
    LR_LEAVE_OUT, LR_COORD, LR_RANGE_COUNT
} lr_method;
typedef struct {
    const char *name;
    double lo, hi;             /* the first grid */
    double lo_bound, hi_bound; /* how far it may extend */
    const char *note;
} lr_range;
const lr_range *lr_range_of(lr_method m);

/* The grid that extends at its edges, a small state machine; runs are
 * evaluated by the caller, in batches:
 *
 *     lr_grid g;
 *     lr_grid_init(&g, 1e-3, 1e-1, 5, 1e-6, 1.0);
 *     double lrs[LR_GRID_MAX];
 *     for (int k; (k = lr_grid_next(&g, lrs)) > 0;) {
 *         ... evaluate score(lrs[0..k-1]), in parallel if you like ...
 *         for (int i = 0; i < k; i++) lr_grid_add(&g, lrs[i], score[i]);
 *     }
 *     switch (lr_grid_status(&g)) { ... }   // GRID_INTERIOR: g.lr[lr_grid_best(&g)] is bracketed
 *
 * lr_grid_init plans the first grid but evaluates nothing: it leaves n = 0,
 * and the first lr_grid_next returns the planned points lo·(hi/lo)^(k/(n−1)),
 * k = 0..n−1 (exactly lo and hi at the ends). Planned points not yet added
 * are always returned first, and no extension is proposed before all are in.
 *
 * Scores: lower is better; any non-finite score (NaN, ±inf) means diverged.
 * Best: the lowest finite score, the smallest lr on exact ties.
 * Edges: the best is "at the lower edge" when the smallest-lr point has a
 * finite score equal to the minimum (exact ties count: a plateau reaching the
 * edge is not bracketed), and "at the upper edge" likewise for the largest-lr
 * point. A diverged point is worse than any finite one, so a best whose
 * neighbours above (or below) all diverged is bracketed on that side
 * (interior), and the grid never extends toward divergence.
 * Extension: one point beyond each edge the best is at: lr[0]/step below,
 * lr[n−1]·step above (the same log spacing), only when it stays within
 * [lo_bound, hi_bound] (relative slack 1e-9, so a bound that lies on the
 * lattice is reached) and the grid has room (LR_GRID_MAX points; the lower
 * end gets the last free slot).
 * All diverged: extend downward (smaller lr) only, until the bound or capacity.
 */
#define LR_GRID_MAX 64
typedef struct {
    int n;                       /* points evaluated so far */
    double lr[LR_GRID_MAX];      /* ascending */
    double score[LR_GRID_MAX];   /* lower is better; non-finite = diverged */
    double step;                 /* ratio between neighbours: (hi/lo)^(1/(n−1)) */
    double lo_bound, hi_bound;   /* never propose a point below / above these */
    int extended_lo, extended_hi; /* points added below plan_lo / above plan_hi */
    double plan_lo, plan_hi;     /* the first grid, as given to lr_grid_init */
    int plan_n;
} lr_grid;
/* User error: n < 2 or n > LR_GRID_MAX, bounds or lo, hi non-finite, or not
 * 0 < lo_bound ≤ lo < hi ≤ hi_bound (lo or hi within the relative slack 1e-9
 * beyond a bound is planned at the bound). */
void lr_grid_init(lr_grid *g, double lo, double hi, int n, double lo_bound, double hi_bound);
/* Index of the best point (see above); −1 when no score is finite. */
int lr_grid_best(const lr_grid *g);
/* Writes the learning rates to evaluate next into lrs (room for LR_GRID_MAX)
 * and returns how many: the planned points not yet added if any; else one
 * point beyond each edge the best is at, as the bounds and room allow;
 * 0 when the grid is done. */
int lr_grid_next(const lr_grid *g, double *lrs);
/* Adds an evaluated point, keeping lr ascending. User error: lr non-finite or
 * ≤ 0, lr outside [lo_bound, hi_bound] (same slack), an lr within relative
 * 1e-9 of one already in the grid, or the grid already holding LR_GRID_MAX
 * points. */
void lr_grid_add(lr_grid *g, double lr, double score);
typedef enum {
    GRID_INTERIOR,      /* done; neither end point attains the best score: the minimum is bracketed */
    GRID_EDGE_AT_BOUND, /* done, but the best is at an edge: a bound or LR_GRID_MAX stopped the extension */
    GRID_NONE_FINITE,   /* done, and every point diverged (extended down to the bound or capacity) */
    GRID_UNFINISHED     /* lr_grid_next would still return points */
} grid_status;
grid_status lr_grid_status(const lr_grid *g);
/* "INTERIOR", "EDGE AT BOUND", "NONE FINITE", "UNFINISHED". */
const char *grid_status_name(grid_status s);

#endif
