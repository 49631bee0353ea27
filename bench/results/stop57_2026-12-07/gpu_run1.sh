#!/usr/bin/env bash
# GPU run 1 of stop 57: the GPU suite at HEAD (issue 42's verification,
# carry/bundle.tar.xz from scripts/gpu/bundle.sh), then GPT-2's KV-cache
# loop (issue 43) profiled (HOSTJIT_PROFILE=1: where the programs' host
# time goes) with the backend's sizes_change hint (the default: graphs
# take updates at launch from their first build) and without it, and
# timed unprofiled the same two ways.
OUT=$OUT/r scripts/gpu/verify.sh
. scripts/gpu/bundle_env.sh
mkdir -p $OUT/r/kv
C=/tmp/c57; mkdir -p $C
export TORCHINDUCTOR_CACHE_DIR=$C/inductor TRITON_CACHE_DIR=$C/triton HOSTJIT_CACHE_DIR=$C/hostjit
SECONDS=0
run() {  # name, then environment assignments
  local name=$1; shift
  env "$@" timeout 150 python3 bench/decode_gpt2.py all /tmp/kv_$name --steps 192 --batches 1 --loops kv --modes hostjit --timeout 140 --warm 1 > $OUT/r/kv/$name.out 2>&1
  echo "kv $name rc=$? ${SECONDS}s"
  cp /tmp/kv_$name/*.json /tmp/kv_$name/*.log $OUT/r/kv/ 2>/dev/null
  for f in /tmp/kv_$name/*.json; do mv $OUT/r/kv/$(basename $f) $OUT/r/kv/${name}_$(basename $f); done
  for f in /tmp/kv_$name/*.log; do mv $OUT/r/kv/$(basename $f) $OUT/r/kv/${name}_$(basename $f); done
  python3 bench/decode_gpt2.py table /tmp/kv_$name | tail -1
}
run prof_hint HOSTJIT_PROFILE=1
run prof_nohint HOSTJIT_PROFILE=1 DECODE_HOSTJIT=sizes_change=False
run hint DECODE_HOSTJIT=
run nohint DECODE_HOSTJIT=sizes_change=False
python3 - $OUT/r/kv <<'PY'
import glob, json, statistics, sys
for f in sorted(glob.glob(sys.argv[1] + "/*_kv_hostjit_b1.json")):
    d = json.load(open(f))
    h = d["host_us"][len(d["host_us"]) // 2:]
    print(f.split("/")[-1], "host median", round(statistics.median(h)), "programs", round(statistics.median(d["program_us"][len(h):])),
          "builds by step", [i for i in range(1, len(d["records_by_step"])) if d["records_by_step"][i] != d["records_by_step"][i - 1]][:8])
    n = d["steps"]
    for rows in d.get("profile", []):
        for r in sorted(rows, key=lambda r: -r["host_us_total"])[:12]:
            print("   %-12s %-24s calls %6d host us/step %8.1f median %7.2f dev us/step %8.1f" % (
                r["kind"], r["name"][:24], r["calls"], r["host_us_total"] / n, r["host_us_median"], r["device_us_total"] / n))
PY
cd $OUT && tar czf r.tgz r && rm -rf r
