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

source "$(dirname "$0")/start_mock.sh"
start_mock "$work" "$mock_bin" --latency 20

OLLAMA_HOST="$url" "$example" 200 > "$work/out.txt"
tail -1 "$work/out.txt"
answered="$(grep -c '^ticket [0-9]*: ' "$work/out.txt")"
echo "$answered tickets printed"
[ "$answered" -eq 199 ] || { echo "expected 199 answered tickets" >&2; exit 1; }
