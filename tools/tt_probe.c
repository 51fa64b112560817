/* tt_probe — the loss, gradient and Hessian-vector product of a Transformer
 * in nanoGPT's layout or a Hugging Face GPT-2 checkpoint on one batch of
 * tokens: what a user checks a model with after exporting it (and what make
 * test-torch holds against PyTorch).
 *
 *   tt_probe --model gpt.safetensors --data text --batch 8 --direction v.safetensors --out probe
 *   tt_probe --model gpt2_folder --data text --batch 8 --out probe     (model.safetensors + config.json)
 *   tt_probe --model gpt.safetensors --save-hf DIR                      (the model as a GPT-2 folder)
 *
 * The batch: --tokens FILE.npy (B x (T+1) token ids as float64), or --batch
 * sequences of the --data source (held-out part with --held-out 1, else the
 * training part; seed --data-seed). The direction v: --direction FILE in the
 * same layout as the model (a state dict of the same names and shapes; a tied
 * model's wte once or under both names), or Gaussian N(0, 1) from --seed.
 * Outputs in --out: loss.csv (the mean next-token cross-entropy), tokens.npy,
 * grad.safetensors and hv.safetensors (∇L and H v in the model's layout, F64;
 * a tied tensor's rows the sum of both uses), v.safetensors, vocab.csv (text),
 * run.txt. A GPT-2 checkpoint's direction and outputs are in GPT2LMHeadModel's
 * layout (Conv1D weights [in, out]; a tied model without lm_head.weight).
 */
#include "core/core.h"
#include "core/model.h"
#include "harness/data.h"
#include "tinytransformer/tt.h"
#include <stdlib.h>
#include <string.h>

/* x (P) in m's layout: GPT-2's (gpt2), or a copy of m holding x in place of its parameters, as
 * tt_save_nanogpt writes it. */
static void save_vector(const model *m, int gpt2, const double *x, const char *dir, const char *name)
{
    char *path = path_join(dir, name);
    if (gpt2) tt_save_gpt2_tensors(m, x, path, 0);
    else {
        model *c = tt_new(tt_config_of(m));
        memcpy(c->params, x, m->P * sizeof(double));
        tt_save_nanogpt(c, NULL, path, 0);
        model_free(c);
    }
    free(path);
}

/* v: the direction file in the model's layout, or N(0, 1) from seed. */
static void direction(const model *m, int gpt2, const char *dir_path, const char *model_path,
                      const char *model_config, long seed, double *v)
{
    if (dir_path && gpt2) {
        tt_gpt2_read_vector(m, dir_path, v);
    } else if (dir_path) {
        model *vm = tt_load_nanogpt(dir_path, model_config);
        const tt_config *vc = tt_config_of(vm), *c = tt_config_of(m);
        if (vm->P != m->P || vc->V != c->V || vc->C != c->C || vc->M != c->M || vc->T != c->T ||
            vc->layers != c->layers || vc->bias != c->bias || vc->tied != c->tied)
            die_user("--direction %s: not the layout of %s", dir_path, model_path);
        memcpy(v, vm->params, m->P * sizeof(double));
        model_free(vm);
    } else {
        gsl_rng *r = rng_new((unsigned long)seed);
        for (size_t i = 0; i < m->P; i++) v[i] = rng_gaussian(r, 1);
        rng_free(r);
    }
}

int main(int argc, char **argv)
{
    const char *model_path = NULL, *model_config = NULL, *dir_path = NULL, *save_hf = NULL;
    int save_f32 = 0;
    const char *out = "results/tt_probe";
    probe_batch pb = PROBE_BATCH_DEFAULTS;
    long seed = 1;
    const cli_opt opts[] = {
        {"model", OPT_STRING, &model_path, "the model: nanoGPT's layout in .safetensors, or a Hugging Face GPT-2 "
                                           "folder (model.safetensors, config.json) or file (required)"},
        {"model-config", OPT_STRING, &model_config, "its config JSON when the file's metadata lacks n_head (a GPT-2 "
                                                    "file: its config.json)"},
        {"save-hf", OPT_STRING, &save_hf, "also write the model as a Hugging Face GPT-2 folder (GPT2LMHeadModel)"},
        {"save-f32", OPT_FLAG, &save_f32, "--save-hf writes F32 (default F64)"},
        PROBE_BATCH_OPTS(pb),
        {"direction", OPT_STRING, &dir_path, "v: a state dict in the model's layout (.safetensors); else N(0, 1)"},
        {"seed", OPT_LONG, &seed, "seed of the Gaussian v"},
        {"out", OPT_STRING, &out, "output folder"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Loss, gradient and exact Hessian-vector product (R-operator) of a Transformer in nanoGPT's\n"
              "layout (.safetensors) or Hugging Face's GPT-2 layout on one batch: loss.csv, grad.safetensors,\n"
              "hv.safetensors (the model's layout, F64), tokens.npy, v.safetensors.",
              opts, sizeof opts / sizeof *opts);
    if (!model_path) die_user("--model is required");
    probe_batch_check(&pb);
    if (seed < 0) die_user("--seed must be >= 0 (got %ld)", seed);
    int gpt2 = tt_gpt2_looks(model_path);
    model *m = tt_load_file(model_path, model_config);
    const tt_config *c = tt_config_of(m);
    if (save_hf && !c->bias) die_user("--save-hf: %s has no biases, GPT-2's layout always has them", model_path);
    int B;
    tt_data *d;
    int *tok = probe_tokens(&pb, c->V, c->T, model_path, &B, &d);
    if (d) tt_file_check_data(model_path, c->V, d); /* the vocabulary the file was trained on */
    tt_set_batch(m, tok, B);
    double *v = xmalloc(m->P * sizeof(double));
    direction(m, gpt2, dir_path, model_path, model_config, seed, v);

    ensure_dir(out);
    if (d) token_source_write_vocab(d, out);
    double *g = xmalloc(m->P * sizeof(double)), *hv = xmalloc(m->P * sizeof(double));
    double loss = m->grad(m, g);
    m->hvp(m, v, hv, 1);
    probe_write(out, loss, m->P, tok, B, c->T);
    save_vector(m, gpt2, g, out, "grad.safetensors");
    save_vector(m, gpt2, hv, out, "hv.safetensors");
    save_vector(m, gpt2, v, out, "v.safetensors");
    if (save_hf) tt_save_gpt2(m, save_hf, save_f32);
    if (!core_quiet) fprintf(stderr, "tt_probe: P = %zu, loss %.17g on %d sequences\n", m->P, loss, B);
    run_write_info(out, (unsigned long)seed);
    free(g), free(hv), free(v), free(tok);
    tt_data_free(d);
    model_free(m);
    return 0;
}
