#!/usr/bin/env bash
# What the decision cache costs, measured on the real binaries (issue 15, item 11):
#   1. start-up: `clef ask` answered from a cache holding ENTRIES other entries, against the same
#      answer from a cache holding only it (mean of RUNS runs each);
#   2. disk: what `clef batch` of BATCH distinct answers leaves on disk, against the 256 MiB cap
#      (disk blocks, as du counts them, and the files' sizes).
# usage: bench/cache_bench.sh BUILD_DIR [ENTRIES=100000] [BATCH=80000] [RUNS=20]
# CLEF=/path/to/clef measures another clef binary (e.g. an older build) with this mock.
set -euo pipefail
build=${1:?usage: bench/cache_bench.sh BUILD_DIR [ENTRIES] [BATCH] [RUNS]}
entries=${2:-100000}
batch=${3:-80000}
runs=${4:-20}
clef=${CLEF:-$build/cli/clef}
mock=$build/cli/clef-mock
work=$(mktemp -d "${TMPDIR:-/tmp}/clef-cache-bench.XXXXXX")
"$mock" --port 0 > "$work/mock.txt" 2> /dev/null &
mock_pid=$!
trap 'kill $mock_pid 2>/dev/null; rm -rf "$work"' EXIT
until grep -q '^http' "$work/mock.txt"; do sleep 0.05; done
url=$(head -1 "$work/mock.txt")

ask() {
  "$clef" ask --host "$url" --cache "$1" --yes-no 'refund: Money back?' 'charged twice' > /dev/null
}
mean_ms() {  # mean wall time of `ask DIR` over $runs runs
  local start end
  start=$(date +%s%N)
  for _ in $(seq "$runs"); do ask "$1"; done
  end=$(date +%s%N)
  echo $(( (end - start) / runs / 1000000 ))
}

mkdir -m 700 "$work/full" "$work/empty"
ask "$work/full"  # the answer every timed run hits, written before the filler
ask "$work/empty"
# ENTRIES entries of ~700 bytes, laid out as the cache lays them out.
python3 - "$work/full" "$entries" <<'PY'
import os, sys, secrets
root, n = sys.argv[1], int(sys.argv[2])
body = '{"key":"%s","created":0,"status":200,"headers":[],"body":"' + "x" * 600 + '"}'
for _ in range(n):
    key = secrets.token_hex(32)
    shard = os.path.join(root, key[:2])
    os.makedirs(shard, mode=0o700, exist_ok=True)
    with open(os.path.join(shard, key + ".json"), "w") as f:
        f.write(body % key)
PY
echo "clef ask, a cache hit: $(mean_ms "$work/full") ms with $entries other entries," \
     "$(mean_ms "$work/empty") ms with none (mean of $runs runs)"

python3 - "$work/tickets.jsonl" "$batch" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(int(sys.argv[2])):
        f.write(json.dumps({"id": i, "state": "ticket number %d" % i}) + "\n")
PY
start=$(date +%s)
"$clef" batch "$work/tickets.jsonl" -o "$work/out.jsonl" --host "$url" -j 8 --cache "$work/batch" \
  --yes-no 'refund: Money back?' 2> /dev/null || true
disk=$(du -s --block-size=1 "$work/batch" | cut -f1)
apparent=$(du -s --apparent-size --block-size=1 "$work/batch" | cut -f1)
files=$(find "$work/batch" -name '*.json' | wc -l)
echo "clef batch of $batch answers in $(( $(date +%s) - start )) s: $files entries," \
     "$(( disk / 1048576 )) MiB on disk ($(( apparent / 1048576 )) MiB of file sizes)," \
     "cap 256 MiB"
