"""plot_spmd.py - bus bandwidth of all-reduce, all-gather and reduce-scatter on
two GPUs, through a hostjit program (eager and graph mode) and with NCCL
called directly, from hostjit_spmd_bench's JSON (one panel per collective
the run measured). Needs matplotlib (Debian: python3-matplotlib).

    /usr/bin/python3 bench/plot_spmd.py bench/results/spmd_run4.json bench/results/spmd_allreduce.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLLECTIVES = (("AllReduce", "all-reduce (sum)"), ("AllGather", "all-gather"),
               ("ReduceScatter", "reduce-scatter (sum)"))


def series(bench, prefix, mode=None):
    """(bytes, GB/s) medians of one benchmark; mode "0"/"1" picks eager or
    graph mode where the name carries it (BM_<X>Hostjit/<bytes>/<mode>)."""
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
    measured = [c for c in COLLECTIVES if series(data, "BM_" + c[0] + "Nccl")]
    fig, axes = plt.subplots(1, len(measured), figsize=(5 * len(measured), 4), squeeze=False)
    for ax, (name, title) in zip(axes[0], measured):
        graph_run = bool(series(data, "BM_%sHostjit" % name, "1"))
        lines = [("BM_%sHostjit" % name, "0" if graph_run else None, "hostjit program, eager call"),
                 ("BM_%sNccl" % name, None, "NCCL called directly")]
        if graph_run:
            lines.insert(1, ("BM_%sHostjit" % name, "1", "hostjit program, graph mode"))
        for prefix, mode, label in lines:
            pts = series(data, prefix, mode)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("bytes (nccl-tests' size)")
        ax.set_ylabel("bus bandwidth, GB/s (median of 3)")
        ax.set_title(title + ", f32, 2 H200s")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
