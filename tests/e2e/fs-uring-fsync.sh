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
unset IOTAP_TRANSPORT
need_uring

slow_disk_lower 4000 IOTAP_SLOW_FSYNC=1
slow_fs ext4 64M $T/ext
EXT=$T/ext
head -c 65536 /dev/urandom > $EXT/small
sync -f $EXT/small
pin_cache $EXT/small	# the file read beside: cached it must stay

slow_upper $EXT "$MNT" --trace $T/t.iotap
cat "$MNT/small" > /dev/null || fail "read over io_uring"

beside "write+fsync" "$MNT/small" 2.5 \
	sh -c 'dd if=/dev/zero of="$1" bs=64k count=16 conv=fsync 2>/dev/null' - "$MNT/big"
awk -v s=$BESIDE_SECS 'BEGIN { exit !(s >= 3.5) }' || fail "the fsync took under 3.5 s: the disk was not slow"

iotap_umount "$MNT"
expect_eq "daemon exit status" "$MOUNT_RC" 0
grep -q "([1-9][0-9]* fsyncs and the like by helpers)" $UPPER_LOG || { cat $UPPER_LOG; fail "the log shows no fsync served by a helper"; }
[ "$(count_ops $T/t.iotap fsync)" -ge 1 ] || fail "the fsync is not in the trace"
[ "$(count_ops $T/t.iotap read)" -ge 11 ] || fail "the reads are not all in the trace"
echo "fs-uring-fsync: ok"
