#!/usr/bin/env python3
"""profile_step.py MODE OUTDIR - where one KV-cache decode step's host time
goes: GPT-2 small at batch 1 (decode_gpt2.py's model and tokens), 96 steps
to warm up, then 128 steps (STEPS) timed plainly (host us per step, median), 128
under cProfile (the top functions by own time and by cumulative time) and
64 under torch.profiler (CPU ops and CUDA runtime/driver calls by total
time). MODE is hostjit or inductor. With PERF_OUT set, `perf record`
samples the process (flat, no call graph) over the plainly timed steps
into that file; with PLAIN=1 the cProfile and torch.profiler parts are
skipped."""
import cProfile
import json
import os
import pstats
import signal
import statistics
import subprocess
import sys
import time

import torch

mode, outdir = sys.argv[1], sys.argv[2]
os.makedirs(outdir, exist_ok=True)
torch.backends.cuda.matmul.allow_tf32 = False
from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402

torch.manual_seed(0)
cfg = GPT2Config(attn_implementation="eager")
model = GPT2LMHeadModel(cfg).cuda().eval()
g = torch.Generator(device="cuda").manual_seed(1)
timed = int(os.environ.get("STEPS", "128"))  # the plainly timed steps
steps = 96 + timed + 128 + 64
tokens = torch.randint(0, cfg.vocab_size, (1, 16 + steps + 1), device="cuda", generator=g)
hd = None
if mode == "hostjit":
    import hostjit.dynamo as hd
    fwd = torch.compile(model, backend="hostjit")
else:
    fwd = torch.compile(model)

with torch.no_grad():
    o = fwd(input_ids=tokens[:, :16], use_cache=True)
    past = o.past_key_values
    i = 0

    def step():
        global past, i
        o = fwd(input_ids=tokens[:, 16 + i:17 + i], past_key_values=past, use_cache=True)
        past = o.past_key_values
        i += 1
        return o

    for _ in range(96):
        step()
    torch.cuda.synchronize()
    host, inside, around = [], [], []
    perf = None
    if os.environ.get("PERF_OUT"):
        perf = subprocess.Popen(["perf", "record", "-F", "4999", "-p", str(os.getpid()), "-o", os.environ["PERF_OUT"]])
        time.sleep(1.0)
    for _ in range(timed):
        was = (sum(x["program_us"] for x in hd.graphs()), sum(x["python_us"] for x in hd.graphs())) if hd else (0, 0)
        t0 = time.perf_counter()
        step()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        now = (sum(x["program_us"] for x in hd.graphs()), sum(x["python_us"] for x in hd.graphs())) if hd else (0, 0)
        host.append((t1 - t0) * 1e6)
        inside.append(now[0] - was[0])
        around.append(now[1] - was[1])
    if perf:
        perf.send_signal(signal.SIGINT)
        perf.wait()
    res = {"mode": mode, "host_us": statistics.median(host), "program_us": statistics.median(inside),
           "backend_python_us": statistics.median(around)}
    if hd:
        res["stats"] = [rt.stats() for rt in hd.runtimes()]
    print(json.dumps({k: v for k, v in res.items() if k != "stats"}))
    with open(os.path.join(outdir, mode + "_times.json"), "w") as f:
        json.dump(res, f)
    if os.environ.get("PLAIN") == "1":
        sys.exit(0)
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(128):
        step()
        torch.cuda.synchronize()
    pr.disable()
    with open(os.path.join(outdir, mode + "_cprofile.txt"), "w") as f:
        st = pstats.Stats(pr, stream=f)
        st.sort_stats("tottime").print_stats(45)
        st.sort_stats("cumulative").print_stats(60)
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(64):
            step()
            torch.cuda.synchronize()
    with open(os.path.join(outdir, mode + "_torchprof.txt"), "w") as f:
        f.write(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=50))
