#!/usr/bin/env bash
# Every input the fuzzers ever crashed the analyzer with, through the
# reports again: each must end with status 0 or 2 (bad input), never a
# crash or a sanitizer report. Usage: replay_fuzz_regressions.sh ANALYZER DIR
analyzer=$1
dir=$2
passed=0
failed=0
for input in "$dir"/fuzz_trace_file-*; do
  [ -f "$input" ] || continue
  out=$(mktemp -d)
  "$analyzer" "$input" --json "$out/r.json" --html "$out/r.html" --chrome-trace "$out/t.json" \
    >/dev/null 2>"$out/err"
  status=$?
  if [ $status -eq 0 ] || [ $status -eq 2 ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "$(basename "$input"): exit status $status" >&2
    tail -5 "$out/err" >&2
  fi
  rm -rf "$out"
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
