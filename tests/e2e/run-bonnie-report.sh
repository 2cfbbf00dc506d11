#!/bin/bash
# SPDX-License-Identifier: MIT
# run-bonnie-report: `iotap run bonnie DIR ... --trace T` and `iotap report
# --bonnie-csv T` print the same CSV line, byte for byte, for the same run:
# one writer (trace/base/bonnie.c) and one set of figures. The run's own
# latency (its longest timed unit: a chunk of 8192 1-byte writes for putc,
# not one write) travels in the END markers, the seed it drew and its -m and
# -n MAX:MIN:DIRS in the trace's workload line. Two repeats (-x 2: a line
# each), no -z (the drawn seed must still show), -m, and -n with sizes and
# directories; then -f with a chunk size and an explicit seed.
. "$(dirname "$0")/lib.sh"
[ -x "$IOTAP" ] || fail "no iotap binary at $IOTAP"
D=$T/d
mkdir -p $D

same_line() {
	local tr=$1
	shift
	rm -f $tr
	"$IOTAP" run bonnie $D "$@" --trace $tr -q > $T/run.out 2> $T/run.err ||
		{ cat $T/run.err; fail "iotap run bonnie $* failed"; }
	grep '^1\.98,' $T/run.out > $T/run.csv
	"$IOTAP" report --bonnie-csv $tr > $T/rep.csv 2> $T/rep.err ||
		{ cat $T/rep.err; fail "iotap report --bonnie-csv ($*) failed"; }
	[ -s $T/run.csv ] || { cat $T/run.out; fail "the run ($*) printed no CSV line"; }
	if ! cmp -s $T/run.csv $T/rep.csv; then
		echo "run:    $(cat $T/run.csv)" >&2
		echo "report: $(cat $T/rep.csv)" >&2
		fail "run and report CSV differ ($*)"
	fi
}

same_line $T/a.iotap -s 8 -r 4 -n 2:2k:512:3 --char-size 1 -x 2 -m box
expect_eq "CSV lines (-x 2)" "$(wc -l < $T/rep.csv)" 2
seed=$(awk -F, 'NR == 1 { print $5 }' $T/rep.csv)
[ -n "$seed" ] || fail "the drawn seed is blank: $(cat $T/rep.csv)"
"$IOTAP" info $T/a.iotap | grep -q "^workload .* -z $seed\$" ||
	fail "the trace's workload line lacks the drawn seed $seed"
awk -F, '{ if ($3 != "box" || $22 != 2 || $23 != 2048 || $24 != 512 || $25 != 3) bad = 1 }
	END { exit bad }' $T/rep.csv || fail "name or -n fields: $(cat $T/rep.csv)"
# putc and getc latencies: the run's unit (8192 1-byte calls), above one call's
awk -F, '{ for (i = 39; i <= 42; i += 3) if ($i !~ /^[0-9]+(us|ms|s)$/) bad = 1 }
	END { exit bad }' $T/rep.csv || fail "putc/getc latency missing: $(cat $T/rep.csv)"
expect_eq "CSV columns" "$(awk -F, 'NR == 1 { print NF }' $T/rep.csv)" 50

same_line $T/b.iotap -s 16:4096 -r 8 -n 1 -f -z 7
expect_eq "seed (-z 7)" "$(cut -d, -f5 $T/rep.csv)" 7
expect_eq "io_chunk_size" "$(cut -d, -f7 $T/rep.csv)" 4k
exit 0
