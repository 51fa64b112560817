/* Tests of hessian/: the engine on a quadratic model whose Hessian is a known
 * matrix (every path: hvp, hess_cols, the symmetric path, column ranges written
 * and merged), panel-width independence and symmetry on the MLP, and the block
 * metrics, mass ratios, κ(D H) and heatmaps on hand-made matrices. */
#include "check.h"
#include "hessian/hessian.h"
#include "mlp/mlp.h"
#include "tests/fixtures.h"
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[256];

/* ---- a quadratic test model: L(w) = ½ wᵀ A w, H = A ------------------------------------ */
typedef struct { double *A; } quad_impl;

static double quad_loss(model *m)
{
    const double *A = ((quad_impl *)m->impl)->A, *w = m->params;
    double s = 0;
    for (size_t i = 0; i < m->P; i++)
        for (size_t j = 0; j < m->P; j++) s += 0.5 * w[i] * A[i * m->P + j] * w[j];
    return s;
}

static double quad_grad(model *m, double *g)
{
    const double *A = ((quad_impl *)m->impl)->A;
    for (size_t i = 0; i < m->P; i++) {
        g[i] = 0;
        for (size_t j = 0; j < m->P; j++) g[i] += A[i * m->P + j] * m->params[j];
    }
    return quad_loss(m);
}

static void quad_hvp(model *m, const double *V, double *HV, int k)
{
    const double *A = ((quad_impl *)m->impl)->A;
    size_t P = m->P;
    for (int d = 0; d < k; d++)
        for (size_t i = 0; i < P; i++) {
            double s = 0;
            for (size_t j = 0; j < P; j++) s += A[i * P + j] * V[d * P + j];
            HV[d * P + i] = s;
        }
}

static void quad_cols(model *m, size_t j0, int k, double *out)
{
    const double *A = ((quad_impl *)m->impl)->A;
    for (int d = 0; d < k; d++)
        for (size_t i = 0; i < m->P; i++) out[d * m->P + i] = A[i * m->P + j0 + d];
}

/* Writes only rows >= j0 (the rest is poisoned to prove the engine mirrors it). */
static void quad_lower(model *m, size_t j0, int k, double *out)
{
    const double *A = ((quad_impl *)m->impl)->A;
    for (int d = 0; d < k; d++)
        for (size_t i = 0; i < m->P; i++) out[d * m->P + i] = i >= j0 ? A[i * m->P + j0 + d] : NAN;
}

static void quad_destroy(model *m)
{
    free(((quad_impl *)m->impl)->A);
    free(m->impl);
    free(m->tensors);
    free(m->params);
    free(m);
}

/* P = 15 + 22 = 37: a 5×3 matrix tensor and a 22-vector; A symmetric random. */
static model *quad_model(int with_cols)
{
    model *m = xcalloc(1, sizeof *m);
    m->kind = "quadratic";
    m->P = 37;
    m->ntensors = 2;
    m->tensors = xcalloc(2, sizeof(tensor_info));
    tensor_info t0 = {"a", ROLE_MATRIX, 0, 5, 3, 1, -1}, t1 = {"b", ROLE_BIAS, 15, 22, 1, 1, -1};
    m->tensors[0] = t0;
    m->tensors[1] = t1;
    m->params = xcalloc(m->P, sizeof(double));
    quad_impl *q = xcalloc(1, sizeof *q);
    q->A = xmalloc(m->P * m->P * sizeof(double));
    gsl_rng *r = rng_new(3);
    for (size_t i = 0; i < m->P; i++)
        for (size_t j = 0; j <= i; j++) q->A[i * m->P + j] = q->A[j * m->P + i] = rng_gaussian(r, 1.0);
    rng_free(r);
    m->impl = q;
    m->loss = quad_loss;
    m->grad = quad_grad;
    m->hvp = quad_hvp;
    m->hess_cols = with_cols ? quad_cols : NULL;
    m->destroy = quad_destroy;
    model_check_tensors(m);
    return m;
}

static double max_diff(size_t n, const double *a, const double *b)
{
    double d = 0;
    for (size_t i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i]));
    return d;
}

static void test_engine_on_quadratic(void)
{
    int panels[] = {1, 7, 37, 100};
    for (int wc = 0; wc <= 1; wc++) {
        model *m = quad_model(wc);
        const double *A = ((quad_impl *)m->impl)->A;
        size_t P = m->P;
        for (int p = 0; p < 4; p++) {
            hessian_opts o = hessian_defaults();
            o.panel = panels[p];
            double *H = hessian_full(m, &o);
            CHECK(max_diff(P * P, H, A) == 0, "%s, panel %d: H == A exactly", wc ? "hess_cols" : "hvp", panels[p]);
            free(H);
            o.symmetric = 1;
            m->hess_cols_lower = quad_lower;
            H = hessian_full(m, &o);
            m->hess_cols_lower = NULL;
            CHECK(max_diff(P * P, H, A) == 0, "symmetric path, panel %d: H == A (mirrored)", panels[p]);
            free(H);
        }
        double *cols = xmalloc(10 * P * sizeof(double));
        hessian_opts o = hessian_defaults();
        o.panel = 3;
        hessian_cols(m, 20, 30, &o, cols);
        CHECK(max_diff(10 * P, cols, A + 20 * P) == 0, "column range 20..30 == rows 20..30 of A");
        free(cols);
        model_free(m);
    }
}

static void test_column_files(void)
{
    model *m = quad_model(0);
    const double *A = ((quad_impl *)m->impl)->A;
    size_t P = m->P;
    char *p1 = path_join(tmpdir, "c0.npy"), *p2 = path_join(tmpdir, "c1.npy"), *p3 = path_join(tmpdir, "c2.npy");
    hessian_opts o = hessian_defaults();
    o.panel = 4;
    hessian_write_cols(m, 0, 13, &o, p1);   /* as two separate runs would */
    hessian_write_cols(m, 13, 37, &o, p2);
    const char *both[] = {p1, p2};
    size_t Pm = 0;
    double *H = hessian_merge(2, both, &Pm);
    CHECK(Pm == P && max_diff(P * P, H, A) == 0, "two column ranges merged == A");
    free(H);
    const char *one[] = {p1};
    EXPECT_USER_ERROR(hessian_merge(1, one, &Pm), "cover 13 of 37");
    const char *twice[] = {p1, p2, p1};
    EXPECT_USER_ERROR(hessian_merge(3, twice, &Pm), "overlapping");
    /* any order: sorted by the ranges the .range files record */
    const char *swapped[] = {p2, p1};
    H = hessian_merge(2, swapped, &Pm);
    CHECK(Pm == P && max_diff(P * P, H, A) == 0, "parts given out of order merged == A");
    free(H);
    char *q1 = path_join(tmpdir, "H_cols_0_13.npy"), *q2 = path_join(tmpdir, "H_cols_13_37.npy");
    char *q3 = path_join(tmpdir, "H_cols_10_20.npy"), *q4 = path_join(tmpdir, "H_cols_20_37.npy");
    double *rows = xmalloc(37 * P * sizeof(double));
    memcpy(rows, A, 37 * P * sizeof(double));
    size_t sh[2] = {13, P};
    npy_write(q1, rows, 2, sh);            /* named like mlp_hessian --cols, no .range file */
    sh[0] = 24;
    npy_write(q2, rows + 13 * P, 2, sh);
    sh[0] = 10;
    npy_write(q3, rows + 10 * P, 2, sh);
    sh[0] = 17;
    npy_write(q4, rows + 20 * P, 2, sh);
    const char *named[] = {q2, q1};
    H = hessian_merge(2, named, &Pm);
    CHECK(Pm == P && max_diff(P * P, H, A) == 0, "parts named H_cols_<j0>_<j1>.npy, out of order, merged == A");
    free(H);
    const char *gap[] = {q1, q4};
    EXPECT_USER_ERROR(hessian_merge(2, gap, &Pm), "columns 13..20 are in no file");
    const char *lap[] = {q4, q3, q1};
    EXPECT_USER_ERROR(hessian_merge(3, lap, &Pm), "overlapping");
    const char *nostart[] = {q2};
    EXPECT_USER_ERROR(hessian_merge(1, nostart, &Pm), "columns 0..13 are in no file");
    /* a file whose rows do not match its name */
    sh[0] = 12;
    npy_write(q1, rows, 2, sh);
    const char *short1[] = {q1, q2};
    EXPECT_USER_ERROR(hessian_merge(2, short1, &Pm), "holds 12 rows but its range 0..13 needs 13");
    /* a .range file that disagrees with the name, or is malformed */
    char *side = path_join(tmpdir, "H_cols_13_37.npy.range");
    FILE *fp = fopen(side, "w");
    fputs("columns 0 24 of 37\n", fp);
    fclose(fp);
    EXPECT_USER_ERROR(hessian_merge(2, named, &Pm), "its .range file says columns 0..24 but its name says 13..37");
    fp = fopen(side, "w");
    fputs("columns 13 37 of 37 junk\n", fp);
    fclose(fp);
    EXPECT_USER_ERROR(hessian_merge(2, named, &Pm), "not one line");
    fp = fopen(side, "w");
    fputs("columns 13 37 of 38\n", fp);
    fclose(fp);
    sh[0] = 13;
    npy_write(q1, rows, 2, sh);
    EXPECT_USER_ERROR(hessian_merge(2, named, &Pm), "says P = 38");
    double z[6] = {0};
    size_t s2[2] = {2, 3};
    npy_write(p3, z, 2, s2);
    const char *anon[] = {p1, p3};
    EXPECT_USER_ERROR(hessian_merge(2, anon, &Pm), "cannot tell which columns");
    char *q5 = path_join(tmpdir, "other.npy"), *q5r = path_join(tmpdir, "other.npy.range");
    double *z24 = xcalloc(24 * 3, sizeof(double));
    s2[0] = 24;
    npy_write(q5, z24, 2, s2);
    free(z24);
    fp = fopen(q5r, "w");
    fputs("columns 13 37 of 3\n", fp);
    fclose(fp);
    free(q5r);
    const char *mixed[] = {p1, q5};
    EXPECT_USER_ERROR(hessian_merge(2, mixed, &Pm), "different models");
    size_t s1[1] = {6};
    npy_write(q5, z, 1, s1);
    EXPECT_USER_ERROR(hessian_merge(2, mixed, &Pm), "2-D");
    free(rows);
    free(side);
    free(q1);
    free(q2);
    free(q3);
    free(q4);
    free(q5);
    EXPECT_USER_ERROR(hessian_write_cols(m, 30, 40, &o, p3), "not inside");
    free(p1);
    free(p2);
    free(p3);
    model_free(m);
}

static void test_memory(void)
{
    double avail = mem_available_bytes();
    CHECK(avail > 0, "MemAvailable read: %g", avail);
    CHECK(hessian_bytes(1000, 1000, 10) == 8.0 * 1000 * 1010, "hessian_bytes counts H and a panel");
    int q = core_quiet;
    core_quiet = 1;
    memory_check("small", 1e3);
    EXPECT_USER_ERROR(memory_check("huge H", 1e18), "huge H needs");
    core_quiet = q;
}

static void test_asymmetry(void)
{
    double H[4] = {1, 2, 2.5, 4};
    CHECK_CLOSE(hessian_asymmetry(2, H), 0.5 / 4, 1e-16, "max|H-H'|/max|H| by hand");
    double Z[4] = {0};
    CHECK(hessian_asymmetry(2, Z) == 0, "asymmetry of 0 is 0");
}

/* The MLP through the engine: every path and panel width gives the same H. */
static void test_mlp_panels(void)
{
    for (int a = ACT_RELU; a <= ACT_GELU; a++) {
        mlp_config cfg = {.in = 11, .width = 4, .classes = 3, .act = a, .bias = 1, .loss = LOSS_XENT};
        model *m = fixture_mlp(&cfg, 40, 21);
        size_t P = m->P;
        hessian_opts o = hessian_defaults();
        o.use_hess_cols = 0;
        o.panel = (int)P;
        double *ref = hessian_full(m, &o), mx = max_abs(P * P, ref);
        CHECK(hessian_asymmetry(P, ref) < 1e-10, "%s MLP H symmetric: %g", act_name(a), hessian_asymmetry(P, ref));
        int panels[] = {1, 5, 12, 64};
        for (int p = 0; p < 4; p++)
            for (int path = 0; path < 3; path++) {
                o.panel = panels[p];
                o.use_hess_cols = path >= 1;
                o.symmetric = path == 2;
                double *H = hessian_full(m, &o);
                double e = max_diff(P * P, H, ref) / mx;
                CHECK(e <= 1e-12, "%s MLP, %s, panel %d: %g of max|H| from the one-panel hvp H", act_name(a),
                      path == 0 ? "hvp" : path == 1 ? "hess_cols" : "symmetric hess_cols", panels[p], e);
                free(H);
            }
        free(ref);
        model_free(m);
    }
}

/* ---- blocks on hand-made matrices ---------------------------------------------------------- */

static void test_blocks(void)
{
    /* H (5×5): block {0,1} = [[2,1],[1,2]], block {2,3,4} = [[1,0,3],[0,-1,0],[3,0,1]], one coupling 0.5 at (1,2) */
    double H[25] = {
        2, 1, 0, 0, 0,
        1, 2, 0.5, 0, 0,
        0, 0.5, 1, 0, 3,
        0, 0, 0, -1, 0,
        0, 0, 3, 0, 1,
    };
    partition *p = partition_new();
    partition_add(p, 0, 2, 1, -1, "first");
    partition_add(p, 2, 3, 1, -1, "second");
    double *B = block_extract(H, 5, &p->b[1]);
    double want[9] = {1, 0, 3, 0, -1, 0, 3, 0, 1};
    CHECK(memcmp(B, want, sizeof want) == 0, "block_extract of rows/cols 2..4");
    free(B);
    /* a strided block: indices 0, 2, 4 */
    block s = {0, 3, 2, -1, "strided"};
    B = block_extract(H, 5, &s);
    double ws[9] = {2, 0, 0, 0, 1, 3, 0, 3, 1};
    CHECK(memcmp(B, ws, sizeof ws) == 0, "strided block {0,2,4}");
    free(B);
    double total = 4 + 1 + 1 + 4 + 0.25 + 0.25 + 1 + 9 + 1 + 9 + 1, inside = 4 + 1 + 1 + 4 + 1 + 9 + 1 + 9 + 1;
    CHECK_CLOSE(mass_ratio(H, 5, p), inside / total, 1e-15, "mass ratio by hand");
    block_metrics b0 = block_analyze(H, 5, &p->b[0], NULL);
    CHECK_CLOSE(b0.s.lmin, 1, 1e-14, "eigenvalues of [[2,1],[1,2]]: 1");
    CHECK_CLOSE(b0.s.lmax, 3, 1e-14, "... and 3");
    CHECK(b0.s.nneg == 0 && fabs(b0.s.kappa - 3) < 1e-13, "kappa 3, no negative eigenvalue");
    CHECK_CLOSE(b0.tau, 4.0 / 6.0, 1e-15, "tau of [[2,1],[1,2]]");
    CHECK_CLOSE(b0.fro2, 10, 1e-15, "||H_bb||_F^2");
    CHECK_CLOSE(b0.row_mass, 10 / 10.25, 1e-15, "row mass: 0.25 of the rows leaves the block");
    CHECK(isnan(b0.kappa_dh_svd) && isnan(b0.sd.kappa), "no D: kappa(DH) is NaN");
    block_metrics b1 = block_analyze(H, 5, &p->b[1], NULL);
    /* [[1,3],[3,1]] on {2,4} has eigenvalues 4 and -2; -1 on {3} */
    CHECK(b1.s.nneg == 2 && fabs(b1.s.lmin + 2) < 1e-13 && fabs(b1.s.lmax - 4) < 1e-13,
          "indefinite block: 2 negative, lmin %g, lmax %g", b1.s.lmin, b1.s.lmax);
    CHECK_CLOSE(b1.s.kappa, 4, 1e-13, "kappa = |l|max/|l|min = 4/1");
    /* κ(D A) for A = [[2,1],[1,2]], d = (1, 4): D^½AD^½ = [[2,2],[2,8]], eigenvalues 5 ± √13 */
    double d[5] = {1, 4, 1, 1, 1};
    block_metrics bd = block_analyze(H, 5, &p->b[0], d);
    CHECK_CLOSE(bd.sd.kappa, (5 + sqrt(13)) / (5 - sqrt(13)), 1e-13, "kappa(DH) from D^1/2 H D^1/2");
    /* DA = [[2,1],[4,8]]: σ² are the eigenvalues of [[20,34],[34,65]] = (85 ± √6649)/2 */
    CHECK_CLOSE(bd.kappa_dh_svd, sqrt((85 + sqrt(6649)) / (85 - sqrt(6649))), 1e-12, "kappa(DH) 2-norm");
    double vhat[2] = {4, 0.25}, dd[2];
    adam_diag(2, vhat, 0.5, dd);
    CHECK(dd[0] == 1 / 2.5 && dd[1] == 1.0, "D = 1/(sqrt(vhat)+eps)");
    /* a partition of part of H: the ratio inside it */
    partition *q = partition_new();
    partition_add(q, 2, 1, 1, -1, "x");
    partition_add(q, 3, 2, 1, -1, "y");
    CHECK_CLOSE(mass_ratio(H, 5, q), (1 + 1 + 1) / (1 + 9 + 1 + 9 + 1.0), 1e-15, "mass ratio over a subset S");
    partition_free(q);
    partition_free(p);
}

static void test_random_baseline(void)
{
    size_t P = 12;
    double *ones = xmalloc(P * P * sizeof(double)), *eye = xcalloc(P * P, sizeof(double));
    for (size_t i = 0; i < P * P; i++) ones[i] = 1;
    for (size_t i = 0; i < P; i++) eye[i * P + i] = 1;
    partition *p = partition_new();
    partition_add(p, 0, 5, 1, -1, "a");
    partition_add(p, 5, 4, 1, -1, "b");
    partition_add(p, 9, 3, 1, -1, "c");
    gsl_rng *r = rng_new(4);
    double mean, sd;
    mass_ratio_random(ones, P, p, r, 10, &mean, &sd);
    CHECK_CLOSE(mean, (25 + 16 + 9) / 144.0, 1e-15, "all-ones H: any permutation gives sum n_b^2 / P^2");
    CHECK(sd < 1e-15, "... with no spread (%g)", sd);
    mass_ratio_random(eye, P, p, r, 10, &mean, &sd);
    CHECK(mean == 1 && sd == 0, "diagonal H: ratio 1 for every permutation");
    /* block-diagonal H: the real partition gets 1, random permutations much less */
    double *bd = xcalloc(P * P, sizeof(double));
    for (int k = 0; k < p->nblocks; k++)
        for (size_t i = 0; i < p->b[k].n; i++)
            for (size_t j = 0; j < p->b[k].n; j++) bd[(p->b[k].start + i) * P + p->b[k].start + j] = 1;
    mass_ratio_random(bd, P, p, r, 50, &mean, &sd);
    CHECK(mass_ratio(bd, P, p) == 1 && mean < 0.6 && sd > 0, "block-diagonal: 1 vs random %g (sd %g)", mean, sd);
    rng_free(r);
    partition_free(p);
    free(ones);
    free(eye);
    free(bd);
}

/* A partition of 0..n-1 into consecutive blocks of the given sizes. */
static partition *consecutive(int nb, const int *sizes)
{
    partition *p = partition_new();
    size_t at = 0;
    for (int b = 0; b < nb; b++) {
        partition_add(p, at, (size_t)sizes[b], 1, 0, "b");
        at += (size_t)sizes[b];
    }
    return p;
}

/* Symmetric n×n: diag on the diagonal; off-diagonal N(0, 1) scaled by `in` inside
 * p's consecutive blocks and by `out` outside them. */
static double *made_matrix(size_t n, const partition *p, double diag, double in, double out, gsl_rng *rng)
{
    int *label = xmalloc(n * sizeof(int));
    for (int b = 0; b < p->nblocks; b++)
        for (size_t e = 0; e < p->b[b].n; e++) label[p->b[b].start + e] = b;
    double *A = xcalloc(n * n, sizeof(double));
    for (size_t i = 0; i < n; i++) {
        A[i * n + i] = diag;
        for (size_t j = i + 1; j < n; j++)
            A[i * n + j] = A[j * n + i] = rng_gaussian(rng, label[i] == label[j] ? in : out);
    }
    free(label);
    return A;
}

static void test_offdiag_by_hand(void)
{
    /* 4×4, blocks {0,1}, {2,3}: diagonal 1, a = 2 inside, b = 1 across.
     * O = 4a² + 8b² = 24, I = 4a² = 16, s = 2/3, q = (2·1 + 2·1)/(4·3) = 1/3, e = 1/2;
     * per block s_b = 2a²/(2a² + 4b²) = 2/3, q_b = 1/3, e_b = 1/2; m = (4 + 16)/(4 + 24) = 5/7. */
    double a = 2, b = 1;
    double A[16] = {1, a, b, b, a, 1, b, b, b, b, 1, a, b, b, a, 1};
    int sizes[2] = {2, 2};
    partition *p = consecutive(2, sizes);
    offdiag_stats st = offdiag_structure(A, 4, p);
    CHECK_CLOSE(st.diag, 4, 1e-15, "D");
    CHECK_CLOSE(st.offdiag, 24, 1e-15, "O");
    CHECK_CLOSE(st.inblock, 16, 1e-15, "I");
    CHECK_CLOSE(st.share, 2.0 / 3, 1e-15, "s");
    CHECK_CLOSE(st.chance, 1.0 / 3, 1e-15, "q");
    CHECK_CLOSE(st.excess, 0.5, 1e-15, "e");
    CHECK_CLOSE(offdiag_mass_ratio(&st), 5.0 / 7, 1e-15, "m from the same sums");
    CHECK_CLOSE(mass_ratio(A, 4, p), 5.0 / 7, 1e-15, "m = mass_ratio");
    double eb[2];
    offdiag_block_excess(A, 4, p, eb);
    CHECK_CLOSE(eb[0], 0.5, 1e-15, "e_b of block 0");
    CHECK_CLOSE(eb[1], 0.5, 1e-15, "e_b of block 1");
    /* the blocks avoid the mass: only cross entries, s = 0, e = -q/(1 - q) = -1/2 */
    double X[16] = {1, 0, b, b, 0, 1, b, b, b, b, 1, 0, b, b, 0, 1};
    st = offdiag_structure(X, 4, p);
    CHECK_CLOSE(st.excess, -0.5, 1e-15, "blocks that avoid the mass: e = -1/2");
    partition_free(p);

    /* conventions: one block (nothing can fall outside), one-entry blocks, no off-diagonal mass */
    int one[1] = {4}, singles[4] = {1, 1, 1, 1};
    partition *w = consecutive(1, one), *e = consecutive(4, singles);
    st = offdiag_structure(A, 4, w);
    CHECK(st.share == 1 && st.chance == 1 && isnan(st.excess), "one block: s = q = 1, e NAN");
    offdiag_block_excess(A, 4, w, eb);
    CHECK(isnan(eb[0]), "one block: e_b NAN");
    st = offdiag_structure(A, 4, e);
    CHECK(st.share == 0 && st.chance == 0 && st.excess == 0, "one-entry blocks: s = q = e = 0");
    double I4[16] = {3, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 5};
    partition *p2 = consecutive(2, sizes);
    st = offdiag_structure(I4, 4, p2);
    CHECK(st.offdiag == 0 && st.excess == 0 && st.share == st.chance, "diagonal matrix: e = 0, s = q");
    CHECK(mass_ratio(I4, 4, p2) == 1, "diagonal matrix: the old mass ratio is 1");
    CHECK_CLOSE(diag_share(4, I4), 1, 1e-15, "diagonal share 1");
    CHECK_CLOSE(diag_excess(4, I4), 1, 1e-15, "diagonal excess 1");
    double J[16];
    for (int i = 0; i < 16; i++) J[i] = 1;
    CHECK_CLOSE(diag_share(4, J), 0.25, 1e-15, "all-ones: diagonal share 1/n");
    CHECK_CLOSE(diag_excess(4, J), 0, 1e-15, "all-ones: diagonal excess 0");
    partition_free(p2);
    partition_free(w);
    partition_free(e);
}

static void test_offdiag_within(void)
{
    /* 6×6: coarse blocks {0,1,2}, {3,4,5}; fine {0,1}, {2}, {3,4}, {5}. Diagonal 3; inside the coarse
     * blocks 1, except the pairs (0,1) and (3,4) = 2; across them 5 (left out). By hand: O = 2·(8 + 4) = 24,
     * I = 16, s = 2/3; q_c = 2/(3·2) = 1/3 in both, e = 1/2. Diagonal inside the coarse blocks:
     * d = 54/(54 + 24) = 9/13 against 6/(9 + 9) = 1/3: (9/13 - 1/3)/(2/3) = 7/13. */
    double A[36];
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++)
            A[i * 6 + j] = i == j ? 3 : i / 3 != j / 3 ? 5 : (i % 3 < 2 && j % 3 < 2) ? 2 : 1;
    int cs[2] = {3, 3}, fs[4] = {2, 1, 2, 1}, xs[3] = {2, 2, 2};
    partition *coarse = consecutive(2, cs), *fine = consecutive(4, fs), *cross = consecutive(3, xs);
    CHECK(partition_refines(fine, coarse, 6) && !partition_refines(coarse, fine, 6), "fine refines coarse, not back");
    CHECK(!partition_refines(cross, coarse, 6), "blocks {2,3} cross the coarse blocks");
    CHECK(partition_refines(coarse, coarse, 6), "a partition refines itself");
    offdiag_stats st = offdiag_structure_within(A, 6, fine, coarse);
    CHECK_CLOSE(st.offdiag, 24, 1e-15, "O inside the coarse blocks");
    CHECK_CLOSE(st.inblock, 16, 1e-15, "I");
    CHECK_CLOSE(st.chance, 1.0 / 3, 1e-15, "q inside the coarse blocks");
    CHECK_CLOSE(st.excess, 0.5, 1e-15, "e inside the coarse blocks");
    CHECK_CLOSE(diag_excess_within(A, 6, coarse), 7.0 / 13, 1e-15, "diagonal excess inside the coarse blocks");
    /* one coarse block covering S: the plain statistics */
    int all[1] = {6};
    partition *one = consecutive(1, all);
    offdiag_stats a = offdiag_structure_within(A, 6, fine, one), b = offdiag_structure(A, 6, fine);
    CHECK(a.offdiag == b.offdiag && a.inblock == b.inblock && fabs(a.chance - b.chance) < 1e-15 &&
              fabs(a.excess - b.excess) < 1e-15, "within one block = offdiag_structure");
    CHECK_CLOSE(diag_excess_within(A, 6, one), diag_excess(6, A), 1e-15, "within one block = diag_excess");
    /* unequal chance per coarse block: the mean weighted by the blocks' off-diagonal mass */
    double Z[36] = {0};
    Z[0 * 6 + 1] = Z[1 * 6 + 0] = 1;   /* mass only in coarse block 0 */
    int f2[3] = {2, 1, 3};
    partition *fine2 = consecutive(3, f2);   /* {0,1}, {2}, {3,4,5}: q_0 = 1/3, q_1 = 1 */
    st = offdiag_structure_within(Z, 6, fine2, coarse);
    CHECK_CLOSE(st.chance, 1.0 / 3, 1e-15, "q weighted by mass: block 0's");
    CHECK_CLOSE(st.excess, 1, 1e-15, "all of it inside the fine block");
    partition_free(coarse), partition_free(fine), partition_free(cross), partition_free(one), partition_free(fine2);
}

static void test_offdiag_made_matrices(void)
{
    gsl_rng *rng = rng_new(11);
    const size_t n = 60;
    int sizes[10] = {6, 6, 6, 6, 6, 6, 6, 6, 6, 6}, uneven[4] = {5, 10, 20, 25};
    partition *p = consecutive(10, sizes), *pu = consecutive(4, uneven);
    double q = 10 * 6 * 5 / (60.0 * 59);

    /* block-diagonal with dense blocks: e = 1, every block's own e_b = 1, old m = 1 */
    double *B = made_matrix(n, p, 1, 1, 0, rng);
    offdiag_stats st = offdiag_structure(B, n, p);
    CHECK_CLOSE(st.chance, q, 1e-15, "chance of 10 blocks of 6 in 60");
    CHECK(st.share == 1 && st.excess == 1, "block-diagonal: s = e = 1 (got %g)", st.excess);
    double eb[10];
    offdiag_block_excess(B, n, p, eb);
    int all = 1;
    for (int b = 0; b < 10; b++) all &= eb[b] == 1;
    CHECK(all, "block-diagonal: every block's excess is 1");
    /* the control: the same blocks on the permuted matrix, or laid on a random permutation, lose it */
    double *Bp = sym_permuted(B, n, rng);
    offdiag_stats sp = offdiag_structure(Bp, n, p), sr = offdiag_structure_random(B, n, p, rng);
    CHECK(fabs(sp.excess) < 0.1 && sp.excess < 0.5, "permuted block-diagonal matrix: e %.3f, the rule (>= 0.5) rejects it",
          sp.excess);
    CHECK(fabs(sr.excess) < 0.1, "blocks on a random permutation: e %.3f", sr.excess);
    CHECK_CLOSE(frobenius_sq(n * n, Bp), frobenius_sq(n * n, B), 1e-12, "the permutation keeps every entry");
    CHECK_CLOSE(diag_share(n, Bp), diag_share(n, B), 1e-12, "... and the diagonal");
    CHECK(sp.diag == st.diag, "permuted: D unchanged");

    /* diagonal-heavy with iid off-diagonal noise: the old mass ratio is high for any blocks and passes on
     * the permuted matrix too; the excess is ~0 on both */
    double *D = made_matrix(n, p, 10, 0.3, 0.3, rng);
    double *Dp = sym_permuted(D, n, rng);
    double m = mass_ratio(D, n, p), mp = mass_ratio(Dp, n, p);
    offdiag_stats sd = offdiag_structure(D, n, p);
    CHECK(m > 0.9 && mp > 0.9, "diagonal-heavy: old mass ratio %.3f, permuted %.3f (both pass m >= 0.5)", m, mp);
    CHECK(fabs(sd.excess) < 0.08, "diagonal-heavy, no blocks: e %.3f ~ 0", sd.excess);
    CHECK(fabs(offdiag_structure(Dp, n, p).excess) < 0.08, "... and on the permuted matrix");
    /* the old excess over the Monte Carlo random mean estimates the same e */
    double mean, sdv;
    mass_ratio_random(D, n, p, rng, 200, &mean, &sdv);
    double r_exact = (sd.diag + sd.chance * sd.offdiag) / (sd.diag + sd.offdiag);
    CHECK(fabs(mean - r_exact) < 5 * sdv / sqrt(200.0) + 1e-12, "Monte Carlo random mean %.6f vs exact %.6f", mean,
          r_exact);

    /* random dense: e ~ 0 for even and uneven blocks */
    double *R = made_matrix(n, p, 1, 1, 1, rng);
    CHECK(fabs(offdiag_structure(R, n, p).excess) < 0.08, "random dense: e ~ 0 (got %.3f)",
          offdiag_structure(R, n, p).excess);
    CHECK(fabs(offdiag_structure(R, n, pu).excess) < 0.08, "random dense, uneven blocks: e ~ 0 (got %.3f)",
          offdiag_structure(R, n, pu).excess);
    double eu[4];
    offdiag_block_excess(R, n, pu, eu);
    CHECK(fabs(eu[0]) < 0.15 && fabs(eu[3]) < 0.15, "random dense: blocks' own e ~ 0 (%.3f, %.3f)", eu[0], eu[3]);

    /* partial structure: entries inside the blocks twice the size of those outside: in the mean
     * s = 4q/(4q + 1 - q) (a share q of the pairs at 4x the squared size), e = (s - q)/(1 - q) */
    double *M = made_matrix(n, p, 1, 2, 1, rng);
    double s_mean = 4 * q / (4 * q + (1 - q)), e_mean = (s_mean - q) / (1 - q);
    CHECK(fabs(offdiag_structure(M, n, p).excess - e_mean) < 0.08, "partial blocks: e %.3f, expected about %.3f",
          offdiag_structure(M, n, p).excess, e_mean);
    free(B), free(Bp), free(D), free(Dp), free(R), free(M);
    partition_free(p);
    partition_free(pu);
    rng_free(rng);
}

static void test_heatmap(void)
{
    double A[25];
    for (int i = 0; i < 25; i++) A[i] = (i % 2 ? -1.0 : 1.0) * i;
    size_t pr, pc, f;
    double *img = heatmap_pool(A, 5, 5, 5, 2, POOL_MAX, &pr, &pc, &f);
    CHECK(pr == 2 && pc == 2 && f == 3, "5x5 to at most 2 pixels: factor 3, 2x2 (%zux%zu f %zu)", pr, pc, f);
    /* cells: rows 0-2 x cols 0-2 max |A| = 12; rows 0-2 x cols 3-4 = 14; rows 3-4 x 0-2 = 22; 3-4 x 3-4 = 24 */
    CHECK(img[0] == 12 && img[1] == 14 && img[2] == 22 && img[3] == 24, "max pool %g %g %g %g", img[0], img[1], img[2],
          img[3]);
    free(img);
    img = heatmap_pool(A, 5, 5, 5, 2, POOL_MEAN, &pr, &pc, &f);
    CHECK_CLOSE(img[0], (0 + 1 + 2 + 5 + 6 + 7 + 10 + 11 + 12) / 9.0, 1e-15, "mean pool of a full cell");
    CHECK_CLOSE(img[3], (18 + 19 + 23 + 24) / 4.0, 1e-15, "mean pool of an edge cell");
    /* a sub-matrix through lda: rows 1..2, cols 1..3 with max_px 10 (no pooling) */
    double *sub = heatmap_pool(A + 6, 2, 3, 5, 10, POOL_MAX, &pr, &pc, &f);
    CHECK(pr == 2 && pc == 3 && f == 1 && sub[0] == 6 && sub[5] == 13, "sub-matrix via lda");
    free(sub);
    char *path = path_join(tmpdir, "heat.txt"), *bpath = path_join(tmpdir, "bounds.csv");
    heatmap_write(path, img, 2, 2, 3, "test");
    FILE *fp = fopen(path, "r");
    char line[256];
    int data = 0;
    double v0 = -1;
    while (fgets(line, sizeof line, fp))
        if (line[0] != '#') {
            if (data++ == 0) sscanf(line, "%lf", &v0);
        }
    fclose(fp);
    CHECK(data == 2 && fabs(v0 - img[0]) < 1e-5, "heatmap file: 2 data rows, first value %g", v0);
    free(img);
    partition *p = partition_new();
    partition_add(p, 0, 4, 1, -1, "n0");
    partition_add(p, 4, 4, 1, -1, "n1");
    partition_add(p, 8, 2, 5, -1, "strided");
    heatmap_write_bounds(bpath, p, 0, 2);
    fp = fopen(bpath, "r");
    char hdr[64], row[64];
    CHECK(fgets(hdr, sizeof hdr, fp) && strcmp(hdr, "pixel,index,name\n") == 0, "bounds header");
    CHECK(fgets(row, sizeof row, fp) && strcmp(row, "1.5000,4,n1\n") == 0, "boundary before n1 at pixel 1.5: %s", row);
    CHECK(!fgets(row, sizeof row, fp), "no boundary for a strided block");
    fclose(fp);
    partition_free(p);
    EXPECT_USER_ERROR(pool_parse("median"), "expected max or mean");
    free(path);
    free(bpath);
}

/* The column split, the control of every "blocks by output neuron / head / token" claim, can
 * pass: a linear layer W (rows x cols) has Gauss-Newton H = A (x) S, A over outputs, S = sum
 * x x' over inputs (entry (i,j),(k,l) = A_ik S_jl). With S near-diagonal (inputs nearly
 * orthogonal) H couples each input neuron's weights: the column split holds and the row split
 * does not (a claim of rows would then be NO POWER beside it); with A near-diagonal the other
 * way round. */
static void test_column_control(void)
{
    enum { R = 6, C = 8, P = R * C };
    partition *rows = partition_new(), *cols = partition_new();
    for (int i = 0; i < R; i++) partition_add(rows, (size_t)i * C, C, 1, 0, "row");
    for (int j = 0; j < C; j++) partition_add(cols, (size_t)j, R, C, 0, "col");
    gsl_rng *rng = rng_new(5);
    double A[R * R], S[C * C], *H = xmalloc((size_t)P * P * sizeof(double));
    for (int pass = 0; pass < 2; pass++) {
        /* pass 0: S diagonal-heavy (column structure); 1: A diagonal-heavy (rows) */
        for (int i = 0; i < R; i++)
            for (int k = 0; k <= i; k++) A[i * R + k] = A[k * R + i] = (i == k ? (pass == 1 ? 10 : 1) : 0) + rng_gaussian(rng, 0.1);
        for (int j = 0; j < C; j++)
            for (int l = 0; l <= j; l++) S[j * C + l] = S[l * C + j] = (j == l ? (pass == 0 ? 10 : 1) : 0) + rng_gaussian(rng, 0.1);
        for (int i = 0; i < R; i++)
            for (int j = 0; j < C; j++)
                for (int k = 0; k < R; k++)
                    for (int l = 0; l < C; l++) H[(size_t)(i * C + j) * P + (k * C + l)] = A[i * R + k] * S[j * C + l];
        double er = offdiag_structure(H, P, rows).excess, ec = offdiag_structure(H, P, cols).excess;
        if (pass == 0) CHECK(ec >= 0.5 && er < 0.5, "inputs near-orthogonal: columns %.3f pass, rows %.3f do not", ec, er);
        if (pass == 1) CHECK(er >= 0.5 && ec < 0.5, "outputs decoupled: rows %.3f pass, the column control %.3f fails", er, ec);
    }
    free(H);
    rng_free(rng);
    partition_free(rows), partition_free(cols);
}

int main(void)
{
    test_column_control();
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_hessian.%d", (int)getpid());
    mkdir(tmpdir, 0777);
    core_quiet = 1;
    test_engine_on_quadratic();
    test_column_files();
    test_memory();
    test_asymmetry();
    test_mlp_panels();
    test_blocks();
    test_random_baseline();
    test_offdiag_by_hand();
    test_offdiag_within();
    test_offdiag_made_matrices();
    test_heatmap();
    if (remove_tree(tmpdir) != 0) printf("could not remove %s\n", tmpdir);
    return check_summary();
}
