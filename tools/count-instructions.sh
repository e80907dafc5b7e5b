#!/usr/bin/env bash
# Count the instructions one `netsparse sim` run spends, per simulated event
# and per device call, with valgrind's callgrind: exact and repeatable where
# wall-clock A/B on a shared or virtual machine moves 10-15 % between runs
# of one binary. Give two binaries to compare a change.
#
# Usage: tools/count-instructions.sh NETSPARSE_BIN [NETSPARSE_BIN ...] -- SIM_ARGS...
#
# Example (the figures of docs/benchmarks.md, "where a simulated packet's
# instructions go"):
#   tools/count-instructions.sh target/release/netsparse -- \
#     --gen rmat:scale=13,ef=5 --nodes 128 --racks 8 --k 16 --mode rig
#
# Each binary runs `sim SIM_ARGS --threads 1` under callgrind (about 50x
# slower than natively: keep the matrix small). Printed per binary: the
# program's and the event loop's instructions, the events, the event loop's
# instructions per event, and per device kind and entry point (a switch's
# `on_packet`, a SmartNIC's `on_timer`, ...) the calls and instructions per
# call. The callgrind files stay in $COUNT_DIR (default: a temporary
# directory, printed) for `callgrind_annotate --inclusive=yes FILE`.
# Needs valgrind (callgrind_annotate comes with it); the binary needs
# debug info for names (the release profile keeps it).
set -u

bins=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    bins+=("$1")
    shift
done
if [ $# -eq 0 ] || [ ${#bins[@]} -eq 0 ]; then
    echo "usage: $0 NETSPARSE_BIN [NETSPARSE_BIN ...] -- SIM_ARGS..." >&2
    exit 2
fi
shift
for b in "${bins[@]}"; do
    if [ ! -x "$b" ]; then
        echo "error: $b is not an executable" >&2
        exit 2
    fi
done
for tool in valgrind callgrind_annotate; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "error: $tool is not installed (Debian: apt-get install valgrind)" >&2
        exit 2
    fi
done
dir=${COUNT_DIR:-$(mktemp -d)}
mkdir -p "$dir" || exit 2
echo "callgrind files in $dir"

i=0
for b in "${bins[@]}"; do
    i=$((i + 1))
    cg="$dir/$i.callgrind"
    log="$dir/$i.log"
    # NETSPARSE_HUGEPAGES=0: no re-execution, which valgrind would not follow.
    if ! NETSPARSE_HUGEPAGES=0 valgrind --tool=callgrind --callgrind-out-file="$cg" \
        "$b" sim "$@" --threads 1 >"$log" 2>&1; then
        echo "error: $b sim $* failed under valgrind; see $log" >&2
        grep -v "^==" "$log" | tail -n 5 >&2
        exit 1
    fi
    events=$(grep -Eo '[0-9]+ events' "$log" | tail -n 1 | grep -Eo '[0-9]+')
    echo
    echo "== $b"
    callgrind_annotate --inclusive=yes --tree=calling "$cg" 2>/dev/null | awk -v events="${events:-0}" '
        function num(s) { gsub(",", "", s); return s + 0 }
        # The callee of a "calling" tree line: "name (Nx) [object]".
        function callee(line,   s) {
            s = line
            sub(/^ *[0-9,]+ \([ 0-9.]+%\) +> +/, "", s)
            sub(/ \([0-9,]+x\).*$/, "", s)
            return s
        }
        /PROGRAM TOTALS/ { total = num($1) }
        # The event loop: the windows (the parallel loop, also on one thread).
        /\* .*Engine<D,T>>::windows \[/ && !loop { loop = num($1) }
        # The devices, called from the cluster or engine dispatch: every
        # "Datapath>::on_packet / on_timer" callee line with its call count.
        / > .*as netsparse_externs::datapath::Datapath>::(on_packet|on_timer) \(/ {
            name = callee($0)
            if (name in seen) next
            seen[name] = 1
            calls = $0; sub(/^.* \(/, "", calls); sub(/x\).*$/, "", calls)
            kind = name; sub(/^.*:</, "", kind); sub(/^</, "", kind)
            sub(/ as netsparse_externs::datapath::Datapath>::/, " ", kind)
            devices += num($1)
            row[++rows] = sprintf("  %-58s %12.0f calls %10.0f instructions each", kind, num(calls), num($1) / (num(calls) > 0 ? num(calls) : 1))
        }
        END {
            printf "program:    %15.0f instructions\n", total
            printf "event loop: %15.0f instructions", loop
            if (events > 0) printf ", %.0f events, %.0f per event", events, loop / events
            printf "\n"
            for (r = 1; r <= rows; r++) print row[r]
            rest = loop - devices
            printf "  %-58s %12s       %10.0f instructions per event\n", "the rest (engine, and device work inlined into it)", "", (events > 0 ? rest / events : 0)
        }'
done
