/* libFuzzer target: partition_read (core/partition.c) against a small model of
 * five tensors (P = 72): wte 8x4, q 4x4 (2 heads), v 4x4, ln 4, b 4. */
#include "fuzz_common.h"
#include "core/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[96];
    static tensor_info t[] = {
        {"wte", ROLE_EMBED, 0, 8, 4, 1, -1, 0},
        {"q", ROLE_QUERY, 32, 4, 4, 2, 0, 0},
        {"v", ROLE_VALUE, 48, 4, 4, 2, 0, 0},
        {"ln", ROLE_NORM, 64, 4, 1, 1, 0, 0},
        {"b", ROLE_BIAS, 68, 4, 1, 1, 0, 0},
    };
    static model m = {.kind = "fuzz", .P = 72, .ntensors = 5, .tensors = t};
    if (!path[0]) fuzz_path(path, sizeof path, "part.txt");
    fuzz_write(path, data, size);
    partition *volatile p = NULL;
    FUZZ_TRY(p = partition_read(path, &m));
    if (p) {
        /* a partition that was accepted covers 0..P-1 exactly once */
        size_t total = 0;
        for (int k = 0; k < p->nblocks; k++) total += p->b[k].n;
        if (total != m.P) abort();
        partition_free(p);
    }
    return 0;
}
