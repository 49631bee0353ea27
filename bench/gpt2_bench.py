#!/usr/bin/env python3
"""gpt2_bench.py HOSTJIT OUTDIR [BxT ...] - GPT-2 small forward: hostjit against PyTorch.

Run where PyTorch is (the GPU machine; no part of the build). For each
batch x context (default 1x64 and 8x1024), in one process: GPT-2 small's
weights at random from a fixed seed (scripts/gpu/gpt2_check.py's model,
nothing downloaded), written as .npy; examples/gpt2/gpt2_small.hir through
`hostjit run --backend cuda` eager and in graph mode (JIT, --no-tier, 30
calls); PyTorch eager, torch.compile and torch.compile(mode="reduce-
overhead") on the same weights in fp32 (TF32 off). Each: host us per
forward (the call issued; the stream drained between calls, outside that
time), end-to-end ms per forward (until the device work is done), medians
(hostjit: of the 29 calls after the first; PyTorch: of 30 calls after 5
warm-up calls); peak device memory of one call with the
weights: PyTorch's max_memory_allocated, hostjit's inputs plus its peak of
live buffers (and, as "reserved", its inputs plus its pool and graph
memory), from a run of one call.
Writes OUTDIR/gpt2_bench.json; bench/plot_gpt2.py draws it.
"""
import json
import os
import re
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "gpu"))
import gpt2_check  # noqa: E402  (the model and its weights)

REPS = 30


def hostjit_run(hostjit, prog, args, graph, reps=REPS):
    cmd = [hostjit, "run", prog, "--backend", "cuda", "--mode", "jit", "--no-tier", "--repeat", str(reps),
           "--stats", "json"] + (["--graph"] if graph else []) + args
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, NCCL_NVLS_ENABLE="0"))
    if r.returncode != 0:
        print(r.stdout[-3000:], r.stderr[-3000:])
        sys.exit("hostjit failed (%d)" % r.returncode)
    issue = re.search(r"^jit: \d+ calls, median ([\d.]+) us", r.stdout, re.M)
    end = re.search(r"^jit: end to end \(the device work done\), median ([\d.]+) us", r.stdout, re.M)
    stats = json.loads(r.stdout[r.stdout.index("{"):])["jit"]
    return float(issue.group(1)), float(end.group(1)) / 1e3, stats


def main():
    hostjit, out = os.path.abspath(sys.argv[1]), sys.argv[2]
    shapes = [tuple(int(v) for v in s.split("x")) for s in sys.argv[3:]] or [(1, 64), (8, 1024)]
    os.makedirs(out, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    prog = os.path.join(repo, "examples", "gpt2", "gpt2_small.hir")
    w = gpt2_check.weights()
    args, weight_bytes = [], 0
    for k, v in w.items():
        path = os.path.join(out, k + ".npy")
        np.save(path, v.numpy())
        args += ["--input", "%s=@%s" % (k, path)]
        weight_bytes += v.numel() * 4
    wc = {k: v.cuda() for k, v in w.items()}
    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "weight_bytes": weight_bytes,
               "runs": []}
    for b, t in shapes:
        tokens = torch.randint(0, gpt2_check.V, (b, t), generator=torch.Generator().manual_seed(7))
        tpath = os.path.join(out, "tokens_%dx%d.npy" % (b, t))
        np.save(tpath, tokens.numpy().astype(np.int64))
        inputs = weight_bytes + tokens.numel() * 8
        targs = args + ["--input", "tokens=@" + tpath]
        for label, graph in (("hostjit eager", False), ("hostjit graph", True)):
            host, e2e, s = hostjit_run(hostjit, prog, targs, graph)
            # Memory of one call: with --repeat N the CLI holds the first
            # call's outputs while the others run (docs/cli.md), so a run of
            # one call gives the peak a caller that drops its logits sees.
            _, _, one = hostjit_run(hostjit, prog, targs, graph, reps=1)
            row = {"shape": "%dx%d" % (b, t), "variant": label, "host_us": host, "end_to_end_ms": e2e,
                   "peak_bytes": inputs + one["peak_bytes"],
                   "reserved_bytes": inputs + one["reserved_bytes"] + one["graph_bytes"],
                   "launches_per_call": s["launches"] // REPS, "library_calls_per_call": s["library_calls"] // REPS,
                   "graph_fast": s["graph_fast"], "graph_fallbacks": s["graph_fallbacks"]}
            results["runs"].append(row)
            print(json.dumps(row), flush=True)
        tc = tokens.cuda()
        for label, make in (("pytorch eager", lambda: gpt2_check.forward),
                            ("torch.compile", lambda: torch.compile(gpt2_check.forward)),
                            ("torch.compile reduce-overhead",
                             lambda: torch.compile(gpt2_check.forward, mode="reduce-overhead"))):
            try:
                torch._dynamo.reset()
                host, e2e, peak = gpt2_check.time_torch(make(), tc, wc, REPS)
                row = {"shape": "%dx%d" % (b, t), "variant": label, "host_us": host, "end_to_end_ms": e2e,
                       "peak_bytes": peak}
            except Exception as e:  # reported, not hidden
                row = {"shape": "%dx%d" % (b, t), "variant": label, "failed": str(e).splitlines()[0][:300]}
            results["runs"].append(row)
            print(json.dumps(row), flush=True)
        del tc
        torch.cuda.empty_cache()
    with open(os.path.join(out, "gpt2_bench.json"), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
