"""python_overhead.py - the host cost of calling a hostjit program from Python,
against the same call from C++, Triton's launcher and PyTorch ops.

For a chain of K launches (K = 1 and 16) of y = alpha * x on small vectors,
eager and in graph mode, one run measures, interleaved round by round:

  cpp           Executable::run from C++ (Program._time_native): the floor
  py_hostjit    prog(x, alpha), x a hostjit.Tensor (taken as it is)
  py_torch      prog(x, alpha), x a torch.Tensor (the DLPack exchange API
                when torch has it, else __dlpack__), on a runtime with its
                own stream: the call waits for torch's current stream
  cpp_bound, py_torch_bound
                the same on a runtime bound to torch's current stream (no
                stream join)
  py_stream     prog(x, alpha, stream=s), s the caller's torch stream on a
                runtime with its own stream (two stream joins per call)
  triton        K launches of the same Triton kernel, outputs from torch.empty_like
  torch         K torch.mul(x, alpha) calls

Host time per call in microseconds, the median of the rounds, timed in
bursts of at most 512 launches with the device drained between them (so a
full launch queue never makes it the GPU's time); the Python overhead is
py_* - cpp (py_torch_bound - cpp_bound). Needs the hostjit module on PYTHONPATH; CUDA,
PyTorch and Triton where present (the host backend otherwise, with the
example kernels: --host-kernels).

  python3 bench/python_overhead.py --out overhead.json
"""
import argparse
import json
import os
import pathlib
import statistics
import sys
import time

import hostjit

REPO = pathlib.Path(__file__).resolve().parents[1]


def chain(k):
    lines = ["kernel @scale_vec(ptr<f32>, ptr<f32>, i64, f32) {",
             '  cuda = "kernels/vector.cu"', '  entry = "scale_vec"', '  host = "scale_vec"', "}", "",
             f"func @chain{k}(%x: f32[?], %alpha: f32) -> (f32[?]) {{",
             "  %n = size %x, 0", "  %blocks = ceildiv %n, 256"]
    prev = "%x"
    for i in range(k):
        lines.append(f"  %t{i} = alloc f32[%n]")
        lines.append(f"  launch @scale_vec grid(%blocks, 1, 1) block(256, 1, 1) smem(0) ({prev}, %t{i}, %n, %alpha)")
        if i > 0:
            lines.append(f"  free %t{i - 1}")
        prev = f"%t{i}"
    lines += [f"  return {prev}", "}"]
    return "\n".join(lines) + "\n"


def per_call_us(fn, calls, burst, sync):
    """Host time per call: calls in bursts short enough that the GPU's
    launch queue never fills (a full queue would time the GPU instead), the
    device drained between bursts, outside the timing."""
    total = 0
    done = 0
    while done < calls:
        m = min(burst, calls - done)
        sync()
        t0 = time.perf_counter_ns()
        for _ in range(m):
            fn()
        total += time.perf_counter_ns() - t0
        done += m
    sync()
    return total / calls / 1000.0


def native_us(prog, arg, calls, burst, sync):
    total = 0.0
    done = 0
    while done < calls:
        m = min(burst, calls - done)
        sync()
        total += prog._time_native(arg, 1.0, n=m) * m
        done += m
    sync()
    return total / calls / 1000.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="write the results as JSON here")
    ap.add_argument("--calls", type=int, default=2000, help="calls per round (default 2000)")
    ap.add_argument("--rounds", type=int, default=15, help="rounds, interleaved (default 15)")
    ap.add_argument("--n", type=int, default=1024, help="vector length (default 1024)")
    ap.add_argument("--host-kernels", default=str(REPO / "build" / "lib" / "libhostjit_example_kernels.so"))
    a = ap.parse_args()

    try:
        import torch
        cuda = torch.cuda.is_available()
    except ImportError:
        torch, cuda = None, False
    triton_kernel = None
    if cuda:
        try:
            import triton
            import triton.language as tl

            @triton.jit
            def scale(x_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
                i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                m = i < n
                tl.store(y_ptr + i, tl.load(x_ptr + i, mask=m) * alpha, mask=m)

            triton_kernel = scale
        except ImportError:
            pass

    backend = "cuda" if cuda else "host"
    rt = hostjit.Runtime(backend=backend, host_kernels=[] if cuda else [a.host_kernels])
    sync = (lambda: torch.cuda.synchronize()) if cuda else (lambda: None)
    filename = str(REPO / "examples" / "chain.hir")
    # A runtime on PyTorch's current stream: torch inputs need no stream join.
    bound = hostjit.Runtime(backend="cuda", stream=torch.cuda.current_stream()) if cuda else None
    variants = {}
    for k in (1, 16):
        burst = max(1, 512 // k)  # launches queued per burst: 512 at most
        for graph in (False, True):
            prog = hostjit.compile(chain(k), runtime=rt, graph=graph, tiered=False, filename=filename)
            tag = f"K{k}_{'graph' if graph else 'eager'}"
            if cuda:
                xt = torch.randn(a.n, device="cuda")
            else:
                import numpy as np
                xt = np.random.default_rng(1).standard_normal(a.n).astype(np.float32)
            xh = prog(xt, 1.0)  # a hostjit.Tensor input
            for _ in range(50):
                prog(xh, 1.0)
            variants[f"{tag}/cpp"] = ("cpp", prog, xh, burst)
            variants[f"{tag}/py_hostjit"] = ("py", (lambda p=prog, x=xh: p(x, 1.0)), None, burst)
            if cuda:
                bprog = hostjit.compile(chain(k), runtime=bound, graph=graph, tiered=False, filename=filename)
                bh = bprog(xt, 1.0)
                variants[f"{tag}/cpp_bound"] = ("cpp", bprog, bh, burst)
                variants[f"{tag}/py_torch_bound"] = ("py", (lambda p=bprog, x=xt: p(x, 1.0)), None, burst)
                variants[f"{tag}/py_torch"] = ("py", (lambda p=prog, x=xt: p(x, 1.0)), None, burst)
                if not graph:
                    s = torch.cuda.current_stream()
                    variants[f"{tag}/py_stream"] = ("py", (lambda p=prog, x=xt, s=s: p(x, 1.0, stream=s)), None,
                                                    burst)
        if cuda:
            x = torch.randn(a.n, device="cuda")

            def torch_k(x=x, k=k):
                y = x
                for _ in range(k):
                    y = torch.mul(y, 1.0)
                return y

            variants[f"K{k}_eager/torch"] = ("py", torch_k, None, burst)
            if triton_kernel is not None:
                grid = ((a.n + 255) // 256,)

                def triton_k(x=x, k=k, n=a.n):
                    y = x
                    for _ in range(k):
                        z = torch.empty_like(y)
                        triton_kernel[grid](y, z, n, 1.0, BLOCK=256)
                        y = z
                    return y

                triton_k()
                variants[f"K{k}_eager/triton"] = ("py", triton_k, None, burst)

    samples = {name: [] for name in variants}
    for _ in range(a.rounds):
        for name, (kind, f, arg, burst) in variants.items():
            if kind == "cpp":
                us = native_us(f, arg, a.calls, burst, sync)
            else:
                us = per_call_us(f, a.calls, burst, sync)
            samples[name].append(us)
    med = {name: statistics.median(v) for name, v in samples.items()}
    result = {"backend": backend, "n": a.n, "calls": a.calls, "rounds": a.rounds,
              "torch_exchange_api": bool(torch is not None and
                                         (hasattr(torch.Tensor, "__dlpack_c_exchange_api__") or
                                          hasattr(torch.Tensor, "__c_dlpack_exchange_api__"))),
              "median_us": med, "overhead_us": {}}
    for name, v in med.items():
        tag, what = name.split("/")
        if what.startswith("py_"):
            base = f"{tag}/cpp_bound" if what == "py_torch_bound" else f"{tag}/cpp"
            result["overhead_us"][name] = v - med[base]
    print(f"backend {backend}, n={a.n}, {a.calls} calls x {a.rounds} rounds, medians in us per call")
    for name in variants:
        extra = ""
        if name in result["overhead_us"]:
            extra = f"   (+{result['overhead_us'][name]:.2f} over cpp)"
        print(f"  {name:22s} {med[name]:9.2f}{extra}")
    if a.out:
        pathlib.Path(a.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
