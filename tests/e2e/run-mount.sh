#!/bin/bash
# SPDX-License-Identifier: MIT
# run-mount: a small bonnie run through a real iotap mount. The workload's
# own trace and the capture trace see the same application I/O: in the
# default direct_io mode one write(2) is one request, so the block writes,
# rewrites, reads and seeks, and the creates and unlinks of -n 1, agree
# in count between the two traces; the run's tables and CSV still print.
. "$(dirname "$0")/lib.sh"
need_fuse
CAP=$T/cap.iotap
WL=$T/wl.iotap

iotap_mount "$BACKING" "$MNT" --trace "$CAP"
"$IOTAP" run bonnie "$MNT" -s 16 -r 8 -n 1 -f -z 7 -m mnt --trace $WL -q \
	> $T/csv.txt 2> $T/err.txt || { cat $T/err.txt; fail "iotap run bonnie on the mount failed"; }
iotap_umount "$MNT"
expect_eq "daemon exit status" "$MOUNT_RC" 0
grep -q '^1\.98,2\.00a,mnt,1,7,16M,' $T/csv.txt || fail "no CSV line: $(cat $T/csv.txt)"
grep -q "^Version 2.00a" $T/err.txt || fail "no text table"
[ -z "$(ls -A "$BACKING")" ] || fail "files left in the backing directory: $(ls -A "$BACKING")"

"$IOTAP" info --strict $CAP > /dev/null || fail "capture trace damaged"
"$IOTAP" info --strict $WL > /dev/null || fail "workload trace damaged"
"$IOTAP" dump $CAP > $T/cap.txt || fail "dump capture"
"$IOTAP" dump $WL > $T/wl.txt || fail "dump workload"
tally() { awk -v op=$2 '$4 == op { n++; b += $8 } END { print n + 0, b + 0 }' $1; }
for op in write read create unlink; do
	expect_eq "$op: capture vs workload (count bytes)" "$(tally $T/cap.txt $op)" \
		"$(tally $T/wl.txt $op)"
done
# bonnie's pattern as the capture saw it: 2048 x 8 KiB writes, then rewrites and seeks
w8=$(awk '$4 == "write" && $7 == 8192' $T/cap.txt | wc -l)
[ "$w8" -ge $((2048 * 2 + 600)) ] || fail "capture has $w8 8 KiB writes, want block + rewrite + seek rewrites"
expect_eq "capture: 8 KiB reads (rewrite + read + seeks)" \
	"$(awk '$4 == "read" && $7 == 8192' $T/cap.txt | wc -l)" $((2048 + 2048 + 8192))
exit 0
