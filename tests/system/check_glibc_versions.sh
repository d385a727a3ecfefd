#!/bin/sh
# check_glibc_versions.sh LIBRARY - fails when LIBRARY references a glibc
# symbol version above 2.28 (it would not load there), naming each offender.
# How the library keeps to 2.28: preload/core/glibc_versions.h.
set -eu
limit=2.28
objdump -T "$1" >/dev/null || { echo "objdump -T $1 failed"; exit 2; }
offenders=$(objdump -T "$1" | awk -v limit="$limit" '
  function newer(v, l,   a, b, i) {
    split(v, a, "."); split(l, b, ".")
    for (i = 1; i <= 3; i++) { if (a[i] + 0 != b[i] + 0) return a[i] + 0 > b[i] + 0 }
    return 0
  }
  match($0, /GLIBC_[0-9.]+/) {
    version = substr($0, RSTART + 6, RLENGTH - 6)
    if (newer(version, limit)) print "  " $NF " GLIBC_" version
  }')
if [ -n "$offenders" ]; then
  echo "$1 needs glibc newer than $limit for:"
  echo "$offenders"
  exit 1
fi
echo "$1: every glibc symbol version is $limit or older"
