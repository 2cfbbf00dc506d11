#!/bin/bash
# SPDX-License-Identifier: MIT
# report-threads: the reader's decoder threads change no output. The
# report (text, --json, --auto-phases, --interval CSV, --html, compare)
# and the dump (text, --csv, --fio-iolog, --file-order) of a 300 k-record
# synthetic trace with marked phases, of a real capture and of the
# format-1.0 golden file are byte for byte the same decoded by 1 thread
# (IOTAP_READ_THREADS=1) and by 2 and 5; a bad IOTAP_READ_THREADS is
# refused with a message.
. "$(dirname "$0")/lib.sh"
SYNTH=$IOTAP_BUILD/tests/unit/report-synth
[ -x "$SYNTH" ] || fail "no $SYNTH"
"$SYNTH" --records 300000 --phases 6 $T/s.iotap > /dev/null || fail "report-synth"
GOLD=$IOTAP_SRC/tests/data/golden-v1.0.iotap
TRACES="$T/s.iotap $GOLD"
if [ -c /dev/fuse ] && [ "$(id -u)" = 0 ] && command -v fio > /dev/null; then
	iotap_mount "$BACKING" "$MNT" --trace $T/c.iotap
	fio --name=c --directory="$MNT" --size=4m --bs=4k --rw=randrw --numjobs=3 --fsync=32 \
		--ioengine=psync --output=/dev/null || fail "fio"
	iotap_umount "$MNT"
	TRACES="$TRACES $T/c.iotap"
fi
outputs() {	# TRACE N: every output, one file each, decoded by N threads
	local tr=$1 n=$2 o=$T/out.$2
	mkdir -p $o
	export IOTAP_READ_THREADS=$n
	"$IOTAP" report "$tr" > $o/report.txt 2>&1
	"$IOTAP" report "$tr" --json > $o/report.json 2>&1
	"$IOTAP" report "$tr" --auto-phases --csv > $o/auto.csv 2>&1
	"$IOTAP" report "$tr" --interval 100ms --csv > $o/interval.csv 2>&1
	"$IOTAP" report "$tr" --html $o/report.html > /dev/null 2>&1
	"$IOTAP" compare "$tr" "$GOLD" > $o/compare.txt 2>&1
	"$IOTAP" dump "$tr" > $o/dump.txt 2>&1
	"$IOTAP" dump "$tr" --csv > $o/dump.csv 2>&1
	"$IOTAP" dump "$tr" --file-order > $o/dump-fo.txt 2>&1
	"$IOTAP" dump "$tr" --fio-iolog --fio-root /r > $o/fio.log 2>&1
	"$IOTAP" info "$tr" > $o/info.txt 2>&1
	unset IOTAP_READ_THREADS
}
for tr in $TRACES; do
	outputs "$tr" 1
	[ -s $T/out.1/dump.txt ] && [ -s $T/out.1/report.json ] || fail "no output for $tr"
	for n in 2 5; do
		outputs "$tr" $n
		for f in $T/out.1/*; do
			cmp -s "$f" "$T/out.$n/$(basename "$f")" ||
				{ diff "$f" "$T/out.$n/$(basename "$f")" | head >&2
				  fail "$(basename "$f") of $tr differs with $n threads"; }
		done
	done
	note "$(basename "$tr"): $(ls $T/out.1 | wc -l) outputs identical with 1, 2 and 5 threads"
	rm -rf $T/out.*
done
IOTAP_READ_THREADS=many expect 1 "IOTAP_READ_THREADS" "$IOTAP" report "$GOLD"
exit 0
