#!/usr/bin/env bash
# Golden end-to-end tests of the ndtwin binary (as ninja's misc/output_test.py, simgrid's .tesh).
# Each case is a folder tests/cli/cases/NAME with:
#   args    the command line after `ndtwin` (one line; shell quoting allowed)
#   stdout  expected standard output          (optional: not compared if absent)
#   stderr  expected standard error           (optional: not compared if absent)
#   code    expected exit code (default 0)
#   nostderr  marker: stderr is not a golden (it carries wall times); UPDATE does not write it
# Usage: run_golden.sh path/to/ndtwin [case ...]. UPDATE=1 rewrites stdout/stderr/code from the
# binary's output: review the diff before committing (goldens change only with a reviewed diff).
# run_golden.sh path/to/ndtwin --shard K/N runs every N-th case from the K-th (K = 1..N) of the
# sorted list: ctest runs the goldens as N such tests (cli_golden_KofN) so `ctest -jJ` spreads them.
set -u
bin="$1"; shift
root="$(cd "$(dirname "$0")" && pwd)/cases"
shard=""
case "${1:-}" in --shard) shard="$2"; shift 2 ;; --shard=*) shard="${1#--shard=}"; shift ;; esac
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=($(ls "$root"))
if [ -n "$shard" ]; then
  k=${shard%/*}; n=${shard#*/}
  if ! [[ "$k" =~ ^[0-9]+$ && "$n" =~ ^[0-9]+$ ]] || [ "$k" -lt 1 ] || [ "$k" -gt "$n" ]; then
    echo "run_golden.sh: --shard wants K/N with 1 <= K <= N, got '$shard'" >&2; exit 2
  fi
  picked=()
  for i in "${!cases[@]}"; do [ $((i % n)) = $((k - 1)) ] && picked+=("${cases[$i]}"); done
  cases=("${picked[@]}")
fi
pass=0; fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for c in "${cases[@]}"; do
  d="$root/$c"
  args=$(cat "$d/args")
  eval "set -- $args"
  "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
  code=$?
  want_code=$(cat "$d/code" 2>/dev/null || echo 0)
  if [ "${UPDATE:-0}" = 1 ]; then
    cp "$tmp/out" "$d/stdout"; echo "$code" >"$d/code"
    [ -f "$d/nostderr" ] || cp "$tmp/err" "$d/stderr"
    echo "updated $c"; continue
  fi
  ok=1
  [ "$code" = "$want_code" ] || { echo "FAIL $c: exit code $code, want $want_code"; ok=0; }
  if [ -f "$d/stdout" ] && ! diff -u "$d/stdout" "$tmp/out" >"$tmp/diff"; then
    echo "FAIL $c: stdout differs"; head -40 "$tmp/diff"; ok=0
  fi
  if [ -f "$d/stderr" ] && ! diff -u "$d/stderr" "$tmp/err" >"$tmp/diff"; then
    echo "FAIL $c: stderr differs"; head -40 "$tmp/diff"; ok=0
  fi
  if [ $ok = 1 ]; then pass=$((pass+1)); else fail=$((fail+1)); fi
done
echo "$pass passed, $fail failed"
[ $fail = 0 ]
