#!/usr/bin/env bash
# fuzz.sh [SECONDS] - builds the libFuzzer targets with clang (build-fuzz/)
# and runs each for SECONDS (default 60), starting from the repository's
# programs and fusions. Inputs that crash are kept in test/fuzz/crashes/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds="${1:-60}"
HOSTJIT_BUILD_DIR=build scripts/setup.sh >/dev/null  # the packages, and the normal build
for p in clang-19 libclang-rt-19-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang-19 libclang-rt-19-dev >/dev/null
    break
  }
done
cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
  -DHOSTJIT_FUZZ=ON -DHOSTJIT_BUILD_BENCH=OFF >/dev/null
ninja -C build-fuzz hostjit_fuzz_text hostjit_fuzz_fusion hostjit_fuzz_parity hostjit_fuzz_image
mkdir -p test/fuzz/crashes
for target in text fusion parity image; do
  corpus="build-fuzz/corpus-$target"
  mkdir -p "$corpus"
  if [ "$target" = fusion ]; then
    find examples test -name '*.json' -exec cp {} "$corpus/" \;
    python3 test/lit/malformed_json/make_cases.py "$corpus"  # the malformed fusions, patched into files
  elif [ "$target" = image ]; then
    cp test/images/*.cubin test/images/*.fatbin test/images/*.ptx test/lit/inputs/triton/add_kernel/*.ptx "$corpus/"
    python3 test/fuzz/hostile_images.py "$corpus"  # damaged copies: past-the-end sections and entries
  else
    find examples test -name '*.hir' -size -16k -exec cp {} "$corpus/" \;
  fi
  echo "fuzz.sh: $target for $seconds s"
  dict=test/fuzz/hir.dict
  [ "$target" = fusion ] && dict=test/fuzz/fusion.dict
  dictarg=(-dict="$dict")
  [ "$target" = image ] && dictarg=()  # binary formats: no dictionary
  ASAN_OPTIONS=detect_leaks=1 build-fuzz/bin/hostjit_fuzz_$target "$corpus" "${dictarg[@]}" -max_total_time="$seconds" \
    -artifact_prefix=test/fuzz/crashes/$target- -print_final_stats=1 2>&1 | tail -15
done
