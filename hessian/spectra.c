/* Lanczos, Hutchinson and stochastic Lanczos quadrature on families of
 * symmetric operators (spectra.h), and the block-restricted Hessian-vector
 * products that make a model's diagonal blocks H_bb such a family. */
#include "hessian/spectra.h"
#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void spectra_op_free(spectra_op *A)
{
    if (A) A->destroy(A);
}

/* ---- dense matrices ------------------------------------------------------------------------ */

typedef struct {
    const double *const *mats;
    size_t *dim;
} dense_ctx;

static void dense_apply(const spectra_op *A, int k, const int *op, const double *const *X, double *const *Y)
{
    const dense_ctx *c = A->ctx;
    for (int j = 0; j < k; j++) {
        int n = (int)c->dim[op[j]];
        cblas_dgemv(CblasRowMajor, CblasNoTrans, n, n, 1.0, c->mats[op[j]], n, X[j], 1, 0.0, Y[j], 1);
    }
}

static void dense_destroy(spectra_op *A)
{
    dense_ctx *c = A->ctx;
    free(c->dim);
    free(c);
    free(A);
}

spectra_op *spectra_op_dense(int nops, const double *const *mats, const size_t *dim)
{
    dense_ctx *c = xcalloc(1, sizeof *c);
    c->mats = mats;
    c->dim = xmalloc((size_t)nops * sizeof(size_t));
    memcpy(c->dim, dim, (size_t)nops * sizeof(size_t));
    spectra_op *A = xcalloc(1, sizeof *A);
    *A = (spectra_op){nops, c->dim, 64, dense_apply, dense_destroy, c};
    return A;
}

/* ---- a model's diagonal blocks ------------------------------------------------------------- */

/* The tensor holding parameter index i. */
static int tensor_at(const model *m, size_t i)
{
    int lo = 0, hi = m->ntensors - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (m->tensors[mid].offset <= i) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

void block_hvp(model *m, int k, const block *const *b, const double *const *X, double *const *Y, double *V, double *HV)
{
    size_t P = m->P;
    for (int j = 0; j < k; j++) {
        double *v = V + (size_t)j * P + b[j]->start;
        for (size_t e = 0; e < b[j]->n; e++) v[e * b[j]->stride] = X[j][e];
    }
    if (m->hvp_tensors) { /* direction j lives on its block's tensors, and only their rows are read */
        int *t = xmalloc(2 * (size_t)k * sizeof(int));
        for (int j = 0; j < k; j++) {
            t[j] = tensor_at(m, b[j]->start);
            t[k + j] = tensor_at(m, b[j]->start + (b[j]->n - 1) * b[j]->stride);
        }
        m->hvp_tensors(m, V, HV, k, t, t + k);
        free(t);
    } else {
        m->hvp(m, V, HV, k);
    }
    for (int j = 0; j < k; j++) {
        const double *hv = HV + (size_t)j * P + b[j]->start;
        double *v = V + (size_t)j * P + b[j]->start;
        for (size_t e = 0; e < b[j]->n; e++) {
            Y[j][e] = hv[e * b[j]->stride];
            v[e * b[j]->stride] = 0;
        }
    }
}

typedef struct {
    model *m;
    const partition *p;
    size_t *dim;
    double *V, *HV;
    const block **bl;
} blocks_ctx;

static void blocks_apply(const spectra_op *A, int k, const int *op, const double *const *X, double *const *Y)
{
    blocks_ctx *c = A->ctx;
    if (k > A->panel) DIE("apply of %d vectors on a panel of %d", k, A->panel);
    for (int j = 0; j < k; j++) c->bl[j] = &c->p->b[op[j]];
    block_hvp(c->m, k, c->bl, X, Y, c->V, c->HV);
}

static void blocks_destroy(spectra_op *A)
{
    blocks_ctx *c = A->ctx;
    free(c->dim);
    free(c->V);
    free(c->HV);
    free(c->bl);
    free(c);
    free(A);
}

double spectra_op_blocks_bytes(size_t P, int panel) { return 2.0 * (double)P * panel * sizeof(double); }

spectra_op *spectra_op_blocks(model *m, const partition *p, int panel)
{
    if (panel < 1) DIE("panel %d", panel);
    for (int b = 0; b < p->nblocks; b++) {
        const block *bl = &p->b[b];
        if (bl->n < 1 || bl->stride < 1 || bl->start + (bl->n - 1) * bl->stride >= m->P)
            die_user("block %s (start %zu, %zu entries, stride %zu) lies outside the model's %zu parameters", bl->name,
                     bl->start, bl->n, bl->stride, m->P);
    }
    memory_check("block-restricted HVP panels", spectra_op_blocks_bytes(m->P, panel));
    blocks_ctx *c = xcalloc(1, sizeof *c);
    c->m = m;
    c->p = p;
    c->dim = xmalloc(((size_t)p->nblocks + 1) * sizeof(size_t));
    for (int b = 0; b < p->nblocks; b++) c->dim[b] = p->b[b].n;
    size_t count = checked_mul(m->P, (size_t)panel, "HVP panel");
    c->V = xcalloc(count, sizeof(double));
    c->HV = xmalloc(count * sizeof(double));
    c->bl = xmalloc((size_t)panel * sizeof(block *));
    spectra_op *A = xcalloc(1, sizeof *A);
    *A = (spectra_op){p->nblocks, c->dim, panel, blocks_apply, blocks_destroy, c};
    return A;
}

int name_matches(const char *pattern, const char *name)
{
    const char *star = NULL, *resume = NULL;
    while (*name) {
        if (*pattern == '*') {
            star = pattern++;
            resume = name;
        } else if (*pattern == '?' || *pattern == *name) {
            pattern++, name++;
        } else if (star) { /* let the last star take one more character */
            pattern = star + 1;
            name = ++resume;
        } else {
            return 0;
        }
    }
    while (*pattern == '*') pattern++;
    return *pattern == '\0';
}

partition *partition_match(const partition *p, const char *patterns, int **idx)
{
    char *list = xmalloc(strlen(patterns) + 1), *save = NULL;
    strcpy(list, patterns);
    int *hit = xcalloc((size_t)p->nblocks + 1, sizeof(int));
    for (char *pat = strtok_r(list, ",", &save); pat; pat = strtok_r(NULL, ",", &save)) {
        int any = 0;
        for (int b = 0; b < p->nblocks; b++)
            if (name_matches(pat, p->b[b].name)) hit[b] = any = 1;
        if (!any) {
            char msg[160];
            snprintf(msg, sizeof msg, "%.100s", pat);
            free(list), free(hit);
            die_user("block pattern '%s' matches no block (names as the partition gives them, e.g. '%s')", msg,
                     p->nblocks ? p->b[0].name : "none");
        }
    }
    free(list);
    partition *s = partition_new();
    int *ix = xmalloc(((size_t)p->nblocks + 1) * sizeof(int)), n = 0;
    for (int b = 0; b < p->nblocks; b++)
        if (hit[b]) {
            partition_add(s, p->b[b].start, p->b[b].n, p->b[b].stride, p->b[b].tensor, p->b[b].name);
            ix[n++] = b;
        }
    if (n == 0) die_user("block patterns '%s' match no block", patterns); /* only separators given */
    free(hit);
    *idx = ix;
    return s;
}

/* ---- Lanczos --------------------------------------------------------------------------------- */

double lanczos_bytes(size_t n, int mmax)
{
    if ((size_t)mmax > n) mmax = (int)n;
    return ((double)mmax + 1) * n * sizeof(double) + 2.0 * mmax * sizeof(double);
}

lanczos *lanczos_new(size_t n, int mmax, const double *v0, int nev, double tol)
{
    if (n < 1 || mmax < 1) DIE("Lanczos of dimension %zu, %d steps", n, mmax);
    lanczos *L = xcalloc(1, sizeof *L);
    L->n = n;
    L->mmax = (size_t)mmax > n ? (int)n : mmax;
    L->nev = nev;
    L->tol = tol;
    L->check_every = 4;
    L->Q = xmalloc(checked_mul(checked_mul((size_t)L->mmax + 1, n, "Lanczos basis"), sizeof(double), "Lanczos basis"));
    L->alpha = xcalloc((size_t)L->mmax, sizeof(double));
    L->beta = xcalloc((size_t)L->mmax, sizeof(double));
    double nrm = cblas_dnrm2((int)n, v0, 1);
    if (!(nrm > 0) || !isfinite(nrm)) die_user("Lanczos start vector has norm %g", nrm);
    for (size_t i = 0; i < n; i++) L->Q[i] = v0[i] / nrm;
    return L;
}

void lanczos_free(lanczos *L)
{
    if (!L) return;
    free(L->Q);
    free(L->alpha);
    free(L->beta);
    free(L);
}

const double *lanczos_vector(const lanczos *L) { return L->done ? NULL : L->Q + (size_t)L->steps * L->n; }

double *lanczos_product_slot(lanczos *L) { return L->Q + ((size_t)L->steps + 1) * L->n; }

/* The nev largest and nev smallest Ritz pairs of T_steps have residual
 * β_m |z_{m,k}| ≤ tol · max|θ|. */
static int ritz_converged(const lanczos *L)
{
    int m = L->steps;
    double *theta = xmalloc((size_t)m * sizeof(double)), *Z = xmalloc((size_t)m * m * sizeof(double));
    tridiag_eig(m, L->alpha, L->beta, theta, Z);
    double big = fmax(fabs(theta[0]), fabs(theta[m - 1])), bm = L->beta[m - 1];
    int ok = 1;
    for (int k = 0; k < m && ok; k++)
        if (k < L->nev || k >= m - L->nev) ok = bm * fabs(Z[(size_t)(m - 1) * m + k]) <= L->tol * big;
    free(theta);
    free(Z);
    return ok;
}

void lanczos_feed(lanczos *L, const double *Aq)
{
    if (L->done) DIE("Lanczos step after the end");
    size_t n = L->n;
    int j = L->steps, nn = (int)n;
    const double *q = L->Q + (size_t)j * n;
    double *w = L->Q + ((size_t)j + 1) * n;
    if (Aq != w) memcpy(w, Aq, n * sizeof(double));
    if (j > 0) cblas_daxpy(nn, -L->beta[j - 1], L->Q + ((size_t)j - 1) * n, 1, w, 1);
    double a = cblas_ddot(nn, q, 1, w, 1);
    cblas_daxpy(nn, -a, q, 1, w, 1);
    /* full reorthogonalisation: classical Gram–Schmidt against q_1..q_{j+1}, twice */
    double h[2048], *hp = j + 1 <= 2048 ? h : xmalloc(((size_t)j + 1) * sizeof(double));
    for (int pass = 0; pass < 2; pass++) {
        cblas_dgemv(CblasRowMajor, CblasNoTrans, j + 1, nn, 1.0, L->Q, nn, w, 1, 0.0, hp, 1);
        cblas_dgemv(CblasRowMajor, CblasTrans, j + 1, nn, -1.0, L->Q, nn, hp, 1, 1.0, w, 1);
    }
    if (hp != h) free(hp);
    double b = cblas_dnrm2(nn, w, 1);
    L->alpha[j] = a;
    L->beta[j] = b;
    L->steps = j + 1;
    double est = fabs(a) + b + (j > 0 ? L->beta[j - 1] : 0);
    if (est > L->norm) L->norm = est;
    if (!isfinite(a) || !isfinite(b)) DIE("Lanczos: non-finite product (alpha %g, beta %g)", a, b);
    if (b <= 64 * 2.220446049250313e-16 * L->norm) {
        L->invariant = L->converged = L->done = 1;
        return;
    }
    cblas_dscal(nn, 1 / b, w, 1);
    if (L->nev > 0 && (L->steps < 32 || L->steps % L->check_every == 0) && ritz_converged(L)) L->converged = L->done = 1;
    if (L->steps == L->mmax) L->done = 1;
}

void tridiag_eig(int m, const double *alpha, const double *beta, double *theta, double *Z)
{
    if (m < 1) DIE("tridiagonal of size %d", m);
    double *e = xmalloc((size_t)m * sizeof(double));
    memcpy(theta, alpha, (size_t)m * sizeof(double));
    if (m > 1) memcpy(e, beta, ((size_t)m - 1) * sizeof(double));
    int info = Z ? LAPACKE_dstev(LAPACK_ROW_MAJOR, 'V', m, theta, e, Z, m)
                 : LAPACKE_dstev(LAPACK_COL_MAJOR, 'N', m, theta, e, NULL, 1);
    free(e);
    if (info != 0) DIE("LAPACKE_dstev failed (info %d)", info);
}

void gauss_quadrature(int m, const double *alpha, const double *beta, double *nodes, double *weights)
{
    double *Z = xmalloc((size_t)m * m * sizeof(double));
    tridiag_eig(m, alpha, beta, nodes, Z);
    for (int k = 0; k < m; k++) weights[k] = Z[k] * Z[k];   /* first row of Z: first components */
    free(Z);
}

void lanczos_ritz(const lanczos *L, double *theta, double *resid, double *vectors)
{
    int m = L->steps;
    if (m < 1) DIE("Ritz values before the first Lanczos step");
    double *Z = xmalloc((size_t)m * m * sizeof(double));
    tridiag_eig(m, L->alpha, L->beta, theta, Z);
    double bm = L->beta[m - 1];
    for (int k = 0; k < m; k++) resid[k] = bm * fabs(Z[(size_t)(m - 1) * m + k]);
    if (vectors) {
        /* Y = Zᵀ Q_m: row k = Σ_i Z[i][k] q_i */
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, (int)L->n, m, 1.0, Z, m, L->Q, (int)L->n, 0.0, vectors,
                    (int)L->n);
    }
    free(Z);
}

void lanczos_run(const spectra_op *A, int nrun, lanczos *const *L, const int *op)
{
    int panel = A->panel;
    const double **X = xmalloc((size_t)panel * sizeof(double *));
    double **Y = xmalloc((size_t)panel * sizeof(double *));
    int *ops = xmalloc((size_t)panel * sizeof(int)), *who = xmalloc((size_t)panel * sizeof(int));
    for (;;) {
        int any = 0, k = 0;
        for (int i = 0; i <= nrun; i++) {
            if (i < nrun && !L[i]->done) {
                if (L[i]->n != A->dim[op[i]]) DIE("Lanczos of dimension %zu on an operator of %zu", L[i]->n, A->dim[op[i]]);
                X[k] = lanczos_vector(L[i]);
                Y[k] = lanczos_product_slot(L[i]);
                ops[k] = op[i];
                who[k++] = i;
                any = 1;
            }
            if (k == panel || (i == nrun && k > 0)) {
                A->apply(A, k, ops, X, Y);
                for (int j = 0; j < k; j++) lanczos_feed(L[who[j]], Y[j]);
                k = 0;
            }
        }
        if (!any) break;
    }
    free(X), free(Y), free(ops), free(who);
}

int lanczos_batches(int nrun, const size_t *dim, int mmax, int panel, double basis_bytes, int **start)
{
    int *s = xmalloc(((size_t)nrun + 1) * sizeof(int)), nb = 0, count = 0;
    double bytes = 0;
    for (int r = 0; r < nrun; r++) {
        double br = lanczos_bytes(dim[r], mmax);
        if (count == 0 || count == panel || bytes + br > basis_bytes) {
            s[nb++] = r;
            count = 0;
            bytes = 0;
        }
        count++;
        bytes += br;
    }
    s[nb] = nrun;
    *start = s;
    return nb;
}

/* ---- probes ----------------------------------------------------------------------------------- */

void rademacher(double *z, size_t n, uint64_t seed)
{
    uint64_t s = seed, bits = 0;
    for (size_t i = 0; i < n; i++) {
        if (i % 64 == 0) bits = splitmix64(&s);
        z[i] = (bits >> (i % 64)) & 1 ? 1.0 : -1.0;
    }
}

void gaussian_probe(double *z, size_t n, uint64_t seed)
{
    uint64_t s = seed;
    for (size_t i = 0; i < n; i += 2) {
        /* Box–Muller from two uniforms in (0, 1] of 53 bits */
        double u1 = ((splitmix64(&s) >> 11) + 1) * 0x1p-53, u2 = (splitmix64(&s) >> 11) * 0x1p-53;
        double r = sqrt(-2 * log(u1));
        z[i] = r * cos(2 * M_PI * u2);
        if (i + 1 < n) z[i + 1] = r * sin(2 * M_PI * u2);
    }
}

/* ---- Hutchinson ------------------------------------------------------------------------------- */

void mean_se(const double *x, int n, double *mean, double *se)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += x[i];
    double mu = n > 0 ? s / n : NAN, ss = 0;
    for (int i = 0; i < n; i++) ss += (x[i] - mu) * (x[i] - mu);
    *mean = mu;
    *se = n > 1 ? sqrt(ss / (n - 1) / n) : NAN;
}

void hutchinson_samples(const spectra_op *A, int probes, uint64_t seed, double *samples, int first, int step)
{
    if (probes < 1) DIE("Hutchinson with %d probes", probes);
    int panel = A->panel, nrun = A->nops * probes;
    const double **X = xmalloc((size_t)panel * sizeof(double *));
    double **Y = xmalloc((size_t)panel * sizeof(double *));
    int *ops = xmalloc((size_t)panel * sizeof(int));
    for (int r0 = first * panel; r0 < nrun; r0 += step * panel) {
        int k = nrun - r0 < panel ? nrun - r0 : panel;
        for (int j = 0; j < k; j++) {
            int b = (r0 + j) / probes, i = (r0 + j) % probes;
            size_t n = A->dim[b];
            double *z = xmalloc(n * sizeof(double));
            rademacher(z, n, seed_hash(SEED_PROBES, seed, (uint64_t)b, (uint64_t)i));
            X[j] = z;
            Y[j] = xmalloc(n * sizeof(double));
            ops[j] = b;
        }
        A->apply(A, k, ops, X, Y);
        for (int j = 0; j < k; j++) {
            samples[r0 + j] = cblas_ddot((int)A->dim[ops[j]], X[j], 1, Y[j], 1);
            free((double *)X[j]);
            free(Y[j]);
        }
    }
    free(X), free(Y), free(ops);
}

void hutchinson(const spectra_op *A, int probes, uint64_t seed, double *samples, double *trace, double *se)
{
    double *all = samples ? samples : xmalloc((size_t)A->nops * probes * sizeof(double));
    hutchinson_samples(A, probes, seed, all, 0, 1);
    for (int b = 0; b < A->nops; b++) mean_se(all + (size_t)b * probes, probes, &trace[b], &se[b]);
    if (!samples) free(all);
}

/* ---- SLQ ---------------------------------------------------------------------------------------- */

slq_opts slq_defaults(void) { return (slq_opts){.probes = 4, .steps = 30, .seed = 1, .basis_bytes = 1e9}; }

void slq_data_init(slq_data *d, const spectra_op *A, int probes, int steps)
{
    if (probes < 1 || steps < 1) DIE("SLQ with %d probes, %d steps", probes, steps);
    memset(d, 0, sizeof *d);
    d->nops = A->nops;
    d->probes = probes;
    d->steps = steps;
    d->dim = xmalloc(((size_t)A->nops + 1) * sizeof(size_t));
    memcpy(d->dim, A->dim, (size_t)A->nops * sizeof(size_t));
    size_t runs = (size_t)A->nops * probes;
    d->count = xcalloc(runs + 1, sizeof(int));
    d->alpha = xcalloc(runs * steps + 1, sizeof(double));
    d->beta = xcalloc(runs * steps + 1, sizeof(double));
}

void slq_data_free(slq_data *d)
{
    free(d->dim);
    free(d->count);
    free(d->alpha);
    free(d->beta);
    memset(d, 0, sizeof *d);
}

/* The runs' dimensions (run r = b·probes + i). */
static size_t *run_dims(const spectra_op *A, int probes)
{
    size_t nrun = (size_t)A->nops * probes;
    size_t *dim = xmalloc((nrun + 1) * sizeof(size_t));
    for (size_t r = 0; r < nrun; r++) dim[r] = A->dim[r / probes];
    return dim;
}

void slq_run_batches(slq_data *d, const spectra_op *A, const slq_opts *o, int first, int step)
{
    int nrun = A->nops * o->probes, *start;
    size_t *dim = run_dims(A, o->probes);
    int nb = lanczos_batches(nrun, dim, o->steps, A->panel, o->basis_bytes, &start);
    for (int t = first; t < nb; t += step) {
        int r0 = start[t], k = start[t + 1] - r0;
        lanczos **L = xmalloc((size_t)k * sizeof(lanczos *));
        int *op = xmalloc((size_t)k * sizeof(int));
        for (int j = 0; j < k; j++) {
            int r = r0 + j, b = r / o->probes, i = r % o->probes;
            double *z = xmalloc(dim[r] * sizeof(double));
            rademacher(z, dim[r], seed_hash(SEED_PROBES, o->seed, (uint64_t)b, (uint64_t)i));
            L[j] = lanczos_new(dim[r], o->steps, z, 0, 0);
            free(z);
            op[j] = b;
        }
        lanczos_run(A, k, L, op);
        for (int j = 0; j < k; j++) {
            size_t r = (size_t)r0 + j;
            d->count[r] = L[j]->steps;
            memcpy(d->alpha + r * d->steps, L[j]->alpha, (size_t)L[j]->steps * sizeof(double));
            memcpy(d->beta + r * d->steps, L[j]->beta, (size_t)L[j]->steps * sizeof(double));
            lanczos_free(L[j]);
        }
        free(L);
        free(op);
    }
    free(start);
    free(dim);
}

void slq_run(slq_data *d, const spectra_op *A, const slq_opts *o) { slq_run_batches(d, A, o, 0, 1); }

int slq_measure(const slq_data *d, int b, int nv, int m, double *nodes, double *weights)
{
    if (nv < 1 || nv > d->probes || m < 1 || m > d->steps) DIE("SLQ measure of %d probes, %d steps", nv, m);
    int n = 0;
    for (int i = 0; i < nv; i++) {
        size_t r = (size_t)b * d->probes + i;
        int mm = m < d->count[r] ? m : d->count[r];
        if (mm < 1) DIE("SLQ run %zu was not computed", r);
        gauss_quadrature(mm, d->alpha + r * d->steps, d->beta + r * d->steps, nodes + n, weights + n);
        for (int k = 0; k < mm; k++) weights[n + k] /= nv;
        n += mm;
    }
    return n;
}

void slq_trace(const slq_data *d, int b, int nv, double *trace, double *se)
{
    double *x = xmalloc((size_t)nv * sizeof(double));
    for (int i = 0; i < nv; i++) x[i] = (double)d->dim[b] * d->alpha[((size_t)b * d->probes + i) * d->steps];
    mean_se(x, nv, trace, se);
    free(x);
}

measure_stats measure_stats_of(const double *nodes, const double *weights, int n, double zero)
{
    measure_stats s = {INFINITY, -INFINITY, INFINITY, 0, NAN, 0, 0, 0};
    for (int k = 0; k < n; k++) {
        double t = nodes[k];
        if (t < s.lmin) s.lmin = t;
        if (t > s.lmax) s.lmax = t;
        if (fabs(t) < s.absmin) s.absmin = fabs(t);
        if (fabs(t) > s.absmax) s.absmax = fabs(t);
        if (t < -zero) s.neg_mass += weights[k];
        if (fabs(t) <= zero) s.zero_mass += weights[k];
        s.mean += weights[k] * t;
    }
    s.kappa = s.absmin > 0 ? s.absmax / s.absmin : INFINITY;
    return s;
}

typedef struct {
    double x, w;
} point_mass;

static int by_position(const void *a, const void *b)
{
    double x = ((const point_mass *)a)->x, y = ((const point_mass *)b)->x;
    return x < y ? -1 : x > y;
}

double wasserstein1(const double *x, const double *wx, int nx, const double *y, const double *wy, int ny)
{
    int n = nx + ny;
    if (n == 0) return 0;
    point_mass *p = xmalloc((size_t)n * sizeof *p);
    for (int i = 0; i < nx; i++) p[i] = (point_mass){x[i], wx[i]};
    for (int i = 0; i < ny; i++) p[nx + i] = (point_mass){y[i], -wy[i]};
    qsort(p, (size_t)n, sizeof *p, by_position);
    double diff = 0, w1 = 0;   /* diff = F − G right of the current point */
    for (int i = 0; i + 1 < n; i++) {
        diff += p[i].w;
        w1 += fabs(diff) * (p[i + 1].x - p[i].x);
    }
    free(p);
    return w1;
}

void smoothed_density(double *rho, const double *grid, int ngrid, const double *nodes, const double *weights, int n,
                      double sigma, int log10_scale, double zero)
{
    const double c = 1 / (sigma * sqrt(2 * M_PI));
    for (int g = 0; g < ngrid; g++) rho[g] = 0;
    for (int k = 0; k < n; k++) {
        double t = nodes[k];
        if (log10_scale) {
            if (fabs(t) <= zero) continue;
            t = log10(fabs(t));
        }
        for (int g = 0; g < ngrid; g++) {
            double u = (grid[g] - t) / sigma;
            if (fabs(u) < 40) rho[g] += weights[k] * c * exp(-0.5 * u * u);
        }
    }
}

/* ---- Lanczos extremes ----------------------------------------------------------------------- */

void extremes_init(extremes_data *e, int nops, int nev)
{
    if (nev < 1) DIE("extremes of %d Ritz values", nev);
    memset(e, 0, sizeof *e);
    e->nops = nops;
    e->nev = nev;
    e->steps = xcalloc((size_t)nops + 1, sizeof(int));
    e->converged = xcalloc((size_t)nops + 1, sizeof(int));
    e->theta = xmalloc(((size_t)nops * 2 * nev + 1) * sizeof(double));
    e->resid = xmalloc(((size_t)nops * 2 * nev + 1) * sizeof(double));
    for (size_t i = 0; i < (size_t)nops * 2 * nev; i++) e->theta[i] = e->resid[i] = NAN;
}

void extremes_free(extremes_data *e)
{
    free(e->steps);
    free(e->converged);
    free(e->theta);
    free(e->resid);
    memset(e, 0, sizeof *e);
}

void extremes_run_batches(extremes_data *e, const spectra_op *A, int mmax, double tol, const slq_opts *o,
                          double *vectors, const size_t *vec_off, int first, int step)
{
    int nrun = A->nops, *start, nev = e->nev;
    int nb = lanczos_batches(nrun, A->dim, mmax, A->panel, o->basis_bytes, &start);
    for (int t = first; t < nb; t += step) {
        int r0 = start[t], k = start[t + 1] - r0;
        lanczos **L = xmalloc((size_t)k * sizeof(lanczos *));
        int *op = xmalloc((size_t)k * sizeof(int));
        for (int j = 0; j < k; j++) {
            int b = r0 + j;
            double *z = xmalloc(A->dim[b] * sizeof(double));
            gaussian_probe(z, A->dim[b], seed_hash(SEED_PROBES, o->seed, (uint64_t)b, UINT64_MAX));
            L[j] = lanczos_new(A->dim[b], mmax, z, nev, tol);
            free(z);
            op[j] = b;
        }
        lanczos_run(A, k, L, op);
        for (int j = 0; j < k; j++) {
            int b = r0 + j, s = L[j]->steps;
            size_t n = L[j]->n;
            double *theta = xmalloc((size_t)s * sizeof(double)), *res = xmalloc((size_t)s * sizeof(double));
            double *Y = vectors ? xmalloc(checked_mul((size_t)s * n, sizeof(double), "Ritz vectors")) : NULL;
            lanczos_ritz(L[j], theta, res, Y);
            e->steps[b] = s;
            e->converged[b] = L[j]->converged;
            for (int i = 0; i < 2 * nev; i++) {
                int k2 = i < nev ? i : s - 2 * nev + i;   /* smallest i, then largest ascending */
                size_t slot = (size_t)b * 2 * nev + i;
                if (k2 >= 0 && k2 < s) {
                    e->theta[slot] = theta[k2];
                    e->resid[slot] = res[k2];
                    if (Y) memcpy(vectors + vec_off[b] + (size_t)i * n, Y + (size_t)k2 * n, n * sizeof(double));
                } else if (Y) {
                    for (size_t x = 0; x < n; x++) vectors[vec_off[b] + (size_t)i * n + x] = NAN;
                }
            }
            free(theta), free(res), free(Y);
            lanczos_free(L[j]);
        }
        free(L);
        free(op);
    }
    free(start);
}

void extremes_run(extremes_data *e, const spectra_op *A, int mmax, double tol, const slq_opts *o, double *vectors,
                  const size_t *vec_off)
{
    extremes_run_batches(e, A, mmax, tol, o, vectors, vec_off, 0, 1);
}
