#!/usr/bin/env bash
# check_install.sh BUILD EXAMPLE.cpp - the installed package as a user takes
# it: `cmake --install` into a fresh prefix writes nothing outside it (the
# Python package included), and the C++ guide's example, in a project of
# its own that asks for no C++ standard, builds against
# find_package(hostjit) with g++ and runs.
set -euo pipefail
build=$1
example=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
outside=$(grep -E '^-- (Installing|Up-to-date): ' "$work/install.log" | grep -v -F -- ": $prefix/" || true)
if [ -n "$outside" ]; then
  echo "check_install: cmake --install --prefix $prefix wrote outside the prefix:"
  echo "$outside"
  exit 1
fi
if grep -q '^HOSTJIT_BUILD_PYTHON:BOOL=ON' "$build/CMakeCache.txt"; then
  package=$(find "$prefix" -path '*/hostjit/__init__.py' | head -n 1)
  [ -n "$package" ] || { echo "check_install: the Python package was not installed under $prefix"; exit 1; }
fi
mkdir "$work/app"
cp "$example" "$work/app/main.cpp"
cat > "$work/app/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(app CXX)
find_package(hostjit REQUIRED)
add_executable(app main.cpp)
target_link_libraries(app PRIVATE hostjit::hostjit)
CMAKE
cmake -S "$work/app" -B "$work/app/build" -G Ninja -DCMAKE_CXX_COMPILER=g++ -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" > "$work/configure.log" || { cat "$work/configure.log"; exit 1; }
ninja -C "$work/app/build" > "$work/build.log" || { cat "$work/build.log"; exit 1; }
"$work/app/build/app"
echo "check_install: installed into a fresh prefix; the guide's example built against it and ran"
