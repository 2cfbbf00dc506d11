#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-uring: the io_uring transport (issue 13). --transport uring refuses
# with the command that turns enable_uring on while it is off, auto falls
# back to /dev/fuse then and picks io_uring once it is on; fio --verify
# through the ring; a slow blocked read holds one ring entry only, is
# killed and the mount keeps serving; unmount while idle and under load.
# The log, the trace header and `iotap info` name the transport and why.
. "$(dirname "$0")/lib.sh"
need_fuse
command -v fio >/dev/null || skip "fio not installed"

unset IOTAP_TRANSPORT		# this case chooses for itself (tests/run may set it)
uring_param_set N

# --- off: uring refuses with the command, auto falls back ---------------
expect 1 "echo Y > /sys/module/fuse/parameters/enable_uring" \
	"$IOTAP" mount "$BACKING" "$MNT" --transport uring --trace $T/refused.iotap -f
[ -e $T/refused.iotap ] && fail "a refused mount left a trace behind"
grep -qs " $MNT fuse" /proc/self/mounts && fail "a refused mount is mounted"
expect 2 "IOTAP_TRANSPORT" env IOTAP_TRANSPORT=bogus "$IOTAP" mount "$BACKING" "$MNT"
expect 2 "--transport wants" "$IOTAP" mount "$BACKING" "$MNT" --transport bogus

iotap_mount "$BACKING" "$MNT" --trace $T/auto-off.iotap
echo x > "$MNT/f" || fail "write over the auto mount"
iotap_umount "$MNT"
grep -q "transport /dev/fuse (auto: .*enable_uring is N)" $MOUNT_LOG ||
	{ cat $MOUNT_LOG; fail "auto with enable_uring off: the log does not say /dev/fuse and why"; }
grep -q "io_uring:" $MOUNT_LOG && fail "auto with enable_uring off started rings"
"$IOTAP" info $T/auto-off.iotap > $T/info-off.txt
grep -q "^transport *dev (auto: .*is N)" $T/info-off.txt || { cat $T/info-off.txt; fail "info: transport dev"; }

# --- on: auto and IOTAP_TRANSPORT pick io_uring ----------------------------
need_uring
IOTAP_TRANSPORT=uring iotap_mount "$BACKING" "$MNT" --trace $T/on.iotap
grep -q "transport io_uring (--transport uring)" $MOUNT_LOG || { cat $MOUNT_LOG; fail "IOTAP_TRANSPORT=uring"; }
fio --output=$T/fio.out --directory="$MNT" --ioengine=psync --verify=crc32c --iomem_align=4096 \
	--verify_fatal=1 --do_verify=1 --verify_state_save=0 \
	--name=seq --rw=write --bs=1M --size=8M --numjobs=2 \
	--name=rand --rw=randwrite --bs=8k --size=4M --numjobs=4 \
	|| { cat $T/fio.out; fail "fio verify through the io_uring mount"; }
grep -q "err= [1-9]" $T/fio.out && fail "fio job with errors over io_uring"
rm -f "$MNT"/seq.* "$MNT"/rand.*

cat "$MNT/f" > /dev/null || fail "read over the io_uring mount"
iotap_umount "$MNT"
expect_eq "daemon exit status after an idle unmount" "$MOUNT_RC" 0
served=$(sed -n 's/.*io_uring: \([0-9]*\) requests served over io_uring.*/\1/p' $MOUNT_LOG)
[ "${served:-0}" -gt 1000 ] || { cat $MOUNT_LOG; fail "too few requests went over io_uring: '${served:-}'"; }
"$IOTAP" info --strict $T/on.iotap > $T/info-on.txt || { cat $T/info-on.txt; fail "info --strict"; }
grep -q "^transport *uring (--transport uring)" $T/info-on.txt || { cat $T/info-on.txt; fail "info: transport uring"; }
[ "$(count_ops $T/on.iotap write)" -ge 1536 ] || fail "writes over io_uring not all recorded"

# --- a blocked handler holds one entry, not its queue -----------------------
# The daemon's pread of 12 KiB and its fsyncs take 6 s (failsys.c). The
# application, pinned to CPU 0 (so its requests all go to queue 0), blocks
# in such a read, then is killed (the kernel sends INTERRUPT over
# /dev/fuse; the read's reply still goes over the ring); meanwhile reads
# from CPU 0 are served at once. So they are beside a slow fsync, and two
# slow fsyncs run at once (fsync-specific: fs-uring-fsync).
command -v taskset >/dev/null || skip "no taskset"
need_failsys
head -c 65536 /dev/urandom > "$BACKING/g"
LD_PRELOAD=$FAILSYS IOTAP_SLOW_MS=6000 IOTAP_SLOW_LEN=12288 IOTAP_SLOW_FSYNC=1 \
	iotap_mount "$BACKING" "$MNT" --trace $T/slow.iotap --transport uring
probe() {	# probe WHAT: 10 reads from CPU 0 while the slow request runs
	local t0=$EPOCHREALTIME i
	# Each read is a few execs: on a loaded machine they take time of
	# their own, so the slow request is long (6 s) and the bound is on
	# the whole probe, which ends well before the slow request does.
	for i in $(seq 1 10); do
		timeout 2 taskset -c 0 cat "$MNT/f" > /dev/null || fail "$1: a read stalled"
	done
	awk -v a=$t0 -v b=$EPOCHREALTIME 'BEGIN { exit !(b - a < 4.5) }' ||
		fail "$1: 10 reads took over 4.5 s"
}
t0=$EPOCHREALTIME
taskset -c 0 dd if="$MNT/g" of=/dev/null bs=12288 count=1 2>/dev/null &
ddpid=$!
sleep 0.3
kill -0 $ddpid 2>/dev/null || fail "the slow read did not block"
probe "beside a blocked read"
kill -9 $ddpid
i=0
while kill -0 $ddpid 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || { dump_waits $ddpid; fail "the killed reader did not end after its read returned"; }
	sleep 0.1
done
awk -v a=$t0 -v b=$EPOCHREALTIME 'BEGIN { exit !(b - a >= 5.5) }' ||
	fail "the killed reader ended before the daemon's read returned"
taskset -c 0 dd if=/dev/zero of="$MNT/s" bs=4k count=1 conv=fsync 2>/dev/null &
ddpid=$!
sleep 0.3
probe "beside a slow fsync"
wait $ddpid || fail "the slow fsync failed"
# two fsyncs at once, from CPU 0: they run side by side on two helpers
t0=$EPOCHREALTIME
taskset -c 0 dd if=/dev/zero of="$MNT/s1" bs=4k count=1 conv=fsync 2>/dev/null &
p1=$!
taskset -c 0 dd if=/dev/zero of="$MNT/s2" bs=4k count=1 conv=fsync 2>/dev/null &
p2=$!
wait $p1 && wait $p2 || fail "two slow fsyncs at once failed"
awk -v a=$t0 -v b=$EPOCHREALTIME 'BEGIN { exit !(b - a < 10) }' ||
	fail "two 6 s fsyncs at once took $(awk -v a=$t0 -v b=$EPOCHREALTIME 'BEGIN { print b - a }') s: one after the other"
cat "$MNT/f" > /dev/null || fail "the mount after the interrupted read"
iotap_umount "$MNT"
grep -q "[1-9][0-9]* handed on from a blocked handler" $MOUNT_LOG ||
	{ cat $MOUNT_LOG; fail "the log shows no hand-on"; }
[ "$(count_ops $T/slow.iotap fsync)" -ge 1 ] || fail "the slow fsync is not in the trace"

iotap_mount "$BACKING" "$MNT" --trace $T/auto-on.iotap
grep -q "transport io_uring (auto: .*is Y)" $MOUNT_LOG || { cat $MOUNT_LOG; fail "auto with enable_uring on"; }

# --- unmount under load: fio runs while the mount goes away -----------------
fio --output=$T/fio3.out --directory="$MNT" --ioengine=psync --name=load --rw=randrw \
	--bs=8k --size=4M --numjobs=4 --time_based --runtime=30 > /dev/null 2>&1 &
fiopid=$!
sleep 1.5
kill -TERM $MOUNT_PID
i=0
while kill -0 $MOUNT_PID 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 150 ] || fail "the daemon did not end within 15 s of SIGTERM under load"
	sleep 0.1
done
wait $MOUNT_PID
rc=$?
expect_eq "daemon exit status after SIGTERM under load" $rc 0
kill $fiopid 2>/dev/null
wait $fiopid 2>/dev/null
grep -q "requests served over io_uring" $MOUNT_LOG || { cat $MOUNT_LOG; fail "no ring summary"; }
grep -qi "ERR" $MOUNT_LOG && { cat $MOUNT_LOG; fail "errors in the log after an unmount under load"; }
"$IOTAP" info $T/auto-on.iotap > /dev/null || fail "the trace after an unmount under load"
echo "fs-uring: ok"
