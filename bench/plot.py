#!/usr/bin/env python3
"""plot.py BENCH.json OUT.png - plots hostjit_bench's K-launch benchmarks.

Left: time until compile() returns a callable program against the number of
launches K, for each mode (O0, light, O2 cold; tiered; from the cache), with
the 30 µs-per-launch line. Right: host time of one call against K, native O2
code and evaluator. Medians when the JSON holds repetitions' aggregates.
Needs matplotlib (Debian: python3-matplotlib).
"""
import collections
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MODES = ["O0", "light", "O2", "tiered", "cached"]


def series(benchmarks, prefix, label_of):
    """{label: {K: time}} from the median aggregates (or the plain runs)."""
    medians = [b for b in benchmarks if b.get("aggregate_name") == "median"]
    rows = medians or [b for b in benchmarks if b.get("run_type") == "iteration"]
    out = collections.defaultdict(dict)
    for b in rows:
        if not b["name"].startswith(prefix):
            continue
        args = dict(part.split(":") for part in b["run_name"].split("/")[1:] if ":" in part)
        unit = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[b["time_unit"]]
        out[label_of(args)][int(args["launches"])] = b["real_time"] * unit
    return out


def main():
    src, dst = sys.argv[1], sys.argv[2]
    benchmarks = json.load(open(src))["benchmarks"]
    compile_ms = series(benchmarks, "BM_CompileLaunches", lambda a: MODES[int(a["mode"])])
    call_ms = series(benchmarks, "BM_CallLaunches", lambda a: "evaluator" if a["eval"] == "1" else "native O2")
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    for mode in MODES:
        if mode in compile_ms:
            ks = sorted(compile_ms[mode])
            left.plot(ks, [compile_ms[mode][k] for k in ks], marker="o", label=mode)
    ks = sorted({k for s in compile_ms.values() for k in s})
    if ks:
        left.plot(ks, [0.03 * k for k in ks], linestyle="--", color="gray", label="30 µs per launch")
    left.set(xscale="log", yscale="log", xlabel="launches K", ylabel="ms until callable",
             title="compile (host backend, 2 cores)")
    left.grid(True, which="both", alpha=0.3)
    left.legend()
    for label, s in sorted(call_ms.items()):
        ks = sorted(s)
        right.plot(ks, [s[k] * 1e3 for k in ks], marker="o", label=label)
    right.set(xscale="log", yscale="log", xlabel="launches K", ylabel="µs per call",
              title="call (host backend, empty kernel)")
    right.grid(True, which="both", alpha=0.3)
    right.legend()
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main()
