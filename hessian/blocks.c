/* Diagonal blocks of H for a partition: extraction, spectra, κ, τ, κ(D H_b),
 * mass ratios, block structure without the diagonal and Principle 1's split of
 * a tensor; pooled |H| heatmaps and block boundaries for gnuplot. */
#include "hessian.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

double *block_cross(const double *H, size_t P, const block *a, const block *b)
{
    double *out = xmalloc(checked_mul(a->n * b->n, sizeof(double), "Hessian block"));
    for (size_t r = 0; r < a->n; r++) {
        const double *row = H + (a->start + r * a->stride) * P;
        for (size_t c = 0; c < b->n; c++) out[r * b->n + c] = row[b->start + c * b->stride];
    }
    return out;
}

double *block_extract(const double *H, size_t P, const block *b) { return block_cross(H, P, b, b); }

/* label[i] = block of i, or -1 outside the partition; returns |S|. */
static size_t block_labels(const partition *p, size_t P, int *label)
{
    size_t count = 0;
    for (size_t i = 0; i < P; i++) label[i] = -1;
    for (int k = 0; k < p->nblocks; k++) {
        const block *b = &p->b[k];
        for (size_t e = 0; e < b->n; e++) {
            size_t i = b->start + e * b->stride;
            if (i >= P) DIE("block %s reaches index %zu beyond P = %zu", b->name, i, P);
            label[i] = k;
            count++;
        }
    }
    return count;
}

/* Σ over i, j in S of H_ij² (den) and of those with equal labels (num). */
/* Each row summed on its own, then the rows: one running sum over P² terms
 * loses ~1e-12 relative already at P = 2,640, this grouping ~1e-16 (and it is
 * the grouping of the streamed analysis, hessian/stream.h). */
static void labelled_mass(const double *H, size_t P, const int *label, double *num, double *den)
{
    double n = 0, d = 0;
    for (size_t i = 0; i < P; i++) {
        if (label[i] < 0) continue;
        const double *row = H + i * P;
        double rn = 0, rd = 0;
        for (size_t j = 0; j < P; j++) {
            if (label[j] < 0) continue;
            double h2 = row[j] * row[j];
            rd += h2;
            if (label[j] == label[i]) rn += h2;
        }
        n += rn;
        d += rd;
    }
    *num = n;
    *den = d;
}

double *tensor_hessian(const double *H, size_t P, const model *m, int t)
{
    const tensor_info *ti = &m->tensors[t];
    block b = {.start = ti->offset, .n = tensor_size(ti), .stride = 1, .tensor = t};
    return block_extract(H, P, &b);
}

double mass_ratio(const double *H, size_t P, const partition *p)
{
    int *label = xmalloc(P * sizeof(int));
    block_labels(p, P, label);
    double num, den;
    labelled_mass(H, P, label, &num, &den);
    free(label);
    return den > 0 ? num / den : 1.0;
}

void mass_ratio_random(const double *H, size_t P, const partition *p, gsl_rng *rng, int reps,
                       double *mean, double *sd)
{
    int *label = xmalloc(P * sizeof(int));
    size_t count = block_labels(p, P, label);
    size_t *members = xmalloc((count ? count : 1) * sizeof(size_t));
    size_t c = 0;
    for (size_t i = 0; i < P; i++) if (label[i] >= 0) members[c++] = i;
    double s = 0, s2 = 0;
    for (int r = 0; r < reps; r++) {
        for (size_t i = count; i > 1; i--) {   /* Fisher–Yates */
            size_t j = rng_int(rng, i), t = members[i - 1];
            members[i - 1] = members[j];
            members[j] = t;
        }
        size_t at = 0;
        for (int k = 0; k < p->nblocks; k++)
            for (size_t e = 0; e < p->b[k].n; e++) label[members[at++]] = k;
        double num, den;
        labelled_mass(H, P, label, &num, &den);
        double ratio = den > 0 ? num / den : 1.0;
        s += ratio;
        s2 += ratio * ratio;
    }
    *mean = reps ? s / reps : NAN;
    *sd = reps > 1 ? sqrt(fmax(0, (s2 - s * s / reps) / (reps - 1))) : 0;
    free(members);
    free(label);
}

/* ---- block structure without the diagonal --------------------------------------------- */

/* One pass over S×S: D, O and I, and per block (when in_b, out_b are given) the
 * off-diagonal mass of its rows inside the block and in all of S. Rows are
 * summed on their own first (see labelled_mass). */
static void offdiag_sums(const double *H, size_t P, const int *label, offdiag_stats *st, double *in_b,
                         double *all_b)
{
    double D = 0, O = 0, I = 0;
    for (size_t i = 0; i < P; i++) {
        if (label[i] < 0) continue;
        const double *row = H + i * P;
        double ro = 0, ri = 0;
        for (size_t j = 0; j < P; j++) {
            if (label[j] < 0 || j == i) continue;
            double h2 = row[j] * row[j];
            ro += h2;
            if (label[j] == label[i]) ri += h2;
        }
        D += row[i] * row[i];
        O += ro;
        I += ri;
        if (in_b) {
            in_b[label[i]] += ri;
            all_b[label[i]] += ro;
        }
    }
    st->diag = D;
    st->offdiag = O;
    st->inblock = I;
}

/* e = (s − q)/(1 − q) with the conventions of hessian.h. */
static double excess_of(double in, double all, double q, double *share)
{
    if (q >= 1) {
        *share = 1;
        return NAN;
    }
    if (!(all > 0)) {
        *share = q;
        return 0;
    }
    *share = in / all;
    return (*share - q) / (1 - q);
}

/* Labels of S shuffled among S's members: p's block sizes on a random permutation of S. */
static void shuffle_labels(int *label, size_t P, gsl_rng *rng)
{
    size_t count = 0;
    for (size_t i = 0; i < P; i++) count += label[i] >= 0;
    size_t *members = xmalloc((count ? count : 1) * sizeof(size_t));
    size_t c = 0;
    for (size_t i = 0; i < P; i++) if (label[i] >= 0) members[c++] = i;
    for (size_t i = count; i > 1; i--) {   /* Fisher–Yates on the labels of S */
        size_t j = rng_int(rng, i);
        int t = label[members[i - 1]];
        label[members[i - 1]] = label[members[j]];
        label[members[j]] = t;
    }
    free(members);
}

static offdiag_stats structure_of(const double *H, size_t P, const partition *p, gsl_rng *rng)
{
    int *label = xmalloc(P * sizeof(int));
    size_t N = block_labels(p, P, label);
    if (rng) shuffle_labels(label, P, rng);
    offdiag_stats st;
    offdiag_sums(H, P, label, &st, NULL, NULL);
    free(label);
    double pairs = 0;
    for (int k = 0; k < p->nblocks; k++) pairs += (double)p->b[k].n * (double)(p->b[k].n - 1);
    st.chance = N > 1 ? pairs / ((double)N * (double)(N - 1)) : 1;
    st.excess = excess_of(st.inblock, st.offdiag, st.chance, &st.share);
    return st;
}

offdiag_stats offdiag_structure(const double *H, size_t P, const partition *p) { return structure_of(H, P, p, NULL); }

offdiag_stats offdiag_structure_random(const double *H, size_t P, const partition *p, gsl_rng *rng)
{
    return structure_of(H, P, p, rng);
}

void offdiag_block_excess(const double *H, size_t P, const partition *p, double *excess)
{
    int *label = xmalloc(P * sizeof(int));
    size_t N = block_labels(p, P, label);
    double *in_b = xcalloc((size_t)p->nblocks + 1, sizeof(double));
    double *all_b = xcalloc((size_t)p->nblocks + 1, sizeof(double));
    offdiag_stats st;
    offdiag_sums(H, P, label, &st, in_b, all_b);
    for (int k = 0; k < p->nblocks; k++) {
        double q = N > 1 ? (double)(p->b[k].n - 1) / (double)(N - 1) : 1, s;
        excess[k] = excess_of(in_b[k], all_b[k], q, &s);
    }
    free(in_b);
    free(all_b);
    free(label);
}

int partition_refines(const partition *fine, const partition *coarse, size_t P)
{
    int *lf = xmalloc(P * sizeof(int)), *lc = xmalloc(P * sizeof(int));
    block_labels(fine, P, lf);
    block_labels(coarse, P, lc);
    int ok = 1;
    for (size_t i = 0; i < P && ok; i++) ok = (lf[i] < 0) == (lc[i] < 0);   /* the same S */
    for (int k = 0; k < fine->nblocks && ok; k++) {
        const block *b = &fine->b[k];
        int c = lc[b->start];
        for (size_t e = 1; e < b->n && ok; e++) ok = lc[b->start + e * b->stride] == c;
    }
    free(lf);
    free(lc);
    return ok;
}

offdiag_stats offdiag_structure_within(const double *H, size_t P, const partition *p, const partition *within)
{
    if (!partition_refines(p, within, P)) DIE("offdiag_structure_within: the partition does not refine the blocks");
    int *lp = xmalloc(P * sizeof(int)), *lw = xmalloc(P * sizeof(int));
    block_labels(p, P, lp);
    block_labels(within, P, lw);
    int nw = within->nblocks;
    double *Oc = xcalloc((size_t)nw, sizeof(double)), *pairs = xcalloc((size_t)nw, sizeof(double));
    offdiag_stats st = {0};
    for (size_t i = 0; i < P; i++) {
        if (lw[i] < 0) continue;
        const double *row = H + i * P;
        double ro = 0, ri = 0;
        for (size_t j = 0; j < P; j++) {
            if (lw[j] != lw[i] || j == i) continue;
            double h2 = row[j] * row[j];
            ro += h2;
            if (lp[j] == lp[i]) ri += h2;
        }
        st.diag += row[i] * row[i];
        st.offdiag += ro;
        st.inblock += ri;
        Oc[lw[i]] += ro;
    }
    for (int k = 0; k < p->nblocks; k++) pairs[lw[p->b[k].start]] += (double)p->b[k].n * (double)(p->b[k].n - 1);
    /* q: the mean of the blocks' q_c weighted by their off-diagonal mass (by their pairs when there is none) */
    double qm = 0, qp = 0, allpairs = 0;
    for (int c = 0; c < nw; c++) {
        double m = (double)within->b[c].n, mp = m * (m - 1);
        if (mp <= 0) continue;
        qm += Oc[c] * pairs[c] / mp;
        qp += pairs[c];
        allpairs += mp;
    }
    st.chance = allpairs <= 0 ? 1 : st.offdiag > 0 ? qm / st.offdiag : qp / allpairs;
    st.excess = excess_of(st.inblock, st.offdiag, st.chance, &st.share);
    free(Oc);
    free(pairs);
    free(lp);
    free(lw);
    return st;
}

double offdiag_mass_ratio(const offdiag_stats *st)
{
    double total = st->diag + st->offdiag;
    return total > 0 ? (st->diag + st->inblock) / total : 1.0;
}

double *sym_permuted(const double *A, size_t n, gsl_rng *rng)
{
    size_t *pi = xmalloc((n ? n : 1) * sizeof(size_t));
    for (size_t i = 0; i < n; i++) pi[i] = i;
    for (size_t i = n; i > 1; i--) {   /* Fisher–Yates */
        size_t j = rng_int(rng, i), t = pi[i - 1];
        pi[i - 1] = pi[j];
        pi[j] = t;
    }
    double *out = xmalloc(checked_mul(n * n, sizeof(double), "permuted matrix"));
    for (size_t i = 0; i < n; i++) {
        const double *row = A + pi[i] * n;
        for (size_t j = 0; j < n; j++) out[i * n + j] = row[pi[j]];
    }
    free(pi);
    return out;
}

double diag_share(size_t n, const double *A)
{
    double d = 0, total = 0;
    for (size_t i = 0; i < n; i++) {
        double r = frobenius_sq(n, A + i * n);
        total += r;
        d += A[i * n + i] * A[i * n + i];
    }
    return total > 0 ? d / total : 1.0;
}

double diag_excess(size_t n, const double *A)
{
    if (n < 2) return NAN;
    double u = 1.0 / (double)n;
    return (diag_share(n, A) - u) / (1 - u);
}

double diag_excess_within(const double *H, size_t P, const partition *within)
{
    int *lw = xmalloc(P * sizeof(int));
    size_t N = block_labels(within, P, lw);
    double D = 0, O = 0, sq = 0;
    for (size_t i = 0; i < P; i++) {
        if (lw[i] < 0) continue;
        const double *row = H + i * P;
        double ro = 0;
        for (size_t j = 0; j < P; j++)
            if (j != i && lw[j] == lw[i]) ro += row[j] * row[j];
        D += row[i] * row[i];
        O += ro;
    }
    free(lw);
    for (int c = 0; c < within->nblocks; c++) sq += (double)within->b[c].n * (double)within->b[c].n;
    double kappa = sq > 0 ? (double)N / sq : 1;
    if (kappa >= 1) return NAN;
    double d = D + O > 0 ? D / (D + O) : 1;
    return (d - kappa) / (1 - kappa);
}

/* ---- Principle 1 on one tensor -------------------------------------------------------------- */

void split_candidates_of(const double *Htt, const model *m, int t, split_candidates *c)
{
    size_t n = tensor_size(&m->tensors[t]);
    memset(c, 0, sizeof *c);
    c->n = tensor_splits(m, t, c->split);
    c->diag_share = diag_share(n, Htt);
    for (int i = 0; i < c->n; i++) {
        partition *p = tensor_local_partition(m, t, c->split[i]);
        c->nblocks[i] = p->nblocks;
        c->st[i] = offdiag_structure(Htt, n, p);
        c->mass[i] = offdiag_mass_ratio(&c->st[i]);
        partition_free(p);
        switch (c->split[i]) {
        case SPLIT_WHOLE: c->hold[i] = 1; break;
        case SPLIT_ENTRIES: c->hold[i] = diag_excess(n, Htt); break;
        default: c->hold[i] = c->st[i].excess; break;
        }
    }
}

int principle1_pick(const double *Htt, const model *m, int t, const split_candidates *c, double level, double *score)
{
    if (!(level > 0 && level <= 1)) DIE("principle1_pick: level %g not in (0, 1]", level);
    if (c->n < 1 || c->split[0] != SPLIT_WHOLE) DIE("principle1_pick: the candidates must start with whole");
    size_t n = tensor_size(&m->tensors[t]);
    partition *parts[SPLIT_CANDIDATES_MAX];
    for (int i = 0; i < c->n; i++) parts[i] = tensor_local_partition(m, t, c->split[i]);
    int cur = 0;
    double cur_score = 1;
    for (;;) {
        int best = -1;
        double best_score = 0;
        for (int i = 0; i < c->n; i++) {
            if (c->nblocks[i] <= c->nblocks[cur] || !partition_refines(parts[i], parts[cur], n)) continue;
            double sc = c->split[i] == SPLIT_ENTRIES ? diag_excess_within(Htt, n, parts[cur])
                                                     : offdiag_structure_within(Htt, n, parts[i], parts[cur]).excess;
            if (!(sc >= level)) continue;
            if (best < 0 || c->nblocks[i] < c->nblocks[best] ||
                (c->nblocks[i] == c->nblocks[best] && sc > best_score))
                best = i, best_score = sc;
        }
        if (best < 0) break;
        cur = best;
        cur_score = best_score;
    }
    for (int i = 0; i < c->n; i++) partition_free(parts[i]);
    if (score) *score = cur_score;
    return cur;
}

void adam_diag(size_t P, const double *vhat, double eps, double *d)
{
    for (size_t i = 0; i < P; i++) d[i] = 1 / (sqrt(vhat[i]) + eps);
}

spectrum scaled_spectrum(int n, const double *A, const double *d)
{
    double *M = xmalloc((size_t)n * n * sizeof(double));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) M[(size_t)i * n + j] = sqrt(d[i]) * A[(size_t)i * n + j] * sqrt(d[j]);
    spectrum s = sym_spectrum(n, M);
    free(M);
    return s;
}

double kappa_scaled_svd(int n, const double *A, const double *d)
{
    double *M = xmalloc((size_t)n * n * sizeof(double));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) M[(size_t)i * n + j] = d[i] * A[(size_t)i * n + j];
    double k = kappa_svd(n, n, M);
    free(M);
    return k;
}

block_metrics block_metrics_of(const double *Hb, const block *b, double rows, const double *d)
{
    int n = (int)b->n;
    block_metrics bm = {.n = b->n, .s = sym_spectrum(n, Hb), .tau = tau_ratio(n, Hb), .fro2 = frobenius_sq(b->n * b->n, Hb)};
    bm.row_mass = rows > 0 ? bm.fro2 / rows : 1.0;
    if (d) {
        double *db = xmalloc(b->n * sizeof(double));
        block_gather(b, d, db);
        bm.sd = scaled_spectrum(n, Hb, db);
        bm.kappa_dh_svd = kappa_scaled_svd(n, Hb, db);
        free(db);
    } else {
        bm.sd = (spectrum){.lmin = NAN, .lmax = NAN, .absmin = NAN, .absmax = NAN, .kappa = NAN, .nneg = -1};
        bm.kappa_dh_svd = NAN;
    }
    return bm;
}

block_metrics block_analyze(const double *H, size_t P, const block *b, const double *d)
{
    double *Hb = block_extract(H, P, b), rows = 0;
    for (size_t e = 0; e < b->n; e++) rows += frobenius_sq(P, H + (b->start + e * b->stride) * P);
    block_metrics bm = block_metrics_of(Hb, b, rows, d);
    free(Hb);
    return bm;
}

/* ---- heatmaps ------------------------------------------------------------------------ */

pool_kind pool_parse(const char *name)
{
    if (strcmp(name, "max") == 0) return POOL_MAX;
    if (strcmp(name, "mean") == 0) return POOL_MEAN;
    die_user("unknown pooling '%s' (expected max or mean)", name);
}

double *heatmap_pool(const double *A, size_t rows, size_t cols, size_t lda, int max_px, pool_kind k,
                     size_t *pr, size_t *pc, size_t *factor)
{
    if (max_px < 1) DIE("heatmap_pool: max_px = %d", max_px);
    size_t big = rows > cols ? rows : cols, f = (big + max_px - 1) / max_px;
    if (f < 1) f = 1;
    size_t R = (rows + f - 1) / f, C = (cols + f - 1) / f;
    double *img = xcalloc(R * C, sizeof(double));
    for (size_t i = 0; i < rows; i++) {
        double *line = img + (i / f) * C;
        const double *row = A + i * lda;
        for (size_t j = 0; j < cols; j++) {
            double v = fabs(row[j]);
            if (k == POOL_MAX) {
                if (v > line[j / f]) line[j / f] = v;
            } else {
                line[j / f] += v;
            }
        }
    }
    if (k == POOL_MEAN)
        for (size_t a = 0; a < R; a++)
            for (size_t b = 0; b < C; b++) {
                size_t h = (a + 1) * f <= rows ? f : rows - a * f, w = (b + 1) * f <= cols ? f : cols - b * f;
                img[a * C + b] /= (double)(h * w);
            }
    *pr = R;
    *pc = C;
    *factor = f;
    return img;
}

void heatmap_write(const char *path, const double *img, size_t pr, size_t pc, size_t factor, const char *note)
{
    outfile *f = outfile_open(path);
    FILE *fp = outfile_fp(f);
    fprintf(fp, "# %s\n# pixels %zu x %zu, each the pool of %zu x %zu entries\n", note ? note : "heatmap", pr, pc,
            factor, factor);
    for (size_t a = 0; a < pr; a++) {
        for (size_t b = 0; b < pc; b++) fprintf(fp, "%s%.6g", b ? "," : "", img[a * pc + b]);
        fputc('\n', fp);
    }
    outfile_commit(f);
}

void heatmap_write_bounds(const char *path, const partition *p, size_t offset, size_t factor)
{
    outfile *f = csv_open(path, "pixel,index,name");
    for (int k = 1; k < p->nblocks; k++) {
        const block *b = &p->b[k];
        if (b->stride != 1 || b->start < offset) continue;
        char name[96];
        snprintf(name, sizeof name, "%s", b->name);
        for (char *c = name; *c; c++) if (*c == ',') *c = ';';
        size_t idx = b->start - offset;
        csv_row(f, "%.4f,%zu,%s", (double)idx / factor - 0.5, idx, name);
    }
    csv_close(f);
}
