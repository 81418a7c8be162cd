#!/usr/bin/env bash
# No function over 60 lines in src/ and cli/ (their headers included): clang-tidy's
# readability-function-size, which counts every line of the body, blank and comment lines too.
# A function that long is doing two jobs. Tests are left out on purpose: a test reads best whole.
# usage: tests/function_size.sh [WORK_DIR]   (needs clang-tidy and cmake; WORK_DIR, default
# build-function-size, is configured here and nothing in it is built)
#
# clang-tidy reads the unity sources of a unity configuration (16 files a unit), not each file
# alone: parsing nlohmann/json, CLI11 and libcurl's headers once for 16 files rather than once
# for each is what takes the check from 3.5 minutes to about 35 s on two cores. Every .cpp under
# src/ and cli/ must be in one of those units, or the check says which is not.
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-build-function-size}
tidy=$(command -v clang-tidy || command -v clang-tidy-14) ||
  { echo "function_size: clang-tidy is not installed (apt-get install -y clang-tidy)"; exit 1; }
cmake -S . -B "$work" -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 \
  -DCLEF_BUILD_TESTS=OFF -DCLEF_BUILD_EXAMPLES=OFF -DCLEF_BUILD_BENCH=OFF -DCLEF_INSTALL=OFF >/dev/null
units=$(find "$work" -path '*/Unity/unity_*_cxx.cxx' | sort)
[ -n "$units" ] || { echo "function_size: no unity sources in $work"; exit 1; }

left_out=$(comm -23 <(find src cli -name '*.cpp' | sort) \
  <(cat $units | sed -n "s|^#include \"$PWD/\(.*\)\"$|\1|p" | sort -u))
[ -z "$left_out" ] || { echo "$left_out"; echo "function_size: the files above are in no unity source of $work"; exit 1; }

config='{Checks: "-*,readability-function-size",
         CheckOptions: [{key: readability-function-size.LineThreshold, value: 60}]}'
# -std=c++17: CMake leaves the flag out when g++'s default already is C++17; clang's is not.
report=$(xargs -P 2 -n 1 "$tidy" -p "$work" --quiet --config="$config" --extra-arg=-std=c++17 \
  --header-filter="$PWD/(src|cli)/.*" <<<"$units" 2>&1 || true)
problems=$(grep -E '(warning|error):' <<<"$report" | sort -u || true)
if [ -n "$problems" ]; then
  echo "$problems"
  grep -E 'note: [0-9]+ lines' <<<"$report" | sort -u || true
  echo "function_size: the functions above are over 60 lines (or a file did not parse)"
  exit 1
fi
echo "function_size: every function in src/ and cli/ is 60 lines or fewer ($(find src cli -name '*.cpp' | wc -l) files in $(wc -l <<<"$units") units)"
