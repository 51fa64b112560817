/* The tiny Transformer as a core/model.h `model`: parameter table, forward,
 * backward, and the exact Hessian-vector product on panels of directions.
 *
 * hvp: one base forward + backward over the batch (activations and their
 * gradients kept), then for each sub-panel of at most KP directions and each
 * chunk of sequences, the R-forward and R-backward passes (tt_kernels.c) with
 * token-major (N,k,C) R-quantities, accumulating R{∇θ} = H v into HV. Sequences
 * are independent given the parameters, so chunking over them only bounds the
 * workspace; the loss is the mean over all B·T positions (scale 1/(B·T)).
 */
#include "tt.h"
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
} layer_acts;

/* R-quantities of one layer for one chunk of sequences and a sub-panel of directions. */
typedef struct {
    double *ln1, *ln1_xh, *ln1_r, *q, *key, *v, *att, *y, *ln2, *ln2_xh, *ln2_r, *f, *gl;
    int ln1_live, q_live, key_live, v_live, y_live, ln2_live, f_live;
} layer_racts;

typedef struct rwork rwork;

typedef struct {
    tt_config c;
    int (*slot)[L_NSLOT];    /* tensor index of each layer slot, -1 if absent */
    int t_wte, t_wpe, t_lnfw, t_lnfb, t_lm;

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

    /* R workspaces, one per worker thread */
    rwork **work;
    int nwork;
    int kp_max, bc_set;      /* tt_set_hvp_blocking; 0 = automatic */
    int threads;             /* tt_set_threads; 0 = openblas_get_num_threads() */
} tt_impl;

tt_config tt_defaults(void)
{
    return (tt_config){.V = 8, .C = 16, .heads = 4, .M = 32, .layers = 1, .T = 8, .bias = 1, .seed = 1};
}

void tt_check_config(const tt_config *c)
{
    if (c->V < 2 || c->V > 256) die_user("vocabulary size V must be in 2..256 (got %d)", c->V);
    if (c->C < 1 || c->C > 4096) die_user("width C must be in 1..4096 (got %d)", c->C);
    if (c->heads < 1 || c->C % c->heads) die_user("heads must be >= 1 and divide C = %d (got %d)", c->C, c->heads);
    if (c->M < 1 || c->M > 16384) die_user("MLP width M must be in 1..16384 (got %d)", c->M);
    if (c->layers < 1 || c->layers > 64) die_user("layers must be in 1..64 (got %d)", c->layers);
    if (c->T < 1 || c->T > 1024) die_user("context length T must be in 1..1024 (got %d)", c->T);
    if (c->bias != 0 && c->bias != 1) die_user("bias must be 0 or 1 (got %d)", c->bias);
}

/* ---- the tensor table ------------------------------------------------------------------ */

static int add_tensor(model *m, const char *name, tensor_role role, int rows, int cols, int heads, int layer)
{
    tensor_info *t = &m->tensors[m->ntensors];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->role = role;
    t->offset = m->P;
    t->rows = rows;
    t->cols = cols;
    t->heads = heads;
    t->layer = layer;
    t->bias_col = 0;
    m->P += (size_t)rows * cols;
    return m->ntensors++;
}

static void build_table(model *m, tt_impl *im)
{
    const tt_config *c = &im->c;
    int C = c->C, M = c->M, V = c->V;
    m->tensors = xcalloc((size_t)(5 + L_NSLOT * c->layers), sizeof(tensor_info));
    m->ntensors = 0;
    m->P = 0;
    im->t_wte = add_tensor(m, "wte", ROLE_EMBED, V, C, 1, -1);
    im->t_wpe = add_tensor(m, "wpe", ROLE_POS, c->T, C, 1, -1);
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
            im->slot[l][s] = add_tensor(m, name, roles[s], rows, cols, heads, l);
        }
    im->t_lnfw = add_tensor(m, "ln_f.weight", ROLE_NORM, C, 1, 1, -1);
    im->t_lnfb = c->bias ? add_tensor(m, "ln_f.bias", ROLE_BIAS, C, 1, 1, -1) : -1;
    im->t_lm = add_tensor(m, "lm_head", ROLE_OUTPUT, V, C, 1, -1);
}

size_t tt_param_count(const tt_config *c)
{
    size_t C = c->C, M = c->M, V = c->V, b = c->bias ? 1 : 0;
    size_t layer = 2 * C + 2 * C * b                   /* LayerNorms */
                   + 4 * (C * C + C * b)               /* query, key, value, proj */
                   + (M * C + M * b) + (C * M + C * b); /* MLP */
    return V * C + (size_t)c->T * C + (size_t)c->layers * layer + C + C * b + V * C;
}

static tt_impl *impl_of(const model *m)
{
    if (!m || !m->kind || strcmp(m->kind, "tinytransformer") != 0) DIE("not a tinytransformer model");
    return m->impl;
}

const tt_config *tt_config_of(const model *m) { return &impl_of(m)->c; }
int tt_batch_size(const model *m) { return impl_of(m)->B; }

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

/* R{x}[n,d] = R{wte}_d[inp[n]] + R{wpe}_d[t]; either may be NULL (zero). */
static void embed_rop(double *Rx /*(N,k,C)*/, const int *inp, const double *Rwte, const double *Rwpe, size_t ld,
                      int N, int T, int C, int k)
{
    for (int n = 0; n < N; n++)
        for (int d = 0; d < k; d++) {
            double *r = Rx + ((size_t)n * k + d) * C;
            for (int c = 0; c < C; c++)
                r[c] = (Rwte ? Rwte[d * ld + (size_t)inp[n] * C + c] : 0) + (Rwpe ? Rwpe[d * ld + (size_t)(n % T) * C + c] : 0);
        }
}

/* The embedding is linear in its parameters and its input is discrete, so
 * R{dwte} and R{dwpe} only route R{dx}. Either output may be NULL (not wanted). */
static void embed_rop_backward(double *Rdwte, double *Rdwpe, const double *Rdx /*(N,k,C)*/, const int *inp,
                               size_t ld, int N, int T, int C, int k)
{
    for (int n = 0; n < N; n++)
        for (int d = 0; d < k; d++) {
            const double *r = Rdx + ((size_t)n * k + d) * C;
            if (Rdwte)
                for (int c = 0; c < C; c++) Rdwte[d * ld + (size_t)inp[n] * C + c] += r[c];
            if (Rdwpe)
                for (int c = 0; c < C; c++) Rdwpe[d * ld + (size_t)(n % T) * C + c] += r[c];
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
static void crossentropy_rop(double *Rdlogits /*(N,k,V)*/, const double *Rlogits /*(N,k,V)*/, const double *probs,
                             double scale, int N, int V, int k)
{
    for (int n = 0; n < N; n++) {
        const double *p = probs + (size_t)n * V;
        for (int d = 0; d < k; d++) {
            const double *rz = Rlogits + ((size_t)n * k + d) * V;
            double *o = Rdlogits + ((size_t)n * k + d) * V, m = 0;
            for (int v = 0; v < V; v++) m += p[v] * rz[v];
            for (int v = 0; v < V; v++) o[v] = scale * p[v] * (rz[v] - m);
        }
    }
}

/* ---- base forward and backward --------------------------------------------------------- */

static double *carve(double **cursor, size_t n)
{
    double *p = *cursor;
    *cursor += n;
    return p;
}

static void alloc_acts(tt_impl *im)
{
    const tt_config *c = &im->c;
    size_t N = im->N, C = c->C, M = c->M, V = c->V, L = c->layers;
    size_t A = (size_t)im->B * c->heads * c->T * c->T;
    size_t per_layer = 16 * N * C + 2 * N + 4 * N * M + 2 * A;
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
    tt_linear_forward(im->logits, im->lnf, cat(m, w, im->t_lm), NULL, N, C, c->V);
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
    tt_linear_backward(im->dlnf, at(m, g, im->t_lm), NULL, im->dlogits, im->lnf, cat(m, w, im->t_lm), N, C, c->V);
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
#define ROWS_TARGET 2048 /* chunk rows bc·T·kp aimed at (keeps the workspace cache-sized) */

struct rwork {
    int kp, bc;              /* sub-panel width, sequences per chunk */
    double *buf;
    layer_racts *ra;
    double *Rres, *Rtmp, *Rlnf, *Rlnf_xh, *Rlnf_r, *Rlogits, *Rdlogits;
    double *Rdres, *Rdln, *Rdgl, *Rdf, *Rdy, *Rdq, *Rdkey, *Rdv, *scratch;
    double *E;               /* (kp,P) unit-direction panel, kept zero between uses */
    char *tlive;             /* per tensor: nonzero in the current sub-panel */
};

static void rwork_free(rwork *w)
{
    if (!w) return;
    free(w->buf), free(w->ra), free(w->E), free(w->tlive);
    free(w);
}

static void free_rwork(tt_impl *im)
{
    for (int i = 0; i < im->nwork; i++) rwork_free(im->work[i]);
    free(im->work);
    im->work = NULL;
    im->nwork = 0;
}

static rwork *rwork_new(const model *m, int kp, int bc)
{
    const tt_impl *im = m->impl;
    const tt_config *c = &im->c;
    rwork *w = xcalloc(1, sizeof(rwork));
    w->kp = kp;
    w->bc = bc;
    size_t R = (size_t)bc * c->T * kp, C = c->C, M = c->M, V = c->V, L = c->layers;
    size_t A = (size_t)bc * c->heads * kp * c->T * c->T;
    size_t per_layer = 8 * R * C + 2 * R + 2 * R * M + A;
    size_t big = C > M ? C : M;
    big = big > V ? big : V;
    size_t lin = 0;
    int dims[4][2] = {{c->C, c->C}, {c->C, c->M}, {c->M, c->C}, {c->C, c->V}};
    for (int i = 0; i < 4; i++) {
        size_t s = tt_linear_scratch(dims[i][0], dims[i][1], kp);
        lin = s > lin ? s : lin;
    }
    size_t total = L * per_layer + R * C /*Rres*/ + R * big /*Rtmp*/ + 2 * R * C + R + 2 * R * V
                   + 6 * R * C + 2 * R * M + lin;
    w->buf = xmalloc(checked_mul(total, sizeof(double), "R workspace"));
    double *cur = w->buf;
    w->ra = xcalloc(L, sizeof(layer_racts));
    for (size_t l = 0; l < L; l++) {
        layer_racts *r = &w->ra[l];
        r->ln1 = carve(&cur, R * C), r->ln1_xh = carve(&cur, R * C), r->ln1_r = carve(&cur, R);
        r->q = carve(&cur, R * C), r->key = carve(&cur, R * C), r->v = carve(&cur, R * C);
        r->att = carve(&cur, A), r->y = carve(&cur, R * C);
        r->ln2 = carve(&cur, R * C), r->ln2_xh = carve(&cur, R * C), r->ln2_r = carve(&cur, R);
        r->f = carve(&cur, R * M), r->gl = carve(&cur, R * M);
    }
    w->Rres = carve(&cur, R * C), w->Rtmp = carve(&cur, R * big);
    w->Rlnf = carve(&cur, R * C), w->Rlnf_xh = carve(&cur, R * C), w->Rlnf_r = carve(&cur, R);
    w->Rlogits = carve(&cur, R * V), w->Rdlogits = carve(&cur, R * V);
    w->Rdres = carve(&cur, R * C), w->Rdln = carve(&cur, R * C), w->Rdy = carve(&cur, R * C);
    w->Rdq = carve(&cur, R * C), w->Rdkey = carve(&cur, R * C), w->Rdv = carve(&cur, R * C);
    w->Rdgl = carve(&cur, R * M), w->Rdf = carve(&cur, R * M);
    w->scratch = carve(&cur, lin);
    if ((size_t)(cur - w->buf) != total) DIE("R workspace layout: %zu of %zu", (size_t)(cur - w->buf), total);
    w->E = xcalloc(checked_mul((size_t)kp, m->P, "unit panel"), sizeof(double));
    w->tlive = xcalloc((size_t)m->ntensors, 1);
    return w;
}

/* Workspaces for n workers with sub-panels of kp directions. */
static void ensure_work(model *m, int n, int kp)
{
    tt_impl *im = m->impl;
    int bc = im->bc_set ? im->bc_set : ROWS_TARGET / (im->c.T * kp);
    if (bc < 1) bc = 1;
    if (bc > im->B) bc = im->B;
    if (im->nwork >= n && im->work[0]->kp == kp && im->work[0]->bc == bc) return;
    free_rwork(im);
    im->work = xmalloc((size_t)n * sizeof(rwork *));
    for (int i = 0; i < n; i++) im->work[i] = rwork_new(m, kp, bc);
    im->nwork = n;
}

/* ---- the R-pass over one chunk of sequences ----------------------------------------------
 * V, HV: the sub-panel (k directions, row stride P). Chunk: sequences b0..b0+bc-1.
 * An R-activation that is identically zero (no live direction upstream) is
 * passed as NULL to the linear kernels, which then skip their dgemm.
 * stop: R{∇θ} is wanted only for tensors >= stop (tensor index), so the
 * R-backward ends once it has passed them (tt_hess_cols_lower). */

static void add_into(double *y, const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++) y[i] += x[i];
}

/* R-parameters of tensor t in the panel; NULL if absent or zero in every direction. */
static const double *rparam(const model *m, const rwork *w, const double *V, int t)
{
    return t >= 0 && w->tlive[t] ? V + m->tensors[t].offset : NULL;
}

static void rpass(model *m, rwork *w, const double *V, double *HV, int k, int b0, int bc, int stop)
{
    tt_impl *im = m->impl;
    const tt_config *c = &im->c;
    int T = c->T, C = c->C, M = c->M, H = c->heads, L = c->layers, Vv = c->V;
    int n0 = b0 * T, N = bc * T;
    size_t ld = m->P, RC = (size_t)N * k * C, RM = (size_t)N * k * M;
    size_t A0 = (size_t)b0 * H * T * T;
    const double *wt = m->params;
    double *sc = w->scratch;
    const int *inp = im->inp + n0;
#define RP(t) rparam(m, w, V, t)
#define RG(t) ((t) >= stop ? HV + m->tensors[t].offset : NULL) /* t = -1 (absent) gives NULL too */
#define W_(t) cat(m, wt, t)
#define BASE(p, width) ((p) + (size_t)n0 * (width))
#define PAST(t) if (stop >= (t)) goto done /* nothing earlier than tensor t is wanted */

    /* R-forward */
    const double *Rwte = RP(im->t_wte), *Rwpe = RP(im->t_wpe);
    int res_live = Rwte || Rwpe;
    if (res_live) embed_rop(w->Rres, inp, Rwte, Rwpe, ld, N, T, C, k);
    else memset(w->Rres, 0, RC * sizeof(double));
    for (int l = 0; l < L; l++) {
        const layer_acts *a = &im->la[l];
        layer_racts *r = &w->ra[l];
        const int *s = im->slot[l];
        /* a layer wholly before stop with nothing perturbed upstream: its
         * R-activations are zero and the truncated R-backward never reads them */
        if (!res_live && stop > (s[L_MPB] >= 0 ? s[L_MPB] : s[L_MP])) continue;
        tt_layernorm_rop(r->ln1, r->ln1_xh, r->ln1_r, res_live ? w->Rres : NULL, BASE(a->ln1_xh, C),
                         BASE(a->ln1_r, 1), W_(s[L_LN1W]), RP(s[L_LN1W]), RP(s[L_LN1B]), ld, N, C, k);
        r->ln1_live = res_live || RP(s[L_LN1W]) || RP(s[L_LN1B]);
        const double *Rln1 = r->ln1_live ? r->ln1 : NULL;
        tt_linear_rop(r->q, Rln1, BASE(a->ln1, C), W_(s[L_Q]), RP(s[L_Q]), RP(s[L_QB]), ld, sc, N, C, C, k);
        tt_linear_rop(r->key, Rln1, BASE(a->ln1, C), W_(s[L_K]), RP(s[L_K]), RP(s[L_KB]), ld, sc, N, C, C, k);
        tt_linear_rop(r->v, Rln1, BASE(a->ln1, C), W_(s[L_V]), RP(s[L_V]), RP(s[L_VB]), ld, sc, N, C, C, k);
        r->q_live = r->ln1_live || RP(s[L_Q]) || RP(s[L_QB]);
        r->key_live = r->ln1_live || RP(s[L_K]) || RP(s[L_KB]);
        r->v_live = r->ln1_live || RP(s[L_V]) || RP(s[L_VB]);
        r->y_live = r->q_live || r->key_live || r->v_live;
        if (r->y_live)
            tt_attention_rop(r->y, r->att, r->q, r->key, r->v, BASE(a->q, C), BASE(a->key, C), BASE(a->v, C),
                             a->att + A0, bc, T, C, H, k);
        else if (stop < s[L_O]) /* the R-backward will read R{P} */
            memset(r->att, 0, (size_t)bc * H * k * T * T * sizeof(double));
        tt_linear_rop(w->Rtmp, r->y_live ? r->y : NULL, BASE(a->y, C), W_(s[L_O]), RP(s[L_O]), RP(s[L_OB]), ld, sc,
                      N, C, C, k);
        add_into(w->Rres, w->Rtmp, RC);
        res_live = res_live || r->y_live || RP(s[L_O]) || RP(s[L_OB]);
        tt_layernorm_rop(r->ln2, r->ln2_xh, r->ln2_r, res_live ? w->Rres : NULL, BASE(a->ln2_xh, C),
                         BASE(a->ln2_r, 1), W_(s[L_LN2W]), RP(s[L_LN2W]), RP(s[L_LN2B]), ld, N, C, k);
        r->ln2_live = res_live || RP(s[L_LN2W]) || RP(s[L_LN2B]);
        tt_linear_rop(r->f, r->ln2_live ? r->ln2 : NULL, BASE(a->ln2, C), W_(s[L_FC]), RP(s[L_FC]), RP(s[L_FCB]),
                      ld, sc, N, C, M, k);
        r->f_live = r->ln2_live || RP(s[L_FC]) || RP(s[L_FCB]);
        tt_gelu_rop(r->gl, r->f, BASE(a->f, M), N, M, k);
        tt_linear_rop(w->Rtmp, r->f_live ? r->gl : NULL, BASE(a->gl, M), W_(s[L_MP]), RP(s[L_MP]), RP(s[L_MPB]),
                      ld, sc, N, M, C, k);
        add_into(w->Rres, w->Rtmp, RC);
        res_live = res_live || r->f_live || RP(s[L_MP]) || RP(s[L_MPB]);
    }
    tt_layernorm_rop(w->Rlnf, w->Rlnf_xh, w->Rlnf_r, res_live ? w->Rres : NULL, BASE(im->lnf_xh, C),
                     BASE(im->lnf_r, 1), W_(im->t_lnfw), RP(im->t_lnfw), RP(im->t_lnfb), ld, N, C, k);
    int lnf_live = res_live || RP(im->t_lnfw) || RP(im->t_lnfb);
    tt_linear_rop(w->Rlogits, lnf_live ? w->Rlnf : NULL, BASE(im->lnf, C), W_(im->t_lm), RP(im->t_lm), NULL, ld,
                  sc, N, C, Vv, k);
    crossentropy_rop(w->Rdlogits, w->Rlogits, BASE(im->probs, Vv), 1.0 / im->N, N, Vv, k);

    /* R-backward */
    int more = stop < im->t_lm;
    if (more) memset(w->Rdln, 0, RC * sizeof(double));
    tt_linear_rop_backward(more ? w->Rdln : NULL, RG(im->t_lm), NULL, w->Rdlogits, BASE(im->dlogits, Vv),
                           BASE(im->lnf, C), lnf_live ? w->Rlnf : NULL, W_(im->t_lm), RP(im->t_lm), ld, sc, N, C, Vv, k);
    PAST(im->t_lm);
    more = stop < im->t_lnfw;
    if (more) memset(w->Rdres, 0, RC * sizeof(double));
    tt_layernorm_rop_backward(more ? w->Rdres : NULL, RG(im->t_lnfw), RG(im->t_lnfb), w->Rdln, BASE(im->dlnf, C),
                              BASE(im->lnf_xh, C), BASE(im->lnf_r, 1), w->Rlnf_xh, w->Rlnf_r, W_(im->t_lnfw),
                              RP(im->t_lnfw), ld, N, C, k);
    PAST(im->t_lnfw);
    for (int l = L - 1; l >= 0; l--) {
        const layer_acts *a = &im->la[l];
        layer_racts *r = &w->ra[l];
        const int *s = im->slot[l];
        /* Rdres = R{d res[l+1]} feeds the MLP and passes on to x1 */
        more = stop < s[L_MP];
        if (more) memset(w->Rdgl, 0, RM * sizeof(double));
        tt_linear_rop_backward(more ? w->Rdgl : NULL, RG(s[L_MP]), RG(s[L_MPB]), w->Rdres, BASE(im->dres[l + 1], C),
                               BASE(a->gl, M), r->f_live ? r->gl : NULL, W_(s[L_MP]), RP(s[L_MP]), ld, sc, N, M, C, k);
        PAST(s[L_MP]);
        tt_gelu_rop_backward(w->Rdf, w->Rdgl, BASE(a->dgl, M), BASE(a->f, M), r->f, N, M, k);
        more = stop < s[L_FC];
        if (more) memset(w->Rdln, 0, RC * sizeof(double));
        tt_linear_rop_backward(more ? w->Rdln : NULL, RG(s[L_FC]), RG(s[L_FCB]), w->Rdf, BASE(a->df, M),
                               BASE(a->ln2, C), r->ln2_live ? r->ln2 : NULL, W_(s[L_FC]), RP(s[L_FC]), ld, sc, N, C,
                               M, k);
        PAST(s[L_FC]);
        more = stop < s[L_LN2W];
        tt_layernorm_rop_backward(more ? w->Rdres : NULL, RG(s[L_LN2W]), RG(s[L_LN2B]), w->Rdln, BASE(a->dln2, C),
                                  BASE(a->ln2_xh, C), BASE(a->ln2_r, 1), r->ln2_xh, r->ln2_r, W_(s[L_LN2W]),
                                  RP(s[L_LN2W]), ld, N, C, k);
        PAST(s[L_LN2W]);
        /* Rdres is now R{dx1} */
        more = stop < s[L_O];
        if (more) memset(w->Rdy, 0, RC * sizeof(double));
        tt_linear_rop_backward(more ? w->Rdy : NULL, RG(s[L_O]), RG(s[L_OB]), w->Rdres, BASE(a->dx1, C),
                               BASE(a->y, C), r->y_live ? r->y : NULL, W_(s[L_O]), RP(s[L_O]), ld, sc, N, C, C, k);
        PAST(s[L_O]);
        tt_attention_rop_backward(w->Rdq, w->Rdkey, w->Rdv, w->Rdy, BASE(a->dy, C), BASE(a->q, C),
                                  BASE(a->key, C), BASE(a->v, C), a->att + A0, a->dpc + A0, r->q, r->key, r->v,
                                  r->att, bc, T, C, H, k);
        more = stop < s[L_Q];
        if (more) memset(w->Rdln, 0, RC * sizeof(double));
        double *Rdln = more ? w->Rdln : NULL;
        const double *Rln1 = r->ln1_live ? r->ln1 : NULL;
        tt_linear_rop_backward(Rdln, RG(s[L_Q]), RG(s[L_QB]), w->Rdq, BASE(a->dq, C), BASE(a->ln1, C), Rln1,
                               W_(s[L_Q]), RP(s[L_Q]), ld, sc, N, C, C, k);
        tt_linear_rop_backward(Rdln, RG(s[L_K]), RG(s[L_KB]), w->Rdkey, BASE(a->dkey, C), BASE(a->ln1, C), Rln1,
                               W_(s[L_K]), RP(s[L_K]), ld, sc, N, C, C, k);
        tt_linear_rop_backward(Rdln, RG(s[L_V]), RG(s[L_VB]), w->Rdv, BASE(a->dv, C), BASE(a->ln1, C), Rln1,
                               W_(s[L_V]), RP(s[L_V]), ld, sc, N, C, C, k);
        PAST(s[L_Q]);
        more = stop < s[L_LN1W];
        tt_layernorm_rop_backward(more ? w->Rdres : NULL, RG(s[L_LN1W]), RG(s[L_LN1B]), w->Rdln, BASE(a->dln1, C),
                                  BASE(a->ln1_xh, C), BASE(a->ln1_r, 1), r->ln1_xh, r->ln1_r, W_(s[L_LN1W]),
                                  RP(s[L_LN1W]), ld, N, C, k);
        PAST(s[L_LN1W]);
    }
    embed_rop_backward(RG(im->t_wte), RG(im->t_wpe), w->Rdres, inp, ld, N, T, C, k);
done:;
#undef RP
#undef RG
#undef W_
#undef BASE
#undef PAST
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

static void run_subpanel(panel_job *J, rwork *w, int p0, int kk)
{
    model *m = J->m;
    tt_impl *im = m->impl;
    size_t P = m->P;
    double *HV = J->out + (size_t)p0 * P;
    const double *V;
    int stop = 0;
    if (J->V) {
        V = J->V + (size_t)p0 * P;
        for (int t = 0; t < m->ntensors; t++) {
            const tensor_info *ti = &m->tensors[t];
            w->tlive[t] = 0;
            for (int d = 0; d < kk && !w->tlive[t]; d++) {
                const double *x = V + d * P + ti->offset;
                for (size_t i = 0; i < tensor_size(ti); i++)
                    if (x[i] != 0) {
                        w->tlive[t] = 1;
                        break;
                    }
            }
        }
    } else {
        size_t j = J->j0 + p0;
        for (int d = 0; d < kk; d++) w->E[d * P + j + d] = 1;
        V = w->E;
        int t0 = tensor_of(m, j), t1 = tensor_of(m, j + kk - 1);
        for (int t = 0; t < m->ntensors; t++) w->tlive[t] = t >= t0 && t <= t1;
        if (J->lower) stop = tensor_of(m, J->j0);
    }
    size_t from = m->tensors[stop].offset;
    for (int d = 0; d < kk; d++) memset(HV + d * P + from, 0, (P - from) * sizeof(double));
    for (int b0 = 0; b0 < im->B; b0 += w->bc) {
        int bc = im->B - b0 < w->bc ? im->B - b0 : w->bc;
        rpass(m, w, V, HV, kk, b0, bc, stop);
    }
    if (!J->V)
        for (int d = 0; d < kk; d++) w->E[d * P + J->j0 + p0 + d] = 0;
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
    int n = im->threads ? im->threads : openblas_get_num_threads();
    return n < 1 ? 1 : n > 64 ? 64 : n;
}

/* Base forward + backward, then the k directions of the job over the workers. */
static void run_panels(model *m, const double *V, double *out, size_t j0, int k, int lower)
{
    tt_impl *im = m->impl;
    if (k < 1) return;
    forward(m);
    backward(m, im->gbuf);
    int kp = im->kp_max ? im->kp_max : KP_MAX;
    kp = k < kp ? k : kp;
    int nsub = (k + kp - 1) / kp, nt = thread_count(im);
    nt = nt < nsub ? nt : nsub;
    ensure_work(m, nt, kp);
    panel_job J = {.m = m, .V = V, .out = out, .j0 = j0, .k = k, .lower = lower, .next = 0};
    pthread_mutex_init(&J.lock, NULL);
    worker_arg args[64];
    for (int i = 0; i < nt; i++) args[i] = (worker_arg){&J, im->work[i]};
    /* one BLAS thread per worker: the R-pass dgemms are small, and BLAS's own
     * threads would only spin */
    int saved = openblas_get_num_threads();
    openblas_set_num_threads(1);
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

void tt_hess_cols_lower(model *m, size_t j0, int k, double *out)
{
    impl_of(m);
    if (j0 + (size_t)k > m->P) DIE("hess_cols_lower %zu..%zu beyond P = %zu", j0, j0 + k, m->P);
    run_panels(m, NULL, out, j0, k, 1);
}

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
    m->params = xmalloc(m->P * sizeof(double));
    im->gbuf = xmalloc(m->P * sizeof(double));
    m->loss = tt_loss_fn;
    m->grad = tt_grad_fn;
    m->hvp = tt_hvp_fn;
    m->hess_cols = tt_hess_cols_fn;
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
        free_batch(im);
        im->B = B;
        im->N = B * c->T;
        im->tokens = xmalloc(n * sizeof(int));
        im->inp = xmalloc((size_t)im->N * sizeof(int));
        im->tgt = xmalloc((size_t)im->N * sizeof(int));
        alloc_acts(im);
    }
    memcpy(im->tokens, tokens, n * sizeof(int));
    for (int b = 0; b < B; b++)
        for (int t = 0; t < c->T; t++) {
            im->inp[b * c->T + t] = tokens[(size_t)b * (c->T + 1) + t];
            im->tgt[b * c->T + t] = tokens[(size_t)b * (c->T + 1) + t + 1];
        }
}
