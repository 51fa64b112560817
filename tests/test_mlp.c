/* Tests of mlp/: BLAS kernels against the naive ones, gradient and HVP against
 * central differences for every tensor, activation, loss and bias setting, the
 * closed-form Hessian of a linear network with squared loss, hess_cols against
 * hvp, and the data readers on tiny files written here (every bad-file case). */
#include "check.h"
#include "mlp/mlp.h"
#include "tests/fixtures.h"
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char tmpdir[256];

/* A small MLP with random weights (a little larger than init so σ'' matters) on random data. */
static model *small_mlp(mlp_act act, int bias, mlp_loss loss, int in, int width, int classes, int N,
                        unsigned long seed)
{
    mlp_config cfg = {.in = in, .width = width, .classes = classes, .act = act, .bias = bias, .loss = loss};
    model *m = fixture_mlp(&cfg, N, seed);
    for (size_t j = 0; j < m->P; j++) m->params[j] *= 2;
    return m;
}

static void test_tensor_table(void)
{
    mlp_config cfg = {5, 3, 4, ACT_TANH, 1, LOSS_XENT, 1};
    model *m = mlp_new(&cfg);
    CHECK(m->P == 3 * 6 + 4 * 3 + 4, "P = %zu", m->P);
    CHECK(m->ntensors == 3 && m->tensors[0].role == ROLE_MLP_FC && m->tensors[0].rows == 3 &&
          m->tensors[0].cols == 6, "fc1 is width x (in+1): weights then the bias");
    CHECK(m->tensors[1].role == ROLE_MLP_PROJ && m->tensors[1].offset == 18 && m->tensors[1].rows == 4 &&
          m->tensors[1].cols == 3, "fc2 is classes x width after fc1");
    CHECK(m->tensors[2].role == ROLE_BIAS && m->tensors[2].offset == 30, "fc2.bias last");
    /* Algorithm 3 on the MLP = one block per neuron: 3 hidden, 4 output rows, the bias */
    partition *p = partition_alg3(m, 0);
    CHECK(p->nblocks == 3 + 4 + 1 && p->b[0].n == 6 && p->b[3].n == 3, "neuron partition %d blocks", p->nblocks);
    partition_free(p);
    model_free(m);
    cfg.bias = 0;
    m = mlp_new(&cfg);
    CHECK(m->P == 3 * 5 + 4 * 3 && m->ntensors == 2 && m->tensors[0].cols == 5, "no-bias P = %zu", m->P);
    model_free(m);
    cfg.classes = 1;
    EXPECT_USER_ERROR(mlp_new(&cfg), "classes >= 2");
}

/* BLAS kernels == naive per-sample kernels. */
static void check_against_naive(model *m, const char *tag)
{
    size_t P = m->P;
    double *g = xmalloc(P * sizeof(double)), *gn = xmalloc(P * sizeof(double));
    double l = m->grad(m, g), ln = mlp_grad_naive(m, gn);
    char what[128];
    snprintf(what, sizeof what, "%s loss BLAS vs naive", tag);
    CHECK_CLOSE(l, ln, 1e-13, what);
    CHECK_CLOSE(m->loss(m), mlp_loss_naive(m), 1e-13, what);
    CHECK(rel_l2_diff(P, g, gn) < 1e-12, "%s grad BLAS vs naive rel %g", tag, rel_l2_diff(P, g, gn));
    int k = 3;
    double *V = xmalloc(k * P * sizeof(double)), *HV = xmalloc(k * P * sizeof(double));
    gsl_rng *r = rng_new(11);
    for (size_t e = 0; e < k * P; e++) V[e] = rng_gaussian(r, 1.0);
    rng_free(r);
    m->hvp(m, V, HV, k);
    for (int d = 0; d < k; d++) {
        mlp_hvp_naive(m, V + d * P, gn);
        CHECK(rel_l2_diff(P, HV + d * P, gn) < 1e-12, "%s hvp BLAS vs naive, direction %d: rel %g", tag, d,
              rel_l2_diff(P, HV + d * P, gn));
    }
    free(V);
    free(HV);
    free(g);
    free(gn);
}

/* Gradient vs central differences of the loss, tensor by tensor. */
static void check_grad_fd(model *m, const char *tag)
{
    size_t P = m->P;
    double *g = xmalloc(P * sizeof(double)), *fd = xmalloc(P * sizeof(double));
    m->grad(m, g);
    const double h = 1e-5;
    for (size_t j = 0; j < P; j++) {
        double w = m->params[j];
        m->params[j] = w + h;
        double lp = m->loss(m);
        m->params[j] = w - h;
        double lm = m->loss(m);
        m->params[j] = w;
        fd[j] = (lp - lm) / (2 * h);
    }
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        double e = rel_l2_diff(tensor_size(ti), fd + ti->offset, g + ti->offset);
        CHECK(e < 1e-6, "%s grad vs central differences on %s: rel %g", tag, ti->name, e);
    }
    free(g);
    free(fd);
}

/* HVP vs central differences of the gradient, for a direction on each tensor and on all. */
static void check_hvp_fd(model *m, const char *tag)
{
    size_t P = m->P;
    double *v = xcalloc(P, sizeof(double)), *hv = xmalloc(P * sizeof(double));
    double *gp = xmalloc(P * sizeof(double)), *gm = xmalloc(P * sizeof(double)), *fd = xmalloc(P * sizeof(double));
    double *w0 = xmalloc(P * sizeof(double));
    memcpy(w0, m->params, P * sizeof(double));
    gsl_rng *r = rng_new(5);
    const double h = 1e-5;
    for (int t = -1; t < m->ntensors; t++) {
        for (size_t j = 0; j < P; j++) {
            int on = t < 0 || (j >= m->tensors[t].offset && j < m->tensors[t].offset + tensor_size(&m->tensors[t]));
            v[j] = on ? rng_gaussian(r, 1.0) : 0;
        }
        m->hvp(m, v, hv, 1);
        for (size_t j = 0; j < P; j++) m->params[j] = w0[j] + h * v[j];
        m->grad(m, gp);
        for (size_t j = 0; j < P; j++) m->params[j] = w0[j] - h * v[j];
        m->grad(m, gm);
        memcpy(m->params, w0, P * sizeof(double));
        for (size_t j = 0; j < P; j++) fd[j] = (gp[j] - gm[j]) / (2 * h);
        for (int u = 0; u < m->ntensors; u++) {
            const tensor_info *ti = &m->tensors[u];
            double e = rel_l2_diff(tensor_size(ti), hv + ti->offset, fd + ti->offset);
            /* ReLU/linear: a direction on fc1 alone has no curvature on fc1 (σ'' = 0), both sides ~0 */
            double scale = sqrt(frobenius_sq(tensor_size(ti), fd + ti->offset));
            CHECK(e < 1e-6 || scale < 1e-9, "%s HVP vs FD of grad: direction on %s, rows of %s: rel %g",
                  tag, t < 0 ? "all" : m->tensors[t].name, ti->name, e);
        }
    }
    rng_free(r);
    free(v);
    free(hv);
    free(gp);
    free(gm);
    free(fd);
    free(w0);
}

/* H (P×P) from hvp on unit vectors, one panel. */
static double *hessian_by_hvp(model *m)
{
    size_t P = m->P;
    double *V = xcalloc(P * P, sizeof(double)), *H = xmalloc(P * P * sizeof(double));
    for (size_t j = 0; j < P; j++) V[j * P + j] = 1;
    m->hvp(m, V, H, (int)P);
    free(V);
    return H;
}

static void check_hess_cols(model *m, const char *tag)
{
    size_t P = m->P;
    double *H = hessian_by_hvp(m);
    double mx = max_abs(P * P, H), asym = 0;
    for (size_t i = 0; i < P; i++)
        for (size_t j = 0; j < P; j++) asym = fmax(asym, fabs(H[i * P + j] - H[j * P + i]));
    CHECK(asym <= 1e-10 * mx, "%s H symmetric: max|H-H'| / max|H| = %g", tag, asym / mx);
    /* ranges that start and end inside neurons and reach into fc2/bias */
    size_t ranges[][2] = {{0, P}, {2, 9}, {4, P - 1}, {P - 3, P}, {7, 8}};
    for (size_t r = 0; r < sizeof ranges / sizeof *ranges; r++) {
        size_t j0 = ranges[r][0], k = ranges[r][1] - j0;
        double *out = xmalloc(k * P * sizeof(double)), *low = xmalloc(k * P * sizeof(double));
        for (size_t e = 0; e < k * P; e++) low[e] = NAN;
        m->hess_cols(m, j0, (int)k, out);
        m->hess_cols_lower(m, j0, (int)k, low);
        double err = 0, errl = 0;
        int untouched = 1;
        for (size_t d = 0; d < k; d++)
            for (size_t i = 0; i < P; i++) {
                double ref = H[(j0 + d) * P + i];
                err = fmax(err, fabs(out[d * P + i] - ref));
                if (i >= j0) errl = fmax(errl, fabs(low[d * P + i] - ref));
                else if (j0 + d < m->tensors[1].offset && !isnan(low[d * P + i])) untouched = 0;
            }
        CHECK(err <= 1e-12 * mx, "%s hess_cols(%zu, %zu) vs hvp: %g of max|H|", tag, j0, k, err / mx);
        CHECK(errl <= 1e-12 * mx, "%s hess_cols_lower(%zu, %zu) vs hvp: %g of max|H|", tag, j0, k, errl / mx);
        CHECK(untouched, "%s hess_cols_lower(%zu, %zu) writes no fc1 column above row j0", tag, j0, k);
        /* the worker threads take fixed chunks: 1, 2 and 3 workers give the same bits */
        double *one = xmalloc(k * P * sizeof(double)), *many = xmalloc(k * P * sizeof(double));
        for (int lower = 0; lower <= 1; lower++) {
            mlp_set_threads(m, 1);
            (lower ? m->hess_cols_lower : m->hess_cols)(m, j0, (int)k, one);
            for (int t = 2; t <= 3; t++) {
                mlp_set_threads(m, t);
                (lower ? m->hess_cols_lower : m->hess_cols)(m, j0, (int)k, many);
                int same = 1;
                for (size_t d = 0; d < k; d++)
                    for (size_t i = lower ? j0 : 0; i < P; i++) same &= one[d * P + i] == many[d * P + i];
                CHECK(same, "%s %s(%zu, %zu): %d workers == 1 worker, bitwise", tag,
                      lower ? "hess_cols_lower" : "hess_cols", j0, k, t);
            }
        }
        mlp_set_threads(m, 0);
        free(one);
        free(many);
        free(out);
        free(low);
    }
    free(H);
}

static void test_every_activation(void)
{
    for (int a = 0; a < ACT_COUNT; a++)
        for (int bias = 0; bias <= 1; bias++)
            for (int loss = 0; loss < LOSS_COUNT; loss++) {
                char tag[64];
                snprintf(tag, sizeof tag, "%s/%s/%s", act_name(a), bias ? "bias" : "nobias",
                         loss_kind_name(loss));
                model *m = small_mlp(a, bias, loss, 5, 3, 4, 9, 100 + a * 4 + bias * 2 + loss);
                check_against_naive(m, tag);
                check_grad_fd(m, tag);
                check_hvp_fd(m, tag);
                check_hess_cols(m, tag);
                model_free(m);
            }
}

/* Linear activation, squared loss: L = 1/(2N) Σ_n ‖W2 W1 x~_n + b2 − y_n‖²; its Hessian in closed form
 * (a_n = W1 x~_n, r_n = W2 a_n + b2 − y_n, all sums over n divided by N):
 *   W2–W2: δ_cc' Σ a_j a_j'          W1–W1: (W2ᵀW2)_ii' Σ x~_q x~_q'
 *   W1[i,q]–W2[c,j]: Σ (δ_ij r_c x~_q + W2[c,i] a_j x~_q)
 *   b2–b2: δ_cc'   b2[c]–W2[c',j]: δ_cc' Σ a_j   b2[c]–W1[i,q]: W2[c,i] Σ x~_q */
static void test_linear_closed_form(void)
{
    for (int bias = 0; bias <= 1; bias++) {
        int in = 4, h = 3, C = 2, N = 6, d1 = in + bias;
        model *m = small_mlp(ACT_LINEAR, bias, LOSS_SQUARED, in, h, C, N, 77 + bias);
        size_t P = m->P, o2 = m->tensors[1].offset, ob = o2 + (size_t)C * h;
        /* the batch back out of the model: rebuild it the same way small_mlp did */
        gsl_rng *r = rng_new(77 + bias);
        double *X = xmalloc((size_t)N * d1 * sizeof(double));
        int *y = xmalloc((size_t)N * sizeof(int));
        gsl_rng_get(r);   /* the init seed draw */
        for (int n = 0; n < N; n++)
            for (int q = 0; q < in; q++) X[n * d1 + q] = rng_gaussian(r, 1.0);
        for (int n = 0; n < N; n++) {
            if (bias) X[n * d1 + in] = 1;
            y[n] = (int)rng_int(r, (unsigned long)C);
        }
        rng_free(r);
        const double *W1 = m->params, *W2 = m->params + o2, *b2 = bias ? m->params + ob : NULL;
        double *Hc = xcalloc(P * P, sizeof(double));
        for (int n = 0; n < N; n++) {
            const double *x = X + n * d1;
            double a[3], res[2];
            for (int i = 0; i < h; i++) {
                a[i] = 0;
                for (int q = 0; q < d1; q++) a[i] += W1[i * d1 + q] * x[q];
            }
            for (int c = 0; c < C; c++) {
                res[c] = (b2 ? b2[c] : 0) - (c == y[n]);
                for (int i = 0; i < h; i++) res[c] += W2[c * h + i] * a[i];
            }
#define HC(r_, c_) Hc[(size_t)(r_) * P + (c_)]
            for (int c = 0; c < C; c++)
                for (int j = 0; j < h; j++)
                    for (int j2 = 0; j2 < h; j2++) HC(o2 + c * h + j, o2 + c * h + j2) += a[j] * a[j2] / N;
            for (int i = 0; i < h; i++)
                for (int i2 = 0; i2 < h; i2++) {
                    double w = 0;
                    for (int c = 0; c < C; c++) w += W2[c * h + i] * W2[c * h + i2];
                    for (int q = 0; q < d1; q++)
                        for (int q2 = 0; q2 < d1; q2++) HC(i * d1 + q, i2 * d1 + q2) += w * x[q] * x[q2] / N;
                }
            for (int i = 0; i < h; i++)
                for (int q = 0; q < d1; q++)
                    for (int c = 0; c < C; c++)
                        for (int j = 0; j < h; j++) {
                            double v = ((i == j) * res[c] + W2[c * h + i] * a[j]) * x[q] / N;
                            HC(i * d1 + q, o2 + c * h + j) += v;
                            HC(o2 + c * h + j, i * d1 + q) += v;
                        }
            if (bias)
                for (int c = 0; c < C; c++) {
                    HC(ob + c, ob + c) += 1.0 / N;
                    for (int j = 0; j < h; j++) {
                        HC(ob + c, o2 + c * h + j) += a[j] / N;
                        HC(o2 + c * h + j, ob + c) += a[j] / N;
                    }
                    for (int i = 0; i < h; i++)
                        for (int q = 0; q < d1; q++) {
                            HC(ob + c, i * d1 + q) += W2[c * h + i] * x[q] / N;
                            HC(i * d1 + q, ob + c) += W2[c * h + i] * x[q] / N;
                        }
                }
#undef HC
        }
        double *H = hessian_by_hvp(m), *Hf = xmalloc(P * P * sizeof(double));
        m->hess_cols(m, 0, (int)P, Hf);
        double mx = max_abs(P * P, Hc), e1 = 0, e2 = 0;
        for (size_t e = 0; e < P * P; e++) {
            e1 = fmax(e1, fabs(H[e] - Hc[e]));
            e2 = fmax(e2, fabs(Hf[e] - Hc[e]));
        }
        CHECK(e1 <= 1e-12 * mx, "linear/squared (bias %d): hvp H vs closed form %g of max", bias, e1 / mx);
        CHECK(e2 <= 1e-12 * mx, "linear/squared (bias %d): hess_cols H vs closed form %g of max", bias, e2 / mx);
        free(H);
        free(Hf);
        free(Hc);
        free(X);
        free(y);
        model_free(m);
    }
}

static void test_accuracy_and_labels(void)
{
    mlp_config cfg = {2, 2, 3, ACT_LINEAR, 0, LOSS_XENT, 1};
    model *m = mlp_new(&cfg);
    /* W1 = I, W2 rows pick: z = (x0, x1, -x0-x1) */
    double w[] = {1, 0, 0, 1, 1, 0, 0, 1, -1, -1};
    memcpy(m->params, w, sizeof w);
    double X[] = {2, 1, 0, 3, -1, -2, 5, 0};
    int y[] = {0, 1, 2, 1};
    mlp_set_batch(m, X, y, 4);
    CHECK_CLOSE(mlp_accuracy(m), 0.75, 1e-15, "accuracy 3 of 4");
    /* the loss by hand: mean of logsumexp(z) − z_y */
    double l = 0;
    for (int n = 0; n < 4; n++) {
        double z[3] = {X[2 * n], X[2 * n + 1], -X[2 * n] - X[2 * n + 1]};
        l += log(exp(z[0]) + exp(z[1]) + exp(z[2])) - z[y[n]];
    }
    CHECK_CLOSE(m->loss(m), l / 4, 1e-14, "cross-entropy by hand");
    int bad[] = {0, 3, 0, 0};
    EXPECT_USER_ERROR(mlp_set_batch(m, X, bad, 4), "outside 0..2");
    model_free(m);
}

/* ---- data readers -------------------------------------------------------------------- */

static void put32(unsigned char *b, unsigned v)
{
    b[0] = v >> 24;
    b[1] = v >> 16;
    b[2] = v >> 8;
    b[3] = v;
}

/* Writes bytes to path, gzip-compressed when gz. */
static void write_file(const char *path, const unsigned char *data, size_t n, int gz)
{
    if (gz) {
        gzFile f = gzopen(path, "wb");
        gzwrite(f, data, (unsigned)n);
        gzclose(f);
    } else {
        FILE *f = fopen(path, "wb");
        fwrite(data, 1, n, f);
        fclose(f);
    }
}

/* An IDX image file: n images rows×cols with pixel (i, p) = (i*7 + p) % 256; keep = bytes written. */
static size_t idx_images(unsigned char *buf, unsigned magic, int n, int rows, int cols)
{
    put32(buf, magic);
    put32(buf + 4, n);
    put32(buf + 8, rows);
    put32(buf + 12, cols);
    size_t len = 16;
    for (int i = 0; i < n; i++)
        for (int p = 0; p < rows * cols; p++) buf[len++] = (unsigned char)((i * 7 + p) % 256);
    return len;
}

static size_t idx_labels(unsigned char *buf, unsigned magic, int n, int first)
{
    put32(buf, magic);
    put32(buf + 4, n);
    for (int i = 0; i < n; i++) buf[8 + i] = (unsigned char)(i == 0 ? first : i % 10);
    return 8 + n;
}

static char *tmp(const char *name) { return path_join(tmpdir, name); }

static void test_idx(void)
{
    unsigned char img[16 + 5 * 12], lab[8 + 5];
    size_t ni = idx_images(img, 0x803, 5, 3, 4), nl = idx_labels(lab, 0x801, 5, 9);
    for (int gz = 0; gz <= 1; gz++) {
        char *pi = tmp(gz ? "i.gz" : "i.idx"), *pl = tmp(gz ? "l.gz" : "l.idx");
        write_file(pi, img, ni, gz);
        write_file(pl, lab, nl, gz);
        dataset *d = idx_load(pi, pl, 10);
        CHECK(d->n == 5 && d->rows == 3 && d->cols == 4 && d->channels == 1 && d->dim == 12, "IDX dims (gz %d)", gz);
        CHECK_CLOSE(d->x[2 * 12 + 5], ((2 * 7 + 5) % 256) / 255.0, 1e-15, "IDX pixel scaled to [0,1]");
        CHECK(d->y[0] == 9 && d->y[3] == 3, "IDX labels %d %d", d->y[0], d->y[3]);
        dataset_free(d);
        free(pi);
        free(pl);
    }
    char *pi = tmp("i.idx"), *pl = tmp("l.idx"), *bad = tmp("bad.idx");
    write_file(pi, img, ni, 0);
    write_file(pl, lab, nl, 0);
    unsigned char b2[sizeof img];
    idx_images(b2, 0x801, 5, 3, 4);
    write_file(bad, b2, ni, 0);
    EXPECT_USER_ERROR(idx_load(bad, pl, 10), "wrong magic");
    EXPECT_USER_ERROR(idx_load(pi, pi, 10), "wrong magic");
    write_file(bad, img, ni - 3, 0);
    EXPECT_USER_ERROR(idx_load(bad, pl, 10), "truncated");
    write_file(bad, img, 2, 0);
    EXPECT_USER_ERROR(idx_load(bad, pl, 10), "truncated header");
    write_file(bad, img, 10, 1);
    EXPECT_USER_ERROR(idx_load(bad, pl, 10), "truncated header");
    write_file(bad, lab, nl - 1, 1);
    EXPECT_USER_ERROR(idx_load(pi, bad, 10), "truncated");
    unsigned char l2[sizeof lab];
    idx_labels(l2, 0x801, 5, 10);
    write_file(bad, l2, nl, 0);
    EXPECT_USER_ERROR(idx_load(pi, bad, 10), "outside 0..9");
    idx_labels(l2, 0x801, 4, 1);
    write_file(bad, l2, nl - 1, 0);
    EXPECT_USER_ERROR(idx_load(pi, bad, 10), "count mismatch");
    char *none = tmp("none.idx");
    EXPECT_USER_ERROR(idx_load(none, pl, 10), "cannot read");
    EXPECT_USER_ERROR(idx_load(pi, none, 10), "cannot read");
    /* a gzip file whose data is corrupt */
    unsigned char big[16 + 50 * 12];
    size_t nb = idx_images(big, 0x803, 50, 3, 4);
    write_file(bad, big, nb, 1);
    FILE *f = fopen(bad, "r+b");
    fseek(f, 30, SEEK_SET);
    for (int i = 0; i < 40; i++) fputc(0xA5, f);
    fclose(f);
    EXPECT_USER_ERROR(idx_load(bad, pl, 10), bad);

    /* Hostile headers: counts far beyond the data are "truncated" after reading
     * what is there (the buffer grows only as data arrives: no 2^55-byte
     * allocation), a count above INT_MAX is refused, trailing bytes are an error. */
    for (volatile int gz = 0; gz <= 1; gz++) {
        unsigned char h[sizeof img];
        memcpy(h, img, ni);
        put32(h + 4, 0x7FFFFFFFu);
        put32(h + 8, 4096);
        put32(h + 12, 4096);
        write_file(bad, h, ni, gz);
        EXPECT_USER_ERROR(idx_load(bad, pl, 10), "expected 36028797002186752 data bytes, found 60");
        put32(h + 4, 0xFFFFFFFFu);
        write_file(bad, h, ni, gz);
        EXPECT_USER_ERROR(idx_load(bad, pl, 10), "4294967295 images are more than");
        unsigned char t[sizeof img + 5];
        memcpy(t, img, ni);
        memset(t + ni, 7, 5);
        write_file(bad, t, ni + 5, gz);
        EXPECT_USER_ERROR(idx_load(bad, pl, 10), "trailing bytes after the last image");
        unsigned char tl[sizeof lab + 1];
        memcpy(tl, lab, nl);
        tl[nl] = 1;
        write_file(bad, tl, nl + 1, gz);
        EXPECT_USER_ERROR(idx_load(pi, bad, 10), "trailing bytes after the last label");
        unsigned char z[16];
        memcpy(z, img, 16);
        put32(z + 4, 0);
        write_file(bad, z, 16, gz);
        EXPECT_USER_ERROR(idx_load(bad, pl, 10), "bad dimensions");
    }
    EXPECT_USER_ERROR(idx_load(tmpdir, pl, 10), "is a folder, expected a file");
    EXPECT_USER_ERROR(idx_load(pi, tmpdir, 10), "is a folder, expected a file");
    free(pi);
    free(pl);
    free(bad);
    free(none);
}

static size_t cifar_file(unsigned char *buf, int n, int c100, int label_of_first)
{
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        if (c100) buf[len++] = (unsigned char)(i % 20);
        buf[len++] = (unsigned char)(i == 0 ? label_of_first : i % 10);
        for (int p = 0; p < 3072; p++) buf[len++] = (unsigned char)((p + i) % 256);
    }
    return len;
}

static void test_cifar(void)
{
    static unsigned char buf[4 * 3074];
    char *p = tmp("c.bin");
    for (int c100 = 0; c100 <= 1; c100++) {
        size_t n = cifar_file(buf, 3, c100, c100 ? 57 : 7);
        write_file(p, buf, n, 0);
        dataset *d = cifar_load(p, c100);
        CHECK(d->n == 3 && d->channels == 3 && d->rows == 32 && d->dim == 3072 && d->classes == (c100 ? 100 : 10),
              "CIFAR-%d dims", c100 ? 100 : 10);
        CHECK(d->y[0] == (c100 ? 57 : 7) && d->y[2] == 2, "CIFAR labels (fine label for CIFAR-100)");
        CHECK_CLOSE(d->x[1 * 3072 + 1025], ((1025 + 1) % 256) / 255.0, 1e-15, "CIFAR pixel");
        dataset_free(d);
        write_file(p, buf, n - 100, 0);
        EXPECT_USER_ERROR(cifar_load(p, c100), "truncated");
        cifar_file(buf, 3, c100, c100 ? 100 : 10);
        write_file(p, buf, n, 0);
        EXPECT_USER_ERROR(cifar_load(p, c100), c100 ? "outside 0..99" : "outside 0..9");
        write_file(p, buf, 0, 0);
        EXPECT_USER_ERROR(cifar_load(p, c100), "empty");
    }
    /* gzip'ed CIFAR: read record by record; a plain file's count comes from its size */
    size_t n3 = cifar_file(buf, 3, 0, 7);
    write_file(p, buf, n3, 1);
    dataset *dz = cifar_load(p, 0);
    CHECK(dz->n == 3 && dz->y[0] == 7, "gzip'ed CIFAR-10 read (%d records)", dz->n);
    dataset_free(dz);
    write_file(p, buf, n3 - 100, 1);
    EXPECT_USER_ERROR(cifar_load(p, 0), "truncated: record 2");
    write_file(p, buf, n3 + 1, 0);
    EXPECT_USER_ERROR(cifar_load(p, 0), "9220 bytes is not a whole number of 3073-byte CIFAR-10 records");
    EXPECT_USER_ERROR(cifar_load(tmpdir, 0), "is a folder, expected a file");
    cifar_file(buf, 2, 1, 5);
    buf[3074] = 20;   /* second record's coarse label */
    write_file(p, buf, 2 * 3074, 0);
    EXPECT_USER_ERROR(cifar_load(p, 1), "coarse label");
    /* a CIFAR-10 folder: five training batches and a test batch */
    char *dir = tmp("cifar10");
    mkdir(dir, 0777);
    size_t n = cifar_file(buf, 2, 0, 4);
    for (int i = 1; i <= 5; i++) {
        char name[32];
        snprintf(name, sizeof name, "data_batch_%d.bin", i);
        char *f = path_join(dir, name);
        write_file(f, buf, n, 0);
        free(f);
    }
    dataset *d = dataset_load("cifar10", dir, 1, 0);
    CHECK(d->n == 10 && d->y[2] == 4, "CIFAR-10 folder: 5 files appended (%d)", d->n);
    dataset_free(d);
    EXPECT_USER_ERROR(dataset_load("cifar10", dir, 0, 0), "test_batch.bin");
    char *f3 = path_join(dir, "data_batch_3.bin");
    write_file(f3, buf, n - 1, 0);
    EXPECT_USER_ERROR(dataset_load("cifar10", dir, 1, 0), "truncated");
    EXPECT_USER_ERROR(dataset_load("cifar100", NULL, 1, 0), "needs --data-dir");
    EXPECT_USER_ERROR(dataset_load("mnist-ish", dir, 1, 0), "unknown data set");
    free(f3);
    free(dir);
    free(p);
}

static void test_fashion_folder(void)
{
    char *dir = tmp("fm");
    mkdir(dir, 0777);
    unsigned char img[16 + 4 * 16], lab[8 + 4];
    size_t ni = idx_images(img, 0x803, 4, 4, 4), nl = idx_labels(lab, 0x801, 4, 1);
    char *a = path_join(dir, "train-images-idx3-ubyte.gz"), *b = path_join(dir, "train-labels-idx1-ubyte");
    write_file(a, img, ni, 1);
    write_file(b, lab, nl, 0);
    dataset *d = dataset_load("fashion-mnist", dir, 1, 0);
    CHECK(d->n == 4 && d->dim == 16 && d->y[0] == 1, "fashion-mnist folder, gz images + plain labels");
    EXPECT_USER_ERROR(dataset_load("fashion-mnist", dir, 0, 0), "t10k-images-idx3-ubyte[.gz]");
    /* test split with other image sizes: dimension mismatch */
    idx_images(img, 0x803, 4, 2, 8);
    char *c = path_join(dir, "t10k-images-idx3-ubyte"), *e = path_join(dir, "t10k-labels-idx1-ubyte.gz");
    write_file(c, img, ni, 0);
    write_file(e, lab, nl, 1);
    dataset *t = dataset_load("fashion-mnist", dir, 0, 0);
    EXPECT_USER_ERROR(dataset_check_same(d, t, "train", "test"), "dimension mismatch");
    dataset *t2 = dataset_load("fashion-mnist", dir, 0, 0);
    EXPECT_USER_ERROR(dataset_append(d, t2), "dimension mismatch");   /* frees both */
    dataset_free(t);
    free(a);
    free(b);
    free(c);
    free(e);
    free(dir);
}

static void test_transforms(void)
{
    dataset *d = dataset_synthetic(3, 4, 6, 2, 1.0, 9, 0);
    dataset *d2 = dataset_synthetic(3, 4, 6, 2, 1.0, 9, 0), *d3 = dataset_synthetic(3, 4, 6, 2, 1.0, 9, 1);
    CHECK(memcmp(d->x, d2->x, 3 * 24 * sizeof(double)) == 0, "synthetic set is seeded");
    CHECK(memcmp(d->x, d3->x, 3 * 24 * sizeof(double)) != 0, "streams differ");
    double want = (d->x[24 + 2 * 6 + 4] + d->x[24 + 2 * 6 + 5] + d->x[24 + 3 * 6 + 4] + d->x[24 + 3 * 6 + 5]) / 4;
    dataset_pool(d, 2);
    CHECK(d->rows == 2 && d->cols == 3 && d->dim == 6, "pooled dims %dx%d", d->rows, d->cols);
    CHECK_CLOSE(d->x[6 + 1 * 3 + 2], want, 1e-15, "2x2 average pool of sample 1, pixel (1,2)");
    EXPECT_USER_ERROR(dataset_pool(d2, 4), "does not divide");
    dataset_standardize(d2, d3);
    for (int p = 0; p < 24; p += 7) {
        double s = 0, s2 = 0;
        for (int n = 0; n < 3; n++) {
            s += d2->x[n * 24 + p];
            s2 += d2->x[n * 24 + p] * d2->x[n * 24 + p];
        }
        CHECK(fabs(s / 3) < 1e-12 && fabs(s2 / 3 - 1) < 1e-12, "standardised feature %d: mean %g, var %g", p, s / 3,
              s2 / 3);
    }
    int idx[2] = {2, 0};
    double X[48];
    int y[2];
    dataset_gather(d3, idx, 2, X, y);
    CHECK(memcmp(X, d3->x + 48, 24 * sizeof(double)) == 0 && y[1] == d3->y[0], "gather rows");
    dataset_free(d);
    dataset_free(d2);
    dataset_free(d3);
    /* constant features (here 1 and 3 of 4) are dropped from train and test */
    dataset *tr = dataset_synthetic(3, 1, 4, 2, 1.0, 1, 0), *te = dataset_synthetic(2, 1, 4, 2, 1.0, 1, 1);
    for (int n = 0; n < 3; n++) tr->x[n * 4 + 1] = tr->x[n * 4 + 3] = 0.5;
    double keep_tr = tr->x[2 * 4 + 2], keep_te = te->x[1 * 4 + 2], keep0 = te->x[1 * 4 + 0];
    CHECK(dataset_drop_constant(tr, te) == 2 && tr->dim == 2 && te->dim == 2 && tr->cols == 2, "2 constant dropped");
    CHECK(tr->x[2 * 2 + 1] == keep_tr && te->x[1 * 2 + 1] == keep_te && te->x[1 * 2] == keep0, "kept features move left");
    dataset_free(tr);
    dataset_free(te);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_mlp.%d", (int)getpid());
    mkdir(tmpdir, 0777);
    test_tensor_table();
    test_every_activation();
    test_linear_closed_form();
    test_accuracy_and_labels();
    test_idx();
    test_cifar();
    test_fashion_folder();
    test_transforms();
    if (remove_tree(tmpdir) != 0) printf("could not remove %s\n", tmpdir);
    return check_summary();
}
