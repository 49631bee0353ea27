#!/usr/bin/env python3
"""trace_png.py TRACE.json OUT.png [--call N] [--title TEXT] - draws a trace
written by hj_trace_write (hostjit run --trace) as a timeline picture: the
host's runtime calls on one row, program calls above them, each stream's
device work on its own row, colours by kind, live memory as a line below.

--call N picks the N-th program call (0-based; default the last) and draws
the time from its start to the end of the device work it queued, so one
call of a long run fills the picture. Needs matplotlib.
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

COLOURS = {
    "launch": "#4c72b0", "matmul": "#dd8452", "custom_call": "#937860", "collective": "#8172b3",
    "alloc": "#55a868", "free": "#8c8c8c", "event": "#da8bc3", "stream": "#ccb974", "sync": "#c44e52",
    "graph_build": "#64b5cd", "graph_update": "#a1c9f4", "graph_launch": "#1f3b73", "call": "#e5e5e5",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("out")
    ap.add_argument("--call", type=int, default=-1)
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    events = json.load(open(a.trace))["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    calls = sorted((e for e in slices if e["cat"] == "call" and e["pid"] == 1), key=lambda e: e["ts"])
    if calls:
        c = calls[a.call]
        t0, t1 = c["ts"], c["ts"] + c["dur"]
        # The device work the call queued may end after it returns.
        inside = [e for e in slices if e["pid"] == 1 and t0 <= e["ts"] <= t1]
        queued = {(e["name"], e["args"].get("site", "")) for e in inside}
        for e in slices:
            if e["pid"] == 2 and e["ts"] >= t0 and (e["name"], e["args"].get("site", "")) in queued:
                t1 = max(t1, e["ts"] + e["dur"])
    else:
        t0 = min(e["ts"] for e in slices)
        t1 = max(e["ts"] + e["dur"] for e in slices)
    shown = [e for e in slices if e["ts"] + e["dur"] >= t0 and e["ts"] <= t1]
    streams = sorted({e["tid"] for e in shown if e["pid"] == 2})
    rows = ["program calls", "runtime calls"] + ["device: stream %d" % (s - 1) for s in streams]
    fig, (ax, mem) = plt.subplots(2, 1, figsize=(13, 1.2 + 0.55 * len(rows) + 1.4), sharex=True,
                                  gridspec_kw={"height_ratios": [len(rows), 1.6]})
    for e in shown:
        if e["pid"] == 1:
            y = 0 if e["cat"] == "call" else 1
        else:
            y = 2 + streams.index(e["tid"])
        x = max(e["ts"], t0) - t0
        w = max(min(e["ts"] + e["dur"], t1) - max(e["ts"], t0), (t1 - t0) * 4e-4)
        ax.barh(y, w, left=x, height=0.7, color=COLOURS.get(e["cat"], "#999999"), edgecolor="none")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(rows)
    ax.invert_yaxis()
    kinds = sorted({e["cat"] for e in shown})
    ax.legend(handles=[Patch(color=COLOURS.get(k, "#999999"), label=k) for k in kinds], ncol=min(len(kinds), 7),
              loc="upper center", bbox_to_anchor=(0.5, 1.0 + 0.9 / len(rows)), frameon=False, fontsize=8)
    counters = sorted((e for e in events if e["ph"] == "C" and e["name"] == "memory"), key=lambda e: e["ts"])
    xs = [e["ts"] - t0 for e in counters if t0 <= e["ts"] <= t1]
    ys = [e["args"]["live_bytes"] / 2**20 for e in counters if t0 <= e["ts"] <= t1]
    if xs:
        mem.step(xs, ys, where="post", color="#55a868")
    mem.set_ylabel("live MiB")
    mem.set_xlabel("µs from the start of the call" if calls else "µs")
    mem.set_xlim(0, t1 - t0)
    title = a.title or "hostjit trace (%s)" % a.trace
    fig.suptitle(title, y=0.995, fontsize=10)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)
    print("%s: %d slices from %.1f to %.1f us" % (a.out, len(shown), t0, t1))


if __name__ == "__main__":
    sys.exit(main())
