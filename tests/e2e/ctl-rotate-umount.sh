#!/bin/bash
# SPDX-License-Identifier: MIT
# ctl-rotate-umount.sh - a time rotation that meets the unmount does not
# crash the daemon. A rotation's switch makes the recorder's writer thread
# walk the inode table to name the files in use in the new file; the daemon
# once destroyed that table before it stopped the rotation thread and closed
# the recorder, and segfaulted in 2 to 6 of 10 such rounds (--rotate-time 10ms,
# 600-3000 files known to the kernel, then unmount). Every round must exit 0
# and leave only clean files that hold every create.
# TIMEOUT: 90
. "$(dirname "$0")/lib.sh"
need_fuse
D=$T/traces
ROUNDS=8
FILES=600
for r in $(seq $ROUNDS); do
	mkdir -p $D/$r "$BACKING/$r"
	iotap_mount "$BACKING/$r" "$MNT" --trace "$D/$r/t-%H%M%S.iotap" --rotate-time 10ms \
		--log $T/r$r.log
	mkdir "$MNT/d"
	for i in $(seq $FILES); do : > "$MNT/d/f$i"; done
	iotap_umount "$MNT"
	[ "$MOUNT_RC" -eq 0 ] || { tail -5 $T/r$r.log; fail "round $r: the daemon exited $MOUNT_RC"; }
	grep -q "closed (--rotate-time)" $T/r$r.log || fail "round $r: no time rotation"
	got=0
	for f in $D/$r/*.iotap; do
		"$IOTAP" info --strict "$f" >$T/info 2>&1 || { cat $T/info; fail "$f is not clean"; }
		got=$((got + $(count_ops "$f" create)))
	done
	expect_eq "round $r: creates across the rotated files" "$got" "$FILES"
done
echo "$ROUNDS rounds of rotation every 10 ms into the unmount: daemon exit 0 each time"
exit 0
