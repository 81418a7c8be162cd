#!/usr/bin/env bash
# No source file over 450 lines (issue 30: files sized to one job). A file that grows past it
# does two jobs; split it along them. Usage: file_size.sh ROOT_DIR...
set -euo pipefail
limit=450
status=0
count=0
for root in "$@"; do
  while IFS= read -r -d '' file; do
    lines=$(wc -l < "$file")
    count=$((count + 1))
    if [ "$lines" -gt "$limit" ]; then
      echo "$file: $lines lines (at most $limit): split it along the jobs it does"
      status=1
    fi
  done < <(find "$root" \( -name '*.cpp' -o -name '*.hpp' \) -print0 | sort -z)
done
[ "$status" -eq 0 ] && echo "$count files, none over $limit lines"
exit $status
