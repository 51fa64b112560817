/* libFuzzer target: tt_data_text (tinytransformer/tt_data.c), then one batch
 * drawn from each part of the text. Input: a byte choosing the vocabulary size
 * (2..256), a byte choosing T (1..32), then the text file. */
#include "fuzz_common.h"
#include "tinytransformer/tt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[96];
    if (!path[0]) fuzz_path(path, sizeof path, "text.txt");
    if (size < 2) return 0;
    int V = 2 + data[0] % 255, T = 1 + data[1] % 32;
    fuzz_write(path, data + 2, size - 2);
    tt_data *volatile d = NULL;
    FUZZ_TRY(d = tt_data_text(path, V, T));
    if (d) {
        int vocab = tt_data_vocab(d);
        if (vocab < 2 || vocab > V) abort();
        size_t total = 0;
        for (int i = 0; i < vocab; i++) total += tt_data_count(d, i);
        if (total != size - 2 || tt_data_length(d, 0) + tt_data_length(d, 1) != total) abort();
        gsl_rng *r = rng_new(1);
        int tokens[2 * 33];
        tt_data_batch(d, r, 1, T, tokens);
        tt_data_held_out_batch(d, r, 1, T, tokens + T + 1);
        for (int i = 0; i < 2 * (T + 1); i++)
            if (tokens[i] < 0 || tokens[i] >= vocab) abort();
        rng_free(r);
        tt_data_free(d);
    }
    return 0;
}
