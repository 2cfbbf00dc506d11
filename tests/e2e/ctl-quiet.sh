#!/bin/bash
# SPDX-License-Identifier: MIT
# ctl-quiet: iotap's own control requests never reach the trace, the phases
# or the live counters (issue 27, item 3).
#
# status, top, mark, trace and umount each touch the mount's root: their
# control xattrs, a STATFS, and the GETATTR the kernel sends first when the
# root's attributes are older than attr_timeout. None of those may become
# a record (the tools' pids appear nowhere in the trace, no op is flagged
# rejected), `status` on an idle mount says 0 ops and 0 errors however often
# it was asked, and a phase ends with the workload's last op, not with the
# umount that came seconds later. A refused control request (not root)
# is still recorded, flagged rejected.
. "$(dirname "$0")/lib.sh"
need_fuse

TR=$T/q.iotap
: > $T/pids
# tool CMD...: run `iotap CMD...`, its pid noted
tool() { sh -c 'echo $$ >> "$0"; exec "$@"' $T/pids "$IOTAP" "$@"; }

iotap_mount "$BACKING" "$MNT" --trace $TR --attr-timeout 0
for i in 1 2 3; do
	tool status "$MNT" > $T/status || fail "status failed"
done
grep -q "^served *0 ops (0 errors)" $T/status || { cat $T/status; fail "status on an idle mount counts its own requests"; }
tool mark "$MNT" A || fail "mark A"
check "dd" dd if=/dev/zero of="$MNT/f" bs=1M count=20 status=none
sleep 1.2
tool status "$MNT" > /dev/null || fail "status"
tool top "$MNT" -n 2 > /dev/null 2>&1
tool trace "$MNT" rotate $T/q2.iotap > /dev/null || fail "rotate"
sleep 1.2
tool trace "$MNT" rotate $TR.3 > /dev/null || fail "rotate back"
# a refused one is recorded: a caller that is not root
setpriv --reuid=65534 --regid=65534 --clear-groups getfattr -n user.iotap.stats "$MNT" \
	> /dev/null 2>&1 && fail "nobody read the counters"
sleep 1.2
tool umount "$MNT" || fail "umount"

for f in $TR $T/q2.iotap $TR.3; do
	check "dump $f" "$IOTAP" dump $f > $T/dump
	while read -r p; do
		awk -v p="$p" '$3 == p && $4 != "PHASE"' $T/dump | grep -q . &&
			{ awk -v p="$p" '$3 == p && $4 != "PHASE"' $T/dump; fail "$f holds requests of iotap's own pid $p"; }
	done < $T/pids
	n=$(grep -c "rejected" $T/dump)
	if [ $f = $TR.3 ]; then
		[ "$n" -ge 1 ] || fail "$f: the refused getxattr is not recorded"
		[ "$n" = "$(awk '$3 != 0 && /uid=65534/ && /rejected/' $T/dump | wc -l)" ] ||
			{ cat $T/dump; fail "$f: root's answered requests are flagged rejected"; }
	else
		[ "$n" = 0 ] || { cat $T/dump; fail "$f: $n records flagged rejected"; }
	fi
done
# phase A: from the mark to dd's last op, not to the status or rotation 1.2 s later
"$IOTAP" report $TR > $T/report || fail "report"
secs=$(awk '$2 == "A" { print $4 }' $T/report)
[ -n "$secs" ] || { cat $T/report; fail "no phase A"; }
awk -v s="$secs" 'BEGIN { exit !(s < 1.0) }' || { cat $T/report; fail "phase A lasts $secs s"; }
grep -q "stat+xattr" $T/report && { cat $T/report; fail "a phantom stat+xattr phase"; }

echo "ctl-quiet: ok"
