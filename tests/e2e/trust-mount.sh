#!/bin/bash
# SPDX-License-Identifier: MIT
# trust-mount: a refused mount loses nothing (issue 9's fix list).
#
# `iotap mount --force` over an existing trace writes the new trace under
# a temporary name in the same directory and renames it over the old one
# only once the mount is up: a mount the kernel then refuses (here
# -o blksize, which only fuseblk takes) leaves the old trace byte for
# byte, and no temporary file, in the foreground and as a daemon. The
# same refusal without --trace is a plain error. A mount that succeeds
# replaces the old trace, its log takes the trace's real name.
# `iotap mark` refuses, exit 1, any directory but the root of a live iotap
# mount (a plain one, the backing directory, a directory inside the
# mount), and sets nothing on it. After the daemon is killed, mark and
# mount say the daemon is gone and how to clean up; umount removes the
# dead mount.
. "$(dirname "$0")/lib.sh"
need_fuse

mkdir $T/tr
check "old trace" "$IOTAP" run dd $T/tr --bs 64k --count 4 --trace $T/tr/old.iotap -q
cp $T/tr/old.iotap $T/old.orig

for fg in -f ""; do
	expect 1 "cannot mount" "$IOTAP" mount "$BACKING" "$MNT" --trace $T/tr/old.iotap --force \
		-o blksize=4096 $fg
	cmp -s $T/tr/old.iotap $T/old.orig || fail "a refused mount${fg:+ ($fg)} changed the old trace"
	left=$(ls -A $T/tr | grep -v '^old.iotap$' | grep -v '^old.iotap.log$')
	[ -z "$left" ] || fail "a refused mount${fg:+ ($fg)} left: $left"
	mountpoint -q "$MNT" && fail "the refused mount is mounted"
	# without --trace: the same error, nothing else (in the background an
	# untraced mount needs --log)
	expect 1 "cannot mount" "$IOTAP" mount "$BACKING" "$MNT" -o blksize=4096 \
		${fg:---log $T/untraced.log}
	grep -qi "trace" $T/err && { cat $T/err; fail "a mount without --trace talks of a trace"; }
done

# the log is appended to: never to a trace, never to the trace being written
# (as a daemon: a mount that wrongly comes up returns, and the EXIT trap unmounts it)
_mounts="$_mounts $MNT"
expect 1 "is an iotap trace" "$IOTAP" mount "$BACKING" "$MNT" --trace $T/tr/new.iotap \
	--log $T/tr/old.iotap
cmp -s $T/tr/old.iotap $T/old.orig || fail "--log appended to a trace"
[ -e $T/tr/new.iotap ] && fail "a refused mount created its trace"
expect 2 "same file" "$IOTAP" mount "$BACKING" "$MNT" --trace $T/tr/new.iotap --log $T/tr/new.iotap
[ -e $T/tr/new.iotap ] && fail "a refused mount created its trace"

# a mount that comes up replaces the old trace, and only then
"$IOTAP" mount "$BACKING" "$MNT" --trace $T/tr/old.iotap --force || fail "mount --force"
_mounts="$_mounts $MNT"
echo data > "$MNT/f"
sync
"$IOTAP" umount "$MNT" || fail "umount"
"$IOTAP" info $T/tr/old.iotap > $T/info || fail "info of the new trace"
grep -q "capture" $T/info || { cat $T/info; fail "the trace was not replaced by the capture"; }
[ -s $T/tr/old.iotap.log ] || fail "the daemon's log is not TRACE.log"
left=$(ls -A $T/tr | grep -v '^old.iotap$' | grep -v '^old.iotap.log$')
[ -z "$left" ] || fail "a mount left: $left"

# iotap mark (issue 14 item 13): only the root of a live iotap mount
has_mark() { python3 -c 'import os, sys; os.getxattr(sys.argv[1], "user.iotap.mark")' "$1" 2>/dev/null; }
mkdir -p "$BACKING/sub" $T/plain
expect 1 "not the root of an iotap mount" "$IOTAP" mark $T/plain phase1
has_mark $T/plain && fail "mark left user.iotap.mark on a plain directory"
iotap_mount "$BACKING" "$MNT" --trace $T/tr/marks.iotap
expect 1 "not the root of an iotap mount" "$IOTAP" mark "$BACKING" phase1
has_mark "$BACKING" && fail "mark left user.iotap.mark on the backing directory"
expect 1 "not the root of an iotap mount" "$IOTAP" mark "$MNT/sub" phase1
has_mark "$BACKING/sub" && fail "mark left user.iotap.mark on a directory inside the mount"
check "mark the mount" "$IOTAP" mark "$MNT" phase1
check "end the mark" "$IOTAP" mark "$MNT" phase1 --end
iotap_umount "$MNT"
"$IOTAP" dump $T/tr/marks.iotap | grep -c "PHASE" | grep -qx 2 || fail "the two marks are not in the trace"

# a dead mount (issue 14 item 14): the daemon killed, each command says so,
# and umount removes it
"$IOTAP" mount "$BACKING" "$MNT" --trace $T/tr/dead.iotap || fail "mount for the kill"
pid=$(python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], "user.iotap.pid").decode())' "$MNT")
[ -n "$pid" ] || fail "no daemon pid"
kill -9 $pid
while kill -0 $pid 2>/dev/null; do sleep 0.05; done
ls "$MNT" > /dev/null 2>&1	# the kernel finds the connection gone
expect 1 "daemon.*gone" "$IOTAP" mark "$MNT" phase2
grep -q "iotap umount" $T/err || { cat $T/err; fail "mark on a dead mount does not say how to clean up"; }
expect 1 "daemon.*gone" "$IOTAP" mount "$BACKING" "$MNT" --trace $T/tr/again.iotap
grep -q "iotap umount" $T/err || { cat $T/err; fail "mount over a dead mount does not say how to clean up"; }
[ -e $T/tr/again.iotap ] && fail "a refused mount created its trace"
expect 0 "daemon.*gone" "$IOTAP" umount "$MNT"
mountpoint -q "$MNT" && fail "umount left the dead mount"
"$IOTAP" info $T/tr/dead.iotap > $T/info 2>&1
grep -q "no end record" $T/info || { cat $T/info; fail "info does not say the trace was not closed"; }
grep -q "records end at\|no record reached the file" $T/info ||
	{ cat $T/info; fail "info does not say what the killed daemon lost"; }

echo "trust-mount: ok"
