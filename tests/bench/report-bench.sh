#!/bin/bash
# SPDX-License-Identifier: MIT
# report-bench.sh - `iotap report` speed and memory on a long synthetic trace
#
#   tests/bench/report-bench.sh [RECORDS] [DIR]      (default 100000000, $TMPDIR)
#
# Writes a trace of RECORDS records with report-synth (a dense mixed stream:
# 8 threads, 64 files, writes, random reads, getattr, lookup, flush, fsync,
# 10 marked phases, a resource sample every 100 ms), then times:
#
#   read_trace        the trace reader alone (examples/read_trace): the floor
#   report            iotap report (phases from markers)
#   report --auto     iotap report --auto-phases (phases found automatically)
#   report --html     iotap report --html (adds the seek-map sample)
#   report --interval iotap report --interval 1s --csv
#
# each on one core (taskset -c 0), with user+system CPU time, records per
# CPU-second and peak RSS (GNU time). Needs the build directory: set
# IOTAP_BUILD, or run from the source tree with build/ in it. The trace
# takes about 1.2 bytes a record (120 MB for 10^8) and a minute to write.
set -u
N=${1:-100000000}
DIR=${2:-${TMPDIR:-/tmp}}
BUILD=${IOTAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
IOTAP=${IOTAP:-$BUILD/tools/iotap}
SYNTH=$BUILD/tests/unit/report-synth
READER=$BUILD/examples/read_trace
TR=$DIR/report-bench-$N.iotap

for x in "$IOTAP" "$SYNTH" "$READER"; do
	[ -x "$x" ] || { echo "report-bench: no $x (build first)" >&2; exit 77; }
done
command -v /usr/bin/time >/dev/null || { echo "report-bench: needs GNU time" >&2; exit 77; }
PIN=""
command -v taskset >/dev/null && PIN="taskset -c 0"

if [ ! -s "$TR" ]; then
	echo "# writing $N records to $TR"
	/usr/bin/time -f "# written in %e s, %M KiB peak" "$SYNTH" --records "$N" "$TR" >/dev/null ||
		exit 1
fi
recs=$("$IOTAP" info "$TR" | awk '$1 == "records" { print $2 }')
echo "# trace: $TR, $(stat -c %s "$TR") bytes, $recs records"
printf "| %-18s | %9s | %9s | %12s | %10s |\n" "run" "cpu s" "wall s" "records/s" "peak RSS"
printf "|%s|%s|%s|%s|%s|\n" "--------------------" "-----------" "-----------" "--------------" "------------"

run() {
	local name=$1
	shift
	local tf=$DIR/report-bench.time
	/usr/bin/time -o "$tf" -f "%U %S %e %M" $PIN "$@" >/dev/null 2>&1 ||
		{ echo "report-bench: '$*' failed" >&2; exit 1; }
	set -- $(tail -1 "$tf")
	rm -f "$tf"
	awk -v n="$name" -v u="$1" -v s="$2" -v e="$3" -v m="$4" -v r="$recs" 'BEGIN {
		c = u + s
		printf "| %-18s | %9.2f | %9.2f | %12.0f | %7.1f MB |\n", n, c, e, r / c, m / 1024 }'
}

run "read_trace" "$READER" "$TR"
run "report" "$IOTAP" report "$TR"
run "report --auto" "$IOTAP" report --auto-phases "$TR"
run "report --html" "$IOTAP" report "$TR" --html "$DIR/report-bench.html"
run "report --interval" "$IOTAP" report "$TR" --interval 1s --csv
rm -f "$DIR/report-bench.html"
[ -n "${KEEP:-}" ] || rm -f "$TR"
