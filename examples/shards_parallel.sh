#!/usr/bin/env bash
# One batch split four ways with GNU parallel (four processes here; four machines, Kubernetes pods
# or Slurm tasks the same way), then joined by clef merge, which proves every ticket is there
# once. A lost shard is named with the line that runs it again.
#
#   examples/shards_parallel.sh [BUILD_DIR]      (default: build; needs GNU parallel)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
clef="${1:-build}/cli/clef"
work="$(mktemp -d)"
trap 'kill "$mock" 2>/dev/null || true; rm -rf "$work"' EXIT

# 1. The model server (here clef mock; one --host per shard works too).
"$clef" mock --port 0 --models clef --rules "$here/ticket-rules.json" > "$work/mock.txt" 2> /dev/null &
mock=$!
for _ in $(seq 200); do
  grep -q '^http' "$work/mock.txt" 2> /dev/null && break
  kill -0 "$mock" 2> /dev/null || { echo "clef mock did not start" >&2; exit 1; }
  sleep 0.05
done
url="$(head -1 "$work/mock.txt")"

# 2. Four shards at once: shard K of 4 decides the tickets whose id hashes to K, whatever their
#    order in the file; each writes its own output and run record.
parallel --will-cite --halt now,fail=1 \
  "$clef" batch "$here/tickets.jsonl" -q "$here/ticket-questions.json" -m clef --host "$url" \
  --shard {}/4 -o "$work/routed.{}.jsonl" 2> /dev/null ::: 0 1 2 3
wc -l "$work"/routed.?.jsonl | sed "s#$work/##"

# 3. One file, in input order, every ticket exactly once (exit 0), or the missing named (exit 10).
"$clef" merge "$work"/routed.?.jsonl -o "$work/routed.jsonl"
test "$(wc -l < "$work/routed.jsonl")" = 66

# 4. A shard lost (a node died): merge names it and its tickets, and exits 10.
rm "$work/routed.2.jsonl"
set +e
"$clef" merge "$work"/routed.?.jsonl -o "$work/partial.jsonl"
echo "exit $?"
