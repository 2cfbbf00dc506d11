#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-uring-coldread: over io_uring, a read that waits for a slow disk (a
# page-cache miss, the daemon asleep uninterruptibly in the kernel) must
# not hold up other requests from the same CPU, and is still recorded
# whole: timed from the daemon's first attempt to the data.
#
# The slow disk: an ext4 image on a loop device whose file lives on a
# second iotap mount over /dev/fuse, whose daemon's reads take 3 s
# (failsys.c, once the flag file exists). The mount under test serves that
# ext4 over io_uring. An application pinned to CPU 0 reads a file ext4 no
# longer caches, while reads of a cached file from CPU 0 must be served at
# once. Before the fix the ring thread that took the cold read slept in it
# and held every entry it had committed: the reads waited the 3 s. Now
# the ring thread tries the read with RWF_NOWAIT and hands it to a helper.
# Then the same beside an O_DSYNC write, which a helper takes untried,
# and, on XFS (which can try a buffered write without waiting), beside a
# write of part of a page that is not cached.
. "$(dirname "$0")/lib.sh"
need_fuse
for c in losetup mkfs.ext4 taskset; do
	command -v $c >/dev/null || skip "no $c"
done
FAILSYS=${IOTAP_FAILSYS:-${IOTAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}/tests/failsys.so}
[ -r "$FAILSYS" ] || skip "no failsys.so"
unset IOTAP_TRANSPORT
need_uring

SLOW=$T/slow-on
LB=$T/lower-b LM=$T/lower-m EXT=$T/ext
mkdir -p $LB $LM $EXT
LD_PRELOAD=$FAILSYS IOTAP_SLOW_MS=3000 IOTAP_SLOW_LEN=any IOTAP_SLOW_FSYNC=1 IOTAP_SLOW_IF=$SLOW \
	iotap_mount $LB $LM --transport dev
truncate -s 64M $LM/img || fail "image on the lower mount"
mkfs.ext4 -q -F $LM/img || fail "mkfs.ext4 on the lower mount"
LOOP=$(losetup -f --show $LM/img 2>$T/losetup.err) ||
	{ cat $T/losetup.err; skip "no loop device: $(cat $T/losetup.err)"; }
at_exit "losetup -d $LOOP 2>/dev/null"
mount -o noatime $LOOP $EXT || fail "mount the ext4 image"
at_exit "rm -f $SLOW; umount $EXT 2>/dev/null || umount -l $EXT"
head -c 65536 /dev/urandom > $EXT/small
head -c 1048576 /dev/urandom > $EXT/big
sync -f $EXT/big

iotap_mount $EXT "$MNT" --transport uring --trace $T/t.iotap
UPPER_PID=$MOUNT_PID
UPPER_LOG=$MOUNT_LOG
# the upper daemon holds the ext4 busy: it must go before the umount above
upper_down() {
	local n
	fusermount3 -u "$MNT" 2>/dev/null
	for n in $(seq 100); do
		kill -0 $UPPER_PID 2>/dev/null || break
		sleep 0.1
	done
}
at_exit upper_down
cat "$MNT/small" > /dev/null || fail "read over io_uring"
# ext4 forgets big's (clean) pages: the next read of it goes to the disk
dd if=$EXT/big iflag=nocache count=0 2>/dev/null

touch $SLOW
t0=$EPOCHREALTIME
taskset -c 0 dd if="$MNT/big" of=/dev/null bs=64k count=1 2>$T/dd.err &
ddpid=$!
sleep 0.5
kill -0 $ddpid 2>/dev/null || { cat $T/dd.err; fail "the cold read ended at once: the slow disk is not slow"; }
p0=$EPOCHREALTIME
for i in $(seq 1 10); do
	timeout 2 taskset -c 0 cat "$MNT/small" > /dev/null ||
		fail "read $i beside the cold read stalled (over 2 s)"
done
p1=$EPOCHREALTIME
wait $ddpid || { cat $T/dd.err; fail "the cold read failed"; }
t1=$EPOCHREALTIME
rm -f $SLOW
note "cold read took $(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.2f", b - a }') s, 10 reads beside it $(awk -v a=$p0 -v b=$p1 'BEGIN { printf "%.2f", b - a }') s"
awk -v a=$t0 -v b=$t1 'BEGIN { exit !(b - a >= 2.5) }' || fail "the cold read took under 2.5 s: the disk was not slow"
awk -v a=$p0 -v b=$p1 'BEGIN { exit !(b - a < 2) }' ||
	fail "10 reads beside the cold read took $(awk -v a=$p0 -v b=$p1 'BEGIN { print b - a }') s (>= 2 s): held up by it"
awk -v a=$p1 -v b=$t1 'BEGIN { exit !(a < b) }' || fail "the reads ended after the cold read"


# An O_DSYNC write waits for the disk by its nature (ext4 commits it and
# flushes the loop device: an fsync of the image on the slow mount), so a
# helper takes it without trying it on the ring thread.
touch $SLOW
t0=$EPOCHREALTIME
taskset -c 0 dd if=/dev/zero of="$MNT/dsync" bs=64k count=1 oflag=dsync 2>$T/dd.err &
ddpid=$!
sleep 0.5
kill -0 $ddpid 2>/dev/null || { cat $T/dd.err; fail "the O_DSYNC write ended at once: the slow disk is not slow"; }
p0=$EPOCHREALTIME
for i in $(seq 1 10); do
	timeout 2 taskset -c 0 cat "$MNT/small" > /dev/null ||
		fail "read $i beside the O_DSYNC write stalled (over 2 s)"
done
p1=$EPOCHREALTIME
wait $ddpid || { cat $T/dd.err; fail "the O_DSYNC write failed"; }
t1=$EPOCHREALTIME
rm -f $SLOW
note "O_DSYNC write took $(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.2f", b - a }') s, 10 reads beside it $(awk -v a=$p0 -v b=$p1 'BEGIN { printf "%.2f", b - a }') s"
awk -v a=$t0 -v b=$t1 'BEGIN { exit !(b - a >= 2.5) }' || fail "the O_DSYNC write took under 2.5 s: the disk was not slow"
awk -v a=$p0 -v b=$p1 'BEGIN { exit !(b - a < 2) }' ||
	fail "10 reads beside the O_DSYNC write took $(awk -v a=$p0 -v b=$p1 'BEGIN { print b - a }') s (>= 2 s): held up by it"

iotap_umount "$MNT"
expect_eq "daemon exit status" "$MOUNT_RC" 0
grep -q " [2-9][0-9]* reads and writes that would wait served by helpers" $UPPER_LOG ||
	{ cat $UPPER_LOG; fail "the log shows not both the read and the write handed to a helper"; }
"$IOTAP" info --strict $T/t.iotap >$T/info 2>&1 || { cat $T/info; fail "the trace is not clean"; }
# the cold read is recorded once, whole: 64 KiB at offset 0, over 2.5 s
"$IOTAP" dump $T/t.iotap | awk '$4 == "read" && $6 == 0 && $7 == 65536 && $8 == 65536 && $9 > 2500000' >$T/cold
expect_eq "records of the cold read (64 KiB at 0, over 2.5 s)" "$(wc -l < $T/cold)" 1
[ "$(count_ops $T/t.iotap read)" -ge 22 ] || fail "the reads are not all in the trace"
"$IOTAP" dump $T/t.iotap | awk '$4 == "write" && $7 == 65536 && $8 == 65536 && $9 > 2500000' >$T/dsync
expect_eq "records of the O_DSYNC write (64 KiB, over 2.5 s)" "$(wc -l < $T/dsync)" 1

# XFS can try a buffered write without waiting (ext4 cannot): a write of
# part of a page that is not cached must first read it from the slow disk,
# so it goes to a helper too.
if ! command -v mkfs.xfs >/dev/null; then
	note "no mkfs.xfs: the buffered-write part is not run"
	echo "fs-uring-coldread: ok (without XFS)"
	exit 0
fi
XFS=$T/xfs MNT2=$T/mnt2
mkdir -p $XFS $MNT2
truncate -s 320M $LM/xfs.img || fail "XFS image on the lower mount"
mkfs.xfs -q -f $LM/xfs.img || fail "mkfs.xfs on the lower mount"
LOOP2=$(losetup -f --show $LM/xfs.img 2>$T/losetup.err) ||
	{ cat $T/losetup.err; fail "no second loop device: $(cat $T/losetup.err)"; }
at_exit "losetup -d $LOOP2 2>/dev/null"
mount -o noatime $LOOP2 $XFS || fail "mount the XFS image"
at_exit "rm -f $SLOW; umount $XFS 2>/dev/null || umount -l $XFS"
head -c 65536 /dev/urandom > $XFS/small
head -c 1048576 /dev/urandom > $XFS/w
sync -f $XFS/w
iotap_mount $XFS "$MNT2" --transport uring --trace $T/x.iotap
XFS_PID=$MOUNT_PID
XFS_LOG=$MOUNT_LOG
xfs_down() {
	local n
	fusermount3 -u "$MNT2" 2>/dev/null
	for n in $(seq 100); do
		kill -0 $XFS_PID 2>/dev/null || break
		sleep 0.1
	done
}
at_exit xfs_down
cat "$MNT2/small" > /dev/null || fail "read over io_uring (XFS)"
dd if=$XFS/w iflag=nocache count=0 2>/dev/null
touch $SLOW
t0=$EPOCHREALTIME
taskset -c 0 dd if=/dev/zero of="$MNT2/w" bs=100 count=1 seek=50 conv=notrunc 2>$T/dd.err &
ddpid=$!
sleep 0.5
kill -0 $ddpid 2>/dev/null || { cat $T/dd.err; fail "the partial-page write ended at once: the slow disk is not slow"; }
p0=$EPOCHREALTIME
for i in $(seq 1 10); do
	timeout 2 taskset -c 0 cat "$MNT2/small" > /dev/null ||
		fail "read $i beside the partial-page write stalled (over 2 s)"
done
p1=$EPOCHREALTIME
wait $ddpid || { cat $T/dd.err; fail "the partial-page write failed"; }
t1=$EPOCHREALTIME
rm -f $SLOW
note "partial-page write on XFS took $(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.2f", b - a }') s, 10 reads beside it $(awk -v a=$p0 -v b=$p1 'BEGIN { printf "%.2f", b - a }') s"
awk -v a=$t0 -v b=$t1 'BEGIN { exit !(b - a >= 2.5) }' || fail "the partial-page write took under 2.5 s: the disk was not slow"
awk -v a=$p0 -v b=$p1 'BEGIN { exit !(b - a < 2) }' ||
	fail "10 reads beside the partial-page write took $(awk -v a=$p0 -v b=$p1 'BEGIN { print b - a }') s (>= 2 s): held up by it"
iotap_umount "$MNT2"
expect_eq "daemon exit status (XFS)" "$MOUNT_RC" 0
grep -q " [1-9][0-9]* reads and writes that would wait served by helpers" $XFS_LOG ||
	{ cat $XFS_LOG; fail "the log shows no write handed to a helper"; }
"$IOTAP" info --strict $T/x.iotap >$T/info 2>&1 || { cat $T/info; fail "the XFS trace is not clean"; }
"$IOTAP" dump $T/x.iotap | awk '$4 == "write" && $6 == 5000 && $7 == 100 && $8 == 100 && $9 > 2500000' >$T/pw
expect_eq "records of the partial-page write (100 B at 5000, over 2.5 s)" "$(wc -l < $T/pw)" 1
[ "$(od -v -An -tx1 -j 5000 -N 100 $XFS/w | tr -d ' \n' | tr -d 0)" = "" ] || fail "the 100 zero bytes are not at 5000 in the file"
echo "fs-uring-coldread: ok"
