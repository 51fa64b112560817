/* libFuzzer target: mlp_hessian's model.csv reader, run as the real program.
 * read_model_csv is static in tools/mlp_hessian.c, so the program itself
 * is compiled in here (its main renamed) and run on a folder holding the fuzzed
 * model.csv next to a fixed, valid fig2 output for in 3, width 2, classes 2,
 * bias 1 (P = 14): X_eval.npy (5, 3), y_eval.npy (5,), weights_end.npy (14,).
 * An accepted model.csv that does not match those files must still end in a
 * user error; one that matches computes the 14 x 14 Hessian. */
#include "fuzz_common.h"
#define main mlp_hessian_main
#include "tools/mlp_hessian.c"
#undef main

static char from[96], outdir[96], csv[128];

static void setup(void)
{
    fuzz_path(from, sizeof from, "fig2");
    fuzz_path(outdir, sizeof outdir, "out");
    ensure_dir(from);
    snprintf(csv, sizeof csv, "%s/model.csv", from);
    double X[15], y[5], w[14];
    for (int i = 0; i < 15; i++) X[i] = (i * 7 % 11) / 11.0 - 0.4;
    for (int i = 0; i < 5; i++) y[i] = i % 2;
    for (int i = 0; i < 14; i++) w[i] = (i * 5 % 13) / 13.0 - 0.5;
    size_t sx[2] = {5, 3}, sy[1] = {5}, sw[1] = {14};
    char p[160];
    snprintf(p, sizeof p, "%s/X_eval.npy", from);
    npy_write(p, X, 2, sx);
    snprintf(p, sizeof p, "%s/y_eval.npy", from);
    npy_write(p, y, 1, sy);
    snprintf(p, sizeof p, "%s/weights_end.npy", from);
    npy_write(p, w, 1, sw);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!from[0]) setup();
    fuzz_write(csv, data, size);
    char *argv[] = {"mlp_hessian", "--from", from, "--out", outdir, "--quiet", NULL};
    FUZZ_TRY(mlp_hessian_main(6, argv));
    return 0;
}
