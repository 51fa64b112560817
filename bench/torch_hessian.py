#!/usr/bin/python3
"""Cross-check of the toolkit's exact MLP Hessian against PyTorch (optional, never
part of `make test`; needs Debian's python3-torch and python3-numpy).

Loads what experiments/fig2 wrote (model.csv, X_eval.npy, y_eval.npy,
weights_<tag>.npy, H_<tag>.npy and the engine's time in checkpoints.csv),
rebuilds the same 1-hidden-layer MLP in float64 over the same flat parameter
vector (fc1 rows = a neuron's weights then its bias, fc2, fc2.bias), computes
H with torch.autograd.functional.hessian, and prints the max abs difference
(relative to max|H|) and the time ratio.

usage: /usr/bin/python3 bench/torch_hessian.py [RESULTS_DIR] [TAG]   (default results/fig2 init)
"""
import csv
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def main():
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
