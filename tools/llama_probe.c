/* llama_probe — the loss, gradient and Hessian-vector product of a Llama-style
 * model (tinytransformer/llama.h) in Hugging Face's layout on one batch of
 * tokens; and a fresh model written in that layout. What make test-torch
 * holds against PyTorch, until the Transformer programs take --model llama.
 *
 *   llama_probe --model DIR --data text --batch 8 --out probe          (DIR: model.safetensors + config.json)
 *   llama_probe --model F.safetensors --model-config config.json ...
 *   llama_probe --C 32 --heads 4 --kv-heads 2 --save-hf DIR --out probe   (a fresh model, saved)
 *
 * The batch: --tokens FILE.npy (B x (T+1) token ids as float64), or --batch
 * sequences of the --data source (held-out part with --held-out 1, else the
 * training part; seed --data-seed; text's vocabulary is the model's V). The
 * direction v: --direction FILE, tensors of the model's names and shapes (a
 * tied model's embedding once), or Gaussian N(0, 1) from --seed. Outputs in
 * --out: loss.csv, tokens.npy, grad.safetensors and hv.safetensors (∇L and
 * H v with the model's tensor names, F64; a tied embedding's rows the sum of
 * both uses), v.safetensors, vocab.csv (text), run.txt. With --hessian, the
 * exact H on the batch (P up to ~2·10^4) and, per tensor, Principle 1 on its
 * diagonal block H_tt (hessian/hessian.h, as partition_check scores it):
 * splits.csv, one row per candidate split (whole, heads, rows, cols, entries)
 * with its number of blocks, its score over H_tt (off-diagonal excess; entries:
 * diagonal excess; whole 1), whether it is Algorithm 3's split and whether
 * Principle 1 picks it at --level (pick_score: the score the pick held with
 * inside its parent split); with --save-h, H.npy.
 */
#include "core/core.h"
#include "core/model.h"
#include "harness/data.h"
#include "hessian/hessian.h"
#include "tinytransformer/llama.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *model, *config, *save_hf;
    int T, save_f32;
    llama_config fresh;
    double init_std;
} model_opts;

/* The model of --model (its config from --model-config or the folder), else a fresh one from the size flags. */
static model *open_model(const model_opts *o)
{
    if (o->model) return llama_load_hf(o->model, o->config, o->T);
    llama_config c = o->fresh;
    c.T = o->T ? o->T : 8;
    c.kv_heads = c.kv_heads ? c.kv_heads : c.heads;
    if (!(o->init_std > 0 && o->init_std < 10)) die_user("--init-std must be in (0, 10) (got %g)", o->init_std);
    model *m = llama_new(&c);
    for (int t = 0; t < m->ntensors; t++) { /* llama_new draws N(0, 0.02²): rescaled */
        const tensor_info *ti = &m->tensors[t];
        if (ti->role != ROLE_NORM)
            for (size_t i = 0; i < tensor_size(ti); i++) m->params[ti->offset + i] *= o->init_std / 0.02;
    }
    return m;
}

/* v: --direction FILE in m's layout, or N(0, 1) from seed. */
static double *direction(const model *m, const model_opts *o, const char *path, unsigned long seed)
{
    double *v = xmalloc(m->P * sizeof(double));
    if (path) {
        const llama_config *c = llama_config_of(m);
        char *cfg = o->config ? xstrdup(o->config) : o->model ? path_join(o->model, "config.json") : NULL;
        if (!cfg) die_user("--direction needs --model (its config.json gives the layout)");
        model *vm = llama_load_hf(path, cfg, c->T);
        free(cfg);
        if (vm->P != m->P || llama_config_of(vm)->tied != c->tied)
            die_user("--direction %s: not the layout of %s", path, o->model);
        memcpy(v, vm->params, m->P * sizeof(double));
        model_free(vm);
    } else {
        gsl_rng *r = rng_new(seed);
        for (size_t i = 0; i < m->P; i++) v[i] = rng_gaussian(r, 1);
        rng_free(r);
    }
    return v;
}

/* splits.csv: Principle 1 on each tensor's diagonal block of H (and H.npy when save_h). */
static void hessian_splits(model *m, const char *out, double level, int save_h)
{
    hessian_opts o = hessian_defaults();
    size_t P = m->P;
    double *H = hessian_full(m, &o), total = frobenius_sq(P * P, H);
    partition *a3 = partition_alg3(m, 0);
    outfile *f = csv_open_in(out, "splits.csv", "tensor,role,n,share,split,blocks,score,alg3,pick,pick_score");
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        double *Htt = tensor_hessian(H, P, m, t), score;
        split_candidates c;
        split_candidates_of(Htt, m, t, &c);
        int pick = principle1_pick(Htt, m, t, &c, level, &score), a = partition_split_of(a3, m, t);
        double share = frobenius_sq(tensor_size(ti) * tensor_size(ti), Htt) / total;
        for (int i = 0; i < c.n; i++)
            csv_row(f, "%s,%s,%zu,%.6g,%s,%d,%.6g,%d,%d,%.6g", ti->name, role_name(ti->role), tensor_size(ti), share,
                    split_name(c.split[i]), c.nblocks[i], c.hold[i], (int)c.split[i] == a, i == pick, score);
        free(Htt);
    }
    csv_close(f);
    if (save_h) {
        size_t shape[2] = {P, P};
        npy_write_in(out, "H.npy", H, 2, shape);
    }
    partition_free(a3);
    free(H);
}

int main(int argc, char **argv)
{
    model_opts mo = {.fresh = llama_defaults(), .init_std = 0.02};
    mo.fresh.kv_heads = 0;
    llama_config *f = &mo.fresh;
    const char *dir_path = NULL, *out = "results/llama_probe";
    probe_batch pb = PROBE_BATCH_DEFAULTS;
    int hessian = 0, save_h = 0;
    double level = 0.5;
    long seed = 1, init_seed = 1;
    const cli_opt opts[] = {
        {"model", OPT_STRING, &mo.model, "a Llama checkpoint: a folder with model.safetensors and config.json, or a "
                                         ".safetensors file with --model-config (else a fresh model)"},
        {"model-config", OPT_STRING, &mo.config, "the checkpoint's config.json (Hugging Face's LlamaConfig keys)"},
        {"T", OPT_INT, &mo.T, "context length (0: the checkpoint's max_position_embeddings, 8 for a fresh model)"},
        {"V", OPT_INT, &f->V, "fresh model: vocabulary size"},
        {"C", OPT_INT, &f->C, "fresh model: hidden size"},
        {"layers", OPT_INT, &f->layers, "fresh model: decoder layers"},
        {"heads", OPT_INT, &f->heads, "fresh model: query heads"},
        {"kv-heads", OPT_INT, &f->kv_heads, "fresh model: key/value heads, dividing --heads (0: --heads)"},
        {"head-dim", OPT_INT, &f->head_dim, "fresh model: head size (0: C / heads)"},
        {"M", OPT_INT, &f->M, "fresh model: intermediate size"},
        {"eps", OPT_DOUBLE, &f->eps, "fresh model: RMSNorm eps"},
        {"theta", OPT_DOUBLE, &f->theta, "fresh model: rotary base"},
        {"tied", OPT_INT, &f->tied, "fresh model: 1 ties the output head to the embedding"},
        {"init-seed", OPT_LONG, &init_seed, "fresh model: initialisation seed"},
        {"init-std", OPT_DOUBLE, &mo.init_std, "fresh model: weights N(0, std^2) (gains 1)"},
        {"save-hf", OPT_STRING, &mo.save_hf, "write the model here in Hugging Face's layout (model.safetensors, "
                                             "config.json)"},
        {"save-f32", OPT_FLAG, &mo.save_f32, "with --save-hf: F32 data (default F64, exact)"},
        PROBE_BATCH_OPTS(pb),
        {"direction", OPT_STRING, &dir_path, "v: tensors in the model's layout (.safetensors); else N(0, 1)"},
        {"seed", OPT_LONG, &seed, "seed of the Gaussian v"},
        {"hessian", OPT_FLAG, &hessian, "also the exact H: Principle 1 on each tensor's block (splits.csv)"},
        {"level", OPT_DOUBLE, &level, "with --hessian: the score a split must reach (partition_check's --level)"},
        {"save-h", OPT_FLAG, &save_h, "with --hessian: write H.npy (P x P float64)"},
        {"out", OPT_STRING, &out, "output folder"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Loss, gradient and exact Hessian-vector product (R-operator) of a Llama-style model in Hugging\n"
              "Face's layout on one batch: loss.csv, grad.safetensors, hv.safetensors (the model's names, F64),\n"
              "tokens.npy, v.safetensors; --save-hf writes the model in that layout.",
              opts, sizeof opts / sizeof *opts);
    probe_batch_check(&pb);
    if (seed < 0 || init_seed < 0) die_user("--seed and --init-seed must be >= 0");
    if (mo.T < 0) die_user("--T must be >= 0 (got %d)", mo.T);
    if (!(level > 0 && level <= 1)) die_user("--level must be in (0, 1] (got %g)", level);
    f->seed = (unsigned long)init_seed;
    model *m = open_model(&mo);
    const llama_config *c = llama_config_of(m);
    int B;
    tt_data *d;
    int *tok = probe_tokens(&pb, c->V, c->T, mo.model ? mo.model : "the fresh model", &B, &d);
    llama_set_batch(m, tok, B);
    double *v = direction(m, &mo, dir_path, (unsigned long)seed);

    ensure_dir(out);
    if (d) token_source_write_vocab(d, out);
    double *g = xmalloc(m->P * sizeof(double)), *hv = xmalloc(m->P * sizeof(double));
    double loss = m->grad(m, g);
    m->hvp(m, v, hv, 1);
    probe_write(out, loss, m->P, tok, B, c->T);
    const char *names[3] = {"grad.safetensors", "hv.safetensors", "v.safetensors"};
    const double *vecs[3] = {g, hv, v};
    for (int i = 0; i < 3; i++) {
        char *path = path_join(out, names[i]);
        llama_save_hf_tensors(m, vecs[i], path, 0);
        free(path);
    }
    if (mo.save_hf) llama_save_hf(m, mo.save_hf, mo.save_f32);
    if (hessian) hessian_splits(m, out, level, save_h);
    if (!core_quiet) fprintf(stderr, "llama_probe: P = %zu, loss %.17g on %d sequences\n", m->P, loss, B);
    run_write_info(out, (unsigned long)seed);
    free(g), free(hv), free(v), free(tok);
    tt_data_free(d);
    model_free(m);
    return 0;
}
