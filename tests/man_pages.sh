#!/bin/bash
# The man pages the build wrote (build/cli/man): one per command and clef(1), each rendering
# without a groff warning, each with the sections every page promises, every flag `--help` lists
# for its command (so a page cannot fall behind --help), and, in ENVIRONMENT, every variable clef
# reads (the tests' hermetic list).
#
#   man_pages.sh CLEF MAN_DIR "VARIABLE …"
set -u
clef=$1
man_dir=$2
variables=$3
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pages=0
for command in "" ask batch merge mock cache eval models doctor completion; do
  page="clef${command:+-$command}"
  file="$man_dir/$page.1.gz"
  [ -f "$file" ] || { fail "$page: no $file"; continue; }
  pages=$((pages + 1))
  warnings=$(zcat "$file" | groff -ww -man -z -Tutf8 2>&1)
  [ -z "$warnings" ] || fail "$page: groff says: $warnings"
  rendered=$(zcat "$file" | MANWIDTH=200 man -l - 2>/dev/null | col -b)
  for section in NAME SYNOPSIS DESCRIPTION OPTIONS EXAMPLES "EXIT STATUS" ENVIRONMENT FILES "SEE ALSO"; do
    grep -q "^$section\$" <<< "$rendered" || fail "$page: no $section section"
  done
  # The flags --help lists for the command, each in the page's text as typed.
  if [ -n "$command" ]; then help=$("$clef" "$command" --help 2>&1); else help=$("$clef" --help 2>&1); fi
  # Each option line of --help starts with its names: "  -o,--output TEXT  …".
  flags=$(grep -E '^ +-' <<< "$help" | awk '{print $1}' | tr ',' '\n' | grep -E '^--[a-z]' | sort -u)
  [ -n "$flags" ] || fail "$page: --help lists no flags"
  for flag in $flags; do
    grep -qE -- "(^|[^a-z0-9-])$flag([^a-z0-9-]|\$)" <<< "$rendered" || fail "$page: $flag is in --help, not in the page"
  done
  count=$(wc -w <<< "$flags")
  echo "ok: $page: $count flags of --help, every section, no groff warning"
  if [ -z "$command" ]; then
    for variable in $variables; do
      grep -q -- "$variable" <<< "$rendered" || fail "clef(1): ENVIRONMENT lacks $variable"
    done
    grep -q "clef-batch(1)" <<< "$rendered" || fail "clef(1): SEE ALSO lacks clef-batch(1)"
  fi
done
[ "$pages" -eq 10 ] || fail "$pages pages, not 10"
[ "$failures" -eq 0 ] && echo "man pages: all $pages complete"
exit "$failures"
