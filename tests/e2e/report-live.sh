#!/bin/bash
# SPDX-License-Identifier: MIT
# report-live: `iotap report T` while a mount is still writing T says so
# (issue 27, item 18): not "0 ops, 0 phases" as if T were an idle capture,
# nor "the writer did not close it" as if it had died. With nothing on disk
# yet it refuses (status 1); with chunks on disk it reports them and says
# up to when; once the mount is gone the warning is gone too.
. "$(dirname "$0")/lib.sh"
need_fuse

TR=$T/l.iotap
iotap_mount "$BACKING" "$MNT" --trace $TR
expect 1 "'$TR' is still being written" "$IOTAP" report $TR
grep -q "holds no operation yet" $T/err || { cat $T/err; fail "no word of the missing ops"; }
grep -q "0 ops" $T/out && fail "a live trace reported as 0 ops"
check "dd" dd if=/dev/zero of="$MNT/f" bs=64k count=50 status=none
sleep 2.5	# a chunk or two on disk
"$IOTAP" report $TR > $T/out 2> $T/err || { cat $T/err; fail "report of a live trace with ops"; }
grep -q "'$TR' is still being written (records up to [0-9.]* s so far" $T/err ||
	{ cat $T/err; fail "report does not say the trace is live"; }
grep -q "did not close it" $T/err && fail "a live trace called unclosed"
grep -q " 5[0-9] ops" $T/out || { cat $T/out; fail "the ops on disk are not reported"; }
iotap_umount "$MNT"
"$IOTAP" report $TR > $T/out 2> $T/err || fail "report after umount"
grep -q "still being written" $T/err && fail "a closed trace called live"
echo "report-live: ok"
