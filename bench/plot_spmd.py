"""plot_spmd.py - all-reduce bus bandwidth on two GPUs, through a hostjit
program and with NCCL called directly, from hostjit_spmd_bench's JSON.

    /usr/bin/python3 bench/plot_spmd.py bench/results/spmd_run3.json bench/results/spmd_allreduce.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def series(bench, prefix, mode=None):
    """(bytes, GB/s) medians of one benchmark; mode "0"/"1" picks eager or
    graph mode where the name carries it (BM_AllReduceHostjit/<bytes>/<mode>)."""
    points = []
    for b in bench["benchmarks"]:
        if b.get("aggregate_name") != "median" or not b["name"].startswith(prefix + "/"):
            continue
        parts = b["name"].split("/")
        if mode is not None and parts[2] != mode:
            continue
        points.append((int(parts[1]), b["busbw_GBps"]))
    return sorted(points)


def main():
    data = json.load(open(sys.argv[1]))
    fig, ax = plt.subplots(figsize=(6, 4))
    graph_run = any(b["name"].startswith("BM_AllReduceHostjit/") and b["name"].split("/")[2] == "1"
                    for b in data["benchmarks"])
    lines = [("BM_AllReduceHostjit", "0" if graph_run else None, "hostjit program, eager call"),
             ("BM_AllReduceNccl", None, "ncclAllReduce called directly")]
    if graph_run:
        lines.insert(1, ("BM_AllReduceHostjit", "1", "hostjit program, graph mode (captured NCCL node)"))
    for prefix, mode, label in lines:
        pts = series(data, prefix, mode)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("bytes per rank")
    ax.set_ylabel("bus bandwidth, GB/s (median of 3)")
    ax.set_title("All-reduce (sum, f32) on 2 H200s, NVLink")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=120)


if __name__ == "__main__":
    main()
