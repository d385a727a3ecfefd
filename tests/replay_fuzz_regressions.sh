#!/usr/bin/env bash
# Every input the fuzzers ever crashed on, through the targets again: each
# regression file is named for its target (fuzz_trace_file-*,
# fuzz_trace_records-*) and replayed by that target's replay program (the
# target built without libFuzzer, with this build's sanitizers). A crash or
# a sanitizer report fails; no file may be left out.
# Usage: replay_fuzz_regressions.sh DIR REPLAY_DIR
dir=$1
replays=$2
passed=0
failed=0
for input in "$dir"/*; do
  [ -f "$input" ] || continue
  target=${input##*/}
  target=${target%%-*}
  if [ ! -x "$replays/replay_$target" ]; then
    echo "$(basename "$input"): no replay program for $target" >&2
    failed=$((failed + 1))
    continue
  fi
  if "$replays/replay_$target" "$input" >/dev/null 2>"$dir.err.$$"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "$(basename "$input"): replay failed" >&2
    tail -5 "$dir.err.$$" >&2
  fi
  rm -f "$dir.err.$$"
done
echo "$passed passed, $failed failed"
[ $failed -eq 0 ] && [ $passed -gt 0 ]
