#!/usr/bin/env python3
"""torch_graph.py - PyTorch running the graph benchmark's program (bench/programs.cpp,
launchProgram): K steps, each an intermediate from PyTorch's caching allocator and
one small kernel, every fourth step also a zeroed semaphore (torch.zeros), as
eager calls and as a replayed CUDA graph. A comparison for bench/bench_graph.cpp,
never a dependency. Prints JSON: host microseconds to issue one call, median of
`--reps` batches of 64 calls (the stream is synchronised outside the timing).
`decode` is BM_ShapeCycle's growing loop (x is [n, 256], n = 1, 2, ..., 1000,
then again): eager calls, and the padded scheme CUDA-graph users take, one graph
captured at n = 1000 and replayed for every n after copying x into its static
input; with the memory the graph's pool holds.

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
    out["decode"] = [decode(k, args.reps) for k in (16, 64)]
    print(json.dumps(out, indent=2))


def decode(k, reps, longest=1000):
    xs = torch.rand(longest, 256, device="cuda") + 0.25
    step = [0]

    def next_n():
        step[0] = step[0] % longest + 1
        return step[0]

    def eager():
        n = next_n()
        program(xs[:n], k, n * 256)

    eager_us = timed(eager, reps)
    static_x = torch.zeros(longest, 256, device="cuda")
    torch.cuda.synchronize()
    before = torch.cuda.memory_reserved()
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        program(static_x, k, longest * 256)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        program(static_x, k, longest * 256)
    torch.cuda.synchronize()
    pool_bytes = torch.cuda.memory_reserved() - before

    def padded():
        n = next_n()
        static_x[:n].copy_(xs[:n])
        g.replay()

    step[0] = 0
    padded_us = timed(padded, reps)
    return {"K": k, "eager_us": eager_us, "padded_graph_us": padded_us, "graph_pool_bytes": pool_bytes}


if __name__ == "__main__":
    main()
