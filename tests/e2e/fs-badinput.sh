#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-badinput: `iotap mount` refuses bad input before anything happens,
# with a clear git-style message and a non-zero status, never a crash and
# never a mount left behind: missing or non-directory backing, missing or
# non-directory mount point, an existing trace without --force, a trace on
# a read-only fs or in a missing directory, a mount point already mounted
# (by iotap, or by anything when it is not the backing dir), unknown -o
# options, a mount point inside the backing dir (the daemon would walk into
# its own mount), no arguments, no --log in the background without a trace
# file. Both in the foreground and daemonized (the error
# travels from the daemon child to the parent).
# TIMEOUT: 60
. "$(dirname "$0")/lib.sh"
need_fuse

# expect_bad STATUS PATTERN CMD...: expect (lib.sh), the message is one
# line, and no mount was left behind
expect_bad() {
	expect "$@"
	shift 2
	expect_eq "lines on stderr for '$*'" "$(wc -l < $T/err)" 1
	grep -q " $(realpath "$MNT") fuse" /proc/self/mounts && fail "'$*' left a mount"
	return 0
}

touch $T/file
mkdir "$BACKING/inner"
: > $T/exists.iotap
for fg in -f ""; do
	expect_bad 1 "^iotap: cannot mount '$MNT': backing directory '$T/nope': No such file" \
		"$IOTAP" mount $T/nope "$MNT" --trace $T/a.iotap $fg
	expect_bad 1 "^iotap: cannot mount '$MNT': backing '$T/file' is not a directory" \
		"$IOTAP" mount $T/file "$MNT" $fg
	expect_bad 1 "^iotap: cannot mount '$T/nomnt': No such file" \
		"$IOTAP" mount "$BACKING" $T/nomnt $fg
	expect_bad 1 "^iotap: cannot mount '$T/file': not a directory" \
		"$IOTAP" mount "$BACKING" $T/file $fg
	expect_bad 1 "^iotap: trace '$T/exists.iotap' exists; use --force to overwrite" \
		"$IOTAP" mount "$BACKING" "$MNT" --trace $T/exists.iotap $fg
	expect_bad 1 "^iotap: cannot create trace '$T/nodir/t.iotap': directory '$T/nodir': No such file" \
		"$IOTAP" mount "$BACKING" "$MNT" --trace $T/nodir/t.iotap $fg
	expect_bad 1 "^iotap: cannot mount '$MNT': fuse: unknown option" \
		"$IOTAP" mount "$BACKING" "$MNT" -o no_such_option $fg
	expect_bad 1 "^iotap: cannot mount '$BACKING/inner': it is inside the backing directory" \
		"$IOTAP" mount "$BACKING" "$BACKING/inner" $fg
done
[ -s $T/exists.iotap ] && fail "an existing trace was touched without --force"
# in the background without a trace file there is no TRACE.log: --log is
# needed (stderr is /dev/null there: saves, refusals, losses would vanish)
_mounts="$_mounts $MNT"	# unmounted at exit should one be made
expect_bad 1 "^iotap: cannot mount '$MNT': a mount without --trace FILE .* give --log FILE" \
	"$IOTAP" mount "$BACKING" "$MNT"
expect_bad 1 "^iotap: cannot mount '$MNT': a mount without --trace FILE .* give --log FILE" \
	"$IOTAP" mount "$BACKING" "$MNT" --ring 1M
check "untraced mount with --log" "$IOTAP" mount "$BACKING" "$MNT" --log $T/untraced.log
check "umount" "$IOTAP" umount "$MNT"
grep -q "INFO: mounted '$BACKING' on '$MNT'.*trace none" $T/untraced.log ||
	{ cat $T/untraced.log; fail "the untraced mount's log"; }
[ -e $T/a.iotap ] && fail "a trace was created for a refused mount"

"$IOTAP" mount > $T/out 2> $T/err
rc=$?
[ $rc -ne 0 ] && [ $rc -lt 128 ] || fail "'iotap mount' without arguments exited $rc"
grep -q "BACKING and MOUNTPOINT are required" $T/err || { cat $T/err; fail "no-argument message"; }

# a read-only file system for the trace
mkdir $T/ro
if mount -t tmpfs -o ro,size=1m iotap-e2e $T/ro 2>/dev/null; then
	_mounts="$_mounts $T/ro"
	expect_bad 1 "^iotap: cannot create trace '$T/ro/t.iotap': directory '$T/ro': Read-only file system" \
		"$IOTAP" mount "$BACKING" "$MNT" --trace $T/ro/t.iotap
	# a mount point that is not the backing dir is refused
	expect_bad 1 "^iotap: cannot mount '$T/ro': already mounted (tmpfs)" \
		"$IOTAP" mount "$BACKING" $T/ro
	umount $T/ro || fail "umount tmpfs"
else
	note "no tmpfs: read-only trace case skipped"
fi

# already an iotap mount
iotap_mount "$BACKING" "$MNT" --trace $T/first.iotap
"$IOTAP" mount "$BACKING" "$MNT" --trace $T/second.iotap > $T/out 2> $T/err
rc=$?
[ $rc -eq 1 ] || fail "second mount on the same point exited $rc"
grep -q "^iotap: cannot mount '$MNT': already an iotap mount" $T/err || { cat $T/err; fail "message"; }
[ -e $T/second.iotap ] && fail "second mount created its trace"
echo still > "$MNT/x" || fail "the first mount stopped working"
iotap_umount "$MNT"
expect_eq "first daemon exit status" "$MOUNT_RC" 0
exit 0
