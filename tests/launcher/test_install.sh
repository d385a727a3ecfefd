#!/usr/bin/env bash
# test_install.sh CMAKE BUILD PROGRAM - install into a temporary prefix, move
# the prefix elsewhere, and from there profile PROGRAM and analyse it with
# no variable set: the launcher finds the library and the analyzer from its
# own location. PROFINJECT_LIB still wins when set.
set -euo pipefail
cmake=$1 build=$2 program=$3
work=$(mktemp -d /tmp/profinject-install-XXXXXX)
trap 'rm -rf "$work"' EXIT
unset PROFINJECT_LIB LD_PRELOAD PROFINJECT_OUTPUT

"$cmake" --install "$build" --prefix "$work/first" >/dev/null
for f in bin/profinject bin/profinject-analyze lib/profinject/libprofinject.so; do
  [ -e "$work/first/$f" ] || { echo "not installed: $f"; exit 1; }
done
mv "$work/first" "$work/moved"
cd "$work"
"$work/moved/bin/profinject" run -o traces -- "$program" "$work" 3 2>run.err ||
  { cat run.err; echo "launcher failed"; exit 1; }
ls traces/*.pitrace.zst >/dev/null || { echo "no trace written"; exit 1; }
"$work/moved/bin/profinject" analyze traces --json report.json >report.txt 2>analyze.err ||
  { cat analyze.err; echo "analyze failed"; exit 1; }
grep -q "open failed ENOENT" report.txt || { cat report.txt; echo "report lacks the failed opens"; exit 1; }
"${PYTHON:-python3}" -c 'import json, sys; assert json.load(open(sys.argv[1]))["processes"]' report.json

# PROFINJECT_LIB is honoured before the library beside the launcher
if PROFINJECT_LIB=$work/nowhere.so "$work/moved/bin/profinject" run -o t2 -- /bin/true 2>lib.err; then
  echo "PROFINJECT_LIB was ignored"; exit 1
fi
grep -q "nowhere.so not found" lib.err || { cat lib.err; exit 1; }
echo "installed, moved, recorded and analysed"
