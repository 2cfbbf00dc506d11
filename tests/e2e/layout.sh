#!/bin/bash
# SPDX-License-Identifier: MIT
# layout: every trace carries the storage stack it ran on (header field
# "layout"): filesystem, mount and super options, RAID geometry from the
# superblock (ext4 stride/stripe_width, XFS sunit/swidth), each block device
# level with its read_ahead, scheduler and friends. Checked on loop devices
# against what mkfs was told and what blockdev set, for a workload, a
# capture and a replay; `iotap info` shows it, `iotap report` heads with it
# (JSON too), `iotap compare` shows first where two runs' stacks differ.
. "$(dirname "$0")/lib.sh"
command -v losetup > /dev/null && command -v mkfs.ext4 > /dev/null || skip "needs losetup and mkfs.ext4"

truncate -s 64M $T/e4.img
E4LOOP=$(losetup -f --show $T/e4.img) || skip "no loop device"
at_exit 'losetup -d $E4LOOP 2>/dev/null'
mkfs.ext4 -q -F -E stride=16,stripe_width=64 $E4LOOP || fail "mkfs.ext4"
mkdir $T/e4
mount $E4LOOP $T/e4 || skip "cannot mount ext4"
at_exit 'umount $T/e4 2>/dev/null'
blockdev --setra 8192 $E4LOOP || fail "blockdev --setra"

# a workload trace
"$IOTAP" run dd $T/e4 --bs 1M --count 4 --trace $T/dd.iotap -q > /dev/null || fail "run dd"
"$IOTAP" info $T/dd.iotap > $T/info.txt || fail "info"
grep -q "^storage .*path: $T/e4\$" $T/info.txt || { cat $T/info.txt; fail "info: no storage path line"; }
grep -q "fs: ext4 $E4LOOP on $T/e4 (" $T/info.txt || { cat $T/info.txt; fail "info: no ext4 line"; }
grep -q "fs geometry: block [0-9]*, stride 16, stripe_width 64 (blocks)" $T/info.txt ||
	{ cat $T/info.txt; fail "info: ext4 stride/stripe_width"; }
grep -q "dev $(basename $E4LOOP) (7:[0-9]*): loop over $T/e4.img, .*read_ahead 4096 KiB" $T/info.txt ||
	{ cat $T/info.txt; fail "info: the loop device with read_ahead 4096 KiB (setra 8192)"; }
grep -q "^ *ram: [0-9]* MiB" $T/info.txt || fail "info: ram"
"$IOTAP" report $T/dd.iotap > $T/r.txt || fail "report"
grep -q "^storage  fs: ext4 $E4LOOP" $T/r.txt || { head $T/r.txt; fail "report does not head with the storage stack"; }
"$IOTAP" report --json $T/dd.iotap > $T/r.json || fail "report --json"
python3 -c '
import json, sys
lay = json.load(open(sys.argv[1]))["trace"]["layout"]
assert any(l.startswith("fs: ext4 ") for l in lay), lay
assert any("stride 16, stripe_width 64" in l for l in lay), lay
' $T/r.json || fail "report --json: trace.layout"

# a capture over it, replayed onto XFS (or a tmpfs without mkfs.xfs)
mkdir $T/e4/data $T/other
iotap_mount $T/e4/data "$MNT" --trace $T/cap.iotap
dd if=/dev/zero of="$MNT/f" bs=64k count=16 status=none || fail "write through the mount"
iotap_umount "$MNT"
grep -q "fs: ext4 $E4LOOP" <("$IOTAP" info $T/cap.iotap) || fail "capture: no storage stack"
want="fs: tmpfs"
if command -v mkfs.xfs > /dev/null; then
	truncate -s 600M $T/xf.img
	XFLOOP=$(losetup -f --show $T/xf.img) || fail "second loop device"
	at_exit 'losetup -d $XFLOOP 2>/dev/null'
	mkfs.xfs -q -f -d su=64k,sw=4 $XFLOOP || fail "mkfs.xfs"
	mount $XFLOOP $T/other || fail "mount xfs"
	want="fs geometry: block 4096, sunit 16, swidth 64 (blocks)"
else
	mount -t tmpfs tmpfs $T/other || fail "mount tmpfs"
fi
at_exit 'umount $T/other 2>/dev/null'
"$IOTAP" replay $T/cap.iotap $T/other --prepare --timing asap --trace $T/rp.iotap -q \
	> /dev/null 2> $T/rp.err || { cat $T/rp.err; fail "replay"; }
"$IOTAP" info $T/rp.iotap > $T/rpinfo.txt || fail "info of the replay"
grep -qF "$want" $T/rpinfo.txt || { cat $T/rpinfo.txt; fail "replay trace: '$want'"; }
"$IOTAP" compare $T/cap.iotap $T/rp.iotap > $T/cmp.txt || fail "compare"
sed -n '/^storage differs:/,/^MB/p' $T/cmp.txt > $T/diff.txt
grep -q "cap.iotap *fs: ext4 $E4LOOP" $T/diff.txt || { cat $T/cmp.txt; fail "compare: the capture's fs line"; }
grep -q "rp.iotap *fs: " $T/diff.txt || { cat $T/cmp.txt; fail "compare: the replay's fs line"; }
"$IOTAP" compare $T/dd.iotap $T/dd.iotap | grep -q "^storage: the same for every run" ||
	fail "compare of a trace with itself: storage is the same"
exit 0
