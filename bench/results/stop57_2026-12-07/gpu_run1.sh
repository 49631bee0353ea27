#!/usr/bin/env bash
# GPU run 1 of stop 57 (issue 42): the GPU suite at HEAD
# (scripts/gpu/verify.sh with carry/bundle.tar.xz from
# scripts/gpu/bundle.sh), then the before/after of BM_ShapeCycle and
# BM_ManyInputs (hostjit_graph_bench) and the GPT-2 replay against bare
# cuGraphLaunch (BM_Gpt2GraphAnchor, hostjit_matmul_bench), before
# (33be246, stop 55's main) and after (this stop's HEAD), from
# carry/bench.tar.xz (stripped binaries built here). Three rounds, each
# side's order alternating; medians of 3 repetitions (5 for the anchor).
OUT=$OUT/r scripts/gpu/verify.sh
export NCCL_NVLS_ENABLE=0 HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache LD_LIBRARY_PATH=$PWD/carry
B=/tmp/b57
rm -rf $B /tmp/hjcache
mkdir -p $B $OUT/r && xz -dc carry/bench.tar.xz | tar xf - -C $B
{ date -u; nvidia-smi -L; cat $B/commits; } > $OUT/r/info.txt 2>&1; cat $OUT/r/info.txt
SECONDS=0
for round in 1 2 3; do
  for v in before after; do
    [ $((round % 2)) = 0 ] && v=$([ $v = before ] && echo after || echo before)
    timeout 100 $B/$v/hostjit_graph_bench '--benchmark_filter=BM_ShapeCycle/|BM_ManyInputs/' --benchmark_repetitions=3 \
      --benchmark_min_time=0.1 --benchmark_report_aggregates_only=true --benchmark_format=json > $OUT/r/graph_${v}_$round.json 2> $OUT/r/graph_${v}_$round.err
    echo "graph $v round $round rc=$? ${SECONDS}s"
    timeout 40 $B/$v/hostjit_matmul_bench --benchmark_filter=BM_Gpt2GraphAnchor --benchmark_repetitions=5 --benchmark_report_aggregates_only=true > $OUT/r/anchor_${v}_$round.txt 2>&1
    echo "anchor $v round $round rc=$? ${SECONDS}s $(grep median $OUT/r/anchor_${v}_$round.txt | grep -o 'cuGraphLaunch_us=[0-9.]*\|graph_us=[0-9.]*' | tr '\n' ' ')"
  done
done
python3 - $OUT/r <<'PY'
import glob, json, statistics, sys
d = sys.argv[1]
med = {}
for f in glob.glob(d + "/graph_*_*.json"):
    v, rnd = f.split("/")[-1][6:-5].split("_")
    try:
        js = json.load(open(f))
    except Exception as e:
        print("unreadable", f, e); continue
    for b in js["benchmarks"]:
        if b.get("aggregate_name") == "median":
            med.setdefault(b["run_name"], {}).setdefault(v, []).append(b.get("graph_us", b["real_time"]))
print("benchmark | graph_us before (rounds) | after (rounds) | after/before of the medians")
for name, sides in sorted(med.items()):
    b, a = sides.get("before", []), sides.get("after", [])
    if b and a:
        print("%s | %s | %s | %.2f" % (name, " ".join("%.2f" % x for x in b), " ".join("%.2f" % x for x in a),
                                      statistics.median(a) / statistics.median(b)))
PY
cd $OUT && tar czf r.tgz r && rm -rf r
