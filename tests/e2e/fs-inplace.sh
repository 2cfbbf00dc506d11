#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-inplace: mount over in place (BACKING == MOUNTPOINT). A file that was
# there before is read and rewritten through the mount, new files are
# made, and after unmounting the directory holds exactly that data. Also
# in place over a directory that is itself a mount point (a tmpfs), which
# is the normal way to capture a data volume.
# TIMEOUT: 60
. "$(dirname "$0")/lib.sh"
need_fuse

D=$BACKING
head -c 300000 /dev/urandom > $T/orig
cp $T/orig "$D/data"
mkdir "$D/sub" && echo keep > "$D/sub/old"
TR=$T/inplace.iotap
iotap_mount "$D" "$D" --trace "$TR"
grep -q " $(realpath "$D") fuse.iotap " /proc/self/mounts || fail "not mounted in place"
cmp "$D/data" $T/orig || fail "pre-existing file reads differently through the mount"
expect_eq "pre-existing small file" "$(cat "$D/sub/old")" keep
# rewrite the middle and append, through the mount
printf 'MIDDLE' | dd of="$D/data" bs=6 count=1 seek=1000 oflag=seek_bytes conv=notrunc status=none || fail "rewrite"
printf 'TAIL' >> "$D/data" || fail "append"
echo new > "$D/sub/new" || fail "create"
mv "$D/sub/old" "$D/sub/renamed" || fail "rename"
cp $T/orig $T/want
printf 'MIDDLE' | dd of=$T/want bs=1 seek=1000 conv=notrunc status=none
printf 'TAIL' >> $T/want
cmp "$D/data" $T/want || fail "data through the mount"
iotap_umount "$D"
expect_eq "daemon exit status" "$MOUNT_RC" 0
grep -q " $(realpath "$D") fuse" /proc/self/mounts && fail "still mounted"
cmp "$D/data" $T/want || fail "data after unmount"
expect_eq "new file after unmount" "$(cat "$D/sub/new")" new
expect_eq "renamed file after unmount" "$(cat "$D/sub/renamed")" keep
[ -e "$D/sub/old" ] && fail "old name still there"
w=$("$IOTAP" dump "$TR" --op write | awk '$6 == 1000 && $7 == 6 && $8 == 6' | wc -l)
expect_eq "rewrite record (offset 1000, 6 bytes)" "$w" 1

# in place over a mount point
MP=$T/mp
mkdir $MP
mount -t tmpfs -o size=16m iotap-e2e $MP 2>/dev/null || { note "no tmpfs: skipping the mount-point part"; exit 0; }
_mounts="$MP $_mounts"	# lib.sh's trap unmounts it (umount -l) after the capture
echo before > $MP/f
iotap_mount $MP $MP --trace $T/mp.iotap
expect_eq "file on the mount point through the mount" "$(cat $MP/f)" before
echo after >> $MP/f || fail "append on mount point"
iotap_umount $MP
expect_eq "tmpfs after unmount" "$(cat $MP/f | tr '\n' ' ')" "before after "
umount $MP || fail "umount tmpfs"
exit 0
