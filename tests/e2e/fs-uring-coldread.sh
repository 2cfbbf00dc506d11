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
unset IOTAP_TRANSPORT
need_uring

slow_disk_lower 3000 IOTAP_SLOW_LEN=any IOTAP_SLOW_FSYNC=1
slow_fs ext4 64M $T/ext
EXT=$T/ext
head -c 65536 /dev/urandom > $EXT/small
head -c 1048576 /dev/urandom > $EXT/big
sync -f $EXT/big
pin_cache $EXT/small	# the file read beside: cached it must stay

slow_upper $EXT "$MNT" --trace $T/t.iotap
cat "$MNT/small" > /dev/null || fail "read over io_uring"
# ext4 forgets big's (clean) pages: the next read of it goes to the disk
dd if=$EXT/big iflag=nocache count=0 2>/dev/null
beside "cold read" "$MNT/small" 2 dd if="$MNT/big" of=/dev/null bs=64k count=1
awk -v s=$BESIDE_SECS 'BEGIN { exit !(s >= 2.5) }' || fail "the cold read took under 2.5 s: the disk was not slow"

# An O_DSYNC write waits for the disk by its nature (ext4 commits it and
# flushes the loop device: an fsync of the image on the slow mount), so a
# helper takes it without trying it on the ring thread.
beside "O_DSYNC write" "$MNT/small" 2 dd if=/dev/zero of="$MNT/dsync" bs=64k count=1 oflag=dsync
awk -v s=$BESIDE_SECS 'BEGIN { exit !(s >= 2.5) }' || fail "the O_DSYNC write took under 2.5 s: the disk was not slow"

iotap_umount "$MNT"
expect_eq "daemon exit status" "$MOUNT_RC" 0
grep -q " [2-9][0-9]* reads and writes that would wait served by helpers" $UPPER_LOG ||
	{ cat $UPPER_LOG; fail "the log shows not both the read and the write handed to a helper"; }
"$IOTAP" info --strict $T/t.iotap >$T/info 2>&1 || { cat $T/info; fail "the trace is not clean"; }
# each recorded once, whole: 64 KiB at offset 0, over 2.5 s
"$IOTAP" dump $T/t.iotap | awk '$4 == "read" && $6 == 0 && $7 == 65536 && $8 == 65536 && $9 > 2500000' >$T/cold
expect_eq "records of the cold read (64 KiB at 0, over 2.5 s)" "$(wc -l < $T/cold)" 1
[ "$(count_ops $T/t.iotap read)" -ge 22 ] || fail "the reads are not all in the trace"
"$IOTAP" dump $T/t.iotap | awk '$4 == "write" && $7 == 65536 && $8 == 65536 && $9 > 2500000' >$T/dsync
expect_eq "records of the O_DSYNC write (64 KiB, over 2.5 s)" "$(wc -l < $T/dsync)" 1

# XFS can try a buffered write without waiting (ext4 cannot): a write of
# part of a page that is not cached must first read it from the slow disk,
# so it goes to a helper too.
slow_fs xfs 320M $T/xfs
XFS=$T/xfs MNT2=$T/mnt2
mkdir -p $MNT2
head -c 65536 /dev/urandom > $XFS/small
head -c 1048576 /dev/urandom > $XFS/w
sync -f $XFS/w
pin_cache $XFS/small
slow_upper $XFS "$MNT2" --trace $T/x.iotap
cat "$MNT2/small" > /dev/null || fail "read over io_uring (XFS)"
dd if=$XFS/w iflag=nocache count=0 2>/dev/null
beside "partial-page write on XFS" "$MNT2/small" 2 \
	dd if=/dev/zero of="$MNT2/w" bs=100 count=1 seek=50 conv=notrunc
awk -v s=$BESIDE_SECS 'BEGIN { exit !(s >= 2.5) }' || fail "the partial-page write took under 2.5 s: the disk was not slow"
iotap_umount "$MNT2"
expect_eq "daemon exit status (XFS)" "$MOUNT_RC" 0
grep -q " [1-9][0-9]* reads and writes that would wait served by helpers" $UPPER_LOG ||
	{ cat $UPPER_LOG; fail "the log shows no write handed to a helper"; }
"$IOTAP" info --strict $T/x.iotap >$T/info 2>&1 || { cat $T/info; fail "the XFS trace is not clean"; }
"$IOTAP" dump $T/x.iotap | awk '$4 == "write" && $6 == 5000 && $7 == 100 && $8 == 100 && $9 > 2500000' >$T/pw
expect_eq "records of the partial-page write (100 B at 5000, over 2.5 s)" "$(wc -l < $T/pw)" 1
[ "$(od -v -An -tx1 -j 5000 -N 100 $XFS/w | tr -d ' \n' | tr -d 0)" = "" ] || fail "the 100 zero bytes are not at 5000 in the file"
echo "fs-uring-coldread: ok"
