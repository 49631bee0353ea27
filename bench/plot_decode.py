#!/usr/bin/env python3
"""plot_decode.py OUT.png RUN.json [RUN.json ...] - draws bench/decode_gpt2.py's runs.

One panel per loop and batch: end-to-end us per step (solid) and host us
per step (dotted) against the step, per mode, on a log scale, each curve
smoothed over 8 steps. Needs matplotlib (Debian: python3-matplotlib).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"hostjit": "#1b7837", "hostjit_eager": "#7fbf7b", "inductor": "#af8dc3", "reduce_overhead": "#762a83",
          "reduce_overhead_dynamic": "#e08214", "eager": "#999999"}


def smooth(v, n=8):
    return [sum(v[max(0, i - n + 1):i + 1]) / len(v[max(0, i - n + 1):i + 1]) for i in range(len(v))]


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    runs = [json.load(open(p)) for p in sys.argv[2:]]
    panels = sorted({(r["loop"], r["batch"]) for r in runs})
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.5), squeeze=False)
    for ax, (loop, batch) in zip(axes[0], panels):
        for r in runs:
            if (r["loop"], r["batch"]) != (loop, batch):
                continue
            c = COLORS.get(r["mode"], "black")
            steps = range(1, len(r["e2e_us"]))  # step 0 is the compile
            ax.plot(steps, smooth(r["e2e_us"][1:]), color=c, label=r["mode"] + " end to end")
            ax.plot(steps, smooth(r["host_us"][1:]), color=c, linestyle=":", label=r["mode"] + " host")
        ax.set_yscale("log")
        ax.set_xlabel("step (sequence length = step + 16)")
        ax.set_ylabel("us per step")
        ax.set_title("GPT-2 small, %s loop, batch %d" % ("KV-cache" if loop == "kv" else "whole-sequence", batch))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(sys.argv[1], dpi=110)


if __name__ == "__main__":
    main()
