#!/bin/bash
# SPDX-License-Identifier: MIT
# report-golden: every output of `iotap report` (text, --detail, --bonnie,
# CSV, JSON, HTML) and of `iotap compare` (text, CSV, JSON, HTML) on three
# small traces is byte for byte the committed one in tests/data/report/:
# the format-1.0 golden trace, a capture with markers, device and CPU
# samples (report/capture.iotap), and a `run dedup` trace with its
# application figures (report/dedup.iotap). Written when report's
# columns became one table (metric.c) to show that no output moved; a
# change that means to change an output rewrites the files with
# REPORT_GOLDEN_WRITE=1 and the diff shows what changed. No FUSE needed.
. "$(dirname "$0")/lib.sh"
D=$IOTAP_SRC/tests/data
G=$D/report
[ -x "$IOTAP" ] || fail "no iotap binary at $IOTAP"

# the traces by relative name, so the outputs do not carry this checkout's path
cp $D/golden-v1.0.iotap $G/capture.iotap $G/dedup.iotap $T/
cd $T
run() {
	local out=$1
	shift
	"$IOTAP" "$@" --no-progress > $T/out.$out 2> /dev/null || fail "iotap $* failed"
}
for t in golden-v1.0 capture dedup; do
	run $t.txt report $t.iotap
	run $t.v.txt report $t.iotap -v
	run $t.bonnie.txt report $t.iotap -v --bonnie
	run $t.csv report $t.iotap --csv
	run $t.json report $t.iotap --json
	run $t.html.txt report $t.iotap --html $T/out.$t.html
done
run compare.txt compare --label a capture.iotap capture.iotap --label b golden-v1.0.iotap
run compare.csv compare --csv capture.iotap dedup.iotap
run compare.json compare --json dedup.iotap dedup.iotap
run compare-html.txt compare --label a dedup.iotap --label b dedup.iotap capture.iotap \
	--html $T/out.compare.html

# the HTML names the version that wrote it
sed -i 's/iotap [0-9][0-9.]*/iotap VERSION/g' $T/out.*.html
n=0
for f in $T/out.*; do
	want=$G/${f#$T/out.}
	n=$((n + 1))
	if [ "${REPORT_GOLDEN_WRITE:-}" = 1 ]; then
		cp $f $want
		continue
	fi
	[ -f $want ] || fail "no $want (REPORT_GOLDEN_WRITE=1 writes it)"
	cmp -s $f $want || { diff $want $f | head -20 >&2; fail "$(basename $want) differs"; }
done
[ $n -ge 26 ] || fail "only $n outputs"
exit 0
