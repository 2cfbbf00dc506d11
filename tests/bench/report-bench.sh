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
#
# Real captures: CAPTURES="a.iotap b.iotap" (e.g. a bonnie++ and a pgbench
# run captured through `iotap mount`) times the RUNS (default `report`,
# `dump`, `dump-csv` and `dump-json`: report, dump, dump --csv, dump --json,
# output to /dev/null) of each capture with each decoder thread count in
# THREADS (default "all 1": IOTAP_READ_THREADS unset, i.e. the reader's own
# default -- one thread since 99f048c, one per CPU before -- and 1; e.g.
# THREADS="1 2"), ROUNDS times (default 3); with BASELINE=PATH
# (an older iotap binary) the same commands of that binary run interleaved
# with this one's, round by round, so the ratio is measured side by side.
# REPS=K runs each command K times under one timer (a capture of a few
# hundred thousand records reads in 0.1 s: GNU time's 10 ms steps and the
# process start weigh); the figures are per run. CALLGRIND=1 first counts
# instructions (valgrind --tool=callgrind, one decoder thread) of report,
# dump and dump --csv of each capture and binary: deterministic on a busy
# machine, where CPU seconds are not. RECORDS=0 skips the synthetic part.
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

real_captures() {
	local rounds=${ROUNDS:-3} bins="$IOTAP" cap b r name recs
	[ -n "${BASELINE:-}" ] && bins="${BASELINE} $IOTAP"
	printf "| %-34s | %-8s | %5s | %7s | %7s | %13s | %11s | %9s |\n" "capture, run" "binary" \
		"round" "cpu s" "wall s" "records/cpu-s" "records/s" "peak RSS"
	printf "|%s|%s|%s|%s|%s|%s|%s|%s|\n" "------------------------------------" "----------" \
		"-------" "---------" "---------" "---------------" "-------------" "-----------"
	for cap in $CAPTURES; do
		recs=$("$IOTAP" info "$cap" | awk '$1 == "records" { print $2 }')
		echo "# $cap: $recs records, $(stat -c %s "$cap") bytes" >&2
		for r in $(seq 1 "$rounds"); do
			for name in ${RUNS:-report dump dump-csv dump-json}; do
				for t in ${THREADS:-all 1}; do
					for b in $bins; do
						real_run "$(basename "$cap") $name t=$t" "$b" "$r" \
							"$recs" "$name" "$cap" "$t"
					done
				done
			done
		done
	done
}

# The command line of run @1 (report, dump...) of binary @2 on capture @3.
real_cmd() {
	case $1 in
	report) echo "$2 report $3" ;;
	dump) echo "$2 dump $3" ;;
	dump-csv) echo "$2 dump --csv $3" ;;
	dump-json) echo "$2 dump --json $3" ;;
	esac
}

# Run @5 of binary @2 on capture @6 with @7 decoder threads ("all": the default).
real_run() {
	local label=$1 bin=$2 round=$3 recs=$4 what=$5 cap=$6 threads=$7 tf=$DIR/report-bench.time
	local reps=${REPS:-1} tag=new env=""
	[ "$bin" = "${BASELINE:-}" ] && tag=baseline
	[ "$threads" = all ] || env="env IOTAP_READ_THREADS=$threads"
	/usr/bin/time -o "$tf" -f "%U %S %e %M" bash -c \
		'for i in $(seq "$1"); do $2 > /dev/null 2>&1 || exit 1; done' _ "$reps" \
		"$env $(real_cmd "$what" "$bin" "$cap")" ||
		{ echo "report-bench: $bin $what $cap failed" >&2; exit 1; }
	set -- $(tail -1 "$tf")
	rm -f "$tf"
	awk -v n="$label" -v b="$tag" -v k="$round" -v u="$1" -v s="$2" -v e="$3" -v m="$4" \
		-v r="$recs" -v reps="$reps" 'BEGIN { u /= reps; s /= reps; e /= reps
		c = u + s; if (e <= 0) e = 0.01; if (c <= 0) c = 0.01
		printf "| %-34s | %-8s | %5d | %7.3f | %7.3f | %13.0f | %11.0f | %6.1f MB |\n",
			n, b, k, c, e, r / c, r / e, m / 1024 }'
}

# Instructions a record (callgrind, one decoder thread) of each capture, binary and command.
real_callgrind() {
	local bins="$IOTAP" cap b what recs ir tag cg=$DIR/report-bench.cg

	command -v valgrind >/dev/null || { echo "report-bench: CALLGRIND=1 needs valgrind" >&2; exit 77; }
	[ -n "${BASELINE:-}" ] && bins="${BASELINE} $IOTAP"
	printf "| %-28s | %-8s | %15s | %12s |\n" "capture, run" "binary" "instructions" "per record"
	printf "|%s|%s|%s|%s|\n" "------------------------------" "----------" "-----------------" \
		"--------------"
	for cap in $CAPTURES; do
		recs=$("$IOTAP" info "$cap" | awk '$1 == "records" { print $2 }')
		for what in report dump dump-csv; do
			for b in $bins; do
				tag=new
				[ "$b" = "${BASELINE:-}" ] && tag=baseline
				IOTAP_READ_THREADS=1 valgrind --tool=callgrind --callgrind-out-file="$cg" \
					$(real_cmd "$what" "$b" "$cap") > /dev/null 2> "$cg.err" ||
					{ echo "report-bench: callgrind $b $what $cap failed" >&2; exit 1; }
				ir=$(awk '/I *refs:/ { gsub(",", "", $NF); print $NF }' "$cg.err")
				rm -f "$cg" "$cg.err"
				awk -v n="$(basename "$cap") $what" -v b="$tag" -v i="$ir" -v r="$recs" \
					'BEGIN { printf "| %-28s | %-8s | %15.0f | %12.0f |\n", n, b, i, i / r }'
			done
		done
	done
}

if [ -n "${CAPTURES:-}" ]; then
	echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load average: $(cut -d' ' -f1-3 /proc/loadavg)"
	[ -n "${CALLGRIND:-}" ] && real_callgrind
	real_captures
	echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
	[ "$N" = 0 ] && exit 0
fi

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
