#!/usr/bin/env python3
"""torch_graph.py - PyTorch running the graph benchmark's program (bench/programs.cpp,
launchProgram): K steps, each an intermediate from PyTorch's caching allocator and
one small kernel, every fourth step also a zeroed semaphore (torch.zeros), as
eager calls and as a replayed CUDA graph. A comparison for bench/bench_graph.cpp,
never a dependency. Prints JSON: host microseconds to issue one call, median of
`--reps` batches of 64 calls (the stream is synchronised outside the timing).

usage: python3 bench/torch_graph.py [--reps 30] > torch.json
"""
import argparse
import json
import statistics
import time

import torch

BATCH = 64


def program(x, k, total):
    blocks = (total + 255) // 256
    y = torch.empty_like(x)
    for i in range(k):
        w = torch.empty(blocks, device=x.device)
        if i % 4 == 0:
            s = torch.zeros(blocks, dtype=torch.int32, device=x.device)
            torch.add(s, 0, out=s)  # the semaphore step's kernel
        w.copy_(x.view(-1)[:blocks])  # one small kernel per step
    return y


def timed(fn, reps):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    per_call = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(BATCH):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        per_call.append((t1 - t0) / BATCH * 1e6)
    return statistics.median(per_call)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    x = torch.rand(64, 256, device="cuda") + 0.25
    total = x.numel()
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "results": []}
    for k in (1, 4, 16, 64):
        eager = timed(lambda: program(x, k, total), args.reps)
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            program(x, k, total)  # warm the allocator outside the capture
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            program(x, k, total)
        replay = timed(g.replay, args.reps)
        out["results"].append({"K": k, "eager_us": eager, "graph_replay_us": replay})
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
