/* bench_optim — step time of Adam-mini vs AdamW on a 10-million-parameter
 * vector with an Algorithm 3 partition, as a ratio in one run. */
#include "bench.h"
#include "core/core.h"
#include "core/model.h"
#include "harness/tt_train.h"
#include "optim/optim.h"
#include "tinytransformer/tt.h"
#include <string.h>

/* Training throughput of the paper's tiny Transformer (batch 64 × T 8), tokens/s. */
static void transformer_throughput(optim_kind kind)
{
    tt_config c = tt_defaults();
    model *m = tt_new(&c);
    tt_data *d = tt_data_markov(c.V, 2, 2, 1);
    tt_train_opts o = tt_train_defaults();
    o.optim = kind;
    o.ocfg = optim_defaults(kind);
    o.steps = 300;
    o.nfracs = 0;
    o.lr = 1e-2;
    char dir[] = "/tmp/bench_optim.XXXXXX";
    if (!mkdtemp(dir)) DIE("mkdtemp failed");
    double t0 = wall_seconds();
    tt_train(m, d, &o, dir);
    double t = wall_seconds() - t0;
    printf("  %-10s %ld steps in %.2f s: %.0f tokens/s (%.2f ms/step, loss and gradient included)\n", optim_name(kind),
           o.steps, t, o.steps * (double)o.batch * c.T / t, 1e3 * t / o.steps);
    if (remove_tree(dir) != 0) fprintf(stderr, "could not remove %s\n", dir);
    tt_data_free(d);
    model_free(m);
}

/* A GPT-like tensor table (P ≈ 10.4 million): d = 384, 5 layers of q, k, v, proj, fc (4d), proj, norms, biases. */
static model fake_gpt(tensor_info **out)
{
    const int d = 384, layers = 5, heads = 6, vocab = 2048;
    int cap = 16 * layers + 4, n = 0;
    tensor_info *t = xcalloc(cap, sizeof *t);
    size_t off = 0;
#define ADD(nm, rl, r, c, h) do { tensor_info *ti = &t[n++]; snprintf(ti->name, sizeof ti->name, "%s", nm); \
        ti->role = rl; ti->offset = off; ti->rows = r; ti->cols = c; ti->heads = h; off += (size_t)(r) * (c); } while (0)
    ADD("embed", ROLE_EMBED, vocab, d, 1);
    for (int l = 0; l < layers; l++) {
        ADD("ln1", ROLE_NORM, d, 1, 1);
        ADD("q", ROLE_QUERY, d, d, heads);
        ADD("k", ROLE_KEY, d, d, heads);
        ADD("v", ROLE_VALUE, d, d, heads);
        ADD("qkv.bias", ROLE_BIAS, 3 * d, 1, 1);
        ADD("proj", ROLE_ATTN_PROJ, d, d, 1);
        ADD("ln2", ROLE_NORM, d, 1, 1);
        ADD("fc", ROLE_MLP_FC, 4 * d, d, 1);
        ADD("fc.bias", ROLE_BIAS, 4 * d, 1, 1);
        ADD("mproj", ROLE_MLP_PROJ, d, 4 * d, 1);
    }
    ADD("output", ROLE_OUTPUT, vocab, d, 1);
#undef ADD
    *out = t;
    return (model){.kind = "fake-gpt", .P = off, .ntensors = n, .tensors = t};
}

void openblas_set_num_threads(int);

static double time_steps(optimizer *o, double *w, const double *g, size_t P, int steps)
{
    optim_step(o, w, g, 1e-4); /* warm the caches and page in the state */
    double best = 1e300;
    for (int s = 0; s < steps; s++) {
        double t0 = wall_seconds();
        optim_step(o, w, g, 1e-4);
        double t = wall_seconds() - t0;
        if (t < best) best = t;
    }
    (void)P;
    return best;
}

int main(int argc, char **argv)
{
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Optimizer benchmark: one Adam-mini step against one AdamW step on a 10-million-parameter\n"
              "GPT-like tensor table with the Algorithm 3 partition (their ratio, same run), and the tiny\n"
              "Transformer's training throughput (tokens/s) with each. Not a test.",
              NULL, 0);
    tensor_info *t;
    model m = fake_gpt(&t);
    partition *p = partition_alg3(&m, 0);
    double *w = xmalloc(m.P * sizeof(double)), *g = xmalloc(m.P * sizeof(double));
    gsl_rng *r = rng_new(1);
    for (size_t i = 0; i < m.P; i++) {
        w[i] = rng_gaussian(r, 0.02);
        g[i] = rng_gaussian(r, 1e-3);
    }
    optim_config ca = optim_defaults(OPTIM_ADAMW), cm = optim_defaults(OPTIM_ADAM_MINI);
    cm.weight_decay = ca.weight_decay;
    optimizer *adamw = optim_new(OPTIM_ADAMW, &ca, m.P, NULL, &m);
    optimizer *mini = optim_new(OPTIM_ADAM_MINI, &cm, m.P, p, &m);
    double ta = time_steps(adamw, w, g, m.P, 10), tm = time_steps(mini, w, g, m.P, 10);
    printf("optimizer step, P = %zu (%d Adam-mini blocks), best of 10, one thread:\n", m.P, p->nblocks);
    printf("  AdamW      %8.2f ms   state %zu floats\n", 1e3 * ta, optim_state_floats(adamw));
    printf("  Adam-mini  %8.2f ms   state %zu floats\n", 1e3 * tm, optim_state_floats(mini));
    printf("  ratio Adam-mini / AdamW = %.2f (target <= 1.0)\n", tm / ta);
    optim_free(adamw);
    optim_free(mini);
    tt_config paper = tt_defaults();
    printf("tiny Transformer training throughput (P = %zu, batch 64 x T 8, one thread):\n", tt_param_count(&paper));
    openblas_set_num_threads(1);
    transformer_throughput(OPTIM_ADAMW);
    transformer_throughput(OPTIM_ADAM_MINI);
    partition_free(p);
    rng_free(r);
    free(w);
    free(g);
    free(t);
    return 0;
}
