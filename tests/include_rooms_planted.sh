#!/usr/bin/env bash
# The rooms check can fail: a copy of the tree with one upward include planted in its lowest room
# (an include of its highest room) must be refused, naming the file, and the clean copy passed.
#
#   tests/include_rooms_planted.sh CHECK DIR ROOM...
set -u
check="${1:?usage: include_rooms_planted.sh CHECK DIR ROOM...}"
dir="${2:?}"
shift 2
rooms=("$@")
copy="$(mktemp -d)"
trap 'rm -rf "$copy"' EXIT
cp -r "$dir/." "$copy/"
bash "$check" "$copy" "${rooms[@]}" > /dev/null || { echo "the clean copy was refused"; exit 1; }
lowest="${rooms[0]}"
highest="${rooms[${#rooms[@]} - 1]}"
victim="$(ls "$copy/$lowest"/*.cpp | head -1)"
planted="$(ls "$copy/$highest"/*.hpp | head -1)"
printf '#include "%s/%s"\n' "$highest" "$(basename "$planted")" >> "$victim"
output="$(bash "$check" "$copy" "${rooms[@]}")"
code=$?
echo "$output"
[ "$code" -eq 1 ] && grep -q "${victim#"$copy"/} includes $highest/" <<< "$output" ||
  { echo "the planted include was not refused (exit $code)"; exit 1; }
echo "include_rooms: refused the planted include"
