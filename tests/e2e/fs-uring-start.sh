#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-uring-start: requests that arrive over io_uring while the daemon is
# still starting its rings are answered. The kernel sends requests over the
# rings as soon as every queue has registered, and the daemon once told
# its reply path about the rings only after starting their threads, the
# watchdog and a log line: a reply made in between went to /dev/fuse,
# which did not know the request, and the caller waited for good (rare
# hangs in CI's io_uring pass, at the first requests after a mount). Here
# failsys.c holds the daemon for 1 s in that log line's write(2), while
# the test makes requests; each must be answered.
. "$(dirname "$0")/lib.sh"
need_fuse
unset IOTAP_TRANSPORT
need_uring
need_failsys
echo data > "$BACKING/f"
LD_PRELOAD=$FAILSYS IOTAP_SLOW_MS=1000 IOTAP_SLOW_WRITE="queues (one per possible CPU)" \
	iotap_mount "$BACKING" "$MNT" --transport uring --log $T/daemon.log --trace $T/t.iotap
pid=$MOUNT_PID
# 30 rounds of requests over about 1.5 s, from the mount on; a request
# whose reply is lost leaves its caller waiting in the kernel, so the
# whole loop runs in a process of its own, bounded, and the daemon is
# killed if it hangs (which lets the caller go)
( for i in $(seq 30); do
	stat "$MNT/f" >/dev/null && cat "$MNT/f" >/dev/null && ls "$MNT" >/dev/null || exit 1
	sleep 0.05
done ) &
req=$!
for i in $(seq 100); do
	kill -0 $req 2>/dev/null || break
	sleep 0.1
done
if kill -0 $req 2>/dev/null; then
	dump_waits $req
	kill -9 $pid
	wait $req
	fail "requests made while the rings started were not answered within 10 s"
fi
wait $req || fail "a request failed while the rings started"
grep -q "queues (one per possible CPU)" $T/daemon.log || fail "the log line held was not written"
iotap_umount "$MNT"
expect_eq "daemon exit status" "$MOUNT_RC" 0
served=$(sed -n 's/.*io_uring: \([0-9]*\) requests served over io_uring.*/\1/p' $T/daemon.log)
[ "${served:-0}" -ge 1 ] || { cat $T/daemon.log; fail "no request came over io_uring"; }
note "$served requests over io_uring, from the rings' start on"
echo "fs-uring-start: ok"
