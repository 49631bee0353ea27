#!/usr/bin/env python3
"""decode_gpt2.py - GPT-2 small generating on the GPU: hostjit's torch.compile
backend against eager PyTorch, torch.compile and its reduce-overhead mode.

    decode_gpt2.py all OUTDIR [--steps N] [--batches 1,8] [--loops grow,kv,static] [--modes ...] [--timeout S] [--warm 1]
    decode_gpt2.py one MODE LOOP BATCH STEPS OUT.json      (one run, in its own process)
    decode_gpt2.py table OUTDIR                            (the summary, from the runs' files)

Run where PyTorch, Triton and transformers are (the GPU machine; no part of
the build). The model is transformers' GPT2LMHeadModel from GPT2Config()
(GPT-2 small: 12 layers, 768 wide) with random weights from a fixed seed,
nothing downloaded, eager attention (SDPA's kernel is an aten call that
hostjit's import refuses), fp32 with TF32 off, inference.

Loops (the token ids are random from a fixed seed, the same for every mode,
so each mode does the same work):
  grow  the whole sequence each step, its length 16, 17, ... (no cache);
  kv    a 16-token prompt, then one token per step with the KV cache
        (transformers' DynamicCache), whose length grows by one each step;
  static  the same with transformers' StaticCache of 16 + N + 1 positions
        (every step's shapes the same; the cache written in place at
        cache_position): what reduce-overhead needs to record once. Not in
        the default loops.
Modes: eager; inductor (torch.compile's default); reduce_overhead and
reduce_overhead_dynamic (dynamic=True): with the KV cache these need
torch.compiler.cudagraph_mark_step_begin() and the cache cloned each step,
which the run does (cudagraph trees overwrite their outputs otherwise);
hostjit (torch.compile(backend="hostjit"), graph mode on) and hostjit_eager
(options={"graph": False}).

DECODE_INDUCTOR="name=value;..." sets torch._inductor.config for the run
(e.g. max_autotune_gemm=True;max_autotune_gemm_backends=TRITON: matmuls as
Triton templates instead of cuBLAS calls); the JSON records it.
DECODE_HOSTJIT="name=value;..." gives hostjit's backend options (e.g.
sizes_change=False), the hostjit modes' graph option aside.
HOSTJIT_PROFILE=1 profiles hostjit's runtimes (docs/runtime.md) and puts
their profile rows in the JSON ("profile"): graph builds, updates and
launches with their host time.

Per step: host us (the call returned; the device was idle when it began)
and end-to-end us (the device done); for hostjit, the host us inside the
programs' calls and in the backend's Python around them (the rest is
Dynamo, AOTAutograd and the model's Python); a checksum of the last position's
logits (float64 sum and sum of magnitudes), and every 16 steps the device
memory held (torch's reserved bytes, hostjit's runtimes' reserved and graph
bytes); for hostjit, what graph mode did (hj_graph_outcome) at steps 0-7
and every 16th; the graphs built (hostjit) or recorded (cudagraph trees) so far,
read after each step outside its timing. Once per run: the first step's wall time (compiles included: time
to the first token; each run starts with empty Inductor, Triton and hostjit
caches of its own unless --warm 1, so that no mode compiles for another), Dynamo's graphs, recompiles, re-records (cudagraph
trees' calls of record_function and of CUDAGraphNode._record, and its
eager warm-up runs, run_eager; hostjit's
graphs built), and the logits of steps 0, 1,
N/2 and N-1 (OUT.pt) for a bit-for-bit comparison across modes.
"""
import json
import os
import statistics
import subprocess
import sys
import time

MODES = ["hostjit", "hostjit_eager", "inductor", "reduce_overhead", "reduce_overhead_dynamic", "eager"]
LOOPS = ["grow", "kv", "static"]
DEFAULT_LOOPS = ["grow", "kv"]
PROMPT = 16


def one(mode, loop, batch, steps, out):
    import logging
    import torch
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    logging.getLogger("hostjit.dynamo").setLevel(logging.INFO)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    inductor_config = inductor_settings(os.environ.get("DECODE_INDUCTOR", ""))
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(attn_implementation="eager")
    model = GPT2LMHeadModel(cfg).cuda().eval()
    g = torch.Generator(device="cuda").manual_seed(1)
    tokens = torch.randint(0, cfg.vocab_size, (batch, PROMPT + steps + 1), device="cuda", generator=g)

    records = []
    if mode.startswith("reduce_overhead"):
        # cudagraph trees record through the manager's record_function (a
        # CUDAGraphNode's _record inside it); run 3's count of _record
        # alone stayed 0. Each is counted under its own name.
        from torch._inductor import cudagraph_trees as ct

        def counting(cls, name):
            orig = getattr(cls, name, None)
            if orig is None:
                return

            def counted(self, *a, **kw):
                records.append(name)
                return orig(self, *a, **kw)
            setattr(cls, name, counted)
        counting(ct.CUDAGraphTreeManager, "record_function")
        counting(ct.CUDAGraphNode, "_record")
        # A function's first run under cudagraph trees is a warm-up, run
        # eagerly and not recorded; with dynamic shapes each new size may
        # be a new function (one warm-up each, never recorded when no size
        # comes back): counted to tell the two apart.
        counting(ct.CUDAGraphTreeManager, "run_eager")
    hd = None
    if mode == "eager":
        fwd = model
    elif mode == "inductor":
        fwd = torch.compile(model)
    elif mode == "reduce_overhead":
        fwd = torch.compile(model, mode="reduce-overhead")
    elif mode == "reduce_overhead_dynamic":
        fwd = torch.compile(model, mode="reduce-overhead", dynamic=True)
    elif mode in ("hostjit", "hostjit_eager"):
        import hostjit.dynamo as hd
        opts = dict(literal_settings(os.environ.get("DECODE_HOSTJIT", "")), graph=mode == "hostjit")
        fwd = torch.compile(model, backend="hostjit", options=opts)
    else:
        raise SystemExit("unknown mode %s (%s)" % (mode, ", ".join(MODES)))
    cudagraphs = mode.startswith("reduce_overhead")

    def held():
        m = {"torch_reserved": torch.cuda.memory_reserved()}
        if hd is not None:
            st = [rt.stats() for rt in hd.runtimes()]
            m["hostjit_reserved"] = sum(s["reserved_bytes"] for s in st)
            m["hostjit_graph_bytes"] = sum(s["graph_bytes"] for s in st)
        return m

    host, e2e, sums, memory, keep = [], [], [], [], {}
    inside, around = [], []  # hostjit modes: µs in the programs' calls, and in the backend's Python around them

    def spent():
        gs = hd.graphs() if hd is not None else []
        return sum(g["program_us"] for g in gs), sum(g["python_us"] for g in gs)

    def recorded():  # graphs built (hostjit) or recorded (cudagraph trees) so far, read outside the timing
        if hd is not None:
            return sum(rt.stats()["graph_builds"] for rt in hd.runtimes())
        return records.count("record_function")
    records_by_step = []  # after each step
    outcomes = []  # hostjit: [step, each runtime's last graph-mode outcome], steps 0-7 and every 16th
    keep_steps = {0, 1, steps // 2, steps - 1}
    past = None
    if loop == "static":
        import inspect
        from transformers import StaticCache
        # Its constructor's arguments changed across transformers versions:
        # give those this one takes.
        want = {"config": cfg, "max_batch_size": batch, "max_cache_len": PROMPT + steps + 1, "device": "cuda",
                "dtype": torch.float32}
        takes = inspect.signature(StaticCache.__init__).parameters
        past = StaticCache(**{k: v for k, v in want.items() if k in takes})
    with torch.no_grad():
        if loop == "static":  # the prompt into the static cache, before step 0
            t0 = time.perf_counter()
            if cudagraphs:
                torch.compiler.cudagraph_mark_step_begin()
            fwd(input_ids=tokens[:, :PROMPT], past_key_values=past, use_cache=True,
                cache_position=torch.arange(PROMPT, device="cuda"))
            torch.cuda.synchronize()
            prefill = time.perf_counter() - t0
        if loop == "kv":  # the prompt, with the cache, before step 0
            t0 = time.perf_counter()
            if cudagraphs:
                torch.compiler.cudagraph_mark_step_begin()
            o = fwd(input_ids=tokens[:, :PROMPT], use_cache=True)
            past = o.past_key_values
            if cudagraphs:  # the first step's replay overwrites the prompt's outputs
                for layer in past.layers:
                    layer.keys, layer.values = layer.keys.clone(), layer.values.clone()
            torch.cuda.synchronize()
            prefill = time.perf_counter() - t0
        for i in range(steps):
            if loop == "grow":
                kw = {"input_ids": tokens[:, :PROMPT + i], "use_cache": False}
            elif loop == "static":  # the cache is written in place: nothing to keep of the outputs but the logits
                kw = {"input_ids": tokens[:, PROMPT + i:PROMPT + i + 1], "past_key_values": past, "use_cache": True,
                      "cache_position": torch.full((1,), PROMPT + i, device="cuda", dtype=torch.long)}
            else:
                kw = {"input_ids": tokens[:, PROMPT + i:PROMPT + i + 1], "past_key_values": past, "use_cache": True}
            was = spent()
            t0 = time.perf_counter()
            if cudagraphs:
                torch.compiler.cudagraph_mark_step_begin()
            o = fwd(**kw)
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            t2 = time.perf_counter()
            logits = o.logits[:, -1]
            if loop == "kv":
                past = o.past_key_values
                if cudagraphs:  # the next replay overwrites this one's outputs
                    for layer in past.layers:
                        layer.keys, layer.values = layer.keys.clone(), layer.values.clone()
            now = spent()
            records_by_step.append(recorded())
            if hd is not None and (i < 8 or i % 16 == 0):  # what graph mode did, read outside the timing
                outcomes.append([i] + [rt.graph_outcome() for rt in hd.runtimes()])
            inside.append(now[0] - was[0])
            around.append(now[1] - was[1])
            host.append((t1 - t0) * 1e6)
            e2e.append((t2 - t0) * 1e6)
            d = logits.double()
            sums.append([float(d.sum()), float(d.abs().sum())])
            if i in keep_steps:
                keep[i] = logits.clone().cpu()
            if i % 16 == 0 or i == steps - 1:
                memory.append(dict(held(), step=i))
    from torch._dynamo.utils import counters
    res = {"mode": mode, "loop": loop, "batch": batch, "steps": steps, "host_us": host, "e2e_us": e2e,
           "checksums": sums, "memory": memory, "first_step_s": e2e[0] / 1e6,
           "dynamo_graphs": int(counters["stats"]["unique_graphs"]),
           "recompiles": int(sum(counters["recompiles"].values())) if "recompiles" in counters else 0,
           "cudagraph_records": records.count("record_function"), "cudagraph_node_records": records.count("_record"),
           "cudagraph_warmups": records.count("run_eager"),
           "records_by_step": records_by_step,
           "torch": torch.__version__, "inductor_config": inductor_config,
           "hostjit_options": os.environ.get("DECODE_HOSTJIT", "")}
    if loop in ("kv", "static"):
        res["prefill_s"] = prefill
        res["first_token_s"] = prefill + e2e[0] / 1e6
    else:
        res["first_token_s"] = e2e[0] / 1e6
    if hd is not None:
        st = [rt.stats() for rt in hd.runtimes()]
        for k in ("graph_builds", "graph_reuses", "graph_replans", "graph_fallbacks", "graph_replays", "graph_fast",
                  "graph_updates", "library_replays"):
            res[k] = sum(s[k] for s in st)
        res["hostjit"] = hd.stats()
        res["program_us"], res["backend_python_us"] = inside, around
        res["graphs"] = hd.graphs()
        res["graph_outcomes"] = outcomes
        if os.environ.get("HOSTJIT_PROFILE") == "1":  # where the programs' host time went
            res["profile"] = [rt.profile() for rt in hd.runtimes()]
    torch.save(keep, out[:-len(".json")] + ".pt")
    with open(out, "w") as f:
        json.dump(res, f)


def literal_settings(text):
    """"name=value;..." as (name, value) pairs, each value read as a Python
    literal, else kept as a string."""
    import ast
    out = []
    for item in filter(None, text.split(";")):
        name, _, value = item.partition("=")
        try:
            v = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            v = value
        out.append((name.strip(), v))
    return out


def inductor_settings(text):
    """Sets torch._inductor.config from DECODE_INDUCTOR's "name=value;..."
    (values read as Python literals, else as strings), for every mode that
    compiles; returns what it set."""
    from torch._inductor import config
    done = {}
    for name, v in literal_settings(text):
        obj = config
        *path, last = name.split(".")
        for part in path:
            obj = getattr(obj, part)
        if not hasattr(obj, last):
            raise SystemExit("DECODE_INDUCTOR: torch._inductor.config has no %s" % name)
        setattr(obj, last, v)
        done[name] = v
    return done


def all_runs(outdir, steps, batches, loops, modes, timeout, warm):
    import shutil
    import tempfile
    os.makedirs(outdir, exist_ok=True)
    for loop in loops:
        for batch in batches:
            for mode in modes:
                out = os.path.join(outdir, "%s_%s_b%d.json" % (loop, mode, batch))
                env = dict(os.environ)
                caches = None
                if not warm:  # Inductor's, Triton's and hostjit's caches empty: each run's first token is cold
                    caches = tempfile.mkdtemp(prefix="decode-caches-")
                    for var in ("TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "HOSTJIT_CACHE_DIR"):
                        env[var] = os.path.join(caches, var.lower())
                t0 = time.time()
                try:
                    p = subprocess.run([sys.executable, os.path.abspath(__file__), "one", mode, loop, str(batch),
                                        str(steps), out], capture_output=True, text=True, timeout=timeout, env=env)
                    rc, err = p.returncode, p.stderr
                except subprocess.TimeoutExpired as e:
                    rc, err = "timeout", (e.stderr or b"").decode(errors="replace") if isinstance(e.stderr, bytes) \
                        else (e.stderr or "")
                with open(out[:-5] + ".log", "w") as f:
                    f.write(err)
                if caches:
                    shutil.rmtree(caches, ignore_errors=True)
                print("%s %s b%d: rc=%s %.0fs" % (loop, mode, batch, rc, time.time() - t0), flush=True)
                if rc != 0:
                    print("\n".join(err.strip().splitlines()[-4:]), flush=True)


def median_half(v):
    return statistics.median(v[len(v) // 2:])


def table(outdir):
    import glob
    rows = []
    for path in sorted(glob.glob(os.path.join(outdir, "*.json"))):
        with open(path) as f:
            rows.append(json.load(f))
    print("| loop | batch | mode | host us/step | end-to-end us/step | first token s | graphs | graphs made "
          "| memory MiB first/last | same logits as inductor |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for loop in LOOPS:
        for batch in sorted({r["batch"] for r in rows}):
            ref = next((r for r in rows if r["loop"] == loop and r["batch"] == batch and r["mode"] == "inductor"),
                       None)
            for mode in MODES:
                r = next((r for r in rows if r["loop"] == loop and r["batch"] == batch and r["mode"] == mode), None)
                if r is None:
                    continue
                rerec = r["cudagraph_records"] if mode.startswith("reduce") else r.get("graph_builds", "")
                by = r.get("records_by_step")
                if by and rerec != "":  # the first step's (and for kv the prompt's) left out
                    rerec = "%s (%d after step 0" % (rerec, by[-1] - by[0])
                    # Steps after the one that recorded or built first: a
                    # re-record is a graph made after that one.
                    first = next((i for i in range(len(by)) if by[i] > 0), None)
                    if first is not None:
                        rerec += "; first at step %d, %d after it" % (first, by[-1] - by[first])
                    rerec += ")"
                if mode.startswith("reduce") and "cudagraph_warmups" in r:
                    rerec = "%s; %d eager warm-ups" % (rerec, r["cudagraph_warmups"])

                def mib(m):
                    return (m["torch_reserved"] + m.get("hostjit_reserved", 0)) / 2 ** 20
                same = ""
                if ref is not None and mode != "inductor":
                    n = sum(a == b for a, b in zip(r["checksums"], ref["checksums"]))
                    same = "%d/%d steps" % (n, len(ref["checksums"]))
                if r.get("program_us"):
                    mode = "%s (of the host us: %.0f in the programs, %.0f around them" % (
                        mode, median_half(r["program_us"]), median_half(r["backend_python_us"]))
                    gs = r.get("graphs", [])
                    if gs and all("evaluator_calls" in g for g in gs):  # runs before stop 57 did not count them
                        mode += "; %d calls on the evaluator while compiling" % sum(g["evaluator_calls"] for g in gs)
                    mode += ")"
                graphs = str(r["dynamo_graphs"])
                if "hostjit" in r:
                    graphs += " (%d imported)" % r["hostjit"]["imported"]
                print("| %s | %d | %s | %.0f | %.0f | %.2f | %s | %s | %.0f / %.0f | %s |" % (
                    loop, batch, mode, median_half(r["host_us"]), median_half(r["e2e_us"]), r["first_token_s"],
                    graphs, rerec, mib(r["memory"][0]), mib(r["memory"][-1]), same))


def main():
    a = sys.argv[1:]
    if a[:1] == ["one"] and len(a) == 6:
        return one(a[1], a[2], int(a[3]), int(a[4]), a[5])
    if a[:1] == ["table"] and len(a) == 2:
        return table(a[1])
    if a[:1] == ["all"] and len(a) >= 2:
        opts = {"--steps": "512", "--batches": "1,8", "--loops": ",".join(DEFAULT_LOOPS), "--modes": ",".join(MODES),
                "--timeout": "600", "--warm": "0"}
        rest = a[2:]
        for k, v in zip(rest[::2], rest[1::2]):
            if k not in opts:
                raise SystemExit("unknown option %s (%s)" % (k, ", ".join(opts)))
            opts[k] = v
        return all_runs(a[1], int(opts["--steps"]), [int(b) for b in opts["--batches"].split(",")],
                        opts["--loops"].split(","), opts["--modes"].split(","), int(opts["--timeout"]),
                        opts["--warm"] == "1")
    raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
