#!/usr/bin/env python3
"""plot_shapes.py SHAPES.json OUT.png [LABEL [EARLIER.json EARLIER_LABEL]] - plots
BM_ShapeCycle of bench/bench_graph.cpp.

Host microseconds per call of the K = 16 program against the number of
distinct shapes its calls cycle through (D, log scale): graph mode with the
default cache (LABEL names it), the eager JIT call, and optionally graph mode
from an earlier run. Also prints every BM_ShapeCycle row of SHAPES.json as
the table bench/RESULTS.md quotes. Needs matplotlib (Debian:
python3-matplotlib).
"""
import json
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def rows(path):
    out = []
    for b in json.load(open(path))["benchmarks"]:
        m = re.match(r"BM_ShapeCycle/K:(\d+)/D:(\d+)/growing:(\d)/rows:(\d+)/cache:(\d+)", b["name"])
        if m:
            k, d, growing, per, cache = map(int, m.groups())
            out.append(dict(K=k, D=d, growing=growing, rows=per, cache=cache, graph=b["graph_us"], jit=b["jit_us"],
                            builds=b["graph_builds"], reuses=b["graph_reuses"], replans=b["graph_replans"],
                            plan=b["graph_bytes"], peak=b["peak_bytes"]))
    return out


def main():
    data = rows(sys.argv[1])
    print("| K | D | order | grid grows every | cache | graph µs | eager µs | eager / graph | builds | plan bytes |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in data:
        print(f"| {r['K']} | {r['D']} | {'growing' if r['growing'] else 'scattered'} | {r['rows']} row(s) | "
              f"{r['cache'] or 'default'} | {r['graph']:.1f} | {r['jit']:.1f} | {r['jit'] / r['graph']:.2f} | "
              f"{r['builds']:.0f} | {r['plan']:.0f} |")
    def cycle(rs):
        return sorted((r for r in rs if r["K"] == 16 and not r["growing"] and r["rows"] == 1 and not r["cache"]),
                      key=lambda r: r["D"])

    base = cycle(data)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot([r["D"] for r in base], [r["jit"] for r in base], "o-", label="eager JIT call")
    ax.plot([r["D"] for r in base], [r["graph"] for r in base], "s-",
            label=sys.argv[3] if len(sys.argv) > 3 else "graph mode")
    if len(sys.argv) > 5:
        earlier = cycle(rows(sys.argv[4]))
        ax.plot([r["D"] for r in earlier], [r["graph"] for r in earlier], "^--", label=sys.argv[5])
    ax.set_xscale("log")
    ax.set_xlabel("distinct input shapes the calls cycle through, in turn")
    ax.set_ylabel("host µs per call (median)")
    ax.set_ylim(bottom=0)
    ax.set_title("K = 16 launches, x = [n, 256], NVIDIA H200")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=120)


if __name__ == "__main__":
    main()
