#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-fault: the hidden fault-injection options fail exactly the Nth request
# of one op without calling the backing fs: the application sees the
# errno (EIO on the 3rd write; ENOSPC on the 2nd fsync), every other call
# succeeds, and the trace records the injected result with
# IOTAP_OPF_REJECTED (flags 0x10).
# TIMEOUT: 60
. "$(dirname "$0")/lib.sh"
need_fuse
command -v python3 >/dev/null || skip "python3 not installed"

cat > $T/w.py <<'EOF'
import errno, os, sys
path, op = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
for i in range(5):
    try:
        if op == "write":
            os.pwrite(fd, b"%d" % i * 100, i * 100)
        else:
            os.write(fd, b"x")
            os.fsync(fd)
        print(i, "ok")
    except OSError as e:
        print(i, errno.errorcode[e.errno])
os.close(fd)
EOF

TR=$T/fault.iotap
iotap_mount "$BACKING" "$MNT" --trace "$TR" --fail-op write --fail-nth 3 --fail-errno 5
python3 $T/w.py "$MNT/f" write > $T/out.txt || fail "writer"
iotap_umount "$MNT"
expect_eq "write results" "$(tr '\n' ' ' < $T/out.txt)" "0 ok 1 ok 2 EIO 3 ok 4 ok "
expect_eq "bytes in the backing file at the failed write" \
	"$(dd if="$BACKING/f" bs=100 skip=2 count=1 status=none | tr -d '\0' | wc -c)" 0
expect_eq "the write after it" "$(dd if="$BACKING/f" bs=100 skip=3 count=1 status=none)" \
	"$(printf '3%.0s' $(seq 100))"
"$IOTAP" dump "$TR" --op write > $T/w.txt
expect_eq "injected record" "$(awk '$6 == 200 && $7 == 100 && $8 == -5 && /flags=0x10/' $T/w.txt | wc -l)" 1
expect_eq "successful writes" "$(awk '$8 == 100' $T/w.txt | wc -l)" 4

TR2=$T/fault2.iotap
iotap_mount "$BACKING" "$MNT" --trace "$TR2" --fail-op fsync --fail-nth 2 --fail-errno 28
python3 $T/w.py "$MNT/g" fsync > $T/out2.txt || fail "fsync writer"
iotap_umount "$MNT"
expect_eq "fsync results" "$(tr '\n' ' ' < $T/out2.txt)" "0 ok 1 ENOSPC 2 ok 3 ok 4 ok "
expect_eq "injected fsync record" \
	"$("$IOTAP" dump "$TR2" --op fsync | awk '$8 == -28 && /flags=0x10/' | wc -l)" 1
exit 0
