/* libFuzzer target: nanoGPT's token files (tt_data_token_files,
 * tinytransformer/tt_data.c), then one batch from each part. Input: 2 bytes
 * V - 2 (little endian: V in 2..65537, 65537 a user error), a byte choosing T
 * (1..32), a byte choosing train.bin's share of the rest (in 256ths), then the
 * bytes of train.bin and val.bin. */
#include "fuzz_common.h"
#include "tinytransformer/tt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char train[96], val[96];
    if (!train[0]) fuzz_path(train, sizeof train, "train.bin"), fuzz_path(val, sizeof val, "val.bin");
    if (size < 4) return 0;
    int V = 2 + (data[0] | data[1] << 8), T = 1 + data[2] % 32;
    size_t rest = size - 4, ntrain = rest * data[3] / 256;
    fuzz_write(train, data + 4, ntrain);
    fuzz_write(val, data + 4 + ntrain, rest - ntrain);
    tt_data *volatile d = NULL;
    FUZZ_TRY(d = tt_data_token_files(train, val, V, T));
    if (!d) return 0;
    if (tt_data_vocab(d) != V || tt_data_length(d, 0) != ntrain / 2 || tt_data_length(d, 1) != (rest - ntrain) / 2)
        abort();
    gsl_rng *r = rng_new(1);
    int tokens[2 * 33];
    tt_data_batch(d, r, 2, T, tokens);
    tt_data_held_out_batch(d, r, 1, T, tokens + T + 1);
    for (int i = 0; i < 2 * (T + 1); i++)
        if (tokens[i] < 0 || tokens[i] >= V) abort();
    rng_free(r);
    tt_data_free(d);
    return 0;
}
