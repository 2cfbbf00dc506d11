#!/bin/bash
# SPDX-License-Identifier: MIT
# tar: a real tree (/usr/include) into the mount and back out: every
# file's checksum, mode and symlink identical; every created file has its
# NAME record.
. "$(dirname "$0")/lib.sh"
need_fuse
SRC_TREE=/usr/include
[ -d $SRC_TREE ] || skip "no $SRC_TREE"
TR=$T/tar.iotap
sums() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum; \
	  find . -printf '%p %y %m %l\n' | sort); }

iotap_mount "$BACKING" "$MNT" --trace "$TR"
tar -C $SRC_TREE -cf - . | tar -C "$MNT" -xpf - || fail "tar into the mount"
sums $SRC_TREE > $T/a.sum
sums "$MNT" > $T/b.sum
cmp -s $T/a.sum $T/b.sum || { diff $T/a.sum $T/b.sum | head; fail "tree differs through the mount"; }
mkdir $T/out
tar -C "$MNT" -cf - . | tar -C $T/out -xpf - || fail "tar out of the mount"
sums $T/out > $T/c.sum
cmp -s $T/a.sum $T/c.sum || fail "tree differs after the round trip"
sums "$BACKING" > $T/d.sum
cmp -s $T/a.sum $T/d.sum || fail "backing tree differs"
iotap_umount "$MNT"
"$IOTAP" info --strict "$TR" > $T/info.txt || { cat $T/info.txt; fail "info"; }
files=$(cd $SRC_TREE && find . -type f | wc -l)
creates=$(count_ops "$TR" create)
[ "$creates" -ge "$files" ] || fail "create records $creates < files $files"
exit 0
