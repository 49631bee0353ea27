#!/usr/bin/env python3
"""resolve.py SAMPLES SO [SO...] - sampler.c's samples as a flat profile:
the share of samples per function (self: the interrupted address) and per
function anywhere on the stack (total), for the given shared objects
(resolved with nm; their build ids must match the run's), other objects
by name."""
import bisect
import collections
import os
import subprocess
import sys


def symbols(path):
    out = subprocess.run(["nm", "-C", "--defined-only", "-S", path], capture_output=True, text=True).stdout
    syms = []
    for line in out.splitlines():
        p = line.split(None, 3)
        if len(p) == 4 and p[2] in "tTwW":
            syms.append((int(p[0], 16), int(p[1], 16), p[3]))
    syms.sort()
    # text segment: virtual address minus file offset
    ph = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
    delta = 0
    for line in ph.splitlines():
        f = line.split()
        if f and f[0] == "LOAD" and "E" in f[6:-1]:
            delta = int(f[2], 16) - int(f[1], 16)
    return syms, delta


def main():
    samples, sos = sys.argv[1], sys.argv[2:]
    stacks, maps = [], []
    with open(samples) as f:
        part = 0
        for line in f:
            if line.startswith("--maps"):
                part = 1
                continue
            if part == 0:
                stacks.append([int(x, 16) for x in line.split()])
            else:
                p = line.split()
                if len(p) >= 6 and "x" in p[1]:
                    a, b = (int(x, 16) for x in p[0].split("-"))
                    maps.append((a, b, int(p[2], 16), p[5]))
    maps.sort()
    starts = [m[0] for m in maps]
    tables = {}
    for so in sos:
        tables[os.path.basename(so)] = symbols(so)

    def name(pc):
        i = bisect.bisect_right(starts, pc) - 1
        if i < 0 or pc >= maps[i][1]:
            return "?"
        a, b, off, path = maps[i]
        base = os.path.basename(path)
        t = tables.get(base)
        if not t:
            return base
        syms, delta = t
        v = pc - a + off + delta
        j = bisect.bisect_right(syms, (v, 1 << 62, "")) - 1
        if j >= 0 and v < syms[j][0] + max(syms[j][1], 1):
            return syms[j][2][:150]
        return base + "+?"
    self_c, total_c = collections.Counter(), collections.Counter()
    for s in stacks:
        names = [name(pc) for pc in s]
        self_c[names[0]] += 1
        for nm in set(names):
            total_c[nm] += 1
    n = len(stacks)
    print("%d samples" % n)
    print("\n== self")
    for k, v in self_c.most_common(70):
        print("%5.1f%%  %s" % (100.0 * v / n, k))
    print("\n== total (on the stack)")
    for k, v in total_c.most_common(90):
        print("%5.1f%%  %s" % (100.0 * v / n, k))


main()
