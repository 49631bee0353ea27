#!/usr/bin/env python3
"""gpt2_check.py HOSTJIT OUTDIR [B T] - GPT-2 small through hostjit against PyTorch.

Where PyTorch is installed (the GPU machine; not part of the build): makes
GPT-2 small's weights at random from a fixed seed (nothing downloaded),
computes the logits of random tokens with a plain PyTorch implementation of
the same model in fp32 (TF32 off), writes the tokens and weights as .npy,
runs examples/gpt2/gpt2_small.hir with `hostjit run --backend cuda` in eval
and JIT mode, eager and in graph mode, and compares each one's logits with
PyTorch's: the largest absolute and relative error. Also prints host us per
call of each mode (median of the repeated calls). Exits 1 past the
tolerance (absolute 2e-3 on logits of order 1).
"""
import math
import os
import re
import subprocess
import sys

import numpy as np
import torch

L, H, C, V, CTX = 12, 12, 768, 50257, 1024


def weights(seed=1234):
    g = torch.Generator().manual_seed(seed)
    def r(*shape, scale=0.02):
        return (torch.randn(*shape, generator=g) * scale).float()
    w = {"wte": r(V, C), "wpe": r(CTX, C, scale=0.01)}
    for l in range(L):
        p = "h%d_" % l
        w[p + "ln1_w"] = 1 + r(C, scale=0.1)
        w[p + "ln1_b"] = r(C)
        w[p + "attn_w"] = r(3 * C, C)
        w[p + "attn_b"] = r(3 * C)
        w[p + "proj_w"] = r(C, C, scale=0.02 / math.sqrt(2 * L))
        w[p + "proj_b"] = r(C)
        w[p + "ln2_w"] = 1 + r(C, scale=0.1)
        w[p + "ln2_b"] = r(C)
        w[p + "fc_w"] = r(4 * C, C)
        w[p + "fc_b"] = r(4 * C)
        w[p + "mlp_w"] = r(C, 4 * C, scale=0.02 / math.sqrt(2 * L))
        w[p + "mlp_b"] = r(C)
    w["lnf_w"] = 1 + r(C, scale=0.1)
    w["lnf_b"] = r(C)
    return w


def forward(tokens, w):
    F = torch.nn.functional
    b, t = tokens.shape
    x = w["wte"][tokens] + w["wpe"][:t]
    mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
    for l in range(L):
        p = "h%d_" % l
        h = F.layer_norm(x, (C,), w[p + "ln1_w"], w[p + "ln1_b"], 1e-5)
        q, k, v = F.linear(h, w[p + "attn_w"], w[p + "attn_b"]).split(C, dim=-1)
        q, k, v = [z.view(b, t, H, C // H).transpose(1, 2) for z in (q, k, v)]
        att = (q @ k.transpose(-2, -1)) / math.sqrt(C // H)
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, C)
        x = x + F.linear(y, w[p + "proj_w"], w[p + "proj_b"])
        h = F.layer_norm(x, (C,), w[p + "ln2_w"], w[p + "ln2_b"], 1e-5)
        x = x + F.linear(F.gelu(F.linear(h, w[p + "fc_w"], w[p + "fc_b"]), approximate="tanh"), w[p + "mlp_w"],
                         w[p + "mlp_b"])
    x = F.layer_norm(x, (C,), w["lnf_w"], w["lnf_b"], 1e-5)
    return F.linear(x, w["wte"]).reshape(b * t, V)


def time_torch(f, tc, wc, reps=30):
    """f(tc, wc) timed after 5 warm-up calls: the medians over `reps` calls
    of host us (the call issued; the stream drained after it, outside that
    time) and of end-to-end ms, and the peak device memory allocated since
    the warm-up began (the weights included)."""
    import statistics
    import time
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    with torch.no_grad():
        for _ in range(5):
            f(tc, wc)
        torch.cuda.synchronize()
        issue, total = [], []
        for _ in range(reps):
            t0 = time.perf_counter()
            f(tc, wc)
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            t2 = time.perf_counter()
            issue.append((t1 - t0) * 1e6)
            total.append((t2 - t0) * 1e3)
    return statistics.median(issue), statistics.median(total), torch.cuda.max_memory_allocated()


def main():
    hostjit, out = os.path.abspath(sys.argv[1]), sys.argv[2]
    b, t = (int(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) > 4 else (1, 64)
    os.makedirs(out, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    w = weights()
    tokens = torch.randint(0, V, (b, t), generator=torch.Generator().manual_seed(7))
    wc = {k: v.cuda() for k, v in w.items()}
    with torch.no_grad():
        ref = forward(tokens.cuda(), wc).cpu().numpy()
    args = ["--input", "tokens=@" + os.path.join(out, "tokens.npy")]
    np.save(os.path.join(out, "tokens.npy"), tokens.numpy().astype(np.int64))
    for k, v in w.items():
        path = os.path.join(out, k + ".npy")
        np.save(path, v.numpy())
        args += ["--input", "%s=@%s" % (k, path)]
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    prog = os.path.join(repo, "examples", "gpt2", "gpt2_small.hir")
    ok = True
    for graph in (False, True):
        save = os.path.join(out, "graph" if graph else "eager")
        cmd = [hostjit, "run", prog, "--backend", "cuda", "--mode", "both", "--no-tier", "--repeat", "30",
               "--save-outputs", save, "--stats", "text"] + (["--graph"] if graph else []) + args
        r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, NCCL_NVLS_ENABLE="0"))
        for line in r.stdout.splitlines():
            if "calls, median" in line or "ready" in line:
                print(line)
            for key in ("backend_allocs", "backend_frees", "pool_hits", "library_calls", "launches", "graph_fast",
                        "peak_bytes", "reserved_bytes"):
                m = re.search(r"^(\w+) stats: .*\b%s=(\d+)" % key, line)
                if m:
                    print("  %s %s=%s" % (m.group(1), key, m.group(2)))
        if r.returncode != 0:
            print(r.stdout[-3000:], r.stderr[-3000:])
            sys.exit("hostjit failed (%d)" % r.returncode)
        for mode in ("eval", "jit"):
            got = np.load(os.path.join(save, mode, "logits.npy"))
            err = np.abs(got.astype(np.float64) - ref)
            rel = err / np.maximum(np.abs(ref), 1e-3)
            print("%s%s: logits [%d, %d], largest absolute error %.3g, largest relative %.3g (|ref| max %.3g)" %
                  (mode, " graph" if graph else "", got.shape[0], got.shape[1], err.max(), rel.max(),
                   np.abs(ref).max()))
            ok &= bool(err.max() < 2e-3)
    # PyTorch on the same weights: host us per forward (issued, then drained
    # outside the timing), end-to-end ms and peak memory; eager, then
    # torch.compile in its default mode and with mode="reduce-overhead".
    tc = tokens.cuda()
    variants = [("pytorch eager", lambda: forward)]
    if os.environ.get("GPT2_NO_COMPILE") != "1":
        variants += [("torch.compile", lambda: torch.compile(forward)),
                     ("torch.compile reduce-overhead", lambda: torch.compile(forward, mode="reduce-overhead"))]
    for label, make in variants:
        try:
            host, e2e, peak = time_torch(make(), tc, wc)
            print("%s: host %.1f us per forward (median of 30), end to end %.3f ms; peak memory %.1f MiB" %
                  (label, host, e2e, peak / 2**20))
        except Exception as e:  # a variant that does not build here is reported, not hidden
            print("%s: failed: %s" % (label, str(e).splitlines()[0][:300]))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
