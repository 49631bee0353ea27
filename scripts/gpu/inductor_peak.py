#!/usr/bin/env python3
"""inductor_peak.py HOSTJIT DESC.inductor.json[=N] ... - the device bytes one
call of each recorded program holds at its peak (hostjit's peak_bytes:
its own buffers, outputs included, inputs not), one call in eval mode on
CUDA on random inputs of the recorded shapes; =N gives every size symbol
and size scalar the value N (a dynamic program's recorded size).

`hostjit run --repeat N` keeps a call's outputs until the next call has
made its own, so its peak_bytes counts two calls' outputs: this is the one
call Inductor's max_memory_allocated is compared with. Prints "PEAK {...}"
per program."""
import json
import os
import subprocess
import sys


def main():
    hostjit = sys.argv[1]
    for arg in sys.argv[2:]:
        path, _, n = arg.partition("=")
        desc = json.load(open(path))
        cmd = [hostjit, "run", path, "--backend", "cuda", "--mode", "eval", "--stats", "json"]
        for i in desc["inputs"]:
            if "sizes" not in i:
                cmd += ["--scalar", "%s=%s" % (i["name"], n)]
            else:
                dims = [str(d) if isinstance(d, int) else n for d in i["sizes"]]
                cmd += ["--input", "%s=%s[%s]" % (i["name"], i["dtype"], ",".join(dims))]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, NCCL_NVLS_ENABLE="0"))
        res = {"program": desc["name"]}
        if r.returncode != 0 or "\n{" not in r.stdout:
            res["error"] = (r.stdout + r.stderr).strip().splitlines()[-1][:300] if (r.stdout + r.stderr).strip() else "rc %d" % r.returncode
        else:
            stats = json.loads(r.stdout[r.stdout.index("\n{") + 1:])["eval"]
            res.update(peak_bytes=stats["peak_bytes"], allocs=stats["allocs"], launches=stats["launches"],
                       library_calls=stats["library_calls"])
        print("PEAK " + json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
