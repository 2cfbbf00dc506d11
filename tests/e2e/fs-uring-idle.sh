#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-uring-idle: an idle io_uring mount leaves its daemon asleep (issue 24).
# The watchdog that hands a blocked leader's ring on (fs/transport/uring.c)
# sleeps while no leader is in a handler, and the leader that enters one
# wakes it:
#   - idle for 2 s, the daemon's threads together switch out voluntarily
#     fewer than 200 times. The watchdog that looked every millisecond
#     made about 1,900 (940 a second); what is left is the recorder's
#     writer, which ticks every 50 ms (RCD_TICK_MS: about 42 in 2 s).
#     200 leaves that writer room five times over and still fails a
#     watchdog that wakes even every 10 ms (BENCHMARKS.md, session 16);
#   - then, the watchdog asleep, a read whose daemon-side pread blocks
#     (failsys.c) loses its queue's lead: a read from the same CPU is
#     served beside it, and the log counts the hand-on. (fs-uring tests
#     the hand-on itself, beside reads and fsyncs; here it is the wake.)
. "$(dirname "$0")/lib.sh"
need_fuse
unset IOTAP_TRANSPORT
need_uring
command -v taskset >/dev/null || skip "no taskset"
need_failsys
head -c 65536 /dev/urandom > "$BACKING/g"
echo x > "$BACKING/f"

vol() {		# vol PID: voluntary switches of all its threads
	local n=0 t v
	for t in /proc/$1/task/*/status; do
		v=$(awk '/^voluntary_ctxt_switches/ { print $2 }' "$t" 2>/dev/null)
		n=$((n + ${v:-0}))
	done
	echo $n
}
per_thread() {	# per_thread PID: "name switches" per thread, on stderr
	local t
	for t in /proc/$1/task/*; do
		echo "#   $(cat $t/comm 2>/dev/null) $(awk '/^voluntary_ctxt_switches/ { print $2 }' $t/status 2>/dev/null)" >&2
	done
}

# the daemon's pread of exactly 12 KiB takes 4 s; nothing else is slow
LD_PRELOAD=$FAILSYS IOTAP_SLOW_MS=4000 IOTAP_SLOW_LEN=12288 \
	iotap_mount "$BACKING" "$MNT" --transport uring --trace $T/idle.iotap
cat "$MNT/f" > /dev/null || fail "read over the io_uring mount"
for i in $(seq 50); do
	grep -q "io_uring: [0-9]* queues" "$MOUNT_LOG" && break
	sleep 0.1
done
grep -q "io_uring: [0-9]* queues" "$MOUNT_LOG" || { cat "$MOUNT_LOG"; fail "the rings did not start"; }
# The slow reader opens its file now and waits on a FIFO, so that the
# first request after the idle spell is its read, made with the watchdog
# asleep. Not an fd of this shell: every process it forks would close
# its copy at exit, a FLUSH each, and those requests wake the daemon.
mkfifo $T/go
(
	exec 3< "$MNT/g" || exit 1
	read -r _ < $T/go
	exec taskset -c 0 dd of=/dev/null bs=12288 count=1 <&3 2>/dev/null
) &
ddpid=$!
at_exit "kill $ddpid 2>/dev/null"
sleep 0.5
kill -0 $ddpid 2>/dev/null || fail "the slow reader could not open its file"

a=$(vol $MOUNT_PID)
sleep 2
b=$(vol $MOUNT_PID)
n=$((b - a))
note "idle 2 s: $n voluntary switches of the daemon's threads"
[ $n -lt 200 ] || { per_thread $MOUNT_PID; fail "an idle daemon switched $n times in 2 s (>= 200)"; }

# the watchdog sleeps: a read blocked in its handler must still wake it
echo go > $T/go
sleep 0.3
kill -0 $ddpid 2>/dev/null || fail "the slow read did not block"
timeout 2 taskset -c 0 cat "$MNT/f" > /dev/null ||
	fail "a read beside a blocked one stalled: the blocked leader kept the lead (watchdog not woken?)"
wait $ddpid || fail "the slow read failed"
iotap_umount "$MNT"
expect_eq "daemon exit status" "$MOUNT_RC" 0
grep -q "[1-9][0-9]* handed on from a blocked handler" "$MOUNT_LOG" ||
	{ cat "$MOUNT_LOG"; fail "the log shows no hand-on"; }
echo "fs-uring-idle: ok"
