#!/usr/bin/env bash
# GPU run 2 of stop 57 (issue 43), with carry/bundle.tar.xz from
# scripts/gpu/bundle.sh: GPT-2's KV-cache loop (192 steps, batch 1)
# profiled (HOSTJIT_PROFILE=1: where the programs' host
# time goes) with the backend's sizes_change hint (the default: graphs
# take updates at launch from their first build); then hostjit and
# torch.compile with Inductor's coordinate_descent_tuning, under which
# Inductor decomposes a matmul with one row (the decode step's attention
# products and, at batch 1, its linear layers) into a Triton reduction:
# no library call left to capture anew per step.
. scripts/gpu/bundle_env.sh
mkdir -p $OUT/r/kv
{ date -u; nvidia-smi -L; cat $B/commit; } > $OUT/r/info.txt 2>&1
C=/tmp/c57; mkdir -p $C
export TORCHINDUCTOR_CACHE_DIR=$C/inductor TRITON_CACHE_DIR=$C/triton HOSTJIT_CACHE_DIR=$C/hostjit
SECONDS=0
run() {  # name, modes, then environment assignments
  local name=$1 modes=$2; shift 2
  env "$@" timeout 200 python3 bench/decode_gpt2.py all /tmp/kv_$name --steps 192 --batches 1 --loops kv --modes $modes --timeout 190 --warm 1 > $OUT/r/kv/$name.out 2>&1
  echo "kv $name rc=$? ${SECONDS}s"
  cp /tmp/kv_$name/*.json /tmp/kv_$name/*.log $OUT/r/kv/ 2>/dev/null
  for f in /tmp/kv_$name/*.json; do mv $OUT/r/kv/$(basename $f) $OUT/r/kv/${name}_$(basename $f); done
  for f in /tmp/kv_$name/*.log; do mv $OUT/r/kv/$(basename $f) $OUT/r/kv/${name}_$(basename $f); done
  python3 bench/decode_gpt2.py table /tmp/kv_$name | tail -n +3
}
run prof_hint hostjit HOSTJIT_PROFILE=1
run cdt hostjit,inductor DECODE_INDUCTOR=coordinate_descent_tuning=True
python3 - $OUT/r/kv <<'PY'
import glob, json, statistics, sys
for f in sorted(glob.glob(sys.argv[1] + "/*_kv_*_b1.json")):
    d = json.load(open(f))
    n = d["steps"]
    h, e = d["host_us"][n // 2:], d["e2e_us"][n // 2:]
    print(f.split("/")[-1], "host", round(statistics.median(h)), "e2e", round(statistics.median(e)),
          "programs", round(statistics.median(d["program_us"][n // 2:])) if "program_us" in d else "-",
          "builds by step", [i for i in range(1, n) if d["records_by_step"][i] != d["records_by_step"][i - 1]][:8],
          "matmuls", [g.get("matmuls") for g in d.get("graphs", [])], "first token s", round(d["first_token_s"], 1))
    for rows in d.get("profile", []):
        for r in sorted(rows, key=lambda r: -r["host_us_total"])[:12]:
            print("   %-12s %-24s calls %6d host us/step %8.1f median %7.2f dev us/step %8.1f" % (
                r["kind"], r["name"][:24], r["calls"], r["host_us_total"] / n, r["host_us_median"], r["device_us_total"] / n))
PY
cd $OUT && tar czf r.tgz r && rm -rf r
