#!/bin/bash
# SPDX-License-Identifier: MIT
# trust-live: a trace being written is never replaced, not even with --force
# (issue 27, items 1 and 2).
#
# Two mounts, one trace: while T is the live trace of the mount at M1, a
# second mount with --trace T --force is refused and names M1 and its
# daemon's pid (also through a hard link); so are `iotap run --trace T
# --force`, `replay --trace T --overwrite`, another mount's `trace start
# T --force` and a flight recorder's `save T --force`, from the CLI and
# straight at the daemon. M1 goes on recording into T: after its unmount T
# holds M1's writes, undamaged.
# Rotating onto the live file: `iotap trace MNT rotate T --force` where T
# is MNT's current trace is refused, CLI and daemon alike, and T ends up
# holding every write once, with one END record.
# A run with --trace T --force whose T becomes a mount's live trace while
# it runs keeps its own trace under the temporary name, says where, and
# exits non-zero; T stays the mount's.
. "$(dirname "$0")/lib.sh"
need_fuse

B1=$T/b1 M1=$T/m1 B2=$T/b2 M2=$T/m2 TR=$T/live.iotap
mkdir -p $B1 $M1 $B2 $M2 $T/d $T/r
_mounts="$_mounts $M2"	# unmounted at exit should a refused mount be made

# --- two mounts, one trace ---------------------------------------------------
iotap_mount $B1 $M1 --trace $TR
PID1=$MOUNT_PID
expect 1 "live trace of the mount at '$M1', pid $PID1" \
	"$IOTAP" mount $B2 $M2 --trace $TR --force
mountpoint -q $M2 && fail "the second mount onto a live trace was made"
ln $TR $T/link.iotap
expect 1 "live trace of the mount at '$M1'" "$IOTAP" mount $B2 $M2 --trace $T/link.iotap --force
mountpoint -q $M2 && fail "the second mount onto a live trace's link was made"
expect 1 "live trace of the mount at" "$IOTAP" run dd $T/d --bs 4k --count 4 --trace $TR --force -q
check "a trace to replay" "$IOTAP" run dd $T/d --bs 4k --count 4 --trace $T/dd.iotap -q
expect 1 "live trace of the mount at" "$IOTAP" replay $T/dd.iotap $T/r --prepare --trace $TR \
	--overwrite -q
# live rotation and a flight recorder's save onto another mount's trace
iotap_mount $B2 $M2 --ring 1M
PID2=$MOUNT_PID
expect 1 "live trace of the mount at '$M1', pid $PID1" "$IOTAP" trace $M2 save $TR --force
setfattr -n user.iotap.ctl -v "save force $TR" $M2 2> /dev/null &&
	fail "the daemon saved its flight recorder over another mount's live trace"
fusermount3 -u $M2
wait $PID2
iotap_mount $B2 $M2
PID2=$MOUNT_PID
expect 1 "live trace of the mount at '$M1', pid $PID1" "$IOTAP" trace $M2 start $TR --force
setfattr -n user.iotap.ctl -v "start force $TR" $M2 2> /dev/null &&
	fail "the daemon started tracing over another mount's live trace"
check "another trace" "$IOTAP" trace $M2 start $T/other.iotap
expect 1 "live trace of the mount at '$M1', pid $PID1" "$IOTAP" trace $M2 rotate $TR --force
setfattr -n user.iotap.ctl -v "rotate force $TR" $M2 2> /dev/null &&
	fail "the daemon rotated over another mount's live trace"
fusermount3 -u $M2
wait $PID2

# M1 still records into T
check "dd into M1" dd if=/dev/zero of=$M1/first bs=64k count=5 status=none
MOUNT_PID=$PID1
iotap_umount $M1
check "info T" "$IOTAP" info --strict $TR > $T/info
grep -q "^mountpoint *$M1\$" $T/info || { cat $T/info; fail "T is not M1's capture"; }
n=$("$IOTAP" dump $TR | awk '$4 == "write" && $7 == 65536 { n++ } END { print n + 0 }')
expect_eq "M1's 64 KiB writes in T" "$n" 5

# --- rotating onto the live file ---------------------------------------------
rm -f $TR $T/link.iotap
iotap_mount $B1 $M1 --log $T/m1.log
check "start" "$IOTAP" trace $M1 start $TR
for i in $(seq 70); do echo x > $M1/a$i; done
expect 1 "is the trace '$M1' is writing now" "$IOTAP" trace $M1 rotate $TR --force
ln $TR $T/link.iotap
expect 1 "is the trace '$M1' is writing now" "$IOTAP" trace $M1 rotate $T/link.iotap --force
setfattr -n user.iotap.ctl -v "rotate force $TR" $M1 2> /dev/null &&
	fail "the daemon rotated onto its own live trace"
for i in $(seq 10); do echo y > $M1/b$i; done
check "stop" "$IOTAP" trace $M1 stop
iotap_umount $M1
check "info --strict after refused rotations" "$IOTAP" info --strict $TR > $T/info
grep -q "end 1," $T/info || { cat $T/info; fail "T has more than one END record"; }
n=$("$IOTAP" dump $TR | awk '$4 == "write" { n++ } END { print n + 0 }')
expect_eq "writes in T" "$n" 80

# --- a run's --force trace onto T, T made live meanwhile ----------------------
# The run writes under a temporary name and renames it over T at the end;
# T is by then a mount's live trace, so the rename is refused: the run's
# trace is kept under its temporary name, said, and the run fails.
mkdir $T/pg
"$IOTAP" run pgsql $T/pg -s 1 -c 1 -T 60 -q --trace $TR --force > $T/pg.out 2> $T/pg.err &
RUN_PID=$!
at_exit '[ -z "$RUN_PID" ] || kill $RUN_PID 2> /dev/null'
for i in $(seq 300); do
	RUN_TMP=$(ls -d $T/.live.iotap.* 2> /dev/null) && break
	sleep 0.1
done
[ -n "$RUN_TMP" ] || { cat $T/pg.err; fail "the run's trace under a temporary name did not appear"; }
iotap_mount $B1 $M1 --trace $TR --force
PID1=$MOUNT_PID
kill -TERM $RUN_PID
wait $RUN_PID
rc=$?
RUN_PID=
[ $rc -ne 0 ] && [ $rc -lt 131 ] || { cat $T/pg.err; fail "the refused run exited $rc"; }
grep -q "cannot replace trace '$TR': another mount or run is writing it; this run's trace is kept as '$RUN_TMP'" \
	$T/pg.err || { cat $T/pg.err; fail "the run does not say where its trace is"; }
[ -f "$RUN_TMP" ] || fail "the run's trace '$RUN_TMP' was deleted"
check "info --strict on the kept trace" "$IOTAP" info --strict "$RUN_TMP" > $T/info
grep -q "^source *workload" $T/info || { cat $T/info; fail "the kept trace is not the run's"; }
check "dd into M1" dd if=/dev/zero of=$M1/second bs=64k count=3 status=none
MOUNT_PID=$PID1
iotap_umount $M1
check "info T" "$IOTAP" info --strict $TR > $T/info
grep -q "^mountpoint *$M1\$" $T/info || { cat $T/info; fail "T is not M1's capture"; }

echo "trust-live: ok"
