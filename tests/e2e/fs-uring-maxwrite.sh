#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-uring-maxwrite: --max-write above 1 MiB where the transport allows it.
# Over io_uring the ring buffers are iotap's: with --max-write 4M (and
# fs.fuse.max_pages_limit raised to 1025 for the mount, restored at once) a
# 4 MiB write() is one WRITE record, also from a buffer 16 bytes into a
# page, and the data arrives whole; with the default 1M the same write is
# four requests, flagged cut/cont, that the report counts as one 4 MiB
# write. Over /dev/fuse --max-write 4M is refused, naming io_uring.
. "$(dirname "$0")/lib.sh"
need_fuse
expect 1 "needs FUSE over io_uring" "$IOTAP" mount "$BACKING" "$MNT" --max-write 4M --transport dev
need_uring
LIM=/proc/sys/fs/fuse/max_pages_limit
[ -w $LIM ] || skip "no writable fs.fuse.max_pages_limit (kernel before 6.13)"
ORIG=$(cat $LIM)
at_exit "echo $ORIG > $LIM"

writes() {
	python3 - "$1" <<'PY' || fail "the writes through $1"
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
m = memoryview(mmap.mmap(-1, 8 << 20))
m[:] = bytes(range(256)) * (len(m) // 256)
assert os.write(fd, m[:4 << 20]) == 4 << 20
assert os.write(fd, m[16:16 + (4 << 20)]) == 4 << 20
os.close(fd)
PY
}

# --- --max-write 4M: one record per 4 MiB write() ---------------------------
echo 1025 > $LIM || fail "cannot set max_pages_limit"
iotap_mount "$BACKING" "$MNT" --trace $T/big.iotap --transport uring --max-write 4M
echo "$ORIG" > $LIM
writes "$MNT/f"
iotap_umount "$MNT"
grep -q "requests: max_write 4194304, max_pages 1025" "$MOUNT_LOG" ||
	{ cat "$MOUNT_LOG"; fail "the log lacks max_write 4194304"; }
grep -q "payload buffers of 4198400 bytes" "$MOUNT_LOG" ||
	{ cat "$MOUNT_LOG"; fail "the rings were not sized for 4 MiB"; }
"$IOTAP" dump $T/big.iotap --op write --no-header | awk '{ print $7, $8, / flags=/ ? "flagged" : "-" }' |
	tr '\n' ' ' > $T/big.txt
expect_eq "WRITE records with --max-write 4M" "$(cat $T/big.txt)" "4194304 4194304 - 4194304 4194304 - "
python3 - "$BACKING/f" <<'PY' || fail "the backing file's data"
import sys
d = open(sys.argv[1], "rb").read()
p = bytes(range(256)) * (8 << 12)
assert d[:4 << 20] == p[:4 << 20] and d[4 << 20:] == p[16:16 + (4 << 20)], "data differ"
PY
grep -q "max_write=4194304" <("$IOTAP" info $T/big.iotap) || fail "info lacks max_write=4194304"
expect_eq "the kernel's limit is restored" "$(cat $LIM)" "$ORIG"

# --- the default 1M over io_uring: four pieces, one write in the report ------
iotap_mount "$BACKING" "$MNT" --trace $T/dflt.iotap --transport uring
writes "$MNT/g"
iotap_umount "$MNT"
n=$("$IOTAP" dump $T/dflt.iotap --op write --no-header | wc -l)
[ "$n" -ge 8 ] || fail "the default max_write sent only $n WRITE requests for 2 x 4 MiB"
"$IOTAP" report $T/dflt.iotap --json | python3 -c '
import json, sys
w = json.load(sys.stdin)["total"]["write"]
print(w["ops"], w["bytes"])' > $T/dflt.txt
expect_eq "report of 2 x 4 MiB in pieces (ops bytes)" "$(cat $T/dflt.txt)" "2 8388608"
exit 0
