#!/usr/bin/env python3
"""make test-torch: the toolkit's GPT against PyTorch, in Hugging Face's GPT-2 layouts.

GPT-2 written here from its published definition (transformers' modeling_gpt2.py)
with PyTorch's own modules — Conv1D as x @ W + b with W [in, out], gelu_new (the
tanh GELU), nn.LayerNorm (eps 1e-5), causal attention masked with the dtype's
minimum, the head tied to wte (or not) — in float64 (the `transformers` package is
not available here: the definition is the reference):
  1. forward: saved in both name layouts — GPT2LMHeadModel's as save_pretrained
     writes it (transformer.* names, no lm_head.weight when tied) and GPT2Model's
     (no prefix, no head, with the attn.bias / attn.masked_bias buffers older
     versions saved) — with a config.json like the published gpt2's (dropouts,
     summary keys, n_ctx); tt_probe reads each and draws a batch of text tokens;
     the toolkit's loss, gradient and H v (R-operator) must equal PyTorch's
     loss, autograd gradient and double-backward H v to 1e-10 (relative to the
     largest entry);
  2. other dtypes: the same model saved as F32 and BF16; PyTorch on the weights
     rounded the same way: the same loss and gradient to 1e-10;
  3. the test can fail: the toolkit told activation_function "gelu" (the exact
     erf GELU) for this gelu_new model, and a file whose Conv1D weights are what
     a reader skipping the transpose would use, must each differ from PyTorch
     by far more than the tolerance;
  4. reverse: models written by the toolkit (tt_probe --save-hf: the GPT-2 read
     in 1, and a nanoGPT checkpoint trained by the toolkit, F64 and F32) load
     into this GPT-2 with load_state_dict(strict=True) and give the toolkit's
     loss to 1e-10; a folder read and written again is the same bytes.
Prints "# counts P F" like the C tests; exit status 1 on any failure.

  tests/torch_gpt2.py BUILD_DIR
"""
import json
import math
import os
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "examples"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_char_gpt import save_safetensors  # noqa: E402
import torch_nanogpt as tn  # noqa: E402  (the nanoGPT test's checks, counters and file helpers)
from torch_nanogpt import check, st_read, run, read_loss, rel, TOL  # noqa: E402
from torch_llama import write_rounded, params_of, torch_probe, flat  # noqa: E402  (the Llama test's probe)

torch.set_default_dtype(torch.float64)


# ---- GPT-2, from its published definition ------------------------------------------------------------

class Conv1D(nn.Module):
    """transformers' Conv1D(nf, nx): y = x W + b, W stored [nx, nf] = [in, out] (a transposed nn.Linear)."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.02)
        self.bias = nn.Parameter(torch.zeros(nf))

    def forward(self, x):
        return (x.reshape(-1, x.size(-1)) @ self.weight + self.bias).reshape(x.shape[:-1] + (self.nf,))


def gelu_new(x):
    """NewGELUActivation: the tanh approximation GPT-2 was trained with."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


ACT = {"gelu_new": gelu_new, "gelu": F.gelu}


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        C, n = c["n_embd"], c["n_positions"]
        self.heads = c["n_head"]
        self.c_attn = Conv1D(3 * C, C)
        self.c_proj = Conv1D(C, C)
        self.register_buffer("bias", torch.tril(torch.ones(n, n, dtype=torch.bool)).view(1, 1, n, n),
                             persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.heads, C // self.heads).transpose(1, 2) for t in (q, k, v))
        w = q @ k.transpose(-1, -2) / math.sqrt(v.size(-1))  # scale_attn_weights
        w = torch.where(self.bias[:, :, :T, :T], w, torch.finfo(w.dtype).min)
        y = F.softmax(w, dim=-1) @ v
        return self.c_proj(y.transpose(1, 2).reshape(B, T, C))


class MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        C = c["n_embd"]
        M = c.get("n_inner") or 4 * C
        self.c_fc = Conv1D(M, C)
        self.c_proj = Conv1D(C, M)
        self.act = ACT[c.get("activation_function", "gelu_new")]

    def forward(self, x):
        return self.c_proj(self.act(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        C, eps = c["n_embd"], c.get("layer_norm_epsilon", 1e-5)
        self.ln_1 = nn.LayerNorm(C, eps=eps)
        self.attn = Attention(c)
        self.ln_2 = nn.LayerNorm(C, eps=eps)
        self.mlp = MLP(c)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = nn.Embedding(c["vocab_size"], c["n_embd"])
        self.wpe = nn.Embedding(c["n_positions"], c["n_embd"])
        self.h = nn.ModuleList([Block(c) for _ in range(c["n_layer"])])
        self.ln_f = nn.LayerNorm(c["n_embd"], eps=c.get("layer_norm_epsilon", 1e-5))

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
        for block in self.h:
            x = block(x)
        return self.ln_f(x)


class GPT2LMHeadModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        self.transformer = GPT2Model(c)
        self.lm_head = nn.Linear(c["n_embd"], c["vocab_size"], bias=False)
        if c.get("tie_word_embeddings", True):
            self.lm_head.weight = self.transformer.wte.weight

    def forward(self, idx, targets):
        logits = self.lm_head(self.transformer(idx))
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))


# ---- files -------------------------------------------------------------------------------------------

def config(tied, **kw):
    """A config.json like the published gpt2's (dropouts, the summary head's keys, token ids), small."""
    c = dict(activation_function="gelu_new", architectures=["GPT2LMHeadModel"], attn_pdrop=0.1, bos_token_id=31,
             embd_pdrop=0.1, eos_token_id=31, initializer_range=0.02, layer_norm_epsilon=1e-05, model_type="gpt2",
             n_ctx=12, n_embd=16, n_head=2, n_inner=24, n_layer=2, n_positions=12, resid_pdrop=0.1,
             summary_activation=None, summary_first_dropout=0.1, summary_proj_to_labels=True, summary_type="cls_index",
             summary_use_proj=True, task_specific_params={"text-generation": {"do_sample": True, "max_length": 50}},
             tie_word_embeddings=bool(tied), vocab_size=32)
    c.update(kw)
    return c


def nontrivial(model, seed):
    """Weights large enough that attention and GELU are far from linear; gains away from 1, biases non-zero."""
    torch.manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.normal_(0, 0.3)
            if "ln_" in name and name.endswith("weight"):
                p.add_(1)
    return model


def state_of(model, layout):
    """The tensors a file of that layout holds: 'lmhead' as save_pretrained writes GPT2LMHeadModel (no
    lm_head.weight when tied); 'model' GPT2Model's state dict with the attention buffers older versions saved."""
    if layout == "lmhead":
        return params_of(model)
    sd = {n[len("transformer."):]: p for n, p in params_of(model).items()}
    n = model.c["n_positions"]
    for i in range(model.c["n_layer"]):
        sd["h.%d.attn.bias" % i] = torch.tril(torch.ones(n, n)).view(1, 1, n, n)
        sd["h.%d.attn.masked_bias" % i] = torch.tensor(-1e4)
    return sd


def save(folder, model, layout, cfg, dtype=np.float64):
    os.makedirs(folder, exist_ok=True)
    save_safetensors(os.path.join(folder, "model.safetensors"), state_of(model, layout), {"format": "pt"}, dtype)
    json.dump(cfg, open(os.path.join(folder, "config.json"), "w"), indent=2)


def toolkit(build, folder, out, extra=()):
    run(build, "tt_probe", "--model", folder, "--data", "text", "--batch", "6", "--out", out, "--quiet", *extra)
    tokens = torch.from_numpy(np.load(os.path.join(out, "tokens.npy")).astype(np.int64))
    return tokens, read_loss(out), st_read(os.path.join(out, "grad.safetensors"))[0]


# ---- 1. PyTorch's model in the toolkit: loss, gradient, H v ------------------------------------------

def forward_check(build, tmp, tag, layout, cfg, seed):
    model = nontrivial(GPT2LMHeadModel(cfg), seed)
    folder = os.path.join(tmp, tag)
    save(folder, model, layout, cfg)
    names = list(params_of(model))
    v = {n: torch.randn_like(p) for n, p in params_of(model).items()}
    vpath = os.path.join(tmp, tag + "_v.safetensors")
    save_safetensors(vpath, v, {"format": "pt"}, np.float64)
    out = os.path.join(tmp, tag + "_probe")
    tokens, tl, tg = toolkit(build, folder, out, ("--direction", vpath))
    th = st_read(os.path.join(out, "hv.safetensors"))[0]
    check(sorted(tg) == sorted(names), "%s: the toolkit's tensors %s are not PyTorch's %s" % (tag, sorted(tg), names))
    loss, grads, hv = torch_probe(model, tokens, v)
    G, Gt, H, Ht = flat(grads, names), flat(tg, names), flat(hv, names), flat(th, names)
    check(abs(tl - loss) <= TOL * max(1, abs(loss)), "%s: loss %.17g vs PyTorch %.17g" % (tag, tl, loss))
    check(rel(Gt, G) <= TOL, "%s: gradient rel diff %.3g" % (tag, rel(Gt, G)))
    check(rel(Ht, H) <= TOL, "%s: H v rel diff %.3g" % (tag, rel(Ht, H)))
    print("# torch GPT-2 %s: loss %.15g, grad %.2g, H v %.2g (P %d)" % (tag, loss, rel(Gt, G), rel(Ht, H),
                                                                      G.numel()))
    return model, folder, tokens, loss, G


# ---- 2. other dtypes ----------------------------------------------------------------------------------

def dtype_check(build, tmp, model, folder, tag):
    for code in ("F32", "BF16"):
        d = os.path.join(tmp, "%s_%s" % (tag, code))
        os.makedirs(d)
        sd = params_of(model)
        if code == "F32":
            save_safetensors(os.path.join(d, "model.safetensors"), sd, {"format": "pt"}, np.float32)
            rounded = {n: p.detach().to(torch.float32).to(torch.float64) for n, p in sd.items()}
        else:
            rounded = write_rounded(os.path.join(d, "model.safetensors"), sd, code)
        os.link(os.path.join(folder, "config.json"), os.path.join(d, "config.json"))
        tokens, tl, tg = toolkit(build, d, d + "_probe")
        m = GPT2LMHeadModel(model.c)
        with torch.no_grad():
            for n, p in params_of(m).items():
                p.copy_(rounded[n])
        loss, grads, _ = torch_probe(m, tokens)
        names = list(grads)
        check(abs(tl - loss) <= TOL * max(1, abs(loss)), "%s %s: loss %.17g vs PyTorch %.17g" % (tag, code, tl, loss))
        check(rel(flat(tg, names), flat(grads, names)) <= TOL, "%s %s: gradient rel diff %.3g" % (
            tag, code, rel(flat(tg, names), flat(grads, names))))
        print("# GPT-2 %s %s: loss %.15g in PyTorch, %.15g in the toolkit" % (tag, code, loss, tl))


# ---- 3. the test can fail -----------------------------------------------------------------------------

def controls(build, tmp, model, folder, loss, G, tag):
    names = list(params_of(model))
    # the toolkit told the exact erf GELU for this gelu_new model
    d = os.path.join(tmp, tag + "_erf")
    os.makedirs(d)
    os.link(os.path.join(folder, "model.safetensors"), os.path.join(d, "model.safetensors"))
    json.dump(dict(model.c, activation_function="gelu"), open(os.path.join(d, "config.json"), "w"))
    _, el, eg = toolkit(build, d, d + "_probe")
    e_loss, e_grad = abs(el - loss) / abs(loss), rel(flat(eg, names), G)
    check(e_loss > 1e3 * TOL and e_grad > 1e3 * TOL, "%s: the erf GELU is not told apart from gelu_new (loss %.3g, "
          "gradient %.3g)" % (tag, e_loss, e_grad))
    # Conv1D's transpose skipped: a reader that took each [in, out] weight's bytes as (out, in) rows would use
    # W.reshape(out, in); the toolkit reads a file holding that matrix's transpose the same way
    d = os.path.join(tmp, tag + "_notranspose")
    sd = {}
    for n, p in params_of(model).items():
        p = p.detach()
        conv = p.dim() == 2 and ".h." in n
        sd[n] = p.reshape(p.shape[1], p.shape[0]).t().contiguous() if conv else p
    os.makedirs(d)
    save_safetensors(os.path.join(d, "model.safetensors"), sd, {"format": "pt"}, np.float64)
    os.link(os.path.join(folder, "config.json"), os.path.join(d, "config.json"))
    _, tl, tg = toolkit(build, d, d + "_probe")
    t_loss = abs(tl - loss) / abs(loss)
    t_grad = rel(flat({n: tg[n].reshape(sd[n].shape) for n in names}, names), G)
    check(t_loss > 1e3 * TOL and t_grad > 1e3 * TOL, "%s: a skipped Conv1D transpose is not told apart (loss %.3g, "
          "gradient %.3g)" % (tag, t_loss, t_grad))
    print("# GPT-2 %s controls: the erf GELU differs by %.2g (loss) / %.2g (gradient), the skipped transpose by "
          "%.2g / %.2g" % (tag, e_loss, e_grad, t_loss, t_grad))


# ---- 4. the toolkit's model in PyTorch ------------------------------------------------------------------

def load_toolkit_folder(folder):
    c = json.load(open(os.path.join(folder, "config.json")))
    sd, _, _ = st_read(os.path.join(folder, "model.safetensors"))
    if c["tie_word_embeddings"]:  # Hugging Face's tied file has no lm_head.weight; the module has both names
        sd["lm_head.weight"] = sd["transformer.wte.weight"]
    model = GPT2LMHeadModel(c)
    model.load_state_dict(sd, strict=True)
    return model


def reverse_check(build, tmp, tag, source, extra=(), f32=False):
    folder = os.path.join(tmp, tag)
    out = folder + "_probe"
    run(build, "tt_probe", "--model", source, "--data", "text", "--batch", "6", "--save-hf", folder, "--out", out,
        "--quiet", *(list(extra) + (["--save-f32"] if f32 else [])))
    model = load_toolkit_folder(folder)
    tokens = torch.from_numpy(np.load(os.path.join(out, "tokens.npy")).astype(np.int64))
    with torch.no_grad():
        loss = model(tokens[:, :-1], tokens[:, 1:]).item()
    tl = read_loss(out)
    if f32:  # the toolkit ran on its F64 weights, the file holds them rounded: run the toolkit on the file
        tl = toolkit(build, folder, out + "_again", ("--tokens", os.path.join(out, "tokens.npy")))[1]
    check(abs(tl - loss) <= TOL * max(1, abs(loss)), "%s: PyTorch loss %.17g vs toolkit %.17g" % (tag, loss, tl))
    print("# GPT-2 %s: loss %.15g in PyTorch, %.15g in the toolkit (%s)" % (tag, loss, tl,
                                                                          model.c["activation_function"]))
    return folder


def bytes_check(build, folder):
    again = folder + "_again"
    run(build, "tt_probe", "--model", folder, "--data", "text", "--batch", "2", "--save-hf", again, "--out",
        again + "_probe", "--quiet")
    for f in ("model.safetensors", "config.json"):
        check(open(os.path.join(folder, f), "rb").read() == open(os.path.join(again, f), "rb").read(),
              "%s read and written again by the toolkit is not the same bytes" % os.path.join(folder, f))


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    cases = [("GPT2LMHeadModel tied", "lmhead", config(1)),
             ("GPT2LMHeadModel untied", "lmhead", config(0)),
             ("GPT2Model", "model", config(1, architectures=["GPT2Model"], n_inner=None, n_embd=8, n_head=2))]
    with tempfile.TemporaryDirectory() as tmp:
        folders = {}
        for i, (tag, layout, c) in enumerate(cases):
            t = tag.replace(" ", "_")
            model, folder, tokens, loss, G = forward_check(build, tmp, t, layout, c, 30 + i)
            folders[t] = folder
            if tag == "GPT2LMHeadModel untied":
                dtype_check(build, tmp, model, folder, t)
            if tag == "GPT2LMHeadModel tied":
                controls(build, tmp, model, folder, loss, G, t)
        written = reverse_check(build, tmp, "toolkit_from_hf", folders["GPT2LMHeadModel_tied"])
        bytes_check(build, written)
        reverse_check(build, tmp, "toolkit_from_hf_untied_f32", folders["GPT2LMHeadModel_untied"], f32=True)
        nano = os.path.join(tmp, "nano.safetensors")
        run(build, "train_transformer", "--data", "text", "--layers", "2", "--T", "12", "--M", "24", "--steps", "40",
            "--tied", "1", "--lr", "0.01", "--checkpoints", "1", "--save-safetensors", nano, "--out",
            os.path.join(tmp, "train"), "--quiet")
        reverse_check(build, tmp, "toolkit_from_nanogpt", nano)
    print("# counts %d %d" % (tn.passed, tn.failed))
    return 1 if tn.failed else 0


if __name__ == "__main__":
    sys.exit(main())
