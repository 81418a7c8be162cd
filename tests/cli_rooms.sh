#!/usr/bin/env bash
# The clef command's rooms (cli/CMakeLists.txt): a file includes from its own room and the rooms
# below it, never from a room above. Prints each include that goes up and exits 1 if any does.
#
#   tests/cli_rooms.sh CLI_DIR
set -u
cli="${1:?usage: cli_rooms.sh CLI_DIR}"
rooms=(common flags output commands batch eval)
level_of() {
  for i in "${!rooms[@]}"; do [ "${rooms[$i]}" = "$1" ] && { echo "$i"; return; }; done
  echo ""
}
bad=0
checked=0
for i in "${!rooms[@]}"; do
  room="${rooms[$i]}"
  [ -d "$cli/$room" ] || { echo "cli_rooms: no room $cli/$room"; exit 1; }
  for file in "$cli/$room"/*.cpp "$cli/$room"/*.hpp; do
    [ -e "$file" ] || continue
    while IFS= read -r included; do
      target_room="${included%%/*}"
      [ "$target_room" = "$included" ] && continue  # clef/... or a system header: not a room
      target_level="$(level_of "$target_room")"
      [ -z "$target_level" ] && continue
      checked=$((checked + 1))
      if [ "$target_level" -gt "$i" ]; then
        echo "cli_rooms: ${file#"$cli"/} includes $included, a room above $room"
        bad=1
      fi
    done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
  done
done
# clef-mock's source sees common/ only.
if grep -E '^#include "(flags|output|commands|batch|eval)/' "$cli/mock_main.cpp"; then
  echo "cli_rooms: mock_main.cpp includes more than common/"
  bad=1
fi
[ "$checked" -gt 50 ] || { echo "cli_rooms: only $checked includes between rooms: not the tree it expects"; exit 1; }
[ "$bad" -eq 0 ] && echo "cli_rooms: $checked includes between rooms, none upward"
exit "$bad"
