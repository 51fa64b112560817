/* libFuzzer target: Hugging Face's GPT-2 layouts (tinytransformer/tt_gpt2hf.c)
 * on the safetensors reader, then one loss of the model read. Input: a byte
 * L, L bytes of config.json, then the safetensors file. */
#include "fuzz_common.h"
#include "tinytransformer/tt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size < 1 + (size_t)data[0]) return 0;
    size_t L = data[0];
    char config[256];
    memcpy(config, data + 1, L);
    config[L] = 0;
    st_file *volatile f = NULL;
    FUZZ_TRY(f = st_parse(data + 1 + L, size - 1 - L, "fuzz"));
    if (!f) return 0;
    model *volatile m = NULL;
    FUZZ_TRY(m = tt_from_gpt2(f, config, "fuzz"));
    st_free(f);
    if (!m) return 0;
    const tt_config *c = tt_config_of(m);
    if (m->P != tt_param_count(c)) abort();
    if (m->P <= 4096 && c->T <= 32) { /* small enough to run: one batch of two sequences */
        int tok[2 * 33];
        for (int i = 0; i < 2 * (c->T + 1); i++) tok[i] = i % c->V;
        tt_set_batch(m, tok, 2);
        volatile double loss = m->loss(m);
        (void)loss;
    }
    model_free(m);
    return 0;
}
