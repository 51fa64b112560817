#!/usr/bin/env python3
"""make test-torch: the toolkit's Llama-style model against PyTorch, in Hugging Face's layout.

The Llama of the worked example, docs/examples/train_char_llama.py, imported
(the code a user runs): Hugging Face's LlamaForCausalLM written from its
published definition with PyTorch's own modules (nn.Linear, nn.Embedding,
RMSNorm, rotate_half rotary, repeat_interleave for the grouped heads, F.silu),
in float64, MHA, GQA and one kv head, a head size apart from C/heads, tied and
untied:
  1. forward: saved in Hugging Face's layout (model.safetensors F64 +
     config.json), llama_probe reads it and draws a batch of text tokens (the
     held-out part of the default corpus); the toolkit's loss, gradient and
     H v (R-operator) must equal PyTorch's loss, autograd gradient and
     double-backward H v to 1e-10 (relative to the largest entry);
  2. other dtypes: the same model saved as F32, F16 and BF16; PyTorch on the
     weights rounded the same way: the same loss and gradient to 1e-10;
  3. the test can fail: the same weights in a PyTorch model with the other
     rotary convention (interleaved pairs (2i, 2i+1), Meta's original layout),
     and the toolkit told another RMSNorm eps than the model's, must each
     differ from the toolkit by far more than the tolerance;
  4. reverse: a model written by the toolkit (llama_probe --save-hf, F64 and
     F32) loads into this Llama with load_state_dict(strict=True) and gives the
     toolkit's loss to 1e-10.
Prints "# counts P F" like the C tests; exit status 1 on any failure.

  tests/torch_llama.py BUILD_DIR
"""
import json
import os
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "examples"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_char_llama import Llama, save_hf, rotate_half  # noqa: E402  (the code a user runs, not a copy)
from train_char_gpt import save_safetensors  # noqa: E402
import torch_nanogpt as tn  # noqa: E402  (the nanoGPT test's checks, counters and file helpers)
from torch_nanogpt import check, st_read, run, read_loss, rel, TOL  # noqa: E402

torch.set_default_dtype(torch.float64)


def config(C, heads, kv_heads, tied, head_dim=None, eps=1e-6):
    c = dict(vocab_size=32, hidden_size=C, intermediate_size=20, num_hidden_layers=2, num_attention_heads=heads,
             num_key_value_heads=kv_heads, rms_norm_eps=eps, rope_theta=10.0, max_position_embeddings=12,
             tie_word_embeddings=bool(tied))
    if head_dim:
        c["head_dim"] = head_dim
    return c


def nontrivial(model, seed):
    """Weights large enough that attention, rotary and SiLU are far from linear; gains away from 1."""
    torch.manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.normal_(0, 0.3)
            if name.endswith("norm.weight"):
                p.add_(1)
    return model


def params_of(model):
    return dict(model.named_parameters())  # tied: the shared Parameter once, as model.embed_tokens.weight


def torch_probe(model, tokens, v=None):
    """PyTorch's loss, gradient and (with v) double-backward H v, by parameter name."""
    params = params_of(model)
    loss = model(tokens[:, :-1], tokens[:, 1:])
    grads = torch.autograd.grad(loss, list(params.values()), create_graph=v is not None)
    hv = None
    if v is not None:
        dot = sum((g * v[n]).sum() for n, g in zip(params, grads))
        hv = dict(zip(params, torch.autograd.grad(dot, list(params.values()))))
    return loss.item(), dict(zip(params, grads)), hv


def flat(d, names):
    return torch.cat([d[n].detach().reshape(-1) for n in names])


def toolkit(build, folder, out, extra=()):
    run(build, "llama_probe", "--model", folder, "--data", "text", "--batch", "6", "--out", out, "--quiet", *extra)
    tokens = torch.from_numpy(np.load(os.path.join(out, "tokens.npy")).astype(np.int64))
    return tokens, read_loss(out), st_read(os.path.join(out, "grad.safetensors"))[0]


# ---- 1. PyTorch's model in the toolkit: loss, gradient, H v ------------------------------------------

def forward_check(build, tmp, tag, c, seed):
    model = nontrivial(Llama(c), seed)
    folder = os.path.join(tmp, tag)
    save_hf(folder, model, np.float64)
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
    print("# torch %s: loss %.15g, grad %.2g, H v %.2g (P %d)" % (tag, loss, rel(Gt, G), rel(Ht, H), G.numel()))
    return model, folder, tokens, loss, G


# ---- 2. other dtypes ----------------------------------------------------------------------------------

def write_rounded(path, sd, code):
    """safetensors of sd in F16 or BF16 (numpy has no bfloat16: its bits from torch); returns the rounded values."""
    header, blobs, at, rounded = {"__metadata__": {"format": "pt"}}, [], 0, {}
    for name, t in sd.items():
        r = t.detach().to(torch.float16 if code == "F16" else torch.bfloat16)
        rounded[name] = r.to(torch.float64)
        raw = r.contiguous().view(torch.int16).numpy().astype("<i2").tobytes()
        header[name] = {"dtype": code, "shape": list(t.shape), "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little") + h + b"".join(blobs))
    return rounded


def dtype_check(build, tmp, model, folder, tag):
    for code in ("F32", "F16", "BF16"):
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
        m = Llama(model.c)
        with torch.no_grad():
            for n, p in params_of(m).items():
                p.copy_(rounded[n])
        loss, grads, _ = torch_probe(m, tokens)
        names = list(grads)
        check(abs(tl - loss) <= TOL * max(1, abs(loss)), "%s %s: loss %.17g vs PyTorch %.17g" % (tag, code, tl, loss))
        check(rel(flat(tg, names), flat(grads, names)) <= TOL, "%s %s: gradient rel diff %.3g" % (
            tag, code, rel(flat(tg, names), flat(grads, names))))
        print("# %s %s: loss %.15g in PyTorch, %.15g in the toolkit" % (tag, code, loss, tl))


# ---- 3. the test can fail -----------------------------------------------------------------------------

def rotate_interleaved(x, cos, sin):
    """The other convention: pairs (2i, 2i+1) rotated by the angle of frequency i."""
    h = x.shape[-1] // 2
    c, s = cos[..., :h], sin[..., :h]
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * c - b * s, b * c + a * s), dim=-1).flatten(-2)


def controls(build, tmp, model, folder, tokens, loss, G, tag):
    names = list(params_of(model))
    wrong = Llama(model.c)
    wrong.load_state_dict(model.state_dict())
    for layer in wrong.model.layers:
        layer.self_attn.rotate = rotate_interleaved
    wl, wg, _ = torch_probe(wrong, tokens)
    d_loss, d_grad = abs(wl - loss) / abs(loss), rel(flat(wg, names), G)
    check(d_loss > 1e3 * TOL and d_grad > 1e3 * TOL, "%s: the interleaved rotary is not told apart (loss %.3g, "
          "gradient %.3g)" % (tag, d_loss, d_grad))
    # and rotate_half itself is not interleaved: one pair by hand
    x = torch.arange(4.0).reshape(1, 1, 1, 4)
    check(torch.equal(rotate_half(x), torch.tensor([[[[-2.0, -3.0, 0.0, 1.0]]]])), "rotate_half by hand")
    d = os.path.join(tmp, tag + "_eps")
    os.makedirs(d)
    os.link(os.path.join(folder, "model.safetensors"), os.path.join(d, "model.safetensors"))
    cfg = dict(json.load(open(os.path.join(folder, "config.json"))), rms_norm_eps=10 * model.c["rms_norm_eps"])
    json.dump(cfg, open(os.path.join(d, "config.json"), "w"))
    _, el, eg = toolkit(build, d, d + "_probe")
    e_loss, e_grad = abs(el - loss) / abs(loss), rel(flat(eg, names), G)
    check(e_loss > 1e3 * TOL and e_grad > 1e3 * TOL, "%s: the toolkit told eps %g for %g is not told apart (loss "
          "%.3g, gradient %.3g)" % (tag, cfg["rms_norm_eps"], model.c["rms_norm_eps"], e_loss, e_grad))
    print("# %s controls: interleaved rotary differs by %.2g (loss) / %.2g (gradient), eps x10 by %.2g / %.2g"
          % (tag, d_loss, d_grad, e_loss, e_grad))


# ---- 4. the toolkit's model in PyTorch ------------------------------------------------------------------

def reverse_check(build, tmp, tied, f32):
    tag = "toolkit GQA tied %d %s" % (tied, "F32" if f32 else "F64")
    folder = os.path.join(tmp, "tk_%d%d" % (tied, f32))
    out = folder + "_probe"
    args = ["llama_probe", "--V", "32", "--C", "16", "--layers", "2", "--heads", "4", "--kv-heads", "2", "--M", "20",
            "--T", "12", "--tied", str(tied), "--init-std", "0.3", "--data", "text", "--batch", "6",
            "--save-hf", folder, "--out", out, "--quiet"]
    run(build, *(args + (["--save-f32"] if f32 else [])))
    c = json.load(open(os.path.join(folder, "config.json")))
    sd, _, _ = st_read(os.path.join(folder, "model.safetensors"))
    if c["tie_word_embeddings"]:  # Hugging Face's tied file has no lm_head.weight; the module has both names
        sd["lm_head.weight"] = sd["model.embed_tokens.weight"]
    model = Llama(c)
    model.load_state_dict(sd, strict=True)
    tokens = torch.from_numpy(np.load(os.path.join(out, "tokens.npy")).astype(np.int64))
    with torch.no_grad():
        loss = model(tokens[:, :-1], tokens[:, 1:]).item()
    tl = read_loss(out)
    if f32:  # the toolkit ran on its F64 weights, the file holds them rounded: run the toolkit on the file
        tl = toolkit(build, folder, out + "_again", ("--tokens", os.path.join(out, "tokens.npy")))[1]
    check(abs(tl - loss) <= TOL * max(1, abs(loss)), "%s: PyTorch loss %.17g vs toolkit %.17g" % (tag, loss, tl))
    print("# %s: loss %.15g in PyTorch, %.15g in the toolkit" % (tag, loss, tl))


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    cases = [("MHA untied", config(16, 4, 4, 0)), ("MHA tied", config(16, 4, 4, 1)),
             ("GQA untied", config(16, 4, 2, 0)), ("GQA tied", config(16, 4, 2, 1, eps=1e-5)),
             ("one kv head, head_dim 6", config(16, 2, 1, 0, head_dim=6))]
    with tempfile.TemporaryDirectory() as tmp:
        for i, (tag, c) in enumerate(cases):
            model, folder, tokens, loss, G = forward_check(build, tmp, tag.replace(" ", "_").replace(",", ""), c,
                                                           20 + i)
            if tag == "GQA tied":
                dtype_check(build, tmp, model, folder, "GQA_tied")
            if tag in ("MHA untied", "GQA tied"):
                controls(build, tmp, model, folder, tokens, loss, G, tag.replace(" ", "_"))
        for tied in (0, 1):
            for f32 in (0, 1):
                reverse_check(build, tmp, tied, f32)
    print("# counts %d %d" % (tn.passed, tn.failed))
    return 1 if tn.failed else 0


if __name__ == "__main__":
    sys.exit(main())
