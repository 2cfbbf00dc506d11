#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-threads: concurrent writers with known op counts. 8 processes (dd)
# and then 8 threads of one process write at once; the trace must hold
# exactly that many WRITE records, none lost, each attributed to the right
# process (PID column) and, for the threads, to 8 distinct thread ids of
# one process. Both capture modes' data must read back right.
# TIMEOUT: 120
. "$(dirname "$0")/lib.sh"
need_fuse
command -v python3 >/dev/null || skip "python3 not installed"

NP=8
NW=4000
TR=$T/threads.iotap
iotap_mount "$BACKING" "$MNT" --trace "$TR"

pids=""
for i in $(seq 1 $NP); do
	dd if=/dev/zero of="$MNT/p$i" bs=4k count=$NW status=none &
	pids="$pids $!"
done
for p in $pids; do
	wait $p || fail "dd $p failed"
done

python3 - "$MNT" $NP $NW > $T/threads.out 2>&1 <<'EOF' || { cat $T/threads.out; fail "threaded writer"; }
import os, sys, threading
mnt, nt, nw = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
tids = []
def work(k):
    tids.append(threading.get_native_id())
    fd = os.open(os.path.join(mnt, "t%d" % k), os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
    blk = bytes([65 + k]) * 1000
    for j in range(nw):
        if os.pwrite(fd, blk, j * 1000) != 1000:
            raise SystemExit("short write")
    os.close(fd)
ts = [threading.Thread(target=work, args=(k,)) for k in range(nt)]
for t in ts: t.start()
for t in ts: t.join()
print("pid", os.getpid())
print("tids", " ".join(map(str, tids)))
EOF
PYPID=$(awk '/^pid/ { print $2 }' $T/threads.out)

for i in $(seq 1 $NP); do
	expect_eq "size of p$i" "$(stat -c %s "$BACKING/p$i")" $((NW * 4096))
done
for k in $(seq 0 $((NP - 1))); do
	expect_eq "size of t$k" "$(stat -c %s "$BACKING/t$k")" $((NW * 1000))
done
iotap_umount "$MNT"
expect_eq "daemon exit status" "$MOUNT_RC" 0

"$IOTAP" info "$TR" > $T/info.txt || { cat $T/info.txt; fail "iotap info"; }
grep -q "^lost records *0" $T/info.txt || { cat $T/info.txt; fail "records were lost"; }
"$IOTAP" dump "$TR" --op write > $T/w.txt
expect_eq "WRITE records" "$(awk '$4 == "write"' $T/w.txt | wc -l)" $((2 * NP * NW))
for p in $pids; do
	expect_eq "writes of dd $p" "$(awk -v p=$p '$3 == p && $2 == p && $7 == 4096 && $8 == 4096' $T/w.txt | wc -l)" $NW
done
expect_eq "writes of the threaded process" "$(awk -v p=$PYPID '$3 == p && $7 == 1000' $T/w.txt | wc -l)" \
	$((NP * NW))
expect_eq "distinct writer threads" "$(awk -v p=$PYPID '$3 == p { print $2 }' $T/w.txt | sort -u | wc -l)" $NP
for tid in $(awk '/^tids/ { $1 = ""; print }' $T/threads.out); do
	expect_eq "writes of thread $tid" "$(awk -v t=$tid '$2 == t' $T/w.txt | wc -l)" $NW
done
exit 0
