/* The streamed block analysis: H's rows accumulated panel by panel (stream.h).
 *
 * Layout of the work per row i (full panels; lower panels in add_lower):
 *  - one pass over j = 0..P-1, cut into segments at tensor boundaries and heatmap
 *    pixel-column boundaries, accumulating three chains per row: ‖H_{i,:}‖²
 *    (uninterrupted, = frobenius_sq), the current tensor's Σ H_ij², and the current
 *    pixel column's Σ|H_ij| (or max). Four rows go through together (independent
 *    chains, so the adds pipeline); each row's chains are still sequential in j,
 *    so nothing depends on how rows are grouped;
 *  - the block of i: its n_b entries gathered (copied into H_bb when kept) and
 *    their squares summed (the in-block row mass);
 *  - the row's tensor sums and pixel sums go to ordered accumulators (ordacc).
 */
#include "stream.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- ordered accumulators ----------------------------------------------------------
 * Groups are contiguous row ranges gstart[g]..gstart[g+1]-1 (a tensor, a heatmap
 * pixel row), each with W sums. The sums of group g are a chain over its rows in
 * ascending order: acc_g = ((0 + v_first) + v_next) + ...; a row that comes before
 * the row its chain expects waits in a pending list (ascending by row) until its
 * predecessors arrive. So acc_g depends only on the rows' own vectors, never on
 * the order they arrive in or on how they were split between streams. */
typedef struct {
    int ng, W;
    size_t *gstart;   /* ng + 1 */
    double *acc;      /* ng × W */
    size_t *next;     /* the row each chain expects next (gstart[g+1] when complete) */
    size_t np, cap;
    size_t *prow;     /* pending rows, ascending */
    double *pval;     /* np × W */
} ordacc;

static void oa_init(ordacc *a, int ng, int W, const size_t *gstart)
{
    a->ng = ng;
    a->W = W;
    a->gstart = xmalloc((size_t)(ng + 1) * sizeof(size_t));
    memcpy(a->gstart, gstart, (size_t)(ng + 1) * sizeof(size_t));
    a->acc = xcalloc((size_t)ng * W, sizeof(double));
    a->next = xmalloc((size_t)ng * sizeof(size_t));
    for (int g = 0; g < ng; g++) a->next[g] = gstart[g];
    a->np = a->cap = 0;
    a->prow = NULL;
    a->pval = NULL;
}

static void oa_free(ordacc *a)
{
    free(a->gstart);
    free(a->acc);
    free(a->next);
    free(a->prow);
    free(a->pval);
}

static void oa_reserve(ordacc *a, size_t n)
{
    if (n <= a->cap) return;
    size_t cap = a->cap ? a->cap : 16;
    while (cap < n) cap *= 2;
    a->prow = xrealloc(a->prow, cap * sizeof(size_t));
    a->pval = xrealloc(a->pval, checked_mul(cap * (size_t)a->W, sizeof(double), "pending rows"));
    a->cap = cap;
}

/* First pending index with row >= i. */
static size_t oa_lower_bound(const ordacc *a, size_t i)
{
    size_t lo = 0, hi = a->np;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a->prow[mid] < i) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static inline void oa_chain(ordacc *a, int g, const double *restrict v)
{
    double *restrict acc = a->acc + (size_t)g * a->W;
    for (int w = 0; w < a->W; w++) acc[w] += v[w];
    a->next[g]++;
}

/* Row i of group g with its W sums v. */
static void oa_add(ordacc *a, int g, size_t i, const double *v)
{
    size_t W = (size_t)a->W;
    if (i != a->next[g]) {
        size_t k = oa_lower_bound(a, i);
        if (k < a->np && a->prow[k] == i) DIE("ordacc: row %zu twice", i);
        oa_reserve(a, a->np + 1);
        memmove(a->prow + k + 1, a->prow + k, (a->np - k) * sizeof(size_t));
        memmove(a->pval + (k + 1) * W, a->pval + k * W, (a->np - k) * W * sizeof(double));
        a->prow[k] = i;
        memcpy(a->pval + k * W, v, W * sizeof(double));
        a->np++;
        return;
    }
    oa_chain(a, g, v);
    if (!a->np) return;
    size_t k0 = oa_lower_bound(a, a->next[g]), k = k0;
    while (k < a->np && a->next[g] < a->gstart[g + 1] && a->prow[k] == a->next[g]) {
        oa_chain(a, g, a->pval + k * W);
        k++;
    }
    if (k > k0) {
        memmove(a->prow + k0, a->prow + k, (a->np - k) * sizeof(size_t));
        memmove(a->pval + k0 * W, a->pval + k * W, (a->np - k) * W * sizeof(double));
        a->np -= k - k0;
    }
}

static int oa_group_of(const ordacc *a, size_t i)
{
    int lo = 0, hi = a->ng - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (a->gstart[mid] <= i) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* a += b for streams of disjoint rows: the chain of each group comes from the
 * stream holding its first rows; then every pending row continuing a chain joins
 * it in ascending order. */
static void oa_merge(ordacc *a, const ordacc *b)
{
    size_t W = (size_t)a->W;
    for (int g = 0; g < a->ng; g++) {
        if (b->next[g] == b->gstart[g]) continue;
        if (a->next[g] != a->gstart[g]) DIE("ordacc merge: both streams hold the first row of group %d", g);
        memcpy(a->acc + g * W, b->acc + g * W, W * sizeof(double));
        a->next[g] = b->next[g];
    }
    size_t n = a->np + b->np;
    size_t *prow = xmalloc((n ? n : 1) * sizeof(size_t));
    double *pval = xmalloc((n ? n : 1) * W * sizeof(double));
    size_t ia = 0, ib = 0, out = 0;
    while (ia < a->np || ib < b->np) {
        int from_a = ib >= b->np || (ia < a->np && a->prow[ia] < b->prow[ib]);
        size_t i = from_a ? a->prow[ia] : b->prow[ib];
        const double *v = from_a ? a->pval + ia * W : b->pval + ib * W;
        if (from_a) ia++;
        else ib++;
        int g = oa_group_of(a, i);
        if (i == a->next[g]) {
            oa_chain(a, g, v);
        } else {
            if (i < a->next[g] || (out && prow[out - 1] == i)) DIE("ordacc merge: row %zu twice", i);
            prow[out] = i;
            memcpy(pval + out * W, v, W * sizeof(double));
            out++;
        }
    }
    free(a->prow);
    free(a->pval);
    a->prow = prow;
    a->pval = pval;
    a->np = out;
    a->cap = n ? n : 1;
}

static int oa_complete(const ordacc *a)
{
    if (a->np) return 0;
    for (int g = 0; g < a->ng; g++)
        if (a->next[g] != a->gstart[g + 1]) return 0;
    return 1;
}

/* ---- the stream ------------------------------------------------------------------------ */

enum { MODE_NONE = -1, MODE_FULL = 0, MODE_LOWER = 1 };
enum { HEAT_NONE = 0, HEAT_SUM = 1, HEAT_MAX = 2 };

struct hstream {
    size_t P;
    int T;                 /* tensors */
    size_t *toff;          /* T + 1 tensor boundaries */
    int nb;
    block *blocks;         /* copy of the partition's blocks */
    int *blk;              /* (P) block of each parameter */
    size_t *pos;           /* (P) its position in the block */
    int keep;
    size_t *hoff;          /* nb + 1 offsets of the kept blocks in hb */
    double *hb;            /* Σ n_b² */
    double *rm;            /* (P) row masses */
    double *inrow;         /* (P) in-block row masses */
    unsigned char *fed;    /* (P) rows fed */
    size_t nfed;
    int mode;
    ordacc tm;             /* groups = tensors, W = T + 1 (slot T: lower panels' diagonal) */
    int heat;              /* HEAT_* */
    int heat_px;
    size_t f, R, C;        /* heatmap factor and pixels per side (R = C) */
    ordacc hm;             /* HEAT_SUM: groups = pixel rows, W = C + 1 (slot C: the diagonal) */
    double *hmax;          /* HEAT_MAX: R × C */
    double checked;        /* bytes memory_check has approved */
    /* results, made by finish() */
    int finished;
    double *tm_out;        /* T × T */
    double *heat_out;      /* R × C */
    double total;
    /* scratch: four rows' tensor sums and pixel sums */
    double *tp, *hp;
};

/* One row in flight through the j-pass. */
typedef struct {
    const double *x;   /* the row, length P */
    double own;        /* Σ_j H_ij² so far */
    double *tp;        /* T + 1 tensor sums */
    double *hp;        /* C + 1 pixel sums (or maxima) */
} rowacc;

static int tensor_of(const hstream *s, size_t i)
{
    int lo = 0, hi = s->T - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (s->toff[mid] <= i) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

static void heat_geometry(size_t P, int px, size_t *f, size_t *R)
{
    size_t ff = (P + (size_t)px - 1) / (size_t)px;
    if (ff < 1) ff = 1;
    *f = ff;
    *R = (P + ff - 1) / ff;
}

double hstream_bytes(const model *m, const hstream_opts *o, int panel)
{
    size_t P = m->P, T = (size_t)m->ntensors, maxt = 0;
    for (size_t t = 0; t < T; t++) if (tensor_size(&m->tensors[t]) > maxt) maxt = tensor_size(&m->tensors[t]);
    double b = (double)P * (sizeof(int) + sizeof(size_t) + 1 + 2 * sizeof(double));   /* blk, pos, fed, rm, inrow */
    b += (double)o->p->nblocks * (sizeof(block) + sizeof(size_t));                    /* the blocks' copy, offsets */
    b += 8.0 * (T * (T + 1) + T * T);                                                 /* tensor sums and result */
    b += 2 * 8.0 * (double)maxt * (T + 2);   /* worst pending tensor rows (sums and row), doubling growth */
    if (o->keep_blocks)
        for (int k = 0; k < o->p->nblocks; k++) b += 8.0 * (double)o->p->b[k].n * (double)o->p->b[k].n;
    if (o->heat_pixels > 0) {
        size_t f, R;
        heat_geometry(P, o->heat_pixels, &f, &R);
        if (o->heat_pool == POOL_MAX) b += 16.0 * R * R;
        else b += 8.0 * (R * (R + 1) + R * R) + 2 * 8.0 * f * (R + 2);   /* sums, result, pending pixel rows */
    }
    b += 8.0 * (double)P * (panel > 0 ? panel : 0);
    return b;
}

hstream *hstream_new(const model *m, const hstream_opts *o)
{
    if (!o || !o->p) DIE("hstream_new: no partition");
    size_t P = m->P;
    partition_check_cover(o->p, P, "hstream partition");
    double need = hstream_bytes(m, o, hessian_defaults().panel);
    char what[160];
    snprintf(what, sizeof what, "hstream: blocks%s, row masses%s, one panel of %d columns", o->keep_blocks ? " kept" : " not kept",
             o->heat_pixels > 0 ? ", heatmap" : "", hessian_defaults().panel);
    memory_check(what, need);

    hstream *s = xcalloc(1, sizeof *s);
    s->P = P;
    s->checked = need;
    s->T = m->ntensors;
    s->toff = xmalloc((size_t)(s->T + 1) * sizeof(size_t));
    for (int t = 0; t < s->T; t++) s->toff[t] = m->tensors[t].offset;
    s->toff[s->T] = P;
    s->nb = o->p->nblocks;
    s->blocks = xmalloc((size_t)(s->nb ? s->nb : 1) * sizeof(block));
    memcpy(s->blocks, o->p->b, (size_t)s->nb * sizeof(block));
    s->blk = xmalloc(checked_mul(P, sizeof(int), "hstream block map"));
    s->pos = xmalloc(checked_mul(P, sizeof(size_t), "hstream block map"));
    for (int k = 0; k < s->nb; k++) {
        const block *b = &s->blocks[k];
        for (size_t e = 0; e < b->n; e++) {
            size_t i = b->start + e * b->stride;
            s->blk[i] = k;
            s->pos[i] = e;
        }
    }
    s->keep = o->keep_blocks != 0;
    if (s->keep) {
        s->hoff = xmalloc((size_t)(s->nb + 1) * sizeof(size_t));
        size_t tot = 0;
        for (int k = 0; k < s->nb; k++) {
            s->hoff[k] = tot;
            tot += s->blocks[k].n * s->blocks[k].n;
        }
        s->hoff[s->nb] = tot;
        /* 2 MB pages where the VM gives them: first-touch faults of small pages
         * cost more than the copying (see huge_alloc) */
        s->hb = huge_alloc(tot ? tot : 1, "kept Hessian blocks");
        memset(s->hb, 0, (tot ? tot : 1) * sizeof(double));
    }
    s->rm = xcalloc(P, sizeof(double));
    s->inrow = xcalloc(P, sizeof(double));
    s->fed = xcalloc(P, 1);
    s->mode = MODE_NONE;
    oa_init(&s->tm, s->T, s->T + 1, s->toff);
    s->tm_out = xcalloc((size_t)s->T * s->T, sizeof(double));
    s->tp = xcalloc(4 * (size_t)(s->T + 1), sizeof(double));
    if (o->heat_pixels > 0) {
        s->heat = o->heat_pool == POOL_MAX ? HEAT_MAX : HEAT_SUM;
        s->heat_px = o->heat_pixels;
        heat_geometry(P, o->heat_pixels, &s->f, &s->R);
        s->C = s->R;
        if (s->heat == HEAT_MAX) {
            s->hmax = xcalloc(s->R * s->C, sizeof(double));
        } else {
            size_t *gs = xmalloc((s->R + 1) * sizeof(size_t));
            for (size_t a = 0; a <= s->R; a++) gs[a] = a * s->f < P ? a * s->f : P;
            oa_init(&s->hm, (int)s->R, (int)s->C + 1, gs);
            free(gs);
        }
        s->heat_out = xcalloc(s->R * s->C, sizeof(double));
        s->hp = xcalloc(4 * (s->C + 1), sizeof(double));
    }
    return s;
}

void hstream_free(hstream *s)
{
    if (!s) return;
    free(s->toff);
    free(s->blocks);
    free(s->blk);
    free(s->pos);
    free(s->hoff);
    free(s->hb);
    free(s->rm);
    free(s->inrow);
    free(s->fed);
    oa_free(&s->tm);
    if (s->heat == HEAT_SUM) oa_free(&s->hm);
    free(s->hmax);
    free(s->tm_out);
    free(s->heat_out);
    free(s->tp);
    free(s->hp);
    free(s);
}

size_t hstream_rows_fed(const hstream *s) { return s->nfed; }

/* ---- the j-pass ------------------------------------------------------------------------ */

/* j0..j1-1, all in tensor t and pixel column c; HK: heat kind. Each row's chains
 * are sequential in j; the four-row kernel only runs four rows' chains side by
 * side (scalars, so they stay in registers), which changes no result. */
#define SEG_STEP(v, own, ts, hs)                     \
    do {                                             \
        double h_ = (v) * (v);                       \
        own += h_;                                   \
        ts += h_;                                    \
        if (HK == HEAT_SUM) {                        \
            hs += fabs(v);                           \
        } else if (HK == HEAT_MAX) {                 \
            double a_ = fabs(v);                     \
            if (a_ > hs) hs = a_;                    \
        }                                            \
    } while (0)

static inline __attribute__((always_inline)) void seg1(rowacc *ra, const int HK, size_t j0, size_t j1, int t, size_t c)
{
    const double *x = ra->x;
    double own = ra->own, ts = ra->tp[t], hs = HK ? ra->hp[c] : 0;
    for (size_t j = j0; j < j1; j++) SEG_STEP(x[j], own, ts, hs);
    ra->own = own;
    ra->tp[t] = ts;
    if (HK) ra->hp[c] = hs;
}

static inline __attribute__((always_inline)) void seg4(rowacc *ra, const int HK, size_t j0, size_t j1, int t, size_t c)
{
    const double *x0 = ra[0].x, *x1 = ra[1].x, *x2 = ra[2].x, *x3 = ra[3].x;
    double o0 = ra[0].own, o1 = ra[1].own, o2 = ra[2].own, o3 = ra[3].own;
    double t0 = ra[0].tp[t], t1 = ra[1].tp[t], t2 = ra[2].tp[t], t3 = ra[3].tp[t];
    double h0 = 0, h1 = 0, h2 = 0, h3 = 0;
    if (HK) {
        h0 = ra[0].hp[c];
        h1 = ra[1].hp[c];
        h2 = ra[2].hp[c];
        h3 = ra[3].hp[c];
    }
    for (size_t j = j0; j < j1; j++) {
        SEG_STEP(x0[j], o0, t0, h0);
        SEG_STEP(x1[j], o1, t1, h1);
        SEG_STEP(x2[j], o2, t2, h2);
        SEG_STEP(x3[j], o3, t3, h3);
    }
    ra[0].own = o0;
    ra[1].own = o1;
    ra[2].own = o2;
    ra[3].own = o3;
    ra[0].tp[t] = t0;
    ra[1].tp[t] = t1;
    ra[2].tp[t] = t2;
    ra[3].tp[t] = t3;
    if (HK) {
        ra[0].hp[c] = h0;
        ra[1].hp[c] = h1;
        ra[2].hp[c] = h2;
        ra[3].hp[c] = h3;
    }
}

static void seg_dispatch(rowacc *ra, int nr, int hk, size_t j0, size_t j1, int t, size_t c)
{
    switch (hk * 2 + (nr == 4)) {
    case 0: seg1(ra, HEAT_NONE, j0, j1, t, c); break;
    case 1: seg4(ra, HEAT_NONE, j0, j1, t, c); break;
    case 2: seg1(ra, HEAT_SUM, j0, j1, t, c); break;
    case 3: seg4(ra, HEAT_SUM, j0, j1, t, c); break;
    case 4: seg1(ra, HEAT_MAX, j0, j1, t, c); break;
    default: seg4(ra, HEAT_MAX, j0, j1, t, c); break;
    }
}

/* Columns ja..jb-1 of nr (1 or 4) rows. */
static void rows_range(const hstream *s, rowacc *ra, int nr, size_t ja, size_t jb)
{
    if (ja >= jb) return;
    int t = tensor_of(s, ja);
    for (size_t j = ja; j < jb;) {
        while (j >= s->toff[t + 1]) t++;
        size_t e = s->toff[t + 1] < jb ? s->toff[t + 1] : jb, c = 0;
        if (s->heat) {
            c = j / s->f;
            if ((c + 1) * s->f < e) e = (c + 1) * s->f;
        }
        seg_dispatch(ra, nr, s->heat, j, e, t, c);
        j = e;
    }
}

static void rowacc_init(const hstream *s, rowacc *ra, int r, const double *x)
{
    ra->x = x;
    ra->own = 0;
    ra->tp = s->tp + (size_t)r * (s->T + 1);
    memset(ra->tp, 0, (size_t)(s->T + 1) * sizeof(double));
    ra->hp = s->heat ? s->hp + (size_t)r * (s->C + 1) : NULL;
    if (s->heat) memset(ra->hp, 0, (s->C + 1) * sizeof(double));
}

/* Row i's sums into the cross-row accumulators and its row mass. */
static void row_finish(hstream *s, size_t i, const rowacc *ra)
{
    s->rm[i] = ra->own;
    int t = tensor_of(s, i);
    oa_add(&s->tm, t, i, ra->tp);
    if (s->heat == HEAT_SUM) {
        oa_add(&s->hm, (int)(i / s->f), i, ra->hp);
    } else if (s->heat == HEAT_MAX) {
        double *line = s->hmax + (i / s->f) * s->C;
        for (size_t c = 0; c < s->C; c++)
            if (ra->hp[c] > line[c]) line[c] = ra->hp[c];
    }
}

/* Σ of the squares of n entries x[0], x[st], ... in four lanes (lane = entry mod 4),
 * combined as (l0 + l1) + (l2 + l3), l0 starting from `start`: a fixed order that
 * depends only on the entries, and not latency-bound. */
static double sq_sum_lanes(const double *x, size_t n, size_t st, double start)
{
    double l0 = start, l1 = 0, l2 = 0, l3 = 0;
    size_t e = 0;
    for (; e + 4 <= n; e += 4) {
        const double *y = x + e * st;
        l0 += y[0] * y[0];
        l1 += y[st] * y[st];
        l2 += y[2 * st] * y[2 * st];
        l3 += y[3 * st] * y[3 * st];
    }
    if (e < n) l0 += x[e * st] * x[e * st];
    if (e + 1 < n) l1 += x[(e + 1) * st] * x[(e + 1) * st];
    if (e + 2 < n) l2 += x[(e + 2) * st] * x[(e + 2) * st];
    return (l0 + l1) + (l2 + l3);
}

/* Full row i: its block row copied when kept, else its in-block mass (the kept
 * block gives the block masses itself). */
static void block_row_full(hstream *s, size_t i, const double *x)
{
    const block *b = &s->blocks[s->blk[i]];
    size_t n = b->n, r = s->pos[i];
    if (!s->keep) {
        s->inrow[i] = sq_sum_lanes(x + b->start, n, b->stride, 0);
        return;
    }
    double *dst = s->hb + s->hoff[s->blk[i]] + r * n;
    if (b->stride == 1) memcpy(dst, x + b->start, n * sizeof(double));
    else
        for (size_t e = 0; e < n; e++) dst[e] = x[b->start + e * b->stride];
}

/* Lower row i (entries j >= i): the upper part of its block row when kept; else
 * the mirrored in-block masses of the later rows of its block and its own,
 * continuing what the earlier rows gave it. */
static void block_row_lower(hstream *s, size_t i, const double *x)
{
    const block *b = &s->blocks[s->blk[i]];
    size_t n = b->n, r = s->pos[i], st = b->stride;
    if (s->keep) {
        double *dst = s->hb + s->hoff[s->blk[i]] + r * n;
        if (st == 1) memcpy(dst + r, x + i, (n - r) * sizeof(double));
        else
            for (size_t e = r; e < n; e++) dst[e] = x[b->start + e * st];
        return;
    }
    double *restrict in = s->inrow;
    if (st == 1)
        for (size_t j = i + 1; j < b->start + n; j++) in[j] += x[j] * x[j];
    else
        for (size_t e = r + 1; e < n; e++) {
            size_t j = b->start + e * st;
            in[j] += x[j] * x[j];
        }
    in[i] = sq_sum_lanes(x + i, n - r, st, in[i]);
}

static void add_full(hstream *s, size_t j0, int k, const double *rows)
{
    size_t P = s->P;
    for (int d = 0; d < k;) {
        int nr = k - d >= 4 ? 4 : 1;
        rowacc ra[4];
        for (int r = 0; r < nr; r++) rowacc_init(s, &ra[r], r, rows + (size_t)(d + r) * P);
        rows_range(s, ra, nr, 0, P);
        for (int r = 0; r < nr; r++) {
            size_t i = j0 + d + r;
            row_finish(s, i, &ra[r]);
            block_row_full(s, i, ra[r].x);
        }
        d += nr;
    }
}

/* Lower panels, rows in groups of up to four consecutive rows i0..i0+nr-1:
 * first each row adds its H_ij² (j > i) to the row masses of the later rows
 * (ascending rows, so every row mass is a chain in row order); then each row
 * continues its own row-mass chain from there over j >= i — its diagonal, its
 * head up to i0+nr alone, the rest with the group. */
static void add_lower(hstream *s, size_t j0, int k, const double *rows)
{
    size_t P = s->P;
    double *restrict rm = s->rm;
    for (int d = 0; d < k;) {
        int nr = k - d >= 4 ? 4 : 1;
        size_t i0 = j0 + d;
        rowacc ra[4];
        for (int r = 0; r < nr; r++) {
            size_t i = i0 + r;
            const double *restrict x = rows + (size_t)(d + r) * P;
            for (size_t j = i + 1; j < P; j++) rm[j] += x[j] * x[j];
            block_row_lower(s, i, x);
        }
        for (int r = 0; r < nr; r++) {
            size_t i = i0 + r;
            rowacc_init(s, &ra[r], r, rows + (size_t)(d + r) * P);
            double v = ra[r].x[i];
            ra[r].own = rm[i] + v * v;
            ra[r].tp[s->T] = v * v;
            if (s->heat == HEAT_SUM) ra[r].hp[s->C] = fabs(v);
            else if (s->heat == HEAT_MAX) ra[r].hp[i / s->f] = fabs(v);
            rows_range(s, &ra[r], 1, i + 1, i0 + nr);
        }
        rows_range(s, ra, nr, i0 + nr, P);
        for (int r = 0; r < nr; r++) row_finish(s, i0 + r, &ra[r]);
        d += nr;
    }
}

void hstream_add(hstream *s, size_t j0, int k, const double *rows, int lower)
{
    if (k <= 0) return;
    if (j0 > s->P || (size_t)k > s->P - j0)
        die_user("hstream: rows %zu..%zu outside 0..%zu", j0, j0 + (size_t)k, s->P);
    int mode = lower ? MODE_LOWER : MODE_FULL;
    if (s->mode != MODE_NONE && s->mode != mode)
        die_user("hstream: a %s panel after %s ones (one kind of panel per stream)", lower ? "lower" : "full",
                 lower ? "full" : "lower");
    for (int d = 0; d < k; d++)
        if (s->fed[j0 + d]) die_user("hstream: row %zu of H fed twice", j0 + d);
    s->mode = mode;
    s->finished = 0;
    if (lower) add_lower(s, j0, k, rows);
    else add_full(s, j0, k, rows);
    memset(s->fed + j0, 1, (size_t)k);
    s->nfed += (size_t)k;
}

/* ---- driving the model ------------------------------------------------------------------ */

/* Panels of o->panel columns starting at j0, j0 + step, ... below j1 (each cut
 * at j1), in that order. */
static void run_panels(hstream *s, model *m, size_t j0, size_t j1, size_t step, const hessian_opts *opt)
{
    hessian_opts o = opt ? *opt : hessian_defaults();
    size_t P = m->P;
    if (P != s->P) DIE("hstream_run: model has P = %zu, stream %zu", P, s->P);
    if (j0 > j1 || j1 > P) die_user("hstream: column range %zu..%zu is not inside 0..%zu", j0, j1, P);
    hess_cols_fn lower = o.symmetric && o.use_hess_cols ? m->hess_cols_lower : NULL;
    int pw = o.panel > 0 ? o.panel : 128;
    int use_hvp = !lower && !(o.use_hess_cols && m->hess_cols);
    /* the stream's own bytes, plus this run's panel (and unit directions for hvp) */
    hstream_opts so = {.keep_blocks = s->keep, .heat_pixels = s->heat ? s->heat_px : 0,
                       .heat_pool = s->heat == HEAT_MAX ? POOL_MAX : POOL_MEAN};
    partition p = {.nblocks = s->nb, .cap = s->nb, .b = s->blocks};
    so.p = &p;
    double need = hstream_bytes(m, &so, pw * (use_hvp ? 2 : 1));
    if (need > s->checked) {
        char what[96];
        snprintf(what, sizeof what, "hstream: the stream and one panel of %d columns", pw);
        memory_check(what, need);
        s->checked = need;
    }
    double *buf = huge_alloc((size_t)pw * P, "hstream panel");
    double *V = use_hvp ? xcalloc((size_t)pw * P, sizeof(double)) : NULL;
    if (step < (size_t)pw) step = (size_t)pw;
    size_t total = 0;
    for (size_t c = j0; c < j1; c += step) total += j1 - c < (size_t)pw ? j1 - c : (size_t)pw;
    progress pr;
    progress_start(&pr, o.label ? o.label : "hstream", (long)total);
    size_t done = 0;
    for (size_t c = j0; c < j1; c += step) {
        int k = (int)(j1 - c < (size_t)pw ? j1 - c : (size_t)pw);
        if (lower) {
            lower(m, c, k, buf);
        } else if (!use_hvp) {
            m->hess_cols(m, c, k, buf);
        } else {
            for (int d = 0; d < k; d++) V[(size_t)d * P + c + d] = 1;
            m->hvp(m, V, buf, k);
            for (int d = 0; d < k; d++) V[(size_t)d * P + c + d] = 0;
        }
        hstream_add(s, c, k, buf, lower != NULL);
        done += (size_t)k;
        progress_update(&pr, (long)done);
    }
    progress_end(&pr);
    free(V);
    free(buf);
}

void hstream_run_cols(hstream *s, model *m, size_t j0, size_t j1, const hessian_opts *o)
{
    run_panels(s, m, j0, j1, 0, o);
}

void hstream_run_strided(hstream *s, model *m, size_t first, size_t step, const hessian_opts *o)
{
    run_panels(s, m, first < m->P ? first : m->P, m->P, step, o);
}

void hstream_run(hstream *s, model *m, const hessian_opts *o)
{
    hstream_run_cols(s, m, 0, m->P, o);
}

/* ---- merge --------------------------------------------------------------------------------- */

/* What a merge reads of the stream it adds: a stream itself, or its packed bytes
 * (hstream_pack), where the kept block rows are stored one after the other for
 * the fed rows in ascending order. */
typedef struct {
    size_t P, nfed;
    int T, nb, keep, heat, heat_px, mode;
    uint64_t blocks_hash;
    const unsigned char *fed;
    const double *rm, *inrow;
    const double *hb;          /* the stream's hb (rows at hoff), or the packed rows (packed = 1) */
    int packed;
    ordacc tm, hm;             /* views: gstart borrowed from the receiving stream */
    const double *hmax;
} hview;

/* FNV-1a over the blocks' (start, n, stride): two streams of one partition agree. */
static uint64_t blocks_hash(const block *b, int nb)
{
    uint64_t h = 1469598103934665603ull;
    for (int k = 0; k < nb; k++) {
        uint64_t v[3] = {b[k].start, b[k].n, b[k].stride};
        const unsigned char *c = (const unsigned char *)v;
        for (size_t e = 0; e < sizeof v; e++) h = (h ^ c[e]) * 1099511628211ull;
    }
    return h;
}

static hview view_of(const hstream *b)
{
    hview v = {.P = b->P, .nfed = b->nfed, .T = b->T, .nb = b->nb, .keep = b->keep, .heat = b->heat,
               .heat_px = b->heat_px, .mode = b->mode, .blocks_hash = blocks_hash(b->blocks, b->nb),
               .fed = b->fed, .rm = b->rm, .inrow = b->inrow, .hb = b->hb, .packed = 0, .tm = b->tm,
               .hmax = b->hmax};
    if (b->heat == HEAT_SUM) v.hm = b->hm;
    return v;
}

static void merge_view(hstream *a, const hview *b)
{
    if (a->P != b->P || a->T != b->T || a->keep != b->keep || a->heat != b->heat || a->heat_px != b->heat_px)
        die_user("hstream_merge: streams of different models or options");
    if (a->nb != b->nb) die_user("hstream_merge: streams of different partitions (%d and %d blocks)", a->nb, b->nb);
    if (blocks_hash(a->blocks, a->nb) != b->blocks_hash) die_user("hstream_merge: streams of different partitions");
    if (a->mode != MODE_NONE && b->mode != MODE_NONE && a->mode != b->mode)
        die_user("hstream_merge: a stream of full panels and one of lower panels");
    size_t P = a->P;
    for (size_t i = 0; i < P; i++)
        if (a->fed[i] && b->fed[i]) die_user("hstream_merge: row %zu of H is in both streams", i);
    if (!b->nfed) return;
    int lower = b->mode == MODE_LOWER;
    /* per-row values: copied from the stream that owns the row (full panels);
     * lower panels also spread H_ij² onto later rows, so those add up */
    for (size_t i = 0; i < P; i++) {
        if (lower) {
            a->rm[i] += b->rm[i];
            a->inrow[i] += b->inrow[i];
        } else if (b->fed[i]) {
            a->rm[i] = b->rm[i];
            a->inrow[i] = b->inrow[i];
        }
    }
    if (a->keep) {   /* each block entry (of the upper triangle for lower panels) comes from one row */
        const double *src = b->hb;
        for (size_t i = 0; i < P; i++) {
            if (!b->fed[i]) continue;
            const block *bl = &a->blocks[a->blk[i]];
            size_t n = bl->n, r = a->pos[i], e0 = lower ? r : 0, off = a->hoff[a->blk[i]] + r * n;
            if (b->packed) {
                memcpy(a->hb + off + e0, src, (n - e0) * sizeof(double));
                src += n - e0;
            } else {
                memcpy(a->hb + off + e0, b->hb + off + e0, (n - e0) * sizeof(double));
            }
        }
    }
    oa_merge(&a->tm, &b->tm);
    if (a->heat == HEAT_SUM) oa_merge(&a->hm, &b->hm);
    if (a->heat == HEAT_MAX)
        for (size_t q = 0; q < a->R * a->C; q++)
            if (b->hmax[q] > a->hmax[q]) a->hmax[q] = b->hmax[q];
    for (size_t i = 0; i < P; i++) a->fed[i] |= b->fed[i];
    a->nfed += b->nfed;
    a->mode = b->mode;
    a->finished = 0;
}

void hstream_merge(hstream *a, const hstream *b)
{
    hview v = view_of(b);
    merge_view(a, &v);
}

/* ---- pack ----------------------------------------------------------------------------------
 * Little-endian 8-byte words (the ranks of one job share a byte order):
 *   magic "HSTRPK01"; P, T, nb, keep, heat, heat_px, mode + 1, nfed, blocks hash,
 *   tm pending rows, hm pending rows, kept doubles;
 *   fed (P bytes, padded to 8); rm (P); inrow (P); the kept block rows of the fed
 *   rows in ascending order (n_b each, n_b − r for lower panels);
 *   tm: acc (T × (T+1)), next (T), pending rows, their sums;
 *   heatmap: HEAT_SUM as tm over the pixel rows, HEAT_MAX the R × C maxima. */
enum { PK_HEAD = 13 };
static const char PK_MAGIC[8] = {'H', 'S', 'T', 'R', 'P', 'K', '0', '1'};

static size_t kept_doubles(const hstream *s)
{
    if (!s->keep) return 0;
    size_t n = 0;
    for (size_t i = 0; i < s->P; i++)
        if (s->fed[i]) n += s->blocks[s->blk[i]].n - (s->mode == MODE_LOWER ? s->pos[i] : 0);
    return n;
}

static size_t oa_words(const ordacc *a) { return (size_t)a->ng * a->W + (size_t)a->ng + a->np * (1 + (size_t)a->W); }

static uint64_t *oa_pack(const ordacc *a, uint64_t *w)
{
    size_t na = (size_t)a->ng * a->W;
    memcpy(w, a->acc, na * 8);
    w += na;
    for (int g = 0; g < a->ng; g++) *w++ = a->next[g];
    for (size_t k = 0; k < a->np; k++) *w++ = a->prow[k];
    if (a->np) memcpy(w, a->pval, a->np * a->W * 8);
    return w + a->np * a->W;
}

/* A view of a packed ordacc shaped like `like` with np pending rows. */
static const uint64_t *oa_view(ordacc *v, const ordacc *like, size_t np, const uint64_t *w)
{
    *v = *like;
    size_t na = (size_t)like->ng * like->W;
    v->acc = (double *)w;
    w += na;
    v->next = (size_t *)w;
    w += like->ng;
    v->np = v->cap = np;
    v->prow = (size_t *)w;
    w += np;
    v->pval = (double *)w;
    return w + np * like->W;
}

void *hstream_pack(const hstream *s, size_t *bytes)
{
    size_t P = s->P, fedw = (P + 7) / 8, kept = kept_doubles(s);
    size_t words = 1 + PK_HEAD + fedw + 2 * P + kept + oa_words(&s->tm);
    if (s->heat == HEAT_SUM) words += oa_words(&s->hm);
    if (s->heat == HEAT_MAX) words += s->R * s->C;
    uint64_t *buf = xmalloc(checked_mul(words, 8, "packed stream")), *w = buf;
    memcpy(w++, PK_MAGIC, 8);
    uint64_t head[PK_HEAD] = {P, (uint64_t)s->T, (uint64_t)s->nb, (uint64_t)s->keep, (uint64_t)s->heat,
                              (uint64_t)s->heat_px, (uint64_t)(s->mode + 1), s->nfed, blocks_hash(s->blocks, s->nb),
                              s->tm.np, s->heat == HEAT_SUM ? s->hm.np : 0, kept, 0};
    memcpy(w, head, sizeof head);
    w += PK_HEAD;
    w[fedw - 1] = 0;
    memcpy(w, s->fed, P);
    w += fedw;
    memcpy(w, s->rm, P * 8);
    w += P;
    memcpy(w, s->inrow, P * 8);
    w += P;
    if (kept) {
        double *d = (double *)w;
        for (size_t i = 0; i < P; i++) {
            if (!s->fed[i]) continue;
            const block *bl = &s->blocks[s->blk[i]];
            size_t n = bl->n, r = s->pos[i], e0 = s->mode == MODE_LOWER ? r : 0;
            memcpy(d, s->hb + s->hoff[s->blk[i]] + r * n + e0, (n - e0) * 8);
            d += n - e0;
        }
        w += kept;
    }
    w = oa_pack(&s->tm, w);
    if (s->heat == HEAT_SUM) w = oa_pack(&s->hm, w);
    if (s->heat == HEAT_MAX) {
        memcpy(w, s->hmax, s->R * s->C * 8);
        w += s->R * s->C;
    }
    if ((size_t)(w - buf) != words) DIE("hstream_pack: %zu words written, %zu counted", (size_t)(w - buf), words);
    *bytes = words * 8;
    return buf;
}

void hstream_merge_packed(hstream *a, const void *bytes, size_t len)
{
    const uint64_t *w = bytes, *end = w + len / 8;
    if (len % 8 || len < 8 * (1 + PK_HEAD) || memcmp(w, PK_MAGIC, 8) != 0)
        die_user("hstream_merge_packed: not a packed stream (%zu bytes)", len);
    uint64_t h[PK_HEAD];
    memcpy(h, w + 1, sizeof h);
    w += 1 + PK_HEAD;
    hview v = {.P = h[0], .T = (int)h[1], .nb = (int)h[2], .keep = (int)h[3], .heat = (int)h[4],
               .heat_px = (int)h[5], .mode = (int)h[6] - 1, .nfed = h[7], .blocks_hash = h[8], .packed = 1};
    if (v.P != a->P || v.T != a->T || v.heat != a->heat || v.keep != a->keep)
        die_user("hstream_merge_packed: a stream of a different model or options");
    size_t P = a->P, fedw = (P + 7) / 8, kept = h[11];
    size_t need = fedw + 2 * P + kept + (size_t)a->T * (a->T + 1) + a->T + h[9] * (size_t)(a->T + 2);
    if (a->heat == HEAT_SUM) need += a->R * (a->C + 1) + a->R + h[10] * (a->C + 2);
    if (a->heat == HEAT_MAX) need += a->R * a->C;
    if ((size_t)(end - w) != need) die_user("hstream_merge_packed: %zu bytes, expected %zu", len, 8 * (need + 1 + PK_HEAD));
    v.fed = (const unsigned char *)w;
    w += fedw;
    v.rm = (const double *)w;
    w += P;
    v.inrow = (const double *)w;
    w += P;
    v.hb = (const double *)w;
    w += kept;
    w = oa_view(&v.tm, &a->tm, h[9], w);
    if (a->heat == HEAT_SUM) w = oa_view(&v.hm, &a->hm, h[10], w);
    if (a->heat == HEAT_MAX) v.hmax = (const double *)w;
    size_t count = 0;
    for (size_t i = 0; i < P; i++) count += v.fed[i] != 0;
    if (count != v.nfed) die_user("hstream_merge_packed: %zu rows marked fed, %zu counted", count, v.nfed);
    merge_view(a, &v);
}

/* ---- results -------------------------------------------------------------------------------- */

/* Upper triangle of A (n×n) onto the lower one, in tiles. */
static void mirror_upper(double *A, size_t n)
{
    const size_t TL = 64;
    for (size_t r0 = 0; r0 < n; r0 += TL)
        for (size_t c0 = 0; c0 <= r0; c0 += TL) {
            size_t r1 = r0 + TL < n ? r0 + TL : n, c1 = c0 + TL < n ? c0 + TL : n;
            for (size_t r = r0; r < r1; r++)
                for (size_t c = c0; c < c1 && c < r; c++) A[r * n + c] = A[c * n + r];
        }
}

static void finish(const hstream *cs)
{
    hstream *s = (hstream *)cs;   /* results are made once, on first use */
    if (s->finished) return;
    if (s->nfed != s->P) die_user("hstream: results need all %zu rows of H; %zu were fed", s->P, s->nfed);
    if (!oa_complete(&s->tm) || (s->heat == HEAT_SUM && !oa_complete(&s->hm)))
        DIE("hstream: all rows fed but a chain is incomplete");
    int lower = s->mode == MODE_LOWER;
    if (lower && s->keep)
        for (int k = 0; k < s->nb; k++) mirror_upper(s->hb + s->hoff[k], s->blocks[k].n);
    int T = s->T, W = T + 1;
    const double *acc = s->tm.acc;
    for (int a = 0; a < T; a++)
        for (int b = 0; b < T; b++) {
            double v;
            if (!lower) v = acc[a * W + b];
            else if (a == b) v = 2 * acc[a * W + a] + acc[a * W + T];
            else v = a < b ? acc[a * W + b] : acc[b * W + a];
            s->tm_out[a * T + b] = v;
        }
    double tot = 0;
    for (int q = 0; q < T * T; q++) tot += s->tm_out[q];
    s->total = tot;
    if (s->heat) {
        size_t R = s->R, C = s->C, f = s->f, P = s->P;
        for (size_t a = 0; a < R; a++)
            for (size_t b = 0; b < C; b++) {
                size_t lo = a < b ? a : b, hi = a < b ? b : a;
                double v;
                if (s->heat == HEAT_MAX) {
                    v = lower ? s->hmax[lo * C + hi] : s->hmax[a * C + b];
                } else {
                    const double *h = s->hm.acc;
                    if (!lower) v = h[a * (C + 1) + b];
                    else if (a == b) v = 2 * h[a * (C + 1) + a] + h[a * (C + 1) + C];
                    else v = h[lo * (C + 1) + hi];
                    size_t hh = (a + 1) * f <= P ? f : P - a * f, ww = (b + 1) * f <= P ? f : P - b * f;
                    v /= (double)(hh * ww);
                }
                s->heat_out[a * C + b] = v;
            }
    }
    s->finished = 1;
}

static void check_block(const hstream *s, int b)
{
    if (b < 0 || b >= s->nb) DIE("hstream: block %d of %d", b, s->nb);
}

double hstream_total_fro2(const hstream *s)
{
    finish(s);
    return s->total;
}

double hstream_block_fro2(const hstream *s, int b)
{
    finish(s);
    check_block(s, b);
    const block *bl = &s->blocks[b];
    if (s->keep) return frobenius_sq(bl->n * bl->n, s->hb + s->hoff[b]);
    double f2 = 0;
    for (size_t e = 0; e < bl->n; e++) f2 += s->inrow[bl->start + e * bl->stride];
    return f2;
}

double hstream_mass_ratio(const hstream *s)
{
    finish(s);
    double num = 0;
    for (int b = 0; b < s->nb; b++) num += hstream_block_fro2(s, b);
    return s->total > 0 ? num / s->total : 1.0;
}

const double *hstream_block(const hstream *s, int b)
{
    finish(s);
    check_block(s, b);
    return s->keep ? s->hb + s->hoff[b] : NULL;
}

const double *hstream_row_mass(const hstream *s)
{
    finish(s);
    return s->rm;
}

const double *hstream_tensor_mass(const hstream *s)
{
    finish(s);
    return s->tm_out;
}

const double *hstream_heatmap(const hstream *s, size_t *pr, size_t *pc, size_t *factor)
{
    finish(s);
    if (!s->heat) {
        *pr = *pc = *factor = 0;
        return NULL;
    }
    *pr = s->R;
    *pc = s->C;
    *factor = s->f;
    return s->heat_out;
}

/* block_analyze's metrics from the kept block and the streamed row masses. */
block_metrics hstream_block_metrics(const hstream *s, int b, const double *d)
{
    finish(s);
    check_block(s, b);
    if (!s->keep) die_user("hstream: block metrics need the blocks kept (keep_blocks)");
    const block *bl = &s->blocks[b];
    double rows = 0;
    for (size_t e = 0; e < bl->n; e++) rows += s->rm[bl->start + e * bl->stride];
    return block_metrics_of(s->hb + s->hoff[b], bl, rows, d);
}
