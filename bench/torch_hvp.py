#!/usr/bin/python3
"""The toolkit's Hessian-vector products against PyTorch's double backward
(make bench runs it when Debian's python3-torch is installed; needs
python3-numpy too).

For each size (P ~ 1e4, 1e5; --big: 1e6) build/bench/bench_hvp --size S
--export DIR writes a nanoGPT-layout model (the worked example's layout:
vocabulary 32, block 64, 4 heads, MLP 4C, biases, tied head), its batch of 16
sequences, 32 directions and the toolkit's H v of them. Here the worked
example's GPT (docs/examples/train_char_gpt.py) loads the same weights in
float64 on one thread, and PyTorch computes H v the way PyHessian does: the
gradient with create_graph once, then autograd.grad(g, θ, grad_outputs=v,
retain_graph=True) per direction. Agreement with the toolkit is checked; rates
are directions per CPU second (the toolkit's at one and at 32 directions per
call), toolkit and PyTorch measured in turn, twice, the best kept; peak
memory is each process's peak resident set after its first direction
(PyTorch's includes its interpreter and libraries, ~0.3 GB).

At P ~ 1e5, per-block SLQ (m 20, n_v 1) of the 8 query heads from the
toolkit's probes, with full reorthogonalisation as the toolkit's Lanczos, in
the two forms a PyTorch user would write: the masked full H v (v zero outside
the block, PyHessian's operator), and the restricted one, autograd.grad(g_b,
θ_b, grad_outputs=v_b) with g_b the gradient of the block's tensor (nanoGPT's
fused c_attn) only. Its top Ritz values are checked against the toolkit's.

usage: /usr/bin/python3 bench/torch_hvp.py BUILD_DIR [--big]
"""
import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "docs", "examples"))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
from train_char_gpt import GPT  # noqa: E402  (the worked example's model, not a copy)
from torch_nanogpt import config_of, st_read  # noqa: E402

torch.set_default_dtype(torch.float64)
torch.set_num_threads(1)


def toolkit(build, size, export=None):
    """bench_hvp's name,value lines for one size."""
    cmd = [os.path.join(build, "bench", "bench_hvp"), "--size", str(size)] + (["--export", export] if export else [])
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    if r.returncode != 0:
        raise SystemExit("bench_hvp failed (%d): %s" % (r.returncode, r.stderr.strip()))
    return {k: float(v) for k, v in (line.split(",") for line in r.stdout.split())}


def flat_pieces(model, c):
    """The toolkit's parameter order (tinytransformer/tt.h) as (parameter, row slice) pieces of the GPT."""
    C, bias = c["n_embd"], c["bias"]
    t = model.transformer
    out = [(t.wte.weight, None), (t.wpe.weight, None)]
    for b in t.h:
        a = b.attn.c_attn
        for name, p, sl in [("ln_1.weight", b.ln_1.weight, None), ("ln_1.bias", b.ln_1.bias, None),
                            ("query", a.weight, slice(0, C)), ("query.bias", a.bias, slice(0, C)),
                            ("key", a.weight, slice(C, 2 * C)), ("key.bias", a.bias, slice(C, 2 * C)),
                            ("value", a.weight, slice(2 * C, 3 * C)), ("value.bias", a.bias, slice(2 * C, 3 * C)),
                            ("proj", b.attn.c_proj.weight, None), ("proj.bias", b.attn.c_proj.bias, None),
                            ("ln_2.weight", b.ln_2.weight, None), ("ln_2.bias", b.ln_2.bias, None),
                            ("fc", b.mlp.c_fc.weight, None), ("fc.bias", b.mlp.c_fc.bias, None),
                            ("mproj", b.mlp.c_proj.weight, None), ("mproj.bias", b.mlp.c_proj.bias, None)]:
            if name.endswith(".bias") and not bias:
                continue
            out.append((p, sl))
    out.append((t.ln_f.weight, None))
    if bias:
        out.append((t.ln_f.bias, None))
    if not c["tied"]:
        out.append((model.lm_head.weight, None))
    return out


class Flat:
    """Between a flat vector in the toolkit's order and one tensor per parameter."""

    def __init__(self, model, c):
        self.params = list(model.parameters())  # tied: the shared Parameter once
        self.pieces = flat_pieces(model, c)
        self.index = {id(p): i for i, p in enumerate(self.params)}

    def to_params(self, x):
        out = [torch.zeros_like(p) for p in self.params]
        at = 0
        for p, sl in self.pieces:
            dst = out[self.index[id(p)]]
            dst = dst[sl] if sl is not None else dst
            n = dst.numel()
            dst.copy_(torch.from_numpy(x[at:at + n]).view_as(dst))
            at += n
        return out

    def from_params(self, ts):
        parts = []
        for p, sl in self.pieces:
            t = ts[self.index[id(p)]]
            parts.append((t[sl] if sl is not None else t).reshape(-1))
        return torch.cat(parts).numpy()


def lanczos(op, z, m):
    """m steps from z, full reorthogonalisation twice (hessian/spectra.c): the tridiagonal's alpha, beta."""
    n = z.size
    Q = np.zeros((m + 1, n))
    Q[0] = z / np.linalg.norm(z)
    alpha, beta, norm = [], [], 0.0
    for j in range(min(m, n)):
        w = op(Q[j])
        if j > 0:
            w -= beta[-1] * Q[j - 1]
        a = Q[j] @ w
        w -= a * Q[j]
        for _ in range(2):
            w -= Q[:j + 1].T @ (Q[:j + 1] @ w)
        b = np.linalg.norm(w)
        alpha.append(a)
        beta.append(b)
        norm = max(norm, abs(a) + b + (beta[-2] if j > 0 else 0))
        if b <= 64 * np.finfo(float).eps * norm:
            break
        Q[j + 1] = w / b
    return np.array(alpha), np.array(beta)


def top_ritz(alpha, beta):
    m = len(alpha)
    T = np.diag(alpha) + np.diag(beta[:m - 1], 1) + np.diag(beta[:m - 1], -1)
    return np.linalg.eigvalsh(T)[-1]


def one_size(size, d, with_slq):
    """PyTorch on what bench_hvp exported to d: a dict of numbers."""
    sd, meta, _ = st_read(os.path.join(d, "model.safetensors"))
    c = config_of(meta)
    model = GPT(c)
    model.load_state_dict(sd, strict=True)
    tok = torch.from_numpy(np.load(os.path.join(d, "tokens.npy")).astype(np.int64))
    V, HV = np.load(os.path.join(d, "V.npy"), mmap_mode="r"), np.load(os.path.join(d, "HV.npy"), mmap_mode="r")
    f = Flat(model, c)
    k = V.shape[0] if size < 2 else 4
    t0 = time.process_time()
    g = torch.autograd.grad(model(tok[:, :-1], tok[:, 1:]), f.params, create_graph=True)
    grad_s = time.process_time() - t0
    out, best, worst, peak = {}, 0.0, 0.0, 0.0
    for rnd in range(2):
        t0 = time.process_time()
        for j in range(k):
            hv = torch.autograd.grad(g, f.params, grad_outputs=f.to_params(np.array(V[j])), retain_graph=True)
            if rnd == 0:
                x = f.from_params(hv)
                worst = max(worst, np.abs(x - HV[j]).max() / np.abs(HV[j]).max())
            peak = peak or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # after one direction
        best = max(best, k / (time.process_time() - t0))
    out.update(P=V.shape[1], torch_dir_per_s=best, torch_grad_s=grad_s, agree=worst, torch_peak_gb=peak)
    if with_slq:
        out.update(heads_slq(model, c, f, g, tok, d))
    return out


def heads_slq(model, c, f, g, tok, d):
    heads = list(csv.DictReader(open(os.path.join(d, "heads.csv"))))
    Z = np.load(os.path.join(d, "probes.npy"))
    ta, tb = np.load(os.path.join(d, "slq_alpha.npy")), np.load(os.path.join(d, "slq_beta.npy"))
    nv, m = ta.shape[1], ta.shape[2]
    hs = c["n_embd"] // c["n_head"]
    blocks = model.transformer.h
    i_attn = {id(b.attn.c_attn.weight): f.index[id(b.attn.c_attn.weight)] for b in blocks}
    # the restricted form's gradients: one tensor each, the graph built once (as g is)
    gT = [torch.autograd.grad(model(tok[:, :-1], tok[:, 1:]), b.attn.c_attn.weight, create_graph=True)[0]
          for b in blocks]
    res = {}
    for form in ("masked", "restricted"):
        t0, worst = time.process_time(), 0.0
        for bi, h in enumerate(heads):
            layer, head = int(h["layer"]), int(h["head"])
            W = blocks[layer].attn.c_attn.weight
            rows = slice(head * hs, (head + 1) * hs)

            def op(x):
                vT = torch.zeros_like(W)
                vT[rows] = torch.from_numpy(x).view(hs, -1)
                if form == "masked":
                    v = [torch.zeros_like(p) for p in f.params]
                    v[i_attn[id(W)]] = vT
                    hv = torch.autograd.grad(g, f.params, grad_outputs=v, retain_graph=True)[i_attn[id(W)]]
                else:
                    hv = torch.autograd.grad(gT[layer], W, grad_outputs=vT, retain_graph=True)[0]
                return hv[rows].reshape(-1).numpy().copy()

            for i in range(nv):
                a, b = lanczos(op, Z[bi, i], m)
                mine = top_ritz(ta[bi, i, :len(a)], tb[bi, i, :len(a)])
                worst = max(worst, abs(top_ritz(a, b) - mine) / abs(mine))
        res["slq_%s_s" % form] = time.process_time() - t0
        res["slq_%s_agree" % form] = worst
    return res


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--one":  # a fresh process per size: its own peak memory
        print(json.dumps(one_size(int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1")))
        return 0
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    sizes = [0, 1, 2] if "--big" in sys.argv else [0, 1]
    print("torch_hvp: PyTorch %s double backward (PyHessian's loop) against the toolkit: one thread each, float64, "
          "directions per CPU second, the same model, tokens and directions" % torch.__version__)
    print("| P | toolkit, 1 per call | toolkit, 32 per call | PyTorch | ratio k = 1 | ratio k = 32 | H v agree | "
          "peak GB toolkit / PyTorch |")
    print("|---|---|---|---|---|---|---|---|")
    slq = None
    for s in sizes:
        with tempfile.TemporaryDirectory() as d:
            ours = [toolkit(build, s, d)]
            theirs = []
            for rnd in range(2):
                slq_here = "1" if s == 1 and rnd == 0 else "0"
                r = subprocess.run([sys.executable, __file__, "--one", str(s), d, slq_here], capture_output=True, text=True)
                if r.returncode != 0:
                    raise SystemExit("PyTorch side failed: " + r.stderr.strip()[-500:])
                theirs.append(json.loads(r.stdout))
                if rnd == 0:
                    ours.append(toolkit(build, s))
        k1 = max(o["k1_dir_per_s"] for o in ours)
        k32 = max(o["k32_dir_per_s"] for o in ours)
        pt = max(t["torch_dir_per_s"] for t in theirs)
        print("| %d | %.3g | %.3g | %.3g | %.2f | %.2f | %.1e | %.2f / %.2f |" % (
            ours[0]["P"], k1, k32, pt, k1 / pt, k32 / pt, theirs[0]["agree"], ours[0]["peak_rss_gb"],
            theirs[0]["torch_peak_gb"]))
        print("  H v of the toolkit: %.3g GFLOP (dgemm), at one direction per call %.1f GFLOP/s = %.0f%% of this "
              "run's dgemm (%.1f GFLOP/s)" % (ours[0]["flops_per_dir"] / 1e9, k1 * ours[0]["flops_per_dir"] / 1e9,
                                              100 * k1 * ours[0]["flops_per_dir"] / 1e9 / ours[0]["dgemm_gflops"],
                                              ours[0]["dgemm_gflops"]))
        if s == 1:
            slq = (ours, theirs)
    ours, theirs = slq
    tr = min(o["slq_restricted_s"] for o in ours)
    tm = min(o["slq_masked_s"] for o in ours)
    pm, pr = theirs[0]["slq_masked_s"], theirs[0]["slq_restricted_s"]
    print("per-block SLQ, the %d query heads at P = %d (m 20, n_v 1, the same probes): toolkit restricted %.2f s "
          "(masked full H v: %.2f s); PyTorch masked full H v %.2f s: ratio %.2f (target >= 3); PyTorch restricted "
          "autograd.grad(g_b, theta_b, v_b) %.2f s: ratio %.2f (target >= 1.5); top Ritz values agree to %.1e, %.1e" % (
              int(ours[0]["slq_blocks"]), int(ours[0]["P"]), tr, tm, pm, pm / tr, pr, pr / tr,
              theirs[0]["slq_masked_agree"], theirs[0]["slq_restricted_agree"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
