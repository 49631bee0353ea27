"""plot_spmd.py - all-reduce bus bandwidth on two GPUs, through a hostjit
program and with NCCL called directly, from hostjit_spmd_bench's JSON.

    /usr/bin/python3 bench/plot_spmd.py bench/results/spmd_run1.json bench/results/spmd_allreduce.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def series(bench, prefix):
    points = []
    for b in bench["benchmarks"]:
        if b.get("aggregate_name") != "median" or not b["name"].startswith(prefix + "/"):
            continue
        size = int(b["name"].split("/")[1])
        points.append((size, b["busbw_GBps"]))
    return sorted(points)


def main():
    data = json.load(open(sys.argv[1]))
    fig, ax = plt.subplots(figsize=(6, 4))
    for prefix, label in (("BM_AllReduceHostjit", "hostjit program (all_reduce statement)"),
                          ("BM_AllReduceNccl", "ncclAllReduce called directly")):
        pts = series(data, prefix)
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
