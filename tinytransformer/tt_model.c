/* The tiny Transformer as a core/model.h `model`: the configuration, the
 * tensor table, construction, the batch and the settings. The passes behind
 * its loss, grad, hvp, hess_cols and hess_cols_lower: tt_pass.c (base forward
 * and backward), tt_rpass.c (the R-pass), tt_panels.c (panels of directions
 * over worker threads); their shared state: tt_impl.h.
 */
#include "tt_impl.h"
#include <stdlib.h>
#include <string.h>

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
    if (c->gelu != TT_GELU_ERF && c->gelu != TT_GELU_TANH) die_user("gelu must be 0 (erf) or 1 (tanh) (got %d)", c->gelu);
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

const tt_config *tt_config_of(const model *m) { return &tt_impl_of(m)->c; }

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

static double tt_loss_fn(model *m) { return tt_base_forward(m); }

static double tt_grad_fn(model *m, double *g)
{
    double loss = tt_base_forward(m);
    tt_base_backward(m, g);
    return loss;
}

void tt_set_gauss_newton(model *m, int on)
{
    tt_impl *im = tt_impl_of(m);
    if (on != 0 && on != 1) die_user("Gauss-Newton mode must be 0 or 1 (got %d)", on);
    if (im->gauss_newton != on) im->base_ok = 0; /* the stored base gradients belong to the other mode */
    im->gauss_newton = on;
}

int tt_gauss_newton(const model *m) { return tt_impl_of(m)->gauss_newton; }

void tt_set_threads(model *m, int n)
{
    tt_impl *im = tt_impl_of(m);
    if (n < 0 || n > 64) die_user("threads must be in 0..64 (got %d)", n);
    im->threads = n;
}

/* ---- construction ------------------------------------------------------------------------ */

static void free_batch(tt_impl *im)
{
    free(im->tokens), free(im->inp), free(im->tgt), free(im->abuf), free(im->res), free(im->dres), free(im->la);
    im->tokens = NULL, im->inp = im->tgt = NULL, im->abuf = NULL, im->res = im->dres = NULL, im->la = NULL;
    im->B = im->N = 0;
    free(im->fm.buf), free(im->fm.layer);
    im->fm = (base_fm){0};
    tt_free_work(im);
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

/* model.h's token_losses: the forward pass's per-position losses. */
static double tt_token_losses(model *m, double *losses) { return tt_forward(m, NULL, losses); }

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
    m->T = c->T, m->V = c->V, m->set_tokens = tt_set_batch;
    m->token_losses = tt_token_losses;
    m->hvp_tensors = tt_hvp_tensors_fn;
    m->hess_cols = tt_hess_cols_fn;
    m->hess_cols_lower = tt_hess_cols_lower_fn;
    m->destroy = tt_destroy;
    tt_init_params(m, c->seed);
    return m;
}

void tt_set_hvp_blocking(model *m, int kp, int bc)
{
    tt_impl *im = tt_impl_of(m);
    if (kp < 0 || bc < 0) die_user("hvp blocking must be >= 0 (got %d, %d)", kp, bc);
    im->kp_max = kp;
    im->bc_set = bc;
    tt_free_work(im);
}

void tt_set_batch(model *m, const int *tokens, int B)
{
    tt_impl *im = tt_impl_of(m);
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
        tt_alloc_acts(im);
    }
    memcpy(im->tokens, tokens, n * sizeof(int));
    im->base_ok = 0;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < c->T; t++) {
            im->inp[b * c->T + t] = tokens[(size_t)b * (c->T + 1) + t];
            im->tgt[b * c->T + t] = tokens[(size_t)b * (c->T + 1) + t + 1];
        }
}
