#!/usr/bin/env python3
"""Train a small char-level Llama in PyTorch on the toolkit's default corpus and
export it in Hugging Face's layout for the toolkit (docs/llama.md, the worked example).

The model is Hugging Face's LlamaForCausalLM written from its published
definition with PyTorch's own modules (the transformers package is not needed):
the same module names, so the same state dict. Token embedding; per layer
RMSNorm, causal attention with rotary position embedding (rotate_half: feature
i of a head pairs with i + head_dim/2, angle t * theta^(-2i/head_dim)) and
grouped key/value heads (query head h reads kv head h // (heads / kv_heads)),
o_proj, residual; RMSNorm, SwiGLU MLP down(silu(gate x) * up x), residual;
final RMSNorm; lm_head, tied to the embedding or not; no biases. The data and
the training are the GPT example's (train_char_gpt.py: the toolkit's --data
text vocabulary, the last 10% held out, AdamW with warm-up and cosine decay).
Written to --out: model.safetensors (F32; no lm_head.weight when tied, as
Hugging Face saves it) and config.json (LlamaConfig's keys), vocab.csv, log.csv;
with --save-at S, the model after S steps in the same layout in --out/step<S>.

    /usr/bin/python3 docs/examples/train_char_llama.py --out results/char_llama

tests/torch_llama.py imports Llama and save_hf from here: make test-torch
checks this very code against the toolkit.
"""
import json
import math
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from train_char_gpt import arguments, load_corpus, save_safetensors, train


class RMSNorm(nn.Module):
    def __init__(self, n, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.eps = eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def rotary_tables(T, hd, theta):
    """cos and sin (T, hd) of the angles t * theta^(-2i/hd), each repeated for the pair's second half."""
    inv_freq = 1.0 / theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd)
    ang = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)
    ang = torch.cat((ang, ang), dim=-1)
    return ang.cos().to(torch.get_default_dtype()), ang.sin().to(torch.get_default_dtype())


def head_dim(c):
    return c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        C, self.H, self.hd = c["hidden_size"], c["num_attention_heads"], head_dim(c)
        self.Hkv = c.get("num_key_value_heads") or self.H
        self.q_proj = nn.Linear(C, self.H * self.hd, bias=False)
        self.k_proj = nn.Linear(C, self.Hkv * self.hd, bias=False)
        self.v_proj = nn.Linear(C, self.Hkv * self.hd, bias=False)
        self.o_proj = nn.Linear(self.H * self.hd, C, bias=False)

    def rotate(self, x, cos, sin):
        """Hugging Face's apply_rotary_pos_emb on one tensor (B, heads, T, hd)."""
        return x * cos + rotate_half(x) * sin

    def forward(self, x, cos, sin):
        B, T, _ = x.shape
        q = self.q_proj(x).view(B, T, self.H, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.Hkv, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.Hkv, self.hd).transpose(1, 2)
        q, k = self.rotate(q, cos, sin), self.rotate(k, cos, sin)
        k, v = (z.repeat_interleave(self.H // self.Hkv, dim=1) for z in (k, v))  # repeat_kv
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.hd)
        att = att.masked_fill(~torch.tril(torch.ones(T, T, dtype=torch.bool)), float("-inf"))
        y = (F.softmax(att, dim=-1) @ v).transpose(1, 2).reshape(B, T, self.H * self.hd)
        return self.o_proj(y)


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        C, M = c["hidden_size"], c["intermediate_size"]
        self.gate_proj = nn.Linear(C, M, bias=False)
        self.up_proj = nn.Linear(C, M, bias=False)
        self.down_proj = nn.Linear(M, C, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self_attn = Attention(c)
        self.mlp = MLP(c)
        self.input_layernorm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.post_attention_layernorm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])

    def forward(self, x, cos, sin):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class Llama(nn.Module):
    """LlamaForCausalLM: .model (embed_tokens, layers, norm) and .lm_head; c holds LlamaConfig's keys."""

    def __init__(self, c):
        super().__init__()
        self.c = c
        self.model = nn.Module()
        self.model.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        self.model.layers = nn.ModuleList([DecoderLayer(c) for _ in range(c["num_hidden_layers"])])
        self.model.norm = RMSNorm(c["hidden_size"], c["rms_norm_eps"])
        self.lm_head = nn.Linear(c["hidden_size"], c["vocab_size"], bias=False)
        for p in self.parameters():  # Hugging Face's initialisation: matrices N(0, 0.02^2), gains 1
            if p.dim() == 2:
                nn.init.normal_(p, 0, 0.02)
        if c.get("tie_word_embeddings", False):
            self.lm_head.weight = self.model.embed_tokens.weight

    def forward(self, idx, targets):
        T = idx.shape[1]
        cos, sin = rotary_tables(T, head_dim(self.c), self.c["rope_theta"])
        x = self.model.embed_tokens(idx)
        for layer in self.model.layers:
            x = layer(x, cos, sin)
        logits = self.lm_head(self.model.norm(x))
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


# LlamaConfig's keys the toolkit reads besides the sizes, at the values it models.
CONFIG_FIXED = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_act": "silu",
                "attention_bias": False, "mlp_bias": False, "rope_scaling": None, "attention_dropout": 0.0}


def save_hf(folder, model, dtype=np.float32):
    """model.safetensors (no lm_head.weight when tied) and config.json in folder."""
    os.makedirs(folder, exist_ok=True)
    sd = model.state_dict()
    if model.c.get("tie_word_embeddings", False):
        del sd["lm_head.weight"]
    save_safetensors(os.path.join(folder, "model.safetensors"), sd, {"format": "pt"}, dtype)
    json.dump(dict(CONFIG_FIXED, **model.c), open(os.path.join(folder, "config.json"), "w"), indent=1)


def main():
    a = arguments(__doc__.split("\n")[0], "results/char_llama", layers=1, heads=4, kv_heads=2, hidden=24,
                  intermediate=64, tied=1, save_at=-1)
    train_part, held, V = load_corpus(a)
    c = dict(vocab_size=V, hidden_size=a.hidden, intermediate_size=a.intermediate, num_hidden_layers=a.layers,
             num_attention_heads=a.heads, num_key_value_heads=a.kv_heads, rms_norm_eps=1e-5, rope_theta=10000.0,
             max_position_embeddings=a.block_size, tie_word_embeddings=bool(a.tied))
    model = Llama(c)
    seconds = train(model, train_part, held, a,
                    lambda step, m: step == a.save_at and save_hf(os.path.join(a.out, "step%d" % step), m))
    save_hf(a.out, model)
    n = sum(p.numel() for p in model.parameters())
    print("wrote %s/model.safetensors and config.json: %d parameters, %.0f s" % (a.out, n, seconds))


if __name__ == "__main__":
    main()
