/* The R-pass of one dense direction v: H v (or only some of its rows) by the
 * R-operator, with the kernels of tt_onedir.c — the R-quantities feature-major
 * (width, N), the loops over the tokens, the linear layers and attention as
 * dgemms. What hvp runs, one direction at a time: nothing is padded, the
 * direction and its rows of H v stay in their natural layout (a row of V, a
 * row of HV), and a direction's result does not depend on the others of its
 * panel, nor on the thread count.
 *
 * A direction supported on tensors t0..t1 whose rows t0..t1 only are wanted
 * (hvp_tensors) does less: its R-activations are zero below t0 (the
 * R-forward starts at t0's layer), the R-backward stops once it has formed
 * t0's rows, and no R-gradient product is formed for a tensor outside t0..t1.
 */
#include "tt_impl.h"
#include <stdlib.h>
#include <string.h>

struct rwork1 {
    int bc;                  /* sequences per chunk */
    double *buf;
    rquants q;               /* the R-quantities (no token-major copies) */
    layer_rlive *live;       /* per layer: what is nonzero in this pass (else NULL) */
    const double *lnf, *lnf_xh, *lnf_r; /* likewise after the final LayerNorm */
    tt_rpar *rp;             /* per tensor: its R-parameters (a piece of v, or none) */
    rtensors rt;             /* every tensor bound for the current direction */
};

/* Doubles of the workspace for chunks of bc sequences; *R: its rows. */
static size_t rwork1_doubles(const tt_config *c, int bc, size_t *R)
{
    *R = tt_dm_ld(bc * c->T, 1);
    return tt_rquants_doubles(c, *R, (size_t)bc * c->heads * c->T * c->T);
}

double tt_rwork1_bytes(const tt_config *c, int bc)
{
    size_t R;
    return 8.0 * (double)rwork1_doubles(c, bc, &R);
}

rwork1 *tt_rwork1_new(const model *m, int bc)
{
    const tt_config *c = &((const tt_impl *)m->impl)->c;
    size_t R, total = rwork1_doubles(c, bc, &R);
    rwork1 *w = xcalloc(1, sizeof(rwork1));
    w->bc = bc;
    w->buf = xmalloc(checked_mul(total, sizeof(double), "R workspace"));
    double *cur = w->buf;
    tt_rquants_carve(&w->q, c, &cur, R, (size_t)bc * c->heads * c->T * c->T);
    if ((size_t)(cur - w->buf) != total) DIE("R workspace layout: %zu of %zu", (size_t)(cur - w->buf), total);
    w->live = xcalloc((size_t)c->layers, sizeof(layer_rlive));
    w->rp = xcalloc((size_t)m->ntensors, sizeof(tt_rpar));
    w->rt.layer = xcalloc((size_t)c->layers, sizeof(layer_rtensors));
    return w;
}

void tt_rwork1_free(rwork1 *w)
{
    if (!w) return;
    free(w->buf), free(w->q.ra), free(w->live), free(w->rp), free(w->rt.layer);
    free(w);
}

int tt_rwork1_bc(const rwork1 *w) { return w->bc; }

/* ---- the R-pass over one chunk of sequences -------------------------------------------------------
 * As tt_rpass.c's (the same order, the same NULL-is-zero rule and the same
 * early return at stop), with one direction: R{∇θ} adds into the bound rows of
 * hv. ld: the R-quantities' row stride; ldb: the feature-major base copies'. */

/* R{out} of a linear layer from R{inp} (NULL: zero) and its R-parameters; NULL when all are zero. */
static double *linear_rop(double *Rout, const double *Rinp, const double *inp, const rtensor *W, const rtensor *b,
                          size_t ld, int N, int IC, int OC)
{
    if (!Rinp && !W->r.v && !b->r.v) return NULL;
    tt_od_linear_rop(Rout, 0, Rinp, inp, W->w, W->r.v, b->r.v, ld, N, IC, OC);
    return Rout;
}

/* The residual stream Rres += R{linear}; returns whether Rres is now nonzero. */
static int residual_rop(double *Rres, int res_live, const double *Rinp, const double *inp, const rtensor *W,
                        const rtensor *b, size_t ld, int N, int IC, int OC)
{
    if (!Rinp && !W->r.v && !b->r.v) return res_live;
    tt_od_linear_rop(Rres, res_live, Rinp, inp, W->w, W->r.v, b->r.v, ld, N, IC, OC);
    return 1;
}

/* LayerNorm R-forward into out, xh, r; sets *Rout, *Rxh, *Rr to them or NULL (zero). */
static void layernorm_rop(double *out, double *xh, double *r, const double **Rout, const double **Rxh,
                          const double **Rr, const double *Rinp, const double *xhT, const double *rstd,
                          const rtensor *g, const rtensor *b, size_t ld, size_t ldb, int N, int C)
{
    *Rout = *Rxh = *Rr = NULL;
    if (!Rinp && !g->r.v && !b->r.v) return;
    tt_od_layernorm_rop(out, xh, r, Rinp, xhT, rstd, g->w, g->r.v, b->r.v, ld, ldb, N, C);
    *Rout = out;
    if (Rinp) *Rxh = xh, *Rr = r;
}

static void linear_rop_backward(double *Rdinp, int acc, const double *Rdout, const double *dout, const double *inp,
                                const double *Rinp, const rtensor *W, const rtensor *b, size_t ld, int N, int IC,
                                int OC)
{
    tt_od_linear_rop_backward(Rdinp, acc, W->g, b->g, Rdout, dout, inp, Rinp, W->w, W->r.v, ld, N, IC, OC);
}

static void layernorm_rop_backward(double *Rdinp, int acc, const double *Rdout, const double *doutT,
                                   const double *xhT, const double *rstd, const double *Rxh, const double *Rr,
                                   const rtensor *g, const rtensor *b, size_t ld, size_t ldb, int N, int C)
{
    tt_od_layernorm_rop_backward(Rdinp, acc, g->g, b->g, Rdout, doutT, xhT, rstd, Rxh, Rr, g->w, g->r.v, ld, ldb, N,
                                 C);
}

/* Whether R{d out} of a weight and bias is wanted: for their rows, or for what lies below. */
static int wanted(const rtensor *W, const rtensor *b, int below) { return below || W->g || b->g; }

static void rpass1(model *m, rwork1 *w, int b0, int bc, int stop)
{
    tt_impl *im = m->impl;
    const tt_config *c = &im->c;
    const rtensors *rt = &w->rt;
    int T = c->T, C = c->C, M = c->M, H = c->heads, L = c->layers, Vv = c->V;
    int N = bc * T;
    size_t n0 = (size_t)b0 * T, A0 = (size_t)b0 * H * T * T; /* the chunk's first token, first attention entry */
    size_t ld = tt_dm_ld(N, 1), ldb = im->N;
    const int *inp = im->inp + n0;
    const double *lnf = im->lnf + n0 * C, *lnf_xhT = im->fm.lnf_xh + n0, *lnf_r = im->lnf_r + n0;
    const double *dlnfT = im->fm.dlnf + n0, *probsT = im->fm.probs + n0, *dlogits = im->dlogits + n0 * Vv;

    /* R-forward */
    int res_live = rt->wte.r.v || rt->wpe.r.v;
    if (res_live) tt_od_embed_rop(w->q.Rres, inp, rt->wte.r.v, rt->wpe.r.v, ld, N, T, C);
    for (int l = 0; l < L; l++) {
        const layer_acts a = tt_chunk_acts(&im->la[l], n0, A0, C, M);
        const layer_fm f = tt_chunk_fm(&im->fm.layer[l], n0);
        const layer_rtensors *p = &rt->layer[l];
        const layer_racts *r = &w->q.ra[l];
        layer_rlive *z = &w->live[l];
        memset(z, 0, sizeof *z);
        if (!res_live && stop > last_of(&p->mlp_proj_w, &p->mlp_proj_b)) continue;
        layernorm_rop(r->ln1, r->ln1_xh, r->ln1_r, &z->ln1, &z->ln1_xh, &z->ln1_r, res_live ? w->q.Rres : NULL,
                      f.ln1_xh, a.ln1_r, &p->ln1_w, &p->ln1_b, ld, ldb, N, C);
        z->q = linear_rop(r->q, z->ln1, a.ln1, &p->query_w, &p->query_b, ld, N, C, C);
        z->key = linear_rop(r->key, z->ln1, a.ln1, &p->key_w, &p->key_b, ld, N, C, C);
        z->v = linear_rop(r->v, z->ln1, a.ln1, &p->value_w, &p->value_b, ld, N, C, C);
        if (z->q || z->key || z->v) {
            z->att = z->q || z->key ? r->att : NULL;
            z->y = r->y;
            tt_od_attention_rop(r->y, z->att ? r->att : NULL, z->q, z->key, z->v, a.q, a.key, a.v, a.att, ld, bc, T,
                                C, H);
        }
        res_live = residual_rop(w->q.Rres, res_live, z->y, a.y, &p->attn_proj_w, &p->attn_proj_b, ld, N, C, C);
        layernorm_rop(r->ln2, r->ln2_xh, r->ln2_r, &z->ln2, &z->ln2_xh, &z->ln2_r, res_live ? w->q.Rres : NULL,
                      f.ln2_xh, a.ln2_r, &p->ln2_w, &p->ln2_b, ld, ldb, N, C);
        z->f = linear_rop(r->f, z->ln2, a.ln2, &p->fc_w, &p->fc_b, ld, N, C, M);
        if (z->f) {
            z->gl = r->gl;
            tt_od_gelu_rop(r->gl, z->f, f.g1, ld, ldb, N, M);
        }
        res_live = residual_rop(w->q.Rres, res_live, z->gl, a.gl, &p->mlp_proj_w, &p->mlp_proj_b, ld, N, M, C);
    }
    layernorm_rop(w->q.Rlnf, w->q.Rlnf_xh, w->q.Rlnf_r, &w->lnf, &w->lnf_xh, &w->lnf_r, res_live ? w->q.Rres : NULL,
                  lnf_xhT, lnf_r, &rt->lnf_w, &rt->lnf_b, ld, ldb, N, C);
    if (!linear_rop(w->q.Rlogits, w->lnf, lnf, &rt->lm_head, &no_tensor, ld, N, C, Vv)) return; /* H v = 0 */
    tt_od_crossentropy_rop(w->q.Rdlogits, w->q.Rlogits, probsT, 1.0 / im->N, ld, ldb, N, Vv);

    /* R-backward */
    linear_rop_backward(stop < rt->lm_head.t ? w->q.Rdln : NULL, 0, w->q.Rdlogits, dlogits, lnf, w->lnf, &rt->lm_head,
                        &no_tensor, ld, N, C, Vv);
    if (stop >= rt->lm_head.t) return;
    layernorm_rop_backward(stop < rt->lnf_w.t ? w->q.Rdres : NULL, 0, w->q.Rdln, dlnfT, lnf_xhT, lnf_r, w->lnf_xh,
                           w->lnf_r, &rt->lnf_w, &rt->lnf_b, ld, ldb, N, C);
    if (stop >= rt->lnf_w.t) return;
    for (int l = L - 1; l >= 0; l--) {
        const layer_acts a = tt_chunk_acts(&im->la[l], n0, A0, C, M);
        const layer_fm f = tt_chunk_fm(&im->fm.layer[l], n0);
        const double *dout = im->dres[l + 1] + n0 * C; /* the base gradient of the layer's output */
        const layer_rtensors *p = &rt->layer[l];
        const layer_rlive *z = &w->live[l];
        /* Rdres = R{d res[l+1]} feeds the MLP and passes on to x1 */
        linear_rop_backward(stop < p->mlp_proj_w.t ? w->q.Rdgl : NULL, 0, w->q.Rdres, dout, a.gl, z->gl, &p->mlp_proj_w,
                            &p->mlp_proj_b, ld, N, M, C);
        if (stop >= p->mlp_proj_w.t) return;
        tt_od_gelu_rop_backward(w->q.Rdf, w->q.Rdgl, f.g1, f.g2d, z->f, ld, ldb, N, M);
        linear_rop_backward(stop < p->fc_w.t ? w->q.Rdln : NULL, 0, w->q.Rdf, a.df, a.ln2, z->ln2, &p->fc_w, &p->fc_b, ld,
                            N, C, M);
        if (stop >= p->fc_w.t) return;
        layernorm_rop_backward(stop < p->ln2_w.t ? w->q.Rdres : NULL, 1, w->q.Rdln, f.dln2, f.ln2_xh, a.ln2_r, z->ln2_xh,
                               z->ln2_r, &p->ln2_w, &p->ln2_b, ld, ldb, N, C);
        if (stop >= p->ln2_w.t) return;
        /* Rdres is now R{dx1} */
        linear_rop_backward(stop < p->attn_proj_w.t ? w->q.Rdy : NULL, 0, w->q.Rdres, a.dx1, a.y, z->y, &p->attn_proj_w,
                            &p->attn_proj_b, ld, N, C, C);
        if (stop >= p->attn_proj_w.t) return;
        /* R{d ln1} needs all three of R{dq}, R{dk}, R{dv}; else each only for its own rows */
        int below = stop < p->query_w.t;
        int want_q = wanted(&p->query_w, &p->query_b, below), want_k = wanted(&p->key_w, &p->key_b, below);
        int want_v = wanted(&p->value_w, &p->value_b, below);
        tt_od_attention_rop_backward(want_q ? w->q.Rdq : NULL, want_k ? w->q.Rdkey : NULL, want_v ? w->q.Rdv : NULL, w->q.Rdy,
                                     a.dy, a.q, a.key, a.v, a.att, a.dpc, z->q, z->key, z->v, z->att, ld, bc, T, C, H);
        double *Rdln = below ? w->q.Rdln : NULL;
        int acc = 0;
        if (want_q)
            linear_rop_backward(Rdln, acc, w->q.Rdq, a.dq, a.ln1, z->ln1, &p->query_w, &p->query_b, ld, N, C, C), acc = 1;
        if (want_k)
            linear_rop_backward(Rdln, acc, w->q.Rdkey, a.dkey, a.ln1, z->ln1, &p->key_w, &p->key_b, ld, N, C, C), acc = 1;
        if (want_v)
            linear_rop_backward(Rdln, acc, w->q.Rdv, a.dv, a.ln1, z->ln1, &p->value_w, &p->value_b, ld, N, C, C);
        if (!below) return;
        layernorm_rop_backward(stop < p->ln1_w.t ? w->q.Rdres : NULL, 1, w->q.Rdln, f.dln1, f.ln1_xh, a.ln1_r, z->ln1_xh,
                               z->ln1_r, &p->ln1_w, &p->ln1_b, ld, ldb, N, C);
        if (stop >= p->ln1_w.t) return;
    }
    tt_od_embed_rop_backward(rt->wte.g, rt->wpe.g, w->q.Rdres, inp, ld, N, T, C);
}

/* ---- one direction ------------------------------------------------------------------------------- */

static int nonzero(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (x[i] != 0) return 1;
    return 0;
}

void tt_run_direction(model *m, rwork1 *w, const double *v, double *hv, int t0, int t1)
{
    tt_impl *im = m->impl;
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        int live = t >= t0 && t <= t1 && nonzero(v + ti->offset, tensor_size(ti));
        w->rp[t] = (tt_rpar){.v = live ? v + ti->offset : NULL};
    }
    tt_bind_rtensors(m, &w->rt, &(rbind){.rp = w->rp, .G = hv, .k = 1, .lo = t0, .hi = t1});
    size_t from = m->tensors[t0].offset, to = m->tensors[t1].offset + tensor_size(&m->tensors[t1]);
    memset(hv + from, 0, (to - from) * sizeof(double));
    for (int b0 = 0; b0 < im->B; b0 += w->bc) rpass1(m, w, b0, im->B - b0 < w->bc ? im->B - b0 : w->bc, t0);
}
