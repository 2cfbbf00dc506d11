#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-kill9: kill -9 the daemon in the middle of a write stream. The
# writer gets an error, fusermount3 -u (lazily if need be) cleans up, the
# trace is readable by `iotap info` (complete chunks recovered, no END
# record, exit 0), and every block the writer was told was written is
# intact in the backing file.
# TIMEOUT: 60
. "$(dirname "$0")/lib.sh"
need_fuse
command -v python3 >/dev/null || skip "python3 not installed"

TR=$T/kill9.iotap
iotap_mount "$BACKING" "$MNT" --trace "$TR"
# block i is 64 KiB of a pattern derived from i; the writer logs each
# completed block number, then waits to be killed mid-stream
python3 - "$MNT/big" $T/done > $T/writer.out 2>&1 <<'EOF' &
import os, sys, time
path, done = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
log = open(done, "w", buffering=1)
i = 0
try:
    while True:
        blk = (b"%08d" % i) * 8192
        n = os.write(fd, blk)
        if n != len(blk):
            raise SystemExit("short write %d" % n)
        log.write("%d\n" % i)
        i += 1
        if i % 64 == 0:
            time.sleep(0.01)
except OSError as e:
    print("writer stopped by", e)
EOF
WPID=$!
# Wait for the writer to be under way (python's start alone can take
# seconds on a loaded machine), then for at least two recorder chunks
# (one per second).
i=0
until [ "$(wc -l < $T/done 2>/dev/null || echo 0)" -ge 64 ]; do
	i=$((i + 1))
	[ $i -lt 300 ] || fail "writer made no progress in 30 s"
	kill -0 $WPID 2>/dev/null || { cat $T/writer.out; fail "writer ended early"; }
	sleep 0.1
done
sleep 2.5
kill -9 $MOUNT_PID
wait $MOUNT_PID 2>/dev/null
wait $WPID
grep -q "writer stopped by" $T/writer.out || { cat $T/writer.out; fail "writer did not see an error"; }
fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT" || fail "cannot unmount after kill -9"
grep -q " $(realpath "$MNT") fuse" /proc/self/mounts && fail "still mounted"

"$IOTAP" info "$TR" > $T/info.txt 2>&1
rc=$?
cat $T/info.txt >&2
[ $rc -eq 0 ] || fail "iotap info exited $rc on the killed daemon's trace"
grep -q "^complete *no" $T/info.txt || fail "info does not say the trace is incomplete"
w=$(count_ops "$TR" write)
[ "$w" -gt 0 ] || fail "no write records recovered"
blocks=$(wc -l < $T/done)
note "$blocks blocks written before the kill, $w write records recovered"

python3 - "$BACKING/big" $blocks <<'EOF' || fail "data written before the kill is damaged"
import sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "rb") as f:
    for i in range(n):
        blk = f.read(65536)
        if blk != (b"%08d" % i) * 8192:
            raise SystemExit("block %d differs" % i)
EOF
exit 0
