#!/bin/bash
# SPDX-License-Identifier: MIT
# run-dd-hdparm: `iotap run dd` writes and reads bs x count as single
# system calls at consecutive offsets, with conv=fdatasync's fdatasync
# inside the timing, and reports GNU dd's three lines; `iotap run hdparm`
# prints hdparm's -T/-t lines and traces 2 MiB reads (-T: all at offset 0;
# -t: consecutive from 0).
. "$(dirname "$0")/lib.sh"
[ -x "$IOTAP" ] || fail "no iotap binary at $IOTAP"
D=$T/d
mkdir -p $D

"$IOTAP" run dd $D --bs 1M --count 20 --fdatasync --trace $T/w.iotap -q > $T/w.txt ||
	fail "dd --write"
expect_eq "records in" "$(sed -n 1p $T/w.txt)" "20+0 records in"
expect_eq "records out" "$(sed -n 2p $T/w.txt)" "20+0 records out"
grep -Eq '^20971520 bytes \(21 MB, 20 MiB\) copied, [0-9.e-]+ s, [0-9.]+ [kMG]?B/s$' $T/w.txt ||
	{ cat $T/w.txt; fail "dd summary line"; }
[ -z "$(ls -A $D)" ] || fail "dd left its file without --keep"
"$IOTAP" dump $T/w.iotap > $T/wd.txt || fail dump
awk '$4 == "write"' $T/wd.txt > $T/writes.txt
expect_eq "dd writes" "$(wc -l < $T/writes.txt)" 20
awk '{ if ($6 != (NR - 1) * 1048576 || $7 != 1048576 || $8 != 1048576) bad++ } END { exit bad > 0 }' \
	$T/writes.txt || fail "dd writes not 1 MiB at consecutive offsets"
# fdatasync and close fall inside the "write" phase (timed, as GNU dd)
awk '$4 == "PHASE" { ph = $5 } $4 == "fsync" && ph == "begin" && /flags=0x1/ { n++ }
     END { exit n != 1 }' $T/wd.txt || fail "no fdatasync inside the write phase"

"$IOTAP" run dd $D --bs 64k --count 64 --read --trace $T/r.iotap -q > $T/r.txt || fail "dd --read"
grep -q '^64+0 records in$' $T/r.txt || fail "dd read records"
"$IOTAP" dump $T/r.iotap > $T/rd.txt || fail dump
awk '$4 == "PHASE" && $5 == "begin"' $T/rd.txt | grep -q 'name="prepare"' ||
	fail "dd --read did not prepare the missing file"
expect_eq "dd reads of 64 KiB" "$(awk '$4 == "read" && $7 == 65536 && $8 == 65536' $T/rd.txt | wc -l)" 64
# a second --read finds the file there: the trace still binds its id (a NAME
# with the size it had, before the open), so replay knows to expect it
"$IOTAP" run dd $D --bs 64k --count 64 --read --keep -q > /dev/null || fail "dd --read --keep"
"$IOTAP" run dd $D --bs 64k --count 64 --read --trace $T/r2.iotap -q > /dev/null || fail "dd --read 2"
"$IOTAP" dump $T/r2.iotap > $T/r2d.txt || fail dump
id=$(awk '$4 == "open" { print $5; exit }' $T/r2d.txt)
awk -v id="$id" '$4 == "NAME" && $5 == "file=" id && /size=4194304/ { print NR; exit }' $T/r2d.txt |
	grep -q . || fail "dd --read of an existing file: no NAME for file $id"
[ "$(awk -v id="$id" '$4 == "NAME" && $5 == "file=" id { print NR; exit }' $T/r2d.txt)" -lt \
  "$(awk '$4 == "open" { print NR; exit }' $T/r2d.txt)" ] || fail "the NAME comes after the open"
[ -f $D/iotap-dd.dat ] || fail "dd --read removed a file it did not create"
rm $D/iotap-dd.dat

"$IOTAP" run hdparm $D -T -t --size 64M --trace $T/h.iotap -q > $T/h.txt || fail "hdparm"
grep -Eq '^ Timing cached reads: +[0-9]+ MB in +[0-9.]+ seconds = +[0-9.]+ [Mk]B/sec$' $T/h.txt ||
	{ cat $T/h.txt; fail "hdparm -T line"; }
grep -Eq '^ Timing buffered disk reads: +[0-9]+ MB in +[0-9.]+ seconds = +[0-9.]+ [Mk]B/sec$' $T/h.txt ||
	{ cat $T/h.txt; fail "hdparm -t line"; }
[ -z "$(ls -A $D)" ] || fail "hdparm left its file"
"$IOTAP" dump $T/h.iotap > $T/hd.txt || fail dump
awk '$4 == "PHASE" { ph = $6 } ph == "name=\"cached_reads\"" && $4 == "read" {
	n++; if ($6 != 0 || $7 != 2097152) bad++ } END { exit !(n > 0 && !bad) }' $T/hd.txt ||
	fail "-T: 2 MiB reads at offset 0"
awk '$4 == "PHASE" { ph = $6 } ph == "name=\"disk_reads\"" && $4 == "read" {
	if ($6 != n * 2097152) bad++; n++ } END { exit !(n > 0 && !bad) }' $T/hd.txt ||
	fail "-t: 2 MiB reads at consecutive offsets"
mb=$(sed -n 's/^ Timing buffered disk reads: *\([0-9]*\) MB.*/\1/p' $T/h.txt)
expect_eq "-t MB = 2 x reads" "$mb" \
	"$(awk '$4 == "PHASE" { ph = $6 } ph == "name=\"disk_reads\"" && $4 == "read" { n++ } END { print 2 * n }' $T/hd.txt)"
exit 0
