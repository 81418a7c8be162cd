#!/usr/bin/env bash
# examples/asio_decisions against clef mock: 200 tickets decided from standalone Asio's loop,
# one of them cancelled; the example itself checks that every callback ran on its one thread
# and that its process never had a second one (/proc/self/task).
#
#   example_asio.sh CLEF_MOCK ASIO_DECISIONS
set -euo pipefail
mock_bin="$1"
example="$2"
work="$(mktemp -d)"
trap 'kill "$mock" 2>/dev/null || true; rm -rf "$work"' EXIT

"$mock_bin" --port 0 --latency 20 > "$work/mock.txt" 2> /dev/null &
mock=$!
for _ in $(seq 200); do
  grep -q '^http' "$work/mock.txt" 2> /dev/null && break
  kill -0 "$mock" 2> /dev/null || { echo "clef mock did not start" >&2; exit 1; }
  sleep 0.05
done
url="$(head -1 "$work/mock.txt")"

OLLAMA_HOST="$url" "$example" 200 > "$work/out.txt"
tail -1 "$work/out.txt"
answered="$(grep -c '^ticket [0-9]*: ' "$work/out.txt")"
echo "$answered tickets printed"
[ "$answered" -eq 199 ] || { echo "expected 199 answered tickets" >&2; exit 1; }
