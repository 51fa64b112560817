/* llama_cli — the Llama-style model's own flags, shared by the programs that
 * take any model (models.h) and the optimizer experiments (ttexp.h,
 * train_transformer). Its sizes are the tiny Transformer's flags (--V, --C,
 * --heads, --M, --T, --layers); it has no biases. */
#ifndef HARNESS_LLAMA_CLI_H
#define HARNESS_LLAMA_CLI_H

#include "core/core.h"
#include "tinytransformer/llama.h"

typedef struct {
    int kv_heads, head_dim, tied;
    double eps, theta;
} llama_cli;
#define LLAMA_CLI_OPTS(c)                                                                                        \
    {"llama-kv-heads", OPT_INT, &(c)->kv_heads, "the Llama's key/value heads, dividing --heads (0: --heads)"},   \
    {"llama-head-dim", OPT_INT, &(c)->head_dim, "the Llama's head size (0: C / heads)"},                         \
    {"llama-eps", OPT_DOUBLE, &(c)->eps, "the Llama's RMSNorm eps"},                                             \
    {"llama-theta", OPT_DOUBLE, &(c)->theta, "the Llama's rotary base"},                                         \
    {"llama-tied", OPT_INT, &(c)->tied, "1: the Llama's output head is its embedding"}

/* The defaults: 2 key/value heads (grouped-query attention), llama_defaults()'s
 * eps, θ and tying. */
static inline llama_cli llama_cli_defaults(void)
{
    llama_config d = llama_defaults();
    return (llama_cli){.kv_heads = 2, .head_dim = 0, .tied = d.tied, .eps = d.eps, .theta = d.theta};
}

/* The Llama of these sizes and flags, initialised from seed (not checked:
 * llama_check_config). */
static inline llama_config llama_cli_config(const llama_cli *l, int V, int C, int layers, int heads, int M, int T,
                                            unsigned long seed)
{
    return (llama_config){.V = V, .C = C, .layers = layers, .heads = heads,
                          .kv_heads = l->kv_heads ? l->kv_heads : heads, .head_dim = l->head_dim, .M = M, .T = T,
                          .eps = l->eps, .theta = l->theta, .tied = l->tied, .seed = seed};
}

/* A --llama-* flag given for another model is a user error (it would do nothing). */
static inline void llama_cli_refuse_unused(const llama_cli *l, int is_llama)
{
    if (is_llama) return;
    const struct { const void *target; const char *flag; } flags[] = {
        {&l->kv_heads, "--llama-kv-heads"}, {&l->head_dim, "--llama-head-dim"}, {&l->eps, "--llama-eps"},
        {&l->theta, "--llama-theta"},       {&l->tied, "--llama-tied"}};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
        if (cli_was_given(flags[i].target)) die_user("%s goes with --model llama", flags[i].flag);
}

#endif
