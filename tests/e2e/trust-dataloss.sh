#!/bin/bash
# SPDX-License-Identifier: MIT
# trust-dataloss: no command destroys what the user did not ask it to.
#
# Outputs (issue 14 item 1): every output path of report, compare, run,
# mount and replay refuses an input of the same command (by inode: also
# through a hard link or a symlink), refuses an existing trace where the
# output is not a trace, and replaces any other existing file only with
# --force; a refused command leaves the file byte for byte as it was.
. "$(dirname "$0")/lib.sh"
[ -x "$IOTAP" ] || fail "no iotap binary at $IOTAP"

# same FILE COPY: FILE still holds exactly what COPY holds
same() { cmp -s "$1" "$2" || fail "$1 was changed"; }

mkdir $T/d
check "dd trace" "$IOTAP" run dd $T/d --bs 64k --count 16 --trace $T/a.iotap -q
check "dd trace 2" "$IOTAP" run dd $T/d --bs 64k --count 8 --trace $T/b.iotap -q
cp $T/a.iotap $T/a.orig
cp $T/b.iotap $T/b.orig

# --- report and compare: an input, or any trace, is never an output ---------
expect 1 "input" "$IOTAP" report $T/a.iotap -o $T/a.iotap
same $T/a.iotap $T/a.orig
expect 1 "input" "$IOTAP" report $T/a.iotap -o $T/a.iotap --force
same $T/a.iotap $T/a.orig
expect 1 "input" "$IOTAP" report $T/a.iotap --html $T/a.iotap
same $T/a.iotap $T/a.orig
expect 1 "input" "$IOTAP" report $T/a.iotap --phases-from $T/b.iotap -o $T/b.iotap --force
same $T/b.iotap $T/b.orig
expect 1 "input" "$IOTAP" compare $T/a.iotap $T/b.iotap -o $T/a.iotap
same $T/a.iotap $T/a.orig
expect 1 "input" "$IOTAP" compare $T/a.iotap $T/b.iotap --html $T/b.iotap --force
same $T/b.iotap $T/b.orig
# the same file under another name
ln $T/a.iotap $T/hard.link
ln -s a.iotap $T/soft.link
expect 1 "input" "$IOTAP" report $T/a.iotap -o $T/hard.link --force
expect 1 "input" "$IOTAP" report $T/a.iotap --html $T/soft.link --force
expect 1 "input" "$IOTAP" compare $T/b.iotap $T/soft.link -o $T/hard.link --force
same $T/a.iotap $T/a.orig
# stdout appended to the input
"$IOTAP" report $T/a.iotap >> $T/a.iotap 2> $T/err
rc=$?
[ $rc -eq 1 ] || fail "report T >> T exited $rc, want 1"
grep -qi "input" $T/err || { cat $T/err; fail "report T >> T does not say why"; }
same $T/a.iotap $T/a.orig
# a trace that is not an input is not replaced by a report, even with --force
expect 1 "is an iotap trace" "$IOTAP" report $T/a.iotap -o $T/b.iotap --force
same $T/b.iotap $T/b.orig
expect 1 "is an iotap trace" "$IOTAP" compare $T/a.iotap --html $T/b.iotap --force
same $T/b.iotap $T/b.orig

# --- other existing files: only with --force ---------------------------------
echo "my notes" > $T/notes.txt
cp $T/notes.txt $T/notes.orig
expect 1 "exists.*--force" "$IOTAP" report $T/a.iotap -o $T/notes.txt
same $T/notes.txt $T/notes.orig
expect 1 "exists.*--force" "$IOTAP" report $T/a.iotap --html $T/notes.txt
same $T/notes.txt $T/notes.orig
expect 1 "exists.*--force" "$IOTAP" compare $T/a.iotap $T/b.iotap -o $T/notes.txt
same $T/notes.txt $T/notes.orig
check "report -o existing --force" "$IOTAP" report $T/a.iotap -o $T/notes.txt --force
grep -q "^trace " $T/notes.txt || fail "report --force did not write the report"
check "compare --html existing --force" \
	"$IOTAP" compare $T/a.iotap $T/b.iotap --html $T/notes.txt --force -o /dev/null
grep -q "<html" $T/notes.txt || fail "compare --html --force did not write the page"
# -o and --html naming one file
expect 2 "same file" "$IOTAP" report $T/a.iotap -o $T/x.html --html $T/x.html
[ -e $T/x.html ] && fail "report -o X --html X wrote X"
# an empty file too (a trace writer refuses one as well); devices are written to
: > $T/empty
expect 1 "exists.*--force" "$IOTAP" report $T/a.iotap -o $T/empty
check "report -o empty --force" "$IOTAP" report $T/a.iotap -o $T/empty --force
grep -q "^trace " $T/empty || fail "report -o EMPTY --force did not write"
check "report -o /dev/null" "$IOTAP" report $T/a.iotap -o /dev/null
check "report --html /dev/null" "$IOTAP" report $T/a.iotap --html /dev/null -o /dev/null

# --- trace outputs: run and replay -------------------------------------------
# run --force replaces an older trace, never a file that is not one unless forced
expect 1 "exists.*--force" "$IOTAP" run dd $T/d --bs 64k --count 1 --trace $T/notes.txt -q
# replay: its own trace is never its input, not even with --overwrite
mkdir $T/r
expect 1 "input" "$IOTAP" replay $T/a.iotap $T/r --prepare --trace $T/a.iotap --overwrite -q
same $T/a.iotap $T/a.orig
expect 1 "input" "$IOTAP" replay $T/a.iotap $T/r --prepare --trace $T/hard.link --overwrite -q
same $T/a.iotap $T/a.orig
expect 1 "exists.*--overwrite" "$IOTAP" replay $T/a.iotap $T/r --prepare --trace $T/b.iotap -q
same $T/b.iotap $T/b.orig

echo "trust-dataloss: ok"
