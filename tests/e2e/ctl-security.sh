#!/bin/bash
# SPDX-License-Identifier: MIT
# ctl-security: who may read a trace and who may control a capture.
# Traces and the daemon's log are created 0600 unless --trace-mode and
# --trace-group share them. On a 0777 mount root, user nobody may not mark
# a phase nor read the trace path or the daemon's pid through the control
# xattrs: EPERM, and the log says who tried (uid, pid, comm); the trace
# holds no phase of theirs. With --allow-mark-owner the root's owner may
# mark, but still not read the trace path.
# TIMEOUT: 60
. "$(dirname "$0")/lib.sh"
need_fuse
command -v setpriv >/dev/null || skip "setpriv not installed"
command -v setfattr >/dev/null || skip "attr (setfattr) not installed"
U=$(id -u nobody 2>/dev/null) || skip "no user nobody"
G=$(id -g nobody)
as_nobody() { setpriv --reuid=$U --regid=$G --clear-groups -- "$@"; }

chmod 0777 "$BACKING"
TR=$T/sec.iotap
LOG=$T/sec.log
iotap_mount "$BACKING" "$MNT" --trace "$TR" --log "$LOG"
expect_eq "mode of a new trace" "$(stat -c %a "$TR")" 600
expect_eq "mode of a new log" "$(stat -c %a "$LOG")" 600

# nobody: everything refused with EPERM
as_nobody setfattr -n user.iotap.mark -v intruder "$MNT" 2>$T/err1 &&
	fail "nobody could set user.iotap.mark"
grep -q "Operation not permitted" $T/err1 || { cat $T/err1; fail "mark refusal is not EPERM"; }
for n in user.iotap.trace user.iotap.pid; do
	as_nobody getfattr --only-values -n $n "$MNT" >$T/val 2>$T/err1 &&
		fail "nobody could read $n: $(cat $T/val)"
	grep -q "Operation not permitted" $T/err1 || { cat $T/err1; fail "$n refusal is not EPERM"; }
done
expect 1 "only root" as_nobody "$IOTAP" mark "$MNT" intruder2
grep -q "refused setxattr user.iotap.mark from uid $U pid [0-9]* (setfattr)" "$LOG" ||
	{ cat "$LOG"; fail "the log does not say who tried to mark"; }
grep -q "refused getxattr user.iotap.trace from uid $U" "$LOG" ||
	{ cat "$LOG"; fail "the log does not say who read the trace path"; }
# nobody's ordinary I/O on the 0777 root still works
check "nobody writes a file" as_nobody sh -c "echo hi > '$MNT/nobody.txt'"

# root may
check "root marks" "$IOTAP" mark "$MNT" rootphase
expect_eq "root reads the trace path" "$(getfattr --only-values -n user.iotap.trace "$MNT")" "$TR"
iotap_umount "$MNT"
"$IOTAP" dump "$TR" > $T/dump || fail "dump failed"
grep -q rootphase $T/dump || fail "root's phase is missing"
grep -q intruder $T/dump && fail "nobody's phase reached the trace"
check "trace is complete" "$IOTAP" info --strict "$TR"

# --allow-mark-owner: the root's owner marks; --trace-mode/--trace-group share
chown $U:$G "$BACKING"
TR2=$T/sec2.iotap
LOG2=$T/sec2.log
GRP=$(getent group nogroup >/dev/null && echo nogroup || echo $G)
iotap_mount "$BACKING" "$MNT" --trace "$TR2" --log "$LOG2" --allow-mark-owner \
	--trace-mode 0640 --trace-group "$GRP"
expect_eq "mode with --trace-mode 0640" "$(stat -c %a "$TR2")" 640
expect_eq "group with --trace-group" "$(stat -c %g "$TR2")" "$(getent group "$GRP" | cut -d: -f3 || echo $GRP)"
expect_eq "log shares the mode" "$(stat -c %a "$LOG2")" 640
check "owner marks with --allow-mark-owner" as_nobody "$IOTAP" mark "$MNT" ownerphase
as_nobody getfattr --only-values -n user.iotap.trace "$MNT" >/dev/null 2>&1 &&
	fail "the owner could read the trace path"
iotap_umount "$MNT"
"$IOTAP" dump "$TR2" | grep -q ownerphase || fail "the owner's phase is missing"
expect 2 "trace-mode" "$IOTAP" mount "$BACKING" "$MNT" --trace $T/x.iotap --trace-mode 0755
expect 2 "no group" "$IOTAP" mount "$BACKING" "$MNT" --trace $T/x.iotap --trace-group no-such-group-xyz
exit 0
