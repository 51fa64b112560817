/* The R-pass of the tiny Transformer for Hessian columns: Pearlmutter's
 * R-operator applied to the base forward and backward (tt_pass.c), for a
 * sub-panel of k unit directions at once, over chunks of sequences. The
 * R-forward and R-backward kernels (tt_dirminor.c) keep the R-quantities
 * direction-minor, (width, N, k): a sub-panel runs padded with zero directions
 * to a multiple of TT_KBLOCK; its R{∇θ} = H v accumulates direction-minor in
 * the workspace and is transposed into rows of the output at the end.
 * Sequences are independent given the parameters, so chunking over them only
 * bounds the workspace; the loss is the mean over all B·T positions (scale
 * 1/(B·T)). The unit directions are index ranges, so the kernels copy a column
 * where a dense direction would need a product. (Dense directions: one at a
 * time, tt_rpass1.c.)
 */
#include "tt_impl.h"
#include <stdlib.h>
#include <string.h>

/* ---- R workspace (one per worker thread) ---------------------------------------------------- */

struct rwork {
    int kp, bc;              /* sub-panel width, sequences per chunk */
    double *buf;
    rquants q;               /* the R-quantities (and in q.ra, the token-major copies) */
    layer_rlive *live;       /* per layer: what is nonzero in this pass (else NULL) */
    const double *lnf, *lnf_xh, *lnf_r, *lnf_t; /* likewise after the final LayerNorm: R{lnf}, R{x̂}, R{r}, copy */
    double *Rlnf_t;
    double *Rdlogits_t, *Rdres_t, *Rdf_t, *Rdq_t, *Rdkey_t, *Rdv_t; /* token-major copies of R{dout} */
    double *G;               /* (P,kp) R{∇θ} of the sub-panel, direction-minor */
    double *Gt;              /* (P,kp) the transposed half of R{dW} of each weight matrix (IC,OC,kp) */
    tt_rpar *rp;             /* per tensor: its R-parameters in the current sub-panel */
    rtensors rt;             /* every tensor bound for the current sub-panel */
};

void tt_rwork_free(rwork *w)
{
    if (!w) return;
    free(w->buf), free(w->q.ra), free(w->live), free(w->G), free(w->Gt), free(w->rp), free(w->rt.layer);
    free(w);
}

size_t tt_rquants_doubles(const tt_config *c, size_t R, size_t A)
{
    size_t C = c->C, M = c->M, V = c->V, L = c->layers;
    return L * (8 * R * C + 2 * R + 2 * R * M + A) + 9 * R * C + R + 2 * R * V + 2 * R * M;
}

void tt_rquants_carve(rquants *q, const tt_config *c, double **cur, size_t R, size_t A)
{
    size_t C = c->C, M = c->M, V = c->V, L = c->layers;
    q->ra = xcalloc(L, sizeof(layer_racts));
    for (size_t l = 0; l < L; l++) {
        layer_racts *r = &q->ra[l];
        r->ln1 = carve(cur, R * C), r->ln1_xh = carve(cur, R * C), r->ln1_r = carve(cur, R);
        r->q = carve(cur, R * C), r->key = carve(cur, R * C), r->v = carve(cur, R * C);
        r->att = carve(cur, A), r->y = carve(cur, R * C);
        r->ln2 = carve(cur, R * C), r->ln2_xh = carve(cur, R * C), r->ln2_r = carve(cur, R);
        r->f = carve(cur, R * M), r->gl = carve(cur, R * M);
    }
    q->Rres = carve(cur, R * C);
    q->Rlnf = carve(cur, R * C), q->Rlnf_xh = carve(cur, R * C), q->Rlnf_r = carve(cur, R);
    q->Rlogits = carve(cur, R * V), q->Rdlogits = carve(cur, R * V);
    q->Rdres = carve(cur, R * C), q->Rdln = carve(cur, R * C), q->Rdy = carve(cur, R * C);
    q->Rdq = carve(cur, R * C), q->Rdkey = carve(cur, R * C), q->Rdv = carve(cur, R * C);
    q->Rdgl = carve(cur, R * M), q->Rdf = carve(cur, R * M);
}

rwork *tt_rwork_new(const model *m, int kp, int bc)
{
    const tt_impl *im = m->impl;
    const tt_config *c = &im->c;
    rwork *w = xcalloc(1, sizeof(rwork));
    w->kp = kp;
    w->bc = bc;
    kp = tt_padded(kp);
    /* R: the row length of one feature of an R-quantity */
    size_t R = tt_dm_ld(bc * c->T, kp), L = c->layers;
    size_t A = (size_t)bc * c->heads * kp * c->T * c->T;
    /* token-major copies: N rows of tt_dm_ldt(width, kp) */
    size_t NT = (size_t)bc * c->T, TC = NT * tt_dm_ldt(c->C, kp), TM = NT * tt_dm_ldt(c->M, kp);
    size_t TV = NT * tt_dm_ldt(c->V, kp);
    size_t total = tt_rquants_doubles(c, R, A) + L * (3 * TC + TM) + TC + TV + 4 * TC + TM;
    w->buf = xmalloc(checked_mul(total, sizeof(double), "R workspace"));
    double *cur = w->buf;
    tt_rquants_carve(&w->q, c, &cur, R, A);
    w->live = xcalloc(L, sizeof(layer_rlive));
    for (size_t l = 0; l < L; l++) {
        layer_racts *r = &w->q.ra[l];
        r->ln1_t = carve(&cur, TC), r->y_t = carve(&cur, TC), r->ln2_t = carve(&cur, TC), r->gl_t = carve(&cur, TM);
    }
    w->Rlnf_t = carve(&cur, TC);
    w->Rdlogits_t = carve(&cur, TV), w->Rdres_t = carve(&cur, TC), w->Rdf_t = carve(&cur, TM);
    w->Rdq_t = carve(&cur, TC), w->Rdkey_t = carve(&cur, TC), w->Rdv_t = carve(&cur, TC);
    if ((size_t)(cur - w->buf) != total) DIE("R workspace layout: %zu of %zu", (size_t)(cur - w->buf), total);
    w->G = xmalloc(checked_mul(checked_mul((size_t)kp, m->P, "R-gradient panel"), sizeof(double), "R-gradient panel"));
    w->Gt = xmalloc((size_t)kp * m->P * sizeof(double));
    w->rp = xcalloc((size_t)m->ntensors, sizeof(tt_rpar));
    w->rt.layer = xcalloc(L, sizeof(layer_rtensors));
    return w;
}

int tt_rwork_kp(const rwork *w) { return w->kp; }
int tt_rwork_bc(const rwork *w) { return w->bc; }

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

/* Tensor t (-1: absent) as an R-pass sees it. */
static rtensor bind_rtensor(const model *m, const rbind *b, int t)
{
    rtensor x = no_tensor;
    if (t < 0) return x;
    size_t o = m->tensors[t].offset;
    x.t = t;
    x.w = m->params + o;
    x.r = b->rp[t];
    if (t >= b->lo && t <= b->hi) {
        x.g = b->G + o * (size_t)b->k;
        x.gt = b->Gt ? b->Gt + o * (size_t)b->k : NULL;
    }
    return x;
}

void tt_bind_rtensors(const model *m, rtensors *rt, const rbind *b)
{
    const tt_impl *im = m->impl;
    rt->wte = bind_rtensor(m, b, im->t_wte);
    rt->wpe = bind_rtensor(m, b, im->t_wpe);
    for (int l = 0; l < im->c.layers; l++) {
        const int *s = im->slot[l];
        rt->layer[l] = (layer_rtensors){
            .ln1_w = bind_rtensor(m, b, s[L_LN1W]),
            .ln1_b = bind_rtensor(m, b, s[L_LN1B]),
            .query_w = bind_rtensor(m, b, s[L_Q]),
            .query_b = bind_rtensor(m, b, s[L_QB]),
            .key_w = bind_rtensor(m, b, s[L_K]),
            .key_b = bind_rtensor(m, b, s[L_KB]),
            .value_w = bind_rtensor(m, b, s[L_V]),
            .value_b = bind_rtensor(m, b, s[L_VB]),
            .attn_proj_w = bind_rtensor(m, b, s[L_O]),
            .attn_proj_b = bind_rtensor(m, b, s[L_OB]),
            .ln2_w = bind_rtensor(m, b, s[L_LN2W]),
            .ln2_b = bind_rtensor(m, b, s[L_LN2B]),
            .fc_w = bind_rtensor(m, b, s[L_FC]),
            .fc_b = bind_rtensor(m, b, s[L_FCB]),
            .mlp_proj_w = bind_rtensor(m, b, s[L_MP]),
            .mlp_proj_b = bind_rtensor(m, b, s[L_MPB]),
        };
    }
    rt->lnf_w = bind_rtensor(m, b, im->t_lnfw);
    rt->lnf_b = bind_rtensor(m, b, im->t_lnfb);
    rt->lm_head = bind_rtensor(m, b, im->t_head);
    if (im->c.tied) rt->lm_head.t = m->ntensors;
}

layer_acts tt_chunk_acts(const layer_acts *a, size_t n0, size_t A0, size_t C, size_t M)
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
    if (res_live) tt_dm_embed_rop(w->q.Rres, inp, rt->wte.r, rt->wpe.r, N, T, C, k);
    for (int l = 0; l < L; l++) {
        const layer_acts a = tt_chunk_acts(&im->la[l], n0, A0, C, M);
        const layer_rtensors *p = &rt->layer[l];
        const layer_racts *r = &w->q.ra[l];
        layer_rlive *z = &w->live[l];
        memset(z, 0, sizeof *z);
        /* a layer wholly before stop with nothing perturbed upstream: its
         * R-activations are zero and the truncated R-backward never reads them */
        if (!res_live && stop > last_of(&p->mlp_proj_w, &p->mlp_proj_b)) continue;
        layernorm_rop(r->ln1, r->ln1_t, r->ln1_xh, r->ln1_r, &z->ln1, &z->ln1_t, &z->ln1_xh, &z->ln1_r,
                      res_live ? w->q.Rres : NULL, a.ln1_xh, a.ln1_r, &p->ln1_w, &p->ln1_b, N, C, k);
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
        res_live = residual_rop(w->q.Rres, res_live, z->y, a.y, &p->attn_proj_w, &p->attn_proj_b, N, C, C, k);
        layernorm_rop(r->ln2, r->ln2_t, r->ln2_xh, r->ln2_r, &z->ln2, &z->ln2_t, &z->ln2_xh, &z->ln2_r,
                      res_live ? w->q.Rres : NULL, a.ln2_xh, a.ln2_r, &p->ln2_w, &p->ln2_b, N, C, k);
        z->f = linear_rop(r->f, z->ln2, a.ln2, &p->fc_w, &p->fc_b, N, C, M, k);
        if (z->f) {
            z->gl = r->gl;
            z->gl_t = r->gl_t;
            tt_dm_gelu_rop(r->gl, r->gl_t, z->f, a.g1, N, M, k);
        }
        res_live = residual_rop(w->q.Rres, res_live, z->gl, a.gl, &p->mlp_proj_w, &p->mlp_proj_b, N, M, C, k);
    }
    layernorm_rop(w->q.Rlnf, w->Rlnf_t, w->q.Rlnf_xh, w->q.Rlnf_r, &w->lnf, &w->lnf_t, &w->lnf_xh, &w->lnf_r,
                  res_live ? w->q.Rres : NULL, lnf_xh, lnf_r, &rt->lnf_w, &rt->lnf_b, N, C, k);
    if (!linear_rop(w->q.Rlogits, w->lnf, lnf, &rt->lm_head, &no_tensor, N, C, Vv, k))
        return; /* nothing perturbed: H v = 0 */
    tt_dm_crossentropy_rop(w->q.Rdlogits, w->Rdlogits_t, w->q.Rlogits, probs, 1.0 / im->N, N, Vv, k);

    /* R-backward. Each R{dout} is written with its token-major copy (the _t
     * buffers) for the R{dW} dgemm of the layer that consumes it next. */
    linear_rop_backward(stop < rt->lm_head.t ? w->q.Rdln : NULL, 0, w->q.Rdlogits, w->Rdlogits_t, dlogits, lnf, w->lnf_t,
                        &rt->lm_head, &no_tensor, N, C, Vv, k);
    if (stop >= rt->lm_head.t) return;
    layernorm_rop_backward(stop < rt->lnf_w.t ? w->q.Rdres : NULL, w->Rdres_t, 0, w->q.Rdln, dlnf, lnf_xh, lnf_r,
                           w->lnf_xh, w->lnf_r, &rt->lnf_w, &rt->lnf_b, N, C, k);
    if (stop >= rt->lnf_w.t) return;
    for (int l = L - 1; l >= 0; l--) {
        const layer_acts a = tt_chunk_acts(&im->la[l], n0, A0, C, M);
        const double *dout = im->dres[l + 1] + n0 * C; /* the base gradient of the layer's output */
        const layer_rtensors *p = &rt->layer[l];
        const layer_rlive *z = &w->live[l];
        /* Rdres = R{d res[l+1]} feeds the MLP and passes on to x1 */
        linear_rop_backward(stop < p->mlp_proj_w.t ? w->q.Rdgl : NULL, 0, w->q.Rdres, w->Rdres_t, dout, a.gl, z->gl_t,
                            &p->mlp_proj_w, &p->mlp_proj_b, N, M, C, k);
        if (stop >= p->mlp_proj_w.t) return;
        tt_dm_gelu_rop_backward(w->q.Rdf, w->Rdf_t, w->q.Rdgl, a.g1, a.g2d, z->f, N, M, k);
        linear_rop_backward(stop < p->fc_w.t ? w->q.Rdln : NULL, 0, w->q.Rdf, w->Rdf_t, a.df, a.ln2, z->ln2_t, &p->fc_w,
                            &p->fc_b, N, C, M, k);
        if (stop >= p->fc_w.t) return;
        layernorm_rop_backward(stop < p->ln2_w.t ? w->q.Rdres : NULL, w->Rdres_t, 1, w->q.Rdln, a.dln2, a.ln2_xh, a.ln2_r,
                               z->ln2_xh, z->ln2_r, &p->ln2_w, &p->ln2_b, N, C, k);
        if (stop >= p->ln2_w.t) return;
        /* Rdres is now R{dx1} */
        linear_rop_backward(stop < p->attn_proj_w.t ? w->q.Rdy : NULL, 0, w->q.Rdres, w->Rdres_t, a.dx1, a.y, z->y_t,
                            &p->attn_proj_w, &p->attn_proj_b, N, C, C, k);
        if (stop >= p->attn_proj_w.t) return;
        /* R{dq} is wanted for R{dW_q}, R{db_q} or what lies before; likewise key, value */
        int want_q = stop <= last_of(&p->query_w, &p->query_b), want_k = stop <= last_of(&p->key_w, &p->key_b);
        tt_dm_attention_rop_backward(want_q ? w->q.Rdq : NULL, want_k ? w->q.Rdkey : NULL, w->q.Rdv,
                                     want_q ? w->Rdq_t : NULL, want_k ? w->Rdkey_t : NULL, w->Rdv_t, w->q.Rdy, a.dy,
                                     a.q, a.key, a.v, a.att, a.dpc, z->q, z->key, z->v, z->att, bc, T, C, H, k);
        double *Rdln = stop < p->query_w.t ? w->q.Rdln : NULL; /* then all three are wanted */
        if (want_q)
            linear_rop_backward(Rdln, 0, w->q.Rdq, w->Rdq_t, a.dq, a.ln1, z->ln1_t, &p->query_w, &p->query_b, N, C, C,
                                k);
        if (want_k)
            linear_rop_backward(Rdln, 1, w->q.Rdkey, w->Rdkey_t, a.dkey, a.ln1, z->ln1_t, &p->key_w, &p->key_b, N, C,
                                C, k);
        linear_rop_backward(Rdln, 1, w->q.Rdv, w->Rdv_t, a.dv, a.ln1, z->ln1_t, &p->value_w, &p->value_b, N, C, C, k);
        if (stop >= p->query_w.t) return;
        layernorm_rop_backward(stop < p->ln1_w.t ? w->q.Rdres : NULL, w->Rdres_t, 1, w->q.Rdln, a.dln1, a.ln1_xh, a.ln1_r,
                               z->ln1_xh, z->ln1_r, &p->ln1_w, &p->ln1_b, N, C, k);
        if (stop >= p->ln1_w.t) return;
    }
    tt_dm_embed_rop_backward(rt->wte.g, rt->wpe.g, w->q.Rdres, inp, N, T, C, k);
}

/* ---- a sub-panel of directions --------------------------------------------------------------- */

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

void tt_run_subpanel(model *m, rwork *w, size_t j, int kk, int stop, double *HV)
{
    tt_impl *im = m->impl;
    size_t P = m->P;
    int kw = tt_padded(kk);
    unit_rpars(m, w, j, kk);
    tt_bind_rtensors(m, &w->rt, &(rbind){.rp = w->rp, .G = w->G, .Gt = w->Gt, .k = kw, .lo = stop, .hi = m->ntensors - 1});
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
