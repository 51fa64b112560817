#!/usr/bin/env python3
"""make test-torch: the toolkit's Transformer against PyTorch, in nanoGPT's layout.

The GPT of the worked example, docs/examples/train_char_gpt.py, imported (so
the test checks the code a user runs): PyTorch's own modules, named and shaped
as nanoGPT's GPT (transformer.wte, transformer.wpe, transformer.h.<i>.{ln_1,
attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj}, transformer.ln_f,
lm_head; LayerNorm eps 1e-5 with optional bias, exact GELU, causal attention
with heads as contiguous slices), in float64, tied (lm_head.weight is wte's
Parameter) and untied, biases on and off:
  1. forward: it is saved as .safetensors (the example's writer: struct +
     json, the format is tiny), tt_probe reads it and draws a batch of text
     tokens (the held-out part of the default corpus); the toolkit's loss,
     gradient and H v (R-operator) must match PyTorch's loss, autograd
     gradient and double-backward H v to 1e-10 (relative to the largest
     entry);
  2. reverse: a model trained by the toolkit (train_transformer
     --save-safetensors, F64 and F32) loads into this GPT with
     load_state_dict(strict=True) and gives the toolkit's loss to 1e-10;
  3. bytes: the toolkit's tied checkpoint, read here and written back by the
     example's writer, is the same file byte for byte.
Prints "# counts P F" like the C tests; exit status 1 on any failure.

  tests/torch_nanogpt.py BUILD_DIR
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch

torch.set_default_dtype(torch.float64)
TOL = 1e-10
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL %s: %s" % (os.path.basename(sys.argv[0]), what))  # the script run (torch_llama.py imports this)


# ---- the model and the writer: the worked example's own code ------------------------------------

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "examples"))
from train_char_gpt import GPT, save_safetensors  # noqa: E402  (the code a user runs, not a copy)

DTYPES = {"F64": "<f8", "F32": "<f4"}


def st_write(path, tensors, metadata=None):
    save_safetensors(path, tensors, metadata, np.float64)


def loss_of(model, tokens):
    return model(tokens[:, :-1], tokens[:, 1:])


def st_read(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    header = json.loads(b[8:8 + n])
    meta = header.pop("__metadata__", {})
    out = {}
    for name, e in header.items():
        lo, hi = e["data_offsets"]
        a = np.frombuffer(b[8 + n + lo:8 + n + hi], dtype=DTYPES[e["dtype"]]).reshape(e["shape"])
        out[name] = torch.from_numpy(a.astype(np.float64))
    return out, meta, header


def run(build, *args):
    r = subprocess.run([os.path.join(build, "bin", args[0])] + list(args[1:]), capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit("%s failed (%d): %s" % (args[0], r.returncode, r.stderr.strip()))


def read_loss(folder):
    for line in open(os.path.join(folder, "loss.csv")):
        k, _, v = line.strip().partition(",")
        if k == "loss":
            return float(v)
    raise SystemExit("no loss in " + folder)


def rel(a, b):
    return (a - b).abs().max().item() / max(b.abs().max().item(), 1e-300)


def config_of(meta):
    c = {k: int(meta[k]) for k in ("n_layer", "n_head", "n_embd", "block_size", "vocab_size", "n_inner")}
    c["bias"] = meta["bias"] == "true"
    c["tied"] = meta["tied"] == "true"
    return c


# ---- 1. PyTorch's model in the toolkit: loss, gradient, H v ------------------------------------

def forward_check(build, tmp, tied, bias):
    tag = "tied %d bias %d" % (tied, bias)
    c = dict(n_layer=2, n_head=2, n_embd=16, block_size=12, vocab_size=32, n_inner=24, bias=bool(bias),
             tied=bool(tied))
    torch.manual_seed(10 + 2 * tied + bias)
    model = GPT(c)
    with torch.no_grad():  # weights large enough that attention and GELU are far from linear
        for p in model.parameters():
            p.normal_(0, 0.3)
        for name, p in model.named_parameters():
            if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name.endswith("ln_f.weight"):
                p.add_(1)
    sd = model.state_dict()  # tied: both names, one storage
    meta = {"n_head": str(c["n_head"]), "n_inner": str(c["n_inner"])}
    path = os.path.join(tmp, "torch_%d%d.safetensors" % (tied, bias))
    st_write(path, sd, meta)
    v = {k: torch.randn_like(t) for k, t in sd.items()}
    if tied:
        v["lm_head.weight"] = v["transformer.wte.weight"]
    vpath = os.path.join(tmp, "v_%d%d.safetensors" % (tied, bias))
    st_write(vpath, v, meta)
    out = os.path.join(tmp, "probe_%d%d" % (tied, bias))
    run(build, "tt_probe", "--model", path, "--direction", vpath, "--data", "text", "--batch", "6",
        "--out", out, "--quiet")
    tokens = torch.from_numpy(np.load(os.path.join(out, "tokens.npy")).astype(np.int64))
    params = dict(model.named_parameters())  # tied: the shared Parameter once
    loss = loss_of(model, tokens)
    grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
    dot = sum((g * v[n]).sum() for n, g in zip(params, grads))
    hv = torch.autograd.grad(dot, list(params.values()))
    tg, _, _ = st_read(os.path.join(out, "grad.safetensors"))
    th, _, _ = st_read(os.path.join(out, "hv.safetensors"))
    tl = read_loss(out)
    check(abs(tl - loss.item()) <= TOL * max(1, abs(loss.item())),
          "%s: loss %.17g vs PyTorch %.17g" % (tag, tl, loss.item()))
    G = torch.cat([g.reshape(-1) for g in grads])
    HV = torch.cat([h.reshape(-1) for h in hv])
    Gt = torch.cat([tg[n].reshape(-1) for n in params])
    Ht = torch.cat([th[n].reshape(-1) for n in params])
    check(rel(Gt, G) <= TOL, "%s: gradient rel diff %.3g" % (tag, rel(Gt, G)))
    check(rel(Ht, HV) <= TOL, "%s: H v rel diff %.3g" % (tag, rel(Ht, HV)))
    if tied:  # the toolkit writes the shared tensor under both names, equal
        check(torch.equal(tg["lm_head.weight"], tg["transformer.wte.weight"]), "%s: grad under both names" % tag)
    print("# torch %s: loss %.15g, grad %.2g, H v %.2g (P %d)" % (tag, loss.item(), rel(Gt, G), rel(Ht, HV),
                                                                   G.numel()))


# ---- 2. the toolkit's model in PyTorch ---------------------------------------------------------

def reverse_check(build, tmp, tied, bias, f32):
    tag = "toolkit tied %d bias %d %s" % (tied, bias, "F32" if f32 else "F64")
    path = os.path.join(tmp, "tk_%d%d%d.safetensors" % (tied, bias, f32))
    args = ["train_transformer", "--data", "text", "--layers", "2", "--T", "12", "--M", "24", "--steps", "40",
            "--tied", str(tied), "--bias", str(bias), "--lr", "0.01", "--checkpoints", "1",
            "--save-safetensors", path, "--out", os.path.join(tmp, "train_%d%d%d" % (tied, bias, f32)), "--quiet"]
    run(build, *(args + (["--save-f32"] if f32 else [])))
    out = os.path.join(tmp, "tkprobe_%d%d%d" % (tied, bias, f32))
    run(build, "tt_probe", "--model", path, "--data", "text", "--batch", "6", "--out", out, "--quiet")
    sd, meta, _ = st_read(path)
    model = GPT(config_of(meta))
    model.load_state_dict(sd, strict=True)
    tokens = torch.from_numpy(np.load(os.path.join(out, "tokens.npy")).astype(np.int64))
    with torch.no_grad():
        loss = loss_of(model, tokens).item()
    tl = read_loss(out)
    check(abs(tl - loss) <= TOL * max(1, abs(loss)), "%s: PyTorch loss %.17g vs toolkit %.17g" % (tag, loss, tl))
    print("# %s: loss %.15g in PyTorch, %.15g in the toolkit" % (tag, loss, tl))
    return path


# ---- 3. the same bytes -------------------------------------------------------------------------

def bytes_check(path):
    sd, meta, header = st_read(path)
    again = path + ".again"
    st_write(again, {k: sd[k] for k in header}, meta)
    check(open(again, "rb").read() == open(path, "rb").read(),
          "the toolkit's tied checkpoint read and written back here is not the same bytes")


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    with tempfile.TemporaryDirectory() as tmp:
        for tied in (0, 1):
            for bias in (0, 1):
                forward_check(build, tmp, tied, bias)
        for tied in (0, 1):
            for bias in (0, 1):
                p = reverse_check(build, tmp, tied, bias, 0)
                if tied and bias:
                    bytes_check(p)
        reverse_check(build, tmp, 1, 0, 1)
    print("# counts %d %d" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
