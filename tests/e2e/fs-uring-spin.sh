#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-uring-spin: before a queue's leader sleeps for its next request it
# waits in sched_yield() for up to -o uring_spin microseconds (default 30),
# which keeps its vCPU from halting between a synchronous application's
# requests (fs/transport/uring.c, queue_spin()), but only while requests
# keep coming:
#   - fio, one job reading 8 KiB at random for 2 s: the leaders spin (the
#     log's "N waits spun");
#   - the same reads 3 ms apart: next to no spins (a dozen spins without a
#     request and the leader sleeps at once, but for one wait in 64);
#   - an idle mount burns no CPU;
#   - -o uring_spin=0: no spin at all; out of range: refused, by name.
. "$(dirname "$0")/lib.sh"
need_fuse
unset IOTAP_TRANSPORT
need_uring
command -v python3 >/dev/null || skip "needs python3"
command -v fio >/dev/null || skip "needs fio"
head -c 1M /dev/urandom > "$BACKING/f"

reads() {	# reads N GAP_S: N 8 KiB reads of $MNT/f, one thread, GAP_S apart
	python3 - "$MNT/f" "$1" "$2" <<'PY' || fail "reads through the mount"
import os, random, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
gap = float(sys.argv[3])
for i in range(int(sys.argv[2])):
    assert len(os.pread(fd, 8192, random.randrange(128) * 8192)) == 8192
    if gap:
        time.sleep(gap)
os.close(fd)
PY
}
spins() {	# spins: "SPUN CAUGHT" from the log of the unmounted daemon
	sed -n 's/.* \([0-9]*\) waits spun before sleeping (\([0-9]*\) caught a request).*/\1 \2/p' "$MOUNT_LOG"
}
ticks() { awk '{ print $14 + $15 }' /proc/$1/stat; }
logged() {	# logged TEXT: the daemon's log says TEXT within 5 s (the rings start after INIT)
	local i
	for i in $(seq 50); do
		grep -q "$1" "$MOUNT_LOG" && return 0
		sleep 0.1
	done
	cat "$MOUNT_LOG"
	return 1
}

# fio, one job: the leaders spin
iotap_mount "$BACKING" "$MNT" --transport uring --trace $T/a.iotap
stat "$MNT/f" > /dev/null || fail "stat"
logged "spin 30 us" || fail "the log does not give the spin (30 us)"
fio --name=j --filename="$MNT/f" --rw=randread --bs=8k --numjobs=1 --time_based --runtime=2 \
	--ioengine=psync --output-format=terse > $T/fio.out 2> $T/fio.err ||
	{ cat $T/fio.err; fail "fio through the mount"; }
iops=$(awk -F';' '{ print $8 }' $T/fio.out)
# idle: the leader spins at most 30 us after its last request, then sleeps
t0=$(ticks $MOUNT_PID)
sleep 1
t1=$(ticks $MOUNT_PID)
iotap_umount "$MNT"
read -r n caught <<<"$(spins)"
note "fio randread 8k, 1 job: $iops IOPS, $n waits spun ($caught caught a request); idle 1 s: $((t1 - t0)) ticks of CPU"
[ -n "$n" ] || { cat "$MOUNT_LOG"; fail "no spin count in the log"; }
[ "$n" -ge 100 ] || fail "only $n waits spun under fio's randread"
[ $((t1 - t0)) -le 10 ] || fail "an idle mount used $((t1 - t0)) ticks of CPU in 1 s"

# 3 ms apart: the leader stops spinning after a few misses (one probe in 64 waits)
iotap_mount "$BACKING" "$MNT" --transport uring --trace $T/b.iotap
reads 300 0.003
iotap_umount "$MNT"
read -r n caught <<<"$(spins)"
note "3 ms apart: $n waits spun for 300 requests"
[ -n "$n" ] && [ "$n" -le 60 ] || fail "spun $n times for 300 requests 3 ms apart"

# off
iotap_mount "$BACKING" "$MNT" --transport uring --trace $T/c.iotap -o uring_spin=0
stat "$MNT/f" > /dev/null || fail "stat"
logged "spin 0 us" || fail "-o uring_spin=0 is not in the log"
reads 1000 0
iotap_umount "$MNT"
expect_eq "spins with -o uring_spin=0" "$(spins)" "0 0"
for tr in a b c; do
	"$IOTAP" info --strict $T/$tr.iotap > /dev/null || fail "trace $tr.iotap"
done

# out of range: refused before mounting, naming the option (a foreground
# daemon that took it would not return: bounded, and unmounted at exit)
at_exit "grep -q ' $MNT fuse' /proc/mounts && fusermount3 -u '$MNT'"
timeout 10 "$IOTAP" mount "$BACKING" "$MNT" -f --transport uring -o uring_spin=5000 > $T/bad.out 2>&1
rc=$?
[ $rc -ne 0 ] || fail "-o uring_spin=5000 was taken"
grep -q "uring_spin 5000 out of range" $T/bad.out || { cat $T/bad.out; fail "the refusal does not name uring_spin"; }
grep -q " $MNT fuse" /proc/mounts && fail "mounted despite the refusal"
exit 0
