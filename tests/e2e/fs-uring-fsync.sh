#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-uring-fsync: over io_uring, a real fsync that waits for a slow disk
# (the daemon asleep uninterruptibly in the kernel, not a sleep of ours)
# must not hold up other requests from the same CPU (issue 13: "blocking
# backing calls (an fsync on a slow array) do not cap the application's
# queue depth").
#
# The slow disk: an ext4 image on a loop device whose file lives on a
# second iotap mount over /dev/fuse, whose daemon's fsyncs take 4 s
# (failsys.c, once the flag file exists). The mount under test serves that
# ext4 over io_uring. An application pinned to CPU 0 writes 1 MiB and
# fsyncs it -- ext4's fsync flushes the loop device, whose flush is an
# fsync of the image on the slow mount -- while reads of another file from
# CPU 0 must be served at once. Before the fix the ring thread that ran the
# fsync held every entry it had committed: the reads waited the 4 s.
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
LD_PRELOAD=$FAILSYS IOTAP_SLOW_MS=4000 IOTAP_SLOW_FSYNC=1 IOTAP_SLOW_IF=$SLOW \
	iotap_mount $LB $LM --transport dev
truncate -s 64M $LM/img || fail "image on the lower mount"
mkfs.ext4 -q -F $LM/img || fail "mkfs.ext4 on the lower mount"
LOOP=$(losetup -f --show $LM/img 2>$T/losetup.err) ||
	{ cat $T/losetup.err; skip "no loop device: $(cat $T/losetup.err)"; }
at_exit "losetup -d $LOOP 2>/dev/null"
mount -o noatime $LOOP $EXT || fail "mount the ext4 image"
at_exit "rm -f $SLOW; umount $EXT 2>/dev/null || umount -l $EXT"
head -c 65536 /dev/urandom > $EXT/small
sync -f $EXT/small

iotap_mount $EXT "$MNT" --transport uring --trace $T/t.iotap
UPPER_PID=$MOUNT_PID
UPPER_LOG=$MOUNT_LOG
# the upper daemon holds the ext4 busy: it must go before the umount above
# (a function: code run by at_exit must not touch the caller's loop variable)
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

touch $SLOW
t0=$EPOCHREALTIME
taskset -c 0 dd if=/dev/zero of="$MNT/big" bs=64k count=16 conv=fsync 2>$T/dd.err &
ddpid=$!
sleep 0.5
kill -0 $ddpid 2>/dev/null || { cat $T/dd.err; fail "the write+fsync ended at once: the slow disk is not slow"; }
# the premise: a thread of the daemon under test sleeps uninterruptibly
dstate=0
for t in /proc/$UPPER_PID/task/*; do
	[ "$(awk '{ print $3 }' $t/stat 2>/dev/null)" = D ] && dstate=1
done
[ $dstate = 1 ] || note "no daemon thread in D state at 0.5 s (the fsync may wait elsewhere)"
p0=$EPOCHREALTIME
for i in $(seq 1 10); do
	timeout 3 taskset -c 0 cat "$MNT/small" > /dev/null ||
		fail "read $i beside the slow fsync stalled (over 3 s)"
done
p1=$EPOCHREALTIME
wait $ddpid || { cat $T/dd.err; fail "the write+fsync failed"; }
t1=$EPOCHREALTIME
rm -f $SLOW
note "fsync took $(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.2f", b - a }') s, 10 reads beside it $(awk -v a=$p0 -v b=$p1 'BEGIN { printf "%.2f", b - a }') s"
awk -v a=$t0 -v b=$t1 'BEGIN { exit !(b - a >= 3.5) }' || fail "the fsync took under 3.5 s: the disk was not slow"
awk -v a=$p0 -v b=$p1 'BEGIN { exit !(b - a < 2.5) }' ||
	fail "10 reads beside the fsync took $(awk -v a=$p0 -v b=$p1 'BEGIN { print b - a }') s (>= 2.5 s): held up by it"
# they ran while the fsync did, not after it
awk -v a=$p1 -v b=$t1 'BEGIN { exit !(a < b) }' || fail "the reads ended after the fsync"

iotap_umount "$MNT"
expect_eq "daemon exit status" "$MOUNT_RC" 0
grep -q "([1-9][0-9]* fsyncs and the like by helpers)" $UPPER_LOG || { cat $UPPER_LOG; fail "the log shows no fsync served by a helper"; }
[ "$(count_ops $T/t.iotap fsync)" -ge 1 ] || fail "the fsync is not in the trace"
[ "$(count_ops $T/t.iotap read)" -ge 11 ] || fail "the reads are not all in the trace"
echo "fs-uring-fsync: ok"
