#!/usr/bin/env bash
# test_package.sh BUILD - the .deb packages of tools/package promise the
# glibc their files need, no more and no less: each one's libc6 (>= V) is
# the newest GLIBC_ version objdump -T finds in the files it ships (or the
# library's oldest, when older), and the package that ships libprofinject.so
# installs where the library runs: on glibc as old as
# tests/system/check_glibc_versions.sh checks it for.
set -euo pipefail
build=$1
here=$(cd "$(dirname "$0")" && pwd)
command -v dpkg-deb >/dev/null && command -v cpack >/dev/null ||
  { echo "SKIP: dpkg-deb or cpack missing"; exit 77; }
oldest=$(sed -n 's/^limit=//p' "$here/../system/check_glibc_versions.sh")
work=$(mktemp -d /tmp/profinject-package-test-XXXXXX)
trap 'rm -rf "$work"' EXIT
BUILD_DIR=$build "$here/../../tools/package" --no-setup --no-wheel "$work/out" >/dev/null

newest() { printf '%s\n' "$@" | sort -V | tail -n 1; }
library_package=
for deb in "$work"/out/*.deb; do
  name=$(basename "$deb")
  root=$work/root-$name
  dpkg-deb -x "$deb" "$root"
  mapfile -t versions < <(find "$root" -type f -print0 | xargs -0 objdump -T |
    grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/^GLIBC_//' | sort -uV)
  needed=$(newest "$oldest" "${versions[@]}")
  depends=$(dpkg-deb -f "$deb" Depends)
  promised=$(grep -o 'libc6 (>= [0-9.]*)' <<<"$depends" | sed 's/libc6 (>= //; s/)//')
  echo "$name: objdump -T: newest GLIBC_$(newest "${versions[@]}"); Depends: $depends"
  [ "$promised" = "$needed" ] ||
    { echo "FAIL: $name depends on libc6 (>= ${promised:-nothing}), its files need $needed"; exit 1; }
  [ -e "$root/usr/lib/profinject/libprofinject.so" ] || continue
  library_package=$name
  [ "$(newest "$promised" "$oldest")" = "$oldest" ] ||
    { echo "FAIL: $name ships the library, which runs on glibc $oldest, but depends on libc6 (>= $promised)"; exit 1; }
done
[ -n "$library_package" ] || { echo "FAIL: no package ships libprofinject.so"; exit 1; }
echo "each package depends on the glibc its files need; $library_package installs on $oldest"
