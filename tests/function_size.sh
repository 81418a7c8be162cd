#!/usr/bin/env bash
# No function over 60 lines in src/ and cli/ (their headers included): clang-tidy's
# readability-function-size, which counts every line of the body, blank and comment lines too.
# A function that long is doing two jobs. Tests are left out on purpose: a test reads best whole.
# usage: tests/function_size.sh [BUILD_DIR]   (needs clang-tidy; BUILD_DIR/compile_commands.json
# is written by every configure)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
tidy=$(command -v clang-tidy || command -v clang-tidy-14) ||
  { echo "function_size: clang-tidy is not installed (apt-get install -y clang-tidy)"; exit 1; }
[ -f "$build/compile_commands.json" ] || { echo "function_size: no $build/compile_commands.json"; exit 1; }
config='{Checks: "-*,readability-function-size",
         CheckOptions: [{key: readability-function-size.LineThreshold, value: 60}]}'
# -std=c++17: CMake leaves the flag out when g++'s default already is C++17; clang's is not.
report=$(find src cli -name '*.cpp' | sort |
  xargs -P 2 -n 8 "$tidy" -p "$build" --quiet --config="$config" --extra-arg=-std=c++17 \
    --header-filter="$PWD/(src|cli)/.*" 2>&1 || true)
problems=$(grep -E '(warning|error):' <<<"$report" | sort -u || true)
if [ -n "$problems" ]; then
  echo "$problems"
  grep -E 'note: [0-9]+ lines' <<<"$report" | sort -u || true
  echo "function_size: the functions above are over 60 lines (or a file did not parse)"
  exit 1
fi
echo "function_size: every function in src/ and cli/ is 60 lines or fewer ($(find src cli -name '*.cpp' | wc -l) files)"
