#!/usr/bin/env bash
# One `clef ask` against the card's curl command, same local fake server, with hyperfine
# (apt-get install -y hyperfine). Usage: bench/ask_vs_curl.sh [BUILD_DIR]
set -euo pipefail
build="${1:-build}"
coproc SERVER { exec "$build/cli/clef-mock"; }
trap 'kill "$SERVER_PID" 2>/dev/null || true' EXIT
read -r line <&"${SERVER[0]}"
host="$line"
ticket='{"ticket": "I was charged twice. Please refund the extra payment."}'
choice='team: Which team should handle this ticket? | billing=Payments and refunds | technical=Bugs and integrations | other=None of the above'
body='{"model": "clef-flash", "state": {"ticket": "I was charged twice. Please refund the extra payment."}, "questions": {"team": {"type": "choice", "instructions": "Which team should handle this ticket?", "criteria": {"billing": "Payments and refunds", "technical": "Bugs and integrations", "other": "None of the above"}}}}'
hyperfine -N --warmup 20 --runs 300 \
  "$build/cli/clef ask --host $host --state-json '$ticket' --choice '$choice'" \
  "curl -sS $host/v1/systemone -d '$body'"
