#!/bin/bash
# SPDX-License-Identifier: MIT
# report-windows: the report read in time windows on several threads
# (tools/analysis/report_par.c) is the one-pass report byte for byte.
# IOTAP_REPORT_WINDOWS=K makes `report --threads N` use K windows whatever
# the file size and CPUs; IOTAP_REPORT_DEBUG=1 says which way it read.
# Every report output (text, -v, --json, --csv, --auto-phases, --interval
# CSV, --by file, --bonnie-csv) is compared with --threads 1 at 2 to 40
# windows on 2 to 4 threads, on: a 300 k-record synthetic trace with marked
# phases and ops in flight (the in-flight count carried across windows),
# one with 150 marked phases, and a bonnie++ run of `iotap run bonnie`
# (runs of 1-byte requests, idle gaps, markers; automatic phases with
# --auto-phases). The windows must really have been used there; the
# format-1.0 golden file (LOST records) and a damaged copy must be read in
# one pass (with the same report and warning), and --phases-from and
# --html too. No FUSE needed.
. "$(dirname "$0")/lib.sh"
SYNTH=$IOTAP_BUILD/tests/unit/report-synth
[ -x "$SYNTH" ] || fail "no $SYNTH"
GOLD=$IOTAP_SRC/tests/data/golden-v1.0.iotap
"$SYNTH" --records 300000 --phases 6 $T/s.iotap > /dev/null || fail "report-synth s"
"$SYNTH" --records 200000 --phases 150 $T/m.iotap > /dev/null || fail "report-synth m"
mkdir -p $T/bd
"$IOTAP" run bonnie $T/bd -s 16 -n 1 -r 8 -q --trace $T/b.iotap > /dev/null 2> $T/err.txt ||
	{ cat $T/err.txt; fail "run bonnie"; }

outputs() {	# TRACE DIR: every report output, one file each
	local tr=$1 o=$2
	mkdir -p $o
	"$IOTAP" report "$tr" > $o/report.txt 2>&1
	"$IOTAP" report "$tr" -v > $o/report-v.txt 2>&1
	"$IOTAP" report "$tr" --json > $o/report.json 2>&1
	"$IOTAP" report "$tr" --csv > $o/report.csv 2>&1
	"$IOTAP" report "$tr" --auto-phases --json > $o/auto.json 2>&1
	"$IOTAP" report "$tr" --auto-phases -v > $o/auto-v.txt 2>&1
	"$IOTAP" report "$tr" --interval 100ms --csv > $o/interval.csv 2>&1
	"$IOTAP" report "$tr" --auto-phases --interval 1s --csv > $o/auto-interval.csv 2>&1
	"$IOTAP" report "$tr" --by file --csv > $o/by-file.csv 2>&1
	"$IOTAP" report "$tr" --bonnie-csv > $o/bonnie.csv 2>&1
}
same() {	# A B WHAT: every output file equal
	local f
	for f in $1/*; do
		cmp -s "$f" "$2/$(basename "$f")" ||
			{ diff "$f" "$2/$(basename "$f")" | head >&2; fail "$(basename "$f"): $3"; }
	done
}

# DEBUG-OUTPUT WHAT: each window read its own chunks and the one it shares
# with the next, no more, where windows hold 4 chunks or more (as they do
# by default), but for its join, whose reads the line counts apart: the
# chunks a window read before its own (its join starts SPLIT_BACK records
# back: several chunks where they are small, as a bonnie++ capture's on a
# loaded machine are), after the one it shares (a call's pieces going on
# past its end), and again (a start that came too late, tried again from
# further back).
reads_ok() {
	local nw reads nc back ahead again
	read -r nw reads nc back ahead again <<< "$(sed -n 's/.*: \([0-9]*\) time windows.* \([0-9]*\) chunk reads of \([0-9]*\) chunks (\([0-9]*\) before their window, \([0-9]*\) after, \([0-9]*\) again).*/\1 \2 \3 \4 \5 \6/p' "$1")"
	[ -n "$again" ] || { cat "$1"; fail "$2: no chunk reads in the debug line"; }
	[ "$nc" -lt $((4 * nw)) ] || [ $((reads - back - ahead - again)) -le $((nc + nw - 1)) ] ||
		{ cat "$1"; fail "$2: $nw windows read $reads chunks, more than $nc + $nw - 1 + $back before + $ahead after + $again again"; }
}

wrap() {	# N: $T/iotap-N, iotap with --threads N after the command's name
	printf '#!/bin/sh\ncmd=$1\nshift\nexec "%s" "$cmd" --threads %s "$@"\n' "$IOTAP" $1 > $T/iotap-$1
	chmod +x $T/iotap-$1
}
wrap 1; wrap 2; wrap 3; wrap 4
for tr in s m b; do
	IOTAP_REPORT_DEBUG=1 "$IOTAP" report --threads 1 $T/$tr.iotap > /dev/null 2> $T/dbg ||
		fail "report $tr.iotap"
	grep -q "one pass (one thread)" $T/dbg || { cat $T/dbg; fail "--threads 1 read $tr in windows"; }
	IOTAP=$T/iotap-1 outputs $T/$tr.iotap $T/ref	# the reference: one pass, one thread
	for wn in "2 2" "3 3" "7 2" "40 4"; do
		set -- $wn
		export IOTAP_REPORT_WINDOWS=$1
		IOTAP=$T/iotap-$2 outputs $T/$tr.iotap $T/w$1
		IOTAP_REPORT_DEBUG=1 "$IOTAP" report --threads $2 $T/$tr.iotap > /dev/null 2> $T/dbg
		grep -q "time windows on" $T/dbg || { cat $T/dbg; fail "$tr.iotap: $1 windows not used"; }
		reads_ok $T/dbg "$tr.iotap"
		same $T/ref $T/w$1 "$tr.iotap differs in $1 windows on $2 threads"
		unset IOTAP_REPORT_WINDOWS
	done
	note "$tr.iotap: $(ls $T/ref | wc -l) outputs identical in 2, 3, 7 and 40 windows ($(sed 's/.*: \([0-9]* time windows\).*/\1/' $T/dbg) the last)"
	rm -rf $T/ref $T/w*
done

# what must be read in one pass, and is still the same report
export IOTAP_REPORT_WINDOWS=3 IOTAP_REPORT_DEBUG=1
"$IOTAP" report --threads 2 "$GOLD" > $T/g2.txt 2> $T/dbg
grep -q "one pass (LOST records)" $T/dbg || { cat $T/dbg; fail "golden: not one pass for LOST"; }
unset IOTAP_REPORT_DEBUG
"$IOTAP" report --threads 1 "$GOLD" > $T/g1.txt 2> /dev/null
cmp -s $T/g1.txt $T/g2.txt || fail "golden: the one pass after a refusal differs"
# a damaged copy: the split refuses it, the one pass reports the rest and warns, the same
cp $T/s.iotap $T/bad.iotap
size=$(stat -c %s $T/bad.iotap)
dd if=/dev/urandom of=$T/bad.iotap bs=1 seek=$((size / 2)) count=64 conv=notrunc status=none
"$IOTAP" report --threads 1 $T/bad.iotap > $T/b1.txt 2>&1
IOTAP_REPORT_DEBUG=1 "$IOTAP" report --threads 2 $T/bad.iotap > $T/b2.txt 2> $T/dbg
grep -Eq "one pass \((the split refused|a window found damage)" $T/dbg ||
	{ cat $T/dbg; fail "damaged: not one pass"; }
"$IOTAP" report --threads 2 $T/bad.iotap > $T/b2.txt 2>&1
cmp -s $T/b1.txt $T/b2.txt || { diff $T/b1.txt $T/b2.txt | head; fail "damaged: differs"; }
grep -qi "warning" $T/b1.txt || fail "damaged: no warning"
IOTAP_REPORT_DEBUG=1 "$IOTAP" report --threads 2 $T/s.iotap --phases-from $T/m.iotap > /dev/null 2> $T/dbg
grep -q "one pass (--phases-from)" $T/dbg || { cat $T/dbg; fail "--phases-from in windows"; }
IOTAP_REPORT_DEBUG=1 "$IOTAP" report --threads 2 $T/s.iotap --html $T/s.html > /dev/null 2> $T/dbg
grep -q "one pass (the HTML" $T/dbg || { cat $T/dbg; fail "--html in windows"; }
# --progress: the windows' chunks counted once, one final line; a refused
# split (LOST records) leaves no line of its own, the one pass says it
for tr in $T/b.iotap "$GOLD"; do
	"$IOTAP" report --threads 2 "$tr" --progress > $T/p.out 2> $T/p.err || fail "--progress $tr"
	expect_eq "final progress lines of $(basename "$tr")" "$(grep -c ": read .* in .* s$" $T/p.err)" 1
	"$IOTAP" report --threads 1 "$tr" > $T/p1.out 2> /dev/null
	cmp -s $T/p.out $T/p1.out || fail "--progress changed the report of $tr"
done
unset IOTAP_REPORT_WINDOWS
# without the test's override: windows from 2 threads and CPUs, for a trace of 1 MiB or more
IOTAP_REPORT_DEBUG=1 "$IOTAP" report --threads 2 $T/s.iotap > /dev/null 2> $T/dbg
grep -q "one pass (a trace under 1 MiB)" $T/dbg || { cat $T/dbg; fail "--threads 2 split a small trace"; }
"$SYNTH" --records 2000000 $T/l.iotap > /dev/null || fail "report-synth l"
IOTAP_REPORT_DEBUG=1 "$IOTAP" report --threads 2 $T/l.iotap > $T/l2.txt 2> $T/dbg
if [ "$(nproc)" -ge 2 ]; then
	grep -q ": 8 time windows on 2 threads" $T/dbg || { cat $T/dbg; fail "--threads 2: not 8 windows of 256 K records"; }
	reads_ok $T/dbg l.iotap
else
	grep -q "one pass (fewer CPUs" $T/dbg || { cat $T/dbg; fail "--threads 2 on one CPU used windows"; }
fi
"$IOTAP" report --threads 1 $T/l.iotap > $T/l1.txt 2> /dev/null
cmp -s $T/l1.txt $T/l2.txt || fail "2 M records: --threads 2 printed another report than --threads 1"
exit 0
