/* The learning-rate searches (lr_grid.h): each method's searched range, and
 * grids that extend at their edges. */
#include "harness/lr_grid.h"
#include "core/core.h"
#include <math.h>
#include <string.h>

/* One table for every experiment, so that a method is searched over the same
 * range wherever it runs. The first grid spans two decades (three for GD, whose
 * best lr moves most between setups) and is extended at its edges; the bounds
 * stop the extension where a value stops making sense:
 *  - Adam family, Adafactor: a peak lr of 1 moves every weight by about 1 per
 *    step (the weights are O(0.1)); 1e-5 moves it by at most 3e-3 in 300 steps.
 *  - SM3 divides by √(Σ g²), which grows like √t, so its lr sits about a decade
 *    above Adam's; its bounds sit a decade higher too.
 *  - GD: 1e-4 barely moves the weights in 300 steps (gradients are O(0.1)); 1e3
 *    is far past divergence at every seed seen.
 *  - Blockwise GD's "lr" is the factor c of its Hessian rule
 *    η_b = c / max(|λ|max(H_bb), median): the quadratic's step limit is c < 2.
 *  - Heavy ball (AdamW's momentum without v, β1 = 0.9): the quadratic's step limit
 *    is 2(1+β1)/(1−β1) = 38 times GD's, so its ranges sit about a decade above GD's.
 *  - The block statistics of the ablation scale v by up to the block size (l1)
 *    or far below mean(v) (min): wide bounds.
 *  - Leave-out: the multiplier of η_t = lr·mult/RMS(g_t at init) (1 = Adam's step
 *    at initialisation). Query and key have almost no gradient at initialisation
 *    (uniform attention), so their centre 1/RMS(g) is huge and their best
 *    multiplier lies decades lower: the lower bound is 1e-6.
 *  - Coordinate search (Exp 2): the factor applied to one group's current rates. */
static const lr_range LR_RANGES[LR_RANGE_COUNT] = {
    [LR_GD] = {"gd", 1e-2, 10, 1e-4, 1e3, "single learning rate"},
    [LR_BLOCKGD] = {"blockgd", 2e-2, 2, 2e-5, 2e2, "factor c of eta_b = c / max(|lambda|max(H_bb), median)"},
    [LR_HEAVY_BALL] = {"heavy-ball", 1, 100, 1e-3, 1e4, "single learning rate, beta1 0.9"},
    [LR_BLOCKHB] = {"blockhb", 0.2, 20, 2e-5, 2e3, "factor c of the Hessian rule, beta1 0.9"},
    [LR_ADAMW] = {"adamw", 1e-3, 1e-1, 1e-5, 1, "peak learning rate"},
    [LR_ADAM_MINI] = {"adam-mini", 1e-3, 1e-1, 1e-5, 1, "peak learning rate"},
    [LR_ADAM] = {"adam", 1e-3, 1e-1, 1e-5, 1, "peak learning rate"},
    [LR_ADAFACTOR] = {"adafactor", 1e-3, 1e-1, 1e-5, 1, "peak learning rate (relative_step off)"},
    [LR_SM3] = {"sm3", 1e-2, 1, 1e-4, 10, "peak learning rate"},
    [LR_VSTAT] = {"adam-mini-vstat", 1e-3, 1e-1, 1e-6, 10, "peak learning rate of each block statistic (ablation)"},
    [LR_LEAVE_OUT] = {"leave-out", 0.1, 10, 1e-6, 1e3, "multiplier of a left-out tensor's eta_t = lr*mult/RMS(g_t)"},
    [LR_COORD] = {"coordinate", 0.25, 4, 1.0 / 64, 64, "factor on one group's current rates (Exp 2 search)"},
};

const lr_range *lr_range_of(lr_method m)
{
    if (m < 0 || m >= LR_RANGE_COUNT) DIE("no learning-rate range %d", m);
    return &LR_RANGES[m];
}

#define LR_REL_SLACK 1e-9

static double plan_point(const lr_grid *g, int k)
{
    if (k == 0) return g->plan_lo;
    if (k == g->plan_n - 1) return g->plan_hi;
    return g->plan_lo * pow(g->plan_hi / g->plan_lo, (double)k / (g->plan_n - 1));
}

static int same_lr(double a, double b) { return fabs(a - b) <= LR_REL_SLACK * fmax(fabs(a), fabs(b)); }

static int has_lr(const lr_grid *g, double lr)
{
    for (int i = 0; i < g->n; i++)
        if (same_lr(g->lr[i], lr)) return 1;
    return 0;
}

void lr_grid_init(lr_grid *g, double lo, double hi, int n, double lo_bound, double hi_bound)
{
    if (n < 2 || n > LR_GRID_MAX) die_user("lr_grid_init: need 2..%d points, got %d", LR_GRID_MAX, n);
    if (!(isfinite(lo) && isfinite(hi) && isfinite(lo_bound) && isfinite(hi_bound)))
        die_user("lr_grid_init: lo, hi and the bounds must be finite");
    /* within the slack of a bound is the bound: a lattice point computed as x·step can land a rounding
     * error beyond it (10^2.5 · 10^0.5 = 1000.0000000000003), as the extensions below allow and clamp */
    if (lo < lo_bound && lo >= lo_bound * (1 - LR_REL_SLACK)) lo = lo_bound;
    if (hi > hi_bound && hi <= hi_bound * (1 + LR_REL_SLACK)) hi = hi_bound;
    if (!(0 < lo_bound && lo_bound <= lo && lo < hi && hi <= hi_bound))
        die_user("lr_grid_init: need 0 < lo_bound <= lo < hi <= hi_bound, got %g, %g, %g, %g", lo_bound, lo, hi,
                 hi_bound);
    memset(g, 0, sizeof *g);
    g->step = pow(hi / lo, 1.0 / (n - 1));
    g->lo_bound = lo_bound;
    g->hi_bound = hi_bound;
    g->plan_lo = lo;
    g->plan_hi = hi;
    g->plan_n = n;
}

int lr_grid_best(const lr_grid *g)
{
    int b = -1;
    for (int i = 0; i < g->n; i++)
        if (isfinite(g->score[i]) && (b < 0 || g->score[i] < g->score[b])) b = i;
    return b;
}

/* Which ends the best is at (see lr_grid.h); all diverged counts as the lower end. */
static void best_at_edges(const lr_grid *g, int *at_lo, int *at_hi)
{
    int b = lr_grid_best(g);
    if (b < 0) {
        *at_lo = g->n > 0;
        *at_hi = 0;
        return;
    }
    *at_lo = g->score[0] == g->score[b];
    *at_hi = g->score[g->n - 1] == g->score[b];
}

/* The extension points, written to lrs; returns how many. */
static int extensions(const lr_grid *g, double *lrs)
{
    int at_lo, at_hi, k = 0, room = LR_GRID_MAX - g->n;
    best_at_edges(g, &at_lo, &at_hi);
    if (at_lo && room > 0) {
        double x = g->lr[0] / g->step;
        if (x >= g->lo_bound * (1 - LR_REL_SLACK)) {
            lrs[k++] = fmax(x, g->lo_bound);
            room--;
        }
    }
    if (at_hi && room > 0) {
        double x = g->lr[g->n - 1] * g->step;
        if (x <= g->hi_bound * (1 + LR_REL_SLACK)) lrs[k++] = fmin(x, g->hi_bound);
    }
    return k;
}

int lr_grid_next(const lr_grid *g, double *lrs)
{
    if (g->plan_n < 2) DIE("lr_grid_next: grid not initialised");
    int k = 0;
    for (int i = 0; i < g->plan_n; i++) {
        double p = plan_point(g, i);
        if (!has_lr(g, p)) lrs[k++] = p;
    }
    if (k > 0) return k;
    return extensions(g, lrs);
}

void lr_grid_add(lr_grid *g, double lr, double score)
{
    if (g->plan_n < 2) DIE("lr_grid_add: grid not initialised");
    if (!(isfinite(lr) && lr > 0)) die_user("lr_grid_add: learning rate must be finite and > 0, got %g", lr);
    if (lr < g->lo_bound * (1 - LR_REL_SLACK) || lr > g->hi_bound * (1 + LR_REL_SLACK))
        die_user("lr_grid_add: learning rate %g outside the bounds [%g, %g]", lr, g->lo_bound, g->hi_bound);
    if (has_lr(g, lr)) die_user("lr_grid_add: learning rate %g is already in the grid", lr);
    if (g->n >= LR_GRID_MAX) die_user("lr_grid_add: grid full (%d points)", LR_GRID_MAX);
    int i = g->n;
    while (i > 0 && g->lr[i - 1] > lr) {
        g->lr[i] = g->lr[i - 1];
        g->score[i] = g->score[i - 1];
        i--;
    }
    g->lr[i] = lr;
    g->score[i] = score;
    g->n++;
    if (lr < g->plan_lo * (1 - LR_REL_SLACK)) g->extended_lo++;
    if (lr > g->plan_hi * (1 + LR_REL_SLACK)) g->extended_hi++;
}

grid_status lr_grid_status(const lr_grid *g)
{
    double buf[LR_GRID_MAX];
    if (lr_grid_next(g, buf) > 0) return GRID_UNFINISHED;
    if (lr_grid_best(g) < 0) return GRID_NONE_FINITE;
    int at_lo, at_hi;
    best_at_edges(g, &at_lo, &at_hi);
    return at_lo || at_hi ? GRID_EDGE_AT_BOUND : GRID_INTERIOR;
}

const char *grid_status_name(grid_status s)
{
    switch (s) {
    case GRID_INTERIOR: return "INTERIOR";
    case GRID_EDGE_AT_BOUND: return "EDGE AT BOUND";
    case GRID_NONE_FINITE: return "NONE FINITE";
    case GRID_UNFINISHED: return "UNFINISHED";
    }
    DIE("bad grid_status %d", (int)s);
}

