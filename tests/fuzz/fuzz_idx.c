/* libFuzzer target: idx_load (mlp/data.c), an IDX image file and a label file,
 * each plain or gzip (zlib reads both). Input: a 2-byte little-endian length L,
 * then L bytes of the image file (clamped), the rest is the label file. */
#include "fuzz_common.h"
#include "mlp/mlp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char pi[96], pl[96];
    if (!pi[0]) {
        fuzz_path(pi, sizeof pi, "images.idx");
        fuzz_path(pl, sizeof pl, "labels.idx");
    }
    if (size < 2) return 0;
    size_t n = (size_t)data[0] | (size_t)data[1] << 8;
    data += 2, size -= 2;
    if (n > size) n = size;
    fuzz_write(pi, data, n);
    fuzz_write(pl, data + n, size - n);
    dataset *volatile d = NULL;
    FUZZ_TRY(d = idx_load(pi, pl, 10));
    if (d) {
        for (int i = 0; i < d->n; i++)
            if (d->y[i] < 0 || d->y[i] >= 10) abort();
        dataset_free(d);
    }
    return 0;
}
