/* Image data for the MLP: IDX (Fashion-MNIST) through zlib, CIFAR-10/100 binary
 * files, a seeded synthetic set; pooling and standardisation. Every reader
 * frees what it holds before it reports a bad file (one user error line). */
#include "mlp.h"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

void dataset_free(dataset *d)
{
    if (!d) return;
    free(d->x);
    free(d->y);
    free(d);
}

static dataset *dataset_alloc(int n, int channels, int rows, int cols, int classes)
{
    dataset *d = xcalloc(1, sizeof *d);
    d->n = n;
    d->channels = channels;
    d->rows = rows;
    d->cols = cols;
    d->dim = channels * rows * cols;
    d->classes = classes;
    d->x = xmalloc(checked_mul(checked_mul((size_t)n, (size_t)d->dim, "dataset"), sizeof(double), "dataset"));
    d->y = xmalloc((size_t)n * sizeof(int));
    return d;
}

/* ---- gzip or plain files ----------------------------------------------------------- */

/* Opens a gzip or plain file; on failure frees `held` and stops with a user error. */
static gzFile open_gz(const char *path, void *held)
{
    if (path_is_folder(path)) {
        free(held);
        die_user("%s is a folder, expected a file", path);
    }
    errno = 0;
    gzFile f = gzopen(path, "rb");
    if (!f) {
        int e = errno;
        free(held);
        die_user("cannot read %s: %s", path, e ? strerror(e) : "zlib cannot open it");
    }
    return f;
}

/* Reads up to n bytes; returns the count, or -1 on a zlib error (corrupt gzip). */
static long read_bytes(gzFile f, unsigned char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        unsigned chunk = n - got > (1u << 30) ? (1u << 30) : (unsigned)(n - got);
        int r = gzread(f, buf + got, chunk);
        if (r < 0) return -1;
        if (r == 0) break;
        got += (size_t)r;
    }
    return (long)got;
}

static unsigned be32(const unsigned char *b)
{
    return (unsigned)b[0] << 24 | (unsigned)b[1] << 16 | (unsigned)b[2] << 8 | b[3];
}

/* Reads an IDX header: magic then ndim big-endian sizes. Returns an error text or NULL. */
static const char *idx_header(gzFile f, unsigned magic, int ndim, unsigned *dims, char *msg, size_t len)
{
    unsigned char h[16];
    long want = 4 + 4L * ndim, got = read_bytes(f, h, (size_t)want);
    if (got < 0) return "corrupt gzip data";
    if (got < 4) return "truncated header (file shorter than the 4-byte magic)";
    if (be32(h) != magic) {
        snprintf(msg, len, "wrong magic 0x%08x (expected 0x%08x, an IDX %s file)", be32(h), magic,
                 ndim == 3 ? "image" : "label");
        return msg;
    }
    if (got < want) return "truncated header";
    for (int i = 0; i < ndim; i++) dims[i] = be32(h + 4 + 4 * i);
    return NULL;
}

/* First allocation for an IDX payload: at most 64 MiB. A gzip file's length is
 * unknown until it is read, so the header's count is never trusted alone: the
 * buffer grows (doubling) only as data actually arrives, and a file that ends
 * early is "truncated" having cost no more than about twice its real data. */
#define IDX_FIRST_ALLOC ((size_t)64 << 20)

/* Whole IDX payload of exactly `bytes` bytes into a fresh buffer, or an error
 * text; data after them ("trailing bytes") is an error too. `what` names an item. */
static unsigned char *idx_payload(gzFile f, size_t bytes, const char *what, const char **err, char *msg, size_t len)
{
    size_t cap = bytes < IDX_FIRST_ALLOC ? bytes : IDX_FIRST_ALLOC, got = 0;
    unsigned char *buf = xmalloc(cap ? cap : 1);
    for (;;) {
        long r = read_bytes(f, buf + got, cap - got);
        if (r < 0) { *err = "corrupt gzip data"; break; }
        got += (size_t)r;
        if (got < cap) {
            snprintf(msg, len, "truncated: expected %zu data bytes, found %zu", bytes, got);
            *err = msg;
            break;
        }
        if (got == bytes) {
            unsigned char extra[64];
            long t = read_bytes(f, extra, sizeof extra);
            if (t < 0) *err = "corrupt gzip data";
            else if (t > 0) {
                snprintf(msg, len, "trailing bytes after the last %s (the header's count needs %zu data bytes)",
                         what, bytes);
                *err = msg;
            } else return buf;
            break;
        }
        cap = bytes - cap < cap ? bytes : 2 * cap;
        buf = xrealloc(buf, cap);
    }
    free(buf);
    return NULL;
}

dataset *idx_load(const char *images, const char *labels, int classes)
{
    char msg[256];
    unsigned dims[3], ldim[1];
    const char *err = NULL;
    gzFile f = open_gz(images, NULL);
    err = idx_header(f, 0x00000803, 3, dims, msg, sizeof msg);
    if (!err && (dims[0] == 0 || dims[1] == 0 || dims[2] == 0 || dims[1] > 4096 || dims[2] > 4096))
        err = "bad dimensions in the header (zero or above 4096)";
    if (!err && dims[0] > INT_MAX) {
        snprintf(msg, sizeof msg, "the header's %u images are more than %d", dims[0], INT_MAX);
        err = msg;
    }
    unsigned char *pix = NULL;
    if (!err) pix = idx_payload(f, (size_t)dims[0] * dims[1] * dims[2], "image", &err, msg, sizeof msg);
    gzclose(f);
    if (err) die_user("%s: %s", images, err);

    f = open_gz(labels, pix);
    err = idx_header(f, 0x00000801, 1, ldim, msg, sizeof msg);
    if (!err && ldim[0] != dims[0]) {
        snprintf(msg, sizeof msg, "has %u labels but %s has %u images (count mismatch)", ldim[0], images, dims[0]);
        err = msg;
    }
    unsigned char *lab = NULL;
    if (!err) lab = idx_payload(f, ldim[0], "label", &err, msg, sizeof msg);
    gzclose(f);
    for (unsigned n = 0; !err && n < ldim[0]; n++)
        if (lab[n] >= classes) {
            snprintf(msg, sizeof msg, "label %d of item %u is outside 0..%d", lab[n], n, classes - 1);
            err = msg;
        }
    if (err) {
        free(pix);
        free(lab);
        die_user("%s: %s", labels, err);
    }
    dataset *d = dataset_alloc((int)dims[0], 1, (int)dims[1], (int)dims[2], classes);
    for (size_t e = 0; e < (size_t)d->n * d->dim; e++) d->x[e] = pix[e] / 255.0;
    for (int n = 0; n < d->n; n++) d->y[n] = lab[n];
    free(pix);
    free(lab);
    return d;
}

/* Reads one CIFAR file and appends it to acc (NULL: a new set). On a bad file acc
 * is freed before the user error. */
static dataset *cifar_read(const char *path, int cifar100, dataset *acc)
{
    const int npix = 3 * 32 * 32, nlab = cifar100 ? 2 : 1, rec = npix + nlab, classes = cifar100 ? 100 : 10;
    if (path_is_folder(path)) {
        dataset_free(acc);
        die_user("%s is a folder, expected a file", path);
    }
    errno = 0;
    gzFile f = gzopen(path, "rb");
    if (!f) {
        int e = errno;
        dataset_free(acc);
        die_user("cannot read %s: %s", path, e ? strerror(e) : "zlib cannot open it");
    }
    /* A plain file: the record count from its size (a whole number of records,
     * the buffer allocated once). A gzip file: records are read as they come,
     * the buffer doubling from 1024 records (3 MB) only as data arrives. */
    size_t cap = 1024, n = 0;
    struct stat st;
    if (gzdirect(f) && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        if (st.st_size % rec) {
            gzclose(f);
            dataset_free(acc);
            die_user("%s: truncated: %lld bytes is not a whole number of %d-byte CIFAR-%d records "
                     "(%lld records and %lld bytes)", path, (long long)st.st_size, rec, classes,
                     (long long)st.st_size / rec, (long long)st.st_size % rec);
        }
        cap = (size_t)st.st_size / rec + 1;   /* + 1: room for the read that finds the end */
    }
    unsigned char *buf = xmalloc(cap * rec);
    char msg[256];
    const char *err = NULL;
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = xrealloc(buf, cap * rec);
        }
        long got = read_bytes(f, buf + n * rec, (size_t)rec);
        if (got < 0) { err = "corrupt gzip data"; break; }
        if (got == 0) break;
        if (got < rec) {
            snprintf(msg, sizeof msg, "truncated: record %zu has %ld of %d bytes (CIFAR-%d records are %d bytes)",
                     n, got, rec, classes, rec);
            err = msg;
            break;
        }
        const unsigned char *r = buf + n * rec;
        if (cifar100 && r[0] >= 20) {
            snprintf(msg, sizeof msg, "coarse label %d of record %zu is outside 0..19", r[0], n);
            err = msg;
            break;
        }
        if (r[nlab - 1] >= classes) {
            snprintf(msg, sizeof msg, "label %d of record %zu is outside 0..%d", r[nlab - 1], n, classes - 1);
            err = msg;
            break;
        }
        n++;
    }
    gzclose(f);
    if (!err && n == 0) err = "no records (empty file)";
    if (err) {
        free(buf);
        dataset_free(acc);
        die_user("%s: %s", path, err);
    }
    dataset *d = dataset_alloc((int)n, 3, 32, 32, classes);
    for (size_t i = 0; i < n; i++) {
        const unsigned char *r = buf + i * rec;
        d->y[i] = r[nlab - 1];
        for (int p = 0; p < npix; p++) d->x[i * npix + p] = r[nlab + p] / 255.0;
    }
    free(buf);
    if (!acc) return d;
    dataset_append(acc, d);
    return acc;
}

dataset *cifar_load(const char *path, int cifar100) { return cifar_read(path, cifar100, NULL); }

void dataset_check_same(const dataset *a, const dataset *b, const char *what_a, const char *what_b)
{
    if (a->channels != b->channels || a->rows != b->rows || a->cols != b->cols || a->classes != b->classes)
        die_user("dimension mismatch: %s is %dx%dx%d with %d classes but %s is %dx%dx%d with %d classes",
                 what_a, a->channels, a->rows, a->cols, a->classes, what_b, b->channels, b->rows, b->cols,
                 b->classes);
}

void dataset_append(dataset *a, dataset *b)
{
    if (a->channels != b->channels || a->rows != b->rows || a->cols != b->cols || a->classes != b->classes) {
        char msg[256];
        snprintf(msg, sizeof msg, "dimension mismatch: cannot append %dx%dx%d images to %dx%dx%d ones",
                 b->channels, b->rows, b->cols, a->channels, a->rows, a->cols);
        dataset_free(a);
        dataset_free(b);
        die_user("%s", msg);
    }
    size_t n = (size_t)a->n + b->n;
    a->x = xrealloc(a->x, checked_mul(n * a->dim, sizeof(double), "dataset"));
    a->y = xrealloc(a->y, n * sizeof(int));
    memcpy(a->x + (size_t)a->n * a->dim, b->x, (size_t)b->n * b->dim * sizeof(double));
    memcpy(a->y + a->n, b->y, (size_t)b->n * sizeof(int));
    a->n = (int)n;
    dataset_free(b);
}

dataset *dataset_synthetic_channels(int n, int channels, int rows, int cols, int classes, double noise,
                                    unsigned long seed, int stream)
{
    if (n < 1 || channels < 1 || rows < 1 || cols < 1 || classes < 2) DIE("dataset_synthetic: bad sizes");
    dataset *d = dataset_alloc(n, channels, rows, cols, classes);
    double *mean = xmalloc((size_t)classes * d->dim * sizeof(double));
    /* the class means from the seed's first stream, each split's samples from one of its own */
    gsl_rng *r = rng_new(seed_hash(SEED_RUN, seed, 0, 0));
    for (size_t e = 0; e < (size_t)classes * d->dim; e++) mean[e] = rng_gaussian(r, 1.0);
    rng_free(r);
    r = rng_new(seed_hash(SEED_RUN, seed, 1, (unsigned long)stream));
    for (int i = 0; i < n; i++) {
        int c = (int)rng_int(r, (unsigned long)classes);
        d->y[i] = c;
        for (int p = 0; p < d->dim; p++)
            d->x[(size_t)i * d->dim + p] = mean[(size_t)c * d->dim + p] + rng_gaussian(r, noise);
    }
    rng_free(r);
    free(mean);
    return d;
}

dataset *dataset_synthetic(int n, int rows, int cols, int classes, double noise, unsigned long seed, int stream)
{
    return dataset_synthetic_channels(n, 1, rows, cols, classes, noise, seed, stream);
}

/* ---- named sets --------------------------------------------------------------------- */

const char *dataset_default_dir(const char *name)
{
    return strcmp(name, "fashion-mnist") == 0 ? "/usr/share/datasets/fashion-mnist" : NULL;
}

/* dir/name (or dir/name.gz when try_gz and only that exists) into out; 0 if neither exists. */
static int find_file(const char *dir, const char *name, int try_gz, char *out, size_t len)
{
    struct stat st;
    snprintf(out, len, "%s/%s", dir, name);
    if (stat(out, &st) == 0) return 1;
    snprintf(out, len, "%s/%s.gz", dir, name);
    if (try_gz && stat(out, &st) == 0) return 1;
    snprintf(out, len, "%s/%s%s", dir, name, try_gz ? "[.gz]" : "");
    return 0;
}

dataset *dataset_load(const char *name, const char *dir, int train, unsigned long seed)
{
    if (strcmp(name, "synthetic") == 0)
        return dataset_synthetic(train ? 2000 : 1000, 8, 8, 10, 1.5, seed, train ? 0 : 1);
    if (strcmp(name, "synthetic-cifar10") == 0 || strcmp(name, "synthetic-cifar100") == 0)
        return dataset_synthetic_channels(train ? SYNTHETIC_CIFAR_TRAIN : SYNTHETIC_CIFAR_TEST, 3, 32, 32,
                                          strcmp(name, "synthetic-cifar10") == 0 ? 10 : 100, SYNTHETIC_CIFAR_NOISE,
                                          seed, train ? 0 : 1);
    int fm = strcmp(name, "fashion-mnist") == 0, c100 = strcmp(name, "cifar100") == 0;
    if (!fm && !c100 && strcmp(name, "cifar10") != 0)
        die_user("unknown data set '%s' (expected fashion-mnist, cifar10, cifar100, synthetic, synthetic-cifar10 or "
                 "synthetic-cifar100)", name);
    if (!dir) dir = dataset_default_dir(name);
    if (!dir) die_user("--data %s needs --data-dir (the folder holding its binary files)", name);
    char path[1024], path2[1024];
    if (fm) {
        const char *pre = train ? "train" : "t10k";
        char a[64], b[64];
        snprintf(a, sizeof a, "%s-images-idx3-ubyte", pre);
        snprintf(b, sizeof b, "%s-labels-idx1-ubyte", pre);
        if (!find_file(dir, a, 1, path, sizeof path) || !find_file(dir, b, 1, path2, sizeof path2))
            die_user("cannot find %s (install dataset-fashion-mnist or point --data-dir at the IDX files)",
                     find_file(dir, a, 1, path, sizeof path) ? path2 : path);
        return idx_load(path, path2, 10);
    }
    dataset *d = NULL;
    int nfiles = c100 ? 1 : train ? 5 : 1;
    for (int i = 0; i < nfiles; i++) {
        char f[64];
        if (c100) snprintf(f, sizeof f, "%s.bin", train ? "train" : "test");
        else if (train) snprintf(f, sizeof f, "data_batch_%d.bin", i + 1);
        else snprintf(f, sizeof f, "test_batch.bin");
        if (!find_file(dir, f, 0, path, sizeof path)) {
            dataset_free(d);
            die_user("cannot find %s (the folder given for CIFAR-%d must hold its binary files: %s)", path,
                     c100 ? 100 : 10, c100 ? "train.bin and test.bin" : "data_batch_1..5.bin and test_batch.bin");
        }
        d = cifar_read(path, c100, d);
    }
    return d;
}

/* ---- transforms ------------------------------------------------------------------------ */

void dataset_pool(dataset *d, int k)
{
    if (k <= 1) return;
    if (d->rows % k || d->cols % k)
        die_user("--pool %d does not divide the %dx%d images", k, d->rows, d->cols);
    int r2 = d->rows / k, c2 = d->cols / k, dim2 = d->channels * r2 * c2;
    double *x2 = xmalloc(checked_mul((size_t)d->n * dim2, sizeof(double), "pooled dataset"));
    for (int n = 0; n < d->n; n++)
        for (int ch = 0; ch < d->channels; ch++)
            for (int a = 0; a < r2; a++)
                for (int b = 0; b < c2; b++) {
                    double s = 0;
                    for (int u = 0; u < k; u++)
                        for (int v = 0; v < k; v++)
                            s += d->x[(size_t)n * d->dim + ((size_t)ch * d->rows + a * k + u) * d->cols + b * k + v];
                    x2[(size_t)n * dim2 + ((size_t)ch * r2 + a) * c2 + b] = s / (k * k);
                }
    free(d->x);
    d->x = x2;
    d->rows = r2;
    d->cols = c2;
    d->dim = dim2;
}

void dataset_standardize(dataset *train, dataset *test)
{
    int dim = train->dim;
    double *mean = xcalloc(dim, sizeof(double)), *sd = xcalloc(dim, sizeof(double));
    for (int n = 0; n < train->n; n++)
        for (int p = 0; p < dim; p++) mean[p] += train->x[(size_t)n * dim + p];
    for (int p = 0; p < dim; p++) mean[p] /= train->n;
    for (int n = 0; n < train->n; n++)
        for (int p = 0; p < dim; p++) {
            double e = train->x[(size_t)n * dim + p] - mean[p];
            sd[p] += e * e;
        }
    double mx = 0;
    for (int p = 0; p < dim; p++) {
        sd[p] = sqrt(sd[p] / train->n);
        if (sd[p] > mx) mx = sd[p];
    }
    double floor_sd = mx > 0 ? 1e-3 * mx : 1;
    for (int p = 0; p < dim; p++) if (sd[p] < floor_sd) sd[p] = floor_sd;
    dataset *sets[2] = {train, test};
    for (int s = 0; s < 2; s++) {
        dataset *d = sets[s];
        if (!d) continue;
        for (int n = 0; n < d->n; n++)
            for (int p = 0; p < dim; p++) {
                double *x = &d->x[(size_t)n * dim + p];
                *x = (*x - mean[p]) / sd[p];
            }
    }
    free(mean);
    free(sd);
}

int dataset_drop_constant(dataset *train, dataset *test)
{
    int dim = train->dim, kept = 0;
    int *keep = xmalloc((size_t)dim * sizeof(int));
    for (int p = 0; p < dim; p++) {
        keep[p] = 0;
        for (int n = 1; n < train->n && !keep[p]; n++)
            keep[p] = train->x[(size_t)n * dim + p] != train->x[p];
        kept += keep[p];
    }
    dataset *sets[2] = {train, test};
    for (int s = 0; s < 2; s++) {
        dataset *d = sets[s];
        if (!d) continue;
        for (int n = 0; n < d->n; n++) {
            const double *src = d->x + (size_t)n * dim;
            double *dst = d->x + (size_t)n * kept;
            for (int p = 0, q = 0; p < dim; p++)
                if (keep[p]) dst[q++] = src[p];   /* dst never passes src: in place is safe */
        }
        d->channels = 1;
        d->rows = 1;
        d->cols = d->dim = kept;
    }
    free(keep);
    return dim - kept;
}

void dataset_gather(const dataset *d, const int *idx, int n, double *X, int *y)
{
    for (int i = 0; i < n; i++) {
        memcpy(X + (size_t)i * d->dim, d->x + (size_t)idx[i] * d->dim, (size_t)d->dim * sizeof(double));
        y[i] = d->y[idx[i]];
    }
}
