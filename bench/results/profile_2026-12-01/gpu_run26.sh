#!/bin/bash
# Issue 24 on the H200: the profile tests and memcheck over them, the suite,
# hostjit run --profile --trace (streams example, GPT-2 small eager and in
# graph mode), Nsight Compute selecting kernels by hostjit's NVTX ranges,
# and the cost of profiling against 51ce417 (old_*) in one run.
export NCCL_NVLS_ENABLE=0
export HOSTJIT_SOURCE_DIR=$PWD HOSTJIT_CACHE_DIR=/tmp/hjcache LD_LIBRARY_PATH=/tmp/b
mkdir -p /tmp/b /tmp/o && tar xJf carry/gpu.tar.xz -C /tmp/b
O=/tmp/o; H=/tmp/b/hostjit
nvidia-smi --query-gpu=name,driver_version --format=csv > $O/device.txt; date -u >> $O/device.txt; cat $O/device.txt
( timeout 120 /tmp/b/hostjit_gpu_tests '[profile]' ) > $O/profile_tests.txt 2>&1; echo "rc=$?" >> $O/profile_tests.txt
tail -4 $O/profile_tests.txt; grep -m5 -B3 -A12 FAILED $O/profile_tests.txt | head -60
( timeout 120 compute-sanitizer --tool memcheck --leak-check full --report-api-errors no --error-exitcode 9 /tmp/b/hostjit_gpu_tests '[profile]' ) > $O/memcheck.txt 2>&1; echo "rc=$?" >> $O/memcheck.txt
grep -E "All tests|test cases|LEAK SUMMARY|ERROR SUMMARY|rc=" $O/memcheck.txt
( time timeout 150 /tmp/b/hostjit_gpu_tests '~[fault]~[profile]' ) > $O/suite.txt 2>&1; echo "rc=$?" >> $O/suite.txt
grep -E "test cases|All tests|rc=|^real" $O/suite.txt
timeout 60 $H run examples/streams.hir --backend cuda --input x=f32[4194304] --scalar alpha=2.0 --scalar beta=-0.5 --no-tier --repeat 20 --profile --trace $O/streams.json > $O/cli_streams.txt 2>&1; echo "rc=$?" >> $O/cli_streams.txt
cat $O/cli_streams.txt
timeout 120 $H run examples/gpt2/gpt2_small.hir --backend cuda --input tokens=i64[1,64] --no-tier --repeat 10 --profile --trace $O/gpt2.json --stats json > $O/cli_gpt2.txt 2>&1; echo "rc=$?" >> $O/cli_gpt2.txt
grep -v '^ \|^{\|^}' $O/cli_gpt2.txt | head -40
timeout 120 $H run examples/gpt2/gpt2_small.hir --backend cuda --input tokens=i64[1,64] --no-tier --repeat 10 --graph --profile --trace $O/gpt2_graph.json > $O/cli_gpt2_graph.txt 2>&1; echo "rc=$?" >> $O/cli_gpt2_graph.txt
head -30 $O/cli_gpt2_graph.txt; tail -3 $O/cli_gpt2_graph.txt
ncu --version | tail -1 > $O/ncu.txt
for f in "hostjit@main/add_vec/" "hostjit@main/scale_vec/" "hostjit@main/" "hostjit@main/nothing/"; do
  echo "=== --nvtx-include $f" >> $O/ncu.txt
  timeout 90 ncu --nvtx --nvtx-include "$f" --section LaunchStats $H run examples/streams.hir --backend cuda --input x=f32[65536] --scalar alpha=2.0 --scalar beta=-0.5 --no-tier >> $O/ncu.txt 2>&1; echo "rc=$?" >> $O/ncu.txt
done
grep -E "^===|==PROF== Profiling|NVTX|rc=|ERR|No kernels|==WARNING==|==ERROR==" $O/ncu.txt | head -40
B="--benchmark_repetitions=5 --benchmark_report_aggregates_only=true --benchmark_min_time=0.2s"
for i in 1 2; do
  for v in old new; do
    G=/tmp/b/hostjit_gpu_bench; R=/tmp/b/hostjit_graph_bench; [ $v = old ] && G=/tmp/b/old_gpu_bench R=/tmp/b/old_graph_bench
    timeout 60 $G --benchmark_filter='BM_Launch|grid_sum_jit_run' $B 2>&1 | grep -E "median" | sed "s/^/$v$i /" | tee -a $O/bench.txt
    timeout 60 $R --benchmark_filter='BM_Call/(graph_same_addresses|jit)(_profiled)?/K:(1|16)/' $B 2>&1 | grep -E "median" | sed "s/^/$v$i /" | tee -a $O/bench.txt
  done
done
cd /tmp/o && tar cf - * | xz -6 > $OUT/results.tar.xz; ls -la $OUT
