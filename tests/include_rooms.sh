#!/usr/bin/env bash
# A tree in rooms, lowest first: a file includes from its own room and the rooms below it, never
# from a room above, and every file lives in a room. Prints each include that goes up and exits 1
# if any does. An include names a room by its first path component ("wire/http_errors.hpp"); a
# system header or a public one (clef/...) names none.
#
#   tests/include_rooms.sh DIR ROOM... [-- FILE ROOM...]
#
# After `--`, a file outside the rooms (cli/mock_main.cpp) and the rooms it may include from.
# The README's Layout says what each room of src/ and cli/ is for.
set -u
dir="${1:?usage: include_rooms.sh DIR ROOM... [-- FILE ROOM...]}"
shift
rooms=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do rooms+=("$1"); shift; done
[ $# -gt 0 ] && shift
level_of() {
  for i in "${!rooms[@]}"; do [ "${rooms[$i]}" = "$1" ] && { echo "$i"; return; }; done
  echo ""
}
bad=0
checked=0
# check FILE LEVEL NAME: every include of FILE into a room at most LEVEL.
check() {
  local file="$1" level="$2" name="$3" included target_level
  while IFS= read -r included; do
    target_room="${included%%/*}"
    [ "$target_room" = "$included" ] && continue  # clef/... or a system header: not a room
    target_level="$(level_of "$target_room")"
    [ -z "$target_level" ] && continue
    checked=$((checked + 1))
    if [ "$target_level" -gt "$level" ]; then
      echo "include_rooms: ${file#"$dir"/} includes $included, a room above $name"
      bad=1
    fi
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
}
for i in "${!rooms[@]}"; do
  room="${rooms[$i]}"
  [ -d "$dir/$room" ] || { echo "include_rooms: no room $dir/$room"; exit 1; }
  for file in "$dir/$room"/*.cpp "$dir/$room"/*.hpp; do
    [ -e "$file" ] || continue
    check "$file" "$i" "$room"
  done
done
# A file outside the rooms, allowed the rooms named after it.
if [ $# -gt 0 ]; then
  file="$dir/$1"
  shift
  allowed=" $* "
  while IFS= read -r included; do
    target_room="${included%%/*}"
    [ -z "$(level_of "$target_room")" ] && continue
    if [[ "$allowed" != *" $target_room "* ]]; then
      echo "include_rooms: ${file#"$dir"/} includes $included; it may include from: $allowed"
      bad=1
    fi
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
fi
# Nothing outside a room but the files named: a new file is put in its room, not beside them.
for file in "$dir"/*.cpp "$dir"/*.hpp; do
  [ -e "$file" ] || continue
  case "$file" in
    "$dir"/main.cpp | "$dir"/man_pages_main.cpp | "$dir"/mock_main.cpp | "$dir"/run.cpp | "$dir"/run.hpp) ;;
    *) echo "include_rooms: ${file#"$dir"/} is in no room"; bad=1 ;;
  esac
done
[ "$checked" -gt 50 ] || { echo "include_rooms: only $checked includes between rooms: not the tree it expects"; exit 1; }
[ "$bad" -eq 0 ] && echo "include_rooms: $checked includes between rooms, none upward"
exit "$bad"
