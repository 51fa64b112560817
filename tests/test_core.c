/* Tests of core/: .npy, CSV, atomic output, RNG, CLI lists, spectra, κ, τ, partitions. */
#include "check.h"
#include "core/model.h"
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[256];

static char *tmp_path(const char *name) { return path_join(tmpdir, name); }

static int file_exists(const char *p) { struct stat st; return stat(p, &st) == 0; }

static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void test_npy_round_trip(void)
{
    double a[6] = {1.5, -2, 3e-300, 4e300, 0, -0.25};
    size_t shape[2] = {2, 3};
    char *p = tmp_path("a.npy");
    npy_write(p, a, 2, shape);
    int ndim;
    size_t got[4];
    double *b = npy_read(p, &ndim, got);
    CHECK(ndim == 2 && got[0] == 2 && got[1] == 3, "shape %d (%zu,%zu)", ndim, got[0], got[1]);
    CHECK(memcmp(a, b, sizeof a) == 0, "values differ after round trip");
    free(b);
    /* the header is what numpy writes: 64-byte aligned, shape tuple, '\n' last */
    FILE *fp = fopen(p, "rb");
    unsigned char head[128];
    size_t n = fread(head, 1, sizeof head, fp);
    fclose(fp);
    size_t hlen = head[8] | head[9] << 8;
    CHECK(n == 128 && (10 + hlen) % 64 == 0 && head[10 + hlen - 1] == '\n', "header length %zu", hlen);
    CHECK(memcmp(head + 10, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 59) == 0,
          "header dict '%.60s'", head + 10);
    free(p);

    double v[3] = {1, 2, 3};
    size_t s1[1] = {3};
    p = tmp_path("v.npy");
    npy_write(p, v, 1, s1);
    fp = fopen(p, "rb");
    n = fread(head, 1, 80, fp);
    fclose(fp);
    CHECK(strstr((char *)head + 10, "'shape': (3,), }") != NULL, "1-D shape must be written (3,)");
    free(p);
}

/* A file written byte by byte as numpy 1.x writes np.save(np.arange(4.).reshape(2,2)). */
static void write_raw_npy(const char *path, const char *dict, const double *data, size_t count, size_t keep_bytes)
{
    FILE *fp = fopen(path, "wb");
    size_t len = strlen(dict);
    fwrite("\x93NUMPY\x01\x00", 1, 8, fp);
    fputc((int)(len & 0xff), fp);
    fputc((int)(len >> 8), fp);
    fwrite(dict, 1, len, fp);
    size_t bytes = count * sizeof(double);
    fwrite(data, 1, keep_bytes < bytes ? keep_bytes : bytes, fp);
    fclose(fp);
}

static void test_npy_reader_hand_written(void)
{
    const double d[4] = {0, 1, 2, 3};
    /* 10 + 118 = 128 bytes of header, the 16-byte alignment of older numpy */
    char dict[119];
    snprintf(dict, sizeof dict, "%-117s\n", "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }");
    char *p = tmp_path("hand.npy");
    write_raw_npy(p, dict, d, 4, 32);
    int ndim;
    size_t shape[4];
    double *x = npy_read(p, &ndim, shape);
    CHECK(ndim == 2 && shape[0] == 2 && shape[1] == 2 && x[3] == 3.0, "hand-written file read as (%zu,%zu)",
          shape[0], shape[1]);
    free(x);

    write_raw_npy(p, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }\n", d, 4, 24);
    EXPECT_USER_ERROR(x = npy_read(p, &ndim, shape), "truncated data");
    write_raw_npy(p, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }\n", d, 4, 32);
    EXPECT_USER_ERROR(x = npy_read(p, &ndim, shape), "float64");
    write_raw_npy(p, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }\n", d, 4, 32);
    EXPECT_USER_ERROR(x = npy_read(p, &ndim, shape), "C order");
    FILE *fp = fopen(p, "wb");
    fputs("not numpy at all", fp);
    fclose(fp);
    EXPECT_USER_ERROR(x = npy_read(p, &ndim, shape), "bad magic");
    char *missing = tmp_path("missing.npy");
    EXPECT_USER_ERROR(x = npy_read(missing, &ndim, shape), "cannot read");
    free(missing);
    free(p);
}

/* Hostile .npy headers: sizes checked against the file before allocating, the
 * dict parsed by key, trailing bytes refused. */
static void write_npy_bytes(const char *path, const char *dict, size_t data_bytes)
{
    FILE *fp = fopen(path, "wb");
    size_t len = strlen(dict);
    fwrite("\x93NUMPY\x01\x00", 1, 8, fp);
    fputc((int)(len & 0xff), fp);
    fputc((int)(len >> 8), fp);
    fwrite(dict, 1, len, fp);
    for (size_t i = 0; i < data_bytes; i++) fputc(0, fp);
    fclose(fp);
}

static void npy_through_pipe(const char *fifo, const char *dict, size_t bytes, const char *want)
{
    unlink(fifo);
    if (mkfifo(fifo, 0600) != 0) DIE("mkfifo failed");
    pid_t pid = fork();
    if (pid == 0) {
        write_npy_bytes(fifo, dict, bytes);
        _exit(0);
    }
    int ndim;
    size_t shape[4];
    double *x = NULL;
    EXPECT_USER_ERROR(x = npy_read(fifo, &ndim, shape), want);
    (void)x;
    waitpid(pid, NULL, 0);
}

static void test_npy_hostile(void)
{
    char *p = tmp_path("hostile.npy");
    int ndim;
    size_t shape[4];
    double *x = NULL;
    /* a header claiming 10^12 values over 32 bytes: refused before any allocation */
    write_npy_bytes(p, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }\n", 32);
    EXPECT_USER_ERROR(x = npy_read(p, &ndim, shape), "needs 8000000000000 data bytes but the file holds 32");
    CHECK(strstr(check_msg, p) != NULL, "the message names the file: %s", check_msg);
    write_npy_bytes(p, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }\n", 40);
    EXPECT_USER_ERROR(x = npy_read(p, &ndim, shape), "trailing bytes");
    /* '<i4' is the descr; '<f8' elsewhere must not fool the parser */
    write_npy_bytes(p, "{'fortran_order': False, 'shape': (2, 2), 'descr': '<i4'}  # 'descr': '<f8'\n", 16);
    EXPECT_USER_ERROR(x = npy_read(p, &ndim, shape), "float64");
    write_npy_bytes(p, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }  # 'descr': '<i4'\n", 32);
    EXPECT_USER_ERROR(x = npy_read(p, &ndim, shape), "text after the closing");
    write_npy_bytes(p, "{'fortran_order': False, 'shape': (2, 2), 'descr': '<i4', 'x': \"'descr': '<f8'\"}\n", 16);
    EXPECT_USER_ERROR(x = npy_read(p, &ndim, shape), "float64");
    write_npy_bytes(p, "{'descr': '<f8', 'shape': (2, 2), 'fortran_order': True, 'note': 'fortran_order': False}\n", 32);
    EXPECT_USER_ERROR(x = npy_read(p, &ndim, shape), "C order");
    write_npy_bytes(p, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), 'extra': 1}\n", 32);
    EXPECT_USER_ERROR(x = npy_read(p, &ndim, shape), "unknown key 'extra'");
    write_npy_bytes(p, "{'descr': '<f8', 'fortran_order': False}\n", 32);
    EXPECT_USER_ERROR(x = npy_read(p, &ndim, shape), "no shape");
    write_npy_bytes(p, "{'descr': '<f8', 'fortran_order': False, 'shape': (4), }\n", 32);
    EXPECT_USER_ERROR(x = npy_read(p, &ndim, shape), "not a tuple");
    write_npy_bytes(p, "{'descr': '<f8', 'fortran_order': False, 'shape': (-4,), }\n", 32);
    EXPECT_USER_ERROR(x = npy_read(p, &ndim, shape), "bad shape");
    write_npy_bytes(p, "{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (4,), }\n", 32);
    EXPECT_USER_ERROR(x = npy_read(p, &ndim, shape), "twice");
    write_npy_bytes(p, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2, 1, 1, 1), }\n", 32);
    EXPECT_USER_ERROR(x = npy_read(p, &ndim, shape), "more than 4");
    /* any order of keys, double quotes, no trailing comma: what literal_eval accepts */
    write_npy_bytes(p, "{\"shape\": (2,2), \"fortran_order\": False, \"descr\": \"<f8\"}\n", 32);
    x = npy_read(p, &ndim, shape);
    CHECK(ndim == 2 && shape[0] == 2 && shape[1] == 2, "keys in another order read as (%zu,%zu)", shape[0], shape[1]);
    free(x);
    write_npy_bytes(p, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 3), }\n", 0);
    x = npy_read(p, &ndim, shape);
    CHECK(ndim == 2 && shape[0] == 0 && shape[1] == 3, "an empty (0, 3) array reads");
    free(x);
    EXPECT_USER_ERROR(x = npy_read(tmpdir, &ndim, shape), "is a folder, expected a file");

    /* Through a pipe (no length known upfront): a lying header ends in a truncation
     * error after reading what is there, with no 8 TB allocation; extra data is refused. */
    char *fifo = tmp_path("fifo.npy");
    npy_through_pipe(fifo, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }\n", 2400000,
                     "truncated data (300000 of 1000000000000 values)");
    npy_through_pipe(fifo, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }\n", 32, "trailing bytes");
    unlink(fifo);
    free(fifo);
    free(p);
}

static void test_csv(void)
{
    char *p = tmp_path("t.csv");
    outfile *f = csv_open(p, "a,b");
    csv_row(f, "%d,%g", 1, 0.5);
    csv_close(f);
    FILE *fp = fopen(p, "r");
    char buf[64] = "";
    size_t n = fread(buf, 1, sizeof buf - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    CHECK(strcmp(buf, "a,b\n1,0.5\n") == 0, "csv content '%s'", buf);
    free(p);
}

static void test_atomic_output(void)
{
    char *sub = tmp_path("atomic");
    ensure_dir(sub);
    char *p = path_join(sub, "out.csv");
    /* a child that fails midway through writing must leave nothing behind */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stderr)) _exit(3);
        outfile *f = csv_open(p, "x");
        for (int i = 0; i < 1000; i++) csv_row(f, "%d", i);
        fflush(outfile_fp(f));
        die_user("simulated failure midway");
    }
    int status;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 2, "child exit status %d", WEXITSTATUS(status));
    CHECK(!file_exists(p) && count_files(sub) == 0, "%d files left behind", count_files(sub));
    /* discard removes the temporary; commit creates exactly the file */
    outfile *f = outfile_open(p);
    outfile_discard(f);
    CHECK(count_files(sub) == 0, "discard left %d files", count_files(sub));
    f = outfile_open(p);
    fputs("done\n", outfile_fp(f));
    CHECK(!file_exists(p), "file visible before commit");
    outfile_commit(f);
    CHECK(file_exists(p) && count_files(sub) == 1, "commit gave %d files", count_files(sub));
    EXPECT_USER_ERROR(outfile_open("/nonexistent-dir/x.csv"), "cannot write");
    EXPECT_USER_ERROR(ensure_dir("/proc/version/sub"), "cannot create");
    free(p);
    free(sub);
}

static void test_rng(void)
{
    gsl_rng *a = rng_new(42), *b = rng_new(42), *c = rng_new(43);
    int same = 1, differ = 0;
    for (int i = 0; i < 100; i++) {
        unsigned long x = gsl_rng_get(a), y = gsl_rng_get(b), z = gsl_rng_get(c);
        same &= x == y;
        differ += x != z;
    }
    CHECK(same, "same seed must give the same stream");
    CHECK(differ > 90, "different seeds gave %d/100 different draws", differ);
    double mean = 0;
    for (int i = 0; i < 20000; i++) mean += rng_gaussian(a, 2.0) / 20000;
    CHECK(fabs(mean) < 0.1, "gaussian mean %g", mean);
    double u = rng_uniform_in(a, -1, 1);
    CHECK(u >= -1 && u < 1, "uniform %g", u);
    rng_free(a);
    rng_free(b);
    rng_free(c);
    /* rng_int: GSL's draws within one draw's range; beyond it (2^32: a text of more tokens)
     * two draws, where gsl_rng_uniform_int would abort the program */
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937), *t = rng_new(7);
    gsl_rng_set(g, 7);
    int kept = 1;
    for (int i = 0; i < 50; i++) kept &= rng_int(t, 1000003) == gsl_rng_uniform_int(g, 1000003);
    CHECK(kept, "rng_int below 2^32 draws what GSL draws");
    const unsigned long n = 1UL << 40;
    int above = 0, inside = 1;
    for (int i = 0; i < 64; i++) {
        unsigned long x = rng_int(t, n);
        inside &= x < n;
        above += x >= 1UL << 32;
    }
    CHECK(inside && above > 32, "rng_int(2^40): %d of 64 draws above 2^32, all below 2^40: %d", above, inside);
    gsl_rng_free(g);
    rng_free(t);
}

/* The first draws of seed s; two seeds' streams are the same when these are. */
static void first_draws(unsigned long seed, unsigned long *x, int n)
{
    gsl_rng *r = rng_new(seed);
    for (int i = 0; i < n; i++) x[i] = gsl_rng_get(r);
    rng_free(r);
}

/* GSL maps seed 0 to 4357 and reads only the low 32 bits: rng_new must not.
 * Seeds 1 .. 2^32-1 keep GSL's own stream (every result made with them stays). */
static void test_rng_seed_map(void)
{
    enum { N = 8 };
    const unsigned long seeds[] = {0, 4357, 1, 0x100000000UL, 0x100000001UL, 0x1000010c5UL, ~0UL, 0xffffffffUL};
    const int ns = sizeof seeds / sizeof *seeds;
    unsigned long x[sizeof seeds / sizeof *seeds][N];
    for (int i = 0; i < ns; i++) first_draws(seeds[i], x[i], N);
    int collisions = 0;
    for (int i = 0; i < ns; i++)
        for (int j = i + 1; j < ns; j++) collisions += memcmp(x[i], x[j], sizeof x[i]) == 0;
    CHECK(collisions == 0, "%d pairs of distinct seeds gave the same stream", collisions);
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(g, 12345);
    unsigned long y[N];
    first_draws(12345, y, N);
    int same = 1;
    for (int i = 0; i < N; i++) same &= gsl_rng_get(g) == y[i];
    CHECK(same, "a 32-bit seed must keep GSL's stream");
    gsl_rng_free(g);
    unsigned long z[N];
    first_draws(0, z, N);
    CHECK(memcmp(z, x[0], sizeof z) == 0, "seed 0 twice must give the same stream");
    double mean = 0;
    gsl_rng *big = rng_new(0x123456789abUL);
    for (int i = 0; i < 20000; i++) mean += gsl_rng_uniform(big) / 20000;
    CHECK(fabs(mean - 0.5) < 0.01, "a mixed state still draws uniformly: mean %g", mean);
    rng_free(big);
}

static void test_cli_lists(void)
{
    double_list d;
    int_list l;
    parse_double_list("k", "10,1e2,500", &d);
    CHECK(d.n == 3 && d.v[1] == 100 && d.v[2] == 500, "parsed %d values", d.n);
    parse_int_list("d", "2,5", &l);
    CHECK(l.n == 2 && l.v[0] == 2 && l.v[1] == 5, "parsed %d ints", l.n);
    EXPECT_USER_ERROR(parse_double_list("k", "10,abc", &d), "--k expects comma-separated numbers");
    EXPECT_USER_ERROR(parse_int_list("d", "2.5", &l), "integers");
    /* subnormals are numbers (strtod's ERANGE on them is not an error); overflow
     * and underflow to zero are not */
    parse_double_list("k", "1e-320,-4.9e-324,2", &d);
    CHECK(d.n == 3 && d.v[0] > 0 && d.v[0] < 1e-310 && d.v[1] < 0, "subnormals parsed (%g, %g)", d.v[0], d.v[1]);
    /* an empty item is no value (issue 27 item 12: "1,,2" was [1, 2]); an integer is written
     * as one ("1e3" was 1000; " 2", "+2" read as 2) */
    static const char *const bad_doubles[] = {"1e400", "1e-400", "-1e400", "1,,2", ""};
    static const char *const bad_ints[] = {"1,,2", ",1", "1,", "1e3", "1, 2", "+2", "4294967297"};
    for (volatile size_t i = 0; i < sizeof bad_doubles / sizeof *bad_doubles; i++)
        EXPECT_USER_ERROR(parse_double_list("k", bad_doubles[i], &d), "--k expects comma-separated numbers");
    for (volatile size_t i = 0; i < sizeof bad_ints / sizeof *bad_ints; i++)
        EXPECT_USER_ERROR(parse_int_list("seeds", bad_ints[i], &l), "--seeds expects comma-separated integers");
    EXPECT_USER_ERROR(parse_int_list("seeds", "1,,2", &l), "got '1,,2'");
    parse_int_list("seeds", "-3,0,17", &l);
    CHECK(l.n == 3 && l.v[0] == -3 && l.v[1] == 0 && l.v[2] == 17, "integers parsed");
}

/* The whole parser in-process: each argv must fail with the message named. */
static double cli_eps;
static int cli_n, cli_flag;
static void run_cli(int argc, const char **argv)
{
    const cli_opt opts[] = {
        {"eps", OPT_DOUBLE, &cli_eps, "a number"},
        {"epsilon-list", OPT_STRING, NULL, "unused"},
        {"n", OPT_INT, &cli_n, "an integer"},
        {"flag", OPT_FLAG, &cli_flag, "a flag"},
    };
    cli_parse(argc, (char **)argv, "test", opts, 4);
}

static void test_cli_parse(void)
{
    const char *a1[] = {"prog", "--quiet", "-xy"};
    EXPECT_USER_ERROR(run_cli(3, a1), "unknown option -x ");
    const char *a2[] = {"prog", "--eps", "1e-320", "-q"};
    EXPECT_USER_ERROR(run_cli(4, a2), "unknown option -q ");
    CHECK(cli_eps > 0 && cli_eps < 1e-310, "--eps 1e-320 parsed as a subnormal (%g)", cli_eps);
    const char *a3[] = {"prog", "--quiet=1"};
    EXPECT_USER_ERROR(run_cli(2, a3), "option --quiet takes no value");
    const char *a4[] = {"prog", "--flag=1"};
    EXPECT_USER_ERROR(run_cli(2, a4), "option --flag takes no value");
    const char *a5[] = {"prog", "--n"};
    EXPECT_USER_ERROR(run_cli(2, a5), "option --n needs a value");
    const char *a6[] = {"prog", "--bogus=3"};
    EXPECT_USER_ERROR(run_cli(2, a6), "unknown option --bogus ");
    const char *a7[] = {"prog", "--ep", "3"};
    EXPECT_USER_ERROR(run_cli(3, a7), "ambiguous option --ep (could be --eps, --epsilon-list)");
    const char *a8[] = {"prog", "--eps", "1e400"};
    EXPECT_USER_ERROR(run_cli(3, a8), "--eps expects a number");
    const char *a9[] = {"prog", "--eps", "1e-400"};
    EXPECT_USER_ERROR(run_cli(3, a9), "--eps expects a number");
    const char *a11[] = {"prog", "--n", " 5"};
    EXPECT_USER_ERROR(run_cli(3, a11), "--n expects an integer");
    const char *a12[] = {"prog", "--n", "+5"};
    EXPECT_USER_ERROR(run_cli(3, a12), "--n expects an integer");
    const char *a10[] = {"prog", "--flag", "-\x01"};
    EXPECT_USER_ERROR(run_cli(3, a10), "unknown option character 0x01");
    const char *ok[] = {"prog", "--eps=-2.5e-315", "--n", "7", "--flag"};
    run_cli(5, ok);
    CHECK(cli_eps < 0 && cli_eps > -1e-310 && cli_n == 7 && cli_flag == 1, "a good command line parsed");
    core_quiet = 0;
}

/* Symmetric A = R diag(a, b) Rᵀ for a rotation by angle t. */
static void rotated2(double a, double b, double t, double *A)
{
    double c = cos(t), s = sin(t);
    A[0] = a * c * c + b * s * s;
    A[1] = A[2] = (a - b) * c * s;
    A[3] = a * s * s + b * c * c;
}

static void test_spectra(void)
{
    double D[9] = {4, 0, 0, 0, 0.5, 0, 0, 0, 2};
    double w[3];
    sym_eigvals(3, D, w);
    CHECK(w[0] == 0.5 && w[1] == 2 && w[2] == 4, "diag eigenvalues %g %g %g", w[0], w[1], w[2]);
    CHECK_CLOSE(kappa_spd(3, D), 8.0, 1e-14, "kappa_spd diag");
    CHECK_CLOSE(kappa_svd(3, 3, D), 8.0, 1e-14, "kappa_svd diag");
    CHECK_CLOSE(tau_ratio(3, D), 1.0, 0, "tau of a diagonal matrix");
    double ext[1];
    CHECK(sym_eigvals_range(3, D, 3, 3, ext) == 1 && ext[0] == 4, "largest via range %g", ext[0]);
    CHECK(sym_eigvals_range(3, D, 1, 1, ext) == 1 && ext[0] == 0.5, "smallest via range %g", ext[0]);

    double A[4], a = 7, b = 0.5, t = 0.3;
    rotated2(a, b, t, A);
    sym_eigvals(2, A, w);
    CHECK_CLOSE(w[0], b, 1e-14, "rotated 2x2 small eigenvalue");
    CHECK_CLOSE(w[1], a, 1e-14, "rotated 2x2 large eigenvalue");
    CHECK_CLOSE(kappa_spd(2, A), a / b, 1e-13, "rotated 2x2 kappa");
    double tau = (a + b) / (a + b + 2 * fabs((a - b) * cos(t) * sin(t)));
    CHECK_CLOSE(tau_ratio(2, A), tau, 1e-15, "rotated 2x2 tau");

    /* indefinite: eigenvalues {-3, 0.5, 2} in a rotated basis */
    double B[9] = {0}, Q[9], QB[9];
    double ev[3] = {-3, 0.5, 2};
    double c = cos(0.7), s = sin(0.7);
    double R[9] = {c, -s, 0, s * 0.6, c * 0.6, -0.8, s * 0.8, c * 0.8, 0.6}; /* orthogonal */
    memcpy(Q, R, sizeof Q);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) QB[i * 3 + j] = Q[i * 3 + j] * ev[j];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++) B[i * 3 + j] += QB[i * 3 + k] * Q[j * 3 + k];
    spectrum sp = sym_spectrum(3, B);
    CHECK(sp.nneg == 1, "negative count %d", sp.nneg);
    CHECK_CLOSE(sp.kappa, 3 / 0.5, 1e-13, "indefinite |lambda| ratio");
    CHECK_CLOSE(sp.lmin, -3, 1e-14, "indefinite lmin");
    CHECK_CLOSE(sp.absmin, 0.5, 1e-14, "indefinite absmin");
    EXPECT_USER_ERROR(kappa_spd(3, B), "not positive definite");

    /* differences of arrays */
    double da[3] = {1, -2, 3}, db[3] = {1, -1, 5};
    CHECK(max_abs_diff(3, da, db) == 2, "max_abs_diff %g", max_abs_diff(3, da, db));
    CHECK_CLOSE(rel_max_diff(3, da, db), 2.0 / 5, 1e-15, "rel_max_diff");
    CHECK_CLOSE(rel_l2_diff(3, da, db), sqrt(5.0 / 27), 1e-15, "rel_l2_diff");
    CHECK(rel_l2_diff(3, da, da) == 0 && rel_max_diff(3, da, da) == 0, "da vs itself");
    double z[3] = {0, 0, 0};
    CHECK(rel_max_diff(3, da, z) == 3, "relative to zero is absolute");
    CHECK_CLOSE(quantile(da, 3, 0.5), 1, 0, "median of {1,-2,3}");
    CHECK_CLOSE(quantile(da, 3, 0.25), -0.5, 1e-15, "quartile by linear interpolation");
    CHECK(da[1] == -2, "quantile leaves its input unsorted");

    /* a non-symmetric case: [[1,1],[0,1]] has singular values φ and 1/φ */
    double J[4] = {1, 1, 0, 1}, phi = (1 + sqrt(5)) / 2;
    CHECK_CLOSE(kappa_svd(2, 2, J), phi * phi, 1e-14, "kappa_svd of a shear");
}

/* A fake Transformer-like tensor table to test partitions. */
static model fake_model(tensor_info *t, int n)
{
    model m = {0};
    m.kind = "fake";
    m.tensors = t;
    m.ntensors = n;
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        t[i].offset = off;
        off += tensor_size(&t[i]);
    }
    m.P = off;
    return m;
}

static void test_partitions(void)
{
    tensor_info t[] = {
        {"wte", ROLE_EMBED, 0, 8, 4, 1, -1},
        {"q", ROLE_QUERY, 0, 4, 4, 2, 0},
        {"v", ROLE_VALUE, 0, 4, 4, 2, 0},
        {"ln", ROLE_NORM, 0, 4, 1, 1, 0},
        {"b", ROLE_BIAS, 0, 4, 1, 1, 0},
    };
    model m = fake_model(t, 5);
    model_check_tensors(&m);
    partition *p = partition_alg3(&m, 0);
    CHECK(p->nblocks == 8 + 2 + 4 + 1 + 1, "alg3 blocks %d", p->nblocks);
    partition_check_cover(p, m.P, "alg3");
    CHECK(p->b[8].n == 8 && p->b[9].start == t[1].offset + 8, "query head 1 starts at %zu", p->b[9].start);
    partition_free(p);
    p = partition_alg3(&m, 1);
    CHECK(p->nblocks == 8 + 2 + 1 + 1 + 1, "alg3 with whole value: %d blocks", p->nblocks);
    partition_free(p);
    p = partition_alg2(&m);
    CHECK(p->nblocks == 5, "alg2 blocks %d", p->nblocks);
    partition_free(p);
    for (int s = 0; s < SPLIT_COUNT; s++) {
        if (s == SPLIT_HEADS) continue; /* embed has one head; fine, but covered above */
        p = partition_uniform(&m, s);
        partition_check_cover(p, m.P, split_name(s));
        CHECK(1, "uniform %s covers", split_name(s));
        partition_free(p);
    }
    p = partition_uniform(&m, SPLIT_COLS);
    double x[128], g[8];
    for (int i = 0; i < 128; i++) x[i] = i;
    block_gather(&p->b[1], x, g); /* embed column 1: rows 0..7 */
    CHECK(g[0] == 1 && g[1] == 5 && g[7] == 29, "column gather %g %g %g", g[0], g[1], g[7]);
    partition_free(p);

    partition *bad = partition_new();
    partition_add(bad, 0, m.P - 1, 1, -1, "short");
    EXPECT_USER_ERROR(partition_check_cover(bad, m.P, "missing"), "in no block");
    partition_add(bad, 0, 2, 1, -1, "again");
    EXPECT_USER_ERROR(partition_check_cover(bad, m.P, "repeat"), "in two blocks");
    partition_free(bad);

    tensor_info u[] = {{"w", ROLE_MATRIX, 0, 2, 2, 1, -1}};
    model mu = fake_model(u, 1);
    EXPECT_USER_ERROR(partition_alg3(&mu, 0), "does not cover");

    char *pf = tmp_path("part.txt");
    FILE *fp = fopen(pf, "w");
    fprintf(fp, "# a partition file\nfirst 0 4\nrest 4 %zu\n", m.P - 4);
    fclose(fp);
    p = partition_read(pf, &m);
    CHECK(p->nblocks == 2 && p->b[1].n == m.P - 4, "read %d blocks", p->nblocks);
    partition_free(p);
    fp = fopen(pf, "w");
    fprintf(fp, "first 0 4\nrest 3 %zu\n", m.P - 3);
    fclose(fp);
    EXPECT_USER_ERROR(partition_read(pf, &m), "in two blocks");
    p = partition_read_blocks(pf, &m); /* overlapping blocks: read as they are */
    CHECK(p->nblocks == 2 && p->b[1].start == 3, "read_blocks keeps overlapping blocks (%d)", p->nblocks);
    partition_free(p);
    fp = fopen(pf, "w");
    fprintf(fp, "first 0 4\n");
    fclose(fp);
    EXPECT_USER_ERROR(partition_read(pf, &m), "in no block");
    p = partition_read_blocks(pf, &m); /* a part of the model only */
    CHECK(p->nblocks == 1 && p->b[0].n == 4, "read_blocks reads a partial partition (%d)", p->nblocks);
    partition_free(p);
    fp = fopen(pf, "w");
    fprintf(fp, "# nothing\n");
    fclose(fp);
    EXPECT_USER_ERROR(partition_read_blocks(pf, &m), "holds no block");
    fp = fopen(pf, "w");
    fprintf(fp, "first zero 4\n");
    fclose(fp);
    EXPECT_USER_ERROR(partition_read(pf, &m), "expected 'name start n");
    char *none = tmp_path("none.txt");
    EXPECT_USER_ERROR(partition_read(none, &m), "cannot read partition file");

    /* Hostile partition files: each a user error naming its line. P = 72:
     * wte 0..31, q 32..47, v 48..63, ln 64..67, b 68..71. */
    struct { const char *text, *want; } badp[] = {
        {"first 0 4 1 junk\nrest 4 68\n", ":1: extra field 'junk'"},
        {"first 0 4x\n", ":1: expected 'name start n"},
        {"first 0 36 -1\n", ":1: expected 'name start n"},
        {"first 0 36 0\n", ":1: expected 'name start n"},
        {"# ok\nfirst 0 -4\n", ":2: expected 'name start n"},
        {"first +0 4\n", ":1: expected 'name start n"},
        {"first 0 4\nrest 4 69\n", ":2: block rest (start 4, n 69, stride 1) reaches beyond P = 72"},
        {"all 0 2 18446744073709551615\n", ":1: block all"},
        {"q 0 16\nrest 16 56\n", ":1: block q is not inside tensor q (indices 32..47)"},
        {"wte 0 32\nv[0] 32 8\n", ":2: block v[0] is not inside tensor v"},
        {"first 0 4\n\n  \t\nrest 4 68 1 # comment\nmore 0 1 1 1\n", ":5: extra field '1'"},
    };
    for (volatile size_t k = 0; k < sizeof badp / sizeof *badp; k++) {
        fp = fopen(pf, "w");
        fputs(badp[k].text, fp);
        fclose(fp);
        EXPECT_USER_ERROR(partition_read(pf, &m), badp[k].want);
    }
    /* a line longer than any buffer still counts as one line */
    fp = fopen(pf, "w");
    fputs("# ", fp);
    for (int i = 0; i < 3000; i++) fputc('x', fp);
    fputs("\nfirst 0 4\nrest 4 68 junk\n", fp);
    fclose(fp);
    EXPECT_USER_ERROR(partition_read(pf, &m), ":3: expected 'name start n");
    fp = fopen(pf, "w");
    for (int i = 0; i < 120; i++) fputc('n', fp);
    fputs(" 0 72\n", fp);
    fclose(fp);
    EXPECT_USER_ERROR(partition_read(pf, &m), ":1: block name longer than 95");
    EXPECT_USER_ERROR(partition_read(tmpdir, &m), "is a folder, expected a file");
    /* names are free-text labels; a tensor's name claims that tensor */
    fp = fopen(pf, "w");
    fprintf(fp, "wte 0 32\nq[h0] 32 8\nq[h1] 40 8\nanything-else 48 24 # free text\n");
    fclose(fp);
    p = partition_read(pf, &m);
    CHECK(p->nblocks == 4 && p->b[0].tensor == 0 && p->b[2].tensor == 1 && p->b[3].tensor == -1 &&
          strcmp(p->b[3].name, "anything-else") == 0, "labels and claimed tensors (%d blocks)", p->nblocks);
    partition_free(p);
    fp = fopen(pf, "w");
    fprintf(fp, "evens 0 36 2\nodds 1 36 2\n");
    fclose(fp);
    p = partition_read(pf, &m);
    CHECK(p->nblocks == 2 && p->b[1].stride == 2 && p->b[1].n == 36, "strided blocks read");
    partition_free(p);
    free(none);
    free(pf);
}

/* The one seed hash keeps the three schemes it replaced, value for value: the
 * run streams' seed_mix (from pi's digits), spectra's probe_seed (from 0) and
 * the trace probes' probe_seed(seed ^ 0x7ace, ...), as they were written. */
static uint64_t old_seed_mix(uint64_t seed, uint64_t tag, uint64_t index)
{
    uint64_t h = 0x243f6a8885a308d3ULL, words[3] = {seed, tag, index};
    for (int i = 0; i < 3; i++) {
        uint64_t x = h ^ words[i];
        h = splitmix64(&x);
    }
    return h;
}

static uint64_t old_probe_seed(uint64_t seed, uint64_t op, uint64_t probe)
{
    uint64_t s = seed, h = splitmix64(&s);
    s = h ^ op;
    h = splitmix64(&s);
    s = h ^ probe;
    return splitmix64(&s);
}

static void test_seed_hash(void)
{
    uint64_t x = 12345;
    int same_run = 1, same_probe = 1, same_trace = 1, apart = 1;
    for (int k = 0; k < 1000; k++) {
        uint64_t a = splitmix64(&x) >> (k % 64), b = splitmix64(&x) >> (k % 61), c = splitmix64(&x) >> (k % 59);
        if (k < 10) a = (uint64_t)k, b = 0, c = (uint64_t)k; /* small seeds too */
        same_run &= seed_hash(SEED_RUN, a, b, c) == old_seed_mix(a, b, c);
        same_probe &= seed_hash(SEED_PROBES, a, b, c) == old_probe_seed(a, b, c);
        same_trace &= seed_hash(SEED_TRACE, a, b, c) == old_probe_seed(a ^ 0x7ace, b, c);
        apart &= seed_hash(SEED_RUN, a, b, c) != seed_hash(SEED_PROBES, a, b, c);
    }
    CHECK(same_run, "SEED_RUN = the run streams' old seed_mix");
    CHECK(same_probe, "SEED_PROBES = spectra's old probe_seed");
    CHECK(same_trace, "SEED_TRACE = the old probe_seed of seed ^ 0x7ace");
    CHECK(apart, "domains apart");
    CHECK(seed_hash(SEED_RUN, 1, 2, 0) != seed_hash(SEED_RUN, 2, 1, 0) &&
              seed_hash(SEED_RUN, 1, 0, 1) != seed_hash(SEED_RUN, 1, 1, 0),
          "no seed + k collisions");
}

/* parallel_for: every item once, on the workers it says, whatever the thread count. */
typedef struct {
    int n;
    int *count, *by;
    double *out;
} loop_ctx;

static void loop_item(void *ctx, int i, int worker)
{
    loop_ctx *c = ctx;
    c->count[i]++;
    c->by[i] = worker;
    double s = 0;
    for (int k = 1; k <= 200 + i % 37; k++) s += sin(i * 0.01 * k) / k;
    c->out[i] = s;
}

static void test_parallel_for(void)
{
    int n = 500;
    double *ref = NULL;
    for (int threads = 0; threads <= 5; threads++) {
        loop_ctx c = {.n = n, .count = xcalloc((size_t)n, sizeof(int)), .by = xcalloc((size_t)n, sizeof(int)),
                      .out = xcalloc((size_t)n, sizeof(double))};
        parallel_for(n, threads, loop_item, &c, NULL, 0);
        int once = 1, workers_ok = 1, nw = parallel_workers(n, threads);
        for (int i = 0; i < n; i++) {
            once &= c.count[i] == 1;
            workers_ok &= c.by[i] >= 0 && c.by[i] < nw;
        }
        CHECK(once, "threads %d: every item exactly once", threads);
        CHECK(workers_ok, "threads %d: worker ids in 0..%d", threads, nw - 1);
        if (!ref) ref = c.out;
        else {
            CHECK(!memcmp(ref, c.out, (size_t)n * sizeof(double)), "threads %d: the same results bitwise", threads);
            free(c.out);
        }
        free(c.count), free(c.by);
    }
    free(ref);
    CHECK(parallel_workers(0, 4) == 0 && parallel_workers(3, 8) == 3 && parallel_workers(9, 0) == 1 &&
              parallel_workers(9, 4) == 4,
          "worker counts");
    loop_ctx none = {0};
    parallel_for(0, 4, loop_item, &none, NULL, 0); /* no item: fn never called (it would write through NULL) */
    CHECK(toolkit_workers(3) == 3 && toolkit_workers(100) == 64 && toolkit_workers(0) == toolkit_threads(),
          "toolkit_workers");
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_core.XXXXXX");
    if (!mkdtemp(tmpdir)) DIE("mkdtemp failed");
    test_npy_round_trip();
    test_npy_reader_hand_written();
    test_npy_hostile();
    test_csv();
    test_atomic_output();
    test_rng();
    test_rng_seed_map();
    test_seed_hash();
    test_parallel_for();
    test_cli_lists();
    test_cli_parse();
    test_spectra();
    test_partitions();
    if (remove_tree(tmpdir) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_summary();
}
