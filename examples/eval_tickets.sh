#!/usr/bin/env bash
# The README's worked example of `clef eval`: the 66 labelled tickets of examples/tickets.jsonl,
# two models, against the local test server scripted by examples/ticket-rules.json.
#
#   examples/eval_tickets.sh [BUILD_DIR]      (default: build)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-build}"
clef="$build/cli/clef"
out="$(mktemp -d)"
trap 'kill "$server" 2>/dev/null || true; rm -rf "$out"' EXIT

# A local System One server (Ollama's shape) serving two models whose answers follow the rules.
"$clef" mock --models clef-flash,clef --rules "$here/ticket-rules.json" > "$out/server.txt" 2>/dev/null &
server=$!
# Wait (at most 10 s) for its URL line; a mock that died is an error, never a hang.
for _ in $(seq 200); do
  grep -q '^http' "$out/server.txt" 2> /dev/null && break
  kill -0 "$server" 2> /dev/null || { echo "clef mock did not start" >&2; exit 1; }
  sleep 0.05
done
grep -q '^http' "$out/server.txt" || { echo "clef mock printed no URL" >&2; exit 1; }
host="$(head -1 "$out/server.txt")"

echo '$ clef eval examples/tickets.jsonl -q examples/ticket-questions.json --label team=team --label refund=refund -m clef-flash -m clef ...'
"$clef" eval "$here/tickets.jsonl" -q "$here/ticket-questions.json" \
  --label team=team --label refund=refund -m clef-flash -m clef --host "$host" \
  --answers "$out/answers.jsonl" --report-json "$out/report.json" --report-html "$out/report.html" \
  --color never 2>/dev/null

# Gates: re-scored from the kept answers, nothing is sent again.
gate() {
  set +e
  "$clef" eval "$here/tickets.jsonl" -q "$here/ticket-questions.json" \
    --label team=team --label refund=refund -m clef-flash -m clef --host "$host" \
    --answers "$out/answers.jsonl" "$@" > /dev/null 2> "$out/gate.txt"
  code=$?
  set -e
  grep -v '^clef: \(eval\|batch\):' "$out/gate.txt" || true
  echo "exit $code"
}
echo
echo "\$ clef eval ... --require 'team.accuracy >= 0.8' --require 'refund.auroc >= 0.8'"
gate --require 'team.accuracy >= 0.8' --require 'refund.auroc >= 0.8'
echo "\$ clef eval ... --require 'lower(team.precision[technical]) >= 0.7'"
gate --require 'lower(team.precision[technical]) >= 0.7'
echo "\$ clef eval ... --require 'team.f1 >= 0.9'"
gate --require 'team.f1 >= 0.9'
