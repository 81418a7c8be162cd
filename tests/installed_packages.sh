#!/bin/bash
# The Debian packages, installed as a user installs them, then used as a user would, then
# removed. Run as root on a machine where clef is not installed (.ci/run does):
#
#   tests/installed_packages.sh DEB_DIR
#
# apt-get install of the four packages from DEB_DIR (dpkg-buildpackage leaves them in the
# tree's parent, with the -dbgsym packages, which are not installed); then clef --version, man -w clef-batch, bash's
# completion from where bash-completion looks, zsh's and fish's scripts where those shells look,
# a consumer built with pkg-config and one with find_package (shared, then static) against the
# installed files only, and `clef ask` answered by `clef mock`, both from /usr/bin; then
# apt-get remove, and nothing of clef left behind.
set -euo pipefail
debs=$(cd "${1:?usage: installed_packages.sh DEB_DIR}" && pwd)
source_dir=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
mock_pid=""
cleanup() {
  [ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
step() { echo "== $*"; }

if dpkg -s clef libclef-dev > /dev/null 2>&1 || [ -e /usr/include/clef ]; then
  echo "FAIL: clef is already installed here; this check needs a machine without it"
  exit 1
fi

step "apt-get install clef libclef0.1 libclef-dev libclef-mock-dev from $debs"
apt-get install -y --no-install-recommends "$debs"/clef_*.deb "$debs"/libclef0.1_*.deb \
  "$debs"/libclef-dev_*.deb "$debs"/libclef-mock-dev_*.deb
dpkg -s clef libclef-dev libclef-mock-dev libclef0.1 | grep -E '^(Package|Version|Depends|Multi-Arch):'

step "clef runs on libclef0.1's libclef.so.0.1, not a copy of the library"
ldd /usr/bin/clef | grep -E 'libclef\.so\.0\.1 => /(usr/)?lib/' || { echo "FAIL: clef does not load libclef.so.0.1"; exit 1; }
dpkg -s clef | grep -E '^Depends: .*libclef0\.1' || { echo "FAIL: clef does not depend on libclef0.1"; exit 1; }
for package in libclef0.1 libclef-dev libclef-mock-dev; do
  dpkg -s "$package" | grep -qx 'Multi-Arch: same' || { echo "FAIL: $package is not Multi-Arch: same"; exit 1; }
done

step "libclef-dev pulls in no cpp-httplib or RE2 (only libclef-mock-dev does)"
development_depends=$(dpkg -s libclef-dev | sed -n 's/^Depends: //p')
if grep -qE 'httplib|re2' <<< "$development_depends"; then
  echo "FAIL: libclef-dev depends on $development_depends"
  exit 1
fi
dpkg -s libclef-mock-dev | sed -n 's/^Depends: /libclef-mock-dev depends on /p'

step "clef --version (from $(command -v clef))"
[ "$(command -v clef)" = /usr/bin/clef ] || { echo "FAIL: clef is not /usr/bin/clef"; exit 1; }
clef --version

step "man -w clef-batch"
man -w clef-batch
for page in clef clef-ask clef-batch clef-eval clef-mock clef-merge; do
  man -w "$page" > /dev/null || { echo "FAIL: no man page $page"; exit 1; }
done
page=$(man clef-batch 2>/dev/null | col -b)  # whole, then searched: grep -q would cut the pipe
grep -q -- '--output-format' <<< "$page" || { echo "FAIL: man clef-batch lacks --output-format"; exit 1; }

step "completion, where each shell looks"
registered=$(bash -c 'source /usr/share/bash-completion/completions/clef; complete -p clef')
echo "$registered"
[ "$registered" = "complete -F _clef clef" ] || { echo "FAIL: bash: $registered"; exit 1; }
test -s /usr/share/zsh/vendor-completions/_clef || { echo "FAIL: no zsh completion"; exit 1; }
test -s /usr/share/fish/vendor_completions.d/clef.fish || { echo "FAIL: no fish completion"; exit 1; }
if command -v fish > /dev/null; then
  offered=$(fish -c 'complete -C "clef ba"' | cut -f1)
  echo "fish offers for 'clef ba': $offered"
  grep -qx batch <<< "$offered" || { echo "FAIL: fish does not offer batch"; exit 1; }
fi

step "a consumer built with pkg-config --cflags --libs clef (libclef.so from /usr/lib)"
flags=$(pkg-config --cflags --libs clef)
echo "pkg-config: $flags"
# shellcheck disable=SC2086
g++ -std=c++17 "$source_dir/tests/consumers/consumer.cpp" -o "$work/pkg_consumer" $flags
readelf -d "$work/pkg_consumer" | grep -F 'Shared library: [libclef.so' || { echo "FAIL: not linked to libclef.so"; exit 1; }
"$work/pkg_consumer" | grep -F 'clef 0.' || { echo "FAIL: the pkg-config consumer did not run"; exit 1; }
mock_flags=$(pkg-config --cflags --libs clef-mock)
# shellcheck disable=SC2086
g++ -std=c++17 "$source_dir/tests/consumers/mock_consumer.cpp" -o "$work/pkg_mock_consumer" $mock_flags
"$work/pkg_mock_consumer" | grep -F 'mock decided refund' || { echo "FAIL: the pkg-config mock consumer"; exit 1; }

for linkage in shared static; do
  step "a consumer built with find_package(clef) ($linkage), no prefix given"
  static=OFF
  [ "$linkage" = static ] && static=ON
  cmake -S "$source_dir/tests/consumers/find_package" -B "$work/find_package_$linkage" \
    -DCLEF_USE_STATIC_LIBS=$static > /dev/null
  cmake --build "$work/find_package_$linkage" -j 2 > /dev/null
  needed=$(readelf -d "$work/find_package_$linkage/consumer" | grep -c 'Shared library: \[libclef.so' || true)
  if [ "$linkage" = shared ] && [ "$needed" -ne 1 ]; then echo "FAIL: not linked to libclef.so"; exit 1; fi
  if [ "$linkage" = static ] && [ "$needed" -ne 0 ]; then echo "FAIL: linked to libclef.so"; exit 1; fi
  "$work/find_package_$linkage/consumer" | grep -F 'clef 0.'
  "$work/find_package_$linkage/mock_consumer" | grep -F 'mock decided refund'
done

step "clef ask, answered by clef mock, both from /usr/bin"
clef mock --port 0 > "$work/mock-url.txt" &
mock_pid=$!
for _ in $(seq 1 200); do grep -q '^http' "$work/mock-url.txt" && break; sleep 0.05; done
url=$(head -1 "$work/mock-url.txt")
[ -n "$url" ] || { echo "FAIL: the installed clef mock printed no URL"; exit 1; }
answer=$(clef ask --host "$url" --format values \
  --state-json '{"ticket": "I was charged twice. Please refund the extra payment."}' \
  --choice 'team: Which team should handle this ticket? | billing=Payments and refunds | technical=Bugs and integrations | other=None of the above')
kill "$mock_pid"
wait "$mock_pid" 2> /dev/null || true
mock_pid=""
[ "$answer" = billing ] || { echo "FAIL: the installed clef answered '$answer', not billing"; exit 1; }
echo "clef ask against clef mock: $answer"

step "apt-get remove"
apt-get remove -y --purge clef libclef-dev libclef-mock-dev "$(dpkg -S /usr/lib/*/libclef.so.0* | head -1 | cut -d: -f1)"
left=$(ls -d /usr/bin/clef /usr/bin/clef-mock /usr/include/clef /usr/lib/*/libclef* /usr/lib/*/cmake/clef \
  /usr/share/man/man1/clef*.1.gz /usr/share/bash-completion/completions/clef 2>/dev/null || true)
[ -z "$left" ] || { echo "FAIL: left behind: $left"; exit 1; }
echo "installed packages: every check passed, and removed"
