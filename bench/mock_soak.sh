#!/usr/bin/env bash
# Soak of `clef mock` under the hostile loads of issue 15 (items 1-6), each for SOAK_SECONDS
# (default 60): rules on long states and a catastrophic pattern, bodies nested to 10^6, 70 slow
# clients, 500 concurrent connections; then 20,000 requests and eight 50 MB bodies (RSS before
# and after), and a second mock on its busy port for SOAK_SECONDS. One mock process serves every
# phase; the script fails if it dies or answers wrongly, or if the second mock starts. Needs curl,
# wrk (apt-get install -y wrk) and python3 (the payloads).
# Usage: bench/mock_soak.sh [BUILD_DIR]
set -euo pipefail
build="${1:-build}"
seconds="${SOAK_SECONDS:-60}"
mock="$build/cli/clef-mock"
work="$(mktemp -d)"
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status"; }
threads() { awk '/^Threads/ {print $2}' "/proc/$pid/status"; }
alive() { kill -0 "$pid" 2>/dev/null || fail "the mock died during: $1 (stderr: $(cat "$work/mock.err"))"; }

# Payloads: rules, states of 30 KB and 1 MB, the catastrophic pair, bodies nested 10^3..10^6.
python3 - "$work" <<'EOF'
import json, sys
work = sys.argv[1]
def body(state, images=False, model="clef-flash"):
    b = {"model": model, "state": state,
         "questions": {"refund": {"type": "noul", "instructions": "Money back?"}}}
    if images:
        b["images"] = []
    return json.dumps(b)
open(f"{work}/rules.json", "w").write(json.dumps({"rules": [
    {"question": "refund", "match": "charged.*twice", "answer": "yes", "probability": 0.77},
    {"question": "refund", "match": "(a+)+$", "answer": "yes", "probability": 0.66}]}))
open(f"{work}/other-rules.json", "w").write(json.dumps({"rules": [
    {"question": "refund", "match": ".", "answer": "yes", "probability": 0.11}]}))
open(f"{work}/email30k.json", "w").write(body("I was charged " + "x" * 30000 + " twice"))
open(f"{work}/email1m.json", "w").write(body("charged " + "y" * 1000000 + " twice", images=True))
open(f"{work}/evil.json", "w").write(body("a" * 40 + "b"))
open(f"{work}/ordinary.json", "w").write(body("ordinary ticket"))
open(f"{work}/huge.json", "w").write(body("z" * 50_000_000))
for exp in (3, 4, 5, 6):
    d = 10 ** exp
    text = body("STATE", images=True).replace('"STATE"', "[" * d + "]" * d)
    open(f"{work}/deep{exp}.json", "w").write(text)
open(f"{work}/post.lua", "w").write(f"""
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = {json.dumps(body("ordinary ticket"))}
""")
EOF

"$mock" --port 0 --rules "$work/rules.json" > "$work/url" 2> "$work/mock.err" &
pid=$!
for _ in $(seq 100); do grep -q '^http' "$work/url" 2>/dev/null && break; sleep 0.05; done
url="$(head -1 "$work/url")"
[[ "$url" == http://127.0.0.1:* ]] || fail "clef mock printed no URL"
port="${url##*:}"
echo "clef mock pid $pid at $url; RSS at start: $(rss_kb) kB, $(threads) threads"

# post FILE → "STATUS SECONDS BODY" (the body's first 200 bytes).
post() {
  curl -sS -o "$work/answer" -w '%{http_code} %{time_total}' --max-time 20 \
    -H 'Content-Type: application/json' --data-binary "@$1" "$url/v1/systemone" || echo "000 20"
  printf ' %s\n' "$(head -c 200 "$work/answer" 2>/dev/null)"
}
# expect FILE STATUS [TEXT]: one request, checked; prints its seconds.
expect() {
  local out status took
  out="$(post "$1")"
  read -r status took _ <<<"$out"
  [[ "$status" == "$2" ]] || fail "$(basename "$1"): HTTP $status, expected $2: $out"
  [[ -z "${3:-}" || "$out" == *"$3"* ]] || fail "$(basename "$1"): no \"$3\" in: $out"
  echo "$took"
}
max() { awk -v a="$1" -v b="$2" 'BEGIN {print (a > b) ? a : b}'; }

echo "== 1. rules on long states and a catastrophic pattern, ${seconds} s"
n=0; slowest=0; end=$((SECONDS + seconds))
while ((SECONDS < end)); do
  slowest=$(max "$slowest" "$(expect "$work/email30k.json" 200 '"noul":0.77')")
  slowest=$(max "$slowest" "$(expect "$work/email1m.json" 200 '"noul":0.77')")
  took=$(expect "$work/evil.json" 200 '"noul"')
  [[ "$(cat "$work/answer")" != *'"noul":0.66'* ]] || fail "(a+)+$ matched aaaa…ab"
  slowest=$(max "$slowest" "$took")
  n=$((n + 3))
done
alive "the rules phase"
echo "   $n answers (30 KB and 1 MB states: charged.*twice; (a+)+\$ on a{40}b), slowest ${slowest} s;" \
  "RSS $(rss_kb) kB"

echo "== 2. bodies nested 10^3 to 10^6 deep (with \"images\": []), ${seconds} s"
n=0; slowest=0; end=$((SECONDS + seconds))
while ((SECONDS < end)); do
  for exp in 3 4 5 6; do
    slowest=$(max "$slowest" "$(expect "$work/deep$exp.json" 400 'nests deeper than 256')")
    n=$((n + 1))
  done
done
alive "the nesting phase"
echo "   $n answers, each 400 \"nests deeper than 256 levels\", slowest ${slowest} s; RSS $(rss_kb) kB"

echo "== 3. 70 slow clients (a byte every 2.5 s, reconnecting when cut), ${seconds} s"
slow_client() {
  trap '' PIPE
  local end=$((SECONDS + seconds)) cuts=0
  while ((SECONDS < end)); do
    exec 3<>"/dev/tcp/127.0.0.1/$port" || { sleep 1; continue; }
    while ((SECONDS < end)) && printf 'P' >&3 2>/dev/null; do sleep 2.5; done
    exec 3>&-
    ((SECONDS < end)) && cuts=$((cuts + 1))
  done
  echo "$cuts" >> "$work/cuts"
}
: > "$work/cuts"
for _ in $(seq 70); do slow_client & done
sleep 3  # let every slow client connect before timing anyone else
n=0; slowest=0; end=$((SECONDS + seconds - 3))
while ((SECONDS < end)); do
  slowest=$(max "$slowest" "$(expect "$work/ordinary.json" 200 '"noul"')")
  n=$((n + 1))
  sleep 0.5
done
wait $(jobs -p | grep -v "^$pid$") 2>/dev/null || true
alive "the slow-client phase"
echo "   $n ordinary answers meanwhile, slowest ${slowest} s; slow connections cut by the request" \
  "deadline: $(awk '{s += $1} END {print s}' "$work/cuts"); RSS $(rss_kb) kB, $(threads) threads"

echo "== 4. 500 concurrent connections (wrk -c 500), ${seconds} s"
wrk -t 2 -c 500 -d "${seconds}s" --timeout 10s -s "$work/post.lua" "$url/v1/systemone" > "$work/wrk500"
alive "the 500-connection phase"
grep -E 'requests in|Latency|Socket errors|Non-2xx' "$work/wrk500" | sed 's/^/   /'
! grep -q 'Non-2xx' "$work/wrk500" || fail "answers other than 200 under 500 connections"
echo "   RSS $(rss_kb) kB, $(threads) threads"

echo "== 5. 20,000 requests (20 curl processes x 1,000 on a kept-alive connection each)"
before=$(rss_kb)
started=$SECONDS
urls=()
for _ in $(seq 1000); do urls+=(-o /dev/null "$url/v1/systemone"); done
for i in $(seq 20); do
  curl -sS -w '%{http_code}\n' -H 'Content-Type: application/json' \
    --data-binary "@$work/ordinary.json" "${urls[@]}" > "$work/codes$i" &
done
wait $(jobs -p | grep -v "^$pid$")
alive "the 20,000-request phase"
answered=$(cat "$work"/codes* | grep -c '^200$' || true)
((answered == 20000)) || fail "$answered of 20,000 answered 200"
after=$(rss_kb)
echo "   20000 answered 200 in $((SECONDS - started)) s; RSS before ${before} kB, after ${after} kB" \
  "($((after - before)) kB)"

echo "== 6. eight 50 MB bodies (over Ollama's 64 KiB text cap: 413)"
before=$(rss_kb)
for _ in $(seq 8); do expect "$work/huge.json" 413 'must not exceed 64 KiB' > /dev/null; done
alive "the 50 MB phase"
echo "   8 answered 413; RSS before ${before} kB, after $(rss_kb) kB"

echo "== 7. a second clef mock on the busy port, every 2 s for ${seconds} s"
n=0; end=$((SECONDS + seconds))
while ((SECONDS < end)); do
  set +e
  timeout 10 "$mock" --port "$port" --rules "$work/other-rules.json" > /dev/null 2> "$work/second.err"
  code=$?
  set -e
  [[ $code == 2 ]] || fail "a second mock on port $port exited $code: $(cat "$work/second.err")"
  [[ "$(cat "$work/second.err")" == *"in use"* ]] || fail "no 'in use': $(cat "$work/second.err")"
  for _ in 1 2 3 4 5; do expect "$work/email30k.json" 200 '"noul":0.77' > /dev/null; done
  n=$((n + 1))
  sleep 2
done
alive "the busy-port phase"
echo "   $n attempts, each exit 2: $(cat "$work/second.err")"
echo "   every answer meanwhile came from the first mock's rules; RSS $(rss_kb) kB"

kill -TERM "$pid"
set +e
wait "$pid"
code=$?
set -e
[[ $code == 0 ]] || fail "the mock exited $code on SIGTERM"
echo "the mock served every phase and exited 0 on SIGTERM"
