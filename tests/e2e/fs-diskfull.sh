#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-diskfull: the trace lives on a 1 MiB tmpfs that fills up while an
# application writes a lot through the mount. Tracing must never change an
# I/O result: the application succeeds and its data is right, the daemon
# keeps serving, warns once in its log and exits 0, and the trace is
# readable, with the dropped records counted (`iotap info` says so).
# TIMEOUT: 120
. "$(dirname "$0")/lib.sh"
need_fuse
command -v python3 >/dev/null || skip "python3 not installed"

SMALL=$T/small
mkdir $SMALL
mount -t tmpfs -o size=1m iotap-e2e $SMALL 2>/dev/null || skip "cannot mount a tmpfs"
_mounts="$_mounts $SMALL"
TR=$SMALL/full.iotap
iotap_mount "$BACKING" "$MNT" --trace "$TR"
# random 512-byte writes compress badly: ~9 bytes a record, 300,000 records
python3 - "$MNT/f" > $T/app.out 2>&1 <<'EOF' || { cat $T/app.out; fail "the application failed"; }
import os, random, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o644)
r = random.Random(1)
offs = [r.randrange(0, 1 << 28, 512) for _ in range(300000)]
for i, off in enumerate(offs):
    if os.pwrite(fd, (b"%07d\n" % i) * 64, off) != 512:
        raise SystemExit("short write")
last = {}
for i, off in enumerate(offs):
    last[off] = i
for off, i in r.sample(sorted(last.items()), 2000):
    if os.pread(fd, 512, off) != (b"%07d\n" % i) * 64:
        raise SystemExit("bad data at %d" % off)
os.close(fd)
print("ok")
EOF
echo alive > "$MNT/after" || fail "the mount stopped serving after the trace filled up"
iotap_umount "$MNT"
expect_eq "daemon exit status" "$MOUNT_RC" 0
n=$(grep -c "WARN: cannot write trace" "$MOUNT_LOG")
expect_eq "disk-full warnings in the log" "$n" 1

"$IOTAP" info "$TR" > $T/info.txt 2>&1
rc=$?
cat $T/info.txt >&2
[ $rc -eq 0 ] || fail "iotap info exited $rc"
lost=$(awk '/^lost records/ { print $3 }' $T/info.txt)
[ -n "$lost" ] && [ "$lost" -gt 0 ] || fail "iotap info reports no lost records"
exit 0
