/* Tests of hessian/stream: the streamed block analysis against the full-H path
 * (hessian_full, then block_extract, mass_ratio, block_analyze, heatmap_pool) on
 * a hand-made matrix, the MLP and the tiny Transformer, three partitions each
 * (Algorithm 3, Algorithm 2, one with strided blocks), full and lower panels,
 * two panel widths, merged column ranges, and the user errors.
 *
 * Tolerances: "bitwise" means equal as doubles (NaN = NaN); "1e-12" is relative
 * (scalars and masses per entry, blocks against max|H|, eigenvalues against the
 * block's |λ|max, κ against κ·max(1, κ): κ's own sensitivity). Comparisons
 * across two H's (lower panels vs hessian_full(lower), lower vs full streams)
 * differ by H's own asymmetry (~4e-16 of max|H|), which is not the stream's:
 * there masses below 1e-16·‖H‖_F² (rows that are pure round-off, like the
 * Transformer's key bias) compare absolutely against that floor, heatmap pixels
 * below 1e-3 of the brightest against that floor, and block metrics other than
 * eigenvalues only for blocks with |λ|max >= 1e-3·max|H| (eigenvalues of the
 * others against 1e-3·max|H|). */
#include "check.h"
#include "hessian/stream.h"
#include "mlp/mlp.h"
#include "tinytransformer/tt.h"
#include "tests/fixtures.h"
#include <stdlib.h>

#define TOL 1e-12

static int same(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

static double rel(double a, double b)
{
    if (same(a, b)) return 0;
    double s = fabs(b);
    return s > 0 ? fabs(a - b) / s : fabs(a - b);
}

/* Relative with a floor under the reference's magnitude. */
static double relf(double a, double b, double floor)
{
    if (same(a, b)) return 0;
    double s = fmax(fabs(b), floor);
    return s > 0 ? fabs(a - b) / s : fabs(a - b);
}

/* ---- models ------------------------------------------------------------------------------ */

static model *mlp_small(void)
{
    mlp_config cfg = {.in = 12, .width = 6, .classes = 4, .act = ACT_TANH, .bias = 1, .loss = LOSS_XENT};
    return fixture_mlp(&cfg, 30, 5);
}


/* Strided blocks: the first matrix by columns (input neurons, stride = cols), a
 * norm gain (or the last vector) by entries, other matrices by rows, vectors whole. */
static partition *partition_strided(const model *m)
{
    partition *p = partition_new();
    int cols_done = 0, entries_done = 0;
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        split_kind s = ti->cols > 1 ? SPLIT_ROWS : SPLIT_WHOLE;
        if (ti->cols > 1 && !cols_done) {
            s = SPLIT_COLS;
            cols_done = 1;
        } else if (ti->cols == 1 && !entries_done && (ti->role == ROLE_NORM || t == m->ntensors - 1)) {
            s = SPLIT_ENTRIES;
            entries_done = 1;
        }
        partition_add_tensor(p, m, t, s);
    }
    return p;
}

/* ---- references from a full H ------------------------------------------------------------- */

static double *tensor_mass_of(const double *H, const model *m)
{
    int T = m->ntensors;
    size_t P = m->P;
    double *tm = xcalloc((size_t)T * T, sizeof(double));
    for (int a = 0; a < T; a++)
        for (int b = 0; b < T; b++) {
            const tensor_info *ta = &m->tensors[a], *tb = &m->tensors[b];
            double s = 0;
            for (size_t i = ta->offset; i < ta->offset + tensor_size(ta); i++)
                for (size_t j = tb->offset; j < tb->offset + tensor_size(tb); j++) s += H[i * P + j] * H[i * P + j];
            tm[a * T + b] = s;
        }
    return tm;
}

/* Hu[i][j] = H[min][max]: the symmetric matrix a lower-panel stream sees. */
static double *upper_symmetrized(const double *H, size_t P)
{
    double *U = xmalloc(P * P * sizeof(double));
    for (size_t i = 0; i < P; i++)
        for (size_t j = 0; j < P; j++) U[i * P + j] = i <= j ? H[i * P + j] : H[j * P + i];
    return U;
}

static int metrics_same(block_metrics a, block_metrics b)
{
    return a.n == b.n && same(a.s.lmin, b.s.lmin) && same(a.s.lmax, b.s.lmax) && same(a.s.absmin, b.s.absmin) &&
           same(a.s.absmax, b.s.absmax) && same(a.s.kappa, b.s.kappa) && a.s.nneg == b.s.nneg && same(a.tau, b.tau) &&
           same(a.fro2, b.fro2) && same(a.row_mass, b.row_mass) && same(a.sd.lmin, b.sd.lmin) &&
           same(a.sd.lmax, b.sd.lmax) && same(a.sd.absmin, b.sd.absmin) && same(a.sd.absmax, b.sd.absmax) &&
           same(a.sd.kappa, b.sd.kappa) && a.sd.nneg == b.sd.nneg && same(a.kappa_dh_svd, b.kappa_dh_svd);
}

static double kappa_err(double a, double b)
{
    if (same(a, b)) return 0;
    if (!isfinite(b) || !isfinite(a)) return (b > 1e15 && a > 1e15) ? 0 : INFINITY;   /* singular either way */
    return fabs(a - b) / (b * fmax(1, b));
}

static double spectrum_err(spectrum a, spectrum b, double floor)
{
    if (b.absmax < floor) {   /* a block of round-off: its eigenvalues against the floor only */
        double e = fmax(fmax(fabs(a.lmin - b.lmin), fabs(a.lmax - b.lmax)), fabs(a.absmax - b.absmax));
        return e / floor;
    }
    double sc = b.absmax > 0 ? b.absmax : 1;
    double e = fmax(fmax(fabs(a.lmin - b.lmin), fabs(a.lmax - b.lmax)), fmax(fabs(a.absmin - b.absmin), fabs(a.absmax - b.absmax))) / sc;
    e = fmax(e, kappa_err(a.kappa, b.kappa));
    /* a sign flip of an eigenvalue at round-off level is not an error */
    if (a.nneg != b.nneg && b.absmin > 1e-9 * sc) e = INFINITY;
    return e;
}

/* Every field of block_metrics, scaled as in the file's comment. */
/* floor: 0, or (across two H's) 1e-3·max|H| for eigenvalues and the mass floor for fro2. */
static double metrics_err(block_metrics a, block_metrics b, double eig_floor, double dmax, double mass_floor)
{
    if (a.n != b.n) return INFINITY;
    double e = fmax(spectrum_err(a.s, b.s, eig_floor), relf(a.fro2, b.fro2, mass_floor));
    if (isnan(b.kappa_dh_svd) != isnan(a.kappa_dh_svd)) return INFINITY;
    if (!isnan(b.kappa_dh_svd)) e = fmax(e, spectrum_err(a.sd, b.sd, eig_floor * dmax));
    if (b.s.absmax >= eig_floor) {
        e = fmax(e, fmax(rel(a.tau, b.tau), rel(a.row_mass, b.row_mass)));
        if (!isnan(b.kappa_dh_svd)) e = fmax(e, kappa_err(a.kappa_dh_svd, b.kappa_dh_svd));
    }
    return e;
}

typedef struct {
    int px;
    pool_kind pool;
} heat_cfg;

/* The stream against the full-H path on H. bitwise: blocks, row masses, block
 * metrics and the max heatmap are expected equal as doubles; the rest to tol.
 * cross: H came from another path than the stream's rows (floors, see the top). */
static void check_against_H(const hstream *s, const double *H, const model *m, const partition *p, const double *d,
                            heat_cfg hc, int bitwise, int cross, double tol, const char *label)
{
    size_t P = m->P;
    double maxH = max_abs(P * P, H), total = frobenius_sq(P * P, H);
    double mfloor = cross ? 1e-16 * total : 0, efloor = cross ? 1e-3 * maxH : 0, dmx = max_abs(P, d);
    double e_tot = rel(hstream_total_fro2(s), total);
    double e_ratio = rel(hstream_mass_ratio(s), mass_ratio(H, P, p));
    CHECK(e_tot <= tol && e_ratio <= tol, "%s: ||H||_F^2 rel %.3g, mass ratio rel %.3g (%.6f)", label, e_tot, e_ratio,
          hstream_mass_ratio(s));
    const double *rm = hstream_row_mass(s);
    double e_rows = 0;
    for (size_t i = 0; i < P; i++) e_rows = fmax(e_rows, relf(rm[i], frobenius_sq(P, H + i * P), mfloor));
    CHECK(bitwise ? e_rows == 0 : e_rows <= tol, "%s: row masses rel %.3g%s", label, e_rows, bitwise ? " (bitwise)" : "");
    double *tm = tensor_mass_of(H, m), e_tm = 0;
    const double *stm = hstream_tensor_mass(s);
    int T = m->ntensors;
    for (int q = 0; q < T * T; q++) e_tm = fmax(e_tm, relf(stm[q], tm[q], mfloor));
    CHECK(e_tm <= tol, "%s: tensor masses rel %.3g", label, e_tm);
    free(tm);
    double e_blk = 0, e_fro = 0, e_met = 0;
    int blk_same = 1, met_same = 1;
    for (int b = 0; b < p->nblocks; b++) {
        double *Hb = block_extract(H, P, &p->b[b]);
        const double *Sb = hstream_block(s, b);
        size_t n = p->b[b].n;
        for (size_t q = 0; q < n * n; q++) {
            if (!same(Sb[q], Hb[q])) blk_same = 0;
            e_blk = fmax(e_blk, fabs(Sb[q] - Hb[q]) / maxH);
        }
        e_fro = fmax(e_fro, relf(hstream_block_fro2(s, b), frobenius_sq(n * n, Hb), mfloor));
        block_metrics ref = block_analyze(H, P, &p->b[b], d), got = hstream_block_metrics(s, b, d);
        if (!metrics_same(got, ref)) met_same = 0;
        e_met = fmax(e_met, metrics_err(got, ref, efloor, dmx, mfloor));
        free(Hb);
    }
    CHECK(bitwise ? blk_same : e_blk <= tol, "%s: %d blocks H_bb, max diff %.3g of max|H|%s", label, p->nblocks, e_blk,
          bitwise ? " (bitwise)" : "");
    CHECK(e_fro <= tol, "%s: block masses rel %.3g", label, e_fro);
    CHECK(bitwise ? met_same : e_met <= tol, "%s: block_analyze, every field, err %.3g%s", label, e_met,
          bitwise ? " (bitwise)" : "");
    if (hc.px > 0) {
        size_t pr, pc, f, sr, sc, sf;
        double *ref = heatmap_pool(H, P, P, P, hc.px, hc.pool, &pr, &pc, &f);
        const double *img = hstream_heatmap(s, &sr, &sc, &sf);
        CHECK(img && sr == pr && sc == pc && sf == f, "%s: heatmap %zux%zu factor %zu (ref %zux%zu, %zu)", label, sr, sc, sf,
              pr, pc, f);
        double e_h = 0;
        int hsame = 1;
        double hfloor = cross ? 1e-3 * max_abs(pr * pc, ref) : 0;
        if (img && sr == pr && sc == pc)
            for (size_t q = 0; q < pr * pc; q++) {
                if (!same(img[q], ref[q])) hsame = 0;
                e_h = fmax(e_h, relf(img[q], ref[q], hfloor));
            }
        int want_bitwise = bitwise && hc.pool == POOL_MAX;
        CHECK(want_bitwise ? hsame : e_h <= tol, "%s: %s heatmap rel %.3g%s", label, hc.pool == POOL_MAX ? "max" : "mean",
              e_h, want_bitwise ? " (bitwise)" : "");
        free(ref);
    }
}

/* Largest differences between two streams' results, by kind (0 = bitwise). */
typedef struct {
    double scalars, blocks, rows, tensors, heat;
} diffs;

static double dmax(diffs d) { return fmax(fmax(fmax(d.scalars, d.blocks), fmax(d.rows, d.tensors)), d.heat); }

static diffs stream_diffs_x(const hstream *a, const hstream *b, const model *m, const partition *p, int cross)
{
    diffs r = {0, 0, 0, 0, 0};
    size_t P = m->P;
    double mfloor = cross ? 1e-16 * hstream_total_fro2(b) : 0;
    r.scalars = fmax(rel(hstream_total_fro2(a), hstream_total_fro2(b)), rel(hstream_mass_ratio(a), hstream_mass_ratio(b)));
    double mx = 0;
    for (int k = 0; k < p->nblocks; k++) {
        r.scalars = fmax(r.scalars, relf(hstream_block_fro2(a, k), hstream_block_fro2(b, k), mfloor));
        const double *A = hstream_block(a, k), *B = hstream_block(b, k);
        if (!A || !B) continue;
        size_t n = p->b[k].n;
        for (size_t q = 0; q < n * n; q++) mx = fmax(mx, fabs(B[q]));
    }
    for (int k = 0; k < p->nblocks; k++) {
        const double *A = hstream_block(a, k), *B = hstream_block(b, k);
        if (!A || !B) continue;
        size_t n = p->b[k].n;
        for (size_t q = 0; q < n * n; q++)
            if (!same(A[q], B[q])) r.blocks = fmax(r.blocks, mx > 0 ? fabs(A[q] - B[q]) / mx : INFINITY);
    }
    const double *ra = hstream_row_mass(a), *rb = hstream_row_mass(b);
    for (size_t i = 0; i < P; i++) r.rows = fmax(r.rows, relf(ra[i], rb[i], mfloor));
    const double *ta = hstream_tensor_mass(a), *tb = hstream_tensor_mass(b);
    for (int q = 0; q < m->ntensors * m->ntensors; q++) r.tensors = fmax(r.tensors, relf(ta[q], tb[q], mfloor));
    size_t r1, c1, f1, r2, c2, f2;
    const double *ha = hstream_heatmap(a, &r1, &c1, &f1), *hb = hstream_heatmap(b, &r2, &c2, &f2);
    if (ha && hb && r1 == r2 && c1 == c2) {
        double hfloor = cross ? 1e-3 * max_abs(r2 * c2, hb) : 0;
        for (size_t q = 0; q < r1 * c1; q++) r.heat = fmax(r.heat, relf(ha[q], hb[q], hfloor));
    }
    else if (ha || hb)
        r.heat = INFINITY;
    return r;
}

/* A stream fed rows j0..j1-1 of H in panels of `panel` (lower: entries below the
 * panel's first column poisoned with NaN; descending: last panel first). */
static diffs stream_diffs(const hstream *a, const hstream *b, const model *m, const partition *p)
{
    return stream_diffs_x(a, b, m, p, 0);
}

static hstream *feed(const model *m, const hstream_opts *o, const double *H, size_t j0, size_t j1, int panel, int lower,
                     int descending)
{
    size_t P = m->P;
    hstream *s = hstream_new(m, o);
    double *buf = xmalloc((size_t)panel * P * sizeof(double));
    size_t np = (j1 - j0 + panel - 1) / panel;
    for (size_t q = 0; q < np; q++) {
        size_t c = j0 + (descending ? np - 1 - q : q) * panel;
        int k = (int)(j1 - c < (size_t)panel ? j1 - c : (size_t)panel);
        memcpy(buf, H + c * P, (size_t)k * P * sizeof(double));
        if (lower)
            for (int d = 0; d < k; d++)
                for (size_t j = 0; j < c; j++) buf[d * P + j] = NAN;
        hstream_add(s, c, k, buf, lower);
    }
    free(buf);
    return s;
}

static hstream *run(model *m, const hstream_opts *so, int panel, int use_hess_cols, int lower)
{
    hstream *s = hstream_new(m, so);
    hessian_opts o = hessian_defaults();
    o.panel = panel;
    o.use_hess_cols = use_hess_cols;
    o.symmetric = lower;
    hstream_run(s, m, &o);
    return s;
}

/* ---- a hand-made matrix ------------------------------------------------------------------ */

static void test_by_hand(void)
{
    /* the 5×5 H of test_hessian: tensors {0,1} and {2,3,4}; blocks {0,1}, {2,4} (strided), {3} */
    double H[25] = {
        2, 1, 0, 0, 0,
        1, 2, 0.5, 0, 0,
        0, 0.5, 1, 0, 3,
        0, 0, 0, -1, 0,
        0, 0, 3, 0, 1,
    };
    tensor_info ti[2] = {{"a", ROLE_MATRIX, 0, 1, 2, 1, -1}, {"b", ROLE_MATRIX, 2, 1, 3, 1, -1}};
    model m = {0};
    m.kind = "by hand";
    m.P = 5;
    m.ntensors = 2;
    m.tensors = ti;
    partition *p = partition_new();
    partition_add(p, 0, 2, 1, 0, "first");
    partition_add(p, 2, 2, 2, 1, "strided");
    partition_add(p, 3, 1, 1, 1, "single");
    for (int lower = 0; lower <= 1; lower++)
        for (int pool = POOL_MAX; pool <= POOL_MEAN; pool++) {
            hstream_opts o = {p, 1, 2, (pool_kind)pool};
            hstream *s = feed(&m, &o, H, 0, 5, 2, lower, 0);
            const char *kind = lower ? "lower" : "full";
            double total = 4 + 1 + 1 + 4 + 0.25 + 0.25 + 1 + 9 + 1 + 9 + 1, inside = 4 + 1 + 1 + 4 + 1 + 9 + 9 + 1 + 1;
            CHECK_CLOSE(hstream_total_fro2(s), total, 1e-15, "by hand: ||H||_F^2");
            CHECK_CLOSE(hstream_mass_ratio(s), inside / total, 1e-15, "by hand: mass ratio");
            const double *b1 = hstream_block(s, 1);
            CHECK(b1[0] == 1 && b1[1] == 3 && b1[2] == 3 && b1[3] == 1, "%s: strided block {2,4} = [[1,3],[3,1]]", kind);
            const double *tm = hstream_tensor_mass(s);
            CHECK(tm[0] == 10 && tm[1] == 0.25 && tm[2] == 0.25 && tm[3] == 1 + 9 + 1 + 9 + 1 + 0.25 * 0,
                  "%s: tensor masses %g %g %g %g", kind, tm[0], tm[1], tm[2], tm[3]);
            const double *rm = hstream_row_mass(s);
            CHECK(rm[1] == 1 + 4 + 0.25 && rm[2] == 0.25 + 1 + 9, "%s: row masses %g %g", kind, rm[1], rm[2]);
            size_t pr, pc, f;
            const double *img = hstream_heatmap(s, &pr, &pc, &f);
            CHECK(pr == 2 && pc == 2 && f == 3, "%s: heatmap 2x2, factor 3", kind);
            if (pool == POOL_MAX)
                CHECK(img[0] == 2 && img[1] == 3 && img[2] == 3 && img[3] == 1, "%s: max pool %g %g %g %g", kind,
                      img[0], img[1], img[2], img[3]);
            else
                CHECK(img[0] == (2 + 1 + 1 + 2 + 0.5 + 0.5 + 1) / 9.0 && img[1] == 3.0 / 6 && img[2] == 3.0 / 6 &&
                          img[3] == 2.0 / 4,
                      "%s: mean pool, edge cells by their own size: %g %g %g %g", kind, img[0], img[1], img[2], img[3]);
            block_metrics bm = hstream_block_metrics(s, 0, NULL), ref = block_analyze(H, 5, &p->b[0], NULL);
            CHECK(metrics_same(bm, ref), "%s: block metrics == block_analyze", kind);
            hstream_free(s);
        }
    partition_free(p);
}

/* ---- the models --------------------------------------------------------------------------- */

static void test_model(model *m, const char *name)
{
    size_t P = m->P;
    const int w1 = 7, w2 = 32;
    hessian_opts o = hessian_defaults();
    o.panel = w1;
    o.symmetric = 0;
    double *H = hessian_full(m, &o);
    o.symmetric = 1;
    double *Hl = hessian_full(m, &o);
    double *Hu = upper_symmetrized(Hl, P);
    double maxH = max_abs(P * P, H);
    double *d = xmalloc(P * sizeof(double));
    gsl_rng *r = rng_new(77);
    for (size_t i = 0; i < P; i++) d[i] = rng_uniform_in(r, 0.5, 20);
    rng_free(r);
    partition *parts[3] = {partition_alg3(m, 0), partition_alg2(m), partition_strided(m)};
    const char *pname[3] = {"Algorithm 3", "Algorithm 2", "strided"};
    for (int pi = 0; pi < 3; pi++) {
        partition *p = parts[pi];
        int strided = 0;
        for (int b = 0; b < p->nblocks; b++) strided |= p->b[b].stride > 1;
        if (pi == 2) CHECK(strided, "%s: the strided partition has strided blocks", name);
        for (int pool = POOL_MAX; pool <= POOL_MEAN; pool++) {
            heat_cfg hc = {pi == 1 && pool == POOL_MEAN ? 1000000 : 9, (pool_kind)pool};   /* one run unpooled (f = 1) */
            hstream_opts so = {p, 1, hc.px, hc.pool};
            char label[160];
            /* full panels from hess_cols, the same panels as H */
            hstream *sf = run(m, &so, w1, 1, 0);
            snprintf(label, sizeof label, "%s %s %s-pool, full panels %d", name, pname[pi], pool == POOL_MAX ? "max" : "mean", w1);
            check_against_H(sf, H, m, p, d, hc, 1, 0, TOL, label);
            /* lower panels: bitwise against the matrix they define, to 1e-12 against hessian_full's */
            hstream *sl = run(m, &so, w1, 1, 1);
            snprintf(label, sizeof label, "%s %s %s-pool, lower panels %d vs their upper triangle", name, pname[pi],
                     pool == POOL_MAX ? "max" : "mean", w1);
            check_against_H(sl, Hu, m, p, d, hc, 1, 0, TOL, label);
            snprintf(label, sizeof label, "%s %s %s-pool, lower panels %d vs hessian_full(lower)", name, pname[pi],
                     pool == POOL_MAX ? "max" : "mean", w1);
            check_against_H(sl, Hl, m, p, d, hc, 0, 1, TOL, label);
            diffs lf = stream_diffs_x(sl, sf, m, p, 1);
            CHECK(dmax(lf) <= TOL, "%s %s: lower vs full panels: scalars %.3g blocks %.3g rows %.3g tensors %.3g heat %.3g",
                  name, pname[pi], lf.scalars, lf.blocks, lf.rows, lf.tensors, lf.heat);
            /* panel width: the same rows in panels of w2 give bitwise the same results */
            hstream *sf2 = feed(m, &so, H, 0, P, w2, 0, 0), *sl2 = feed(m, &so, Hu, 0, P, w2, 1, 0);
            diffs a = stream_diffs(sf2, sf, m, p), b = stream_diffs(sl2, sl, m, p);
            CHECK(dmax(a) == 0 && dmax(b) == 0, "%s %s: same rows in panels of %d vs %d: bitwise (full %.3g, lower %.3g)",
                  name, pname[pi], w2, w1, dmax(a), dmax(b));
            hstream_free(sf2);
            hstream_free(sl2);
            if (pool == POOL_MEAN) {
                /* the model run with panels of w2 (its own round-off differs) */
                sf2 = run(m, &so, w2, 1, 0);
                sl2 = run(m, &so, w2, 1, 1);
                snprintf(label, sizeof label, "%s %s, full panels %d from the model", name, pname[pi], w2);
                check_against_H(sf2, H, m, p, d, hc, 0, 1, TOL, label);
                a = stream_diffs_x(sf2, sf, m, p, 1);
                b = stream_diffs_x(sl2, sl, m, p, 1);
                CHECK(dmax(a) <= TOL && dmax(b) <= TOL, "%s %s: model panels of %d vs %d: full %.3g (%s), lower %.3g (%s)",
                      name, pname[pi], w2, w1, dmax(a), dmax(a) == 0 ? "bitwise" : "not bitwise", dmax(b),
                      dmax(b) == 0 ? "bitwise" : "not bitwise");
                printf("# %s %s: model panels of %d vs %d: full %s (%.3g), lower %s (%.3g)\n", name, pname[pi], w2, w1,
                       dmax(a) == 0 ? "bitwise" : "not bitwise", dmax(a), dmax(b) == 0 ? "bitwise" : "not bitwise", dmax(b));
                hstream_free(sf2);
                hstream_free(sl2);
            }
            hstream_free(sf);
            hstream_free(sl);
        }
    }
    /* accuracy: the stream's regrouped sums against long double (the full-H path's flat
     * sequential sum over P² terms is the less accurate of the two at large P) */
    {
        hstream_opts so = {parts[0], 0, 0, POOL_MAX};
        hstream *a = feed(m, &so, H, 0, P, w1, 0, 0), *b = feed(m, &so, Hu, 0, P, w1, 1, 0);
        long double tot = 0, totu = 0;
        for (size_t q = 0; q < P * P; q++) {
            tot += (long double)H[q] * H[q];
            totu += (long double)Hu[q] * Hu[q];
        }
        double ea = rel(hstream_total_fro2(a), (double)tot), eb = rel(hstream_total_fro2(b), (double)totu);
        CHECK(ea <= 1e-14 && eb <= 1e-14, "%s: ||H||_F^2 against long double: full panels %.2e, lower %.2e; "
              "frobenius_sq of all of H %.2e", name, ea, eb, rel(frobenius_sq(P * P, H), (double)tot));
        hstream_free(a);
        hstream_free(b);
    }
    /* the hvp path (unit directions through the R-operator) */
    {
        heat_cfg hc = {9, POOL_MEAN};
        hstream_opts so = {parts[0], 1, hc.px, hc.pool};
        hstream *sh = run(m, &so, w1, 0, 0);
        char label[128];
        snprintf(label, sizeof label, "%s Algorithm 3, hvp panels", name);
        check_against_H(sh, H, m, parts[0], d, hc, 0, 1, TOL, label);
        hstream_free(sh);
    }
    /* an exactly symmetric H: lower and full panels agree bitwise except for regrouped sums */
    {
        double *S = xmalloc(P * P * sizeof(double));
        for (size_t i = 0; i < P; i++)
            for (size_t j = 0; j < P; j++) S[i * P + j] = (H[i * P + j] + H[j * P + i]) / 2;
        for (int pool = POOL_MAX; pool <= POOL_MEAN; pool++) {
            hstream_opts so = {parts[2], 1, 9, (pool_kind)pool};
            hstream *a = feed(m, &so, S, 0, P, w1, 0, 0), *b = feed(m, &so, S, 0, P, w1, 1, 0);
            diffs df = stream_diffs(b, a, m, parts[2]);
            CHECK(df.blocks == 0 && df.rows == 0 && (pool == POOL_MEAN || df.heat == 0),
                  "%s symmetric H, %s-pool: lower == full panels bitwise on blocks, row masses%s", name,
                  pool == POOL_MAX ? "max" : "mean", pool == POOL_MAX ? ", heatmap" : "");
            CHECK(dmax(df) <= TOL, "%s symmetric H: lower vs full: scalars %.3g tensors %.3g heat %.3g", name, df.scalars,
                  df.tensors, df.heat);
            hstream_free(a);
            hstream_free(b);
        }
        free(S);
    }
    /* merges: column ranges fed separately equal one stream fed everything */
    {
        const partition *p = parts[2];
        size_t f = (P + 8) / 9;
        size_t splits[3] = {P / 3 + 1, f * 2, m->tensors[1].offset + 1};   /* anywhere, pixel-row boundary, mid-tensor */
        for (int lower = 0; lower <= 1; lower++)
            for (int pool = POOL_MAX; pool <= POOL_MEAN; pool++) {
                hstream_opts so = {p, 1, 9, (pool_kind)pool};
                const double *Hx = lower ? Hu : H;
                hstream *all = feed(m, &so, Hx, 0, P, w1, lower, 0);
                const char *kind = lower ? "lower" : "full";
                int ok = 1;
                double worst_rows = 0;
                for (int q = 0; q < 3; q++) {
                    size_t s1 = splits[q];
                    hstream *A = feed(m, &so, Hx, 0, s1, w1, lower, 0), *B = feed(m, &so, Hx, s1, P, w1, lower, 0);
                    hstream *B2 = feed(m, &so, Hx, s1, P, w1, lower, 0), *A2 = feed(m, &so, Hx, 0, s1, w1, lower, 0);
                    hstream_merge(A, B);    /* earlier range += later */
                    hstream_merge(B2, A2);  /* later += earlier */
                    diffs d1 = stream_diffs(A, all, m, p), d2 = stream_diffs(B2, all, m, p);
                    if (!lower) {
                        ok &= dmax(d1) == 0 && dmax(d2) == 0;
                    } else {
                        ok &= d1.scalars <= TOL && d1.blocks == 0 && d1.tensors == 0 && d1.heat == 0 && d2.blocks == 0 &&
                              d2.tensors == 0 && d2.heat == 0;
                        worst_rows = fmax(worst_rows, fmax(d1.rows, d2.rows));
                    }
                    hstream_free(A);
                    hstream_free(B);
                    hstream_free(A2);
                    hstream_free(B2);
                }
                CHECK(ok, "%s %s panels, %s-pool: two ranges merged either way == one stream, split anywhere, at a "
                      "pixel row, inside a tensor: %s", name, kind, pool == POOL_MAX ? "max" : "mean",
                      lower ? "bitwise except row masses" : "bitwise");
                if (lower)
                    CHECK(worst_rows <= 1e-14, "%s lower panels: merged row masses rel %.3g (not bitwise)", name, worst_rows);
                /* three ranges merged with a gap first: X += Z leaves Z's rows pending, then X += Y */
                size_t m1 = P / 4 + 3, m2 = P / 2 + 5;
                hstream *X = feed(m, &so, Hx, 0, m1, w1, lower, 0), *Y = feed(m, &so, Hx, m1, m2, 5, lower, 0),
                        *Z = feed(m, &so, Hx, m2, P, w1, lower, 1);   /* Z's panels in descending order */
                hstream_merge(X, Z);
                CHECK(hstream_rows_fed(X) == m1 + P - m2, "rows fed after a merge: %zu", hstream_rows_fed(X));
                hstream_merge(X, Y);
                diffs d3 = stream_diffs(X, all, m, p);
                CHECK(lower ? (d3.blocks == 0 && d3.tensors == 0 && d3.heat == 0 && dmax(d3) <= TOL) : dmax(d3) == 0,
                      "%s %s panels: three ranges, merged with a gap, one fed backwards: %s (%.3g)", name, kind,
                      lower ? "bitwise except row masses" : "bitwise", dmax(d3));
                hstream_free(X);
                hstream_free(Y);
                hstream_free(Z);
                hstream_free(all);
            }
        /* hstream_run_cols on two ranges (split at a panel boundary) merged == hstream_run */
        hstream_opts so = {p, 1, 9, POOL_MEAN};
        hstream *all = run(m, &so, w1, 1, 0);
        hstream *A = hstream_new(m, &so), *B = hstream_new(m, &so);
        hessian_opts ho = hessian_defaults();
        ho.panel = w1;
        ho.symmetric = 0;
        size_t cut = (size_t)w1 * (P / w1 / 2);
        hstream_run_cols(A, m, 0, cut, &ho);
        hstream_run_cols(B, m, cut, P, &ho);
        hstream_merge(B, A);
        diffs dr = stream_diffs(B, all, m, p);
        CHECK(dmax(dr) == 0, "%s: hstream_run_cols 0..%zu and %zu..%zu merged == hstream_run, bitwise (%.3g)", name, cut,
              cut, P, dmax(dr));
        hstream_free(A);
        hstream_free(B);
        hstream_free(all);
    }
    /* blocks not kept: the same masses from the in-block row sums */
    for (int lower = 0; lower <= 1; lower++) {
        hstream_opts keep = {parts[0], 1, 0, POOL_MAX}, nokeep = {parts[0], 0, 0, POOL_MAX};
        const double *Hx = lower ? Hu : H;
        hstream *a = feed(m, &keep, Hx, 0, P, w1, lower, 0), *b = feed(m, &nokeep, Hx, 0, P, w1, lower, 0);
        double e = rel(hstream_mass_ratio(b), mass_ratio(Hx, P, parts[0]));
        for (int k = 0; k < parts[0]->nblocks; k++) e = fmax(e, rel(hstream_block_fro2(b, k), hstream_block_fro2(a, k)));
        CHECK(e <= TOL && hstream_block(b, 0) == NULL, "%s %s panels, blocks not kept: block masses and mass ratio rel %.3g",
              name, lower ? "lower" : "full", e);
        hstream_free(a);
        hstream_free(b);
    }
    (void)maxH;
    for (int pi = 0; pi < 3; pi++) partition_free(parts[pi]);
    free(d);
    free(H);
    free(Hl);
    free(Hu);
}

/* ---- user errors and memory ---------------------------------------------------------------- */

static void test_errors(void)
{
    model *m = mlp_small();
    size_t P = m->P;
    partition *p = partition_alg2(m);
    hstream_opts so = {p, 0, 4, POOL_MEAN};
    double *rows = xcalloc(4 * P, sizeof(double));
    hstream *s = hstream_new(m, &so);
    hstream_add(s, 0, 4, rows, 0);
    EXPECT_USER_ERROR(hstream_add(s, 2, 4, rows, 0), "row 2 of H fed twice");
    EXPECT_USER_ERROR(hstream_add(s, P - 2, 4, rows, 0), "outside");
    EXPECT_USER_ERROR(hstream_add(s, 8, 4, rows, 1), "one kind of panel");
    EXPECT_USER_ERROR(hstream_mass_ratio(s), "4 were fed");
    EXPECT_USER_ERROR(hstream_block_metrics(s, 0, NULL), "4 were fed");
    hstream *t = hstream_new(m, &so);
    hstream_add(t, 3, 2, rows, 0);
    EXPECT_USER_ERROR(hstream_merge(s, t), "row 3 of H is in both");
    hstream_free(t);
    partition *q = partition_alg3(m, 0);
    hstream_opts so2 = {q, 0, 4, POOL_MEAN};
    hstream *t2 = hstream_new(m, &so2);
    EXPECT_USER_ERROR(hstream_merge(s, t2), "different partitions");
    hstream_free(t2);
    for (size_t c = 4; c < P; c += 4) hstream_add(s, c, (int)(P - c < 4 ? P - c : 4), rows, 0);
    CHECK(hstream_mass_ratio(s) == 1.0 && hstream_total_fro2(s) == 0, "H = 0: mass ratio 1, like mass_ratio");
    EXPECT_USER_ERROR(hstream_block_metrics(s, 0, NULL), "keep_blocks");
    hstream_free(s);
    partition *bad = partition_new();
    partition_add(bad, 0, P - 1, 1, 0, "short");
    hstream_opts sb = {bad, 1, 0, POOL_MAX};
    EXPECT_USER_ERROR(hstream_new(m, &sb), "hstream partition");
    partition_free(bad);
    partition_free(q);
    partition_free(p);
    free(rows);
    model_free(m);
}

static void test_memory(void)
{
    /* A P = 100,000 model (two tensors, no data): the stream without kept blocks
     * holds O(P), a fraction of one 128-column panel, never P². */
    tensor_info ti[2] = {{"w", ROLE_MATRIX, 0, 1000, 99, 1, -1}, {"b", ROLE_BIAS, 99000, 1000, 1, 1, -1}};
    model m = {0};
    m.P = 100000;
    m.ntensors = 2;
    m.tensors = ti;
    partition *p = partition_new();
    partition_add_tensor(p, &m, 0, SPLIT_ROWS);
    partition_add_tensor(p, &m, 1, SPLIT_WHOLE);
    hstream_opts o = {p, 1, 512, POOL_MEAN};
    double with = hstream_bytes(&m, &o, 128), panel = 8.0 * 128 * 1e5, blocks = 8.0 * (1000.0 * 99 * 99 + 1000.0 * 1000);
    o.keep_blocks = 0;
    double without = hstream_bytes(&m, &o, 0);
    printf("# P = 100000: stream %.3f GB without blocks, %.3f GB with blocks and a panel (H: %.0f GB)\n", without / 1e9,
           with / 1e9, 8e10 / 1e9);
    CHECK(without < 200.0 * 1e5, "O(P) without blocks: %.0f bytes", without);
    CHECK(fabs(with - without - panel - blocks) < 1, "blocks Σ n_b² and one panel on top: %.0f", with - without);
    partition_free(p);
}

int main(void)
{
    core_quiet = 1;
    test_by_hand();
    model *m = mlp_small();
    printf("# MLP P = %zu\n", m->P);
    test_model(m, "MLP");
    model_free(m);
    m = fixture_tt_markov();
    printf("# Transformer P = %zu\n", m->P);
    test_model(m, "Transformer");
    model_free(m);
    test_errors();
    test_memory();
    return check_summary();
}
