/* SLQ, Lanczos extremes and Hutchinson over the ranks of core/dist.h
 * (spectra.h, last section): rank r computes the batches r, r + N, ..., then
 * ranks 1..N−1 send their arrays to rank 0, which copies the rows they computed
 * (a run that was computed has at least one step; a Hutchinson sample is not NAN). */
#include "core/dist.h"
#include "hessian/spectra.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One message of several arrays: their bytes back to back. */
static void send_parts(int nparts, const void *const *part, const size_t *bytes)
{
    size_t total = 0;
    for (int i = 0; i < nparts; i++) total += bytes[i];
    char *buf = xmalloc(total ? total : 1), *p = buf;
    for (int i = 0; i < nparts; i++) {
        memcpy(p, part[i], bytes[i]);
        p += bytes[i];
    }
    dist_send(buf, total, 0);
    free(buf);
}

static char *recv_parts(int from, size_t expected)
{
    size_t got;
    char *buf = dist_recv(from, &got);
    if (got != expected) DIE("rank %d sent %zu bytes, expected %zu", from, got, expected);
    return buf;
}

void slq_run_dist(slq_data *d, const spectra_op *A, const slq_opts *o)
{
    int rank = dist_rank(), size = dist_size();
    slq_run_batches(d, A, o, rank, size);
    if (size == 1) return;
    size_t runs = (size_t)d->nops * d->probes, row = (size_t)d->steps * sizeof(double);
    size_t bytes[3] = {runs * sizeof(int), runs * row, runs * row};
    if (rank > 0) {
        const void *part[3] = {d->count, d->alpha, d->beta};
        send_parts(3, part, bytes);
        return;
    }
    for (int from = 1; from < size; from++) {
        char *buf = recv_parts(from, bytes[0] + bytes[1] + bytes[2]);
        const int *count = (const int *)buf;
        const char *alpha = buf + bytes[0], *beta = alpha + bytes[1];
        for (size_t r = 0; r < runs; r++)
            if (count[r] > 0) {
                d->count[r] = count[r];
                memcpy(d->alpha + r * d->steps, alpha + r * row, row);
                memcpy(d->beta + r * d->steps, beta + r * row, row);
            }
        free(buf);
    }
}

void extremes_run_dist(extremes_data *e, const spectra_op *A, int mmax, double tol, const slq_opts *o, double *vectors,
                       const size_t *vec_off)
{
    int rank = dist_rank(), size = dist_size();
    extremes_run_batches(e, A, mmax, tol, o, vectors, vec_off, rank, size);
    if (size == 1) return;
    size_t nops = (size_t)e->nops, w = 2 * (size_t)e->nev;
    size_t nvec = 0;
    if (vectors)
        for (size_t b = 0; b < nops; b++) nvec = nvec > vec_off[b] + w * A->dim[b] ? nvec : vec_off[b] + w * A->dim[b];
    size_t bytes[5] = {nops * sizeof(int), nops * sizeof(int), nops * w * sizeof(double), nops * w * sizeof(double),
                       nvec * sizeof(double)};
    if (rank > 0) {
        const void *part[5] = {e->steps, e->converged, e->theta, e->resid, vectors};
        send_parts(5, part, bytes);
        return;
    }
    for (int from = 1; from < size; from++) {
        char *buf = recv_parts(from, bytes[0] + bytes[1] + bytes[2] + bytes[3] + bytes[4]);
        const int *steps = (const int *)buf, *conv = (const int *)(buf + bytes[0]);
        const double *theta = (const double *)(buf + bytes[0] + bytes[1]);
        const double *resid = (const double *)(buf + bytes[0] + bytes[1] + bytes[2]);
        const double *vec = (const double *)(buf + bytes[0] + bytes[1] + bytes[2] + bytes[3]);
        for (size_t b = 0; b < nops; b++)
            if (steps[b] > 0) {
                e->steps[b] = steps[b];
                e->converged[b] = conv[b];
                memcpy(e->theta + b * w, theta + b * w, w * sizeof(double));
                memcpy(e->resid + b * w, resid + b * w, w * sizeof(double));
                if (vectors) memcpy(vectors + vec_off[b], vec + vec_off[b], w * A->dim[b] * sizeof(double));
            }
        free(buf);
    }
}

void hutchinson_dist(const spectra_op *A, int probes, uint64_t seed, double *samples, double *trace, double *se)
{
    int rank = dist_rank(), size = dist_size();
    size_t n = (size_t)A->nops * probes;
    double *all = samples ? samples : xmalloc((n ? n : 1) * sizeof(double));
    for (size_t i = 0; i < n; i++) all[i] = NAN;
    hutchinson_samples(A, probes, seed, all, rank, size);
    if (size > 1) {
        size_t bytes = n * sizeof(double);
        if (rank > 0) {
            const void *part[1] = {all};
            send_parts(1, part, &bytes);
        } else {
            for (int from = 1; from < size; from++) {
                double *x = (double *)recv_parts(from, bytes);
                for (size_t i = 0; i < n; i++)
                    if (!isnan(x[i])) all[i] = x[i];
                free(x);
            }
        }
    }
    if (rank == 0)
        for (int b = 0; b < A->nops; b++) mean_se(all + (size_t)b * probes, probes, &trace[b], &se[b]);
    if (!samples) free(all);
}
