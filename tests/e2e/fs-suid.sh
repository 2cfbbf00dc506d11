#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-suid: setuid/setgid bits and file capabilities go exactly as they go on
# the backing file system itself when a user without CAP_FSETID appends to,
# truncates or O_TRUNC-opens a file through the mount, and stay when root
# writes -- in both capture modes. Every case runs on a reference directory
# without FUSE first; the mount must leave the same modes.
# In cache mode the daemon drops the bits itself (FUSE_HANDLE_KILLPRIV_V2,
# fs/wire.c), which spares the kernel's getxattr("security.capability")
# before every write(2): 500 writes must cost a handful of GETXATTRs, not 500.
# TIMEOUT: 90
. "$(dirname "$0")/lib.sh"
need_fuse
command -v setpriv >/dev/null || skip "setpriv not installed"
U=$(id -u nobody 2>/dev/null) || skip "no user nobody"
G=$(id -g nobody)

as_user() { setpriv --reuid=$U --regid=$G --clear-groups -- "$@"; }

ACTIONS="append truncate otrunc rootappend chown"
# mode:group -- 2767 has no group execute: sgid goes only if the writer is
# not in the file's group (root's group, then nobody's own)
MODES="6777:0 4777:0 2777:0 2767:0 2767:$G 0777:0"

setup() {	# setup DIR: one root-owned file per action and mode
	local d=$1 a m
	mkdir -p "$d" && chmod 1777 "$d"
	for a in $ACTIONS; do
		for m in $MODES; do
			f=$d/$a-${m%%:*}-${m##*:}
			echo data >"$f" && chown 0:"${m##*:}" "$f" && chmod "${m%%:*}" "$f" ||
				fail "cannot set up $f"
		done
	done
}

act() {		# act DIR: do each file's action
	local d=$1 f a
	for f in "$d"/*; do
		a=${f##*/}
		a=${a%%-*}
		case $a in
		append)     as_user sh -c "echo x >> '$f'" ;;
		truncate)   as_user truncate -s 1 "$f" ;;
		otrunc)     as_user sh -c ": > '$f'" ;;
		rootappend) sh -c "echo x >> '$f'" ;;
		chown)      chown "$U" "$f" ;;
		esac || fail "$a on $f"
	done
}

modes() { (cd "$1" && stat -c '%n %a %u:%g %s' -- *); }

setup "$T/ref"
act "$T/ref"
want=$(modes "$T/ref")
# the reference itself must show the rules being exercised
grep -q "^append-6777-0 777 " <<<"$want" || fail "reference: a user's append kept suid: $want"
grep -q "^rootappend-6777-0 6777 " <<<"$want" || fail "reference: root's append dropped suid"

caps=0
if command -v setcap >/dev/null && touch "$T/capprobe" &&
   setcap cap_net_raw+ep "$T/capprobe" 2>/dev/null; then
	caps=1
fi

for mode in direct cache; do
	rm -rf "$BACKING" && mkdir -p "$BACKING"
	setup "$BACKING/s"
	if [ $caps = 1 ]; then
		echo data >"$BACKING/capfile" && chmod 0777 "$BACKING/capfile" &&
			setcap cap_net_raw+ep "$BACKING/capfile" || fail "setcap"
	fi
	opt=()
	[ $mode = cache ] && opt=(--cache)
	TR=$T/suid-$mode.iotap
	iotap_mount "$BACKING" "$MNT" --trace "$TR" "${opt[@]}"
	act "$MNT/s"
	if [ $caps = 1 ]; then
		as_user sh -c "echo x >> '$MNT/capfile'" || fail "$mode: user append to capfile"
	fi
	# many small writes from one open file (root: no bits to drop)
	check "$mode: 500 writes" dd if=/dev/zero of="$MNT/many" bs=4k count=500 status=none
	iotap_umount "$MNT"
	expect_eq "$mode: daemon exit status" "$MOUNT_RC" 0

	got=$(modes "$BACKING/s")
	if [ "$got" != "$want" ]; then
		diff <(echo "$want") <(echo "$got") >&2
		fail "$mode: modes after the actions differ from the reference (< reference, > mount)"
	fi
	if [ $caps = 1 ]; then
		c=$(getcap "$BACKING/capfile")
		[ -z "$c" ] || fail "$mode: a user's write kept the file capability: $c"
	fi
	nx=$(count_ops "$TR" getxattr)
	nw=$(count_ops "$TR" write)
	note "$mode: $nw writes, $nx getxattr"
	if [ $mode = direct ]; then
		[ "$nw" -ge 500 ] || fail "direct mode: expected >= 500 WRITE records, found $nw"
	else
		grep -q "HANDLE_KILLPRIV_V2 on" "$MOUNT_LOG" ||
			fail "cache mode did not negotiate HANDLE_KILLPRIV_V2 (see $MOUNT_LOG)"
		[ "$nx" -lt 50 ] || fail "cache mode: $nx GETXATTR round trips for $nw writes"
	fi
done
exit 0
