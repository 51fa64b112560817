/* The streamed block analysis over ranks (hdist.h): shares, pack, merge in rank order. */
#include "hdist.h"
#include "core/dist.h"
#include <stdlib.h>

void hstream_reduce(hstream *s)
{
    int rank = dist_rank(), size = dist_size();
    if (size == 1) return;
    if (rank > 0) {
        size_t n;
        void *buf = hstream_pack(s, &n);
        dist_send(buf, n, 0);
        free(buf);
        return;
    }
    /* rank order: the merged chains are those of one stream fed in row order */
    for (int r = 1; r < size; r++) {
        size_t n;
        void *buf = dist_recv(r, &n);
        hstream_merge_packed(s, buf, n);
        free(buf);
    }
}

/* Every N-th panel (rank r: panels r, r + N, ...): the Transformer's columns
 * differ in cost by up to 2x between tensors, so contiguous shares leave the
 * last rank the slowest (57/43 on the 2-layer model); interleaved panels
 * balance them, and the merged result is the same bitwise (stream.h). */
void hstream_run_dist(hstream *s, model *m, const hessian_opts *o)
{
    hessian_opts ho = o ? *o : hessian_defaults();
    size_t pw = (size_t)(ho.panel > 0 ? ho.panel : 128);
    hstream_run_strided(s, m, (size_t)dist_rank() * pw, (size_t)dist_size() * pw, &ho);
    hstream_reduce(s);
}

double *exact_block_eigs(model *m, const partition *p, const hessian_opts *o, size_t *off)
{
    hstream_opts so = {p, 1, 0, POOL_MAX};
    hstream *s = hstream_new(m, &so);
    hstream_run_dist(s, m, o);
    off[0] = 0;
    for (int b = 0; b < p->nblocks; b++) off[b + 1] = off[b] + p->b[b].n;
    double *eig = NULL;
    if (dist_rank() == 0) {
        eig = xmalloc((off[p->nblocks] ? off[p->nblocks] : 1) * sizeof(double));
        for (int b = 0; b < p->nblocks; b++) sym_eigvals((int)p->b[b].n, hstream_block(s, b), eig + off[b]);
    }
    hstream_free(s);
    return eig;
}
