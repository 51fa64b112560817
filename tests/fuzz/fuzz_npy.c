/* libFuzzer target: npy_read (core/output.c) on arbitrary bytes. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[96];
    if (!path[0]) fuzz_path(path, sizeof path, "in.npy");
    fuzz_write(path, data, size);
    int ndim = 0;
    size_t shape[4];
    double *volatile x = NULL;
    FUZZ_TRY(x = npy_read(path, &ndim, shape));
    if (x) {
        size_t count = 1;
        for (int i = 0; i < ndim; i++) count *= shape[i];
        volatile double s = 0;
        for (size_t i = 0; i < count; i++) s += x[i]; /* every value is really there */
        free(x);
    }
    return 0;
}
