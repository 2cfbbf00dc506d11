#!/bin/bash
# SPDX-License-Identifier: MIT
# export-bench.sh - `iotap export` size and speed against the trace
#
#   tests/bench/export-bench.sh [TRACE...]                (as root for --bonnie)
#   BONNIE=DIR tests/bench/export-bench.sh [TRACE...]     also capture bonnie++ on DIR
#   SYNTH=N tests/bench/export-bench.sh [TRACE...]        also a report-synth trace of N records
#
# For each trace: its size, the Parquet export's (calls table) and the
# ratio, the CSV export's, and the export's speed on one core (taskset -c 0):
# calls (rows) per CPU-second, the CPU time (perf stat's task-clock, the
# whole process: start, reading, writing), best of ROUNDS (default 3). BONNIE=DIR captures `bonnie++ -s 512 -r 256 -n 8 -f`
# through a mount of DIR first (the e2e case bonnie-real's run); SYNTH=N
# writes report-synth's dense mixed stream of N records (8 threads, 64
# files). Needs the build directory: IOTAP_BUILD, or build/ in the tree.
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${IOTAP_BUILD:-$SRC/build}
IOTAP=$BUILD/tools/iotap
ROUNDS=${ROUNDS:-3}
W=$(mktemp -d "${TMPDIR:-/tmp}/export-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
traces=("$@")

if [ -n "${BONNIE:-}" ]; then
	mkdir -p "$BONNIE/b" "$BONNIE/m"
	"$IOTAP" mount "$BONNIE/b" "$BONNIE/m" --trace "$W/bonnie.iotap" --force || exit 1
	(cd "$W" && bonnie++ -d "$BONNIE/m" -s 512 -r 256 -n 8 -f -u root -q > /dev/null 2>&1)
	"$IOTAP" umount "$BONNIE/m" || exit 1
	traces+=("$W/bonnie.iotap")
fi
if [ -n "${SYNTH:-}" ]; then
	"$BUILD/tests/unit/report-synth" --records "$SYNTH" "$W/synth.iotap" > /dev/null || exit 1
	traces+=("$W/synth.iotap")
fi

printf "%-24s %12s %12s %12s %6s %12s %10s %8s %12s\n" trace records trace_B calls parquet_B \
	ratio csv_B cpu_s calls/cpu_s
for t in "${traces[@]}"; do
	best=""
	for r in $(seq "$ROUNDS"); do
		perf stat -x, -e task-clock -o "$W/time" taskset -c 0 "$IOTAP" export "$t" \
			"$W/c.parquet" --force --no-progress 2> "$W/err" || { cat "$W/err" >&2; exit 1; }
		cpu=$(awk -F, '/task-clock/ { printf "%.3f", $1 / 1000 }' "$W/time")
		if [ -z "$best" ] || awk -v a="$cpu" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$cpu
		fi
	done
	"$IOTAP" export "$t" "$W/c.csv" --force --no-progress || exit 1
	calls=$(($(wc -l < "$W/c.csv") - 1))
	recs=$("$IOTAP" info "$t" 2> /dev/null | awk '/^records/ { gsub(",", "", $2); print $2; exit }')
	tb=$(stat -c %s "$t")
	pb=$(stat -c %s "$W/c.parquet")
	cb=$(stat -c %s "$W/c.csv")
	printf "%-24s %12s %12s %12s %12s %6.2f %12s %8s %12.0f\n" "$(basename "$t")" "${recs:-?}" "$tb" \
		"$calls" "$pb" "$(echo "$pb / $tb" | bc -l)" "$cb" "$best" \
		"$(echo "$calls / $best" | bc -l)"
done
