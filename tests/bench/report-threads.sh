#!/bin/bash
# SPDX-License-Identifier: MIT
# report-threads.sh - `iotap report --threads N` against --threads 1, side by side
#
#   tests/bench/report-threads.sh [DIR]          (default $TMPDIR)
#
# Writes a synthetic trace of RECORDS records (default 20000000; the issue's
# figure is RECORDS=100000000, about 120 MB and a minute or two to write)
# with report-synth (8 threads, 64 files, 10 marked phases, samples; kept
# in DIR for the next run), then runs `iotap report --threads N` for each N
# in THREADS (default "1 2") ROUNDS times (default 5), interleaved round by
# round, output to a file, and prints each run's wall and CPU (user +
# system) seconds, then per N the median wall and CPU and the wall ratio
# against the first N, then, from the last round, what each N's windows
# did (IOTAP_REPORT_DEBUG: windows, chunk reads, CPU of each step; "one
# pass" where it read the trace in one pass) and its system time (fresh
# memory: what its first touch costs depends on the host and the page
# size, 0.38 against 2.1-2.5 ms a MB for 4 KiB and 2 MiB pages on the
# project's VM, BENCHMARKS.md "Session 20"). Every output is compared with
# the first's (cmp):
# a difference fails the bench. RUN="--auto-phases" (or any report
# options) times that report instead. TRACE=FILE times an existing trace
# (a capture) instead of the synthetic one. N 0 in THREADS runs the report
# without --threads (its default), e.g. THREADS="0 1 2".
#
# The host's own ceiling: CONTROL=1 also runs, in each round, N
# independent one-pass reports of the trace at once (each pinned to its own
# CPU where taskset is there) for each N > 1 in THREADS, and prints the
# throughput they reach against one alone (N x one's wall / the slowest
# one's): what N threads can give at best on this host now, whatever the
# report does. On a VM whose CPUs share a core or its memory with others,
# it is well under N, and --threads N cannot beat it.
#
# On a machine others load, wall times say little: PERF=1 also records
# each run once with `perf record -e task-clock` and prints every
# thread's share of the CPU time; the busiest thread's CPU seconds bound
# the wall time from below whatever the load (the critical path).
# Needs the build directory: set IOTAP_BUILD, or run from the source tree
# with build/ in it; or IOTAP and SYNTH, the programs themselves (a bundle
# for another host: tests/bench/report-bundle.sh).
set -u
DIR=${1:-${TMPDIR:-/tmp}}
N=${RECORDS:-20000000}
BUILD=${IOTAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
IOTAP=${IOTAP:-$BUILD/tools/iotap}
SYNTH=${SYNTH:-$BUILD/tests/unit/report-synth}
TR=${TRACE:-$DIR/report-bench-$N.iotap}
ROUNDS=${ROUNDS:-5}
THREADS=${THREADS:-1 2}
RUN=${RUN:-}

[ -x "$IOTAP" ] || { echo "report-threads: no $IOTAP (build first)" >&2; exit 77; }
[ -n "${TRACE:-}" ] || [ -x "$SYNTH" ] || { echo "report-threads: no $SYNTH (build first)" >&2; exit 77; }
[ -z "${TRACE:-}" ] || [ -s "$TRACE" ] || { echo "report-threads: no trace $TRACE" >&2; exit 1; }
# the report's thread option for N (0: none, the default)
topt() { [ "$1" = 0 ] || echo "--threads $1"; }
# timed TIMES ERR CMD...: CMD with its stderr in ERR, and "wall user system"
# seconds in TIMES -- bash's own time, so that a host where nothing can be
# installed (no GNU time, no bc: report-bundle.sh) runs this too
timed() {
	local times=$1 err=$2 TIMEFORMAT='%3R %3U %3S'
	shift 2
	{ time "$@" 2> "$err"; } 2> "$times"
}
calc() { awk "BEGIN { printf \"%.2f\", $1 }"; }	# calc EXPR: EXPR to 2 decimals
if [ ! -s "$TR" ]; then
	echo "# writing $TR ($N records)" >&2
	"$SYNTH" --records "$N" "$TR" > /dev/null || { echo "report-synth failed" >&2; exit 1; }
fi
OUT=$(mktemp -d "${TMPDIR:-/tmp}/report-threads.XXXXXX")
trap 'rm -rf "$OUT"' EXIT

# records and chunks: a trace written before the chunks went from 1 MiB to
# 128 KiB raw (BENCHMARKS.md, "Session 17") splits otherwise, so say which
echo "# trace: $TR, $(stat -L -c %s "$TR") bytes, $("$IOTAP" info "$TR" | awk '
	$1 == "records" { r = $2 }
	$1 == "file" && $2 == "size" { for (i = 1; i <= NF; i++) if ($i ~ /^chunks\)?$/) c = $(i - 1) }
	END { printf "%s records in %s chunks (%.0f a chunk)", r, c, c ? r / c : 0 }')"
echo "# host: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start"
echo "# command: iotap report --threads N $RUN TRACE > FILE (N 0: no --threads)"
printf "| %5s | %7s | %7s | %7s | %7s |\n" "round" "threads" "wall s" "cpu s" "sys s"
printf "|%s|%s|%s|%s|%s|\n" "-------" "---------" "---------" "---------" "---------"
for r in $(seq 1 "$ROUNDS"); do
	for t in $THREADS; do
		# shellcheck disable=SC2086
		IOTAP_REPORT_DEBUG=1 timed "$OUT/time" "$OUT/err" "$IOTAP" report $(topt "$t") $RUN "$TR" \
			> "$OUT/out.$t" || { cat "$OUT/err" >&2; exit 1; }
		read -r w u s < "$OUT/time"
		echo "$t $w $(calc "$u + $s") $s" >> "$OUT/runs"
		printf "| %5s | %7s | %7s | %7s | %7s |\n" "$r" "$t" "$w" "$(calc "$u + $s")" "$s"
		# the last round's: what the windows did
		grep -h '^iotap report: ' "$OUT/err" | sed "s/^iotap report: [^:]*: /--threads $t: /" > "$OUT/dbg.$t"
	done
	if [ "${CONTROL:-0}" = 1 ]; then
		for t in $THREADS; do
			[ "$t" -gt 1 ] || continue
			pids=""
			for i in $(seq 1 "$t"); do
				pin=""
				command -v taskset >/dev/null && pin="taskset -c $(( (i - 1) % $(nproc) ))"
				# shellcheck disable=SC2086
				timed "$OUT/ctime.$i" "$OUT/cerr.$i" $pin "$IOTAP" report --threads 1 \
					$RUN "$TR" > /dev/null &
				pids="$pids $!"
			done
			for p in $pids; do
				wait "$p" || { cat "$OUT"/cerr.* >&2; echo "report-threads: a control run failed" >&2; exit 1; }
			done
			w=$(awk '{ print $1 }' "$OUT"/ctime.* | sort -n | tail -1)
			rm -f "$OUT"/ctime.* "$OUT"/cerr.*
			echo "$t $w" >> "$OUT/control"
			printf "| %5s | %7s | %7s | %7s | %7s |\n" "$r" "${t} x 1" "$w" "-" "-"
		done
	fi
	first=${THREADS%% *}
	for t in $THREADS; do
		cmp -s "$OUT/out.$first" "$OUT/out.$t" ||
			{ echo "report-threads: --threads $t printed another report" >&2; exit 1; }
	done
done
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg) at the end; outputs identical"
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
printf "\n| %7s | %13s | %12s | %12s | %14s |\n" "threads" "median wall s" "median cpu s" "median sys s" \
	"wall ratio 1:N"
printf "|%s|%s|%s|%s|%s|\n" "---------" "---------------" "--------------" "--------------" "----------------"
base=""
for t in $THREADS; do
	w=$(awk -v t="$t" '$1 == t { print $2 }' "$OUT/runs" | median)
	c=$(awk -v t="$t" '$1 == t { print $3 }' "$OUT/runs" | median)
	y=$(awk -v t="$t" '$1 == t { print $4 }' "$OUT/runs" | median)
	[ -n "$base" ] || base=$w
	printf "| %7s | %13s | %12s | %12s | %14s |\n" "$t" "$w" "$c" "$y" "$(calc "$base / $w")"
done
echo
echo "# the last round's windows (IOTAP_REPORT_DEBUG)"
for t in $THREADS; do
	[ -s "$OUT/dbg.$t" ] && cat "$OUT/dbg.$t"
done
if [ -s "$OUT/control" ]; then
	printf "\n| %7s | %28s | %26s |\n" "N" "N one-pass at once: median s" "their throughput / one's"
	printf "|%s|%s|%s|\n" "---------" "------------------------------" "----------------------------"
	for t in $THREADS; do
		[ "$t" -gt 1 ] || continue
		w=$(awk -v t="$t" '$1 == t { print $2 }' "$OUT/control" | median)
		printf "| %7s | %28s | %26s |\n" "$t" "$w" "$(calc "$t * $base / $w")"
	done
fi
if [ "${PERF:-0}" = 1 ] && command -v perf >/dev/null; then
	echo
	echo "# CPU seconds per thread (perf record -e task-clock), busiest first"
	for t in $THREADS; do
		# shellcheck disable=SC2086
		perf record -q -e task-clock -o "$OUT/perf.data" "$IOTAP" report $(topt "$t") $RUN \
			"$TR" > /dev/null 2>&1
		total=$(perf report -i "$OUT/perf.data" --stdio 2>/dev/null |
			awk '/Event count/ { print $NF / 1e9 }')
		shares=$(perf report -i "$OUT/perf.data" --sort pid --stdio 2>/dev/null |
			awk -v tot="$total" '/%/ && !/^#/ { sub("%", "", $1); if ($1 >= 1)
				printf "%.2f ", $1 * tot / 100 }')
		echo "threads $t: total $total s; per thread: $shares"
	done
fi
