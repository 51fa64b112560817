/* demo_spectrum — eigenvalues of a Wishart matrix against the Marchenko–Pastur law.
 *
 * A small end-to-end check of the toolkit's path (seeded RNG -> LAPACK ->
 * CSV -> gnuplot): the spectrum of W = XᵀX/n, X an n×m standard Gaussian,
 * follows the Marchenko–Pastur density with ratio q = m/n as n grows.
 * Writes <out>/eigs.csv (sorted eigenvalues) and <out>/mp_density.csv.
 */
#include "core/core.h"
#include <cblas.h>
#include <math.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = 2000, m = 500;
    long seed = 1;
    const char *out = "results/demo_spectrum";
    const cli_opt opts[] = {
        {"n", OPT_INT, &n, "number of samples (rows of X)"},
        {"m", OPT_INT, &m, "dimension (columns of X)"},
        {"seed", OPT_LONG, &seed, "random seed"},
        {"out", OPT_STRING, &out, "output folder"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Eigenvalues of W = X'X/n for a Gaussian X (n x m) and the Marchenko-Pastur density.",
              opts, sizeof opts / sizeof *opts);
    if (n < 1) die_user("--n must be >= 1 (got %d)", n);
    if (m < 1 || m > n) die_user("--m must be in 1..n (got %d)", m);
    if (seed < 0) die_user("--seed must be >= 0 (got %ld)", seed);
    ensure_dir(out);

    gsl_rng *rng = rng_new((unsigned long)seed);
    double *X = xmalloc(checked_mul((size_t)n * m, sizeof(double), "X"));
    for (size_t i = 0; i < (size_t)n * m; i++) X[i] = rng_gaussian(rng, 1.0);
    double *W = xcalloc((size_t)m * m, sizeof(double));
    cblas_dsyrk(CblasRowMajor, CblasUpper, CblasTrans, m, n, 1.0 / n, X, m, 0.0, W, m);
    double *w = xmalloc((size_t)m * sizeof(double));
    sym_eigvals(m, W, w);

    char *path = path_join(out, "eigs.csv");
    outfile *f = csv_open(path, "index,eigenvalue");
    for (int i = 0; i < m; i++) csv_row(f, "%d,%.17g", i, w[i]);
    csv_close(f);
    free(path);

    /* Marchenko–Pastur: density sqrt((b-x)(x-a)) / (2 pi q x) on [a, b], a,b = (1 ∓ √q)². */
    double q = (double)m / n, a = pow(1 - sqrt(q), 2), b = pow(1 + sqrt(q), 2);
    path = path_join(out, "mp_density.csv");
    f = csv_open(path, "x,density");
    for (int i = 0; i <= 200; i++) {
        double x = a + (b - a) * i / 200.0;
        double d = (x > a && x < b) ? sqrt((b - x) * (x - a)) / (2 * M_PI * q * x) : 0;
        csv_row(f, "%.10g,%.10g", x, d);
    }
    csv_close(f);
    free(path);
    run_write_info(out, (unsigned long)seed);
    if (!core_quiet)
        fprintf(stderr, "demo_spectrum: eigenvalues in [%.4f, %.4f], MP support [%.4f, %.4f]\n",
                w[0], w[m - 1], a, b);
    free(w);
    free(W);
    free(X);
    rng_free(rng);
    return 0;
}
