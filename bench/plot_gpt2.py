#!/usr/bin/env python3
"""plot_gpt2.py RESULT.json [RESULT.json ...] OUT.png - draws bench/gpt2_bench.py's results.

One column per batch x context: host us per forward (log scale), end-to-end
ms per forward and peak device memory (MiB, weights included) of each
variant, hostjit's and PyTorch's. Several result files (runs) draw one bar
each per variant, side by side. Needs matplotlib (Debian: python3-matplotlib).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

VARIANTS = ["hostjit graph", "hostjit eager", "torch.compile reduce-overhead", "torch.compile", "pytorch eager"]
COLORS = ["#1b7837", "#7fbf7b", "#762a83", "#af8dc3", "#999999"]


def main():
    files, out = sys.argv[1:-1], sys.argv[-1]
    runs = [json.load(open(f))["runs"] for f in files]
    shapes = []
    for r in runs:
        for row in r:
            if row["shape"] not in shapes:
                shapes.append(row["shape"])
    metrics = [("host_us", "host µs per forward", True), ("end_to_end_ms", "end-to-end ms per forward", False),
               ("peak_bytes", "peak device MiB (weights included)", False)]
    fig, axes = plt.subplots(len(metrics), len(shapes), figsize=(5.5 * len(shapes), 3.2 * len(metrics)), squeeze=False)
    width = 0.8 / max(1, len(runs))
    for col, shape in enumerate(shapes):
        for row_i, (key, title, log) in enumerate(metrics):
            ax = axes[row_i][col]
            for k, r in enumerate(runs):
                by = {row["variant"]: row for row in r if row["shape"] == shape and key in row}
                for i, v in enumerate(VARIANTS):
                    if v not in by:
                        continue
                    value = by[v][key] / 2**20 if key == "peak_bytes" else by[v][key]
                    ax.barh(i + (k - (len(runs) - 1) / 2) * width, value, height=width, color=COLORS[i])
                    ax.text(value, i + (k - (len(runs) - 1) / 2) * width, " %.3g" % value, va="center", fontsize=7)
            ax.set_yticks(range(len(VARIANTS)))
            ax.set_yticklabels(VARIANTS if col == 0 else [""] * len(VARIANTS), fontsize=8)
            ax.invert_yaxis()
            if log:
                ax.set_xscale("log")
            ax.set_title("B x T = %s: %s" % (shape.replace("x", " x "), title), fontsize=9)
            ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


if __name__ == "__main__":
    main()
