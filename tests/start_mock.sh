# Sourced by the suite's example scripts: start_mock WORK MOCK_BIN [FLAG…] starts clef mock on a
# port of its choosing (its output in WORK/mock.txt), waits for the URL it prints first, and sets
# `mock` (its pid) and `url`. (The examples under examples/ carry their own copy: a user reads
# them whole.)
start_mock() {
  local work="$1" bin="$2"
  shift 2
  "$bin" --port 0 "$@" > "$work/mock.txt" 2> /dev/null &
  mock=$!
  for _ in $(seq 200); do
    grep -q '^http' "$work/mock.txt" 2> /dev/null && break
    kill -0 "$mock" 2> /dev/null || { echo "clef mock did not start" >&2; exit 1; }
    sleep 0.05
  done
  url="$(head -1 "$work/mock.txt")"
}
