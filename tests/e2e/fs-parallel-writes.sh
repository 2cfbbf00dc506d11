#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-parallel-writes: in direct mode two writers of one file do not wait on
# each other for the daemon. The daemon's pwrite of 12288 bytes takes 1.5 s
# (failsys.c); two processes write 12288 bytes each into one existing file at
# once: with FOPEN_PARALLEL_DIRECT_WRITES in the open reply (fs/wire.c) both
# finish in about 1.5 s, serialised by the kernel's inode lock they take 3 s.
# The data must be right and both writes recorded. An append still works.
# TIMEOUT: 60
. "$(dirname "$0")/lib.sh"
need_fuse
command -v python3 >/dev/null || skip "python3 not installed"
need_failsys

head -c 1048576 /dev/zero > "$BACKING/w"
LD_PRELOAD=$FAILSYS IOTAP_SLOW_MS=1500 IOTAP_SLOW_WLEN=12288 \
	iotap_mount "$BACKING" "$MNT" --trace $T/pw.iotap
grep -q "direct writes to one file run in parallel" $MOUNT_LOG ||
	{ cat $MOUNT_LOG; fail "the log does not say direct writes run in parallel"; }

python3 - "$MNT/w" > $T/pw.out 2>&1 <<'PY' || { cat $T/pw.out; fail "parallel writers"; }
import os, sys, time
path = sys.argv[1]
t0 = time.monotonic()
kids = []
for k in range(2):
    pid = os.fork()
    if pid == 0:
        fd = os.open(path, os.O_WRONLY)
        n = os.pwrite(fd, bytes([65 + k]) * 12288, 65536 * (k + 1))
        os._exit(0 if n == 12288 else 1)
    kids.append(pid)
for pid in kids:
    _, st = os.waitpid(pid, 0)
    if st:
        raise SystemExit("a writer failed: status %d" % st)
dt = time.monotonic() - t0
print("two 1.5 s writes took %.2f s" % dt)
if dt < 1.4:
    raise SystemExit("the daemon's writes were not slow: failsys not in effect?")
if dt > 2.6:
    raise SystemExit("the writes waited on each other (%.2f s)" % dt)
PY
cat $T/pw.out
python3 - "$MNT/w" <<'PY' || fail "the data written in parallel did not read back"
import sys
d = open(sys.argv[1], "rb").read()
assert len(d) == 1048576, len(d)
assert d[65536:65536 + 12288] == b"A" * 12288
assert d[131072:131072 + 12288] == b"B" * 12288
assert d[:65536].count(0) == 65536 and d[65536 + 12288:131072].count(0) == 131072 - 65536 - 12288
PY
echo tail >> "$MNT/w" || fail "append"
expect_eq "size after the append" "$(stat -c %s "$BACKING/w")" 1048581
iotap_umount "$MNT"
n=$("$IOTAP" dump $T/pw.iotap | awk '$4 == "write" && $7 == 12288' | wc -l)
[ "$n" -eq 2 ] || { "$IOTAP" dump $T/pw.iotap | grep write; fail "want 2 recorded 12288-byte writes, got $n"; }
