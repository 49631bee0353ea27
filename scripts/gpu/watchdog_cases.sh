#!/usr/bin/env bash
# watchdog_cases.sh - the CUDA communicator watchdog's cases, each in
# processes of its own (hidden from CI: it needs GPUs and NCCL).
#
# On two GPUs: rank 1 of build/bin/hostjit_watchdog_rank hangs before a
# collective, kills itself with SIGKILL, or skips a collective, eagerly and in
# graph mode; rank 0 must then fail within the timeout plus a second, with
# exit status 1 and a message naming its rank, the collective and the rank it
# waited for. Each case runs again with rank 0 under compute-sanitizer
# memcheck (with its leak check; NCCL's expected API errors, probes of
# kernels built for other GPUs, not reported), which must find nothing. Then `hostjit run --ranks 2 --backend
# cuda`, eager and graph: rank 1 killed (SIGKILL) or stopped (SIGSTOP, a hang)
# mid-run; hostjit must exit non-zero within the timeout plus a second,
# naming rank 1. On one GPU only the case it allows runs: a join whose other
# rank never comes.
#
# usage: scripts/gpu/watchdog_cases.sh [BIN_DIR]   (default build/bin)
# env: TIMEOUT (seconds, default 5), OUT (logs, default /tmp/watchdog_cases),
#      MEMCHECK=0 (skip the memcheck runs), HOSTJIT_SOURCE_DIR (the tree).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
bin=${1:-build/bin}
timeout=${TIMEOUT:-5}
out=${OUT:-/tmp/watchdog_cases}
memcheck=${MEMCHECK:-1}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0
export HOSTJIT_SOURCE_DIR=${HOSTJIT_SOURCE_DIR:-$PWD}
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
bound=$(awk -v t="$timeout" 'BEGIN { print t + 1 }')
failures=0

verdict() {  # NAME OK(0/1) WHAT
  if [ "$2" = 1 ]; then echo "PASS $1: $3"; else echo "FAIL $1: $3"; failures=$((failures + 1)); fi
}
within() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# rank0 NAME WORLD MODE WRAP...: runs rank 0 (the survivor) and checks it.
# Expects $expect (an extended regular expression) in its line and,
# unwrapped, its wait within the bound.
rank0() {
  local name=$1 world=$2 mode=$3
  shift 3
  "$@" "$bin/hostjit_watchdog_rank" --rank 0 --world "$world" --id "$out/$name.id" --mode "$mode" \
    --timeout "$timeout" >"$out/$name.rank0.log" 2>&1
  local rc=$?
  local line waited
  line=$(grep '^rank 0:' "$out/$name.rank0.log" | tail -1)
  waited=$(sed -n 's/^rank 0: failed after \([0-9.]*\) s.*/\1/p' <<<"$line")
  [ -n "$waited" ] || waited=$(sed -n 's/.*within its timeout of.*/join/p' <<<"$line")
  local ok=1 why="exit $rc, waited ${waited:-?} s: $line"
  [ "$rc" = 1 ] || ok=0
  grep -qE -- "$expect" <<<"$line" || ok=0
  if [ $# -eq 0 ] && [ "$waited" != join ]; then within "${waited:-999}" "$bound" || ok=0; fi
  if [ $# -gt 0 ]; then
    grep -q "ERROR SUMMARY: 0 errors" "$out/$name.rank0.log" || ok=0
    why="$why; $(grep 'ERROR SUMMARY' "$out/$name.rank0.log" | tail -1)"
  fi
  verdict "$name" "$ok" "$why"
}

# pair NAME MODE ROLE [WRAP...]: rank 1 plays ROLE, rank 0 survives.
pair() {
  local name=$1 mode=$2 role=$3
  shift 3
  rm -f "$out/$name.id"
  "$bin/hostjit_watchdog_rank" --rank 1 --world 2 --id "$out/$name.id" --mode "$mode" --role "$role" \
    --timeout "$timeout" >"$out/$name.rank1.log" 2>&1 &
  local p1=$!
  # The watchdog's timeout, or NCCL's own error about the lost peer (a
  # network transport may see the socket close; NVLink and SHM do not).
  expect="did not complete within the communicator's timeout of $timeout s|rank 0: .* failed \\(work [0-9]+ of the communicator"
  rank0 "$name" 2 "$mode" "$@"
  grep -qF "the ranks it waits for: 1)" "$out/$name.rank0.log" || verdict "$name" 0 "rank 1 not named"
  kill -9 "$p1" 2>/dev/null
  wait "$p1" 2>/dev/null
}

# cli NAME MODE SIGNAL: `hostjit run --ranks 2`, rank 1 sent SIGNAL mid-run.
cli() {
  local name=$1 mode=$2 sig=$3 graph=""
  [ "$mode" = graph ] && graph=--graph
  HOSTJIT_COMM_TIMEOUT=$timeout "$bin/hostjit" run test/gpu/programs/watchdog.hir --backend cuda --ranks 2 \
    --scalar n=4096 --scalar hold_ns=1000000 --repeat 20000 --no-tier $graph >"$out/$name.log" 2>&1 &
  local parent=$! r1="" c
  for _ in $(seq 100); do
    for c in $(pgrep -P "$parent"); do
      tr '\0' '\n' <"/proc/$c/environ" 2>/dev/null | grep -qx HOSTJIT_RANK=1 && r1=$c
    done
    [ -n "$r1" ] && break
    sleep 0.1
  done
  sleep 5  # joined, compiled, calling
  local t0 rc took ok=1
  t0=$(now)
  kill "-$sig" "$r1"
  wait "$parent"
  rc=$?
  took=$(elapsed "$t0")
  [ "$rc" != 0 ] || ok=0
  within "$took" "$bound" || ok=0
  if [ "$sig" = KILL ]; then
    grep -q "rank 1 was lost: killed by signal 9" "$out/$name.log" || ok=0
  else
    grep -q "did not complete within the communicator's timeout" "$out/$name.log" || ok=0
    grep -q "stopped rank 1, which had not finished" "$out/$name.log" || ok=0
  fi
  kill -9 "$r1" 2>/dev/null
  verdict "$name" "$ok" "exit $rc after ${took} s: $(grep -h 'hostjit: error\|did not complete' "$out/$name.log" | head -3 | tr '\n' '|')"
}

echo "watchdog cases: $gpus GPU(s), timeout $timeout s, bound $bound s, logs in $out"
# The case one GPU allows: rank 0 of 2 joins alone.
expect="joining a communicator of 2 ranks did not complete within its timeout of $timeout s"  # an ERE
rm -f "$out/join.id"
rank0 join 2 eager
if [ "$memcheck" = 1 ]; then
  rm -f "$out/join_memcheck.id"
  # No leak check here: NCCL keeps what it allocated for a join aborted
  # before it formed (4 bytes of pinned memory with its host state; NCCL
  # 2.27/2.28 free a communicator only once its ranks have met).
  rank0 join_memcheck 2 eager compute-sanitizer --tool memcheck --leak-check no --report-api-errors no --error-exitcode 99
fi
if [ "$gpus" -ge 2 ]; then
  for mode in eager graph; do
    for role in sleep kill skip; do
      pair "${role}_$mode" "$mode" "$role"
      [ "$memcheck" = 1 ] && pair "${role}_${mode}_memcheck" "$mode" "$role" compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 99
    done
    cli "cli_kill_$mode" "$mode" KILL
    cli "cli_hang_$mode" "$mode" STOP
  done
else
  echo "SKIPPED the two-rank cases: this machine has $gpus GPU(s), they need 2"
fi
echo "watchdog cases: $failures failed"
[ "$failures" = 0 ]
