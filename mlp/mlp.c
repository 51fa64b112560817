/* The 1-hidden-layer MLP: forward, backward and R-operator over a batch of N
 * samples and k directions with cblas_dgemm; the hess_cols fast path; naive
 * per-sample reference kernels for the tests. Math and layout: mlp.h. */
#include "mlp.h"
#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    mlp_config cfg;
    int d1;              /* in + bias: columns of fc1 */
    size_t P1, o2, ob;   /* size of fc1; offsets of fc2 and fc2.bias */
    int N;               /* batch size (0: no batch yet) */
    double *X;           /* (N, d1) inputs, last column 1 when biases are on */
    double *XT;          /* (d1, N) the same, transposed */
    int *y;              /* (N) */
    /* forward/backward cache at the current params */
    double *Z1, *A, *S1, *S2, *dA; /* (N, h): pre-activation, σ, σ', σ'', dL/dA */
    double *Z2, *Pr, *G2;          /* (N, C): logits, softmax (xent), dL/dZ2 */
    double *ws, *ws2;              /* workspaces grown on demand: hvp, hess_cols */
    size_t ws_cap, ws2_cap;
    double flops;
    int threads;                   /* mlp_set_threads; 0 = toolkit_threads() */
} mlp_impl;

static const char *ACT_NAMES[ACT_COUNT] = {"relu", "tanh", "gelu", "linear"};
static const char *LOSS_NAMES[LOSS_COUNT] = {"xent", "squared"};

const char *act_name(mlp_act a) { return (a >= 0 && a < ACT_COUNT) ? ACT_NAMES[a] : "unknown"; }
const char *loss_kind_name(mlp_loss l) { return (l >= 0 && l < LOSS_COUNT) ? LOSS_NAMES[l] : "unknown"; }

mlp_act act_parse(const char *name)
{
    for (int a = 0; a < ACT_COUNT; a++)
        if (strcmp(name, ACT_NAMES[a]) == 0) return (mlp_act)a;
    die_user("unknown activation '%s' (expected relu, tanh, gelu or linear)", name);
}

static mlp_impl *impl_of(const model *m)
{
    if (!m || !m->kind || strcmp(m->kind, "mlp") != 0) DIE("not an mlp model");
    return m->impl;
}

/* C (M,Nn) = alpha·op(A)·op(B) + beta·C, row-major; adds 2·M·Nn·K to *flops. */
static void gemm_counted(double *flops, int transa, int transb, int M, int Nn, int K, const double *A, int lda,
                         const double *B, int ldb, double beta, double *C, int ldc)
{
    if (M == 0 || Nn == 0) return;
    cblas_dgemm(CblasRowMajor, transa ? CblasTrans : CblasNoTrans, transb ? CblasTrans : CblasNoTrans,
                M, Nn, K, 1.0, A, lda, B, ldb, beta, C, ldc);
    *flops += 2.0 * M * Nn * K;
}

static void gemm(mlp_impl *im, int transa, int transb, int M, int Nn, int K, const double *A, int lda,
                 const double *B, int ldb, double beta, double *C, int ldc)
{
    gemm_counted(&im->flops, transa, transb, M, Nn, K, A, lda, B, ldb, beta, C, ldc);
}

/* A buffer of at least count doubles kept between calls (no page faults in hot loops). */
static double *grow(double **buf, size_t *cap, size_t count)
{
    if (count > *cap) {
        free(*buf);
        *buf = huge_alloc(count, "MLP workspace");
        *cap = count;
    }
    return *buf;
}

static double *workspace(mlp_impl *im, size_t count) { return grow(&im->ws, &im->ws_cap, count); }

/* σ, σ', σ'' at z. ReLU: σ'(0) = 0 and σ'' = 0 (almost everywhere). */
static void act_eval(mlp_act a, double z, double *s0, double *s1, double *s2)
{
    switch (a) {
    case ACT_RELU:
        *s0 = z > 0 ? z : 0;
        *s1 = z > 0 ? 1 : 0;
        *s2 = 0;
        break;
    case ACT_TANH: {
        double t = tanh(z);
        *s0 = t;
        *s1 = 1 - t * t;
        *s2 = -2 * t * (1 - t * t);
        break;
    }
    case ACT_GELU: {
        double phi = exp(-0.5 * z * z) / sqrt(2 * M_PI), Phi = 0.5 * erfc(-z / sqrt(2.0));
        *s0 = z * Phi;
        *s1 = Phi + z * phi;
        *s2 = phi * (2 - z * z);
        break;
    }
    default:
        *s0 = z;
        *s1 = 1;
        *s2 = 0;
        break;
    }
}

/* One sample's loss from logits z (C) and label; writes dL/dz (not divided by N) into g
 * and, for cross-entropy, the softmax into p (may be NULL). */
static double loss_row(mlp_loss kind, const double *z, int label, int C, double *p, double *g)
{
    if (kind == LOSS_SQUARED) {
        double l = 0;
        for (int c = 0; c < C; c++) {
            double r = z[c] - (c == label);
            g[c] = r;
            l += 0.5 * r * r;
        }
        return l;
    }
    double mx = z[0];
    for (int c = 1; c < C; c++) if (z[c] > mx) mx = z[c];
    double sum = 0;
    for (int c = 0; c < C; c++) sum += exp(z[c] - mx);
    double lse = mx + log(sum);
    for (int c = 0; c < C; c++) {
        double pc = exp(z[c] - lse);
        if (p) p[c] = pc;
        g[c] = pc - (c == label);
    }
    return lse - z[label];
}

/* ---- BLAS forward / backward / R-op -------------------------------------------------- */

static void need_batch(const mlp_impl *im)
{
    if (im->N == 0) DIE("MLP: no batch set (call mlp_set_batch first)");
}

/* Forward at params: Z1, A, S1, S2, Z2, Pr, G2 and dA = G2·W2; returns the loss. */
static double forward(mlp_impl *im, const double *params)
{
    need_batch(im);
    int N = im->N, h = im->cfg.width, C = im->cfg.classes, d1 = im->d1;
    const double *W1 = params, *W2 = params + im->o2, *b2 = im->cfg.bias ? params + im->ob : NULL;
    gemm(im, 0, 1, N, h, d1, im->X, d1, W1, d1, 0.0, im->Z1, h);              /* Z1 = X~ W1ᵀ */
    for (size_t e = 0; e < (size_t)N * h; e++)
        act_eval(im->cfg.act, im->Z1[e], &im->A[e], &im->S1[e], &im->S2[e]);
    gemm(im, 0, 1, N, C, h, im->A, h, W2, h, 0.0, im->Z2, C);                 /* Z2 = A W2ᵀ */
    double loss = 0;
    for (int n = 0; n < N; n++) {
        double *z = im->Z2 + (size_t)n * C, *g = im->G2 + (size_t)n * C;
        if (b2) for (int c = 0; c < C; c++) z[c] += b2[c];
        loss += loss_row(im->cfg.loss, z, im->y[n], C, im->Pr + (size_t)n * C, g);
        for (int c = 0; c < C; c++) g[c] /= N;
    }
    gemm(im, 0, 0, N, h, C, im->G2, C, W2, h, 0.0, im->dA, h);                /* dA = G2 W2 */
    return loss / N;
}

static double mlp_loss_fn(model *m) { return forward(impl_of(m), m->params); }

static double mlp_grad_fn(model *m, double *g)
{
    mlp_impl *im = impl_of(m);
    double loss = forward(im, m->params);
    int N = im->N, h = im->cfg.width, C = im->cfg.classes, d1 = im->d1;
    gemm(im, 1, 0, C, h, N, im->G2, C, im->A, h, 0.0, g + im->o2, h);         /* dW2 = G2ᵀ A */
    if (im->cfg.bias) {
        double *gb = g + im->ob;
        for (int c = 0; c < C; c++) gb[c] = 0;
        for (int n = 0; n < N; n++)
            for (int c = 0; c < C; c++) gb[c] += im->G2[(size_t)n * C + c];
    }
    double *G1 = workspace(im, (size_t)N * h);                                 /* (N, h) */
    for (size_t e = 0; e < (size_t)N * h; e++) G1[e] = im->dA[e] * im->S1[e];
    gemm(im, 1, 0, h, d1, N, G1, h, im->X, d1, 0.0, g, d1);                   /* dW1 = G1ᵀ X~ */
    return loss;
}

/* R-operator (Pearlmutter 1994) on k directions V (k, P) -> HV (k, P).
 * Per direction, with R{·} the directional derivative:
 *   R{Z1} = X~ V1ᵀ,  R{A} = σ'⊙R{Z1},  R{Z2} = R{A} W2ᵀ + A V2ᵀ + vb2,
 *   R{G2} = (diag p − p pᵀ) R{Z2} / N  (squared loss: R{Z2}/N),
 *   HV2 = R{G2}ᵀA + G2ᵀR{A},  Hvb2 = Σ_n R{G2},
 *   R{dA} = R{G2} W2 + G2 V2,  R{G1} = R{dA}⊙σ' + dA⊙σ''⊙R{Z1},  HV1 = R{G1}ᵀ X~.
 * The k directions sit side by side in the columns (n, (d, i)), so each line is one dgemm. */
static void mlp_hvp_fn(model *m, const double *V, double *HV, int k)
{
    mlp_impl *im = impl_of(m);
    forward(im, m->params);
    const double *W2 = m->params + im->o2;
    int N = im->N, h = im->cfg.width, C = im->cfg.classes, d1 = im->d1;
    size_t P = m->P, kh = (size_t)k * h, kC = (size_t)k * C, Nn = N;
    size_t need = kh * d1 + 2 * kC * h + 3 * Nn * kh + Nn * kC + kC * h + kh * C;
    double *V1s = workspace(im, need);        /* (k·h, d1) the fc1 part of each direction */
    double *V2t = V1s + kh * d1;              /* (h, k·C): [i, d·C+c] = V2_d[c, i] */
    double *V2p = V2t + kC * h;               /* (C, k·h): [c, d·h+i] = V2_d[c, i] */
    double *RZ1 = V2p + kC * h;               /* (N, k·h) */
    double *RA = RZ1 + Nn * kh;               /* (N, k·h) */
    double *RdA = RA + Nn * kh;               /* (N, k·h), then R{G1} in place */
    double *RG2 = RdA + Nn * kh;              /* (N, k·C): R{Z2}, then R{G2} in place */
    double *T1 = RG2 + Nn * kC;               /* (k·C, h) */
    double *T2 = T1 + kC * h;                 /* (C, k·h) */
    for (int d = 0; d < k; d++) {
        const double *v = V + (size_t)d * P;
        memcpy(V1s + (size_t)d * h * d1, v, (size_t)h * d1 * sizeof(double));
        for (int c = 0; c < C; c++)
            for (int i = 0; i < h; i++) {
                double x = v[im->o2 + (size_t)c * h + i];
                V2t[(size_t)i * kC + (size_t)d * C + c] = x;
                V2p[(size_t)c * kh + (size_t)d * h + i] = x;
            }
    }
    gemm(im, 0, 1, N, kh, d1, im->X, d1, V1s, d1, 0.0, RZ1, kh);               /* R{Z1} */
    for (size_t n = 0; n < Nn; n++)
        for (size_t e = 0; e < kh; e++) RA[n * kh + e] = im->S1[n * h + e % h] * RZ1[n * kh + e];
    gemm(im, 0, 1, N * k, C, h, RA, h, W2, h, 0.0, RG2, C);                    /* R{A} W2ᵀ */
    gemm(im, 0, 0, N, kC, h, im->A, h, V2t, kC, 1.0, RG2, kC);                  /* + A V2ᵀ */
    for (size_t n = 0; n < Nn; n++) {
        const double *p = im->Pr + n * C;
        for (int d = 0; d < k; d++) {
            double *r = RG2 + (n * k + d) * C;
            if (im->cfg.bias) {
                const double *vb = V + (size_t)d * P + im->ob;
                for (int c = 0; c < C; c++) r[c] += vb[c];
            }
            if (im->cfg.loss == LOSS_SQUARED) {
                for (int c = 0; c < C; c++) r[c] /= N;
            } else {
                double dot = 0;
                for (int c = 0; c < C; c++) dot += p[c] * r[c];
                for (int c = 0; c < C; c++) r[c] = p[c] * (r[c] - dot) / N;
            }
        }
    }
    gemm(im, 1, 0, kC, h, N, RG2, kC, im->A, h, 0.0, T1, h);                    /* R{G2}ᵀ A */
    gemm(im, 1, 0, C, kh, N, im->G2, C, RA, kh, 0.0, T2, kh);                   /* G2ᵀ R{A} */
    for (int d = 0; d < k; d++) {
        double *hv2 = HV + (size_t)d * P + im->o2;
        for (int c = 0; c < C; c++)
            for (int i = 0; i < h; i++)
                hv2[(size_t)c * h + i] = T1[((size_t)d * C + c) * h + i] + T2[(size_t)c * kh + (size_t)d * h + i];
        if (im->cfg.bias) {
            double *hb = HV + (size_t)d * P + im->ob;
            for (int c = 0; c < C; c++) hb[c] = 0;
            for (size_t n = 0; n < Nn; n++)
                for (int c = 0; c < C; c++) hb[c] += RG2[(n * k + d) * C + c];
        }
    }
    gemm(im, 0, 0, N * k, h, C, RG2, C, W2, h, 0.0, RdA, h);                    /* R{G2} W2 */
    gemm(im, 0, 0, N, kh, C, im->G2, C, V2p, kh, 1.0, RdA, kh);                 /* + G2 V2 */
    for (size_t n = 0; n < Nn; n++)
        for (size_t e = 0; e < kh; e++) {
            size_t a = n * h + e % h, r = n * kh + e;
            RdA[r] = RdA[r] * im->S1[a] + im->dA[a] * im->S2[a] * RZ1[r];    /* R{G1} */
        }
    double *HV1s = V1s;                                                         /* (k·h, d1) */
    gemm(im, 1, 0, kh, d1, N, RdA, kh, im->X, d1, 0.0, HV1s, d1);              /* R{G1}ᵀ X~ */
    for (int d = 0; d < k; d++)
        memcpy(HV + (size_t)d * P, HV1s + (size_t)d * h * d1, (size_t)h * d1 * sizeof(double));
}

/* ---- hess_cols: columns of H for unit directions ------------------------------------
 * A unit direction on fc1 entry (i, q) makes R{Z1} = X~[:, q] in neuron i only, so
 * no matmul is needed for it, and
 *   H[(i,q), (i',q')] = Σ_n X~[n,q] X~[n,q'] K_n[i,i'],
 *   K_n[i,i'] = σ'_ni σ'_ni' (W2ᵀ S_n W2)[i,i']/N + δ_ii' dA[n,i] σ''_ni,
 * with S_n = diag(p_n) − p_n p_nᵀ (I for squared loss): for each i' one dgemm
 * (s, N)·(N, d1) with the rows of X~ᵀ weighted by K[i,i',·]. The fc2/bias rows
 * of those columns are one more dgemm X~ᵀ·E_i; fc2/bias columns go through hvp. */
/* Columns j..jend-1 of H inside fc2/bias, rows o2..P-1 only: with S~_n = (diag p_n − p_n p_nᵀ)/N
 * (I/N for squared loss) and a unit direction on fc2 (c', j') (or bias c', "A[n, j'] = 1"):
 *   H[(c,jj), col] = Σ_n S~_n[c,c'] A[n,j'] A[n,jj],   H[bias c, col] = Σ_n S~_n[c,c'] A[n,j']. */
static void tail_cols(const mlp_impl *im, size_t j, size_t jend, double *out, size_t P)
{
    int h = im->cfg.width, C = im->cfg.classes, N = im->N;
    for (size_t col = j; col < jend; col++) {
        double *o = out + (col - j) * P;
        size_t t = col - im->o2;
        int c1 = (int)(t / h), j1 = (int)(t % h), on_bias = t >= (size_t)C * h;
        if (on_bias) c1 = (int)(t - (size_t)C * h);
        for (size_t r = im->o2; r < P; r++) o[r] = 0;
        for (int n = 0; n < N; n++) {
            const double *p = im->Pr + (size_t)n * C, *a = im->A + (size_t)n * h;
            double w = on_bias ? 1 : a[j1];
            for (int c = 0; c < C; c++) {
                double sc = im->cfg.loss == LOSS_SQUARED ? (c == c1) : p[c] * ((c == c1) - p[c1]);
                sc *= w / N;
                if (sc == 0) continue;
                double *row = o + im->o2 + (size_t)c * h;
                for (int jj = 0; jj < h; jj++) row[jj] += sc * a[jj];
                if (im->cfg.bias) o[im->ob + c] += sc;
            }
        }
    }
}

/* fc1 columns are cut into chunks of at most FC1_CHUNK columns inside one
 * neuron, in a layout fixed by the panel alone; worker threads take whole
 * chunks, so every dgemm has the same shape whatever the number of threads and
 * H does not depend on it. */
#define FC1_CHUNK 32

typedef struct {
    const mlp_impl *im;
    const double *SW, *K;   /* shared: (N, C, h) and (h, h, N) */
    size_t j0;              /* the panel's first column (its lower bound too) */
    int lower;
    double *out;            /* (k, P) */
    size_t P;
    size_t *start;          /* (nchunks + 1) the chunks' first columns, and the end */
    double **L, **E;        /* (workers) each worker's workspaces: L (FC1_CHUNK, N), E (N, tail) */
    double *flops;          /* (workers) */
} fc1_job;

/* Columns j..j+s-1 of fc1 (inside neuron i) into out rows (j - j0)..; L (s, N) and E (N, tail) workspaces. */
static void fc1_chunk(fc1_job *J, size_t j, int s, double *L, double *E, double *flops)
{
    const mlp_impl *im = J->im;
    int N = im->N, h = im->cfg.width, C = im->cfg.classes, d1 = im->d1;
    size_t P = J->P, Nn = N, tail = P - im->o2, j0 = J->j0;
    int i = (int)(j / d1), q0 = (int)(j % d1);
    double *o = J->out + (j - j0) * P;
    const double *xt = im->XT + (size_t)q0 * Nn;     /* rows q0.. of X~ᵀ (s, N) */
    for (int i2 = 0; i2 < h; i2++) {
        size_t r0 = (size_t)i2 * d1, r1 = r0 + d1;   /* rows of block i2 */
        if (J->lower && r1 <= j0) continue;
        size_t c0 = (J->lower && r0 < j0) ? j0 - r0 : 0;
        const double *kw = J->K + ((size_t)i * h + i2) * Nn;
        for (int t = 0; t < s; t++)
            for (size_t n = 0; n < Nn; n++) L[(size_t)t * Nn + n] = kw[n] * xt[(size_t)t * Nn + n];
        gemm_counted(flops, 0, 0, s, (int)(d1 - c0), N, L, N, im->X + c0, d1, 0.0, o + r0 + c0, (int)P);
    }
    for (size_t n = 0; n < Nn; n++) {
        const double *sw = J->SW + n * C * h, *a = im->A + n * h, *g2 = im->G2 + n * C;
        double s1 = im->S1[n * h + i], *e = E + n * tail;
        for (int c = 0; c < C; c++) {
            for (int i2 = 0; i2 < h; i2++) e[(size_t)c * h + i2] = s1 * sw[(size_t)c * h + i] * a[i2];
            e[(size_t)c * h + i] += s1 * g2[c];
            if (im->cfg.bias) e[(size_t)C * h + c] = s1 * sw[(size_t)c * h + i];
        }
    }
    gemm_counted(flops, 0, 0, s, (int)tail, N, xt, N, E, (int)tail, 0.0, o + im->o2, (int)P);
}

/* Chunk c of the job on worker w: its workspaces taken at its first chunk. */
static void fc1_item(void *arg, int c, int w)
{
    fc1_job *J = arg;
    size_t Nn = J->im->N, tail = J->P - J->im->o2;
    if (!J->L[w]) {
        J->L[w] = xmalloc(FC1_CHUNK * Nn * sizeof(double));
        J->E[w] = xmalloc(Nn * tail * sizeof(double));
    }
    fc1_chunk(J, J->start[c], (int)(J->start[c + 1] - J->start[c]), J->L[w], J->E[w], &J->flops[w]);
}

/* The fc1 columns j0..end-1 in chunks of at most FC1_CHUNK inside one neuron,
 * over the workers; returns the flops. */
static double fc1_columns(fc1_job *J, size_t end, int threads)
{
    size_t d1 = J->im->d1;
    int n = 0;
    J->start = xmalloc(((end - J->j0) + 1) * sizeof(size_t));
    for (size_t j = J->j0; j < end; n++) {
        size_t stop = (j / d1 + 1) * d1;
        if (stop > j + FC1_CHUNK) stop = j + FC1_CHUNK;
        J->start[n] = j;
        j = stop < end ? stop : end;
    }
    J->start[n] = end;
    int nw = parallel_workers(n, threads);
    J->L = xcalloc((size_t)nw, sizeof(double *));
    J->E = xcalloc((size_t)nw, sizeof(double *));
    J->flops = xcalloc((size_t)nw, sizeof(double));
    parallel_for(n, nw, fc1_item, J, NULL, 0);
    double flops = 0;
    for (int w = 0; w < nw; w++) {
        flops += J->flops[w];
        free(J->L[w]);
        free(J->E[w]);
    }
    free(J->L), free(J->E), free(J->flops), free(J->start);
    return flops;
}

static void hess_cols_any(model *m, size_t j0, int k, double *out, int lower)
{
    mlp_impl *im = impl_of(m);
    forward(im, m->params);
    const double *W2 = m->params + im->o2;
    int N = im->N, h = im->cfg.width, C = im->cfg.classes;
    size_t P = m->P, Nn = N, jend = j0 + k, j = j0;
    size_t hh = (size_t)h * h;
    double *SW = grow(&im->ws2, &im->ws2_cap, Nn * C * h + hh * Nn); /* (N, C, h): (S_n W2)[c,i] / N */
    double *K = SW + Nn * C * h;                                      /* (h, h, N) */
    for (size_t n = 0; n < Nn; n++) {
        const double *p = im->Pr + n * C;
        double *sw = SW + n * C * h;
        for (int i = 0; i < h; i++) {
            double u = 0;                                 /* (W2ᵀ p)_i */
            for (int c = 0; c < C; c++) u += W2[(size_t)c * h + i] * p[c];
            for (int c = 0; c < C; c++) {
                double w = W2[(size_t)c * h + i];
                sw[(size_t)c * h + i] = (im->cfg.loss == LOSS_SQUARED ? w : p[c] * (w - u)) / N;
            }
        }
        for (int i = 0; i < h; i++)
            for (int i2 = 0; i2 < h; i2++) {
                double q = 0;
                for (int c = 0; c < C; c++) q += sw[(size_t)c * h + i] * W2[(size_t)c * h + i2];
                double kv = im->S1[n * h + i] * im->S1[n * h + i2] * q;
                if (i == i2) kv += im->dA[n * h + i] * im->S2[n * h + i];
                K[((size_t)i * h + i2) * Nn + n] = kv;
            }
    }
    if (j < im->P1) { /* fc1 columns, chunks over the workers, each on one BLAS thread */
        int saved = openblas_get_num_threads();
        openblas_set_num_threads(1);
        fc1_job J = {.im = im, .SW = SW, .K = K, .j0 = j0, .lower = lower, .out = out, .P = P};
        size_t end = jend < im->P1 ? jend : im->P1;
        im->flops += fc1_columns(&J, end, toolkit_workers(im->threads));
        openblas_set_num_threads(saved);
        j = end;
    }
    if (j < jend && lower && j0 >= im->o2) {              /* fc2/bias columns, rows >= o2 only */
        tail_cols(im, j, jend, out + (j - j0) * P, P);
        return;
    }
    if (j < jend) {                                       /* fc2 and bias columns */
        size_t kt = jend - j;
        double *V = xcalloc(kt * P, sizeof(double));
        for (size_t t = 0; t < kt; t++) V[t * P + j + t] = 1;
        mlp_hvp_fn(m, V, out + (j - j0) * P, (int)kt);
        free(V);
    }
}

static void mlp_hess_cols_fn(model *m, size_t j0, int k, double *out) { hess_cols_any(m, j0, k, out, 0); }
/* model.hess_cols_lower: only the entries at rows >= j0 are written (half the W1–W1 work). */
static void mlp_hess_cols_lower_fn(model *m, size_t j0, int k, double *out) { hess_cols_any(m, j0, k, out, 1); }

/* ---- naive per-sample reference kernels ---------------------------------------------- */

/* One sample's forward: z1, a, s1, s2 (h), z2 (C). */
static void sample_forward(const mlp_impl *im, const double *params, const double *x,
                           double *z1, double *a, double *s1, double *s2, double *z2)
{
    int h = im->cfg.width, C = im->cfg.classes, d1 = im->d1;
    const double *W1 = params, *W2 = params + im->o2;
    for (int i = 0; i < h; i++) {
        double s = 0;
        for (int q = 0; q < d1; q++) s += W1[(size_t)i * d1 + q] * x[q];
        z1[i] = s;
        act_eval(im->cfg.act, s, &a[i], &s1[i], &s2[i]);
    }
    for (int c = 0; c < C; c++) {
        double s = im->cfg.bias ? params[im->ob + c] : 0;
        for (int i = 0; i < h; i++) s += W2[(size_t)c * h + i] * a[i];
        z2[c] = s;
    }
}

typedef struct { double *z1, *a, *s1, *s2, *z2, *p, *g2, *da; } sample_buf;

static sample_buf sample_buf_new(int h, int C)
{
    double *mem = xcalloc((size_t)5 * h + 3 * C, sizeof(double));
    sample_buf b = {mem, mem + h, mem + 2 * h, mem + 3 * h, mem + 4 * h, mem + 4 * h + C,
                    mem + 4 * h + 2 * C, NULL};
    b.da = xcalloc(h, sizeof(double));
    return b;
}

static void sample_buf_free(sample_buf *b)
{
    free(b->z1);
    free(b->da);
}

double mlp_loss_naive(model *m)
{
    mlp_impl *im = impl_of(m);
    need_batch(im);
    int h = im->cfg.width, C = im->cfg.classes;
    sample_buf b = sample_buf_new(h, C);
    double loss = 0;
    for (int n = 0; n < im->N; n++) {
        sample_forward(im, m->params, im->X + (size_t)n * im->d1, b.z1, b.a, b.s1, b.s2, b.z2);
        loss += loss_row(im->cfg.loss, b.z2, im->y[n], C, b.p, b.g2);
    }
    sample_buf_free(&b);
    return loss / im->N;
}

double mlp_grad_naive(model *m, double *g)
{
    mlp_impl *im = impl_of(m);
    need_batch(im);
    int N = im->N, h = im->cfg.width, C = im->cfg.classes, d1 = im->d1;
    const double *W2 = m->params + im->o2;
    sample_buf b = sample_buf_new(h, C);
    memset(g, 0, m->P * sizeof(double));
    double loss = 0;
    for (int n = 0; n < N; n++) {
        const double *x = im->X + (size_t)n * d1;
        sample_forward(im, m->params, x, b.z1, b.a, b.s1, b.s2, b.z2);
        loss += loss_row(im->cfg.loss, b.z2, im->y[n], C, b.p, b.g2);
        for (int c = 0; c < C; c++) {
            for (int i = 0; i < h; i++) g[im->o2 + (size_t)c * h + i] += b.g2[c] * b.a[i] / N;
            if (im->cfg.bias) g[im->ob + c] += b.g2[c] / N;
        }
        for (int i = 0; i < h; i++) {
            double da = 0;
            for (int c = 0; c < C; c++) da += b.g2[c] * W2[(size_t)c * h + i];
            for (int q = 0; q < d1; q++) g[(size_t)i * d1 + q] += da * b.s1[i] * x[q] / N;
        }
    }
    sample_buf_free(&b);
    return loss / N;
}

void mlp_hvp_naive(model *m, const double *v, double *hv)
{
    mlp_impl *im = impl_of(m);
    need_batch(im);
    int N = im->N, h = im->cfg.width, C = im->cfg.classes, d1 = im->d1;
    const double *W2 = m->params + im->o2, *V1 = v, *V2 = v + im->o2;
    sample_buf b = sample_buf_new(h, C);
    double *rz1 = xmalloc((size_t)h * sizeof(double)), *rz2 = xmalloc((size_t)C * sizeof(double));
    double *rg2 = xmalloc((size_t)C * sizeof(double));
    memset(hv, 0, m->P * sizeof(double));
    for (int n = 0; n < N; n++) {
        const double *x = im->X + (size_t)n * d1;
        sample_forward(im, m->params, x, b.z1, b.a, b.s1, b.s2, b.z2);
        loss_row(im->cfg.loss, b.z2, im->y[n], C, b.p, b.g2);
        for (int i = 0; i < h; i++) {
            double s = 0;
            for (int q = 0; q < d1; q++) s += V1[(size_t)i * d1 + q] * x[q];
            rz1[i] = s;
            b.da[i] = 0;
            for (int c = 0; c < C; c++) b.da[i] += b.g2[c] * W2[(size_t)c * h + i];
        }
        double dot = 0;
        for (int c = 0; c < C; c++) {
            double s = im->cfg.bias ? v[im->ob + c] : 0;
            for (int i = 0; i < h; i++) s += W2[(size_t)c * h + i] * b.s1[i] * rz1[i] + V2[(size_t)c * h + i] * b.a[i];
            rz2[c] = s;
            dot += b.p[c] * s;
        }
        for (int c = 0; c < C; c++) rg2[c] = im->cfg.loss == LOSS_SQUARED ? rz2[c] : b.p[c] * (rz2[c] - dot);
        for (int c = 0; c < C; c++) {
            for (int i = 0; i < h; i++)
                hv[im->o2 + (size_t)c * h + i] += (rg2[c] * b.a[i] + b.g2[c] * b.s1[i] * rz1[i]) / N;
            if (im->cfg.bias) hv[im->ob + c] += rg2[c] / N;
        }
        for (int i = 0; i < h; i++) {
            double rda = 0;
            for (int c = 0; c < C; c++) rda += rg2[c] * W2[(size_t)c * h + i] + b.g2[c] * V2[(size_t)c * h + i];
            double rg1 = rda * b.s1[i] + b.da[i] * b.s2[i] * rz1[i];
            for (int q = 0; q < d1; q++) hv[(size_t)i * d1 + q] += rg1 * x[q] / N;
        }
    }
    free(rz1);
    free(rz2);
    free(rg2);
    sample_buf_free(&b);
}

/* ---- construction ------------------------------------------------------------------------ */

static void mlp_free_batch(mlp_impl *im)
{
    double **bufs[] = {&im->X, &im->XT, &im->Z1, &im->A, &im->S1, &im->S2, &im->dA, &im->Z2, &im->Pr, &im->G2};
    for (size_t i = 0; i < sizeof bufs / sizeof *bufs; i++) {
        free(*bufs[i]);
        *bufs[i] = NULL;
    }
    free(im->y);
    im->y = NULL;
    im->N = 0;
}

static void mlp_destroy(model *m)
{
    mlp_impl *im = impl_of(m);
    mlp_free_batch(im);
    free(im->ws);
    free(im->ws2);
    free(im);
    free(m->tensors);
    free(m->params);
    free(m);
}

model *mlp_new(const mlp_config *cfg)
{
    if (cfg->in < 1 || cfg->width < 1 || cfg->classes < 2)
        die_user("MLP sizes must be in >= 1, width >= 1, classes >= 2 (got %d, %d, %d)",
                 cfg->in, cfg->width, cfg->classes);
    if (cfg->act < 0 || cfg->act >= ACT_COUNT || cfg->loss < 0 || cfg->loss >= LOSS_COUNT)
        DIE("MLP: bad activation or loss");
    mlp_impl *im = xcalloc(1, sizeof *im);
    im->cfg = *cfg;
    im->cfg.bias = cfg->bias ? 1 : 0;
    int h = cfg->width, C = cfg->classes;
    im->d1 = cfg->in + im->cfg.bias;
    im->P1 = checked_mul((size_t)h, (size_t)im->d1, "MLP size");
    im->o2 = im->P1;
    im->ob = im->o2 + (size_t)C * h;
    model *m = xcalloc(1, sizeof *m);
    m->kind = "mlp";
    model_add_tensor(m, "fc1", ROLE_MLP_FC, h, im->d1, 1, -1);
    model_add_tensor(m, "fc2", ROLE_MLP_PROJ, C, h, 1, -1);
    if (im->cfg.bias) model_add_tensor(m, "fc2.bias", ROLE_BIAS, C, 1, 1, -1);
    if (m->P != im->ob + (im->cfg.bias ? (size_t)C : 0)) DIE("MLP layout: P = %zu", m->P);
    m->params = xcalloc(m->P, sizeof(double));
    m->loss = mlp_loss_fn;
    m->grad = mlp_grad_fn;
    m->hvp = mlp_hvp_fn;
    m->hess_cols = mlp_hess_cols_fn;
    m->hess_cols_lower = mlp_hess_cols_lower_fn;
    m->destroy = mlp_destroy;
    m->impl = im;
    model_check_tensors(m);
    mlp_init_params(m, cfg->seed);
    return m;
}

void mlp_init_params(model *m, unsigned long seed)
{
    mlp_impl *im = impl_of(m);
    gsl_rng *rng = rng_new(seed);
    double b1 = 1 / sqrt((double)im->cfg.in), b2 = 1 / sqrt((double)im->cfg.width);
    for (size_t j = 0; j < m->P; j++) {
        double b = j < im->o2 ? b1 : b2;
        m->params[j] = rng_uniform_in(rng, -b, b);
    }
    rng_free(rng);
}

void mlp_set_batch(model *m, const double *X, const int *y, int N)
{
    mlp_impl *im = impl_of(m);
    if (N < 1) DIE("mlp_set_batch: N = %d", N);
    int in = im->cfg.in, d1 = im->d1, h = im->cfg.width, C = im->cfg.classes;
    for (int n = 0; n < N; n++)
        if (y[n] < 0 || y[n] >= C) die_user("label %d of sample %d is outside 0..%d", y[n], n, C - 1);
    if (N != im->N) {
        mlp_free_batch(im);
        size_t Nn = N;
        im->X = xmalloc(checked_mul(Nn * d1, sizeof(double), "MLP batch"));
        im->XT = xmalloc(Nn * d1 * sizeof(double));
        im->y = xmalloc(Nn * sizeof(int));
        double **hbufs[] = {&im->Z1, &im->A, &im->S1, &im->S2, &im->dA};
        for (int b = 0; b < 5; b++) *hbufs[b] = xmalloc(Nn * h * sizeof(double));
        double **cbufs[] = {&im->Z2, &im->Pr, &im->G2};
        for (int b = 0; b < 3; b++) *cbufs[b] = xcalloc(Nn * C, sizeof(double));
        im->N = N;
    }
    for (int n = 0; n < N; n++) {
        double *row = im->X + (size_t)n * d1;
        memcpy(row, X + (size_t)n * in, (size_t)in * sizeof(double));
        if (im->cfg.bias) row[in] = 1;
        for (int q = 0; q < d1; q++) im->XT[(size_t)q * N + n] = row[q];
        im->y[n] = y[n];
    }
}

const mlp_config *mlp_get_config(const model *m) { return &impl_of(m)->cfg; }

void mlp_set_threads(model *m, int n)
{
    mlp_impl *im = impl_of(m);
    if (n < 0 || n > 64) die_user("threads must be in 0..64 (got %d)", n);
    im->threads = n;
}

double mlp_flops(const model *m) { return impl_of(m)->flops; }

double mlp_accuracy(model *m)
{
    mlp_impl *im = impl_of(m);
    forward(im, m->params);
    int C = im->cfg.classes, right = 0;
    for (int n = 0; n < im->N; n++) {
        const double *z = im->Z2 + (size_t)n * C;
        int best = 0;
        for (int c = 1; c < C; c++) if (z[c] > z[best]) best = c;
        right += best == im->y[n];
    }
    return (double)right / im->N;
}
