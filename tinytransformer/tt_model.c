/* The tiny Transformer as a core/model.h `model`: parameter table, forward,
 * backward, and the exact Hessian-vector product on panels of directions.
 *
 * hvp: one base forward + backward over the batch (activations and their
 * gradients kept; reused while the parameters and batch stay the same), then
 * for each sub-panel of at most KP directions and each chunk of sequences, the
 * R-forward and R-backward passes (tt_dirminor.c) with direction-minor (C,N,k)
 * R-quantities, accumulating R{∇θ} = H v direction-minor, transposed into HV at
 * the end of the sub-panel. Sequences are independent given the parameters, so
 * chunking over them only bounds the workspace; the loss is the mean over all
 * B·T positions (scale 1/(B·T)). Hessian columns (hess_cols,
 * tt_hess_cols_lower) pass their unit directions as index ranges, so the
 * kernels copy a column where a dense direction would need a product.
 */
#include "tt_kernels.h"
#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Tensors of one layer, in buffer order. */
enum {
    L_LN1W, L_LN1B, L_Q, L_QB, L_K, L_KB, L_V, L_VB, L_O, L_OB,
    L_LN2W, L_LN2B, L_FC, L_FCB, L_MP, L_MPB, L_NSLOT
};

/* Base activations and their gradients of one layer, (N,·) over the whole batch. */
typedef struct {
    double *ln1, *ln1_xh, *ln1_r, *q, *key, *v, *att, *y, *x1, *ln2, *ln2_xh, *ln2_r, *f, *gl;
    double *dln1, *dq, *dkey, *dv, *dpc, *dy, *dx1, *dln2, *df, *dgl;
    double *g1, *g2d;        /* GELU'(f) and GELU''(f) ⊙ dgl, for the R-pass */
} layer_acts;

/* R-quantities of one layer for one chunk of sequences and a sub-panel of
 * directions, (width, N, k) direction-minor (tt_dirminor.c). In the buffers struct
 * every pointer is storage; in the live struct a pointer is NULL when the
 * quantity is identically zero in this pass (nothing upstream perturbed). */
typedef struct {
    double *ln1, *ln1_xh, *ln1_r, *q, *key, *v, *att, *y, *ln2, *ln2_xh, *ln2_r, *f, *gl;
    double *ln1_t, *y_t, *ln2_t, *gl_t; /* token-major copies (N,·,k) of the linear layers' inputs */
} layer_racts;
typedef struct {
    const double *ln1, *ln1_xh, *ln1_r, *q, *key, *v, *att, *y, *ln2, *ln2_xh, *ln2_r, *f, *gl;
    const double *ln1_t, *y_t, *ln2_t, *gl_t;
} layer_rlive;

typedef struct rwork rwork;

typedef struct {
    tt_config c;
    int (*slot)[L_NSLOT];    /* tensor index of each layer slot, -1 if absent */
    int t_wte, t_wpe, t_lnfw, t_lnfb, t_lm; /* t_lm -1 when tied */
    int t_head;              /* the tensor the output head reads: lm_head, or wte when tied */

    /* batch */
    int B, N;                /* N = B·T */
    int *tokens;             /* (B,T+1) */
    int *inp, *tgt;          /* (N) */

    /* base activations */
    double *abuf;
    double **res;            /* res[l] (N,C), l = 0..L: the residual stream entering layer l */
    double **dres;           /* dres[l]: gradient wrt res[l] */
    layer_acts *la;
    double *lnf, *lnf_xh, *lnf_r, *logits, *probs, *losses, *dlnf, *dlogits;
    double *gbuf;            /* parameter gradient of the base backward (P) */
    double *base_params;     /* (P) the parameters the base activations belong to */
    int base_ok;             /* base activations, their gradients and g1, g2d are those of base_params */
    int gauss_newton;        /* tt_set_gauss_newton: the R-pass gives G v instead of H v */

    /* R workspaces, one per worker thread */
    rwork **work;
    int nwork;
    int kp_max, bc_set;      /* tt_set_hvp_blocking; 0 = automatic */
    int threads;             /* tt_set_threads; 0 = toolkit_threads() */
} tt_impl;

tt_config tt_defaults(void)
{
    return (tt_config){.V = 8, .C = 16, .heads = 4, .M = 32, .layers = 1, .T = 8, .bias = 1, .tied = 0, .seed = 1};
}

void tt_check_config(const tt_config *c)
{
    if (c->V < 2 || c->V > 65536) die_user("vocabulary size V must be in 2..65536 (got %d)", c->V);
    if (c->C < 1 || c->C > 4096) die_user("width C must be in 1..4096 (got %d)", c->C);
    if (c->heads < 1 || c->C % c->heads) die_user("heads must be >= 1 and divide C = %d (got %d)", c->C, c->heads);
    if (c->M < 1 || c->M > 16384) die_user("MLP width M must be in 1..16384 (got %d)", c->M);
    if (c->layers < 1 || c->layers > 64) die_user("layers must be in 1..64 (got %d)", c->layers);
    if (c->T < 1 || c->T > 1024) die_user("context length T must be in 1..1024 (got %d)", c->T);
    if (c->bias != 0 && c->bias != 1) die_user("bias must be 0 or 1 (got %d)", c->bias);
    if (c->tied != 0 && c->tied != 1) die_user("tied must be 0 or 1 (got %d)", c->tied);
}

/* ---- the tensor table ------------------------------------------------------------------ */

static void build_table(model *m, tt_impl *im)
{
    const tt_config *c = &im->c;
    int C = c->C, M = c->M, V = c->V;
    im->t_wte = model_add_tensor(m, "wte", ROLE_EMBED, V, C, 1, -1);
    im->t_wpe = model_add_tensor(m, "wpe", ROLE_POS, c->T, C, 1, -1);
    im->slot = xmalloc((size_t)c->layers * sizeof *im->slot);
    static const char *names[L_NSLOT] = {
        "ln_1.weight", "ln_1.bias", "attn.query", "attn.query.bias", "attn.key", "attn.key.bias",
        "attn.value", "attn.value.bias", "attn.proj", "attn.proj.bias", "ln_2.weight", "ln_2.bias",
        "mlp.fc_1", "mlp.fc_1.bias", "mlp.proj", "mlp.proj.bias"};
    static const tensor_role roles[L_NSLOT] = {
        ROLE_NORM, ROLE_BIAS, ROLE_QUERY, ROLE_BIAS, ROLE_KEY, ROLE_BIAS, ROLE_VALUE, ROLE_BIAS,
        ROLE_ATTN_PROJ, ROLE_BIAS, ROLE_NORM, ROLE_BIAS, ROLE_MLP_FC, ROLE_BIAS, ROLE_MLP_PROJ, ROLE_BIAS};
    for (int l = 0; l < c->layers; l++)
        for (int s = 0; s < L_NSLOT; s++) {
            im->slot[l][s] = -1;
            if (roles[s] == ROLE_BIAS && !c->bias) continue;
            int rows = (s == L_FC || s == L_FCB) ? M : C;
            int cols = (roles[s] == ROLE_BIAS || roles[s] == ROLE_NORM) ? 1 : (s == L_MP ? M : C);
            int heads = (s == L_Q || s == L_K || s == L_V) ? c->heads : 1;
            char name[48];
            snprintf(name, sizeof name, "h%d.%s", l, names[s]);
            im->slot[l][s] = model_add_tensor(m, name, roles[s], rows, cols, heads, l);
        }
    im->t_lnfw = model_add_tensor(m, "ln_f.weight", ROLE_NORM, C, 1, 1, -1);
    im->t_lnfb = c->bias ? model_add_tensor(m, "ln_f.bias", ROLE_BIAS, C, 1, 1, -1) : -1;
    im->t_lm = c->tied ? -1 : model_add_tensor(m, "lm_head", ROLE_OUTPUT, V, C, 1, -1);
    im->t_head = c->tied ? im->t_wte : im->t_lm;
}

size_t tt_param_count(const tt_config *c)
{
    size_t C = c->C, M = c->M, V = c->V, b = c->bias ? 1 : 0;
    size_t layer = 2 * C + 2 * C * b                   /* LayerNorms */
                   + 4 * (C * C + C * b)               /* query, key, value, proj */
                   + (M * C + M * b) + (C * M + C * b); /* MLP */
    return V * C + (size_t)c->T * C + (size_t)c->layers * layer + C + C * b + (c->tied ? 0 : V * C);
}

static tt_impl *impl_of(const model *m)
{
    if (!m || !m->kind || strcmp(m->kind, "tinytransformer") != 0) DIE("not a tinytransformer model");
    return m->impl;
}

const tt_config *tt_config_of(const model *m) { return &impl_of(m)->c; }

/* Parameter (or R-parameter, gradient) pointer of tensor t in buffer x; NULL if absent. */
static double *at(const model *m, double *x, int t) { return t < 0 ? NULL : x + m->tensors[t].offset; }
static const double *cat(const model *m, const double *x, int t) { return t < 0 ? NULL : x + m->tensors[t].offset; }

void tt_init_params(model *m, unsigned long seed)
{
    gsl_rng *r = rng_new(seed);
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        double *p = m->params + ti->offset;
        size_t n = tensor_size(ti);
        for (size_t i = 0; i < n; i++)
            p[i] = ti->role == ROLE_NORM ? 1.0 : ti->role == ROLE_BIAS ? 0.0 : rng_gaussian(r, 0.02);
    }
    rng_free(r);
}

/* ---- embedding and cross-entropy (small, kept here) ------------------------------------ */

static void embed_forward(double *x /*(N,C)*/, const int *inp /*(N)*/, const double *wte /*(V,C)*/,
                          const double *wpe /*(T,C)*/, int N, int T, int C)
{
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            x[(size_t)n * C + c] = wte[(size_t)inp[n] * C + c] + wpe[(size_t)(n % T) * C + c];
}

static void embed_backward(double *dwte, double *dwpe, const double *dx /*(N,C)*/, const int *inp, int N, int T, int C)
{
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++) {
            dwte[(size_t)inp[n] * C + c] += dx[(size_t)n * C + c];
            dwpe[(size_t)(n % T) * C + c] += dx[(size_t)n * C + c];
        }
}

/* R{x} = R{wte}[inp[n]] + R{wpe}[t], direction-minor (tt_dirminor.c): dense and/or unit directions. */
static void embed_rop(double *Rx /*(C,N,k)*/, const int *inp, tt_rpar rwte, tt_rpar rwpe, int N, int T, int C, int k)
{
    size_t RN = tt_dm_ld(N, k);
    memset(Rx, 0, C * RN * sizeof(double));
    for (int c = 0; c < C; c++)
        for (int n = 0; n < N; n++) {
            double *restrict r = Rx + c * RN + (size_t)n * k;
            if (rwte.v) {
                const double *restrict x = rwte.v + ((size_t)inp[n] * C + c) * k;
                for (int d = 0; d < k; d++) r[d] += x[d];
            }
            if (rwpe.v) {
                const double *restrict x = rwpe.v + ((size_t)(n % T) * C + c) * k;
                for (int d = 0; d < k; d++) r[d] += x[d];
            }
        }
    for (int d = rwte.d0; d < rwte.d1; d++) { /* e_(token, c) */
        long e = rwte.e0 + (d - rwte.d0);
        for (int n = 0; n < N; n++)
            if (inp[n] == e / C) Rx[(e % C) * RN + (size_t)n * k + d] += 1;
    }
    for (int d = rwpe.d0; d < rwpe.d1; d++) { /* e_(position, c) */
        long e = rwpe.e0 + (d - rwpe.d0);
        for (int n = e / C; n < N; n += T) Rx[(e % C) * RN + (size_t)n * k + d] += 1;
    }
}

/* The embedding is linear in its parameters and its input is discrete, so
 * R{dwte} and R{dwpe} only route R{dx}. Either output may be NULL (not wanted). */
static void embed_rop_backward(double *gwte /*(V*C,k)*/, double *gwpe /*(T*C,k)*/, const double *Rdx /*(C,N,k)*/,
                               const int *inp, int N, int T, int C, int k)
{
    size_t RN = tt_dm_ld(N, k);
    for (int c = 0; c < C; c++)
        for (int n = 0; n < N; n++) {
            const double *restrict r = Rdx + c * RN + (size_t)n * k;
            if (gwte) {
                double *restrict g = gwte + ((size_t)inp[n] * C + c) * k;
                for (int d = 0; d < k; d++) g[d] += r[d];
            }
            if (gwpe) {
                double *restrict g = gwpe + ((size_t)(n % T) * C + c) * k;
                for (int d = 0; d < k; d++) g[d] += r[d];
            }
        }
}

/* probs = softmax(logits); returns Σ_n −log probs[n, tgt[n]]; per-position losses. */
static double crossentropy_forward(double *probs /*(N,V)*/, double *losses /*(N)*/, const double *logits /*(N,V)*/,
                                   const int *tgt, int N, int V)
{
    double sum = 0;
    for (int n = 0; n < N; n++) {
        const double *z = logits + (size_t)n * V;
        double *p = probs + (size_t)n * V, mx = z[0], s = 0;
        for (int v = 1; v < V; v++) mx = z[v] > mx ? z[v] : mx;
        for (int v = 0; v < V; v++) s += (p[v] = exp(z[v] - mx));
        for (int v = 0; v < V; v++) p[v] /= s;
        losses[n] = -(z[tgt[n]] - mx - log(s));
        sum += losses[n];
    }
    return sum;
}

/* dlogits = scale (p − onehot(tgt)). */
static void crossentropy_backward(double *dlogits, const double *probs, const int *tgt, double scale, int N, int V)
{
    for (int n = 0; n < N; n++)
        for (int v = 0; v < V; v++)
            dlogits[(size_t)n * V + v] = scale * (probs[(size_t)n * V + v] - (v == tgt[n]));
}

/* R{dlogits} = scale p ⊙ (R{z} − Σ_v p R{z}) (the softmax Jacobian; onehot is constant). */
static void crossentropy_rop(double *Rdlogits /*(V,N,k)*/, double *Rdlogits_t /*(N,V,k)*/,
                             const double *Rlogits /*(V,N,k)*/, const double *probs, double scale, int N, int V, int k)
{
    size_t RN = tt_dm_ld(N, k), LT = tt_dm_ldt(V, k);
    double *mean = xmalloc((size_t)k * sizeof(double));
    for (int n = 0; n < N; n++) {
        const double *p = probs + (size_t)n * V;
        memset(mean, 0, (size_t)k * sizeof(double));
        for (int v = 0; v < V; v++) {
            const double *restrict rz = Rlogits + v * RN + (size_t)n * k;
            for (int d = 0; d < k; d++) mean[d] += p[v] * rz[d];
        }
        for (int v = 0; v < V; v++) {
            const double *restrict rz = Rlogits + v * RN + (size_t)n * k;
            double *restrict o = Rdlogits + v * RN + (size_t)n * k, *restrict ot = Rdlogits_t + n * LT + (size_t)v * k;
            double a = scale * p[v];
            for (int d = 0; d < k; d++) ot[d] = o[d] = a * (rz[d] - mean[d]);
        }
    }
    free(mean);
}

/* ---- base forward and backward --------------------------------------------------------- */

static double *carve(double **cursor, size_t n)
{
    double *p = *cursor;
    *cursor += n;
    return p;
}

/* Doubles of the base activations and their gradients for a batch of B sequences. */
static double acts_doubles(const tt_config *c, int B)
{
    double N = (double)B * c->T, C = c->C, M = c->M, V = c->V, L = c->layers;
    double A = (double)B * c->heads * c->T * c->T;
    double per_layer = 16 * N * C + 2 * N + 6 * N * M + 2 * A;
    return (L + 1) * N * C * 2 + L * per_layer + 3 * N * C + N + 3 * N * V + N;
}

double tt_batch_bytes(const tt_config *c, int B)
{
    return 8.0 * acts_doubles(c, B) + 12.0 * (double)B * (c->T + 1); /* + tokens, inputs, targets */
}

static void alloc_acts(tt_impl *im)
{
    const tt_config *c = &im->c;
    size_t N = im->N, C = c->C, M = c->M, V = c->V, L = c->layers;
    size_t A = (size_t)im->B * c->heads * c->T * c->T;
    size_t per_layer = 16 * N * C + 2 * N + 6 * N * M + 2 * A;
    size_t total = (L + 1) * N * C * 2 + L * per_layer + 3 * N * C + N + 3 * N * V + N;
    im->abuf = xmalloc(checked_mul(total, sizeof(double), "activations"));
    double *cur = im->abuf;
    im->res = xmalloc((L + 1) * sizeof(double *));
    im->dres = xmalloc((L + 1) * sizeof(double *));
    im->la = xcalloc(L, sizeof(layer_acts));
    for (size_t l = 0; l <= L; l++) {
        im->res[l] = carve(&cur, N * C);
        im->dres[l] = carve(&cur, N * C);
    }
    for (size_t l = 0; l < L; l++) {
        layer_acts *a = &im->la[l];
        a->ln1 = carve(&cur, N * C), a->ln1_xh = carve(&cur, N * C), a->ln1_r = carve(&cur, N);
        a->q = carve(&cur, N * C), a->key = carve(&cur, N * C), a->v = carve(&cur, N * C);
        a->att = carve(&cur, A), a->y = carve(&cur, N * C), a->x1 = carve(&cur, N * C);
        a->ln2 = carve(&cur, N * C), a->ln2_xh = carve(&cur, N * C), a->ln2_r = carve(&cur, N);
        a->f = carve(&cur, N * M), a->gl = carve(&cur, N * M);
        a->dln1 = carve(&cur, N * C), a->dq = carve(&cur, N * C), a->dkey = carve(&cur, N * C);
        a->dv = carve(&cur, N * C), a->dpc = carve(&cur, A), a->dy = carve(&cur, N * C);
        a->dx1 = carve(&cur, N * C), a->dln2 = carve(&cur, N * C), a->df = carve(&cur, N * M);
        a->dgl = carve(&cur, N * M);
        a->g1 = carve(&cur, N * M), a->g2d = carve(&cur, N * M);
    }
    im->lnf = carve(&cur, N * C), im->lnf_xh = carve(&cur, N * C), im->lnf_r = carve(&cur, N);
    im->dlnf = carve(&cur, N * C);
    im->logits = carve(&cur, N * V), im->probs = carve(&cur, N * V), im->dlogits = carve(&cur, N * V);
    im->losses = carve(&cur, N);
    if ((size_t)(cur - im->abuf) != total) DIE("activation layout: %zu of %zu", (size_t)(cur - im->abuf), total);
}

static double forward(model *m)
{
    tt_impl *im = m->impl;
    const tt_config *c = &im->c;
    if (!im->B) die_user("tinytransformer: no batch set (call tt_set_batch first)");
    im->base_ok = 0; /* the activations are about to be those of the current params */
    int N = im->N, C = c->C, M = c->M, T = c->T, H = c->heads;
    const double *w = m->params;
    embed_forward(im->res[0], im->inp, cat(m, w, im->t_wte), cat(m, w, im->t_wpe), N, T, C);
    for (int l = 0; l < c->layers; l++) {
        layer_acts *a = &im->la[l];
        const int *s = im->slot[l];
        tt_layernorm_forward(a->ln1, a->ln1_xh, a->ln1_r, im->res[l], cat(m, w, s[L_LN1W]), cat(m, w, s[L_LN1B]), N, C);
        tt_linear_forward(a->q, a->ln1, cat(m, w, s[L_Q]), cat(m, w, s[L_QB]), N, C, C);
        tt_linear_forward(a->key, a->ln1, cat(m, w, s[L_K]), cat(m, w, s[L_KB]), N, C, C);
        tt_linear_forward(a->v, a->ln1, cat(m, w, s[L_V]), cat(m, w, s[L_VB]), N, C, C);
        tt_attention_forward(a->y, a->att, a->q, a->key, a->v, im->B, T, C, H);
        tt_linear_forward(a->x1, a->y, cat(m, w, s[L_O]), cat(m, w, s[L_OB]), N, C, C);
        for (size_t i = 0; i < (size_t)N * C; i++) a->x1[i] += im->res[l][i];
        tt_layernorm_forward(a->ln2, a->ln2_xh, a->ln2_r, a->x1, cat(m, w, s[L_LN2W]), cat(m, w, s[L_LN2B]), N, C);
        tt_linear_forward(a->f, a->ln2, cat(m, w, s[L_FC]), cat(m, w, s[L_FCB]), N, C, M);
        tt_gelu_forward(a->gl, a->f, (size_t)N * M);
        tt_linear_forward(im->res[l + 1], a->gl, cat(m, w, s[L_MP]), cat(m, w, s[L_MPB]), N, M, C);
        for (size_t i = 0; i < (size_t)N * C; i++) im->res[l + 1][i] += a->x1[i];
    }
    tt_layernorm_forward(im->lnf, im->lnf_xh, im->lnf_r, im->res[c->layers], cat(m, w, im->t_lnfw),
                         cat(m, w, im->t_lnfb), N, C);
    tt_linear_forward(im->logits, im->lnf, cat(m, w, im->t_head), NULL, N, C, c->V);
    return crossentropy_forward(im->probs, im->losses, im->logits, im->tgt, N, c->V) / N;
}

/* Gradient into g (length P, overwritten); keeps the activation gradients. */
static void backward(model *m, double *g)
{
    tt_impl *im = m->impl;
    const tt_config *c = &im->c;
    int N = im->N, C = c->C, M = c->M, T = c->T, H = c->heads, L = c->layers;
    size_t NC = (size_t)N * C;
    const double *w = m->params;
    memset(g, 0, m->P * sizeof(double));
    crossentropy_backward(im->dlogits, im->probs, im->tgt, 1.0 / N, N, c->V);
    memset(im->dlnf, 0, NC * sizeof(double));
    /* tied: the head's gradient goes into wte; embed_backward adds the embedding's */
    tt_linear_backward(im->dlnf, at(m, g, im->t_head), NULL, im->dlogits, im->lnf, cat(m, w, im->t_head), N, C, c->V);
    memset(im->dres[L], 0, NC * sizeof(double));
    tt_layernorm_backward(im->dres[L], at(m, g, im->t_lnfw), at(m, g, im->t_lnfb), im->dlnf, im->lnf_xh, im->lnf_r,
                          cat(m, w, im->t_lnfw), N, C);
    for (int l = L - 1; l >= 0; l--) {
        layer_acts *a = &im->la[l];
        const int *s = im->slot[l];
        const double *dout = im->dres[l + 1]; /* res[l+1] = x1 + mlp */
        memset(a->dgl, 0, (size_t)N * M * sizeof(double));
        tt_linear_backward(a->dgl, at(m, g, s[L_MP]), at(m, g, s[L_MPB]), dout, a->gl, cat(m, w, s[L_MP]), N, M, C);
        tt_gelu_backward(a->df, a->dgl, a->f, (size_t)N * M);
        memset(a->dln2, 0, NC * sizeof(double));
        tt_linear_backward(a->dln2, at(m, g, s[L_FC]), at(m, g, s[L_FCB]), a->df, a->ln2, cat(m, w, s[L_FC]), N, C, M);
        memcpy(a->dx1, dout, NC * sizeof(double));
        tt_layernorm_backward(a->dx1, at(m, g, s[L_LN2W]), at(m, g, s[L_LN2B]), a->dln2, a->ln2_xh, a->ln2_r,
                              cat(m, w, s[L_LN2W]), N, C);
        memset(a->dy, 0, NC * sizeof(double));
        tt_linear_backward(a->dy, at(m, g, s[L_O]), at(m, g, s[L_OB]), a->dx1, a->y, cat(m, w, s[L_O]), N, C, C);
        tt_attention_backward(a->dq, a->dkey, a->dv, a->dpc, a->dy, a->q, a->key, a->v, a->att, im->B, T, C, H);
        memset(a->dln1, 0, NC * sizeof(double));
        tt_linear_backward(a->dln1, at(m, g, s[L_Q]), at(m, g, s[L_QB]), a->dq, a->ln1, cat(m, w, s[L_Q]), N, C, C);
        tt_linear_backward(a->dln1, at(m, g, s[L_K]), at(m, g, s[L_KB]), a->dkey, a->ln1, cat(m, w, s[L_K]), N, C, C);
        tt_linear_backward(a->dln1, at(m, g, s[L_V]), at(m, g, s[L_VB]), a->dv, a->ln1, cat(m, w, s[L_V]), N, C, C);
        memcpy(im->dres[l], a->dx1, NC * sizeof(double));
        tt_layernorm_backward(im->dres[l], at(m, g, s[L_LN1W]), at(m, g, s[L_LN1B]), a->dln1, a->ln1_xh, a->ln1_r,
                              cat(m, w, s[L_LN1W]), N, C);
    }
    embed_backward(at(m, g, im->t_wte), at(m, g, im->t_wpe), im->dres[0], im->inp, N, T, C);
}

static double tt_loss_fn(model *m) { return forward(m); }

static double tt_grad_fn(model *m, double *g)
{
    double loss = forward(m);
    backward(m, g);
    return loss;
}

double tt_forward(model *m, double *logits, double *losses)
{
    tt_impl *im = impl_of(m);
    double loss = forward(m);
    if (logits) memcpy(logits, im->logits, (size_t)im->N * im->c.V * sizeof(double));
    if (losses) memcpy(losses, im->losses, (size_t)im->N * sizeof(double));
    return loss;
}

/* ---- R workspace (one per worker thread) ---------------------------------------------------- */

#define KP_MAX 32        /* directions per sub-panel */
#define ROWS_TARGET 1024 /* chunk columns bc·T·kp aimed at (keeps the workspace cache-sized) */

/* One tensor as the R-pass of a sub-panel sees it (bind_rtensors). An absent
 * tensor (a bias of a model without biases) has t = -1, zero R-parameters and
 * NULL pointers. */
typedef struct {
    int t;             /* tensor index */
    const double *w;   /* its parameters */
    tt_rpar r;         /* its R-parameters R{θ} in the sub-panel */
    double *g;         /* its rows of R{∇θ} = H v in G, (size,k) direction-minor; NULL if not wanted (t < stop) */
    double *gt;        /* weight matrices: the transposed half of R{dW} in Gt; NULL likewise */
} rtensor;

/* The tensors of one layer, named after the tensor table ("h<l>.attn.query" ...). */
typedef struct {
    rtensor ln1_w, ln1_b;                  /* ln_1.weight, ln_1.bias */
    rtensor query_w, query_b, key_w, key_b, value_w, value_b;
    rtensor attn_proj_w, attn_proj_b;
    rtensor ln2_w, ln2_b;                  /* ln_2.weight, ln_2.bias */
    rtensor fc_w, fc_b;                    /* mlp.fc_1 */
    rtensor mlp_proj_w, mlp_proj_b;
} layer_rtensors;

typedef struct {
    rtensor wte, wpe;
    layer_rtensors *layer;   /* per layer */
    rtensor lnf_w, lnf_b, lm_head;
} rtensors;

struct rwork {
    int kp, bc;              /* sub-panel width, sequences per chunk */
    double *buf;
    layer_racts *ra;         /* per layer: storage */
    layer_rlive *live;       /* per layer: what is nonzero in this pass (else NULL) */
    const double *lnf, *lnf_xh, *lnf_r, *lnf_t; /* likewise after the final LayerNorm: R{lnf}, R{x̂}, R{r}, copy */
    double *Rres, *Rlnf, *Rlnf_xh, *Rlnf_r, *Rlnf_t, *Rlogits, *Rdlogits;
    double *Rdres, *Rdln, *Rdgl, *Rdf, *Rdy, *Rdq, *Rdkey, *Rdv;
    double *Rdlogits_t, *Rdres_t, *Rdf_t, *Rdq_t, *Rdkey_t, *Rdv_t; /* token-major copies of R{dout} */
    double *G;               /* (P,kp) R{∇θ} of the sub-panel, direction-minor */
    double *Gt;              /* (P,kp) the transposed half of R{dW} of each weight matrix (IC,OC,kp) */
    double *Vt;              /* (P,kp) dense directions, direction-minor */
    tt_rpar *rp;             /* per tensor: its R-parameters in the current sub-panel */
    rtensors rt;             /* every tensor bound for the current sub-panel */
};

static void rwork_free(rwork *w)
{
    if (!w) return;
    free(w->buf), free(w->ra), free(w->live), free(w->G), free(w->Gt), free(w->Vt), free(w->rp), free(w->rt.layer);
    free(w);
}

static void free_rwork(tt_impl *im)
{
    for (int i = 0; i < im->nwork; i++) rwork_free(im->work[i]);
    free(im->work);
    im->work = NULL;
    im->nwork = 0;
}

/* Sub-panels of k directions run padded to a multiple of TT_KBLOCK (zero directions). */
static int padded(int k) { return (k + TT_KBLOCK - 1) / TT_KBLOCK * TT_KBLOCK; }

static rwork *rwork_new(const model *m, int kp, int bc)
{
    const tt_impl *im = m->impl;
    const tt_config *c = &im->c;
    rwork *w = xcalloc(1, sizeof(rwork));
    w->kp = kp;
    w->bc = bc;
    kp = padded(kp);
    /* R: the row length of one feature of an R-quantity */
    size_t R = tt_dm_ld(bc * c->T, kp), C = c->C, M = c->M, V = c->V, L = c->layers;
    size_t A = (size_t)bc * c->heads * kp * c->T * c->T;
    /* token-major copies: N rows of tt_dm_ldt(width, kp) */
    size_t NT = (size_t)bc * c->T, TC = NT * tt_dm_ldt(c->C, kp), TM = NT * tt_dm_ldt(c->M, kp);
    size_t TV = NT * tt_dm_ldt(c->V, kp);
    size_t per_layer = 8 * R * C + 2 * R + 2 * R * M + A + 3 * TC + TM;
    size_t total = L * per_layer + R * C /*Rres*/ + 2 * R * C + R + TC + 2 * R * V + 6 * R * C + 2 * R * M + TV +
                   4 * TC + TM;
    w->buf = xmalloc(checked_mul(total, sizeof(double), "R workspace"));
    double *cur = w->buf;
    w->ra = xcalloc(L, sizeof(layer_racts));
    w->live = xcalloc(L, sizeof(layer_rlive));
    for (size_t l = 0; l < L; l++) {
        layer_racts *r = &w->ra[l];
        r->ln1 = carve(&cur, R * C), r->ln1_xh = carve(&cur, R * C), r->ln1_r = carve(&cur, R);
        r->q = carve(&cur, R * C), r->key = carve(&cur, R * C), r->v = carve(&cur, R * C);
        r->att = carve(&cur, A), r->y = carve(&cur, R * C);
        r->ln2 = carve(&cur, R * C), r->ln2_xh = carve(&cur, R * C), r->ln2_r = carve(&cur, R);
        r->f = carve(&cur, R * M), r->gl = carve(&cur, R * M);
        r->ln1_t = carve(&cur, TC), r->y_t = carve(&cur, TC), r->ln2_t = carve(&cur, TC), r->gl_t = carve(&cur, TM);
    }
    w->Rres = carve(&cur, R * C);
    w->Rlnf = carve(&cur, R * C), w->Rlnf_xh = carve(&cur, R * C), w->Rlnf_r = carve(&cur, R);
    w->Rlnf_t = carve(&cur, TC);
    w->Rlogits = carve(&cur, R * V), w->Rdlogits = carve(&cur, R * V);
    w->Rdres = carve(&cur, R * C), w->Rdln = carve(&cur, R * C), w->Rdy = carve(&cur, R * C);
    w->Rdq = carve(&cur, R * C), w->Rdkey = carve(&cur, R * C), w->Rdv = carve(&cur, R * C);
    w->Rdgl = carve(&cur, R * M), w->Rdf = carve(&cur, R * M);
    w->Rdlogits_t = carve(&cur, TV), w->Rdres_t = carve(&cur, TC), w->Rdf_t = carve(&cur, TM);
    w->Rdq_t = carve(&cur, TC), w->Rdkey_t = carve(&cur, TC), w->Rdv_t = carve(&cur, TC);
    if ((size_t)(cur - w->buf) != total) DIE("R workspace layout: %zu of %zu", (size_t)(cur - w->buf), total);
    w->G = xmalloc(checked_mul(checked_mul((size_t)kp, m->P, "R-gradient panel"), sizeof(double), "R-gradient panel"));
    w->Gt = xmalloc((size_t)kp * m->P * sizeof(double));
    w->Vt = xmalloc((size_t)kp * m->P * sizeof(double));
    w->rp = xcalloc((size_t)m->ntensors, sizeof(tt_rpar));
    w->rt.layer = xcalloc(L, sizeof(layer_rtensors));
    return w;
}

/* Workspaces for n workers with sub-panels of kp directions. */
static void ensure_work(model *m, int n, int kp)
{
    tt_impl *im = m->impl;
    int bc = im->bc_set ? im->bc_set : ROWS_TARGET / (im->c.T * padded(kp));
    if (bc < 1) bc = 1;
    if (bc > im->B) bc = im->B;
    if (im->nwork >= n && im->work[0]->kp == kp && im->work[0]->bc == bc) return;
    free_rwork(im);
    im->work = xmalloc((size_t)n * sizeof(rwork *));
    for (int i = 0; i < n; i++) im->work[i] = rwork_new(m, kp, bc);
    im->nwork = n;
}

/* ---- the R-pass over one chunk of sequences ----------------------------------------------
 * k directions (their R-parameters per tensor in w->rp, bound to w->rt),
 * chunk: sequences b0..b0+bc-1; R{∇θ} accumulates into w->G (direction-minor).
 * An R-activation that is identically zero (nothing upstream perturbed) stays
 * NULL and the kernels skip its terms. stop: R{∇θ} is wanted only for tensors
 * >= stop (tensor index; tensors are numbered in forward order), so the
 * R-backward returns as soon as it has passed tensor stop
 * (tt_hess_cols_lower), and it computes the R-gradient of a layer's input
 * only when a tensor before the layer is wanted (stop < t). */

static const tt_rpar no_rpar;
static const rtensor no_tensor = {.t = -1};

/* Tensor t (-1: absent) as the R-pass of the current sub-panel of k directions sees it. */
static rtensor bind_rtensor(const model *m, const rwork *w, int t, int k, int stop)
{
    rtensor x = no_tensor;
    if (t < 0) return x;
    size_t o = m->tensors[t].offset;
    x.t = t;
    x.w = m->params + o;
    x.r = w->rp[t];
    if (t >= stop) {
        x.g = w->G + o * (size_t)k;
        x.gt = w->Gt + o * (size_t)k;
    }
    return x;
}

/* Binds every tensor, once per sub-panel (after w->rp is set). */
static void bind_rtensors(const model *m, rwork *w, int k, int stop)
{
    const tt_impl *im = m->impl;
    rtensors *rt = &w->rt;
    rt->wte = bind_rtensor(m, w, im->t_wte, k, stop);
    rt->wpe = bind_rtensor(m, w, im->t_wpe, k, stop);
    for (int l = 0; l < im->c.layers; l++) {
        const int *s = im->slot[l];
        rt->layer[l] = (layer_rtensors){
            .ln1_w = bind_rtensor(m, w, s[L_LN1W], k, stop),
            .ln1_b = bind_rtensor(m, w, s[L_LN1B], k, stop),
            .query_w = bind_rtensor(m, w, s[L_Q], k, stop),
            .query_b = bind_rtensor(m, w, s[L_QB], k, stop),
            .key_w = bind_rtensor(m, w, s[L_K], k, stop),
            .key_b = bind_rtensor(m, w, s[L_KB], k, stop),
            .value_w = bind_rtensor(m, w, s[L_V], k, stop),
            .value_b = bind_rtensor(m, w, s[L_VB], k, stop),
            .attn_proj_w = bind_rtensor(m, w, s[L_O], k, stop),
            .attn_proj_b = bind_rtensor(m, w, s[L_OB], k, stop),
            .ln2_w = bind_rtensor(m, w, s[L_LN2W], k, stop),
            .ln2_b = bind_rtensor(m, w, s[L_LN2B], k, stop),
            .fc_w = bind_rtensor(m, w, s[L_FC], k, stop),
            .fc_b = bind_rtensor(m, w, s[L_FCB], k, stop),
            .mlp_proj_w = bind_rtensor(m, w, s[L_MP], k, stop),
            .mlp_proj_b = bind_rtensor(m, w, s[L_MPB], k, stop),
        };
    }
    rt->lnf_w = bind_rtensor(m, w, im->t_lnfw, k, stop);
    rt->lnf_b = bind_rtensor(m, w, im->t_lnfb, k, stop);
    rt->lm_head = bind_rtensor(m, w, im->t_head, k, stop);
    /* tied: the head's R-parameters and R-gradient rows are wte's (both uses add
     * into them), but in the order of the pass it comes last, after ln_f */
    if (im->c.tied) rt->lm_head.t = m->ntensors;
}

/* The base activations of a layer for one chunk: every (N,·) array from token
 * n0 on, att and dpc (B,H,T,T) from entry A0 (the chunk's first sequence). */
static layer_acts chunk_acts(const layer_acts *a, size_t n0, size_t A0, size_t C, size_t M)
{
    return (layer_acts){
        .ln1 = a->ln1 + n0 * C, .ln1_xh = a->ln1_xh + n0 * C, .ln1_r = a->ln1_r + n0,
        .q = a->q + n0 * C, .key = a->key + n0 * C, .v = a->v + n0 * C,
        .att = a->att + A0, .y = a->y + n0 * C, .x1 = a->x1 + n0 * C,
        .ln2 = a->ln2 + n0 * C, .ln2_xh = a->ln2_xh + n0 * C, .ln2_r = a->ln2_r + n0,
        .f = a->f + n0 * M, .gl = a->gl + n0 * M,
        .dln1 = a->dln1 + n0 * C, .dq = a->dq + n0 * C, .dkey = a->dkey + n0 * C,
        .dv = a->dv + n0 * C, .dpc = a->dpc + A0, .dy = a->dy + n0 * C,
        .dx1 = a->dx1 + n0 * C, .dln2 = a->dln2 + n0 * C, .df = a->df + n0 * M,
        .dgl = a->dgl + n0 * M, .g1 = a->g1 + n0 * M, .g2d = a->g2d + n0 * M,
    };
}

/* R{out} of a linear layer (weight W, bias b) from R{inp} (NULL: zero) and the
 * layer's R-parameters; NULL when all are zero. */
static double *linear_rop(double *Rout, const double *Rinp, const double *inp, const rtensor *W, const rtensor *b,
                          int N, int IC, int OC, int k)
{
    if (!Rinp && !tt_rpar_live(&W->r) && !tt_rpar_live(&b->r)) return NULL;
    tt_dm_linear_rop(Rout, 0, Rinp, inp, W->w, W->r, b->r, N, IC, OC, k);
    return Rout;
}

/* The residual stream Rres += R{linear}; returns whether Rres is now nonzero. */
static int residual_rop(double *Rres, int res_live, const double *Rinp, const double *inp, const rtensor *W,
                        const rtensor *b, int N, int IC, int OC, int k)
{
    if (!Rinp && !tt_rpar_live(&W->r) && !tt_rpar_live(&b->r)) return res_live;
    tt_dm_linear_rop(Rres, res_live, Rinp, inp, W->w, W->r, b->r, N, IC, OC, k);
    return 1;
}

/* LayerNorm (gain g, bias b) R-forward into out (and its token-major copy
 * out_t), xh, r; sets *Rout, *Rout_t, *Rxh, *Rr to them or NULL (zero). */
static void layernorm_rop(double *out, double *out_t, double *xh, double *r, const double **Rout,
                          const double **Rout_t, const double **Rxh, const double **Rr, const double *Rinp,
                          const double *bxh, const double *brstd, const rtensor *g, const rtensor *b, int N, int C,
                          int k)
{
    *Rout = *Rout_t = *Rxh = *Rr = NULL;
    if (!Rinp && !tt_rpar_live(&g->r) && !tt_rpar_live(&b->r)) return;
    tt_dm_layernorm_rop(out, out_t, xh, r, Rinp, bxh, brstd, g->w, g->r, b->r, N, C, k);
    *Rout = out;
    *Rout_t = out_t;
    if (Rinp) *Rxh = xh, *Rr = r;
}

/* R-backward of a linear layer: R{dinp} (NULL: not wanted; acc 1 adds to it)
 * and the R-gradients of W and b (their g, gt: NULL when not wanted). */
static void linear_rop_backward(double *Rdinp, int acc, const double *Rdout, const double *Rdout_t,
                                const double *dout, const double *inp, const double *Rinp_t, const rtensor *W,
                                const rtensor *b, int N, int IC, int OC, int k)
{
    tt_dm_linear_rop_backward(Rdinp, acc, W->g, W->gt, b->g, Rdout, Rdout_t, dout, inp, Rinp_t, W->w, W->r, N, IC,
                              OC, k);
}

/* R-backward of a LayerNorm: R{dinp} and its token-major copy (Rdinp NULL: not
 * wanted; acc 1 adds to it), and the R-gradients of g and b. */
static void layernorm_rop_backward(double *Rdinp, double *Rdinp_t, int acc, const double *Rdout, const double *dout,
                                   const double *xh, const double *rstd, const double *Rxh, const double *Rr,
                                   const rtensor *g, const rtensor *b, int N, int C, int k)
{
    tt_dm_layernorm_rop_backward(Rdinp, Rdinp_t, acc, g->g, b->g, Rdout, dout, xh, rstd, Rxh, Rr, g->w, g->r, N, C,
                                 k);
}

/* The last tensor of a weight and its bias (-1: absent). */
static int last_of(const rtensor *W, const rtensor *b) { return b->t >= 0 ? b->t : W->t; }

static void rpass(model *m, rwork *w, int k, int b0, int bc, int stop)
{
    tt_impl *im = m->impl;
    const tt_config *c = &im->c;
    const rtensors *rt = &w->rt;
    int T = c->T, C = c->C, M = c->M, H = c->heads, L = c->layers, Vv = c->V;
    int N = bc * T;
    size_t n0 = (size_t)b0 * T, A0 = (size_t)b0 * H * T * T; /* the chunk's first token, first attention entry */
    const int *inp = im->inp + n0;
    /* the base activations and gradients after the last layer, for this chunk */
    const double *lnf = im->lnf + n0 * C, *lnf_xh = im->lnf_xh + n0 * C, *lnf_r = im->lnf_r + n0;
    const double *dlnf = im->dlnf + n0 * C, *probs = im->probs + n0 * Vv, *dlogits = im->dlogits + n0 * Vv;

    /* R-forward */
    int res_live = tt_rpar_live(&rt->wte.r) || tt_rpar_live(&rt->wpe.r);
    if (res_live) embed_rop(w->Rres, inp, rt->wte.r, rt->wpe.r, N, T, C, k);
    for (int l = 0; l < L; l++) {
        const layer_acts a = chunk_acts(&im->la[l], n0, A0, C, M);
        const layer_rtensors *p = &rt->layer[l];
        const layer_racts *r = &w->ra[l];
        layer_rlive *z = &w->live[l];
        memset(z, 0, sizeof *z);
        /* a layer wholly before stop with nothing perturbed upstream: its
         * R-activations are zero and the truncated R-backward never reads them */
        if (!res_live && stop > last_of(&p->mlp_proj_w, &p->mlp_proj_b)) continue;
        layernorm_rop(r->ln1, r->ln1_t, r->ln1_xh, r->ln1_r, &z->ln1, &z->ln1_t, &z->ln1_xh, &z->ln1_r,
                      res_live ? w->Rres : NULL, a.ln1_xh, a.ln1_r, &p->ln1_w, &p->ln1_b, N, C, k);
        z->q = linear_rop(r->q, z->ln1, a.ln1, &p->query_w, &p->query_b, N, C, C, k);
        z->key = linear_rop(r->key, z->ln1, a.ln1, &p->key_w, &p->key_b, N, C, C, k);
        z->v = linear_rop(r->v, z->ln1, a.ln1, &p->value_w, &p->value_b, N, C, C, k);
        if (z->q || z->key || z->v) {
            z->att = z->q || z->key ? r->att : NULL;
            z->y = r->y;
            z->y_t = r->y_t;
            tt_dm_attention_rop(r->y, r->y_t, z->att ? r->att : NULL, z->q, z->key, z->v, a.q, a.key, a.v, a.att, bc,
                                T, C, H, k);
        }
        res_live = residual_rop(w->Rres, res_live, z->y, a.y, &p->attn_proj_w, &p->attn_proj_b, N, C, C, k);
        layernorm_rop(r->ln2, r->ln2_t, r->ln2_xh, r->ln2_r, &z->ln2, &z->ln2_t, &z->ln2_xh, &z->ln2_r,
                      res_live ? w->Rres : NULL, a.ln2_xh, a.ln2_r, &p->ln2_w, &p->ln2_b, N, C, k);
        z->f = linear_rop(r->f, z->ln2, a.ln2, &p->fc_w, &p->fc_b, N, C, M, k);
        if (z->f) {
            z->gl = r->gl;
            z->gl_t = r->gl_t;
            tt_dm_gelu_rop(r->gl, r->gl_t, z->f, a.g1, N, M, k);
        }
        res_live = residual_rop(w->Rres, res_live, z->gl, a.gl, &p->mlp_proj_w, &p->mlp_proj_b, N, M, C, k);
    }
    layernorm_rop(w->Rlnf, w->Rlnf_t, w->Rlnf_xh, w->Rlnf_r, &w->lnf, &w->lnf_t, &w->lnf_xh, &w->lnf_r,
                  res_live ? w->Rres : NULL, lnf_xh, lnf_r, &rt->lnf_w, &rt->lnf_b, N, C, k);
    if (!linear_rop(w->Rlogits, w->lnf, lnf, &rt->lm_head, &no_tensor, N, C, Vv, k))
        return; /* nothing perturbed: H v = 0 */
    crossentropy_rop(w->Rdlogits, w->Rdlogits_t, w->Rlogits, probs, 1.0 / im->N, N, Vv, k);

    /* R-backward. Each R{dout} is written with its token-major copy (the _t
     * buffers) for the R{dW} dgemm of the layer that consumes it next. */
    linear_rop_backward(stop < rt->lm_head.t ? w->Rdln : NULL, 0, w->Rdlogits, w->Rdlogits_t, dlogits, lnf, w->lnf_t,
                        &rt->lm_head, &no_tensor, N, C, Vv, k);
    if (stop >= rt->lm_head.t) return;
    layernorm_rop_backward(stop < rt->lnf_w.t ? w->Rdres : NULL, w->Rdres_t, 0, w->Rdln, dlnf, lnf_xh, lnf_r,
                           w->lnf_xh, w->lnf_r, &rt->lnf_w, &rt->lnf_b, N, C, k);
    if (stop >= rt->lnf_w.t) return;
    for (int l = L - 1; l >= 0; l--) {
        const layer_acts a = chunk_acts(&im->la[l], n0, A0, C, M);
        const double *dout = im->dres[l + 1] + n0 * C; /* the base gradient of the layer's output */
        const layer_rtensors *p = &rt->layer[l];
        const layer_rlive *z = &w->live[l];
        /* Rdres = R{d res[l+1]} feeds the MLP and passes on to x1 */
        linear_rop_backward(stop < p->mlp_proj_w.t ? w->Rdgl : NULL, 0, w->Rdres, w->Rdres_t, dout, a.gl, z->gl_t,
                            &p->mlp_proj_w, &p->mlp_proj_b, N, M, C, k);
        if (stop >= p->mlp_proj_w.t) return;
        tt_dm_gelu_rop_backward(w->Rdf, w->Rdf_t, w->Rdgl, a.g1, a.g2d, z->f, N, M, k);
        linear_rop_backward(stop < p->fc_w.t ? w->Rdln : NULL, 0, w->Rdf, w->Rdf_t, a.df, a.ln2, z->ln2_t, &p->fc_w,
                            &p->fc_b, N, C, M, k);
        if (stop >= p->fc_w.t) return;
        layernorm_rop_backward(stop < p->ln2_w.t ? w->Rdres : NULL, w->Rdres_t, 1, w->Rdln, a.dln2, a.ln2_xh, a.ln2_r,
                               z->ln2_xh, z->ln2_r, &p->ln2_w, &p->ln2_b, N, C, k);
        if (stop >= p->ln2_w.t) return;
        /* Rdres is now R{dx1} */
        linear_rop_backward(stop < p->attn_proj_w.t ? w->Rdy : NULL, 0, w->Rdres, w->Rdres_t, a.dx1, a.y, z->y_t,
                            &p->attn_proj_w, &p->attn_proj_b, N, C, C, k);
        if (stop >= p->attn_proj_w.t) return;
        /* R{dq} is wanted for R{dW_q}, R{db_q} or what lies before; likewise key, value */
        int want_q = stop <= last_of(&p->query_w, &p->query_b), want_k = stop <= last_of(&p->key_w, &p->key_b);
        tt_dm_attention_rop_backward(want_q ? w->Rdq : NULL, want_k ? w->Rdkey : NULL, w->Rdv,
                                     want_q ? w->Rdq_t : NULL, want_k ? w->Rdkey_t : NULL, w->Rdv_t, w->Rdy, a.dy,
                                     a.q, a.key, a.v, a.att, a.dpc, z->q, z->key, z->v, z->att, bc, T, C, H, k);
        double *Rdln = stop < p->query_w.t ? w->Rdln : NULL; /* then all three are wanted */
        if (want_q)
            linear_rop_backward(Rdln, 0, w->Rdq, w->Rdq_t, a.dq, a.ln1, z->ln1_t, &p->query_w, &p->query_b, N, C, C,
                                k);
        if (want_k)
            linear_rop_backward(Rdln, 1, w->Rdkey, w->Rdkey_t, a.dkey, a.ln1, z->ln1_t, &p->key_w, &p->key_b, N, C,
                                C, k);
        linear_rop_backward(Rdln, 1, w->Rdv, w->Rdv_t, a.dv, a.ln1, z->ln1_t, &p->value_w, &p->value_b, N, C, C, k);
        if (stop >= p->query_w.t) return;
        layernorm_rop_backward(stop < p->ln1_w.t ? w->Rdres : NULL, w->Rdres_t, 1, w->Rdln, a.dln1, a.ln1_xh, a.ln1_r,
                               z->ln1_xh, z->ln1_r, &p->ln1_w, &p->ln1_b, N, C, k);
        if (stop >= p->ln1_w.t) return;
    }
    embed_rop_backward(rt->wte.g, rt->wpe.g, w->Rdres, inp, N, T, C, k);
}

/* ---- panels of directions, shared among worker threads ------------------------------------
 * A job is k directions — the rows of V, or the unit vectors e_{j0}..e_{j0+k-1}
 * when V is NULL — handed out kp at a time. Each worker owns a workspace and
 * writes only its own rows of out, so results do not depend on the threads. */

typedef struct {
    model *m;
    const double *V;   /* (k,P), or NULL for unit directions */
    double *out;       /* (k,P) */
    size_t j0;
    int k;
    int lower;         /* unit directions: only entries of tensors >= tensor(j0) (hessian_opts.lower) */
    int next;          /* next direction to hand out */
    pthread_mutex_t lock;
} panel_job;

typedef struct {
    panel_job *job;
    rwork *w;
} worker_arg;

static int tensor_of(const model *m, size_t j)
{
    int t = 0;
    while (t + 1 < m->ntensors && m->tensors[t + 1].offset <= j) t++;
    return t;
}

/* Dense directions: the nonzero tensors of rows V (kk, row stride P), transposed
 * into w->Vt (direction-minor, kw >= kk directions, the extra ones zero). */
static void dense_rpars(const model *m, rwork *w, const double *V, int kk, int kw)
{
    size_t P = m->P;
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        size_t n = tensor_size(ti), o = ti->offset;
        int live = 0;
        for (int d = 0; d < kk && !live; d++)
            for (size_t i = 0; i < n; i++)
                if (V[d * P + o + i] != 0) {
                    live = 1;
                    break;
                }
        w->rp[t] = no_rpar;
        if (!live) continue;
        double *vt = w->Vt + o * kw;
        for (int d = 0; d < kw; d++)
            for (size_t i = 0; i < n; i++) vt[i * kw + d] = d < kk ? V[d * P + o + i] : 0;
        w->rp[t].v = vt;
    }
}

/* Unit directions e_j..e_{j+kk-1}: for each tensor, the range of them inside it. */
static void unit_rpars(const model *m, rwork *w, size_t j, int kk)
{
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        long lo = (long)ti->offset - (long)j, hi = lo + (long)tensor_size(ti);
        w->rp[t] = no_rpar;
        int d0 = lo > 0 ? (int)lo : 0, d1 = hi < kk ? (int)hi : kk;
        if (d0 < d1) w->rp[t] = (tt_rpar){.d0 = d0, .d1 = d1, .e0 = (long)j + d0 - (long)ti->offset};
    }
}

static void run_subpanel(panel_job *J, rwork *w, int p0, int kk)
{
    model *m = J->m;
    tt_impl *im = m->impl;
    size_t P = m->P;
    double *HV = J->out + (size_t)p0 * P;
    int stop = 0, kw = padded(kk);
    if (J->V) {
        dense_rpars(m, w, J->V + (size_t)p0 * P, kk, kw);
    } else {
        unit_rpars(m, w, J->j0 + p0, kk);
        if (J->lower) stop = tensor_of(m, J->j0);
    }
    bind_rtensors(m, w, kw, stop);
    size_t from = m->tensors[stop].offset;
    memset(w->G + from * kw, 0, (P - from) * kw * sizeof(double));
    memset(w->Gt + from * kw, 0, (P - from) * kw * sizeof(double));
    for (int b0 = 0; b0 < im->B; b0 += w->bc) {
        int bc = im->B - b0 < w->bc ? im->B - b0 : w->bc;
        rpass(m, w, kw, b0, bc, stop);
    }
    /* the weight matrices' R{dW}: add the transposed half */
    static const int lin_slots[] = {L_Q, L_K, L_V, L_O, L_FC, L_MP};
    for (int l = -1; l < im->c.layers; l++)
        for (int i = 0; i < (l < 0 ? 1 : 6); i++) {
            int t = l < 0 ? im->t_head : im->slot[l][lin_slots[i]];
            const tensor_info *ti = &m->tensors[t];
            if (t >= stop)
                tt_dm_fold_transposed(w->G + ti->offset * kw, w->Gt + ti->offset * kw, ti->cols, ti->rows, kw);
        }
    /* G (P,kw) direction-minor -> rows of HV, in blocks of 8 parameters */
    for (size_t p = from; p < P; p += 8) {
        size_t pe = p + 8 < P ? p + 8 : P;
        for (int d = 0; d < kk; d++)
            for (size_t i = p; i < pe; i++) HV[d * P + i] = w->G[i * kw + d];
    }
}

static void *panel_worker(void *arg)
{
    worker_arg *a = arg;
    panel_job *J = a->job;
    for (;;) {
        pthread_mutex_lock(&J->lock);
        int p0 = J->next;
        J->next += a->w->kp;
        pthread_mutex_unlock(&J->lock);
        if (p0 >= J->k) break;
        run_subpanel(J, a->w, p0, J->k - p0 < a->w->kp ? J->k - p0 : a->w->kp);
    }
    return NULL;
}

static int thread_count(const tt_impl *im)
{
    int n = im->threads ? im->threads : toolkit_threads();
    return n < 1 ? 1 : n > 64 ? 64 : n;
}

/* Gauss–Newton mode: every base upstream gradient the R-backward reads set to
 * zero. The R-backward of each layer is R{dinp} = A R{dout} + R{A} dout (and
 * likewise for R{dθ}); the second terms (dout·R{W}, GELU''·dout, LayerNorm's
 * and attention's second-order terms) all carry a base gradient, so with them
 * gone the pass maps R{dlogits} = S J v (the cross-entropy's softmax Hessian S,
 * which reads only the probabilities) back by Jᵀ alone: G v = Jᵀ S J v. */
static void zero_base_gradients(tt_impl *im)
{
    size_t N = im->N, C = im->c.C, M = im->c.M, V = im->c.V;
    size_t A = (size_t)im->B * im->c.heads * im->c.T * im->c.T;
    memset(im->dlogits, 0, N * V * sizeof(double));
    memset(im->dlnf, 0, N * C * sizeof(double));
    for (int l = 0; l <= im->c.layers; l++) memset(im->dres[l], 0, N * C * sizeof(double));
    for (int l = 0; l < im->c.layers; l++) {
        layer_acts *a = &im->la[l];
        double *nc[] = {a->dln1, a->dq, a->dkey, a->dv, a->dy, a->dx1, a->dln2};
        for (size_t i = 0; i < sizeof nc / sizeof *nc; i++) memset(nc[i], 0, N * C * sizeof(double));
        memset(a->df, 0, N * M * sizeof(double));
        memset(a->dgl, 0, N * M * sizeof(double)); /* so GELU''·dgl (g2d) is zero too */
        memset(a->dpc, 0, A * sizeof(double));
    }
}

/* The base forward + backward the R-pass linearises around, and GELU's
 * derivatives there; kept while the parameters and the batch stay the same
 * (the engine calls hess_cols once per panel of the same H). */
static void base_pass(model *m)
{
    tt_impl *im = m->impl;
    if (im->base_ok && memcmp(im->base_params, m->params, m->P * sizeof(double)) == 0) return;
    forward(m);
    backward(m, im->gbuf);
    if (im->gauss_newton) zero_base_gradients(im);
    size_t NM = (size_t)im->N * im->c.M;
    for (int l = 0; l < im->c.layers; l++) {
        layer_acts *a = &im->la[l];
        tt_gelu_derivs(a->g1, a->g2d, a->f, NM);
        for (size_t i = 0; i < NM; i++) a->g2d[i] *= a->dgl[i];
    }
    memcpy(im->base_params, m->params, m->P * sizeof(double));
    im->base_ok = 1;
}

/* Base forward + backward, then the k directions of the job over the workers. */
static void run_panels(model *m, const double *V, double *out, size_t j0, int k, int lower)
{
    tt_impl *im = m->impl;
    if (k < 1) return;
    int kp = im->kp_max ? im->kp_max : KP_MAX;
    kp = k < kp ? k : kp;
    int nsub = (k + kp - 1) / kp, nt = thread_count(im);
    nt = nt < nsub ? nt : nsub;
    /* one BLAS thread per worker: the R-pass dgemms are small, and BLAS's own
     * threads would only spin (the base pass's dgemms are small too) */
    int saved = openblas_get_num_threads();
    openblas_set_num_threads(1);
    base_pass(m);
    ensure_work(m, nt, kp);
    panel_job J = {.m = m, .V = V, .out = out, .j0 = j0, .k = k, .lower = lower, .next = 0};
    pthread_mutex_init(&J.lock, NULL);
    worker_arg args[64];
    for (int i = 0; i < nt; i++) args[i] = (worker_arg){&J, im->work[i]};
    pthread_t tid[64];
    for (int i = 1; i < nt; i++)
        if (pthread_create(&tid[i], NULL, panel_worker, &args[i])) DIE("cannot start a worker thread");
    panel_worker(&args[0]);
    for (int i = 1; i < nt; i++) pthread_join(tid[i], NULL);
    openblas_set_num_threads(saved);
    pthread_mutex_destroy(&J.lock);
}

static void tt_hvp_fn(model *m, const double *V, double *HV, int k) { run_panels(m, V, HV, 0, k, 0); }

static void tt_hess_cols_fn(model *m, size_t j0, int k, double *out)
{
    if (j0 + (size_t)k > m->P) DIE("hess_cols %zu..%zu beyond P = %zu", j0, j0 + k, m->P);
    run_panels(m, NULL, out, j0, k, 0);
}

/* model.hess_cols_lower: unit directions in tensor t perturb only what follows
 * t, and their R-backward stops once it has produced the rows of tensors >=
 * tensor(j0): about half the work of hess_cols. */
static void tt_hess_cols_lower_fn(model *m, size_t j0, int k, double *out)
{
    impl_of(m);
    if (j0 + (size_t)k > m->P) DIE("hess_cols_lower %zu..%zu beyond P = %zu", j0, j0 + k, m->P);
    run_panels(m, NULL, out, j0, k, 1);
}

void tt_set_gauss_newton(model *m, int on)
{
    tt_impl *im = impl_of(m);
    if (on != 0 && on != 1) die_user("Gauss-Newton mode must be 0 or 1 (got %d)", on);
    if (im->gauss_newton != on) im->base_ok = 0; /* the stored base gradients belong to the other mode */
    im->gauss_newton = on;
}

int tt_gauss_newton(const model *m) { return impl_of(m)->gauss_newton; }

void tt_set_threads(model *m, int n)
{
    tt_impl *im = impl_of(m);
    if (n < 0 || n > 64) die_user("threads must be in 0..64 (got %d)", n);
    im->threads = n;
}

/* ---- construction ------------------------------------------------------------------------ */

static void free_batch(tt_impl *im)
{
    free(im->tokens), free(im->inp), free(im->tgt), free(im->abuf), free(im->res), free(im->dres), free(im->la);
    im->tokens = NULL, im->inp = im->tgt = NULL, im->abuf = NULL, im->res = im->dres = NULL, im->la = NULL;
    im->B = im->N = 0;
    free_rwork(im);
}

static void tt_destroy(model *m)
{
    tt_impl *im = m->impl;
    free_batch(im);
    free(im->slot);
    free(im->gbuf);
    free(im->base_params);
    free(im);
    free(m->tensors);
    free(m->params);
    free(m);
}

model *tt_new(const tt_config *c)
{
    tt_check_config(c);
    model *m = xcalloc(1, sizeof(model));
    tt_impl *im = xcalloc(1, sizeof(tt_impl));
    im->c = *c;
    m->kind = "tinytransformer";
    m->impl = im;
    build_table(m, im);
    if (m->P != tt_param_count(c)) DIE("parameter count %zu != %zu", m->P, tt_param_count(c));
    model_check_tensors(m);
    memory_check("tinytransformer: parameters, gradient and base copy", 24.0 * (double)m->P);
    m->params = xmalloc(m->P * sizeof(double));
    im->gbuf = xmalloc(m->P * sizeof(double));
    im->base_params = xmalloc(m->P * sizeof(double));
    m->loss = tt_loss_fn;
    m->grad = tt_grad_fn;
    m->hvp = tt_hvp_fn;
    m->hess_cols = tt_hess_cols_fn;
    m->hess_cols_lower = tt_hess_cols_lower_fn;
    m->destroy = tt_destroy;
    tt_init_params(m, c->seed);
    return m;
}

void tt_set_hvp_blocking(model *m, int kp, int bc)
{
    tt_impl *im = impl_of(m);
    if (kp < 0 || bc < 0) die_user("hvp blocking must be >= 0 (got %d, %d)", kp, bc);
    im->kp_max = kp;
    im->bc_set = bc;
    free_rwork(im);
}

void tt_set_batch(model *m, const int *tokens, int B)
{
    tt_impl *im = impl_of(m);
    const tt_config *c = &im->c;
    if (B < 1) die_user("batch size must be >= 1 (got %d)", B);
    size_t n = (size_t)B * (c->T + 1);
    for (size_t i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= c->V)
            die_user("token %d at position %zu is outside the vocabulary 0..%d", tokens[i], i, c->V - 1);
    if (B != im->B) {
        char what[96];
        snprintf(what, sizeof what, "tinytransformer: a batch of %d sequences", B);
        memory_check(what, tt_batch_bytes(c, B));
        free_batch(im);
        im->B = B;
        im->N = B * c->T;
        im->tokens = xmalloc(n * sizeof(int));
        im->inp = xmalloc((size_t)im->N * sizeof(int));
        im->tgt = xmalloc((size_t)im->N * sizeof(int));
        alloc_acts(im);
    }
    memcpy(im->tokens, tokens, n * sizeof(int));
    im->base_ok = 0;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < c->T; t++) {
            im->inp[b * c->T + t] = tokens[(size_t)b * (c->T + 1) + t];
            im->tgt[b * c->T + t] = tokens[(size_t)b * (c->T + 1) + t + 1];
        }
}
