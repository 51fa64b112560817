#!/usr/bin/env python3
"""Train a small char-level GPT in PyTorch on the toolkit's default corpus and
export it for the toolkit (docs/real_text.md, the worked example).

The model is nanoGPT's GPT (the same module names, so the same state dict):
token and position embeddings, pre-norm blocks of causal self-attention
(fused c_attn) and a GELU MLP (4 x n_embd), final LayerNorm, and an output head
tied to the token embedding. The data: Debian's fortunes package, its files in
name order (the offensive subset, a subfolder, is never read), tokenized as
the toolkit does for --data text: the 31 most frequent bytes (ties: the smaller
byte) in byte order and one symbol "other" for every other byte; the last 10%
held out. Written to --out: gpt.safetensors (F32, the usual PyTorch dtype;
the config in its metadata), config.json (nanoGPT's GPTConfig keys), vocab.csv
(the toolkit's format: compare it with a toolkit run's), log.csv.

    /usr/bin/python3 docs/examples/train_char_gpt.py --out results/char_gpt

Debian's python3-torch (1.13) and python3-numpy are all it needs (make
test-torch installs them); safetensors is written with struct + json.
tests/torch_nanogpt.py imports GPT and save_safetensors from here (untied with
c["tied"] false, any MLP width with c["n_inner"]): make test-torch checks this
very code against the toolkit.
"""
import argparse
import json
import math
import os
import struct
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CORPUS = "/usr/share/games/fortunes"


# ---- data: the toolkit's char vocabulary --------------------------------------------------

def corpus_bytes(path):
    """A folder's text files in name order, as the toolkit reads them."""
    names = sorted(n for n in os.listdir(path) if not n.startswith(".") and not n.endswith(".dat")
                   and not os.path.islink(os.path.join(path, n)) and os.path.isfile(os.path.join(path, n)))
    return b"".join(open(os.path.join(path, n), "rb").read() for n in names)


def vocabulary(data, size):
    counts = np.bincount(np.frombuffer(data, dtype=np.uint8), minlength=256)
    present = [b for b in range(256) if counts[b]]
    if len(present) <= size:
        kept, other = present, False
    else:
        kept, other = sorted(sorted(present, key=lambda b: (-counts[b], b))[:size - 1]), True
    ids = np.full(256, len(kept), dtype=np.int64)  # every byte not kept: "other", the last id
    ids[kept] = np.arange(len(kept))
    return kept, other, ids, counts


def write_vocab(path, kept, other, ids, counts, tokens):
    names = {32: "space", 44: "comma", 34: "quote", 10: "\\n", 9: "\\t"}
    per_id = np.bincount(tokens, minlength=len(kept) + other)
    with open(path, "w") as f:
        f.write("id,byte,char,count\n")
        for i, b in enumerate(kept):
            ch = names.get(b, chr(b) if 32 < b < 127 else "0x%02x" % b)
            f.write("%d,%d,%s,%d\n" % (i, b, ch, per_id[i]))
        if other:
            f.write("%d,-1,other,%d\n" % (len(kept), per_id[len(kept)]))


# ---- the model: nanoGPT's GPT -------------------------------------------------------------

class LayerNorm(nn.Module):
    def __init__(self, n, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(n))
        self.bias = nn.Parameter(torch.zeros(n)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        C = c["n_embd"]
        self.n_head = c["n_head"]
        self.ln_1 = LayerNorm(C, c["bias"])
        self.attn = nn.Module()
        self.attn.c_attn = nn.Linear(C, 3 * C, bias=c["bias"])
        self.attn.c_proj = nn.Linear(C, C, bias=c["bias"])
        self.ln_2 = LayerNorm(C, c["bias"])
        self.mlp = nn.Module()
        n_inner = c.get("n_inner", 4 * C)  # nanoGPT: 4 x n_embd; the toolkit's models may differ
        self.mlp.c_fc = nn.Linear(C, n_inner, bias=c["bias"])
        self.mlp.c_proj = nn.Linear(n_inner, C, bias=c["bias"])

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.attn.c_attn(self.ln_1(x)).split(C, dim=2)
        q, k, v = (z.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        att = att.masked_fill(~torch.tril(torch.ones(T, T, dtype=torch.bool)), float("-inf"))
        y = (F.softmax(att, dim=-1) @ v).transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.attn.c_proj(y)
        return x + self.mlp.c_proj(F.gelu(self.mlp.c_fc(self.ln_2(x))))


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(c["vocab_size"], c["n_embd"]), wpe=nn.Embedding(c["block_size"], c["n_embd"]),
            h=nn.ModuleList([Block(c) for _ in range(c["n_layer"])]), ln_f=LayerNorm(c["n_embd"], c["bias"])))
        self.lm_head = nn.Linear(c["n_embd"], c["vocab_size"], bias=False)
        if c.get("tied", True):
            self.transformer.wte.weight = self.lm_head.weight  # weight tying, as nanoGPT
        for name, p in self.named_parameters():  # nanoGPT's initialisation
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, 0, 0.02 / math.sqrt(2 * c["n_layer"]))
            elif p.dim() == 2:
                nn.init.normal_(p, 0, 0.02)

    def forward(self, idx, targets):
        x = self.transformer.wte(idx) + self.transformer.wpe(torch.arange(idx.shape[1]))
        for b in self.transformer.h:
            x = b(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def save_safetensors(path, state_dict, metadata=None, dtype=np.float32):
    """safetensors by hand: 8-byte header length, JSON header, little-endian data."""
    code = {np.float32: "F32", np.float64: "F64"}[dtype]
    header, blobs, at = ({"__metadata__": metadata} if metadata else {}), [], 0
    for name, t in state_dict.items():
        a = np.ascontiguousarray(t.detach().cpu().numpy().astype("<" + np.dtype(dtype).str[1:]))
        header[name] = {"dtype": code, "shape": list(a.shape), "data_offsets": [at, at + a.nbytes]}
        blobs.append(a.tobytes())
        at += a.nbytes
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def load_corpus(a):
    """The toolkit's --data text tokens of a.text: (training part, held-out part, V); vocab.csv in a.out."""
    data = corpus_bytes(a.text) if os.path.isdir(a.text) else open(a.text, "rb").read()
    kept, other, ids, counts = vocabulary(data, a.vocab_size)
    tokens = ids[np.frombuffer(data, dtype=np.uint8)]
    ntrain = len(tokens) - int(len(tokens) * 0.1)  # the toolkit's split: the last 10% held out
    write_vocab(os.path.join(a.out, "vocab.csv"), kept, other, ids, counts, tokens)
    return torch.from_numpy(tokens[:ntrain]), torch.from_numpy(tokens[ntrain:]), len(kept) + other


def train(model, train_part, held, a, at_step=None):
    """AdamW (weight decay 0.1 on matrices, betas 0.9/0.99), warm-up then cosine to 10%, a.steps steps of
    a.batch windows of a.block_size + 1 tokens; log.csv in a.out every tenth of the run; at_step(step, model)
    before each step's update (the model after `step` updates), if given."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.99))
    T, g = a.block_size, torch.Generator().manual_seed(a.seed)

    def batch(src, n):
        off = torch.randint(len(src) - T, (n,), generator=g)
        x = torch.stack([src[o:o + T + 1] for o in off.tolist()])
        return x[:, :-1], x[:, 1:]

    log = open(os.path.join(a.out, "log.csv"), "w")
    log.write("step,train_loss,held_out_loss,lr\n")
    t0, warm = time.time(), a.steps // 20
    for step in range(a.steps + 1):
        lr = a.lr * min(1, (step + 1) / warm) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / a.steps)))
        for grp in opt.param_groups:
            grp["lr"] = lr
        if step % (a.steps // 10) == 0:
            with torch.no_grad():
                model.eval()
                ev = sum(model(*batch(held, 256)).item() for _ in range(4)) / 4
                model.train()
        x, y = batch(train_part, a.batch)
        loss = model(x, y)
        if step % (a.steps // 10) == 0:
            log.write("%d,%.6f,%.6f,%.3g\n" % (step, loss.item(), ev, lr))
            print("step %5d  train %.4f  held-out %.4f  (%.0f s)" % (step, loss.item(), ev, time.time() - t0))
        if at_step:
            at_step(step, model)
        if step == a.steps:
            break
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    log.close()
    return time.time() - t0


def arguments(description, out, **defaults):
    """The command line both examples share (their sizes' defaults given)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--out", default=out)
    ap.add_argument("--text", default=CORPUS)
    ap.add_argument("--vocab-size", type=int, default=32)
    ap.add_argument("--block-size", type=int, default=16)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=1)
    for k, v in defaults.items():
        ap.add_argument("--" + k.replace("_", "-"), type=type(v), default=v)
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    torch.set_num_threads(1)
    os.makedirs(a.out, exist_ok=True)
    return a


def main():
    a = arguments(__doc__.split("\n")[0], "results/char_gpt", n_layer=1, n_head=4, n_embd=24)
    train_part, held, V = load_corpus(a)
    c = dict(n_layer=a.n_layer, n_head=a.n_head, n_embd=a.n_embd, block_size=a.block_size, vocab_size=V,
             bias=True, dropout=0.0)
    model = GPT(c)
    seconds = train(model, train_part, held, a)
    sd = model.state_dict()  # tied: transformer.wte.weight and lm_head.weight, one tensor
    meta = {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in c.items()}
    save_safetensors(os.path.join(a.out, "gpt.safetensors"), sd, meta)
    json.dump(c, open(os.path.join(a.out, "config.json"), "w"), indent=1)
    n = sum(p.numel() for p in model.parameters())
    print("wrote %s/gpt.safetensors: %d parameters (tied), %.0f s" % (a.out, n, seconds))


if __name__ == "__main__":
    main()
