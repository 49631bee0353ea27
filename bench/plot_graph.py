#!/usr/bin/env python3
"""plot_graph.py GRAPH.json TORCH.json OUT.png - plots hostjit_graph_bench.

Host microseconds to issue one call against the number of launches K (log-log)
for every mode of bench/bench_graph.cpp (evaluator, JIT, hand-written runtime
calls, bare cuLaunchKernel, a hand-made CUDA graph, graph mode at the same and
at fresh addresses, the first call of a new signature) and, from
bench/torch_graph.py, PyTorch eager and CUDA-graph replay. Medians of the
repetitions. Also prints the table bench/RESULTS.md quotes. Needs matplotlib
(Debian: python3-matplotlib).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MODES = [
    ("BM_Call/evaluator", "evaluator"),
    ("BM_Call/jit", "JIT"),
    ("BM_Call/hand_written", "hand-written runtime calls"),
    ("BM_Driver/bare_launches", "bare cuLaunchKernel (floor)"),
    ("BM_Driver/hand_graph", "hand-made CUDA graph (anchor)"),
    ("BM_Call/graph_same_addresses", "graph mode, same addresses"),
    ("BM_Call/graph_fresh_addresses", "graph mode, fresh addresses"),
    ("BM_GraphFirstCall", "graph mode, first call of a signature"),
]


def medians(benchmarks):
    """{mode prefix: {K: microseconds per call}}."""
    out = {}
    for b in benchmarks:
        if b.get("aggregate_name") != "median":
            continue
        name = b["run_name"]
        k = int(name.split("K:")[1].split("/")[0])
        for prefix, _ in MODES:
            if name.startswith(prefix + "/"):
                # Batched modes report us_per_call; the first call is timed alone.
                us = b.get("us_per_call", b["real_time"])
                out.setdefault(prefix, {})[k] = us
    return out


def main():
    graph, torch = sys.argv[1], sys.argv[2]
    out_png = sys.argv[3]
    with open(graph) as f:
        data = json.load(f)
    with open(torch) as f:
        tdata = json.load(f)
    m = medians(data["benchmarks"])
    torch_eager = {r["K"]: r["eager_us"] for r in tdata["results"]}
    torch_graph = {r["K"]: r["graph_replay_us"] for r in tdata["results"]}
    ks = sorted(next(iter(m.values())).keys())
    header = ["K"] + [label for _, label in MODES] + ["PyTorch eager", "PyTorch graph replay"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for k in ks:
        row = [str(k)] + ["%.3g" % m[p][k] if k in m.get(p, {}) else "-" for p, _ in MODES]
        row += ["%.3g" % torch_eager.get(k, float("nan")), "%.3g" % torch_graph.get(k, float("nan"))]
        print("| " + " | ".join(row) + " |")
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for prefix, label in MODES:
        if prefix in m:
            xs = sorted(m[prefix])
            style = "-o" if prefix.startswith("BM_Call/graph") else "--" if "Driver" in prefix else "-"
            ax.plot(xs, [m[prefix][k] for k in xs], style, label=label)
    ax.plot(ks, [torch_eager[k] for k in ks], ":", label="PyTorch eager")
    ax.plot(ks, [torch_graph[k] for k in ks], ":s", label="PyTorch CUDA graph replay")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("launches per call (K)")
    ax.set_ylabel("host µs per call (median)")
    ctx = data.get("context", {})
    ax.set_title("Host cost of one call, %s, %s" % (tdata.get("device", "GPU"), ctx.get("date", "")[:10]))
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_png, dpi=120)


if __name__ == "__main__":
    main()
