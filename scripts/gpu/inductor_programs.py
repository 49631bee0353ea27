#!/usr/bin/env python3
"""inductor_programs.py HOSTJIT OUTDIR [PROGRAM...] - PyTorch's compiler, through hostjit.

Where PyTorch and Triton are installed (the GPU machine; not part of the C++
build). For each small program below, in a process of its own with fresh
Triton and Inductor caches:

1. torch.compile compiles it; a steady-state call is watched at Triton's
   launcher, which gives each launch's kernel, grid and arguments (Inductor's
   own launcher is switched off so that every launch passes there).
2. From that call the script writes a fusion JSON: one segment per launch,
   each kernel declared by `hostjit import-triton` from its cache entry (its
   image, parameters, hidden scratch and launch attributes); the buffers a
   kernel writes that later launches read or the call returns are segment
   outputs, the others (Inductor's workspaces and semaphores) the segment's
   summary entries: a semaphore `zero_init`, and `resets_to_zero` when the
   kernel left it zero after the call (checked again by hostjit with
   HOSTJIT_CHECK_ZEROED=1).
3. hostjit runs the fusion on the same inputs in eval, jit and executor
   mode and in graph mode (eval and jit), and the outputs are compared with
   the compiled program's (and eager PyTorch's).
4. Host microseconds per call, issued and not waited for (the stream is
   drained between calls, outside the timing), medians of many calls:
   hostjit's modes against Inductor's Python wrapper, cpp_wrapper and
   mode="reduce-overhead"; and memsets per call (hostjit's counter; for
   Inductor the `.zero_()` calls of its wrapper).

Prints one JSON line per program ("RESULT {...}") and exits 1 if any output
differs beyond the tolerance or any step fails.
"""
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import time

TOL = {"rtol": 1e-4, "atol": 1e-5}  # f32: Inductor and hostjit run the same kernels; eager sums in another order
CALLS = 2000


def programs():
    import torch
    import torch.nn.functional as F

    def coop_sum(a):
        return (a * 2.0).sum(dim=1)

    def layer_norm(x, w, b):
        return F.layer_norm(x, (x.shape[-1],), w, b, 1e-5)

    def softmax_mean(x):
        m = x.amax(dim=1, keepdim=True)
        e = torch.exp(x - m)
        return e / e.sum(dim=1, keepdim=True) * 2.0 + x.mean()

    g = torch.Generator().manual_seed(1234)

    def rand(*shape):
        return (torch.rand(*shape, generator=g) + 0.25).cuda()

    return {
        # a cooperative reduction: its semaphores and workspace
        "coop_sum": (coop_sum, lambda: [rand(8, 1048576)], {"triton.cooperative_reductions": True}),
        # a persistent reduction
        "layer_norm": (layer_norm, lambda: [rand(64, 768), rand(768), rand(768)], {}),
        # several kernels: a row softmax, a full mean, and their combination
        "softmax_mean": (softmax_mean, lambda: [rand(256, 1000)], {}),
    }


def set_config(cfg):
    import torch._inductor.config as ic
    for key, value in cfg.items():
        obj = ic
        *path, last = key.split(".")
        for p in path:
            obj = getattr(obj, p)
        setattr(obj, last, value)


DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64", "int32": "i32",
          "int64": "i64", "uint8": "u8", "uint32": "u32", "int8": "i8", "bool": "bool"}


def hj_dtype(t):
    return DTYPES[str(t.dtype).replace("torch.", "")]


class Capture:
    """Every Triton launch while `on`: (launcher, grid, [(name, type, value)])."""

    def __init__(self):
        self.on = False
        self.launches = []

    def install(self):
        from triton.backends.nvidia import driver as nv
        cap = self
        init, call = nv.CudaLauncher.__init__, nv.CudaLauncher.__call__

        def patched_init(self, src, metadata):
            init(self, src, metadata)
            self._hj_name = metadata.name
            self._hj_sig = list(src.signature.items())

        def patched_call(self, gridX, gridY, gridZ, stream, function, *args):
            if cap.on:
                kernel_args = list(args[4:])
                sig = self._hj_sig
                if len(kernel_args) == len(sig):
                    named = [(n, t, v) for (n, t), v in zip(sig, kernel_args) if t != "constexpr"]
                else:
                    live = [(n, t) for n, t in sig if t != "constexpr"]
                    if len(live) != len(kernel_args):
                        raise RuntimeError("%s: %d launch arguments for %d parameters" %
                                           (self._hj_name, len(kernel_args), len(live)))
                    named = [(n, t, v) for (n, t), v in zip(live, kernel_args)]
                cap.launches.append((self._hj_name, (gridX, gridY, gridZ), named))
            return call(self, gridX, gridY, gridZ, stream, function, *args)

        nv.CudaLauncher.__init__, nv.CudaLauncher.__call__ = patched_init, patched_call


def cache_entry(triton_cache, name):
    entries = sorted({os.path.dirname(p) for p in glob.glob(os.path.join(triton_cache, "*", name + ".json"))})
    if not entries:
        raise RuntimeError("no Triton cache entry for kernel %s" % name)
    return entries[-1]


def build_fusion(hostjit, name, inputs, outputs, launches, triton_cache, sems_zero):
    """The fusion JSON of one call: its launches as segments."""
    import torch
    fusion = {"name": name, "inputs": [], "outputs": [], "kernels": [], "segments": []}
    live = {}  # data_ptr -> the buffer's name (the latest version written)
    for i, t in enumerate(inputs):
        n = "in%d" % i
        fusion["inputs"].append({"name": n, "dtype": hj_dtype(t), "dims": list(t.shape)})
        live[t.data_ptr()] = n
    # The last launch that reads or writes each pointer, and who returns it.
    returned = {t.data_ptr() for t in outputs}
    last_use = {}
    for li, (_, _, args) in enumerate(launches):
        for n, ty, v in args:
            if isinstance(v, torch.Tensor):
                last_use[v.data_ptr()] = li
    declared, zeroed = {}, {}
    version = 0
    for li, (kname, grid, args) in enumerate(launches):
        entry = cache_entry(triton_cache, kname)
        if kname not in declared:
            k = json.loads(subprocess.check_output([hostjit, "import-triton", entry, "--fusion-json"], text=True))
            md = json.load(open(os.path.join(entry, kname + ".json")))
            declared[kname] = (k, md)
            fusion["kernels"].append(k)
        k, md = declared[kname]
        seg = {"name": "launch%d" % li, "kernel": kname, "inputs": [], "outputs": [], "summary": [], "scalars": []}
        params = k["params"]
        for pi, (pname, ty, v) in enumerate(args):
            if isinstance(v, torch.Tensor):
                p = v.data_ptr()
                spec = {"dtype": hj_dtype(v), "extents": list(v.shape), "strides": list(v.stride())}
                # Triton's TTIR has no unsigned integers (a uint32 tensor is
                # !tt.ptr<i32> there): the tensor's dtype says which it is.
                want = "ptr<%s>" % spec["dtype"]
                if params[pi] != want and re.fullmatch(r"ptr<[iu](8|16|32|64)>", params[pi]) and \
                        params[pi][5:-1] == spec["dtype"][1:]:
                    params[pi] = want
                if pname.startswith("in_out_ptr"):
                    raise RuntimeError("%s: %s is read and written in place, which this script does not map" %
                                       (kname, pname))
                if pname.startswith("in_ptr"):
                    if p not in live:
                        raise RuntimeError("%s: %s is read but no input or earlier launch made it" % (kname, pname))
                    seg["inputs"].append(live[p])
                elif pname.startswith("out_ptr") and (p in returned or last_use.get(p, li) > li):
                    version += 1
                    bname = "buf%d" % version
                    live[p] = bname
                    seg["outputs"].append(dict(name=bname, **spec))
                else:
                    # Written and read by this launch alone: Inductor's
                    # workspace and semaphores, or an output nobody reads.
                    s = dict(name="%s_%s" % (seg["name"], pname), **spec)
                    if "sem" in pname:
                        s["zero_init"] = True
                        if sems_zero.get((li, pname)):
                            s["resets_to_zero"] = True
                    seg["summary"].append(s)
            elif isinstance(v, bool) or not isinstance(v, (int, float)):
                raise RuntimeError("%s: argument %s of type %s" % (kname, pname, type(v).__name__))
            else:
                ptype = params[pi]
                seg["scalars"].append("to_i32(%d)" % v if ptype == "i32" else v)
        # Triton's scratch: grid x num_ctas x the size per program, after the scalars.
        programs = grid[0] * grid[1] * grid[2] * md.get("num_ctas", 1)
        scratch = []
        for key, zero in (("global_scratch", False), ("profile_scratch", True)):
            if key + "_size" in md:
                s = {"name": "%s_%s" % (seg["name"], key), "dtype": "u8", "extents": [programs * md[key + "_size"]]}
                if zero:
                    s["zero_init"] = True
                scratch.append(s)
        if scratch:
            seg["scratch"] = scratch
        cl = k.get("cluster", [1, 1, 1])
        seg["launch"] = {"grid": [grid[0] * cl[0], grid[1] * cl[1], grid[2] * cl[2]],
                         "block": [32 * md["num_warps"], 1, 1], "smem": md["shared"]}
        for key in ("summary", "scalars"):
            if not seg[key]:
                del seg[key]
        fusion["segments"].append(seg)
    for t in outputs:
        if t.data_ptr() not in live:
            raise RuntimeError("an output no launch wrote")
        fusion["outputs"].append(live[t.data_ptr()])
    return fusion


def time_calls(fn, args, calls=CALLS):
    import torch
    us = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn(*args)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        us.append((t1 - t0) * 1e6)
    return statistics.median(us[calls // 10:])


def inductor_times(name, spec):
    """Host us per call of each Inductor mode, each compiled afresh."""
    import torch
    fn, make_inputs, cfg = spec
    res = {}
    for mode in ("python_wrapper", "cpp_wrapper", "reduce_overhead"):
        torch._dynamo.reset()
        set_config(cfg)
        import torch._inductor.config as ic
        ic.cpp_wrapper = mode == "cpp_wrapper"
        try:
            inputs = make_inputs()
            c = torch.compile(fn, mode="reduce-overhead" if mode == "reduce_overhead" else None)
            with torch.no_grad():
                for _ in range(5):
                    c(*inputs)
                torch.cuda.synchronize()
                res[mode] = round(time_calls(c, inputs), 2)
        except Exception as e:  # a mode that does not build here is reported, not hidden
            res[mode] = "failed: %s" % str(e).splitlines()[0][:200]
        ic.cpp_wrapper = False
    return res


def zero_calls_in_wrapper(inductor_cache):
    """`.zero_()` calls in Inductor's wrapper (the file with `def call(`)."""
    n = 0
    for p in glob.glob(os.path.join(inductor_cache, "**", "*.py"), recursive=True):
        text = open(p).read()
        if "def call(" in text:
            n = max(n, len(re.findall(r"\.zero_\(\)", text)))
    return n


def run_hostjit(hostjit, args, env):
    r = subprocess.run([hostjit, "run"] + args, capture_output=True, text=True, env=env, timeout=300)
    if r.returncode != 0:
        raise RuntimeError("hostjit run %s failed (%d):\n%s%s" % (" ".join(args), r.returncode, r.stdout, r.stderr))
    return r.stdout


def medians(text):
    return {m: float(us) for m, us in re.findall(r"^(\w+): \d+ calls, median ([0-9.]+) us", text, re.M)}


def stats_json(text):
    i = text.find("\n{")
    return json.loads(text[i + 1:]) if i >= 0 else {}


def one_program(hostjit, out, name):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    os.environ["TRITON_CACHE_DIR"] = os.path.join(d, "triton")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(d, "inductor")
    import numpy as np
    import torch
    import torch._inductor.config as ic
    if hasattr(ic, "use_static_cuda_launcher"):
        ic.use_static_cuda_launcher = False  # every launch through Triton's launcher, where it is watched
    fn, make_inputs, cfg = programs()[name]
    set_config(cfg)
    cap = Capture()
    cap.install()
    inputs = make_inputs()
    compiled = torch.compile(fn)
    with torch.no_grad():
        for _ in range(3):
            compiled(*inputs)
        torch.cuda.synchronize()
        cap.on = True
        got = compiled(*inputs)
        torch.cuda.synchronize()
        cap.on = False
        eager = fn(*inputs)
    outputs = list(got) if isinstance(got, (tuple, list)) else [got]
    eager = list(eager) if isinstance(eager, (tuple, list)) else [eager]
    if not cap.launches:
        raise RuntimeError("no Triton launch was seen: is Inductor's static launcher still on?")
    sems_zero = {}
    for li, (_, _, args) in enumerate(cap.launches):
        for pname, _, v in args:
            if isinstance(v, torch.Tensor) and "sem" in pname:
                sems_zero[(li, pname)] = bool((v == 0).all().item())
    fusion = build_fusion(hostjit, name, inputs, outputs, cap.launches, os.environ["TRITON_CACHE_DIR"], sems_zero)
    fpath = os.path.join(d, name + ".json")
    json.dump(fusion, open(fpath, "w"), indent=1)
    in_args = []
    for i, t in enumerate(inputs):
        np.save(os.path.join(d, "in%d.npy" % i), t.cpu().numpy())
        in_args += ["--input", "in%d=@%s" % (i, os.path.join(d, "in%d.npy" % i))]
    env = dict(os.environ, HOSTJIT_CHECK_ZEROED="1", NCCL_NVLS_ENABLE="0")
    base = [fpath, "--backend", "cuda"] + in_args
    run_hostjit(hostjit, base + ["--mode", "all", "--check-parity", "--save-outputs", os.path.join(d, "eager")], env)
    run_hostjit(hostjit, base + ["--mode", "both", "--graph", "--no-tier", "--repeat", "3", "--save-outputs",
                                 os.path.join(d, "graph")], env)
    worst = {}
    ok = True
    for sub in ("eager", "graph"):
        for mode in (("eval", "jit", "executor") if sub == "eager" else ("eval", "jit")):
            for oi, oname in enumerate(fusion["outputs"]):
                h = np.load(os.path.join(d, sub, mode, oname + ".npy")).reshape(-1)
                want = outputs[oi].detach().cpu().numpy().reshape(-1)
                ref = eager[oi].detach().cpu().numpy().reshape(-1)
                same = np.array_equal(h, want)
                close = np.allclose(h, ref, **TOL)
                err = float(np.max(np.abs(h.astype(np.float64) - ref.astype(np.float64))))
                worst["%s/%s" % (sub, mode)] = {"bit_identical_to_inductor": same, "max_abs_err_vs_eager": err}
                ok &= same and close
    timing_env = dict(os.environ, NCCL_NVLS_ENABLE="0")
    t_eager = run_hostjit(hostjit, base + ["--mode", "all", "--repeat", str(CALLS), "--no-tier", "--stats", "json"],
                          timing_env)
    t_graph = run_hostjit(hostjit, base + ["--mode", "jit", "--graph", "--repeat", str(CALLS), "--no-tier",
                                           "--stats", "json"], timing_env)
    hj = medians(t_eager)
    hj["jit_graph"] = medians(t_graph).get("jit")
    st = stats_json(t_eager)
    memsets = {m: round(s.get("memsets", 0) / CALLS, 3) for m, s in st.items() if isinstance(s, dict)}
    memsets["jit_graph"] = round(stats_json(t_graph).get("jit", {}).get("memsets", 0) / CALLS, 3)
    result = {
        "program": name,
        "launches": [(k, list(g)) for k, g, _ in cap.launches],
        "kernels": [{"name": k["name"], "cooperative": k.get("cooperative", False)} for k in fusion["kernels"]],
        "semaphores_left_zero": {"%d:%s" % key: v for key, v in sems_zero.items()},
        "outputs": worst,
        "tolerance_vs_eager": TOL,
        "hostjit_us": hj,
        "hostjit_memsets_per_call": memsets,
        "inductor_zero_calls_per_call": zero_calls_in_wrapper(os.environ["TORCHINDUCTOR_CACHE_DIR"]),
        "inductor_us": inductor_times(name, programs()[name]),
        "torch": torch.__version__,
    }
    print("RESULT " + json.dumps(result), flush=True)
    return ok


def main():
    hostjit, out = os.path.abspath(sys.argv[1]), sys.argv[2]
    names = sys.argv[3:]
    if len(names) == 1:
        sys.exit(0 if one_program(hostjit, out, names[0]) else 1)
    ok = True
    for name in names or list(programs().keys()):
        r = subprocess.run([sys.executable, __file__, hostjit, out, name], timeout=540)
        print("%s: %s" % (name, "ok" if r.returncode == 0 else "FAILED (%d)" % r.returncode), flush=True)
        ok &= r.returncode == 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
