/* Tests of hessian/hdist and the stream's pack: merging packed streams equals
 * merging the streams (bitwise) and one stream fed every row (bitwise with full
 * panels; lower panels: all but the row masses, which agree to round-off);
 * hstream_run_dist over the ranks equals one process's stream (bitwise);
 * hessian_eigs_dist (ScaLAPACK over the ranks under MPI, LAPACK otherwise)
 * equals LAPACK's eigenvalues of hessian_full's H to 1e-10 of max|λ|, all of
 * them, an index range, and by pdsyevd. Run alone (one rank) by make test, and
 * under mpirun -np 1, 2, 3 by tests/mpi_hessian_blocks.sh (checks on rank 0). */
#include "check.h"
#include "core/dist.h"
#include "hessian/hdist.h"
#include "mlp/mlp.h"
#include "tinytransformer/tt.h"
#include "tests/fixtures.h"
#include <stdlib.h>


/* The streaming tests' models (tests/fixtures.c), one worker thread each. */
static model *mlp_small(void)
{
    mlp_config cfg = {.in = 12, .width = 6, .classes = 4, .act = ACT_TANH, .bias = 1, .loss = LOSS_XENT};
    model *m = fixture_mlp(&cfg, 30, 5);
    mlp_set_threads(m, 1);
    return m;
}

static model *tt_small(void)
{
    model *m = fixture_tt_markov();
    tt_set_threads(m, 1);
    return m;
}

static int bits_equal(const double *a, const double *b, size_t n) { return memcmp(a, b, n * sizeof(double)) == 0; }

static double rel_diff(const double *a, const double *b, size_t n)
{
    double d = 0, s = 0;
    for (size_t i = 0; i < n; i++) {
        d = fmax(d, fabs(a[i] - b[i]));
        s = fmax(s, fabs(b[i]));
    }
    return s > 0 ? d / s : d;
}

/* Every result of two complete streams: bitwise, the row masses to rm_tol (0: bitwise). */
static void compare(const hstream *a, const hstream *b, const model *m, const partition *p, double rm_tol,
                    const char *what)
{
    size_t P = m->P, T = (size_t)m->ntensors, pr, pc, f, qr, qc, g;
    CHECK(hstream_total_fro2(a) == hstream_total_fro2(b), "%s: ‖H‖² %.17g vs %.17g", what, hstream_total_fro2(a),
          hstream_total_fro2(b));
    CHECK(bits_equal(hstream_tensor_mass(a), hstream_tensor_mass(b), T * T), "%s: tensor masses", what);
    const double *ha = hstream_heatmap(a, &pr, &pc, &f), *hb = hstream_heatmap(b, &qr, &qc, &g);
    CHECK(pr == qr && pc == qc && bits_equal(ha, hb, pr * pc), "%s: heatmap", what);
    int blocks_ok = 1;
    for (int k = 0; k < p->nblocks; k++)
        blocks_ok &= bits_equal(hstream_block(a, k), hstream_block(b, k), p->b[k].n * p->b[k].n);
    CHECK(blocks_ok, "%s: kept blocks", what);
    double e = rel_diff(hstream_row_mass(a), hstream_row_mass(b), P);
    if (rm_tol == 0) CHECK(bits_equal(hstream_row_mass(a), hstream_row_mass(b), P), "%s: row masses (rel %.2e)", what, e);
    else CHECK(e <= rm_tol, "%s: row masses rel %.2e", what, e);
}

static hstream *stream_of(model *m, const partition *p, size_t j0, size_t j1, int lower)
{
    hstream_opts so = {p, 1, 16, POOL_MEAN};
    hstream *s = hstream_new(m, &so);
    hessian_opts o = hessian_defaults();
    o.panel = 16;
    o.symmetric = lower;
    hstream_run_cols(s, m, j0, j1, &o);
    return s;
}

/* Three parts cut at panel multiples (the MLP's panels change at round-off
 * with their start and width: the model's, not the stream's), packed and merged
 * in order. */
static void test_pack(model *m, const partition *p, int lower, const char *name)
{
    size_t P = m->P, cut[4] = {0, 16 * (P / 48), 32 * (P / 48) + 16, P};
    hstream *ref = stream_of(m, p, 0, P, lower);
    hstream *a = stream_of(m, p, cut[0], cut[1], lower), *a2 = stream_of(m, p, cut[0], cut[1], lower);
    for (int k = 1; k < 3; k++) {
        hstream *b = stream_of(m, p, cut[k], cut[k + 1], lower);
        size_t n;
        void *buf = hstream_pack(b, &n);
        hstream_merge_packed(a, buf, n);
        hstream_merge(a2, b);
        free(buf);
        hstream_free(b);
    }
    char what[96];
    snprintf(what, sizeof what, "%s, %s panels: packed merge vs merge", name, lower ? "lower" : "full");
    compare(a, a2, m, p, 0, what);
    snprintf(what, sizeof what, "%s, %s panels: packed merge vs one stream", name, lower ? "lower" : "full");
    compare(a, ref, m, p, lower ? 1e-14 : 0, what);
    /* not a packed stream; a stream of another partition */
    double junk[64] = {0};
    EXPECT_USER_ERROR(hstream_merge_packed(a2, junk, sizeof junk), "not a packed stream");
    partition *q = partition_alg2(m);
    hstream *other = stream_of(m, q, 0, 16, lower);
    size_t n;
    void *buf = hstream_pack(other, &n);
    hstream *fresh = stream_of(m, p, 16, 32, lower);
    EXPECT_USER_ERROR(hstream_merge_packed(fresh, buf, n), "partition");
    free(buf);
    hstream_free(fresh);
    hstream_free(other);
    partition_free(q);
    hstream_free(ref);
    hstream_free(a);
    hstream_free(a2);
}

/* Interleaved panels (rank q of 3 takes panels q, q + 3, ...; what
 * hstream_run_dist does) packed and merged in order: bitwise one stream. */
static void test_strided(model *m, const partition *p, const char *name)
{
    hstream_opts so = {p, 1, 16, POOL_MEAN};
    hessian_opts o = hessian_defaults();
    o.panel = 16;
    o.symmetric = 0;
    hstream *ref = hstream_new(m, &so), *a = hstream_new(m, &so);
    hstream_run(ref, m, &o);
    hstream_run_strided(a, m, 0, 48, &o);
    for (int q = 1; q < 3; q++) {
        hstream *b = hstream_new(m, &so);
        hstream_run_strided(b, m, 16 * (size_t)q, 48, &o);
        size_t n;
        void *buf = hstream_pack(b, &n);
        hstream_merge_packed(a, buf, n);
        free(buf);
        hstream_free(b);
    }
    char what[96];
    snprintf(what, sizeof what, "%s: interleaved panels of 3 streams, merged, vs one stream", name);
    CHECK(hstream_rows_fed(a) == m->P, "%s: %zu rows fed", what, hstream_rows_fed(a));
    compare(a, ref, m, p, 0, what);
    hstream_free(a);
    hstream_free(ref);
}

/* hstream_run_dist over the job's ranks against one process's stream (rank 0). */
static void test_run_dist(model *m, const partition *p, const char *name)
{
    hstream_opts so = {p, 1, 16, POOL_MAX};
    hessian_opts o = hessian_defaults();
    o.panel = 16;
    o.symmetric = 0;
    hstream *s = hstream_new(m, &so);
    hstream_run_dist(s, m, &o);
    if (dist_rank() == 0) {
        hstream *ref = hstream_new(m, &so);
        hstream_run(ref, m, &o);
        char what[96];
        snprintf(what, sizeof what, "%s: hstream_run_dist over %d ranks vs one stream", name, dist_size());
        compare(s, ref, m, p, 0, what);
        hstream_free(ref);
    }
    hstream_free(s);
}

static void test_eigs(model *m, const char *name)
{
    size_t P = m->P;
    hessian_opts o = hessian_defaults();
    o.panel = 16;
    o.symmetric = 0;
    double *ref = xmalloc(P * sizeof(double)), *w = xmalloc(P * sizeof(double));
    if (dist_rank() == 0) {
        double *H = hessian_full(m, &o);
        sym_eigvals((int)P, H, ref);
        free(H);
    }
    hfull_opts f = hfull_defaults();
    int n = hessian_eigs_dist(m, &o, &f, NULL, w);
    if (dist_rank() == 0) {
        double e = rel_diff(w, ref, P);
        CHECK(n == (int)P && e <= 1e-10, "%s: all eigenvalues (%d ranks): %d found, max diff %.2e of max|λ|", name,
              dist_size(), n, e);
    }
    f.il = (int)P - 2;
    f.iu = (int)P;
    n = hessian_eigs_dist(m, &o, &f, NULL, w);
    if (dist_rank() == 0) {
        double e = rel_diff(w, ref + P - 3, 3) * fabs(ref[P - 1]) / fmax(fabs(ref[0]), fabs(ref[P - 1]));
        CHECK(n == 3 && e <= 1e-10, "%s: the 3 largest: %d found, diff %.2e", name, n, e);
    }
    f = hfull_defaults();
    f.method = EIG_EVD;
    f.nb = 8;   /* several blocks per rank */
    n = hessian_eigs_dist(m, &o, &f, NULL, w);
    if (dist_rank() == 0) {
        double e = rel_diff(w, ref, P);
        CHECK(n == (int)P && e <= 1e-10, "%s: pdsyevd, nb 8: max diff %.2e of max|λ|", name, e);
    }
    free(ref);
    free(w);
}

static void test_grid(void)
{
    int r, c;
    hfull_grid(1, &r, &c);
    CHECK(r == 1 && c == 1, "grid of 1: %d x %d", r, c);
    hfull_grid(6, &r, &c);
    CHECK(r == 2 && c == 3, "grid of 6: %d x %d", r, c);
    hfull_grid(7, &r, &c);
    CHECK(r == 1 && c == 7, "grid of 7: %d x %d", r, c);
    hfull_grid(16, &r, &c);
    CHECK(r == 4 && c == 4, "grid of 16: %d x %d", r, c);
    size_t j0, j1, prev = 0;
    int ok = 1;
    for (int q = 0; q < 3; q++) {
        dist_share(100, 16, q, 3, &j0, &j1);
        ok &= j0 == prev && j0 % 16 == 0 && j1 >= j0;
        prev = j1;
    }
    CHECK(ok && prev == 100, "shares of 100 in units of 16 over 3 ranks tile 0..100");
}

int main(int argc, char **argv)
{
    dist_init(&argc, &argv);
    dist_own_work();
    core_quiet = 1;
    model *ms[2] = {mlp_small(), tt_small()};
    const char *names[2] = {"MLP", "Transformer"};
    if (dist_rank() == 0) test_grid();
    for (int i = 0; i < 2; i++) {
        partition *p = partition_alg3(ms[i], 0);
        if (dist_rank() == 0) {
            test_pack(ms[i], p, 0, names[i]);
            test_pack(ms[i], p, 1, names[i]);
            test_strided(ms[i], p, names[i]);
        }
        test_run_dist(ms[i], p, names[i]);
        test_eigs(ms[i], names[i]);
        partition_free(p);
        model_free(ms[i]);
    }
    int rc = dist_rank() == 0 ? check_summary() : 0;
    dist_finalize();
    return rc;
}
