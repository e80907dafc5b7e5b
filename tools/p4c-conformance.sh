#!/usr/bin/env bash
# Measure how much of p4c's public bmv2 STF corpus `netsparse stf` passes.
#
# Usage: tools/p4c-conformance.sh DIR NETSPARSE_BIN [TIMEOUT_SECONDS]
#
# DIR holds p4c samples as pairs NAME-bmv2.p4 / NAME-bmv2.stf (files they
# `#include "..."` must sit in the same directory; DIR is passed as -I).
# The corpus is p4c's testdata/p4_16_samples; it is reference data for
# measurement only and is never checked into this repository.
#
# Every pair is run with a timeout and classified:
#   pass           the test passed (exit 0)
#   parse          compile error E0001-E0099 (preprocessor / syntax)
#   unsupported    compile error naming a construct we do not support
#   check          any other compile error (names, types, semantics)
#   stf-error      the STF script could not be run (syntax, unknown table...)
#   load-error     the switch refused the compiled artifact
#   wrong-output   the test ran and the packets out differ (exit 1)
#   crash          a panic, a signal or an unexpected exit status
#   timeout        no answer within the timeout
#
# Output: one line per file (bucket, name, first line of the reason), then a
# summary table.  Set CONF_LOG=DIR to keep every run's full output there.
set -u

if [ $# -lt 2 ]; then
    echo "usage: $0 DIR NETSPARSE_BIN [TIMEOUT_SECONDS]" >&2
    exit 2
fi
dir=$1
bin=$2
limit=${3:-20}
if [ ! -d "$dir" ]; then
    echo "error: $dir is not a directory" >&2
    exit 2
fi
if [ ! -x "$bin" ]; then
    echo "error: $bin is not an executable" >&2
    exit 2
fi
logdir=${CONF_LOG:-}
[ -n "$logdir" ] && mkdir -p "$logdir"

buckets="pass parse unsupported check stf-error load-error wrong-output crash timeout"
declare -A count
for b in $buckets; do count[$b]=0; done
total=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT

classify_compile() {
    # $1: file holding the diagnostics.
    if grep -qiE 'not supported|unsupported|E011[014]\b' "$1"; then
        echo unsupported
    elif grep -qE '\bE00[0-9][0-9]\b' "$1"; then
        echo parse
    else
        echo check
    fi
}

shopt -s nullglob
for stf in "$dir"/*-bmv2.stf; do
    name=$(basename "$stf" .stf)
    prog="$dir/$name.p4"
    [ -f "$prog" ] || continue
    total=$((total + 1))
    timeout --kill-after=5 "$limit" "$bin" stf -I "$dir" "$prog" "$stf" >"$out" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ]; then
        bucket=pass
    elif [ "$rc" -eq 1 ]; then
        bucket=wrong-output
    elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        bucket=timeout
    elif [ "$rc" -eq 2 ]; then
        if grep -q 'does not compile' "$out"; then
            bucket=$(classify_compile "$out")
        elif grep -q 'panicked' "$out"; then
            bucket=crash
        elif grep -qiE 'cannot load|artifact|unsupported by this target' "$out"; then
            bucket=load-error
        else
            bucket=stf-error
        fi
    else
        bucket=crash
    fi
    count[$bucket]=$((count[$bucket] + 1))
    # The first compile error, else the first error or failure line.
    reason=$(grep -m1 -E '^error\[E[0-9]+\]:' "$out")
    [ -n "$reason" ] || reason=$(grep -m1 -E 'error:|panicked|FAIL' "$out")
    reason=$(printf '%s' "$reason" | cut -c1-150)
    [ "$bucket" = pass ] && reason=""
    printf '%-13s %-50s %s\n' "$bucket" "$name" "$reason"
    [ -n "$logdir" ] && cp "$out" "$logdir/$name.log"
done

echo
echo "p4c bmv2 STF conformance: ${count[pass]} / $total pass"
printf '%-13s %5s\n' bucket count
for b in $buckets; do
    printf '%-13s %5d\n' "$b" "${count[$b]}"
done
