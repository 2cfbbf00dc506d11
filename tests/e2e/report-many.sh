#!/bin/bash
# SPDX-License-Identifier: MIT
# report-many: several traces' reports read side by side (issue 26: a
# fleet report that uses every core). The fleet report (`report A B ...`)
# and compare build one report per trace on threads of the pool, N at once
# (--threads N; default a CPU each): every output, stderr included, is the
# same byte for byte with --threads 1 (one after the other), 2, 3, 6 and
# the default, on six traces of different sizes (so they end in another
# order than they start), one of them damaged (its warning is said once,
# in its place) and one with automatic phases. A trace that cannot be read
# is named as one after the other would name it: the first bad one in the
# command's order, whichever thread found it, with exit status 1.
. "$(dirname "$0")/lib.sh"
SYNTH=$IOTAP_BUILD/tests/unit/report-synth
[ -x "$SYNTH" ] || fail "no $SYNTH"
GOLD=$IOTAP_SRC/tests/data/golden-v1.0.iotap
"$SYNTH" --records 400000 --phases 6 $T/a.iotap > /dev/null || fail "report-synth a"
"$SYNTH" --records 20000 --phases 6 $T/b.iotap > /dev/null || fail "report-synth b"
"$SYNTH" --records 150000 --phases 9 $T/c.iotap > /dev/null || fail "report-synth c"
printf '%s\n' "w seqwrite ops=4000 bs=65536 rate=20000" "idle idle dur=2" \
	"r randrw ops=6000 bs=4096 threads=4 rate=30000" "c create n=3000 rate=50000" > $T/auto.script
"$SYNTH" --no-marks --samples $T/u.iotap $T/auto.script > /dev/null || fail "report-synth u"
cp $T/a.iotap $T/bad.iotap
size=$(stat -c %s $T/bad.iotap)
dd if=/dev/urandom of=$T/bad.iotap bs=1 seek=$((size / 2)) count=64 conv=notrunc status=none
TR="$T/a.iotap $T/b.iotap $GOLD $T/c.iotap $T/bad.iotap $T/u.iotap"

outputs() {	# N: every fleet and compare output with --threads N ("" the default)
	local n=$1 o=$T/out.${1:-def} th=${1:+--threads $1}
	mkdir -p $o
	"$IOTAP" report $th $TR > $o/fleet.txt 2>&1
	"$IOTAP" report $th $TR --json > $o/fleet.json 2>&1
	"$IOTAP" report $th $TR --csv > $o/fleet.csv 2>&1
	"$IOTAP" report $th $TR --html $o/fleet.html > $o/fleet-html.txt 2>&1
	sed -i "s|$o|OUT|g" $o/fleet-html.txt
	"$IOTAP" compare $th $TR > $o/compare.txt 2>&1
	"$IOTAP" compare $th --label x $T/a.iotap $T/c.iotap --label y $T/b.iotap $GOLD $T/u.iotap \
		--json > $o/groups.json 2>&1
	"$IOTAP" compare $th $TR --csv --html $o/compare.html > $o/compare.csv 2>&1
	sed -i "s|$o|OUT|g" $o/compare.csv
}
outputs 1
grep -q damaged $T/out.1/fleet.txt || fail "no damage warning for bad.iotap"
[ -s $T/out.1/fleet.html ] && [ -s $T/out.1/compare.html ] || fail "no HTML written"
for n in 2 3 6 ""; do
	outputs "$n"
	for f in $T/out.1/*; do
		cmp -s "$f" "$T/out.${n:-def}/$(basename "$f")" ||
			{ diff "$f" "$T/out.${n:-def}/$(basename "$f")" | head >&2
			  fail "$(basename "$f") differs with --threads ${n:-(default)}"; }
	done
done
note "$(ls $T/out.1 | wc -l) outputs identical with --threads 1, 2, 3, 6 and the default"

# the first trace that cannot be read, in the command's order, is the one named
printf 'not a trace\n' > $T/junk1.iotap
printf 'nor this one\n' > $T/junk2.iotap
for n in 1 4; do
	for cmd in report compare; do
		"$IOTAP" $cmd --threads $n $T/a.iotap $T/junk1.iotap $T/b.iotap $T/junk2.iotap \
			> $T/o 2> $T/e
		rc=$?
		expect_eq "$cmd --threads $n: exit status" "$rc" 1
		grep -q "junk1.iotap" $T/e || { cat $T/e; fail "$cmd --threads $n: junk1 not named"; }
		grep -q "junk2.iotap" $T/e && { cat $T/e; fail "$cmd --threads $n: junk2 named"; }
		[ -s $T/o ] && fail "$cmd --threads $n: output despite the error"
		cp $T/e $T/e.$cmd.$n
	done
done
cmp -s $T/e.report.1 $T/e.report.4 || fail "report: another message with --threads 4"
cmp -s $T/e.compare.1 $T/e.compare.4 || fail "compare: another message with --threads 4"
"$IOTAP" report --threads 4 $T/a.iotap $T/b.iotap $T/missing.iotap > /dev/null 2> $T/e
expect_eq "a missing trace: exit status" "$?" 1
grep -q "missing.iotap" $T/e || { cat $T/e; fail "the missing trace not named"; }
expect 2 "threads" "$IOTAP" compare --threads 0 $T/a.iotap $T/b.iotap
expect 2 "threads" "$IOTAP" compare --threads lots $T/a.iotap $T/b.iotap
exit 0
