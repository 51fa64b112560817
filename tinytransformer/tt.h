/* tt — a tiny decoder-only GPT-style Transformer with exact Hessians.
 *
 * Model: token embedding wte (V×C) + learned positions wpe (T×C); per layer
 * pre-norm LayerNorm → causal multi-head attention (separate query, key,
 * value, each C×C, heads = contiguous runs of C/heads rows) → attn.proj (C×C)
 * → residual; LayerNorm → mlp.fc_1 (M×C) → GELU → mlp.proj (C×M) → residual;
 * final LayerNorm; output head lm_head (V×C, no bias), or with tied = 1 the
 * embedding wte itself (nanoGPT's weight tying: one tensor used twice, its
 * gradient, H·v and Hessian rows the sum of both uses); next-token
 * cross-entropy, mean over all B·T predictions.
 *
 * GELU is the exact erf form GELU(x) = x Φ(x) (nanoGPT's nn.GELU()), so
 * GELU' = Φ + xφ and GELU'' = φ (2 − x²) are exact; or, with gelu =
 * TT_GELU_TANH, GPT-2's gelu_new ½ x (1 + tanh(√(2/π) (x + 0.044715 x³))),
 * with its own exact derivatives (tt_kernels.c).
 * biases = 0 removes every bias vector, LayerNorm biases included (nanoGPT's
 * bias=False); LayerNorm gains stay. Weights are (out, in) row-major.
 *
 * The model is a core/model.h `model`: P, the tensor table (names "wte",
 * "wpe", "h0.ln_1.weight", "h0.ln_1.bias", "h0.attn.query",
 * "h0.attn.query.bias", "h0.attn.key", ..., "h0.attn.value", "h0.attn.proj",
 * "h0.ln_2.weight", "h0.mlp.fc_1", "h0.mlp.proj", ..., "ln_f.weight",
 * "ln_f.bias", "lm_head" unless tied), loss, grad, and the exact Hessian-vector product on
 * panels of k directions by Pearlmutter's R-operator (forward-mode derivative
 * of the backward pass), batched over the directions with BLAS-3, with the
 * unit-direction paths hess_cols and hess_cols_lower (the symmetric fast path:
 * a unit direction in tensor t perturbs only what follows t, and its R-backward
 * stops once it has produced the rows of tensors >= t, about half the work).
 *
 * Init like GPT-2: every weight matrix, wte and wpe ~ N(0, 0.02²) from core's
 * seeded RNG; LayerNorm gain 1, all biases 0.
 *
 * This header is the public API: the model, its batch, its threads and its
 * token sources. The layer kernels behind it (token-major forward/backward,
 * the direction-minor R-kernels of the R-pass and their naive references) are
 * internal to tinytransformer/ (tt_kernels.h), used there and by its tests and
 * benchmark only.
 */
#ifndef TT_H
#define TT_H

#include "core/core.h"
#include "core/model.h"
#include "core/safetensors.h"
#include <stddef.h>

enum { TT_GELU_ERF = 0, TT_GELU_TANH = 1 };
typedef struct {
    int V;              /* vocabulary size */
    int C;              /* embedding width */
    int heads;          /* attention heads, divides C */
    int M;              /* MLP hidden width */
    int layers;
    int T;              /* context length */
    int bias;           /* 1: biases on (linear layers and LayerNorm), 0: none */
    int tied;           /* 1: the output head reads wte (nanoGPT's weight tying; no lm_head tensor) */
    int gelu;           /* TT_GELU_ERF (0, the default): x Φ(x); TT_GELU_TANH: GPT-2's gelu_new */
    unsigned long seed; /* initialisation */
} tt_config;

/* The paper's 1-layer model: V 8, C 16, 4 heads, M 32, T 8, biases → P = 2,640. */
tt_config tt_defaults(void);
/* User error naming the option when a size is out of range. */
void tt_check_config(const tt_config *c);
size_t tt_param_count(const tt_config *c);

/* A new model (params initialised from c->seed). No batch yet: call
 * tt_set_batch before loss/grad/hvp. Free with model_free. */
model *tt_new(const tt_config *c);
const tt_config *tt_config_of(const model *m);
/* The current batch: B sequences of T+1 tokens (row b: inputs tokens[b][0..T-1],
 * targets tokens[b][1..T]). Copied. User error on a token outside 0..V-1. */
void tt_set_batch(model *m, const int *tokens /* (B,T+1) */, int B);
/* Bytes a batch of B sequences takes (activations, their gradients, tokens):
 * tt_set_batch checks them against the available memory before allocating. */
double tt_batch_bytes(const tt_config *c, int B);
/* Forward pass at params: the mean loss; logits (B,T,V) and per-position losses
 * (B,T) copied out when non-NULL. */
double tt_forward(model *m, double *logits, double *losses);
/* Worker threads for hvp / hess_cols / hess_cols_lower (0 = toolkit_threads()).
 * Each worker runs single-threaded BLAS on its own sub-panels; results do not
 * depend on the thread count. */
void tt_set_threads(model *m, int n);
/* Gauss–Newton mode (off by default): hvp, hess_cols and hess_cols_lower give
 * the Gauss–Newton matrix G = Jᵀ S J instead of H (J = ∂logits/∂θ, S the
 * Hessian of the mean cross-entropy in the logits), by the R-pass with every
 * term that multiplies a base upstream gradient dropped (tt_pass.c,
 * zero_base_gradients). G is symmetric PSD; H = G + Σ_n (∂ℓ/∂z_n)·∂²z_n/∂θ².
 * loss and grad are unchanged; H with the mode off is bit for bit as before. */
void tt_set_gauss_newton(model *m, int on /* 0 or 1 */);
int tt_gauss_newton(const model *m);
/* The exact null directions we derived for the diagonal Hessian block H_bb of
 * block b (whole rows of one tensor; tt_null.c lists each with its
 * derivation): key rows' 1/g (LayerNorm gain), layer-0 query rows' w ⊥ the
 * LayerNorm outputs after position 0, 1/g on rows reading a LayerNorm in a
 * model without biases, the uniform shift 1 of embedding rows and of
 * attn.proj's and mlp.proj's biases, every direction of the key bias. Writes
 * them as rows of b->n into out (room for 2·b->n rows; a spanning set, not
 * orthonormal) and returns how many; 0 for any other block. */
int tt_null_directions(const model *m, const block *b, double *out);
/* hvp blocking: at most kp directions per R-pass and bc sequences per chunk
 * (0 = automatic: kp 32, bc·T·kp ≈ 1,024 (token, direction) columns). An R-pass
 * runs its directions padded with zero ones to a multiple of 8.
 * Results agree to round-off. */
void tt_set_hvp_blocking(model *m, int kp, int bc);
/* Reinitialise params GPT-2 style from seed. */
void tt_init_params(model *m, unsigned long seed);

/* ---- data: token sources ----------------------------------------------------------
 * Markov: a seeded sparse random Markov chain of the given order over V
 * symbols — the next token depends on the previous `order` tokens (a context);
 * each context has `successors` likely next tokens (random weights, 95% of the
 * mass) and the remaining 5% spread uniformly; each sequence starts with
 * `order` uniform tokens. Order 1 needs no attention (the current token
 * suffices); order ≥ 2 makes the model attend to earlier positions. The
 * held-out batches come from the same chain (another RNG stream).
 * Text: a file, or a folder whose text files are read in byte order of their
 * names and concatenated (subfolders, links, hidden files and fortune's *.dat
 * index files skipped). Character-level: the vocabulary is the text's distinct
 * bytes in byte order when there are at most `vocab` of them; otherwise the
 * vocab−1 most frequent bytes (ties: the smaller byte), in byte order, and one
 * last symbol "other" for every other byte. Split by position: the last
 * TT_HELD_OUT_SHARE of the bytes is the held-out part, the rest the training
 * part (as nanoGPT's prepare scripts do); each part must hold T+1 bytes.
 * Token files: nanoGPT's train.bin (training part) and val.bin (held-out part),
 * uint16 little-endian token ids, every one below the given vocabulary size V.
 * A sequence of text or tokens is a window of T+1 consecutive tokens at a
 * uniform offset inside one part. User error (one line) on a missing,
 * unreadable, empty or too short file, an odd-sized token file or a token
 * outside the vocabulary. */
#define TT_HELD_OUT_SHARE 0.1
typedef struct tt_data tt_data;
tt_data *tt_data_markov(int V, int order, int successors, unsigned long seed);
tt_data *tt_data_text(const char *path, int vocab /* 2..256 */, int T);
/* The same from bytes in memory; `what` names them in errors. */
tt_data *tt_data_text_bytes(const unsigned char *buf, size_t len, int vocab, int T, const char *what);
tt_data *tt_data_token_files(const char *train_bin, const char *val_bin, int V /* 2..65536 */, int T);
int tt_data_vocab(const tt_data *d);     /* symbols in use: the model's V */
/* B sequences of T+1 tokens into tokens (B,T+1): from the training part, or the held-out part. */
void tt_data_batch(const tt_data *d, gsl_rng *r, int B, int T, int *tokens);
void tt_data_held_out_batch(const tt_data *d, gsl_rng *r, int B, int T, int *tokens);
/* What symbol id stands for: a byte 0..255 (text), TT_SYMBOL_OTHER (text: every
 * byte outside the vocabulary) or TT_SYMBOL_TOKEN (Markov, token files: no byte). */
enum { TT_SYMBOL_OTHER = -1, TT_SYMBOL_TOKEN = -2 };
int tt_data_symbol(const tt_data *d, int id);
/* Occurrences of symbol id in the whole text or token files (0 for Markov). */
size_t tt_data_count(const tt_data *d, int id);
/* Tokens in the training part (held_out 0) or the held-out part (1); 0 for Markov. */
size_t tt_data_length(const tt_data *d, int held_out);
/* Markov transition rows (V^order, V); the context of tokens (x_1..x_order),
 * oldest first, is Σ x_i·V^(order−i). NULL for text and token files. */
const double *tt_data_transitions(const tt_data *d);
int tt_data_order(const tt_data *d);     /* Markov order; 0 otherwise */
void tt_data_free(tt_data *d);
/* The data d for a model (named `model` in the message) of V symbols: the same number, else a
 * user error saying why (a text of fewer distinct bytes than V, or --vocab-size). */
void tt_data_check_vocab_size(const char *model, int V, const tt_data *d);

/* ---- nanoGPT checkpoints (tt_nanogpt.c) ------------------------------------------------
 * Safetensors files in the state-dict layout of nanoGPT's GPT: transformer.wte.weight
 * [V, C], transformer.wpe.weight [T, C], per block i transformer.h.i.ln_1.weight/.bias,
 * attn.c_attn.weight [3C, C] / .bias [3C] (query, key, value stacked: split into the
 * toolkit's three tensors), attn.c_proj.*, ln_2.*, mlp.c_fc.* [M, C], mlp.c_proj.*
 * [C, M], transformer.ln_f.*, lm_head.weight [V, C]; biases all present or all absent
 * (nanoGPT's bias flag); tied (one tensor used twice) when lm_head.weight or wte is
 * absent, or both hold the same values (a config's "tied": false says otherwise);
 * torch.compile's "_orig_mod." prefix and nanoGPT's causal-mask buffers attn.bias
 * [1, 1, n, n] are accepted. nanoGPT's LayerNorm (eps 1e-5) and nn.GELU() (exact
 * erf) are the toolkit's. The configuration comes from the shapes, and n_head from a
 * config JSON (nanoGPT's GPTConfig keys: n_layer, n_head, n_embd, block_size,
 * vocab_size, bias, dropout; also n_inner, the MLP width, 4 n_embd by default in
 * nanoGPT, and tied) or the file's metadata (the same keys as strings, as
 * tt_save_nanogpt writes them): the config JSON wins for every key, and a key the
 * two give differently is noted (stderr unless --quiet, and run.txt). User error
 * (one line naming it): an unknown tensor name (another architecture), a missing
 * tensor, a wrong shape, a NaN or Inf value, a causal mask that is not
 * tril(ones(T, T)), a config that disagrees with the shapes, holds an unknown key
 * or a key twice, a metadata or config value not written plainly, dropout > 0 or
 * outside [0, 1), no n_head. */
model *tt_load_nanogpt(const char *path, const char *config_path /* NULL: none */);
/* The same from a parsed file and the config JSON's text (NULL: none); `what` names them. */
model *tt_from_nanogpt(const st_file *f, const char *config_json, const char *what);
/* m's parameters in that layout (a tied model: the same values under both names,
 * as nanoGPT's state_dict holds them), data F64 (f32 = 0) or F32, the config as
 * metadata, and, when d is character text of m's V symbols, its vocabulary
 * ("vocab_bytes": per id the byte, decimal, or "other"; d NULL: none). Writing what
 * was read gives the same bytes. */
void tt_save_nanogpt(const model *m, const tt_data *d, const char *path, int f32);
/* The data a model file at path (of V symbols) is analysed on: the same number of
 * symbols and, when the file's metadata holds a character vocabulary, the same
 * byte behind every id. User error naming the first difference. */
void tt_nanogpt_check_data(const char *path, int V, const tt_data *d);
/* Size flags given beside a model file (asked: V, C, heads, M, T, layers, bias; -1
 * where a flag was not given) against the file's configuration: a flag that
 * disagrees is a user error naming it (the file's sizes are the ones used). */
void tt_check_sizes(const tt_config *file, const tt_config *asked, const char *what);

/* ---- Hugging Face GPT-2 checkpoints (tt_gpt2hf.c) ---------------------------------------
 * A folder holding model.safetensors and config.json, or one .safetensors file with
 * its config.json given apart: GPT2LMHeadModel's state-dict names
 * (transformer.wte.weight [V, C], transformer.wpe.weight [n_positions, C], per block i
 * transformer.h.i.ln_1.weight/.bias, attn.c_attn.weight [C, 3C] / .bias [3C]
 * (Conv1D: [in, out], query, key, value column blocks), attn.c_proj.* [C, C],
 * ln_2.*, mlp.c_fc.weight [C, M], mlp.c_proj.weight [M, C], transformer.ln_f.*,
 * lm_head.weight [V, C] absent or equal to wte when tied) or GPT2Model's (the same
 * without "transformer.", no head: tied). Conv1D's weights are transposed into the
 * toolkit's (out, in). The attention buffers attn.bias (a causal mask [1, 1,
 * n_positions, n_positions], checked) and attn.masked_bias (one value, unused) are
 * accepted. config.json: n_embd, n_head (required), n_layer, n_positions (= n_ctx),
 * vocab_size, n_inner (null: 4 n_embd), layer_norm_epsilon (1e-5 only: the toolkit's
 * LayerNorm), activation_function (gelu_new, the default, or gelu_pytorch_tanh: the
 * tanh GELU; gelu: exact erf), tie_word_embeddings (default true); refused by name:
 * scale_attn_weights false, scale_attn_by_inverse_layer_idx, reorder_and_upcast_attn
 * or add_cross_attention true, another activation, model_type or architecture, a key
 * twice and any key the toolkit does not know; token ids, dropout rates (the
 * eval-mode function is analysed), the summary head's keys, versions are ignored.
 * The model's T is n_positions. User errors are one line naming the file and the
 * tensor or key. */
model *tt_load_gpt2(const char *path /* folder or .safetensors */, const char *config_path /* NULL: the folder's */);
/* The same from a parsed file and the config JSON's text; `what` names them. */
model *tt_from_gpt2(const st_file *f, const char *config_json, const char *what);
/* Whether a --model path is a GPT-2 checkpoint: a file whose tensors are GPT2Model's
 * names or hold a Conv1D c_attn [C, 3C], or a folder whose model.safetensors is one or
 * whose config.json says model_type gpt2 (or has n_embd). Any file: tt_load_file reads it as GPT-2 or nanoGPT. */
int tt_gpt2_looks(const char *path);
model *tt_load_file(const char *path, const char *config_path);
/* tt_nanogpt_check_data on a --model path (a folder: its model.safetensors). */
void tt_file_check_data(const char *path, int V, const tt_data *d);
/* m written as a Hugging Face folder (model.safetensors in GPT2LMHeadModel's names,
 * no lm_head.weight when tied, as save_pretrained writes it; config.json), F64 or F32;
 * x (P values in m's layout) written as that model.safetensors; and such a file read
 * into x (both name layouts; the shapes m's). A model without biases has no GPT-2
 * layout: user error. */
void tt_save_gpt2(const model *m, const char *dir, int f32);
void tt_save_gpt2_tensors(const model *m, const double *x, const char *path, int f32);
void tt_gpt2_read_vector(const model *m, const char *path, double *x);

#endif
