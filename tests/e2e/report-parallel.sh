#!/bin/bash
# SPDX-License-Identifier: MIT
# report-parallel: `report --threads N` changes no output. Every report
# output (text, -v, --json, --csv, --bonnie-csv, --html, --auto-phases, --interval CSV,
# --by file, --phases-from, the fleet report of two traces) is byte for
# byte the same with --threads 1, 2, 3 and 7 on: a 300 k-record synthetic
# trace with marked phases (hundreds of 1024-op batches cross between the
# threads), one with 150 marked phases and samples (batches cut by their
# 64 marker/sample slots), the same unmarked (automatic phases), a damaged
# copy (a warning, the rest reported), the format-1.0 golden file (lost
# records, a rename) and a `run dedup --flavor borg` trace (many files,
# renames, APP records). A bad --threads is refused.
. "$(dirname "$0")/lib.sh"
SYNTH=$IOTAP_BUILD/tests/unit/report-synth
[ -x "$SYNTH" ] || fail "no $SYNTH"
GOLD=$IOTAP_SRC/tests/data/golden-v1.0.iotap
"$SYNTH" --records 300000 --phases 6 $T/s.iotap > /dev/null || fail "report-synth s"
"$SYNTH" --records 200000 --phases 150 $T/m.iotap > /dev/null || fail "report-synth m"
printf '%s\n' "w seqwrite ops=4000 bs=65536 rate=20000" "idle idle dur=2" \
	"r randrw ops=6000 bs=4096 threads=4 rate=30000" "c create n=3000 rate=50000" \
	"s stat n=3000 rate=50000" "rd seqread ops=5000 bs=1 rate=100000" \
	"rb seqread ops=5000 bs=131072 rate=20000" > $T/auto.script
"$SYNTH" --no-marks --samples $T/a.iotap $T/auto.script > /dev/null || fail "report-synth a"
cp $T/s.iotap $T/bad.iotap
size=$(stat -c %s $T/bad.iotap)
dd if=/dev/urandom of=$T/bad.iotap bs=1 seek=$((size / 2)) count=64 conv=notrunc status=none
mkdir -p $T/dd $T/dm
"$IOTAP" run dedup $T/dd --flavor borg --meta-dir $T/dm --image-size 16m --generations 3 \
	--trace $T/d.iotap -q > /dev/null 2> $T/err.txt || { cat $T/err.txt; fail "run dedup"; }
"$IOTAP" dump $T/d.iotap | grep -qi rename || fail "the dedup trace has no rename"

outputs() {	# TRACE N: every report output, one file each, with --threads N
	local tr=$1 n=$2 o=$T/out.$2
	mkdir -p $o
	"$IOTAP" report --threads $n "$tr" > $o/report.txt 2>&1
	"$IOTAP" report --threads $n "$tr" -v > $o/report-v.txt 2>&1
	"$IOTAP" report --threads $n "$tr" --json > $o/report.json 2>&1
	"$IOTAP" report --threads $n "$tr" --csv > $o/report.csv 2>&1
	"$IOTAP" report --threads $n "$tr" --auto-phases --json > $o/auto.json 2>&1
	"$IOTAP" report --threads $n "$tr" --interval 100ms --csv > $o/interval.csv 2>&1
	"$IOTAP" report --threads $n "$tr" --by file > $o/byfile.txt 2>&1
	"$IOTAP" report --threads $n "$tr" --phases-from $T/s.iotap --csv > $o/from.csv 2>&1
	"$IOTAP" report --threads $n "$tr" --html $o/report.html 2>&1 | sed "s|$o|OUT|" > $o/html.txt
	"$IOTAP" report --threads $n "$tr" --bonnie-csv > $o/bonnie.csv 2>&1
	"$IOTAP" report --threads $n "$tr" $GOLD --json > $o/fleet.json 2>&1
}
for tr in $T/s.iotap $T/m.iotap $T/a.iotap $T/bad.iotap $GOLD $T/d.iotap; do
	outputs "$tr" 1
	[ -s $T/out.1/report.json ] && [ -s $T/out.1/report.html ] || fail "no output for $tr"
	for n in 2 3 7; do
		outputs "$tr" $n
		for f in $T/out.1/*; do
			cmp -s "$f" "$T/out.$n/$(basename "$f")" ||
				{ diff "$f" "$T/out.$n/$(basename "$f")" | head >&2
				  fail "$(basename "$f") of $(basename "$tr") differs with --threads $n"; }
		done
	done
	note "$(basename "$tr"): $(ls $T/out.1 | wc -l) outputs identical with --threads 1, 2, 3, 7"
	rm -rf $T/out.*
done
grep -q "damaged" <("$IOTAP" report --threads 2 $T/bad.iotap 2>&1) ||
	fail "no damage warning with --threads 2"
# the default (the CPUs) is the same report too
"$IOTAP" report $T/s.iotap --json > $T/def.json 2>&1
"$IOTAP" report --threads 1 $T/s.iotap --json > $T/one.json 2>&1
cmp -s $T/def.json $T/one.json || fail "the default --threads differs from --threads 1"
expect 2 "threads" "$IOTAP" report --threads 0 $T/s.iotap
expect 2 "threads" "$IOTAP" report --threads many $T/s.iotap
exit 0
