#!/usr/bin/python3
"""Cross-checks of the toolkit's exact Hessians against PyTorch (optional, never
part of `make test`; needs Debian's python3-torch and python3-numpy).

MLP: loads what experiments/fig2 wrote (model.csv, X_eval.npy, y_eval.npy,
weights_<tag>.npy, H_<tag>.npy and the engine's time in checkpoints.csv),
rebuilds the same 1-hidden-layer MLP in float64 over the same flat parameter
vector (fc1 rows = a neuron's weights then its bias, fc2, fc2.bias), computes
H with torch.autograd.functional.hessian, and prints the max abs difference
(relative to max|H|) and the time ratio.

Tiny Transformer (--tt DIR): loads what `build/bench/bench_tt --export DIR`
wrote (tt_model.csv, tt_params.npy, tt_tokens.npy, tt_H.npy), rebuilds the
model of tinytransformer/tt.h over the same flat parameter vector (wte, wpe;
per layer ln_1, query, key, value, proj, ln_2, mlp.fc_1, mlp.proj, each weight
(out,in) row-major followed by its bias; ln_f, untied lm_head; GELU exact erf,
LayerNorm eps 1e-5, causal attention with scale 1/sqrt(C/heads), mean
next-token cross-entropy), checks the loss, computes H with
torch.autograd.functional.hessian (falling back to batched reverse-over-reverse
in row chunks if the vectorized call runs out of memory), and prints the max
abs difference relative to max|H|, the worst tensor block (relative to that
block's max), and the time ratio.

usage: /usr/bin/python3 bench/torch_hessian.py [RESULTS_DIR] [TAG]   (default results/fig2 init)
       /usr/bin/python3 bench/torch_hessian.py --tt DIR
"""
import csv
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def tt_layout(V, C, M, T, L, bias):
    """(name, shape) of every tensor in buffer order (tinytransformer/tt_model.c)."""
    t = [("wte", (V, C)), ("wpe", (T, C))]
    for layer in range(L):
        p = f"h{layer}."
        for name, shape in [("ln_1.weight", (C,)), ("ln_1.bias", (C,)), ("attn.query", (C, C)),
                            ("attn.query.bias", (C,)), ("attn.key", (C, C)), ("attn.key.bias", (C,)),
                            ("attn.value", (C, C)), ("attn.value.bias", (C,)), ("attn.proj", (C, C)),
                            ("attn.proj.bias", (C,)), ("ln_2.weight", (C,)), ("ln_2.bias", (C,)),
                            ("mlp.fc_1", (M, C)), ("mlp.fc_1.bias", (M,)), ("mlp.proj", (C, M)),
                            ("mlp.proj.bias", (C,))]:
            if name.endswith(".bias") and not bias:
                continue
            t.append((p + name, shape))
    t.append(("ln_f.weight", (C,)))
    if bias:
        t.append(("ln_f.bias", (C,)))
    t.append(("lm_head", (V, C)))
    return t


def tt_main(res):
    with open(os.path.join(res, "tt_model.csv")) as f:
        cfg = {k: float(v) for k, v in next(csv.DictReader(f)).items()}
    V, C, Hh, M, T, L, bias, B = (int(cfg[k]) for k in ("V", "C", "heads", "M", "T", "layers", "bias", "B"))
    w = torch.from_numpy(np.load(os.path.join(res, "tt_params.npy")))
    tok = torch.from_numpy(np.load(os.path.join(res, "tt_tokens.npy"))).long()
    H_ours = np.load(os.path.join(res, "tt_H.npy"))
    layout = tt_layout(V, C, M, T, L, bias)
    offsets, o = [], 0
    for name, shape in layout:
        offsets.append(o)
        o += int(np.prod(shape))
    assert o == w.numel() == H_ours.shape[0] == int(cfg["P"]), "tt_model.csv does not match the parameters"
    assert tok.shape == (B, T + 1)
    inp, tgt = tok[:, :T], tok[:, 1:]
    hs = C // Hh
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))

    def loss(v):
        P = {name: v[off:off + int(np.prod(shape))].view(shape) for (name, shape), off in zip(layout, offsets)}
        get = lambda name: P.get(name)  # None for an absent bias
        x = P["wte"][inp] + P["wpe"][torch.arange(T)]
        for layer in range(L):
            p = f"h{layer}."
            h = F.layer_norm(x, (C,), P[p + "ln_1.weight"], get(p + "ln_1.bias"), eps=1e-5)
            q = F.linear(h, P[p + "attn.query"], get(p + "attn.query.bias")).view(B, T, Hh, hs).transpose(1, 2)
            k = F.linear(h, P[p + "attn.key"], get(p + "attn.key.bias")).view(B, T, Hh, hs).transpose(1, 2)
            vv = F.linear(h, P[p + "attn.value"], get(p + "attn.value.bias")).view(B, T, Hh, hs).transpose(1, 2)
            s = (q @ k.transpose(-2, -1)) / np.sqrt(hs)
            a = torch.softmax(s.masked_fill(~causal, float("-inf")), dim=-1)
            y = (a @ vv).transpose(1, 2).reshape(B, T, C)
            x = x + F.linear(y, P[p + "attn.proj"], get(p + "attn.proj.bias"))
            h = F.layer_norm(x, (C,), P[p + "ln_2.weight"], get(p + "ln_2.bias"), eps=1e-5)
            f = F.gelu(F.linear(h, P[p + "mlp.fc_1"], get(p + "mlp.fc_1.bias")))  # exact erf form
            x = x + F.linear(f, P[p + "mlp.proj"], get(p + "mlp.proj.bias"))
        x = F.layer_norm(x, (C,), P["ln_f.weight"], get("ln_f.bias"), eps=1e-5)
        z = F.linear(x, P["lm_head"])
        return F.cross_entropy(z.reshape(B * T, V), tgt.reshape(B * T))

    torch.set_num_threads(max(1, os.cpu_count() or 1))
    l_torch = loss(w).item()
    t0 = time.perf_counter()
    try:
        H = torch.autograd.functional.hessian(loss, w, vectorize=True)
        how = "autograd.functional.hessian, vectorize=True"
    except (RuntimeError, MemoryError):
        wg = w.clone().requires_grad_(True)
        g = torch.autograd.grad(loss(wg), wg, create_graph=True)[0]
        P_ = w.numel()
        H = torch.empty(P_, P_, dtype=w.dtype)
        step = 256
        for j in range(0, P_, step):
            E = torch.zeros(min(step, P_ - j), P_, dtype=w.dtype)
            E[torch.arange(E.shape[0]), torch.arange(j, j + E.shape[0])] = 1
            H[j:j + E.shape[0]] = torch.autograd.grad(g, wg, E, retain_graph=True, is_grads_batched=True)[0]
        how = f"batched reverse-over-reverse, {step} rows at a time (vectorized hessian ran out of memory)"
    t = time.perf_counter() - t0
    H = H.detach().numpy()
    gmax = np.abs(H).max()
    diff = np.abs(H - H_ours).max() / gmax
    # per tensor: its rows of H relative to their own max; rows that vanish in exact
    # arithmetic (the key bias) must be round-off in both
    worst, worst_name, vanishing, vanish_ok = 0.0, "", [], True
    for (name, shape), off in zip(layout, offsets):
        n = int(np.prod(shape))
        blk, mine = H[off:off + n], H_ours[off:off + n]
        big = np.abs(blk).max()
        if big < 1e-12 * gmax:
            vanishing.append(name)
            vanish_ok &= bool(np.abs(mine).max() < 1e-12 * gmax)
            continue
        e = np.abs(blk - mine).max() / big
        if e > worst:
            worst, worst_name = e, name
    ours_s = cfg["hessian_seconds"]
    print(f"{res}: tiny Transformer V {V}, C {C}, {Hh} heads, M {M}, T {T}, {L} layer(s), bias {bias}; "
          f"P = {w.numel()}, batch {B}")
    print(f"  loss: toolkit {cfg['loss']:.15f}, torch {l_torch:.15f} (diff {abs(cfg['loss'] - l_torch):.1e})")
    print(f"  torch {torch.__version__} {how}: {t:.3f} s on {torch.get_num_threads()} threads")
    print(f"  toolkit symmetric path (tt_model.csv, {int(cfg['threads'])} threads): {ours_s:.3f} s; "
          f"torch / ours = {t / ours_s:.1f}x")
    ok = diff < 1e-10 and worst < 1e-8 and vanish_ok
    print(f"  max|H_torch - H_ours| / max|H| = {diff:.2e}; worst tensor rows: {worst_name} {worst:.2e} of their max; "
          f"rows ~0 in both: {', '.join(vanishing) or 'none'}  ({'agree' if ok else 'DIFFER'})")
    return 0 if ok else 1


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--tt":
        return tt_main(sys.argv[2])
    res = sys.argv[1] if len(sys.argv) > 1 else "results/fig2"
    tag = sys.argv[2] if len(sys.argv) > 2 else "init"
    with open(os.path.join(res, "model.csv")) as f:
        cfg = next(csv.DictReader(f))
    n_in, h, C, bias = int(cfg["in"]), int(cfg["width"]), int(cfg["classes"]), int(cfg["bias"])
    act = {"relu": torch.relu, "tanh": torch.tanh, "gelu": F.gelu, "linear": lambda z: z}[cfg["act"]]
    X = torch.from_numpy(np.load(os.path.join(res, "X_eval.npy")))
    y = torch.from_numpy(np.load(os.path.join(res, "y_eval.npy"))).long()
    w = torch.from_numpy(np.load(os.path.join(res, f"weights_{tag}.npy")))
    H_ours = np.load(os.path.join(res, f"H_{tag}.npy"))
    with open(os.path.join(res, "checkpoints.csv")) as f:
        ours_s = float(next(r for r in csv.DictReader(f) if r["tag"] == tag)["hessian_seconds"])
    d1 = n_in + bias
    P1, P2 = h * d1, C * h
    Xt = torch.cat([X, torch.ones(X.shape[0], 1, dtype=X.dtype)], 1) if bias else X
    assert w.numel() == P1 + P2 + (C if bias else 0) == H_ours.shape[0], "model.csv does not match the weights"

    def loss(v):
        W1 = v[:P1].view(h, d1)
        W2 = v[P1:P1 + P2].view(C, h)
        z2 = act(Xt @ W1.T) @ W2.T
        if bias:
            z2 = z2 + v[P1 + P2:]
        return F.cross_entropy(z2, y)

    torch.set_num_threads(max(1, os.cpu_count() or 1))
    t0 = time.perf_counter()
    try:
        H = torch.autograd.functional.hessian(loss, w, vectorize=True)
        how = "vectorize=True"
    except RuntimeError:
        H = torch.autograd.functional.hessian(loss, w)
        how = "vectorize=False"
    t = time.perf_counter() - t0
    H = H.numpy()
    diff = np.abs(H - H_ours).max() / np.abs(H).max()
    print(f"{res} {tag}: P = {w.numel()}, N = {X.shape[0]}, {cfg['act']}")
    print(f"  torch {torch.__version__} autograd.functional.hessian ({how}): {t:.3f} s")
    print(f"  toolkit engine (from checkpoints.csv): {ours_s:.3f} s; torch / ours = {t / ours_s:.1f}x")
    print(f"  max|H_torch - H_ours| / max|H| = {diff:.2e}  ({'agree' if diff < 1e-10 else 'DIFFER'})")
    return 0 if diff < 1e-10 else 1


if __name__ == "__main__":
    sys.exit(main())
