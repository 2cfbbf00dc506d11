#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-cache-enospc: a full disk under a --cache mount. On a 32 MiB ext4 a
# 64 MiB write() succeeds into the kernel's writeback cache and fsync()
# returns ENOSPC (the FUSE writeback cache's semantics, as NFS). After the
# failed writebacks the kernel must not keep showing what never reached the
# disk: once the file is closed, stat through the mount gives the backing
# file's true size and its contents read back as the backing file's; the
# report flags the failed writebacks of that file.
. "$(dirname "$0")/lib.sh"
need_fuse
command -v mkfs.ext4 >/dev/null || skip "no mkfs.ext4"
command -v losetup >/dev/null || skip "no losetup"

IMG=$T/small.img
SMALL=$T/small
mkdir $SMALL
truncate -s 32M $IMG
mkfs.ext4 -q -F $IMG || fail "mkfs.ext4"
LOOP=$(losetup -f --show $IMG 2>/dev/null) || skip "no free loop device"
mount $LOOP $SMALL || { losetup -d $LOOP; skip "cannot mount the loop device"; }
# at exit, pass or fail: the FUSE mount over it first (lib.sh's own unmounts
# come after at_exit), then the filesystem lazily, so the loop device goes
# (autoclear) once the daemon has let go of it
at_exit "fusermount3 -u $MNT 2>/dev/null; umount -l $SMALL 2>/dev/null; losetup -d $LOOP 2>/dev/null"

TR=$T/enospc.iotap
iotap_mount "$SMALL" "$MNT" --trace "$TR" --cache
python3 - "$MNT/f" > $T/app.out 2>&1 <<'EOF' || { cat $T/app.out; fail "the application"; }
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
buf = b"x" * (1 << 20)
for i in range(64):
    if os.write(fd, buf) != len(buf):
        raise SystemExit("short write %d" % i)
try:
    os.fsync(fd)
    raise SystemExit("fsync succeeded on a full disk")
except OSError as e:
    if e.errno != errno.ENOSPC:
        raise SystemExit("fsync: %s, want ENOSPC" % e)
try:
    os.close(fd)
except OSError:
    pass
print("fsync ENOSPC")
EOF
grep -q "fsync ENOSPC" $T/app.out || fail "no ENOSPC from fsync"
true_size=$(stat -c %s "$SMALL/f")
[ "$true_size" -lt $((64 << 20)) ] || fail "the backing file holds all 64 MiB on a 32 MiB disk?"
# the kernel forgets the file once it is closed (FUSE_NOTIFY_PRUNE, Linux 6.16)
i=0
while [ "$(stat -c %s "$MNT/f")" != "$true_size" ] && [ $i -lt 20 ]; do
	sleep 0.1
	i=$((i + 1))
done
expect_eq "size through the mount after the failed writebacks" "$(stat -c %s "$MNT/f")" "$true_size"
cmp -s "$MNT/f" "$SMALL/f" || fail "the mount shows other data than the backing file holds"
iotap_umount "$MNT"
expect_eq "daemon exit status" "$MOUNT_RC" 0
"$IOTAP" report "$TR" > $T/report.txt || fail "report"
grep -q "writeback-errors: [0-9]* writeback WRITE(s) failed with ENOSPC on f .*the application learns of these only at fsync/close" \
	$T/report.txt || { cat $T/report.txt; fail "the report does not flag the failed writebacks of f"; }
exit 0
