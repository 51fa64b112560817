/* The shared optimizers (optim/) on f(w) = ½ wᵀHw, g = Hw: loss traces, the
 * optimal constant steps 2/(L+μ), and a learning-rate grid search. */
#include "quad.h"
#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

double quad_loss(const double *H, const double *w, int n)
{
    double f = 0;
    for (int i = 0; i < n; i++) {
        double hw = cblas_ddot(n, H + (size_t)i * n, 1, w, 1);
        f += w[i] * hw;
    }
    return 0.5 * f;
}

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

double quad_optimal_lr(const double *H, int n)
{
    spectrum s = sym_spectrum(n, H);
    if (!(s.lmin > 0)) die_user("quadratic is not positive definite (smallest eigenvalue %g)", s.lmin);
    return 2 / (s.lmax + s.lmin);
}

void quad_block_optimal_lr(double *lr, const double *H, int n, const partition *blocks)
{
    double *Hb = xmalloc(partition_max_block(blocks) * partition_max_block(blocks) * sizeof(double));
    for (int b = 0; b < blocks->nblocks; b++) {
        const block *bl = &blocks->b[b];
        size_t m = bl->n;
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < m; j++)
                Hb[i * m + j] = H[(bl->start + i * bl->stride) * n + bl->start + j * bl->stride];
        lr[b] = quad_optimal_lr(Hb, (int)m);
    }
    free(Hb);
}

partition *quad_partition(const int *sizes, int nb, int n)
{
    partition *p = partition_new();
    char name[32];
    if (!sizes) {
        for (int i = 0; i < n; i++) {
            snprintf(name, sizeof name, "w[%d]", i);
            partition_add(p, (size_t)i, 1, 1, -1, name);
        }
    } else {
        size_t off = 0;
        for (int b = 0; b < nb; b++) {
            snprintf(name, sizeof name, "H%d", b + 1);
            partition_add(p, off, (size_t)sizes[b], 1, -1, name);
            off += (size_t)sizes[b];
        }
    }
    partition_check_cover(p, (size_t)n, "quadratic partition");
    return p;
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
