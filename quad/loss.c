/* f(w) = ½ wᵀHw, the optimal constant steps 2/(L+μ) of H and of its diagonal
 * blocks, the partitions of a block quadratic, and the mean log10 loss that
 * Fig. 3's claims compare runs by. */
#include "quad.h"
#include <cblas.h>
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

double quad_mean_log_loss(const double *loss, long steps)
{
    if (!(isfinite(loss[0]) && loss[0] > 0)) return NAN;
    double sum = 0;
    for (long t = 0; t <= steps; t++) {
        if (!isfinite(loss[t])) return NAN;
        sum += log10(fmax(loss[t] / loss[0], QUAD_LOSS_FLOOR));
    }
    return sum / (double)(steps + 1);
}

double quad_log_gap(const double *a, const double *b, long steps)
{
    return quad_mean_log_loss(a, steps) - quad_mean_log_loss(b, steps);
}
