#!/usr/bin/env bash
# A CI job with no model: route tickets against `clef mock` scripted by a rules file, assert the
# routed labels, record the exchanges; then route again from the recording with no server at all.
#
#   examples/ci_offline.sh [BUILD_DIR]      (default: build)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
clef="${1:-build}/cli/clef"
work="$(mktemp -d)"
trap 'kill "$mock" 2>/dev/null || true; rm -rf "$work"' EXIT

# 1. The mock, answering as examples/ticket-rules.json says; its first stdout line is its URL.
"$clef" mock --port 0 --models clef --rules "$here/ticket-rules.json" --log "$work/requests.jsonl" \
  > "$work/mock.txt" 2> /dev/null &
mock=$!
# Wait (at most 10 s) for its URL line; a mock that died is an error, never a hang.
for _ in $(seq 200); do
  grep -q '^http' "$work/mock.txt" 2> /dev/null && break
  kill -0 "$mock" 2> /dev/null || { echo "clef mock did not start" >&2; exit 1; }
  sleep 0.05
done
grep -q '^http' "$work/mock.txt" || { echo "clef mock printed no URL" >&2; exit 1; }
url="$(head -1 "$work/mock.txt")"

# 2. Route every ticket, recording each exchange.
"$clef" batch "$here/tickets.jsonl" -q "$here/ticket-questions.json" -m clef --host "$url" \
  --ordered -o "$work/routed.jsonl" --record "$work/tickets.cassette.jsonl" 2> /dev/null

# 3. Assert what was routed (plain grep: the lines are compact JSON).
team_of() { grep "\"id\":\"$1\"" "$2" | grep -o '"team":{"type":"choice","status":"ok","winner":"[a-z]*"' | sed 's/.*"winner":"//; s/"$//'; }
test "$(team_of T-001 "$work/routed.jsonl")" = billing
test "$(team_of T-021 "$work/routed.jsonl")" = technical
test "$(team_of T-042 "$work/routed.jsonl")" = account
test "$(grep -c '"team":{"type":"choice","status":"ok","winner":"billing"' "$work/routed.jsonl")" = 23
test "$(wc -l < "$work/requests.jsonl")" = 66  # the mock's log: one request per ticket
echo "routed 66 tickets against clef mock: T-001 billing, T-021 technical, T-042 account"

# 4. The same job from the recording: the mock is stopped, nothing listens at its URL.
kill "$mock"
wait "$mock" 2> /dev/null || true
"$clef" batch "$here/tickets.jsonl" -q "$here/ticket-questions.json" -m clef --host "$url" \
  --ordered -o "$work/replayed.jsonl" --replay "$work/tickets.cassette.jsonl" 2> /dev/null
strip() { sed 's/,"latency_ms":[0-9.e+-]*//' "$1"; }
diff <(strip "$work/routed.jsonl") <(strip "$work/replayed.jsonl")
echo "replayed 66 tickets with no server: the same answers"

# 5. A ticket the recording lacks fails with its own exit code (9), never a made-up answer.
set +e
echo '{"id": "new", "state": "A ticket nobody recorded"}' |
  "$clef" batch - -q "$here/ticket-questions.json" -m clef --host "$url" \
    --replay "$work/tickets.cassette.jsonl" > "$work/missed.jsonl" 2> /dev/null
code=$?
set -e
test "$code" = 9
grep -q '"kind":"not_recorded"' "$work/missed.jsonl"
echo "an unrecorded ticket: exit $code (not_recorded)"
