/* The tiny Transformer's base pass: the forward over the batch (the loss),
 * the backward (the gradient), with every activation and activation gradient
 * kept — what the R-pass (tt_rpass.c) linearises around — and GELU's
 * derivatives there. Kernels: tt_kernels.c (token-major, (N,·) over all N =
 * B·T tokens of the batch).
 */
#include "tt_impl.h"
#include <stdlib.h>
#include <string.h>

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

void tt_alloc_acts(tt_impl *im)
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

double tt_base_forward(model *m)
{
    tt_impl *im = m->impl;
    const tt_config *c = &im->c;
    if (!im->B) die_user("tinytransformer: no batch set (call tt_set_batch first)");
    im->base_ok = 0; /* the activations are about to be those of the current params */
    int N = im->N, C = c->C, M = c->M, T = c->T, H = c->heads;
    const double *w = m->params;
    tt_embed_forward(im->res[0], im->inp, ctensor_in(m, w, im->t_wte), ctensor_in(m, w, im->t_wpe), N, T, C);
    for (int l = 0; l < c->layers; l++) {
        layer_acts *a = &im->la[l];
        const int *s = im->slot[l];
        tt_layernorm_forward(a->ln1, a->ln1_xh, a->ln1_r, im->res[l], ctensor_in(m, w, s[L_LN1W]), ctensor_in(m, w, s[L_LN1B]), N, C);
        tt_linear_forward(a->q, a->ln1, ctensor_in(m, w, s[L_Q]), ctensor_in(m, w, s[L_QB]), N, C, C);
        tt_linear_forward(a->key, a->ln1, ctensor_in(m, w, s[L_K]), ctensor_in(m, w, s[L_KB]), N, C, C);
        tt_linear_forward(a->v, a->ln1, ctensor_in(m, w, s[L_V]), ctensor_in(m, w, s[L_VB]), N, C, C);
        tt_attention_forward(a->y, a->att, a->q, a->key, a->v, im->B, T, C, H);
        tt_linear_forward(a->x1, a->y, ctensor_in(m, w, s[L_O]), ctensor_in(m, w, s[L_OB]), N, C, C);
        for (size_t i = 0; i < (size_t)N * C; i++) a->x1[i] += im->res[l][i];
        tt_layernorm_forward(a->ln2, a->ln2_xh, a->ln2_r, a->x1, ctensor_in(m, w, s[L_LN2W]), ctensor_in(m, w, s[L_LN2B]), N, C);
        tt_linear_forward(a->f, a->ln2, ctensor_in(m, w, s[L_FC]), ctensor_in(m, w, s[L_FCB]), N, C, M);
        (c->gelu == TT_GELU_TANH ? tt_gelu_tanh_forward : tt_gelu_forward)(a->gl, a->f, (size_t)N * M);
        tt_linear_forward(im->res[l + 1], a->gl, ctensor_in(m, w, s[L_MP]), ctensor_in(m, w, s[L_MPB]), N, M, C);
        for (size_t i = 0; i < (size_t)N * C; i++) im->res[l + 1][i] += a->x1[i];
    }
    tt_layernorm_forward(im->lnf, im->lnf_xh, im->lnf_r, im->res[c->layers], ctensor_in(m, w, im->t_lnfw),
                         ctensor_in(m, w, im->t_lnfb), N, C);
    tt_linear_forward(im->logits, im->lnf, ctensor_in(m, w, im->t_head), NULL, N, C, c->V);
    return tt_crossentropy_forward(im->probs, im->losses, im->logits, im->tgt, N, c->V) / N;
}

/* Gradient into g (length P, overwritten); keeps the activation gradients. */
void tt_base_backward(model *m, double *g)
{
    tt_impl *im = m->impl;
    const tt_config *c = &im->c;
    int N = im->N, C = c->C, M = c->M, T = c->T, H = c->heads, L = c->layers;
    size_t NC = (size_t)N * C;
    const double *w = m->params;
    memset(g, 0, m->P * sizeof(double));
    tt_crossentropy_backward(im->dlogits, im->probs, im->tgt, 1.0 / N, N, c->V);
    memset(im->dlnf, 0, NC * sizeof(double));
    /* tied: the head's gradient goes into wte; embed_backward adds the embedding's */
    tt_linear_backward(im->dlnf, tensor_in(m, g, im->t_head), NULL, im->dlogits, im->lnf, ctensor_in(m, w, im->t_head), N, C, c->V);
    memset(im->dres[L], 0, NC * sizeof(double));
    tt_layernorm_backward(im->dres[L], tensor_in(m, g, im->t_lnfw), tensor_in(m, g, im->t_lnfb), im->dlnf, im->lnf_xh, im->lnf_r,
                          ctensor_in(m, w, im->t_lnfw), N, C);
    for (int l = L - 1; l >= 0; l--) {
        layer_acts *a = &im->la[l];
        const int *s = im->slot[l];
        const double *dout = im->dres[l + 1]; /* res[l+1] = x1 + mlp */
        memset(a->dgl, 0, (size_t)N * M * sizeof(double));
        tt_linear_backward(a->dgl, tensor_in(m, g, s[L_MP]), tensor_in(m, g, s[L_MPB]), dout, a->gl, ctensor_in(m, w, s[L_MP]), N, M, C);
        (c->gelu == TT_GELU_TANH ? tt_gelu_tanh_backward : tt_gelu_backward)(a->df, a->dgl, a->f, (size_t)N * M);
        memset(a->dln2, 0, NC * sizeof(double));
        tt_linear_backward(a->dln2, tensor_in(m, g, s[L_FC]), tensor_in(m, g, s[L_FCB]), a->df, a->ln2, ctensor_in(m, w, s[L_FC]), N, C, M);
        memcpy(a->dx1, dout, NC * sizeof(double));
        tt_layernorm_backward(a->dx1, tensor_in(m, g, s[L_LN2W]), tensor_in(m, g, s[L_LN2B]), a->dln2, a->ln2_xh, a->ln2_r,
                              ctensor_in(m, w, s[L_LN2W]), N, C);
        memset(a->dy, 0, NC * sizeof(double));
        tt_linear_backward(a->dy, tensor_in(m, g, s[L_O]), tensor_in(m, g, s[L_OB]), a->dx1, a->y, ctensor_in(m, w, s[L_O]), N, C, C);
        tt_attention_backward(a->dq, a->dkey, a->dv, a->dpc, a->dy, a->q, a->key, a->v, a->att, im->B, T, C, H);
        memset(a->dln1, 0, NC * sizeof(double));
        tt_linear_backward(a->dln1, tensor_in(m, g, s[L_Q]), tensor_in(m, g, s[L_QB]), a->dq, a->ln1, ctensor_in(m, w, s[L_Q]), N, C, C);
        tt_linear_backward(a->dln1, tensor_in(m, g, s[L_K]), tensor_in(m, g, s[L_KB]), a->dkey, a->ln1, ctensor_in(m, w, s[L_K]), N, C, C);
        tt_linear_backward(a->dln1, tensor_in(m, g, s[L_V]), tensor_in(m, g, s[L_VB]), a->dv, a->ln1, ctensor_in(m, w, s[L_V]), N, C, C);
        memcpy(im->dres[l], a->dx1, NC * sizeof(double));
        tt_layernorm_backward(im->dres[l], tensor_in(m, g, s[L_LN1W]), tensor_in(m, g, s[L_LN1B]), a->dln1, a->ln1_xh, a->ln1_r,
                              ctensor_in(m, w, s[L_LN1W]), N, C);
    }
    tt_embed_backward(tensor_in(m, g, im->t_wte), tensor_in(m, g, im->t_wpe), im->dres[0], im->inp, N, T, C);
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
void tt_base_pass(model *m)
{
    tt_impl *im = m->impl;
    if (im->base_ok && memcmp(im->base_params, m->params, m->P * sizeof(double)) == 0) return;
    tt_base_forward(m);
    tt_base_backward(m, im->gbuf);
    if (im->gauss_newton) zero_base_gradients(im);
    size_t NM = (size_t)im->N * im->c.M;
    for (int l = 0; l < im->c.layers; l++) {
        layer_acts *a = &im->la[l];
        (im->c.gelu == TT_GELU_TANH ? tt_gelu_tanh_derivs : tt_gelu_derivs)(a->g1, a->g2d, a->f, NM);
        for (size_t i = 0; i < NM; i++) a->g2d[i] *= a->dgl[i];
    }
    memcpy(im->base_params, m->params, m->P * sizeof(double));
    im->base_ok = 1;
    im->fm.ok = 0;
}

/* dst (C,N) = src (N,C)ᵀ. */
static void transpose(double *dst, const double *src, size_t N, size_t C)
{
    for (size_t n0 = 0; n0 < N; n0 += 64)
        for (size_t c = 0; c < C; c++)
            for (size_t n = n0; n < N && n < n0 + 64; n++) dst[c * N + n] = src[n * C + c];
}

void tt_base_fm(model *m)
{
    tt_impl *im = m->impl;
    base_fm *f = &im->fm;
    size_t N = im->N, C = im->c.C, M = im->c.M, V = im->c.V, L = im->c.layers;
    if (f->ok) return;
    if (!f->buf) {
        size_t total = L * (4 * N * C + 2 * N * M) + 2 * N * C + N * V;
        memory_check("tinytransformer: feature-major copies of the base pass", 8.0 * (double)total);
        f->buf = xmalloc(total * sizeof(double));
        f->layer = xmalloc(L * sizeof(layer_fm));
        double *cur = f->buf;
        for (size_t l = 0; l < L; l++)
            f->layer[l] = (layer_fm){carve(&cur, N * C), carve(&cur, N * C), carve(&cur, N * C), carve(&cur, N * C),
                                     carve(&cur, N * M), carve(&cur, N * M)};
        f->lnf_xh = carve(&cur, N * C), f->dlnf = carve(&cur, N * C), f->probs = carve(&cur, N * V);
    }
    for (size_t l = 0; l < L; l++) {
        const layer_acts *a = &im->la[l];
        layer_fm *t = &f->layer[l];
        transpose(t->ln1_xh, a->ln1_xh, N, C), transpose(t->dln1, a->dln1, N, C);
        transpose(t->ln2_xh, a->ln2_xh, N, C), transpose(t->dln2, a->dln2, N, C);
        transpose(t->g1, a->g1, N, M), transpose(t->g2d, a->g2d, N, M);
    }
    transpose(f->lnf_xh, im->lnf_xh, N, C), transpose(f->dlnf, im->dlnf, N, C), transpose(f->probs, im->probs, N, V);
    f->ok = 1;
}

double tt_forward(model *m, double *logits, double *losses)
{
    tt_impl *im = tt_impl_of(m);
    double loss = tt_base_forward(m);
    if (logits) memcpy(logits, im->logits, (size_t)im->N * im->c.V * sizeof(double));
    if (losses) memcpy(losses, im->losses, (size_t)im->N * sizeof(double));
    return loss;
}

