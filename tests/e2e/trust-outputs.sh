#!/bin/bash
# SPDX-License-Identifier: MIT
# trust-outputs: what a new user trips on around outputs (issue 27, item 20).
#
# A trace under the mount point (`--trace MNT/x.iotap`, in place too) is
# refused: the mount would hide it. Reports, pages and CSV files that
# report and compare create are 0600 like the trace (they name its files).
# `compare --html F` writes the page only, as report does. `report --by
# file` names ops on names not found "(names not found)", not "#0". The
# replay banner counts "1 file", not "1 files". A device given as the
# trace with --force is written to, neither replaced nor chmod'ed.
. "$(dirname "$0")/lib.sh"
need_fuse
umask 022
_mounts="$_mounts $MNT $BACKING"	# unmounted at exit should a refused mount be made

expect 1 "lies under the mount point" "$IOTAP" mount "$BACKING" "$MNT" --trace "$MNT/x.iotap"
mountpoint -q "$MNT" && fail "a mount with its trace under it was made"
expect 1 "lies under the mount point" "$IOTAP" mount "$BACKING" "$BACKING" --trace "$BACKING/x.iotap"
mountpoint -q "$BACKING" && fail "an in-place mount with its trace under it was made"
[ -e "$MNT/x.iotap" ] || [ -e "$BACKING/x.iotap" ] && fail "a refused mount left its trace"

mkdir "$BACKING/sub"
echo data > "$BACKING/sub/a"
TR=$T/o.iotap
iotap_mount "$BACKING" "$MNT" --trace $TR
check "read" cat "$MNT/sub/a" > /dev/null
cat "$MNT/nosuch" 2> /dev/null && fail "a missing file was read"
iotap_umount "$MNT"

check "report -o" "$IOTAP" report $TR -o $T/r.txt
check "report --csv" "$IOTAP" report $TR --csv -o $T/r.csv
check "report --html" "$IOTAP" report $TR --html $T/r.html
check "compare -o" "$IOTAP" compare $TR $TR -o $T/c.txt
"$IOTAP" compare $TR $TR --html $T/c.html > $T/c.out 2> $T/c.err || fail "compare --html"
for f in r.txt r.csv r.html c.txt c.html; do
	expect_eq "mode of $f" "$(stat -c %a $T/$f)" 600
done
[ -s $T/c.out ] && { head $T/c.out; fail "compare --html also printed the text compare"; }
grep -q "<html" $T/c.html || fail "compare --html wrote no page"

"$IOTAP" report $TR --by file > $T/by || fail "report --by file"
grep -q "^#0 " $T/by && { cat $T/by; fail "--by file shows #0"; }
grep -q "^(names not found) " $T/by || { cat $T/by; fail "--by file has no row for the name not found"; }

mkdir $T/r
"$IOTAP" replay $TR $T/r --prepare > /dev/null 2> $T/rp.err || { cat $T/rp.err; fail "replay"; }
grep -q "initial state 2 directories, 1 file (" $T/rp.err || { cat $T/rp.err; fail "replay's banner"; }

# a device as the trace (--trace /dev/null --force, to measure without a
# disk) is written to: never renamed over, never chmod'ed
mknod -m 666 $T/null c 1 3 || fail "mknod"
iotap_mount "$BACKING" "$MNT" --trace $T/null --force
echo x > "$MNT/y" || fail "write through the mount"
iotap_umount "$MNT"
expect_eq "the device after the mount" "$(stat -c '%F %a %t,%T' $T/null)" "character special file 666 1,3"

echo "trust-outputs: ok"
