/* The optimizers: GD, blockwise GD, heavy ball, Adam, AdamW, Adam-mini, Adafactor, SM3 (see
 * optim.h for the update rules), as small tables of init/step behind one interface. */
#include "optim.h"
#include "core/core.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One block of the partition, with what the model's roles say about it. */
typedef struct {
    size_t start, n, stride;
    int per_entry;   /* bias block: Adam-mini keeps one v per entry (plain Adam) */
    int decays;      /* weight decay applies (not norms, not biases) */
    size_t v_at;     /* Adam-mini, Adafactor, SM3: index of this block's first v in o->v */
    int rows, cols;  /* Adafactor, SM3: the tensor's shape (row-major, stride 1); a matrix
                        when both > 1, else the block is one vector of n */
} opt_block;

typedef struct optim_ops optim_ops;

struct optimizer {
    optim_kind kind;
    optim_config cfg;
    const optim_ops *ops;
    size_t P;
    long t;                   /* steps taken */
    int nblocks;
    opt_block *blocks;        /* the partition, or the model's tensors, or one block */
    double *m, *v;            /* first moment (P) and second moments (P, or Adam-mini's) */
    size_t nv;                /* floats in v */
    double *ws_r, *ws_c;      /* Adafactor/SM3 workspaces: one float per row / column of
                                 the largest matrix (allocated once, not state) */
};

struct optim_ops {
    void (*init)(optimizer *o);
    void (*step)(optimizer *o, double *w, const double *g, double lr);
    void (*vhat)(const optimizer *o, double *out); /* NULL: Adam's or Adam-mini's v̂ */
};

static const char *OPTIM_NAMES[OPTIM_COUNT] = {"gd",        "blockgd",        "adam",      "adamw",     "adam-mini",
                                               "adam-leave-out", "adafactor", "sm3", "heavy-ball"};
static const char *VSTAT_NAMES[VSTAT_COUNT] = {"mean", "l2", "l1", "max", "min"};
static const char *SCHED_NAMES[SCHED_COUNT] = {"constant", "cosine", "warmup-cosine"};

const char *optim_name(optim_kind k) { return (k >= 0 && k < OPTIM_COUNT) ? OPTIM_NAMES[k] : "unknown"; }
const char *vstat_name(vstat_kind s) { return (s >= 0 && s < VSTAT_COUNT) ? VSTAT_NAMES[s] : "unknown"; }

/* Index of name in a table of n names, or a user error listing the choices. */
static int parse_name(const char *what, const char *name, const char *const *names, int n)
{
    char choices[256] = "";
    for (int i = 0; i < n; i++) {
        if (strcmp(name, names[i]) == 0) return i;
        size_t len = strlen(choices);
        snprintf(choices + len, sizeof choices - len, "%s%s", i ? ", " : "", names[i]);
    }
    die_user("unknown %s '%s' (expected one of: %s)", what, name, choices);
}

optim_kind optim_parse(const char *name) { return parse_name("optimizer", name, OPTIM_NAMES, OPTIM_COUNT); }
vstat_kind vstat_parse(const char *name) { return parse_name("block statistic", name, VSTAT_NAMES, VSTAT_COUNT); }
schedule_kind schedule_parse(const char *name) { return parse_name("schedule", name, SCHED_NAMES, SCHED_COUNT); }

optim_config optim_defaults(optim_kind kind)
{
    optim_config c = {0.9, 0.999, 1e-8, kind == OPTIM_ADAMW ? 0.1 : 0.0, VSTAT_MEAN, NULL, -0.8, 1.0, 1e-30};
    return c;
}

void optim_check_config(const optim_config *c, double lr)
{
    if (!(lr > 0) || !isfinite(lr)) die_user("learning rate must be > 0 (got %g)", lr);
    if (!(c->beta1 >= 0 && c->beta1 < 1)) die_user("beta1 must be in [0, 1) (got %g)", c->beta1);
    if (!(c->beta2 >= 0 && c->beta2 <= 1))
        die_user("beta2 must be in [0, 1), or exactly 1 for the running-mean limit (got %g)", c->beta2);
    if (!(c->eps >= 0)) die_user("eps must be >= 0 (got %g)", c->eps);
    if (!(c->weight_decay >= 0)) die_user("weight decay must be >= 0 (got %g)", c->weight_decay);
    if (c->vstat < 0 || c->vstat >= VSTAT_COUNT) die_user("unknown block statistic %d", c->vstat);
    if (!(c->decay_rate <= 0) || !isfinite(c->decay_rate))
        die_user("decay rate must be <= 0 and finite (beta2_t = 1 - t^decay_rate; got %g)", c->decay_rate);
    if (!(c->clip_threshold > 0)) die_user("clip threshold must be > 0 (got %g)", c->clip_threshold);
    if (!(c->eps1 >= 0) || !isfinite(c->eps1)) die_user("eps1 must be >= 0 and finite (got %g)", c->eps1);
}

/* ---- shared pieces of the Adam family ------------------------------------------------ */

/* Per-step constants of the Adam family. Bias corrections c1 = 1−β1^t and
 * √c2 = √(1−β2^t); v ← a·v + b·x with (a, b) = (β2, 1−β2), or (1 − 1/t, 1/t)
 * in the β2 = 1 limit, where v is the running mean and c2 = 1. */
typedef struct { double b1, c1, sc2, a, b, eps; } adam_consts;

static adam_consts adam_step_consts(const optimizer *o)
{
    double t = (double)o->t, b2 = o->cfg.beta2;
    adam_consts k = {o->cfg.beta1, 1 - pow(o->cfg.beta1, t), 1, b2, 1 - b2, o->cfg.eps};
    if (b2 == 1) {
        k.a = 1 - 1 / t;
        k.b = 1 / t;
    } else {
        k.sc2 = sqrt(1 - pow(b2, t));
    }
    return k;
}

/* Factor w is multiplied by before the step: decoupled decay 1 − lr·λ where it applies. */
static double keep_factor(const optimizer *o, const opt_block *bl, double lr)
{
    return bl->decays ? 1 - lr * o->cfg.weight_decay : 1;
}

/* ---- GD and blockwise GD ---------------------------------------------------------------- */

static void gd_init(optimizer *o) { (void)o; }

/* GD and blockwise GD: w ← keep·w − lr_b·g (lr_b = lr, or lr·block_lr[b]). */
static void gd_step(optimizer *o, double *w, const double *g, double lr)
{
    for (int b = 0; b < o->nblocks; b++) {
        const opt_block *bl = &o->blocks[b];
        double lr_b = lr * (o->kind == OPTIM_BLOCK_GD && o->cfg.block_lr ? o->cfg.block_lr[b] : 1.0);
        double keep = keep_factor(o, bl, lr);
        for (size_t e = 0; e < bl->n; e++) {
            size_t i = bl->start + e * bl->stride;
            w[i] = keep * w[i] - lr_b * g[i];
        }
    }
}

/* ---- heavy ball: AdamW's momentum without v ---------------------------------------------- */

static void heavy_ball_init(optimizer *o) { o->m = xcalloc(o->P, sizeof(double)); }

/* m ← β1·m + (1−β1)·g;  w ← keep·w − lr·η_b·m/(1−β1^t)  (η_b = block_lr[b] or 1). */
static void heavy_ball_step(optimizer *o, double *w, const double *g, double lr)
{
    const double b1 = o->cfg.beta1, c1 = 1 - pow(b1, (double)o->t);
    for (int b = 0; b < o->nblocks; b++) {
        const opt_block *bl = &o->blocks[b];
        const double scale = lr * (o->cfg.block_lr ? o->cfg.block_lr[b] : 1.0) / c1, keep = keep_factor(o, bl, lr);
        for (size_t e = 0; e < bl->n; e++) {
            size_t i = bl->start + e * bl->stride;
            o->m[i] = b1 * o->m[i] + (1 - b1) * g[i];
            w[i] = keep * w[i] - scale * o->m[i];
        }
    }
}

/* ---- Adam and AdamW (PyTorch semantics) --------------------------------------------------- */

static void adam_init(optimizer *o)
{
    o->m = xcalloc(o->P, sizeof(double));
    o->nv = o->P;
    o->v = xcalloc(o->P, sizeof(double));
}

/* Adam's update on n contiguous coordinates. */
static void adam_run(double *restrict w, double *restrict m, double *restrict v, const double *restrict g,
                     size_t n, const adam_consts *k, double keep, double l2, double step)
{
    const double b1 = k->b1, a = k->a, b = k->b, sc2 = k->sc2, eps = k->eps;
    for (size_t i = 0; i < n; i++) {
        double gi = g[i] + l2 * w[i];
        m[i] = b1 * m[i] + (1 - b1) * gi;
        v[i] = a * v[i] + b * gi * gi;
        w[i] = keep * w[i] - step * m[i] / (sqrt(v[i]) / sc2 + eps);
    }
}

/* One block of Adam's update, per coordinate. Adam (torch.optim.Adam) couples
 * its weight decay into the gradient (g + λw); AdamW decouples it (keep·w). */
static void adam_block(optimizer *o, const opt_block *bl, const adam_consts *k, double *w, const double *g,
                       double *v, size_t vstride, double lr)
{
    double keep = 1, l2 = 0;
    if (o->kind == OPTIM_ADAM) l2 = bl->decays ? o->cfg.weight_decay : 0;
    else keep = keep_factor(o, bl, lr);
    double *m = o->m, step = lr / k->c1;
    if (bl->stride == 1 && vstride == 1) { /* the common case, written so the compiler vectorizes it */
        adam_run(w + bl->start, m + bl->start, v, g + bl->start, bl->n, k, keep, l2, step);
        return;
    }
    for (size_t e = 0; e < bl->n; e++) {
        size_t i = bl->start + e * bl->stride;
        double gi = g[i] + l2 * w[i], *ve = &v[e * vstride];
        m[i] = k->b1 * m[i] + (1 - k->b1) * gi;
        *ve = k->a * *ve + k->b * gi * gi;
        w[i] = keep * w[i] - step * m[i] / (sqrt(*ve) / k->sc2 + k->eps);
    }
}

static void adam_step(optimizer *o, double *w, const double *g, double lr)
{
    adam_consts k = adam_step_consts(o);
    for (int b = 0; b < o->nblocks; b++) {
        const opt_block *bl = &o->blocks[b];
        adam_block(o, bl, &k, w, g, o->v + bl->start, bl->stride, lr);
    }
}

/* ---- Adam-mini (official v1.1.1; paper Algorithm 1) ---------------------------------------- */

static void adam_mini_init(optimizer *o)
{
    o->m = xcalloc(o->P, sizeof(double));
    o->nv = 0;
    for (int b = 0; b < o->nblocks; b++) {
        o->blocks[b].v_at = o->nv;
        o->nv += o->blocks[b].per_entry ? o->blocks[b].n : 1;
    }
    o->v = xcalloc(o->nv, sizeof(double));
}

/* The block statistic of g_b⊙g_b (paper appendix "Ablation"): mean, 2-norm, 1-norm, max, min. */
static double block_stat(vstat_kind s, const opt_block *bl, const double *g)
{
    double acc = s == VSTAT_MIN ? INFINITY : 0;
    for (size_t e = 0; e < bl->n; e++) {
        double g2 = g[bl->start + e * bl->stride];
        g2 *= g2;
        switch (s) {
        case VSTAT_MEAN: case VSTAT_L1: acc += g2; break;
        case VSTAT_L2: acc += g2 * g2; break;
        case VSTAT_MAX: if (g2 > acc) acc = g2; break;
        case VSTAT_MIN: if (g2 < acc) acc = g2; break;
        default: break;
        }
    }
    if (s == VSTAT_MEAN) acc /= (double)bl->n;
    if (s == VSTAT_L2) acc = sqrt(acc);
    return acc;
}

/* Adam-mini's update on n contiguous coordinates of one block: one scale for all. */
static void mini_run(double *restrict w, double *restrict m, const double *restrict g, size_t n, double b1,
                     double keep, double scale)
{
    for (size_t i = 0; i < n; i++) {
        m[i] = b1 * m[i] + (1 - b1) * g[i];
        w[i] = keep * w[i] - scale * m[i];
    }
}

static void adam_mini_step(optimizer *o, double *w, const double *g, double lr)
{
    adam_consts k = adam_step_consts(o);
    double step = lr / k.c1;
    for (int b = 0; b < o->nblocks; b++) {
        const opt_block *bl = &o->blocks[b];
        if (bl->per_entry) { /* bias: plain Adam (AdamW's update), its n v's stored at v_at */
            adam_block(o, bl, &k, w, g, o->v + bl->v_at, 1, lr);
            continue;
        }
        double *vb = o->v + bl->v_at, *m = o->m;
        *vb = k.a * *vb + k.b * block_stat(o->cfg.vstat, bl, g);
        double scale = step / (sqrt(*vb) / k.sc2 + k.eps), keep = keep_factor(o, bl, lr);
        if (bl->stride == 1) {
            mini_run(w + bl->start, m + bl->start, g + bl->start, bl->n, k.b1, keep, scale);
            continue;
        }
        for (size_t e = 0; e < bl->n; e++) {
            size_t i = bl->start + e * bl->stride;
            m[i] = k.b1 * m[i] + (1 - k.b1) * g[i];
            w[i] = keep * w[i] - scale * m[i];
        }
    }
}

/* ---- Adam leave-x-out (paper Fig. 5) ------------------------------------------------------
 * Left-out blocks replace Adam's per-coordinate 1/(√v̂+ε) by one grid-searched
 * learning rate: w ← keep·w − lr·block_lr[b]·m̂ (same β1 momentum, same schedule).
 * Frozen blocks (block_lr[b] < 0) are left out at rate 0: never updated, not even
 * decayed. The other blocks are AdamW. v is kept for all P (unused on left-out blocks). */
static int left_out(const optimizer *o, int b) { return o->cfg.block_lr && o->cfg.block_lr[b] != 0; }

static void leave_out_step(optimizer *o, double *w, const double *g, double lr)
{
    adam_consts k = adam_step_consts(o);
    for (int b = 0; b < o->nblocks; b++) {
        const opt_block *bl = &o->blocks[b];
        if (!left_out(o, b)) {
            adam_block(o, bl, &k, w, g, o->v + bl->start, bl->stride, lr);
            continue;
        }
        if (o->cfg.block_lr[b] < 0) continue; /* frozen */
        double scale = lr * o->cfg.block_lr[b] / k.c1, keep = keep_factor(o, bl, lr);
        for (size_t e = 0; e < bl->n; e++) {
            size_t i = bl->start + e * bl->stride;
            o->m[i] = k.b1 * o->m[i] + (1 - k.b1) * g[i];
            w[i] = keep * w[i] - scale * o->m[i];
        }
    }
}

/* ---- Adafactor and SM3: per-tensor factored second moments ---------------------------- */

static int factored(const opt_block *bl) { return bl->rows > 1 && bl->cols > 1; }

/* State: per matrix its rows then its columns (Adafactor's R, C; SM3's r, c), per
 * vector one float per entry; m only with momentum. Workspaces for the largest
 * matrix, so that a step allocates nothing. */
static void factored_init(optimizer *o)
{
    size_t max_r = 0, max_c = 0;
    o->nv = 0;
    for (int b = 0; b < o->nblocks; b++) {
        opt_block *bl = &o->blocks[b];
        bl->v_at = o->nv;
        if (factored(bl)) {
            o->nv += (size_t)bl->rows + (size_t)bl->cols;
            if ((size_t)bl->rows > max_r) max_r = (size_t)bl->rows;
            if ((size_t)bl->cols > max_c) max_c = (size_t)bl->cols;
        } else {
            o->nv += bl->n;
        }
    }
    o->v = xcalloc(o->nv, sizeof(double));
    o->m = o->cfg.beta1 > 0 ? xcalloc(o->P, sizeof(double)) : NULL;
    o->ws_r = xcalloc(max_r, sizeof(double));
    o->ws_c = xcalloc(max_c, sizeof(double));
}

/* Adafactor: HuggingFace transformers, src/transformers/optimization.py, class
 * Adafactor, step() with scale_parameter = relative_step = warmup_init = False
 * (read at commit 005edacb): in that order
 *   beta2t = 1 − step^decay_rate;  update = grad² + eps[0]
 *   factored: row.mul_(beta2t).add_(update.mean(dim=−1), alpha = 1 − beta2t), col
 *     likewise with mean(dim=−2); update = _approx_sq_grad(row, col) · grad, where
 *     _approx_sq_grad = rsqrt(row / row.mean()) ⊗ rsqrt(col)
 *   else: v.mul_(beta2t).add_(update, alpha = 1 − beta2t); update = rsqrt(v) · grad
 *   update /= max(RMS(update) / clip_threshold, 1);  update *= lr
 *   exp_avg = beta1·exp_avg + (1 − beta1)·update;  update = exp_avg   (beta1 given)
 *   p += −weight_decay·lr · p;  p −= update
 * Ours: the same per tensor, factored only when rows > 1 and cols > 1 (HF factors
 * every 2-D tensor; for an n×1 or 1×n one the factored v̂ equals v in exact
 * arithmetic, so this changes rounding only); w ← (1 − lr·λ)·w − update, skipped
 * decay on norms/biases (HF Trainer's parameter groups do the same); β1 = 0 keeps
 * no m (HF's beta1 = None); u = 0 where g = 0 (HF: 0·rsqrt(0) = NaN when eps[0] = 0,
 * the same 0 otherwise). u is computed twice (for its RMS, then for the update)
 * from the same numbers rather than stored. */
static void adafactor_step(optimizer *o, double *w, const double *g, double lr)
{
    const double b2 = 1 - pow((double)o->t, o->cfg.decay_rate), eps1 = o->cfg.eps1, b1 = o->cfg.beta1;
    for (int b = 0; b < o->nblocks; b++) {
        const opt_block *bl = &o->blocks[b];
        const double *gb = g + bl->start;
        double *wb = w + bl->start, *mb = o->m ? o->m + bl->start : NULL, *acc = o->v + bl->v_at;
        double ss = 0; /* Σ u² over the tensor */
        if (factored(bl)) {
            const int R = bl->rows, C = bl->cols;
            double *row = acc, *col = acc + R, *rf = o->ws_r, *cf = o->ws_c;
            for (int j = 0; j < C; j++) cf[j] = 0; /* column sums of G2 first */
            for (int i = 0; i < R; i++) {
                double s = 0;
                for (int j = 0; j < C; j++) {
                    double x = gb[(size_t)i * C + j];
                    x = x * x + eps1;
                    s += x;
                    cf[j] += x;
                }
                row[i] = b2 * row[i] + (1 - b2) * (s / C);
            }
            double mean_r = 0;
            for (int i = 0; i < R; i++) mean_r += row[i];
            mean_r /= R;
            for (int j = 0; j < C; j++) {
                col[j] = b2 * col[j] + (1 - b2) * (cf[j] / R);
                cf[j] = 1 / sqrt(col[j]);
            }
            for (int i = 0; i < R; i++) rf[i] = 1 / sqrt(row[i] / mean_r);
            for (int i = 0; i < R; i++)
                for (int j = 0; j < C; j++) {
                    double gij = gb[(size_t)i * C + j], u = gij == 0 ? 0 : rf[i] * cf[j] * gij;
                    ss += u * u;
                }
        } else {
            for (size_t k = 0; k < bl->n; k++) {
                double gk = gb[k];
                acc[k] = b2 * acc[k] + (1 - b2) * (gk * gk + eps1);
                double u = gk == 0 ? 0 : gk / sqrt(acc[k]);
                ss += u * u;
            }
        }
        double rms = sqrt(ss) / sqrt((double)bl->n), d = rms / o->cfg.clip_threshold;
        if (d < 1) d = 1; /* a NaN stays NaN, as in torch.clamp */
        const double keep = keep_factor(o, bl, lr);
        const int fac = factored(bl);
        const size_t R = fac ? (size_t)bl->rows : bl->n, C = fac ? (size_t)bl->cols : 1; /* vector: n×1 */
        for (size_t i = 0; i < R; i++)
            for (size_t j = 0; j < C; j++) {
                size_t k = i * C + j;
                double gk = gb[k], u;
                if (gk == 0) u = 0;
                else if (fac) u = o->ws_r[i] * o->ws_c[j] * gk;
                else u = gk / sqrt(acc[k]);
                double x = u / d * lr;
                if (mb) x = mb[k] = b1 * mb[k] + (1 - b1) * x;
                wb[k] = keep * wb[k] - x;
            }
    }
}

/* Adafactor's v̂ = R_i·C_j / mean(R) (matrix) or v (vector): the one its last step used. */
static void adafactor_vhat(const optimizer *o, double *out)
{
    for (int b = 0; b < o->nblocks; b++) {
        const opt_block *bl = &o->blocks[b];
        const double *acc = o->v + bl->v_at;
        double *ob = out + bl->start;
        if (!factored(bl)) {
            memcpy(ob, acc, bl->n * sizeof(double));
            continue;
        }
        const int R = bl->rows, C = bl->cols;
        double mean_r = 0;
        for (int i = 0; i < R; i++) mean_r += acc[i];
        mean_r /= R;
        for (int i = 0; i < R; i++)
            for (int j = 0; j < C; j++) ob[(size_t)i * C + j] = mean_r > 0 ? acc[i] * acc[R + j] / mean_r : 0;
    }
}

/* SM3-II: the authors' TensorFlow code (google-research/google-research, sm3/sm3.py,
 * SM3Optimizer._apply_dense, read at commit 0c1bbe5f), in the structure of its PyTorch
 * port Enealor/PyTorch-SM3 (src/SM3/SM3.py at 66a0ef86, with its default beta = 0:
 * plain sums, no moving average):
 *   ν = min over the covers' accumulators (rows r_i, columns c_j) + g²; vectors
 *       keep one accumulator per entry (ν = acc + g², diagonal AdaGrad)
 *   u = g · rsqrt(ν + 1e-30)
 *   r_i = max_j ν_ij, c_j = max_i ν_ij (both from ν, after u)
 *   momentum: m = μ·m + (1 − μ)·u;  p −= lr·m    (μ = momentum; none when 0)
 * Ours: the same with ε1 for the 1e-30, μ = β1 (0.9 as in the paper; both references
 * default to 0), decoupled decay (1 − lr·λ)·w on matrices but not norms/biases (the
 * references have none; λ = 0 by default), u = 0 where g = 0 (only differs for
 * ε1 = 0, where the references give NaN), u = g / √(ν + ε1) (one rounding instead of
 * rsqrt then multiply). The new column maxima go to a workspace, since every row
 * needs the old c_j. */
static void sm3_step(optimizer *o, double *w, const double *g, double lr)
{
    const double eps1 = o->cfg.eps1, b1 = o->cfg.beta1;
    for (int b = 0; b < o->nblocks; b++) {
        const opt_block *bl = &o->blocks[b];
        const double *gb = g + bl->start;
        double *wb = w + bl->start, *mb = o->m ? o->m + bl->start : NULL, *acc = o->v + bl->v_at;
        const double keep = keep_factor(o, bl, lr);
        if (!factored(bl)) {
            for (size_t k = 0; k < bl->n; k++) {
                double gk = gb[k];
                acc[k] += gk * gk;
                double u = gk == 0 ? 0 : gk / sqrt(acc[k] + eps1);
                if (mb) u = mb[k] = b1 * mb[k] + (1 - b1) * u;
                wb[k] = keep * wb[k] - lr * u;
            }
            continue;
        }
        const int R = bl->rows, C = bl->cols;
        double *row = acc, *col = acc + R, *new_col = o->ws_c;
        for (int j = 0; j < C; j++) new_col[j] = 0; /* every ν >= 0 */
        for (int i = 0; i < R; i++) {
            double row_max = 0;
            for (int j = 0; j < C; j++) {
                size_t k = (size_t)i * C + j;
                double gk = gb[k], nu = (row[i] < col[j] ? row[i] : col[j]) + gk * gk;
                if (nu > row_max) row_max = nu;
                if (nu > new_col[j]) new_col[j] = nu;
                double u = gk == 0 ? 0 : gk / sqrt(nu + eps1);
                if (mb) u = mb[k] = b1 * mb[k] + (1 - b1) * u;
                wb[k] = keep * wb[k] - lr * u;
            }
            row[i] = row_max;
        }
        memcpy(col, new_col, (size_t)C * sizeof(double));
    }
}

/* SM3's accumulated squared gradients: ν (vector), min(r_i, c_j) (matrix). */
static void sm3_vhat(const optimizer *o, double *out)
{
    for (int b = 0; b < o->nblocks; b++) {
        const opt_block *bl = &o->blocks[b];
        const double *acc = o->v + bl->v_at;
        double *ob = out + bl->start;
        if (!factored(bl)) {
            memcpy(ob, acc, bl->n * sizeof(double));
            continue;
        }
        const int R = bl->rows, C = bl->cols;
        for (int i = 0; i < R; i++)
            for (int j = 0; j < C; j++) ob[(size_t)i * C + j] = acc[i] < acc[R + j] ? acc[i] : acc[R + j];
    }
}

static const optim_ops OPS[OPTIM_COUNT] = {
    [OPTIM_GD] = {gd_init, gd_step, NULL},
    [OPTIM_BLOCK_GD] = {gd_init, gd_step, NULL},
    [OPTIM_ADAM] = {adam_init, adam_step, NULL},
    [OPTIM_ADAMW] = {adam_init, adam_step, NULL},
    [OPTIM_ADAM_MINI] = {adam_mini_init, adam_mini_step, NULL},
    [OPTIM_ADAM_LEAVE_OUT] = {adam_init, leave_out_step, NULL},
    [OPTIM_ADAFACTOR] = {factored_init, adafactor_step, adafactor_vhat},
    [OPTIM_SM3] = {factored_init, sm3_step, sm3_vhat},
    [OPTIM_HEAVY_BALL] = {heavy_ball_init, heavy_ball_step, NULL},
};

/* ---- construction ---------------------------------------------------------------------- */

/* The tensor holding parameter i, or NULL. */
static const tensor_info *tensor_at(const model *m, size_t i)
{
    for (int t = 0; m && t < m->ntensors; t++)
        if (i >= m->tensors[t].offset && i < m->tensors[t].offset + tensor_size(&m->tensors[t]))
            return &m->tensors[t];
    return NULL;
}

static int is_bias(const tensor_info *t) { return t && t->role == ROLE_BIAS; }
static int no_decay(const tensor_info *t) { return t && (t->role == ROLE_BIAS || t->role == ROLE_NORM); }

static int per_tensor(optim_kind k) { return k == OPTIM_ADAFACTOR || k == OPTIM_SM3; }

/* The blocks the update runs over: the partition if given (Adafactor and SM3
 * ignore it), else the model's tensors, else one block of all P (for Adafactor and
 * SM3 a P×1 vector). Roles decide decay and Adam-mini's bias blocks. */
static void set_blocks(optimizer *o, const partition *blocks, const model *m)
{
    if (per_tensor(o->kind)) blocks = NULL;
    int n = blocks ? blocks->nblocks : m ? m->ntensors : 1;
    o->nblocks = n;
    o->blocks = xcalloc(n, sizeof(opt_block));
    for (int b = 0; b < n; b++) {
        opt_block *ob = &o->blocks[b];
        if (blocks) *ob = (opt_block){blocks->b[b].start, blocks->b[b].n, blocks->b[b].stride, 0, 0, 0, 0, 0};
        else if (m) *ob = (opt_block){m->tensors[b].offset, tensor_size(&m->tensors[b]), 1, 0, 0, 0,
                                      m->tensors[b].rows, m->tensors[b].cols};
        else *ob = (opt_block){0, o->P, 1, 0, 0, 0, 0, 0}; /* rows = cols = 0: not a matrix */
        const tensor_info *t = tensor_at(m, ob->start);
        ob->per_entry = o->kind == OPTIM_ADAM_MINI && is_bias(t);
        ob->decays = !no_decay(t);
    }
}

optimizer *optim_new(optim_kind kind, const optim_config *cfg, size_t P, const partition *blocks, const model *m)
{
    if (kind < 0 || kind >= OPTIM_COUNT) DIE("unknown optimizer kind %d", kind);
    if ((kind == OPTIM_BLOCK_GD || kind == OPTIM_ADAM_MINI || kind == OPTIM_ADAM_LEAVE_OUT) && !blocks)
        DIE("%s needs a partition", optim_name(kind));
    if (kind == OPTIM_HEAVY_BALL && cfg->block_lr && !blocks) DIE("heavy ball: block_lr needs a partition");
    if (m && m->P != P) DIE("optim_new: P = %zu but the model has %zu", P, m->P);
    if (blocks) partition_check_cover(blocks, P, "optimizer partition");
    optimizer *o = xcalloc(1, sizeof *o);
    o->kind = kind;
    o->cfg = *cfg;
    o->ops = &OPS[kind];
    o->P = P;
    set_blocks(o, blocks, m);
    o->ops->init(o);
    return o;
}

void optim_step(optimizer *o, double *w, const double *g, double lr)
{
    o->t++;
    o->ops->step(o, w, g, lr);
}

size_t optim_state_floats(const optimizer *o)
{
    return (o->m ? o->P : 0) + o->nv;
}

void optim_vhat(const optimizer *o, double *out)
{
    if (!o->v) DIE("optim_vhat: %s keeps no second moment", optim_name(o->kind));
    if (o->ops->vhat) {
        o->ops->vhat(o, out);
        return;
    }
    adam_consts k = adam_step_consts(o);
    double c2 = o->t ? k.sc2 * k.sc2 : 1;
    if (o->kind != OPTIM_ADAM_MINI) {
        for (size_t i = 0; i < o->P; i++) out[i] = o->v[i] / c2;
        return;
    }
    for (int b = 0; b < o->nblocks; b++) {
        const opt_block *bl = &o->blocks[b];
        for (size_t e = 0; e < bl->n; e++)
            out[bl->start + e * bl->stride] = o->v[bl->v_at + (bl->per_entry ? e : 0)] / c2;
    }
}

long optim_steps_taken(const optimizer *o) { return o->t; }

int optim_has_vhat(const optimizer *o) { return o->v != NULL; }

void optim_free(optimizer *o)
{
    if (!o) return;
    free(o->blocks);
    free(o->m);
    free(o->v);
    free(o->ws_r);
    free(o->ws_c);
    free(o);
}

/* ---- schedules --------------------------------------------------------------------------- */

double lr_at(schedule_kind s, double base, long step, long total, long warmup, double final_frac)
{
    if (s == SCHED_CONSTANT) return base;
    if (s == SCHED_WARMUP_COSINE && step < warmup) return base * (double)(step + 1) / (double)warmup;
    long start = s == SCHED_WARMUP_COSINE ? warmup : 0;
    double span = (double)(total - start);
    double progress = span > 0 ? (double)(step - start) / span : 1;
    if (progress > 1) progress = 1;
    double lo = base * final_frac;
    return lo + 0.5 * (base - lo) * (1 + cos(M_PI * progress));
}
