#!/usr/bin/env bash
# Every relative link of the README and docs/ goes somewhere: the file exists and a #fragment is
# a heading of it, as GitHub makes anchors (lower case, punctuation dropped, spaces to '-').
# Prints each broken link and exits 1 if there is one.
#
#   tests/doc_links.sh SOURCE_DIR
set -u
root="${1:?usage: doc_links.sh SOURCE_DIR}"
export LC_ALL=C
# anchors FILE: one per heading outside code blocks.
anchors() {
  awk '/^```/{code=!code; next} !code && /^#+ /{sub(/^#+ /, ""); print}' "$1" |
    tr 'A-Z' 'a-z' | tr -cd 'a-z0-9 _\n-' | tr ' ' '-'
}
bad=0
checked=0
for file in "$root/README.md" "$root"/docs/*.md; do
  dir="$(dirname "$file")"
  # Links outside inline code and code blocks: [text](target), target not a URL.
  while IFS= read -r target; do
    case "$target" in http*|mailto:*) continue ;; esac
    path="${target%%#*}"
    fragment=""
    [[ "$target" == *"#"* ]] && fragment="${target#*#}"
    destination="$file"
    [ -n "$path" ] && destination="$dir/$path"
    checked=$((checked + 1))
    if [ ! -e "$destination" ]; then
      echo "doc_links: ${file#"$root"/}: $target: no such file"
      bad=1
    elif [ -n "$fragment" ] && ! anchors "$destination" | grep -qxF "$fragment"; then
      echo "doc_links: ${file#"$root"/}: $target: no such heading"
      bad=1
    fi
  done < <(awk '/^```/{code=!code; next} !code' "$file" | sed 's/`[^`]*`//g' |
           grep -o '\](\([^)]*\))' | sed 's/^](\(.*\))$/\1/')
done
[ "$checked" -gt 20 ] || { echo "doc_links: only $checked links: not the documents it expects"; exit 1; }
[ "$bad" -eq 0 ] && echo "doc_links: $checked links, every one resolves"
exit "$bad"
