#!/usr/bin/env python3
"""inductor_suite.py HOSTJIT OUTDIR [--jobs N] [PROGRAM...] - torch programs
through Inductor, recorded (hostjit.inductor) and run by hostjit on the GPU.

Where PyTorch and Triton are installed. Each program (inductor_programs_suite.py)
runs in a process of its own, with fresh caches, N at a time (default 3);
timings are taken under a lock, one process at a time. Per program:
  - record one call of the default torch.compile, save the arguments
    Inductor's call took (.npy, before the call) and what its graph returned;
  - run the description through the hostjit module (PYTHONPATH) on CUDA in
    eval and JIT mode on those arguments, torch tensors, three calls each,
    and compare each graph output of the third, where it lies, bit for bit;
  - host µs per call (median of 300, after 20): hostjit JIT eager and graph
    mode (`hostjit run --repeat`), eager again with HOSTJIT_MATMUL_REPLAYS=0
    where the program multiplies, Inductor's Python wrapper, cpp_wrapper
    and mode="reduce-overhead", each compiled after torch._dynamo.reset();
  - peak device bytes of one call: hostjit's peak_bytes (a run of one
    call), and
    torch.cuda.max_memory_allocated() over one call of the default compile
    less what was allocated before it (outputs counted in both).
Prints "RESULT {...}" per program and a table; writes OUTDIR/summary.json.
Exits 1 if any program fails to import or differs.
"""
import concurrent.futures
import contextlib
import fcntl
import json
import os
import re
import statistics
import subprocess
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


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


def compare(path, desc, args, outs):
    """Runs the description through the hostjit module in eval and JIT mode
    on copies of the arguments Inductor's call took, and compares every
    output its graph returned with hostjit's, where it lies, bit for bit."""
    import torch
    import hostjit
    res = {}
    results, roots = results_of(desc)
    rt = hostjit.Runtime(backend="cuda", stream=0)
    same = []
    # Three calls per mode: the third launches the matmuls' captured graphs
    # (the second captures them; HOSTJIT_MATMUL_REPLAYS), and is compared.
    for mode in ("eval", "jit"):
        try:
            prog = hostjit.compile(path, runtime=rt, mode=mode, tiered=False)
            for _ in range(3):
                got = None  # its buffers back first, so that each call has the same addresses
                got = prog(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
                got = [torch.from_dlpack(t) for t in (got if isinstance(got, tuple) else (got,))]
        except hostjit.HostjitError as e:
            res["error"] = str(e).strip().splitlines()[-1][:400]
            return res
        torch.cuda.synchronize()
        for o, root in zip(outs, roots):
            if root not in results:
                continue  # an input the program writes
            view = torch.as_strided(got[results.index(root)], o.shape, o.stride(), o.storage_offset())
            same.append(bool(torch.equal(view, o)) or bool(torch.equal(view.isnan(), o.isnan()) and
                                                            torch.equal(view.nan_to_num(), o.nan_to_num())))
            if not same[-1]:
                diff = (view.double() - o.double()).abs().nan_to_num()
                res["max_abs_diff"] = max(res.get("max_abs_diff", 0.0), float(diff.max()))
                res["max_abs_output"] = float(o.double().abs().nan_to_num().max())
    res["outputs_compared"] = len(same)
    res["bit_identical"] = all(same) and bool(same)
    return res


@contextlib.contextmanager
def timing_lock(out):
    with open(os.path.join(out, ".timing.lock"), "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def host_us(f, n=300, warm=20):
    """Median host µs of f() (the call, not the device work it queues)."""
    import torch
    for _ in range(warm):
        f()
    torch.cuda.synchronize()
    us = []
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        us.append((t1 - t0) * 1e6)
    return round(statistics.median(us), 2)


def hostjit_timing(cmd, graph, repeat=300, env=None):
    t = subprocess.run(cmd + ["--repeat", str(repeat), "--stats", "json"] +
                       (["--graph"] if graph else []), capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, **(env or {})))
    m = re.search(r"^jit: \d+ calls, median ([0-9.]+) us", t.stdout, re.M)
    stats = {}
    if "\n{" in t.stdout:
        with contextlib.suppress(ValueError):
            stats = json.loads(t.stdout[t.stdout.index("\n{") + 1:]).get("jit", {})
    return (float(m.group(1)) if m else "failed: " + (t.stdout + t.stderr).strip()[-200:]), stats


def one(hostjit, out, name):
    import numpy as np
    import torch
    from hostjit import inductor
    from inductor_programs_suite import programs
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    os.environ["TRITON_CACHE_DIR"] = os.path.join(d, "triton_cache")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(d, "inductor_cache")
    fn, make, dynamic = programs()[name]()
    res = {"program": name}
    with torch.no_grad():
        inputs = make()
        try:
            rec = inductor.record(fn, inputs, d, name, dynamic=dynamic)
        except inductor.Unsupported as e:
            res["error"] = "recorder: " + str(e)[:400]
            return res
        desc, args, outs, compiled = rec.desc, rec.args, rec.outputs, rec.compiled
        res.update(kernels=len(desc["kernels"]), steps=len(desc["body"]),
                   externs=sum(s["op"] == "extern" for s in desc["body"]))
        path = os.path.join(d, name + ".inductor.json")
        # The CLI times the program on the same arguments (.npy; random
        # values of the same shape where NumPy has no such dtype, bf16).
        cmd = [hostjit, "run", path, "--backend", "cuda", "--mode", "jit", "--no-tier"]
        for spec, a in zip(desc["inputs"], args):
            if "sizes" not in spec:
                v = repr(float(a)) if spec["dtype"] in ("f32", "f64") else "%d" % int(a)  # a 0-d tensor's value
                cmd += ["--scalar", "%s=%s" % (spec["name"], v)]
            elif a.dtype == torch.bfloat16:
                cmd += ["--input", "%s=bf16[%s]" % (spec["name"], ",".join(str(x) for x in a.shape))]
            else:
                np.save(os.path.join(d, spec["name"] + ".npy"), a.cpu().numpy())
                cmd += ["--input", "%s=@%s" % (spec["name"], os.path.join(d, spec["name"] + ".npy"))]
        res.update(compare(path, desc, args, outs))
        if "error" in res:
            return res

        def peak(f):
            torch.cuda.synchronize()
            base = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            o = f()
            torch.cuda.synchronize()
            p = torch.cuda.max_memory_allocated() - base
            del o
            return p

        with timing_lock(out):
            res["hostjit_jit_us"], stats = hostjit_timing(cmd, False)
            res["matmul_replays"] = stats.get("library_replays")
            if desc.get("body") and any(st["op"] == "extern" for st in desc["body"]):
                res["hostjit_jit_direct_us"], _ = hostjit_timing(cmd, False, env={"HOSTJIT_MATMUL_REPLAYS": "0"})
            res["hostjit_graph_us"], gstats = hostjit_timing(cmd, True)
            # One call's peak: with --repeat a call's outputs live on until
            # the next call has made its own.
            _, one_call = hostjit_timing([c for c in cmd if c != "--no-tier"], False, repeat=1)
            res["hostjit_peak_bytes"] = one_call.get("peak_bytes")
            res["graph_builds"] = gstats.get("graph_builds")
            res["inductor_python_us"] = host_us(lambda: compiled(*inputs))
            res["inductor_peak_bytes"] = peak(lambda: compiled(*inputs))
        for label, kw in (("inductor_cpp_wrapper_us", {"options": {"cpp_wrapper": True}}),
                          ("reduce_overhead_us", {"mode": "reduce-overhead"})):
            torch._dynamo.reset()
            try:
                c = torch.compile(fn, dynamic=dynamic, **kw)
                for _ in range(3):
                    c(*inputs)
                with timing_lock(out):
                    res[label] = host_us(lambda: c(*inputs))
            except Exception as e:  # reported, not fatal: the import is what is tested
                res[label] = "failed: %s: %s" % (type(e).__name__, str(e)[:200])
    return res


def table(results):
    cols = ["program", "kernels", "externs", "bit_identical", "hostjit_jit_us", "hostjit_jit_direct_us",
            "hostjit_graph_us",
            "inductor_python_us", "inductor_cpp_wrapper_us", "reduce_overhead_us", "hostjit_peak_bytes",
            "inductor_peak_bytes"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in results:
        lines.append("| " + " | ".join(str(r.get(c, r.get("error", "")) if c != "program" else r[c])[:60]
                                       for c in cols) + " |")
    return "\n".join(lines)


def main():
    argv = sys.argv[1:]
    if argv and argv[0] == "--one":
        hostjit, out, name = argv[1:4]
        try:
            res = one(hostjit, out, name)
        except Exception as e:
            traceback.print_exc()
            res = {"program": name, "error": "%s: %s" % (type(e).__name__, str(e)[:400])}
        print("RESULT " + json.dumps(res), flush=True)
        sys.exit(0 if res.get("bit_identical") else 1)
    jobs = 3
    if "--jobs" in argv:
        i = argv.index("--jobs")
        jobs = int(argv[i + 1])
        del argv[i:i + 2]
    hostjit, out = os.path.abspath(argv[0]), os.path.abspath(argv[1])
    os.makedirs(out, exist_ok=True)
    from inductor_programs_suite import programs
    names = argv[2:] or list(programs().keys())
    env = dict(os.environ, NCCL_NVLS_ENABLE="0", TORCHINDUCTOR_COMPILE_THREADS=str(max(1, 12 // jobs)))

    def run(name):
        log = os.path.join(out, name + ".log")
        with open(log, "w") as f:
            try:
                subprocess.run([sys.executable, __file__, "--one", hostjit, out, name], stdout=f, stderr=subprocess.STDOUT,
                               env=env, timeout=900)
            except subprocess.TimeoutExpired:
                return {"program": name, "error": "timed out after 900 s"}
        lines = [l for l in open(log) if l.startswith("RESULT ")]
        return json.loads(lines[-1][7:]) if lines else {"program": name, "error": "no result (see %s)" % log}

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(run, names))
    for r in results:
        print("RESULT " + json.dumps(r))
    imported = sum("error" not in r for r in results)
    identical = sum(r.get("bit_identical") is True for r in results)
    print("imported %d of %d, bit-identical %d" % (imported, len(results), identical))
    print(table(results))
    json.dump(results, open(os.path.join(out, "summary.json"), "w"), indent=1)
    sys.exit(0 if identical == len(results) else 1)


if __name__ == "__main__":
    main()
