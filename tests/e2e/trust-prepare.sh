#!/bin/bash
# SPDX-License-Identifier: MIT
# trust-prepare: `iotap replay --prepare` (and --prepare-only) never
# deletes or changes what a directory holds unless told to (issue 14
# item 2). A DIR holding a file the capture creates, a file of another
# size, a directory where the capture saw a file, is refused with exit 1,
# the list of what would be removed or changed, and the option that
# allows it (--clobber); nothing in DIR is touched. With --clobber every
# removal and change is printed. A fresh or already matching DIR needs
# nothing. An output that cannot be written is refused before DIR is
# touched (item 16).
. "$(dirname "$0")/lib.sh"
need_fuse
TR=$T/cap.iotap

# a capture: an existing 1 MB file and a directory's file read, one new file made
mkdir -p "$BACKING/sub"
head -c 1000000 /dev/urandom > "$BACKING/big"
echo small > "$BACKING/sub/small"
iotap_mount "$BACKING" "$MNT" --trace "$TR"
cat "$MNT/big" "$MNT/sub/small" > /dev/null
echo created > "$MNT/new"
iotap_umount "$MNT"

# a live directory a user points the replay at by mistake
U=$T/user
mkdir -p $U/sub/small $U/keep
head -c 3000000 /dev/urandom > $U/big		# 3 MB: the capture saw 1 MB
echo "precious" > $U/new			# the capture creates 'new'
echo "mine" > $U/sub/small/notes		# a directory where a file was
echo "untouched" > $U/keep/other
snapshot() { (cd $U && find . -printf '%p %y %s\n' | sort && find . -type f -exec md5sum {} + | sort); }
snapshot > $T/before

for mode in --prepare --prepare-only; do
	expect 1 "would remove or change" "$IOTAP" replay "$TR" $U $mode --timing asap -q
	grep -q -- "--clobber" $T/err || { cat $T/err; fail "$mode: the refusal does not name --clobber"; }
	grep -q "new" $T/err || { cat $T/err; fail "$mode: 'new' not listed"; }
	grep -q "big.*3000000.*1000000" $T/err || { cat $T/err; fail "$mode: the truncation of 'big' not listed"; }
	grep -q "sub/small" $T/err || { cat $T/err; fail "$mode: the directory 'sub/small' not listed"; }
	grep -q "keep" $T/err && { cat $T/err; fail "$mode: 'keep' is not in the way but listed"; }
	snapshot > $T/after
	cmp -s $T/before $T/after || { diff $T/before $T/after; fail "$mode: refused, yet DIR changed"; }
done

# an output that cannot be written: refused before DIR is touched
expect 1 "cannot create trace" "$IOTAP" replay "$TR" $U --prepare --clobber --trace $T/nodir/r.iotap -q
snapshot > $T/after
cmp -s $T/before $T/after || fail "a refused --trace still let --prepare change DIR"
mkdir $T/ro
if mount -t tmpfs -o ro,size=1m iotap-e2e $T/ro 2>/dev/null; then
	_mounts="$_mounts $T/ro"
	expect 1 "Read-only file system" "$IOTAP" replay "$TR" $U --prepare --clobber \
		--trace $T/ro/r.iotap -q
	snapshot > $T/after
	cmp -s $T/before $T/after || fail "a read-only --trace still let --prepare change DIR"
	umount $T/ro
fi

# --clobber: done, and each removal and change said
"$IOTAP" replay "$TR" $U --prepare-only --clobber > $T/out 2> $T/err || { cat $T/err; fail "--clobber"; }
grep -q "removed.*'$U/new'" $T/err || { cat $T/err; fail "--clobber: removal of 'new' not said"; }
grep -q "truncated.*'$U/big'" $T/err || { cat $T/err; fail "--clobber: truncation of 'big' not said"; }
grep -q "removed.*'$U/sub/small'" $T/err || { cat $T/err; fail "--clobber: removal of 'sub/small' not said"; }
[ -e $U/new ] && fail "--clobber: 'new' is still there"
expect_eq "size of big after --clobber" "$(stat -c %s $U/big)" 1000000
expect_eq "keep/other after --clobber" "$(cat $U/keep/other)" "untouched"

# a DIR that holds the initial state already, or a fresh one: no option needed
check "prepare a matching DIR" "$IOTAP" replay "$TR" $U --prepare-only -q
mkdir $T/fresh
check "prepare a fresh DIR" "$IOTAP" replay "$TR" $T/fresh --prepare --timing asap -q
# after a replay the capture's creations are there: a second prepare asks again
expect 1 "would remove or change" "$IOTAP" replay "$TR" $T/fresh --prepare --timing asap -q
check "second prepare with --clobber" "$IOTAP" replay "$TR" $T/fresh --prepare --clobber --timing asap -q

echo "trust-prepare: ok"
