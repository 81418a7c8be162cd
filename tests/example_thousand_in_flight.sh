#!/usr/bin/env bash
# examples/thousand_in_flight against clef mock: 3,000 tickets answered after 300 ms each, from
# one thread keeping 1,000 in flight. Checks every ticket is answered exactly once and samples
# the connections open to the mock (/proc/net/tcp) to see that about 1,000 really were in flight.
#
#   example_thousand_in_flight.sh CLEF_MOCK THOUSAND_IN_FLIGHT
set -euo pipefail
mock_bin="$1"
example="$2"
work="$(mktemp -d)"
trap 'kill "$mock" "$sampler" 2>/dev/null || true; rm -rf "$work"' EXIT
sampler=""

source "$(dirname "$0")/start_mock.sh"
start_mock "$work" "$mock_bin" --latency 300 --max-connections 1100
port_hex="$(printf '%04X' "${url##*:}")"

# Established connections whose local port is the mock's (the server side of each).
(
  peak=0
  while :; do
    n="$(awk -v port=":$port_hex" '$2 ~ port"$" && $4 == "01"' /proc/net/tcp | wc -l)"
    [ "$n" -gt "$peak" ] && peak="$n" && echo "$peak" > "$work/peak"
    sleep 0.02
  done
) &
sampler=$!

OLLAMA_HOST="$url" "$example" 3000 > "$work/out.txt"
kill "$sampler"
peak="$(cat "$work/peak" 2> /dev/null || echo 0)"
distinct="$(grep -o '^ticket [0-9]*: billing\|^ticket [0-9]*: technical\|^ticket [0-9]*: other' "$work/out.txt" | cut -d: -f1 | sort -u | wc -l)"
echo "$distinct distinct tickets answered"
[ "$distinct" -eq 3000 ] || { echo "expected 3000 distinct tickets" >&2; exit 1; }
[ "$(wc -l < "$work/out.txt")" -eq 3000 ] || { echo "expected one line per ticket" >&2; exit 1; }
echo "peak connections $peak >= 900"
[ "$peak" -ge 900 ] || { echo "fewer than 900 in flight at once" >&2; exit 1; }
