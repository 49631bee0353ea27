"""python_keywords.py - a call by keyword against the same call by position,
from Python, for a program of many tensor arguments (GPT-2 small takes 148).

The program is bench/programs.cpp's many-inputs program (16 launches of a
kernel that takes 20 of the M inputs each) in graph mode, the inputs made
once (torch tensors on CUDA, NumPy arrays on the host backend with the test
kernels). One run interleaves the two ways round by round and reports the
median host µs per call of each and their ratio.

  python3 bench/python_keywords.py --inputs 148 --out keywords.json
"""
import argparse
import json
import pathlib
import statistics
import time

import hostjit

REPO = pathlib.Path(__file__).resolve().parents[1]


def program(m, cuda_source):
    params = ", ".join(["ptr<f32>"] * 21)
    cuda = f'  cuda = "{cuda_source}"\n  entry = "touch20"\n' if cuda_source else ""
    s = f'kernel @touch20({params}) {{\n  host = "leaves_nonzero"\n{cuda}}}\n\nfunc @main('
    s += ", ".join(f"%w{i}: f32[64]" for i in range(m)) + ") -> (f32[1]) {\n  %y = alloc f32[1]\n"
    nxt = 0
    for _ in range(16):
        s += "  launch @touch20 grid(1, 1, 1) block(32, 1, 1) smem(0) (%y"
        for _ in range(20):
            s += f", %w{nxt % m}"
            nxt += 1
        s += ")\n"
    return s + "  return %y\n}\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--inputs", type=int, default=148, help="tensor arguments (default 148, GPT-2 small's)")
    ap.add_argument("--calls", type=int, default=500, help="calls per round and way (default 500)")
    ap.add_argument("--rounds", type=int, default=15, help="rounds (default 15)")
    ap.add_argument("--out", help="write the results as JSON here")
    ap.add_argument("--host-kernels", default=str(REPO / "build" / "lib" / "libhostjit_test_kernels.so"))
    a = ap.parse_args()
    try:
        import torch
        cuda = torch.cuda.is_available()
    except ImportError:
        torch, cuda = None, False
    if cuda:
        rt = hostjit.Runtime(backend="cuda")
        args = [torch.rand(64, device="cuda") for _ in range(a.inputs)]
        sync = torch.cuda.synchronize
        source = str(REPO / "bench" / "kernels" / "steps.cu")
    else:
        import numpy as np
        rt = hostjit.Runtime(backend="host", host_kernels=[a.host_kernels])
        rng = np.random.default_rng(1)
        args = [rng.random(64, dtype=np.float32) + 0.5 for _ in range(a.inputs)]
        sync = lambda: None  # noqa: E731
        source = ""
    prog = hostjit.compile(program(a.inputs, source), runtime=rt, graph=True, tiered=False)
    kwargs = {f"w{i}": x for i, x in enumerate(args)}
    ways = {"positional": lambda: prog(*args), "keywords": lambda: prog(**kwargs)}
    times = {w: [] for w in ways}
    for fn in ways.values():
        fn()
    for r in range(a.rounds):
        order = list(ways.items())
        order = order[r % 2:] + order[:r % 2]
        for name, fn in order:
            sync()
            t0 = time.perf_counter_ns()
            for _ in range(a.calls):
                fn()
            times[name].append((time.perf_counter_ns() - t0) / a.calls / 1000.0)
            sync()
    med = {w: statistics.median(v) for w, v in times.items()}
    result = {"backend": rt.backend, "inputs": a.inputs, "us_per_call": med,
              "ratio_keywords_to_positional": med["keywords"] / med["positional"]}
    print(json.dumps(result, indent=1))
    if a.out:
        pathlib.Path(a.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
