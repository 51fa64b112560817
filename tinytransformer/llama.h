/* llama — a Llama-style decoder (Hugging Face's LlamaForCausalLM) with exact
 * Hessians, beside tt.h's nanoGPT GPT.
 *
 * Model: token embedding (V×C), no learned positions; per layer pre-norm
 * RMSNorm → causal attention with rotary position embedding on the queries
 * and keys and grouped key/value heads → o_proj → residual; RMSNorm → SwiGLU
 * MLP down(silu(gate x) ⊙ up x) → residual; final RMSNorm; output head
 * lm_head (V×C) or, tied, the embedding itself. No biases anywhere. Next-token
 * cross-entropy, mean over all B·T predictions.
 *
 *   RMSNorm    y = g ⊙ x r,  r = 1/√(mean(x²) + eps)        (eps: rms_norm_eps)
 *   rotary     Hugging Face's rotate_half convention: in each head of hd
 *              features, feature i < hd/2 pairs with i + hd/2 and the pair is
 *              rotated by the angle t·θ^(−2i/hd) at position t (0..T−1):
 *              x'_i = x_i cos − x_{i+hd/2} sin,  x'_{i+hd/2} = x_{i+hd/2} cos + x_i sin
 *              (θ: rope_theta). Angles are computed in float64 (Hugging Face
 *              computes them in float32; docs/llama.md).
 *   attention  query head h reads key/value head h / (heads / kv_heads)
 *              (Hugging Face's repeat_kv), scores scaled by 1/√hd, causal.
 *   SwiGLU     silu(a) = a σ(a) on the gate, times the up projection.
 *
 * Tensor table (Hugging Face's state-dict names, in the order the forward pass
 * reads them): "model.embed_tokens.weight" (embed), per layer i
 * "model.layers.i.input_layernorm.weight" (norm), "...self_attn.q_proj.weight"
 * (query, heads·hd × C, `heads` heads), "...k_proj.weight" (key, kv_heads·hd × C,
 * `kv_heads` heads), "...v_proj.weight" (value, kv_heads·hd × C, `kv_heads`
 * heads), "...o_proj.weight" (attn_proj, C × heads·hd),
 * "...post_attention_layernorm.weight" (norm), "...mlp.gate_proj.weight" and
 * "...mlp.up_proj.weight" (mlp_fc, M × C), "...mlp.down_proj.weight"
 * (mlp_proj, C × M); "model.norm.weight" (norm); "lm_head.weight" (output)
 * unless tied. Weights (out, in) row-major, as nn.Linear stores them.
 *
 * Loss, gradient and the exact Hessian-vector product on panels of k
 * directions by Pearlmutter's R-operator, batched over the directions with
 * BLAS-3 (the direction-minor layout of tt_kernels.h, whose linear and
 * attention R-kernels it reuses; RMSNorm, SwiGLU, rotary and the grouped heads
 * are llama_kernels.h's). Worker threads each run whole sub-panels of
 * directions, so results do not depend on the thread count.
 *
 * Init as Hugging Face's: every weight matrix N(0, 0.02²), RMSNorm gains 1.
 */
#ifndef LLAMA_H
#define LLAMA_H

#include "core/core.h"
#include "core/model.h"
#include "core/safetensors.h"
#include <stddef.h>

typedef struct {
    int V;              /* vocabulary size */
    int C;              /* hidden size */
    int layers;
    int heads;          /* query heads */
    int kv_heads;       /* key/value heads, divides heads (heads: MHA; fewer: grouped-query attention) */
    int head_dim;       /* hd, even (rotary pairs); 0: C / heads */
    int M;              /* intermediate size (SwiGLU) */
    int T;              /* context length */
    double eps;         /* RMSNorm's eps (rms_norm_eps) */
    double theta;       /* rotary base (rope_theta) */
    int tied;           /* 1: the output head reads the embedding (tie_word_embeddings) */
    unsigned long seed; /* initialisation */
} llama_config;

/* The paper's tiny sizes in Llama form: V 8, C 16, 1 layer, 4 heads, 4 kv heads,
 * M 32, T 8, eps 1e-6, θ 10000, untied → P = 2,864. */
llama_config llama_defaults(void);
/* User error naming the option when a size is out of range. */
void llama_check_config(const llama_config *c);
/* hd of c (head_dim, or C / heads when 0). */
int llama_head_dim(const llama_config *c);
size_t llama_param_count(const llama_config *c);

/* A new model, params initialised from c->seed; free with model_free. */
model *llama_new(const llama_config *c);
/* m's configuration (head_dim resolved); internal error if m is not a Llama model. */
const llama_config *llama_config_of(const model *m);
int model_is_llama(const model *m);
/* Reinitialise params from seed (weights N(0, 0.02²), gains 1). */
void llama_init_params(model *m, unsigned long seed);
/* The current batch: B sequences of T+1 tokens (inputs 0..T−1, targets 1..T); copied.
 * User error on a token outside 0..V−1. */
void llama_set_batch(model *m, const int *tokens /* (B,T+1) */, int B);
/* Bytes of the base activations of a batch of B sequences (checked before allocating). */
double llama_batch_bytes(const llama_config *c, int B);
/* Forward pass: the mean loss; logits (B,T,V) and per-position losses (B,T) when non-NULL. */
double llama_forward(model *m, double *logits, double *losses);
/* Worker threads of hvp (0 = toolkit_threads()); results do not depend on it. */
void llama_set_threads(model *m, int n);
/* Gauss–Newton mode (1): hvp and hess_cols give G = Jᵀ S J instead of H, J =
 * ∂logits/∂θ and S the mean cross-entropy's softmax Hessian (per position
 * (diag(p) − p pᵀ)/N): the R-pass with every base gradient zero (the second
 * derivatives of RMSNorm, rotary attention, SwiGLU and every product of
 * parameters dropped). G is symmetric PSD; H = G + Σ (∂L/∂z)·∂²z/∂θ². loss and
 * grad are unchanged; with the mode off H is bit for bit as before. User error
 * for a value other than 0 or 1. */
void llama_set_gauss_newton(model *m, int on);
int llama_gauss_newton(const model *m);
/* hvp blocking: at most kp directions per R-pass, bc sequences per chunk (0: automatic). */
void llama_set_hvp_blocking(model *m, int kp, int bc);


/* ---- Hugging Face checkpoints (llama_hf.c) -----------------------------------------------------
 * LlamaForCausalLM's layout: model.safetensors (F64, F32, F16 or BF16) with the
 * tensor names above (lm_head.weight absent or equal to the embedding when
 * tied; older checkpoints' rotary buffers ...rotary_emb.inv_freq accepted and
 * checked against rope_theta), and config.json: vocab_size, hidden_size,
 * intermediate_size, num_hidden_layers, num_attention_heads (required: the
 * shapes cannot tell it), num_key_value_heads, head_dim, rms_norm_eps (default
 * 1e-6), rope_theta (default 10000; or rope_parameters {"rope_type":
 * "default", "rope_theta": θ}), max_position_embeddings (default 2048),
 * tie_word_embeddings (default false). What the toolkit does not model is a
 * user error naming it (one line): rope_scaling other than null, attention_bias
 * or mlp_bias true, a sliding_window, hidden_act other than silu, dropout, a
 * model_type or architecture other than Llama's, a bias tensor, an unknown
 * tensor name, a missing tensor or a wrong shape, a config that disagrees with
 * the shapes, and any config key it does not know; keys that do not change the
 * function (token ids, dtype, use_cache, pretraining_tp, initializer_range,
 * versions) are ignored. T: the context length of the model built (0:
 * max_position_embeddings, at most 4096), at most max_position_embeddings. */
/* A cheap look, for choosing a reader: 1 when path is a folder holding
 * config.json that is not GPT-2's (tt_gpt2_looks), or a file whose safetensors header names
 * model.embed_tokens.weight (the reader's errors come later). */
int llama_hf_looks(const char *path);
/* path: a folder holding model.safetensors and config.json (config_path NULL),
 * or a .safetensors file with its config_path. */
model *llama_load_hf(const char *path, const char *config_path, int T);
/* The same from a parsed file and the config's text; `what` names them in errors. */
model *llama_from_hf(const st_file *f, const char *config_json, int T, const char *what);
/* dir/model.safetensors (F64, or F32 with f32 = 1; no lm_head.weight when tied,
 * as Hugging Face saves a tied model) and dir/config.json (max_position_embeddings
 * = T); the folder is created if needed. Writing what was read gives the same tensors. */
void llama_save_hf(const model *m, const char *dir, int f32);
/* x (P values laid out as m's parameters, e.g. a gradient) in that layout into path. */
void llama_save_hf_tensors(const model *m, const double *x, const char *path, int f32);

#endif
