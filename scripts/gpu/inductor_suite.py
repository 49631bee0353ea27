#!/usr/bin/env python3
"""inductor_suite.py HOSTJIT OUTDIR [PROGRAM...] - torch programs through
Inductor, recorded (inductor_record.py) and run by hostjit on the GPU.

Where PyTorch and Triton are installed. For each program, in a process of
its own with fresh caches: record one call, save the arguments Inductor's
call took (.npy, before the call) and its outputs, then `hostjit import`,
`check` and `run` the description on CUDA in eval and JIT mode with those
arguments, and compare each result the program returns with the output
Inductor returned in it (bit for bit). Prints one line per program,
"RESULT {...}", and exits 1 if any program fails or differs.
"""
import json
import os
import subprocess
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def programs():
    import torch
    import torch.nn.functional as F
    torch.manual_seed(0)

    def r(*s):
        return torch.randn(*s, device="cuda")

    mlp = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 32)).cuda()

    class Attn(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = torch.nn.Linear(64, 192)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(x).split(64, dim=2)
            q = q.view(b, t, 4, 16).transpose(1, 2)
            k = k.view(b, t, 4, 16).transpose(1, 2)
            v = v.view(b, t, 4, 16).transpose(1, 2)
            a = ((q @ k.transpose(-2, -1)) * 0.25).softmax(dim=-1)
            return (a @ v).transpose(1, 2).reshape(b, t, c)

    attn = Attn().cuda()

    def sgd(p, g, m):
        m.mul_(0.9).add_(g)
        p.add_(m, alpha=-0.01)
        return p.sum()

    w1, w2 = r(64, 32), r(64, 32)
    lin = torch.nn.Linear(64, 128).cuda()

    def chunk_mm(x):  # slices of one buffer, at element offsets, into matmuls
        a, b = lin(x).chunk(2, dim=-1)
        return a @ w1 + b @ w2

    def gpt2_block():
        from transformers import GPT2Config
        from transformers.models.gpt2.modeling_gpt2 import GPT2Block
        cfg = GPT2Config(n_embd=64, n_head=4, n_layer=1, n_positions=64, attn_implementation="eager")
        block = GPT2Block(cfg).cuda().eval()
        return lambda x: block(x)[0]

    return {
        "chunk_mm": (chunk_mm, lambda: [r(16, 64)], False),
        "gpt2_block": (gpt2_block(), lambda: [r(2, 16, 64)], False),
        "mlp": (lambda x: mlp(x), lambda: [r(16, 64)], False),
        "attention": (lambda x: attn(x), lambda: [r(2, 8, 64)], False),
        "cross_entropy": (lambda x, t: F.cross_entropy(x, t),
                          lambda: [r(32, 100), torch.randint(0, 100, (32,), device="cuda")], False),
        "sgd": (sgd, lambda: [r(1000), r(1000), r(1000)], False),
        "dynamic_ln_gelu": (lambda x, w, b: F.gelu(F.layer_norm(x, (64,), w, b)),
                            lambda: [r(24, 64), r(64), r(64)], True),
    }


def results_of(desc):
    """The program's results, as the import makes them: the distinct roots of
    the outputs that are not inputs, in order; and each output's root."""
    roots = {i["name"]: i["name"] for i in desc["inputs"]}
    for s in desc["body"]:
        if s["op"] == "alloc":
            roots[s["name"]] = s["name"]
        elif s["op"] == "view":
            roots[s["name"]] = roots[s["of"]]
    inputs = {i["name"] for i in desc["inputs"]}
    res = []
    for o in desc["outputs"]:
        if roots[o] not in inputs and roots[o] not in res:
            res.append(roots[o])
    return res, [roots[o] for o in desc["outputs"]]


def one(hostjit, out, name):
    import numpy as np
    import torch
    import inductor_record
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    os.environ["TRITON_CACHE_DIR"] = os.path.join(d, "triton_cache")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(d, "inductor_cache")
    fn, make, dynamic = programs()[name]
    with torch.no_grad():
        desc, args, outs = inductor_record.record(fn, make(), d, name, dynamic=dynamic)
    outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
    cmd = [hostjit, "run", os.path.join(d, name + ".inductor.json"), "--backend", "cuda", "--mode", "both",
           "--no-tier", "--save-outputs", os.path.join(d, "hostjit")]
    for spec, a in zip(desc["inputs"], args):
        if "sizes" in spec:
            np.save(os.path.join(d, spec["name"] + ".npy"), a.cpu().numpy())
            cmd += ["--input", "%s=@%s" % (spec["name"], os.path.join(d, spec["name"] + ".npy"))]
        else:
            cmd += ["--scalar", "%s=%d" % (spec["name"], int(a))]
    res = {"program": name, "kernels": len(desc["kernels"]), "steps": len(desc["body"])}
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=dict(os.environ, NCCL_NVLS_ENABLE="0"))
    open(os.path.join(d, "run.txt"), "w").write(run.stdout + run.stderr)
    if run.returncode != 0:
        res["error"] = (run.stdout + run.stderr).strip().splitlines()[-1][:300]
        return res
    # Each output Inductor returned in a result: the same bytes where it lies.
    results, roots = results_of(desc)
    same = []
    for k, (o, root) in enumerate(zip(outs, roots)):
        if root not in results:
            continue  # an input the program writes: not saved by `hostjit run`
        for mode in ("eval", "jit"):
            got = np.load(os.path.join(d, "hostjit", mode, root + ".npy"))
            flat = got.reshape(-1)
            view = np.lib.stride_tricks.as_strided(
                flat[o.storage_offset():], shape=tuple(o.shape),
                strides=tuple(s * flat.itemsize for s in o.stride())) if o.dim() else flat[:1].reshape(())
            want = o.cpu().numpy()
            same.append(bool(np.array_equal(view, want)))
            if not same[-1]:
                diff = float(np.max(np.abs(view.astype(np.float64) - want.astype(np.float64))))
                res["max_abs_diff"] = max(res.get("max_abs_diff", 0.0), diff)
                res["max_abs_output"] = float(np.max(np.abs(want)))
    res["outputs_compared"] = len(same)
    res["bit_identical"] = all(same) and bool(same)
    # Host microseconds per call.
    import re
    import statistics
    import time
    for label, extra in (("hostjit_jit_us", []), ("hostjit_graph_us", ["--graph"])):
        t = subprocess.run([c for c in cmd if c not in ("--save-outputs", os.path.join(d, "hostjit"))] +
                           ["--repeat", "300"] + extra, capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, NCCL_NVLS_ENABLE="0"))
        m = re.search(r"^jit: \d+ calls, median ([0-9.]+) us", t.stdout, re.M)
        res[label] = float(m.group(1)) if m else "failed"
    fn_inputs = make()
    compiled = inductor_record.record.compiled
    with torch.no_grad():
        for _ in range(20):
            compiled(*fn_inputs)
        torch.cuda.synchronize()
        us = []
        for _ in range(300):
            t0 = time.perf_counter()
            compiled(*fn_inputs)
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            us.append((t1 - t0) * 1e6)
    res["inductor_python_us"] = round(statistics.median(us[30:]), 2)
    return res


def main():
    hostjit, out = sys.argv[1], sys.argv[2]
    names = sys.argv[3:] or [n for n in programs().keys() if n not in ("chunk_mm", "gpt2_block")]
    if len(names) > 1:  # each program in a process of its own: fresh caches
        bad = 0
        for n in names:
            r = subprocess.run([sys.executable, __file__, hostjit, out, n], timeout=600)
            bad |= r.returncode != 0
        sys.exit(1 if bad else 0)
    try:
        res = one(hostjit, out, names[0])
    except Exception as e:
        traceback.print_exc()
        res = {"program": names[0], "error": "%s: %s" % (type(e).__name__, str(e)[:300])}
    print("RESULT " + json.dumps(res))
    sys.exit(0 if res.get("bit_identical") else 1)


if __name__ == "__main__":
    main()
