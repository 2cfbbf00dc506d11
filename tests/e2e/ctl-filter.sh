#!/bin/bash
# SPDX-License-Identifier: MIT
# ctl-filter: capture-time filters. With --only-ops write,fsync and
# --only-uid root, root's dd (writes and an fsync) and nobody's writes run
# on the mount: the trace holds exactly root's writes and fsync, no other
# op and nothing of nobody's, still names the files (NAME), is clean, and
# says in its mount options that it was filtered. --only-pid keeps one
# process's ops. Bad filters are refused with exit 2.
# TIMEOUT: 60
. "$(dirname "$0")/lib.sh"
need_fuse
command -v setpriv >/dev/null || skip "setpriv not installed"
U=$(id -u nobody 2>/dev/null) || skip "no user nobody"

expect 2 "unknown op" "$IOTAP" mount "$BACKING" "$MNT" --trace $T/x.iotap --only-ops write,nosuch
expect 2 "no user" "$IOTAP" mount "$BACKING" "$MNT" --trace $T/x.iotap --only-uid no-such-user-xyz
chmod 0777 "$BACKING"
iotap_mount "$BACKING" "$MNT" --trace $T/f.iotap --only-ops write,fsync --only-uid root
dd if=/dev/zero of="$MNT/root.dat" bs=4k count=50 conv=fsync 2>/dev/null || fail "dd"
setpriv --reuid=$U --regid=$U --clear-groups dd if=/dev/zero of="$MNT/nobody.dat" bs=4k count=30 2>/dev/null ||
	fail "nobody's dd"
cat "$MNT/root.dat" > /dev/null
iotap_umount "$MNT"
check "filtered trace is clean" "$IOTAP" info --strict $T/f.iotap
"$IOTAP" dump $T/f.iotap > $T/dump
awk '$1 !~ /^#/ && $4 != "NAME" && $4 != "SAMPLE" && $4 != "NOTE" && $4 != "END" && $4 != "PHASE" &&
	$4 != "write" && $4 != "fsync" { print; bad = 1 } END { exit bad }' $T/dump ||
	fail "ops other than write and fsync in the trace"
grep -q 'uid=65534' <(awk '$4 == "write"' $T/dump) && fail "nobody's writes are in the trace"
expect_eq "root's writes" "$(count_ops $T/f.iotap write)" 50
expect_eq "root's fsync" "$(count_ops $T/f.iotap fsync)" 1
grep -q 'NAME.*name="root.dat"' $T/dump || fail "the written file is not named"
"$IOTAP" info $T/f.iotap | grep -q 'only_ops=write+fsync,only_uid=0' || fail "the header does not say it was filtered"

# --only-pid: a process that holds the file open keeps its ops, others not
iotap_mount "$BACKING" "$MNT" --trace $T/p.iotap --only-pid $$
echo mine > "$MNT/mine"
sh -c "echo theirs > '$MNT/theirs'"
iotap_umount "$MNT"
"$IOTAP" dump $T/p.iotap > $T/dump
n_mine=$(awk -v p=$$ '$4 == "write" && $3 == p' $T/dump | wc -l)
n_other=$(awk -v p=$$ '$4 != "NAME" && $4 != "SAMPLE" && $4 != "END" && $4 != "NOTE" && $1 !~ /^#/ && $3 != p && $3 != 0' $T/dump | wc -l)
[ "$n_mine" -ge 1 ] || fail "the shell's own write is missing"
expect_eq "ops of other processes" "$n_other" 0
exit 0
