#!/bin/bash
# SPDX-License-Identifier: MIT
# ctl-rotate: `iotap trace MNT start|rotate|stop` on a live mount under
# load. A mount made without --trace starts tracing; fio writes (2 jobs,
# paced, a known number of 4 KiB writes) while the trace is rotated 20
# times, half into numbered names, half into given ones. Then every file
# passes `iotap info --strict`, each one names (NAME) every file an op of
# it touches, and the files together hold exactly the writes fio reports:
# none lost, none doubled (each (file, offset) once). Stop then start
# again under load: each file complete, nothing recorded while stopped.
# The control commands refuse clearly: not a mount, inside the mounted
# tree, an existing file without --force, start while tracing, stop
# while not, bad usage.
# TIMEOUT: 90
. "$(dirname "$0")/lib.sh"
need_fuse
command -v fio >/dev/null || skip "fio not installed"

iotap_mount "$BACKING" "$MNT" --log $T/daemon.log
D=$T/traces
mkdir $D

# refusals before anything runs
expect 1 "not writing a trace" "$IOTAP" trace "$MNT" stop
expect 1 "not writing a trace" "$IOTAP" trace "$MNT" rotate
expect 1 "not the root of an iotap mount" "$IOTAP" trace "$T" start $D/x.iotap
expect 1 "inside the mounted tree" "$IOTAP" trace "$MNT" start "$MNT/x.iotap"
expect 1 "directory" "$IOTAP" trace "$MNT" start $D/nodir/x.iotap
expect 2 "unknown command" "$IOTAP" trace "$MNT" begin $D/x.iotap
expect 2 "start wants one FILE" "$IOTAP" trace "$MNT" start
echo keep > $D/exists.iotap
expect 1 "exists; use --force" "$IOTAP" trace "$MNT" start $D/exists.iotap
expect_eq "existing file untouched" "$(cat $D/exists.iotap)" keep
[ -e "$BACKING/x.iotap" ] && fail "a refused trace was created in the tree"

check "start on an untraced mount" "$IOTAP" trace "$MNT" start $D/r.iotap
expect 1 "already writing a trace" "$IOTAP" trace "$MNT" start $D/r2.iotap
expect 1 "exists; use --force" "$IOTAP" trace "$MNT" rotate $D/exists.iotap

fio --name=w --directory="$MNT" --rw=write --bs=4k --size=6M --numjobs=2 \
	--ioengine=psync --rate_iops=2500 --fallocate=none --output-format=json \
	--output=$T/fio.json >/dev/null 2>$T/fio.err &
FIO=$!
at_exit "kill $FIO 2>/dev/null"
for i in $(seq 1 20); do
	sleep 0.04
	if [ $((i % 2)) = 0 ]; then
		"$IOTAP" trace "$MNT" rotate >/dev/null || fail "rotate $i failed"
	else
		"$IOTAP" trace "$MNT" rotate $D/given-$i.iotap >/dev/null || fail "rotate $i failed"
	fi
done
wait $FIO || { cat $T/fio.err; fail "fio failed"; }
check "stop" "$IOTAP" trace "$MNT" stop
expect_eq "nothing written into the tree" "$(ls "$BACKING" | grep -c iotap)" 0

WANT=$(python3 -c 'import json,sys; print(sum(j["write"]["total_ios"] for j in json.load(open(sys.argv[1]))["jobs"]))' $T/fio.json)
[ "$WANT" -ge 3000 ] || fail "fio wrote only $WANT ios"
NF=$(ls $D/*.iotap | grep -vc exists)
expect_eq "files: the first, 20 rotations" "$NF" 21
: > $T/all
for f in $D/*.iotap; do
	[ "$f" = $D/exists.iotap ] && continue
	"$IOTAP" info --strict "$f" > $T/info 2>&1 || { cat $T/info; fail "$f is not clean"; }
	expect_eq "mode of $f" "$(stat -c %a "$f")" 600
	"$IOTAP" dump "$f" > $T/dump || fail "dump $f"
	# every file id a write touches is named in the same file, before the op
	awk -v f="$f" '$4 == "NAME" { for (i = 5; i <= NF; i++) if ($i ~ /^file=/) named[substr($i, 6)] = 1 }
		$4 == "write" && !named[$5] { print "unnamed file " $5 " in " f; bad = 1; exit }
		END { exit bad }' $T/dump || fail "a rotated file does not stand alone"
	awk '$4 == "write" { print $5, $6 }' $T/dump >> $T/all
done
GOT=$(wc -l < $T/all)
UNIQ=$(sort -u $T/all | wc -l)
note "fio wrote $WANT, the $NF files hold $GOT writes ($UNIQ distinct)"
expect_eq "writes in the rotated files vs fio's count" "$GOT" "$WANT"
expect_eq "no write doubled" "$UNIQ" "$GOT"

# stop and start under load: files complete, nothing from the stopped spans
fio --name=s --directory="$MNT" --rw=write --bs=4k --size=3M --numjobs=1 \
	--ioengine=psync --rate_iops=3000 --fallocate=none >/dev/null 2>$T/fio.err &
FIO=$!
for i in 1 2 3 4 5; do
	check "start $i" "$IOTAP" trace "$MNT" start $D/ss-$i.iotap
	sleep 0.05
	check "stop $i" "$IOTAP" trace "$MNT" stop
	sleep 0.05
done
wait $FIO || { cat $T/fio.err; fail "fio (stop/start) failed"; }
total=0
for i in 1 2 3 4 5; do
	"$IOTAP" info --strict $D/ss-$i.iotap > $T/info 2>&1 || { cat $T/info; fail "ss-$i is not clean"; }
	n=$(count_ops $D/ss-$i.iotap write)
	total=$((total + n))
done
[ $total -gt 0 ] || fail "the start/stop files hold no write"
[ $total -lt 768 ] || fail "the start/stop files hold $total of 768 writes: the stopped spans were traced"
note "start/stop: $total of 768 writes in the traced spans"
grep -q "trace started: '$D/r.iotap'" $T/daemon.log || fail "the log does not say the trace started"
iotap_umount "$MNT"
exit 0
