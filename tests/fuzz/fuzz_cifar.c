/* libFuzzer target: cifar_load (mlp/data.c). Input: one byte whose low bit
 * chooses CIFAR-100 (1) or CIFAR-10 (0), then the file (plain or gzip). */
#include "fuzz_common.h"
#include "mlp/mlp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[96];
    if (!path[0]) fuzz_path(path, sizeof path, "cifar.bin");
    if (size < 1) return 0;
    int c100 = data[0] & 1;
    fuzz_write(path, data + 1, size - 1);
    dataset *volatile d = NULL;
    FUZZ_TRY(d = cifar_load(path, c100));
    if (d) {
        for (int i = 0; i < d->n; i++)
            if (d->y[i] < 0 || d->y[i] >= d->classes) abort();
        dataset_free(d);
    }
    return 0;
}
