#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-manyfiles: create, stat, list and delete 12,000 files through the
# mount with the daemon's RLIMIT_NOFILE at 8,000: no EMFILE, because
# inodes are held by file handle and the O_PATH fd cache is bounded (the
# libfuse passthrough examples die here). The daemon's open fds stay far
# below the number of files the kernel knows. Then the same inode table
# with a 16-entry fd cache under stress-ng's dir/rename/link/symlink mix:
# constant eviction, reopening by handle, and inode numbers the backing fs
# reuses while the kernel still knows the dead file (the handle's
# generation must tell them apart).
# TIMEOUT: 120
. "$(dirname "$0")/lib.sh"
need_fuse
command -v python3 >/dev/null || skip "python3 not installed"

N=12000
# the daemon raises its soft limit to the hard one: make that 8,000 here
ulimit -n 8000 2>/dev/null || ulimit -Sn 8000 || skip "cannot set RLIMIT_NOFILE"
TR=$T/many.iotap
iotap_mount "$BACKING" "$MNT" --trace "$TR"
mkdir "$MNT/d" "$MNT/d2" || fail "mkdir"

start=$(date +%s)
python3 - "$MNT" $N $MOUNT_PID > $T/py.out 2>&1 <<'EOF' || { cat $T/py.out; fail "12,000 files through the mount"; }
import os, sys
mnt, n, pid = sys.argv[1], int(sys.argv[2]), sys.argv[3]
d = os.path.join(mnt, "d")
maxfds = 0
def fds():
    return len(os.listdir("/proc/%s/fd" % pid))
for i in range(n):
    fd = os.open(os.path.join(d, "f%05d" % i), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    if i % 7 == 0:
        os.write(fd, b"x" * (i % 4096))
    os.close(fd)
    if i % 2000 == 0:
        maxfds = max(maxfds, fds())
# half of them also get a second name in another directory
for i in range(0, n, 2):
    os.link(os.path.join(d, "f%05d" % i), os.path.join(mnt, "d2", "h%05d" % i))
names = os.listdir(d)
assert len(names) == n, "listdir gave %d names" % len(names)
total = 0
for i in range(n):
    st = os.stat(os.path.join(d, "f%05d" % i))
    total += st.st_size
    if i % 2 == 0 and st.st_nlink != 2:
        raise SystemExit("f%05d has nlink %d" % (i, st.st_nlink))
maxfds = max(maxfds, fds())
want = sum(i % 4096 for i in range(0, n, 7))
assert total == want, "sizes sum %d, want %d" % (total, want)
for i in range(n):
    os.unlink(os.path.join(d, "f%05d" % i))
for i in range(0, n, 2):
    os.unlink(os.path.join(mnt, "d2", "h%05d" % i))
maxfds = max(maxfds, fds())
print("maxfds", maxfds)
EOF
secs=$(( $(date +%s) - start ))
maxfds=$(awk '/^maxfds/ { print $2 }' $T/py.out)
note "$N files created, linked, listed, stat'ed, deleted in ${secs}s; daemon fds peaked at $maxfds"
# the O_PATH cache holds at most 4096 (the default); a few more are sessions, trace, log
[ "$maxfds" -lt 4200 ] || fail "daemon held $maxfds fds for $N files"
[ -z "$(ls -A "$BACKING/d")$(ls -A "$BACKING/d2")" ] || fail "backing dirs not empty"
rmdir "$MNT/d" "$MNT/d2" || fail "rmdir"
iotap_umount "$MNT"
expect_eq "daemon exit status" "$MOUNT_RC" 0
grep -q "EMFILE\|Too many open files" "$MOUNT_LOG" && fail "EMFILE in the daemon log"
c=$(count_ops "$TR" create)
expect_eq "create records" "$c" $N
u=$(count_ops "$TR" unlink)
expect_eq "unlink records" "$u" $((N + N / 2))

command -v stress-ng >/dev/null || { note "no stress-ng: small-cache part skipped"; exit 0; }
iotap_mount "$BACKING" "$MNT" --fd-cache 16 --threads 16
chmod 1777 "$MNT"
(cd "$MNT" && stress-ng --dir 4 --rename 4 --link 4 --symlink 2 --timeout 3s \
	--temp-path "$MNT" > $T/sng.out 2>&1) || { cat $T/sng.out; fail "stress-ng with a 16-entry fd cache"; }
iotap_umount "$MNT"
expect_eq "daemon exit status (small cache)" "$MOUNT_RC" 0
grep -q "evicted" "$MOUNT_LOG" || fail "no fd cache statistics in the log"
exit 0
