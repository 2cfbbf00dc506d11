#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-mmap: in cache mode (--cache) a shared writable mmap works and its
# pages reach the backing file (as WRITE records); in the default
# direct_io mode the kernel refuses MAP_SHARED with ENODEV (libfuse 3.14
# cannot negotiate FUSE_DIRECT_IO_ALLOW_MMAP), private mappings still work,
# and the daemon log says why.
# TIMEOUT: 60
. "$(dirname "$0")/lib.sh"
need_fuse
command -v python3 >/dev/null || skip "python3 not installed"

cat > $T/mm.py <<'EOF'
import errno, mmap, os, sys
path = sys.argv[1]
fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
os.ftruncate(fd, 1 << 20)
try:
    m = mmap.mmap(fd, 1 << 20, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
except OSError as e:
    print("shared", errno.errorcode[e.errno])
else:
    m[0:5] = b"hello"
    m[500000:500005] = b"world"
    m.flush()
    m.close()
    print("shared ok")
p = mmap.mmap(fd, 4096, mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_WRITE)
p[0:4] = b"priv"
print("private", p[0:4].decode())
p.close()
os.close(fd)
EOF

# cache mode: works, data in the backing file
iotap_mount "$BACKING" "$MNT" --trace $T/cache.iotap --cache
python3 $T/mm.py "$MNT/m" > $T/cache.out 2>&1 || { cat $T/cache.out; fail "mmap script in cache mode"; }
grep -q "^shared ok" $T/cache.out || { cat $T/cache.out; fail "shared writable mmap failed in cache mode"; }
grep -q "^private priv" $T/cache.out || fail "private mmap in cache mode"
iotap_umount "$MNT"
expect_eq "mapped bytes at 0" "$(head -c 5 "$BACKING/m")" hello
expect_eq "mapped bytes at 500000" "$(dd if="$BACKING/m" bs=1 skip=500000 count=5 status=none)" world
expect_eq "private mapping not written back" "$(head -c 4 "$BACKING/m")" hell
w=$(count_ops $T/cache.iotap write)
[ "$w" -gt 0 ] || fail "no WRITE records for the mmap'ed pages in cache mode"
"$IOTAP" info $T/cache.iotap | grep -q "capture (cache)" || fail "trace header does not say cache mode"

# direct_io mode: MAP_SHARED refused with ENODEV, clear log
rm -f "$BACKING/m"
iotap_mount "$BACKING" "$MNT" --trace $T/direct.iotap
python3 $T/mm.py "$MNT/m" > $T/direct.out 2>&1 || { cat $T/direct.out; fail "mmap script in direct mode"; }
grep -q "^shared ENODEV" $T/direct.out || { cat $T/direct.out; fail "shared mmap did not fail with ENODEV in direct mode"; }
grep -q "^private priv" $T/direct.out || fail "private mmap in direct mode"
iotap_umount "$MNT"
grep -q "MAP_SHARED.*ENODEV.*cache mode" "$MOUNT_LOG" || { cat "$MOUNT_LOG"; fail "the log does not explain the mmap limit"; }
exit 0
