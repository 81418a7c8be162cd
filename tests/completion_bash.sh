#!/bin/bash
# `clef completion bash` driven through bash's own completion function, as a user's Tab would:
# the words offered for `clef ba<TAB>`, `clef batch --output-format <TAB>` and a few more; the
# zsh script parsed and the fish one asked, when those shells are installed.
set -u
clef=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$clef" completion bash > "$work/clef.bash" || { echo "FAIL: clef completion bash"; exit 1; }
bash -n "$work/clef.bash" || { echo "FAIL: the script is not valid bash"; exit 1; }
registered=$(bash -c "source '$work/clef.bash'; complete -p clef")
[ "$registered" = "complete -F _clef clef" ] || { echo "FAIL: complete -p clef: $registered"; exit 1; }

failures=0
# offered WORD... : what _clef offers with the cursor on the last word.
offered() {
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _clef; echo "${COMPREPLY[*]}"' \
    _ "$work/clef.bash" "$@"
}
sorted() { tr ' ' '\n' <<< "$1" | sed '/^$/d' | sort | tr '\n' ' ' | sed 's/ $//'; }
# expect WORDS clef ARG... : the words offered, in any order, are exactly WORDS.
expect() {
  local want
  want=$(sorted "$1")
  shift
  local got
  got=$(sorted "$(cd "$work" && offered "$@")")
  if [ "$got" = "$want" ]; then
    echo "ok: clef ${*:2}<TAB> -> $got"
  else
    echo "FAIL: clef ${*:2}<TAB>: offered '$got', expected '$want'"
    failures=$((failures + 1))
  fi
}
touch "$work/tickets.jsonl" "$work/tickets.csv"
expect "batch" clef ba
expect "jsonl csv tsv" clef batch --output-format ""
expect "csv" clef batch --output-format c
expect "ollama workers-ai systemone openai" clef ask --backend ""
expect "auto always never" clef --color ""
expect "auto always never" clef batch --color ""
expect "stats clear" clef cache ""
expect "bash zsh fish" clef completion ""
expect "tickets.csv tickets.jsonl" clef batch tickets.
expect "tickets.csv tickets.jsonl" clef batch --policy tickets.
expect "tickets.csv tickets.jsonl" clef ask --image tickets.
expect "tickets.csv tickets.jsonl" clef ask --replay tickets.
expect "" clef ask --state-json tickets.
expect "--help" clef batch --he
expect "--ordered --output --output-format --overwrite" clef batch --o
expect "" clef batch --timeout ""
# A switch takes no value: after it come the flags again.
expect "--ordered --output --output-format --overwrite" clef batch -v --o
# Every command clef has, and nothing else, for `clef <TAB>`.
expect "ask batch merge mock cache eval diff models doctor completion config" clef ""
expect "show path" clef config ""
# zsh and fish (.ci/run installs both; elsewhere they are checked when present): the scripts
# parse, and fish, which can be asked, offers the same words.
if command -v zsh > /dev/null; then
  "$clef" completion zsh > "$work/_clef" && zsh -n "$work/_clef" && echo "ok: zsh parses _clef" ||
    { echo "FAIL: clef completion zsh does not parse"; failures=$((failures + 1)); }
fi
if command -v fish > /dev/null; then
  "$clef" completion fish > "$work/clef.fish"
  fish_offered() { fish -c "source '$work/clef.fish'; complete -C '$1'" | cut -f1 | tr '\n' ' ' | sed 's/ $//'; }
  for check in "clef ba|batch" "clef batch --output-format |csv jsonl tsv" "clef cache |clear stats"; do
    got=$(sorted "$(fish_offered "${check%%|*}")")
    if [ "$got" = "${check#*|}" ]; then echo "ok: fish: ${check%%|*}<TAB> -> $got"; else
      echo "FAIL: fish: ${check%%|*}<TAB>: offered '$got', expected '${check#*|}'"
      failures=$((failures + 1))
    fi
  done
fi
[ "$failures" = 0 ] || exit 1
echo "completion: all offered words as expected"
