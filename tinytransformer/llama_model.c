/* The Llama-style model (llama.h) as a core/model.h `model`: tensor table,
 * forward, backward, and the exact Hessian-vector product on panels of
 * directions.
 *
 * hvp: one base forward + backward over the batch (activations, their
 * gradients and the SwiGLU coefficients kept while the parameters and batch
 * stay the same), then for each sub-panel of at most kp directions and each
 * chunk of bc sequences, the R-forward and R-backward passes on
 * direction-minor (width, N, k) R-quantities: tt_kernels.h's linear and
 * attention R-kernels (their R{W} terms for dense directions are
 * llama_dm_linear_rparam's), llama_kernels.h's RMSNorm, SwiGLU, rotary and
 * grouped heads. R{∇θ} = H v accumulates direction-minor in G (the transposed halves
 * of the weight matrices' R{dW} in Gt, folded in at the end), then is
 * transposed into HV. Sequences are independent given the parameters, so the
 * chunks only bound the workspace; the loss is the mean over all B·T
 * positions. Worker threads each take whole sub-panels and write only their
 * rows of HV: the result does not depend on the thread count.
 */
#include "llama_kernels.h"
#include <cblas.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Tensors of one layer, in buffer (forward) order. */
enum { S_LN1, S_Q, S_K, S_V, S_O, S_LN2, S_GATE, S_UP, S_DOWN, S_NSLOT };

/* Base activations and gradients of one layer, (N,·) over the whole batch.
 * Widths: C (residual), Cq = heads·hd (queries, attention), Ckv = kv_heads·hd, M. */
typedef struct {
    double *h1, *xh1, *r1;          /* input RMSNorm: output, x̂, r */
    double *qr, *kr, *ke, *v, *ve;  /* rotated queries (Cq), keys (Ckv) and keys, values per query head (Cq) */
    double *att, *y, *x1;           /* softmax (B,H,T,T), attention output (Cq), residual after o_proj */
    double *h2, *xh2, *r2;          /* post-attention RMSNorm */
    double *a, *b, *s;              /* gate, up (M), s = silu(a) ⊙ b */
    double *dh1, *dq, *dqr, *dk, *dke, *dv, *dve, *dpc, *dy, *dx1, *dh2, *da, *db, *ds;
    double *s0, *s1b, *ds1, *ds2b;  /* SwiGLU's R-pass coefficients (llama_swiglu_coeffs) */
} lacts;

typedef struct lwork lwork;

typedef struct {
    llama_config c;             /* head_dim resolved */
    int Cq, Ckv;
    int (*slot)[S_NSLOT];       /* tensor index of each layer slot */
    int t_embed, t_norm, t_head; /* t_head: lm_head, or t_embed when tied */
    double *rope_cos, *rope_sin; /* (T, hd/2) */

    int B, N;
    int *tokens, *inp, *tgt;
    double *abuf;
    double **res, **dres;       /* (L+1) × (N,C): the residual stream entering layer l and its gradient */
    lacts *la;
    double *hf, *xhf, *rf, *dhf, *logits, *probs, *dlogits, *losses, *tmp;
    double *gbuf, *base_params;
    int base_ok;
    int gauss_newton;           /* 1: hvp and hess_cols give the Gauss–Newton part G (llama_set_gauss_newton) */

    lwork **work;
    int nwork, kp_max, bc_set, threads;
} llama_impl;

llama_config llama_defaults(void)
{
    return (llama_config){.V = 8, .C = 16, .layers = 1, .heads = 4, .kv_heads = 4, .head_dim = 0, .M = 32, .T = 8,
                          .eps = 1e-6, .theta = 10000, .tied = 0, .seed = 1};
}

int llama_head_dim(const llama_config *c) { return c->head_dim ? c->head_dim : c->C / c->heads; }

void llama_check_config(const llama_config *c)
{
    if (c->V < 2 || c->V > 65536) die_user("vocabulary size V must be in 2..65536 (got %d)", c->V);
    if (c->C < 1 || c->C > 8192) die_user("hidden size C must be in 1..8192 (got %d)", c->C);
    if (c->layers < 1 || c->layers > 64) die_user("layers must be in 1..64 (got %d)", c->layers);
    if (c->heads < 1 || c->heads > 1024) die_user("heads must be in 1..1024 (got %d)", c->heads);
    if (c->kv_heads < 1 || c->heads % c->kv_heads)
        die_user("kv heads must be >= 1 and divide heads = %d (got %d)", c->heads, c->kv_heads);
    if (c->head_dim < 0 || c->head_dim > 1024) die_user("head_dim must be in 0..1024 (got %d)", c->head_dim);
    if (!c->head_dim && c->C % c->heads)
        die_user("heads = %d must divide the hidden size C = %d (or give head_dim)", c->heads, c->C);
    if (llama_head_dim(c) % 2) die_user("the head size must be even for rotary pairs (got %d)", llama_head_dim(c));
    if (c->M < 1 || c->M > 65536) die_user("intermediate size M must be in 1..65536 (got %d)", c->M);
    if (c->T < 1 || c->T > 4096) die_user("context length T must be in 1..4096 (got %d)", c->T);
    if (!(c->eps > 0 && c->eps < 1)) die_user("RMSNorm eps must be in (0, 1) (got %g)", c->eps);
    if (!(c->theta > 1 && c->theta < 1e12)) die_user("rope theta must be in (1, 1e12) (got %g)", c->theta);
    if (c->tied != 0 && c->tied != 1) die_user("tied must be 0 or 1 (got %d)", c->tied);
}

size_t llama_param_count(const llama_config *c)
{
    size_t C = c->C, M = c->M, V = c->V, hd = llama_head_dim(c), Cq = c->heads * hd, Ckv = c->kv_heads * hd;
    size_t layer = 2 * C + C * Cq + 2 * C * Ckv + Cq * C + 3 * M * C;
    return V * C + (size_t)c->layers * layer + C + (c->tied ? 0 : V * C);
}

/* ---- the tensor table ------------------------------------------------------------------------- */

static void build_table(model *m, llama_impl *im)
{
    const llama_config *c = &im->c;
    int C = c->C, M = c->M, hd = c->head_dim;
    im->t_embed = model_add_tensor(m, "model.embed_tokens.weight", ROLE_EMBED, c->V, C, 1, -1);
    im->slot = xmalloc((size_t)c->layers * sizeof *im->slot);
    static const char *const names[S_NSLOT] = {
        "input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
        "self_attn.o_proj.weight", "post_attention_layernorm.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight",
        "mlp.down_proj.weight"};
    static const tensor_role roles[S_NSLOT] = {ROLE_NORM, ROLE_QUERY, ROLE_KEY, ROLE_VALUE, ROLE_ATTN_PROJ,
                                               ROLE_NORM, ROLE_MLP_FC, ROLE_MLP_FC, ROLE_MLP_PROJ};
    int rows[S_NSLOT] = {C, c->heads * hd, c->kv_heads * hd, c->kv_heads * hd, C, C, M, M, C};
    int cols[S_NSLOT] = {1, C, C, C, c->heads * hd, 1, C, C, M};
    int heads[S_NSLOT] = {1, c->heads, c->kv_heads, c->kv_heads, 1, 1, 1, 1, 1};
    for (int l = 0; l < c->layers; l++)
        for (int s = 0; s < S_NSLOT; s++) {
            char name[48];
            snprintf(name, sizeof name, "model.layers.%d.%s", l, names[s]);
            im->slot[l][s] = model_add_tensor(m, name, roles[s], rows[s], cols[s], heads[s], l);
        }
    im->t_norm = model_add_tensor(m, "model.norm.weight", ROLE_NORM, C, 1, 1, -1);
    im->t_head = c->tied ? im->t_embed : model_add_tensor(m, "lm_head.weight", ROLE_OUTPUT, c->V, C, 1, -1);
}

int model_is_llama(const model *m) { return m && m->kind && strcmp(m->kind, "llama") == 0; }

static llama_impl *impl_of(const model *m)
{
    if (!model_is_llama(m)) DIE("not a llama model");
    return m->impl;
}

const llama_config *llama_config_of(const model *m) { return &impl_of(m)->c; }

static const double *W(const model *m, int t) { return m->params + m->tensors[t].offset; }
static double *G_(const model *m, double *g, int t) { return g + m->tensors[t].offset; }

void llama_init_params(model *m, unsigned long seed)
{
    gsl_rng *r = rng_new(seed);
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        double *p = m->params + ti->offset;
        for (size_t i = 0; i < tensor_size(ti); i++) p[i] = ti->role == ROLE_NORM ? 1.0 : rng_gaussian(r, 0.02);
    }
    rng_free(r);
}

/* ---- base activations ------------------------------------------------------------------------- */

static double *carve(double **cursor, size_t n)
{
    double *p = *cursor;
    *cursor += n;
    return p;
}

/* Doubles of the base activations for a batch of B sequences. */
static size_t acts_doubles(const llama_config *c, int B)
{
    size_t N = (size_t)B * c->T, C = c->C, M = c->M, V = c->V, L = c->layers, hd = llama_head_dim(c);
    size_t Cq = c->heads * hd, Ckv = c->kv_heads * hd, A = (size_t)B * c->heads * c->T * c->T;
    size_t layer = 8 * N * C + 2 * N + 9 * N * Cq + 4 * N * Ckv + 2 * A + 10 * N * M;
    return 2 * (L + 1) * N * C + L * layer + 3 * N * C + N + 3 * N * V + N + N * Cq;
}

double llama_batch_bytes(const llama_config *c, int B)
{
    return 8.0 * (double)acts_doubles(c, B) + 12.0 * (double)B * (c->T + 1);
}

static void alloc_acts(llama_impl *im)
{
    const llama_config *c = &im->c;
    size_t N = im->N, C = c->C, M = c->M, V = c->V, L = c->layers, Cq = im->Cq, Ckv = im->Ckv;
    size_t A = (size_t)im->B * c->heads * c->T * c->T, total = acts_doubles(c, im->B);
    im->abuf = xmalloc(checked_mul(total, sizeof(double), "activations"));
    double *cur = im->abuf;
    im->res = xmalloc((L + 1) * sizeof(double *));
    im->dres = xmalloc((L + 1) * sizeof(double *));
    im->la = xcalloc(L, sizeof(lacts));
    for (size_t l = 0; l <= L; l++) im->res[l] = carve(&cur, N * C), im->dres[l] = carve(&cur, N * C);
    for (size_t l = 0; l < L; l++) {
        lacts *a = &im->la[l];
        a->h1 = carve(&cur, N * C), a->xh1 = carve(&cur, N * C), a->r1 = carve(&cur, N);
        a->qr = carve(&cur, N * Cq), a->kr = carve(&cur, N * Ckv), a->ke = carve(&cur, N * Cq);
        a->v = carve(&cur, N * Ckv), a->ve = carve(&cur, N * Cq);
        a->att = carve(&cur, A), a->y = carve(&cur, N * Cq), a->x1 = carve(&cur, N * C);
        a->h2 = carve(&cur, N * C), a->xh2 = carve(&cur, N * C), a->r2 = carve(&cur, N);
        a->a = carve(&cur, N * M), a->b = carve(&cur, N * M), a->s = carve(&cur, N * M);
        a->dh1 = carve(&cur, N * C), a->dq = carve(&cur, N * Cq), a->dqr = carve(&cur, N * Cq);
        a->dk = carve(&cur, N * Ckv), a->dke = carve(&cur, N * Cq), a->dv = carve(&cur, N * Ckv);
        a->dve = carve(&cur, N * Cq), a->dpc = carve(&cur, A), a->dy = carve(&cur, N * Cq);
        a->dx1 = carve(&cur, N * C), a->dh2 = carve(&cur, N * C);
        a->da = carve(&cur, N * M), a->db = carve(&cur, N * M), a->ds = carve(&cur, N * M);
        a->s0 = carve(&cur, N * M), a->s1b = carve(&cur, N * M);
        a->ds1 = carve(&cur, N * M), a->ds2b = carve(&cur, N * M);
    }
    im->hf = carve(&cur, N * C), im->xhf = carve(&cur, N * C), im->rf = carve(&cur, N), im->dhf = carve(&cur, N * C);
    im->logits = carve(&cur, N * V), im->probs = carve(&cur, N * V), im->dlogits = carve(&cur, N * V);
    im->losses = carve(&cur, N), im->tmp = carve(&cur, N * Cq);
    if ((size_t)(cur - im->abuf) != total) DIE("activation layout: %zu of %zu", (size_t)(cur - im->abuf), total);
}

/* ---- forward and backward ------------------------------------------------------------------------ */

static double forward(model *m)
{
    llama_impl *im = m->impl;
    const llama_config *c = &im->c;
    if (!im->B) die_user("llama: no batch set (call llama_set_batch first)");
    im->base_ok = 0;
    int N = im->N, C = c->C, M = c->M, T = c->T, H = c->heads, Hkv = c->kv_heads, hd = c->head_dim;
    int Cq = im->Cq, Ckv = im->Ckv;
    size_t NC = (size_t)N * C;
    llama_embed_forward(im->res[0], im->inp, W(m, im->t_embed), N, C);
    for (int l = 0; l < c->layers; l++) {
        lacts *a = &im->la[l];
        const int *s = im->slot[l];
        llama_rmsnorm_forward(a->h1, a->xh1, a->r1, im->res[l], W(m, s[S_LN1]), c->eps, N, C);
        tt_linear_forward(im->tmp, a->h1, W(m, s[S_Q]), NULL, N, C, Cq);
        llama_rope(a->qr, im->tmp, im->rope_cos, im->rope_sin, 0, N, T, H, hd);
        tt_linear_forward(im->tmp, a->h1, W(m, s[S_K]), NULL, N, C, Ckv);
        llama_rope(a->kr, im->tmp, im->rope_cos, im->rope_sin, 0, N, T, Hkv, hd);
        llama_repeat_kv(a->ke, a->kr, N, H, Hkv, hd);
        tt_linear_forward(a->v, a->h1, W(m, s[S_V]), NULL, N, C, Ckv);
        llama_repeat_kv(a->ve, a->v, N, H, Hkv, hd);
        tt_attention_forward(a->y, a->att, a->qr, a->ke, a->ve, im->B, T, Cq, H);
        tt_linear_forward(a->x1, a->y, W(m, s[S_O]), NULL, N, Cq, C);
        for (size_t i = 0; i < NC; i++) a->x1[i] += im->res[l][i];
        llama_rmsnorm_forward(a->h2, a->xh2, a->r2, a->x1, W(m, s[S_LN2]), c->eps, N, C);
        tt_linear_forward(a->a, a->h2, W(m, s[S_GATE]), NULL, N, C, M);
        tt_linear_forward(a->b, a->h2, W(m, s[S_UP]), NULL, N, C, M);
        llama_swiglu_forward(a->s, a->a, a->b, (size_t)N * M);
        tt_linear_forward(im->res[l + 1], a->s, W(m, s[S_DOWN]), NULL, N, M, C);
        for (size_t i = 0; i < NC; i++) im->res[l + 1][i] += a->x1[i];
    }
    llama_rmsnorm_forward(im->hf, im->xhf, im->rf, im->res[c->layers], W(m, im->t_norm), c->eps, N, C);
    tt_linear_forward(im->logits, im->hf, W(m, im->t_head), NULL, N, C, c->V);
    return tt_crossentropy_forward(im->probs, im->losses, im->logits, im->tgt, N, c->V) / N;
}

/* Gradient into g (length P, overwritten); keeps the activation gradients. */
static void backward(model *m, double *g)
{
    llama_impl *im = m->impl;
    const llama_config *c = &im->c;
    int N = im->N, C = c->C, M = c->M, T = c->T, H = c->heads, Hkv = c->kv_heads, hd = c->head_dim, L = c->layers;
    int Cq = im->Cq, Ckv = im->Ckv;
    size_t NC = (size_t)N * C;
    memset(g, 0, m->P * sizeof(double));
    tt_crossentropy_backward(im->dlogits, im->probs, im->tgt, 1.0 / N, N, c->V);
    memset(im->dhf, 0, NC * sizeof(double));
    /* tied: the head's gradient goes into the embedding; llama_embed_backward adds the embedding's */
    tt_linear_backward(im->dhf, G_(m, g, im->t_head), NULL, im->dlogits, im->hf, W(m, im->t_head), N, C, c->V);
    memset(im->dres[L], 0, NC * sizeof(double));
    llama_rmsnorm_backward(im->dres[L], G_(m, g, im->t_norm), im->dhf, im->xhf, im->rf, W(m, im->t_norm), N, C);
    for (int l = L - 1; l >= 0; l--) {
        lacts *a = &im->la[l];
        const int *s = im->slot[l];
        const double *dout = im->dres[l + 1];
        memset(a->ds, 0, (size_t)N * M * sizeof(double));
        tt_linear_backward(a->ds, G_(m, g, s[S_DOWN]), NULL, dout, a->s, W(m, s[S_DOWN]), N, M, C);
        llama_swiglu_backward(a->da, a->db, a->ds, a->a, a->b, (size_t)N * M);
        memset(a->dh2, 0, NC * sizeof(double));
        tt_linear_backward(a->dh2, G_(m, g, s[S_GATE]), NULL, a->da, a->h2, W(m, s[S_GATE]), N, C, M);
        tt_linear_backward(a->dh2, G_(m, g, s[S_UP]), NULL, a->db, a->h2, W(m, s[S_UP]), N, C, M);
        memcpy(a->dx1, dout, NC * sizeof(double));
        llama_rmsnorm_backward(a->dx1, G_(m, g, s[S_LN2]), a->dh2, a->xh2, a->r2, W(m, s[S_LN2]), N, C);
        memset(a->dy, 0, (size_t)N * Cq * sizeof(double));
        tt_linear_backward(a->dy, G_(m, g, s[S_O]), NULL, a->dx1, a->y, W(m, s[S_O]), N, Cq, C);
        tt_attention_backward(a->dqr, a->dke, a->dve, a->dpc, a->dy, a->qr, a->ke, a->ve, a->att, im->B, T, Cq, H);
        llama_rope(a->dq, a->dqr, im->rope_cos, im->rope_sin, 1, N, T, H, hd);
        llama_repeat_kv_backward(im->tmp, a->dke, N, H, Hkv, hd);
        llama_rope(a->dk, im->tmp, im->rope_cos, im->rope_sin, 1, N, T, Hkv, hd);
        llama_repeat_kv_backward(a->dv, a->dve, N, H, Hkv, hd);
        memset(a->dh1, 0, NC * sizeof(double));
        tt_linear_backward(a->dh1, G_(m, g, s[S_Q]), NULL, a->dq, a->h1, W(m, s[S_Q]), N, C, Cq);
        tt_linear_backward(a->dh1, G_(m, g, s[S_K]), NULL, a->dk, a->h1, W(m, s[S_K]), N, C, Ckv);
        tt_linear_backward(a->dh1, G_(m, g, s[S_V]), NULL, a->dv, a->h1, W(m, s[S_V]), N, C, Ckv);
        memcpy(im->dres[l], a->dx1, NC * sizeof(double));
        llama_rmsnorm_backward(im->dres[l], G_(m, g, s[S_LN1]), a->dh1, a->xh1, a->r1, W(m, s[S_LN1]), N, C);
    }
    llama_embed_backward(G_(m, g, im->t_embed), im->dres[0], im->inp, N, C);
}

static double llama_loss_fn(model *m) { return forward(m); }

static double llama_grad_fn(model *m, double *g)
{
    double loss = forward(m);
    backward(m, g);
    llama_impl *im = m->impl;
    if (im->gauss_newton) im->base_ok = 0; /* the base gradients are back; the next R-pass zeroes them again */
    return loss;
}

double llama_forward(model *m, double *logits, double *losses)
{
    llama_impl *im = impl_of(m);
    double loss = forward(m);
    if (logits) memcpy(logits, im->logits, (size_t)im->N * im->c.V * sizeof(double));
    if (losses) memcpy(losses, im->losses, (size_t)im->N * sizeof(double));
    return loss;
}

/* ---- R workspace (one per worker) ----------------------------------------------------------------- */

#define KP_MAX 32        /* directions per sub-panel */
#define ROWS_TARGET 1024 /* chunk columns bc·T·kp aimed at */

/* The R-activations of one layer the R-backward reads again, (width, N, k); *_t token-major copies. */
typedef struct {
    double *h1, *h1_t, *xh1, *r1, *qr, *ke, *ve, *att, *y, *y_t, *h2, *h2_t, *xh2, *r2, *a, *b, *s_t;
} lracts;

struct lwork {
    int kp, bc;
    double *buf;
    lracts *ra;
    /* transient R-quantities of the pass */
    double *Rres, *Rq, *Rk, *Rkr, *Rv, *Rs, *Rhf, *Rhf_t, *Rxhf, *Rrf, *Rlogits, *Rdlogits, *Rdlogits_t;
    double *Rdres, *Rdres_t, *Rdh, *Rds, *Rda, *Rda_t, *Rdb, *Rdb_t, *Rdy, *Rdqr, *Rdke, *Rdve;
    double *Rdq, *Rdq_t, *Rdkr, *Rdk, *Rdk_t, *Rdv, *Rdv_t;
    double *G, *Gt, *Vt;      /* (P,kp): R{∇θ}, the transposed halves of R{dW}, the directions */
    const double **rp;        /* per tensor: its directions in Vt, NULL when all zero */
};

static int padded(int k) { return (k + TT_KBLOCK - 1) / TT_KBLOCK * TT_KBLOCK; }

static void lwork_free(lwork *w)
{
    if (!w) return;
    free(w->buf), free(w->ra), free(w->G), free(w->Gt), free(w->Vt), free(w->rp);
    free(w);
}

static void free_work(llama_impl *im)
{
    for (int i = 0; i < im->nwork; i++) lwork_free(im->work[i]);
    free(im->work);
    im->work = NULL;
    im->nwork = 0;
}

static lwork *lwork_new(const model *m, int kp, int bc)
{
    const llama_impl *im = m->impl;
    const llama_config *c = &im->c;
    lwork *w = xcalloc(1, sizeof(lwork));
    w->kp = kp;
    w->bc = bc;
    kp = padded(kp);
    size_t NT = (size_t)bc * c->T, R = tt_dm_ld((int)NT, kp), C = c->C, M = c->M, V = c->V, L = c->layers;
    size_t Cq = im->Cq, Ckv = im->Ckv, A = (size_t)bc * c->heads * c->T * c->T * kp;
    size_t TC = NT * tt_dm_ldt(c->C, kp), TQ = NT * tt_dm_ldt(im->Cq, kp), TK = NT * tt_dm_ldt(im->Ckv, kp);
    size_t TM = NT * tt_dm_ldt(c->M, kp), TV = NT * tt_dm_ldt(c->V, kp);
    size_t layer = 4 * R * C + 2 * R + 4 * R * Cq + A + 2 * R * M + 2 * TC + TQ + TM;
    size_t total = L * layer + R * C + R * Cq + 3 * R * Ckv + R * M /* Rres .. Rs */
                   + 2 * R * C + R + TC + 2 * R * V + TV    /* Rhf .. Rdlogits_t */
                   + 2 * R * C + TC + 3 * R * M + 2 * TM    /* Rdres .. Rdb_t */
                   + 5 * R * Cq + TQ + 3 * R * Ckv + 2 * TK; /* Rdy .. Rdv_t */
    w->buf = xmalloc(checked_mul(total, sizeof(double), "R workspace"));
    double *cur = w->buf;
    w->ra = xcalloc(L, sizeof(lracts));
    for (size_t l = 0; l < L; l++) {
        lracts *r = &w->ra[l];
        r->h1 = carve(&cur, R * C), r->h1_t = carve(&cur, TC), r->xh1 = carve(&cur, R * C), r->r1 = carve(&cur, R);
        r->qr = carve(&cur, R * Cq), r->ke = carve(&cur, R * Cq), r->ve = carve(&cur, R * Cq);
        r->att = carve(&cur, A), r->y = carve(&cur, R * Cq), r->y_t = carve(&cur, TQ);
        r->h2 = carve(&cur, R * C), r->h2_t = carve(&cur, TC), r->xh2 = carve(&cur, R * C), r->r2 = carve(&cur, R);
        r->a = carve(&cur, R * M), r->b = carve(&cur, R * M), r->s_t = carve(&cur, TM);
    }
    w->Rres = carve(&cur, R * C), w->Rq = carve(&cur, R * Cq), w->Rk = carve(&cur, R * Ckv);
    w->Rkr = carve(&cur, R * Ckv), w->Rv = carve(&cur, R * Ckv), w->Rs = carve(&cur, R * M);
    w->Rhf = carve(&cur, R * C), w->Rhf_t = carve(&cur, TC), w->Rxhf = carve(&cur, R * C), w->Rrf = carve(&cur, R);
    w->Rlogits = carve(&cur, R * V), w->Rdlogits = carve(&cur, R * V), w->Rdlogits_t = carve(&cur, TV);
    w->Rdres = carve(&cur, R * C), w->Rdres_t = carve(&cur, TC), w->Rdh = carve(&cur, R * C);
    w->Rds = carve(&cur, R * M), w->Rda = carve(&cur, R * M), w->Rda_t = carve(&cur, TM);
    w->Rdb = carve(&cur, R * M), w->Rdb_t = carve(&cur, TM);
    w->Rdy = carve(&cur, R * Cq), w->Rdqr = carve(&cur, R * Cq), w->Rdke = carve(&cur, R * Cq);
    w->Rdve = carve(&cur, R * Cq), w->Rdq = carve(&cur, R * Cq), w->Rdq_t = carve(&cur, TQ);
    w->Rdkr = carve(&cur, R * Ckv), w->Rdk = carve(&cur, R * Ckv), w->Rdk_t = carve(&cur, TK);
    w->Rdv = carve(&cur, R * Ckv), w->Rdv_t = carve(&cur, TK);
    if ((size_t)(cur - w->buf) != total) DIE("R workspace layout: %zu of %zu", (size_t)(cur - w->buf), total);
    size_t G = checked_mul(checked_mul((size_t)kp, m->P, "R-gradient panel"), sizeof(double), "R-gradient panel");
    w->G = xmalloc(G), w->Gt = xmalloc(G), w->Vt = xmalloc(G);
    w->rp = xcalloc((size_t)m->ntensors, sizeof(double *));
    return w;
}

static void ensure_work(model *m, int n, int kp)
{
    llama_impl *im = m->impl;
    int bc = im->bc_set ? im->bc_set : ROWS_TARGET / (im->c.T * padded(kp));
    bc = bc < 1 ? 1 : bc > im->B ? im->B : bc;
    if (im->nwork >= n && im->work[0]->kp == kp && im->work[0]->bc == bc) return;
    free_work(im);
    im->work = xmalloc((size_t)n * sizeof(lwork *));
    for (int i = 0; i < n; i++) im->work[i] = lwork_new(m, kp, bc);
    im->nwork = n;
}

/* ---- the R-pass over one chunk of sequences ------------------------------------------------------------
 * Every R-quantity is computed (zero where nothing upstream is perturbed); a
 * tensor with no direction has a NULL R-parameter, which the kernels skip. */

static const tt_rpar no_rpar;

/* R{out} (+)= W R{inp} + inp R{W}ᵀ of the linear layer of tensor t. */
static void lin_rop(const model *m, const lwork *w, int t, double *Rout, int acc, const double *Rinp,
                    const double *inp, int N, int IC, int OC, int k)
{
    tt_dm_linear_rop(Rout, acc, Rinp, inp, W(m, t), no_rpar, no_rpar, N, IC, OC, k);
    if (w->rp[t]) llama_dm_linear_rparam(Rout, inp, w->rp[t], N, IC, OC, k);
}

/* R-backward of the linear layer of tensor t: R{dinp} (acc 1: adds) and its R{dW} halves into G and Gt. */
static void lin_rop_backward(const model *m, lwork *w, int t, double *Rdinp, int acc, const double *Rdout,
                             const double *Rdout_t, const double *dout, const double *inp, const double *Rinp_t, int N,
                             int IC, int OC, int k)
{
    size_t o = m->tensors[t].offset * (size_t)k;
    tt_dm_linear_rop_backward(Rdinp, acc, w->G + o, w->Gt + o, NULL, Rdout, Rdout_t, dout, inp, Rinp_t, W(m, t),
                              no_rpar, N, IC, OC, k);
    if (Rdinp && w->rp[t]) llama_dm_linear_rparam_backward(Rdinp, dout, w->rp[t], N, IC, OC, k);
}

static double *gslot(const model *m, lwork *w, int t, int k) { return w->G + m->tensors[t].offset * (size_t)k; }

static void rpass(model *m, lwork *w, int k, int b0, int bc)
{
    llama_impl *im = m->impl;
    const llama_config *c = &im->c;
    int T = c->T, C = c->C, M = c->M, H = c->heads, Hkv = c->kv_heads, hd = c->head_dim, L = c->layers, V = c->V;
    int Cq = im->Cq, Ckv = im->Ckv, N = bc * T;
    size_t n0 = (size_t)b0 * T, A0 = (size_t)b0 * H * T * T;
    const int *inp = im->inp + n0;
    const double *cs = im->rope_cos, *sn = im->rope_sin;
#define AT(x, width) ((x) + n0 * (size_t)(width))

    /* R-forward */
    llama_dm_embed_rop(w->Rres, inp, w->rp[im->t_embed], N, C, k);
    for (int l = 0; l < L; l++) {
        const lacts *a = &im->la[l];
        const int *s = im->slot[l];
        lracts *r = &w->ra[l];
        llama_dm_rmsnorm_rop(r->h1, r->h1_t, r->xh1, r->r1, w->Rres, AT(a->xh1, C), AT(a->r1, 1), W(m, s[S_LN1]),
                             w->rp[s[S_LN1]], N, C, k);
        lin_rop(m, w, s[S_Q], w->Rq, 0, r->h1, AT(a->h1, C), N, C, Cq, k);
        llama_dm_rope(r->qr, NULL, w->Rq, cs, sn, 0, N, T, H, hd, k);
        lin_rop(m, w, s[S_K], w->Rk, 0, r->h1, AT(a->h1, C), N, C, Ckv, k);
        llama_dm_rope(w->Rkr, NULL, w->Rk, cs, sn, 0, N, T, Hkv, hd, k);
        llama_dm_repeat_kv(r->ke, w->Rkr, N, H, Hkv, hd, k);
        lin_rop(m, w, s[S_V], w->Rv, 0, r->h1, AT(a->h1, C), N, C, Ckv, k);
        llama_dm_repeat_kv(r->ve, w->Rv, N, H, Hkv, hd, k);
        tt_dm_attention_rop(r->y, r->y_t, r->att, r->qr, r->ke, r->ve, AT(a->qr, Cq), AT(a->ke, Cq), AT(a->ve, Cq),
                            a->att + A0, bc, T, Cq, H, k);
        lin_rop(m, w, s[S_O], w->Rres, 1, r->y, AT(a->y, Cq), N, Cq, C, k); /* Rres is now R{x1} */
        llama_dm_rmsnorm_rop(r->h2, r->h2_t, r->xh2, r->r2, w->Rres, AT(a->xh2, C), AT(a->r2, 1), W(m, s[S_LN2]),
                             w->rp[s[S_LN2]], N, C, k);
        lin_rop(m, w, s[S_GATE], r->a, 0, r->h2, AT(a->h2, C), N, C, M, k);
        lin_rop(m, w, s[S_UP], r->b, 0, r->h2, AT(a->h2, C), N, C, M, k);
        llama_dm_swiglu_rop(w->Rs, r->s_t, r->a, r->b, AT(a->s0, M), AT(a->s1b, M), N, M, k);
        lin_rop(m, w, s[S_DOWN], w->Rres, 1, w->Rs, AT(a->s, M), N, M, C, k);
    }
    llama_dm_rmsnorm_rop(w->Rhf, w->Rhf_t, w->Rxhf, w->Rrf, w->Rres, AT(im->xhf, C), AT(im->rf, 1), W(m, im->t_norm),
                         w->rp[im->t_norm], N, C, k);
    lin_rop(m, w, im->t_head, w->Rlogits, 0, w->Rhf, AT(im->hf, C), N, C, V, k);
    tt_dm_crossentropy_rop(w->Rdlogits, w->Rdlogits_t, w->Rlogits, AT(im->probs, V), 1.0 / im->N, N, V, k);

    /* R-backward */
    lin_rop_backward(m, w, im->t_head, w->Rdh, 0, w->Rdlogits, w->Rdlogits_t, AT(im->dlogits, V), AT(im->hf, C),
                     w->Rhf_t, N, C, V, k);
    llama_dm_rmsnorm_rop_backward(w->Rdres, w->Rdres_t, 0, gslot(m, w, im->t_norm, k), w->Rdh, AT(im->dhf, C),
                                  AT(im->xhf, C), AT(im->rf, 1), w->Rxhf, w->Rrf, W(m, im->t_norm),
                                  w->rp[im->t_norm], N, C, k);
    for (int l = L - 1; l >= 0; l--) {
        const lacts *a = &im->la[l];
        const int *s = im->slot[l];
        const lracts *r = &w->ra[l];
        /* Rdres = R{d res[l+1]}: into the MLP, and on to R{dx1} */
        lin_rop_backward(m, w, s[S_DOWN], w->Rds, 0, w->Rdres, w->Rdres_t, AT(im->dres[l + 1], C), AT(a->s, M),
                         r->s_t, N, M, C, k);
        llama_dm_swiglu_rop_backward(w->Rda, w->Rda_t, w->Rdb, w->Rdb_t, w->Rds, r->a, r->b, AT(a->s0, M),
                                     AT(a->s1b, M), AT(a->ds1, M), AT(a->ds2b, M), N, M, k);
        lin_rop_backward(m, w, s[S_GATE], w->Rdh, 0, w->Rda, w->Rda_t, AT(a->da, M), AT(a->h2, C), r->h2_t, N, C, M,
                         k);
        lin_rop_backward(m, w, s[S_UP], w->Rdh, 1, w->Rdb, w->Rdb_t, AT(a->db, M), AT(a->h2, C), r->h2_t, N, C, M, k);
        llama_dm_rmsnorm_rop_backward(w->Rdres, w->Rdres_t, 1, gslot(m, w, s[S_LN2], k), w->Rdh, AT(a->dh2, C),
                                      AT(a->xh2, C), AT(a->r2, 1), r->xh2, r->r2, W(m, s[S_LN2]), w->rp[s[S_LN2]], N,
                                      C, k);
        /* Rdres = R{dx1} */
        lin_rop_backward(m, w, s[S_O], w->Rdy, 0, w->Rdres, w->Rdres_t, AT(a->dx1, C), AT(a->y, Cq), r->y_t, N, Cq, C,
                         k);
        tt_dm_attention_rop_backward(w->Rdqr, w->Rdke, w->Rdve, NULL, NULL, NULL, w->Rdy, AT(a->dy, Cq),
                                     AT(a->qr, Cq), AT(a->ke, Cq), AT(a->ve, Cq), a->att + A0, a->dpc + A0, r->qr,
                                     r->ke, r->ve, r->att, bc, T, Cq, H, k);
        llama_dm_rope(w->Rdq, w->Rdq_t, w->Rdqr, cs, sn, 1, N, T, H, hd, k);
        llama_dm_repeat_kv_backward(w->Rdkr, NULL, w->Rdke, N, H, Hkv, hd, k);
        llama_dm_rope(w->Rdk, w->Rdk_t, w->Rdkr, cs, sn, 1, N, T, Hkv, hd, k);
        llama_dm_repeat_kv_backward(w->Rdv, w->Rdv_t, w->Rdve, N, H, Hkv, hd, k);
        lin_rop_backward(m, w, s[S_Q], w->Rdh, 0, w->Rdq, w->Rdq_t, AT(a->dq, Cq), AT(a->h1, C), r->h1_t, N, C, Cq, k);
        lin_rop_backward(m, w, s[S_K], w->Rdh, 1, w->Rdk, w->Rdk_t, AT(a->dk, Ckv), AT(a->h1, C), r->h1_t, N, C, Ckv,
                         k);
        lin_rop_backward(m, w, s[S_V], w->Rdh, 1, w->Rdv, w->Rdv_t, AT(a->dv, Ckv), AT(a->h1, C), r->h1_t, N, C, Ckv,
                         k);
        llama_dm_rmsnorm_rop_backward(w->Rdres, w->Rdres_t, 1, gslot(m, w, s[S_LN1], k), w->Rdh, AT(a->dh1, C),
                                      AT(a->xh1, C), AT(a->r1, 1), r->xh1, r->r1, W(m, s[S_LN1]), w->rp[s[S_LN1]], N,
                                      C, k);
    }
    llama_dm_embed_rop_backward(gslot(m, w, im->t_embed, k), w->Rdres, inp, N, C, k);
#undef AT
}

/* ---- panels of directions over worker threads --------------------------------------------------------- */

typedef struct {
    model *m;
    const double *V; /* (k,P) */
    double *out;     /* (k,P) */
    int k, next;
    pthread_mutex_t lock;
} panel_job;

typedef struct {
    panel_job *job;
    lwork *w;
} worker_arg;

/* Directions V (kk rows, stride P) into w->Vt, direction-minor with kw >= kk
 * columns (the extra ones zero); a tensor no direction touches gets NULL. */
static void dense_rpars(const model *m, lwork *w, const double *V, int kk, int kw)
{
    size_t P = m->P;
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        size_t n = tensor_size(ti), o = ti->offset;
        int live = 0;
        for (int d = 0; d < kk && !live; d++)
            for (size_t i = 0; i < n && !live; i++) live = V[d * P + o + i] != 0;
        w->rp[t] = NULL;
        if (!live) continue;
        double *vt = w->Vt + o * kw;
        for (int d = 0; d < kw; d++)
            for (size_t i = 0; i < n; i++) vt[i * kw + d] = d < kk ? V[d * P + o + i] : 0;
        w->rp[t] = vt;
    }
}

static void run_subpanel(panel_job *J, lwork *w, int p0, int kk)
{
    model *m = J->m;
    llama_impl *im = m->impl;
    size_t P = m->P;
    int kw = padded(kk);
    dense_rpars(m, w, J->V + (size_t)p0 * P, kk, kw);
    memset(w->G, 0, P * kw * sizeof(double));
    memset(w->Gt, 0, P * kw * sizeof(double));
    for (int b0 = 0; b0 < im->B; b0 += w->bc) rpass(m, w, kw, b0, im->B - b0 < w->bc ? im->B - b0 : w->bc);
    /* the weight matrices' R{dW}: add the transposed halves (zero for an untied embedding) */
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        size_t o = ti->offset * kw;
        if (ti->cols > 1) tt_dm_fold_transposed(w->G + o, w->Gt + o, ti->cols, ti->rows, kw);
    }
    double *HV = J->out + (size_t)p0 * P;
    for (int d = 0; d < kk; d++)
        for (size_t i = 0; i < P; i++) HV[d * P + i] = w->G[i * kw + d];
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

/* The base forward + backward the R-pass linearises around, and SwiGLU's
 * coefficients there; kept while the parameters and the batch stay the same. */
/* Gauss–Newton mode: every base gradient the R-pass reads is zero, so each
 * term of R{∇θ} that multiplies an upstream gradient ∂L/∂z (the curvature of a
 * layer, z's second derivative) drops, and what is left is G = Jᵀ S J, J the
 * logits' Jacobian and S the mean cross-entropy's softmax Hessian: R{dlogits}
 * reads the probabilities, not dlogits. SwiGLU's ds1 and ds2b are ds times the
 * gate's derivatives: zero with ds. */
static void zero_base_gradients(llama_impl *im)
{
    const llama_config *c = &im->c;
    size_t N = im->N, C = c->C, M = c->M, V = c->V, Cq = im->Cq, Ckv = im->Ckv;
    size_t A = (size_t)im->B * c->heads * c->T * c->T;
    memset(im->dlogits, 0, N * V * sizeof(double));
    memset(im->dhf, 0, N * C * sizeof(double));
    for (int l = 0; l <= c->layers; l++) memset(im->dres[l], 0, N * C * sizeof(double));
    for (int l = 0; l < c->layers; l++) {
        lacts *a = &im->la[l];
        struct { double *p; size_t n; } d[] = {
            {a->dh1, N * C}, {a->dx1, N * C}, {a->dh2, N * C}, {a->dq, N * Cq}, {a->dqr, N * Cq},
            {a->dke, N * Cq}, {a->dve, N * Cq}, {a->dy, N * Cq}, {a->dk, N * Ckv}, {a->dv, N * Ckv},
            {a->dpc, A}, {a->da, N * M}, {a->db, N * M}, {a->ds, N * M}};
        for (size_t i = 0; i < sizeof d / sizeof *d; i++) memset(d[i].p, 0, d[i].n * sizeof(double));
    }
}

static void base_pass(model *m)
{
    llama_impl *im = m->impl;
    if (im->base_ok && memcmp(im->base_params, m->params, m->P * sizeof(double)) == 0) return;
    forward(m);
    backward(m, im->gbuf);
    if (im->gauss_newton) zero_base_gradients(im);
    size_t NM = (size_t)im->N * im->c.M;
    for (int l = 0; l < im->c.layers; l++) {
        lacts *a = &im->la[l];
        llama_swiglu_coeffs(a->s0, a->s1b, a->ds1, a->ds2b, a->a, a->b, a->ds, NM);
    }
    memcpy(im->base_params, m->params, m->P * sizeof(double));
    im->base_ok = 1;
}

static void llama_hvp_fn(model *m, const double *V, double *HV, int k)
{
    llama_impl *im = m->impl;
    if (k < 1) return;
    int kp = im->kp_max ? im->kp_max : KP_MAX;
    kp = k < kp ? k : kp;
    int nsub = (k + kp - 1) / kp, nt = im->threads ? im->threads : toolkit_threads();
    nt = nt < 1 ? 1 : nt > 64 ? 64 : nt;
    nt = nt < nsub ? nt : nsub;
    /* one BLAS thread per worker: the R-pass dgemms are small */
    int saved = openblas_get_num_threads();
    openblas_set_num_threads(1);
    base_pass(m);
    ensure_work(m, nt, kp);
    panel_job J = {.m = m, .V = V, .out = HV, .k = k, .next = 0};
    pthread_mutex_init(&J.lock, NULL);
    worker_arg args[64];
    pthread_t tid[64];
    for (int i = 0; i < nt; i++) args[i] = (worker_arg){&J, im->work[i]};
    for (int i = 1; i < nt; i++)
        if (pthread_create(&tid[i], NULL, panel_worker, &args[i])) DIE("cannot start a worker thread");
    panel_worker(&args[0]);
    for (int i = 1; i < nt; i++) pthread_join(tid[i], NULL);
    openblas_set_num_threads(saved);
    pthread_mutex_destroy(&J.lock);
}

void llama_set_gauss_newton(model *m, int on)
{
    if (on != 0 && on != 1) die_user("Gauss-Newton mode must be 0 or 1 (got %d)", on);
    llama_impl *im = impl_of(m);
    if (im->gauss_newton != on) im->base_ok = 0; /* the stored base gradients belong to the other mode */
    im->gauss_newton = on;
}

int llama_gauss_newton(const model *m) { return impl_of(m)->gauss_newton; }

void llama_set_threads(model *m, int n)
{
    llama_impl *im = impl_of(m);
    if (n < 0 || n > 64) die_user("threads must be in 0..64 (got %d)", n);
    im->threads = n;
}

void llama_set_hvp_blocking(model *m, int kp, int bc)
{
    llama_impl *im = impl_of(m);
    if (kp < 0 || bc < 0) die_user("hvp blocking must be >= 0 (got %d, %d)", kp, bc);
    im->kp_max = kp;
    im->bc_set = bc;
    free_work(im);
}

/* ---- construction ----------------------------------------------------------------------------------- */

static void free_batch(llama_impl *im)
{
    free(im->tokens), free(im->inp), free(im->tgt), free(im->abuf), free(im->res), free(im->dres), free(im->la);
    im->tokens = im->inp = im->tgt = NULL, im->abuf = NULL, im->res = im->dres = NULL, im->la = NULL;
    im->B = im->N = 0;
    free_work(im);
}

static void llama_destroy(model *m)
{
    llama_impl *im = m->impl;
    free_batch(im);
    free(im->slot), free(im->rope_cos), free(im->rope_sin), free(im->gbuf), free(im->base_params);
    free(im);
    free(m->tensors);
    free(m->params);
    free(m);
}

/* model.h's token_losses: the forward pass's per-position losses. */
static double llama_token_losses(model *m, double *losses) { return llama_forward(m, NULL, losses); }

model *llama_new(const llama_config *c)
{
    llama_check_config(c);
    model *m = xcalloc(1, sizeof(model));
    llama_impl *im = xcalloc(1, sizeof(llama_impl));
    im->c = *c;
    im->c.head_dim = llama_head_dim(c);
    im->Cq = c->heads * im->c.head_dim;
    im->Ckv = c->kv_heads * im->c.head_dim;
    m->kind = "llama";
    m->impl = im;
    build_table(m, im);
    if (m->P != llama_param_count(c)) DIE("parameter count %zu != %zu", m->P, llama_param_count(c));
    model_check_tensors(m);
    memory_check("llama: parameters, gradient and base copy", 24.0 * (double)m->P);
    m->params = xmalloc(m->P * sizeof(double));
    im->gbuf = xmalloc(m->P * sizeof(double));
    im->base_params = xmalloc(m->P * sizeof(double));
    size_t half = (size_t)c->T * (im->c.head_dim / 2);
    im->rope_cos = xmalloc(half * sizeof(double));
    im->rope_sin = xmalloc(half * sizeof(double));
    llama_rope_tables(im->rope_cos, im->rope_sin, c->T, im->c.head_dim, c->theta);
    m->loss = llama_loss_fn;
    m->grad = llama_grad_fn;
    m->hvp = llama_hvp_fn;
    m->T = c->T, m->V = c->V, m->set_tokens = llama_set_batch;
    m->token_losses = llama_token_losses;
    m->destroy = llama_destroy;
    llama_init_params(m, c->seed);
    return m;
}

void llama_set_batch(model *m, const int *tokens, int B)
{
    llama_impl *im = impl_of(m);
    const llama_config *c = &im->c;
    if (B < 1) die_user("batch size must be >= 1 (got %d)", B);
    size_t n = (size_t)B * (c->T + 1);
    for (size_t i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= c->V)
            die_user("token %d at position %zu is outside the vocabulary 0..%d", tokens[i], i, c->V - 1);
    if (B != im->B) {
        char what[96];
        snprintf(what, sizeof what, "llama: a batch of %d sequences", B);
        memory_check(what, llama_batch_bytes(c, B));
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
