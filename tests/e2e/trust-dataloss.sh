#!/bin/bash
# SPDX-License-Identifier: MIT
# trust-dataloss: no command destroys what the user did not ask it to.
#
# Outputs (issue 14 item 1): every output path of report, compare, run,
# mount and replay refuses an input of the same command (by inode: also
# through a hard link or a symlink), refuses an existing trace where the
# output is not a trace, and replaces any other existing file only with
# --force; a refused command leaves the file byte for byte as it was. Every
# workload 'iotap run --help' lists is held to the trace rules, so a new
# one that brings its own check fails here.
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
cp $T/notes.txt $T/notes.now
expect 1 "exists.*--force" "$IOTAP" run dd $T/d --bs 64k --count 1 --trace $T/notes.txt -q
# every workload `iotap run --help` lists, a new one too, follows the same rules
# (the arguments it needs to get as far as its trace check go in this table;
# timeout: a workload that does not check its trace first would run in full)
wl_args() {
	case $1 in
	dd) echo "--bs 4k --count 1" ;;
	dedup) echo "--image-size 8M --generations 1" ;;
	*) echo "" ;;
	esac
}
workloads=$("$IOTAP" run --help | sed -n '/^workloads:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
[ -n "$workloads" ] || fail "no workloads in 'iotap run --help'"
for w in $workloads; do
	expect 1 "exists; use --force" timeout 20 "$IOTAP" run $w $T/d $(wl_args $w) \
		--trace $T/notes.txt
	same $T/notes.txt $T/notes.now
	expect 1 "cannot create trace" timeout 20 "$IOTAP" run $w $T/d $(wl_args $w) \
		--trace $T/nodir/t.iotap
done

# replay: its own trace is never its input, not even with --overwrite
mkdir $T/r
expect 1 "input" "$IOTAP" replay $T/a.iotap $T/r --prepare --trace $T/a.iotap --overwrite -q
same $T/a.iotap $T/a.orig
expect 1 "input" "$IOTAP" replay $T/a.iotap $T/r --prepare --trace $T/hard.link --overwrite -q
same $T/a.iotap $T/a.orig
expect 1 "exists.*--overwrite" "$IOTAP" replay $T/a.iotap $T/r --prepare --trace $T/b.iotap -q
same $T/b.iotap $T/b.orig

# run --force: the old trace goes only when the new one is complete. A run
# killed with SIGKILL (nothing can clean up) leaves the old trace as it was.
cp $T/a.iotap $T/k.iotap
cp $T/k.iotap $T/k.orig
"$IOTAP" run dd /dev/zero --read --bs 4k --count 100000000 --trace $T/k.iotap --force -q \
	> /dev/null 2>&1 &
pid=$!
for _ in $(seq 50); do
	ls $T/.k.iotap.* > /dev/null 2>&1 && break
	sleep 0.1
done
sleep 0.5
kill -9 $pid
wait $pid 2> /dev/null
same $T/k.iotap $T/k.orig
ls $T/.k.iotap.* > /dev/null 2>&1 || fail "run --force wrote the new trace in place"
rm -f $T/.k.iotap.*
# a completed run replaces it, and leaves no temporary file
check "dd --force" "$IOTAP" run dd $T/d --bs 64k --count 3 --trace $T/k.iotap --force -q
cmp -s $T/k.iotap $T/k.orig && fail "run --force did not replace the trace"
check "info new trace" "$IOTAP" info --strict $T/k.iotap
ls $T/.k.iotap.* > /dev/null 2>&1 && fail "run --force left its temporary file"

# replay --overwrite likewise: a replay that cannot start (DIR does not hold
# the initial state) keeps the old trace; one that ran replaces it
# (a dd --read of a file that was there before the run: replay needs the file)
mkdir $T/r2
check "dd read file" "$IOTAP" run dd $T/d --bs 64k --count 4 --read --keep -q
check "dd read trace" "$IOTAP" run dd $T/d --bs 64k --count 4 --read --trace $T/rd.iotap -q
cp $T/b.iotap $T/k.iotap
cp $T/k.iotap $T/k.orig
expect 1 "does not hold the initial state" "$IOTAP" replay $T/rd.iotap $T/r2 --trace $T/k.iotap \
	--overwrite -q
same $T/k.iotap $T/k.orig
ls $T/.k.iotap.* > /dev/null 2>&1 && fail "a refused replay left its temporary trace"
check "replay --overwrite" "$IOTAP" replay $T/rd.iotap $T/r2 --prepare --trace $T/k.iotap \
	--overwrite -q
cmp -s $T/k.iotap $T/k.orig && fail "replay --overwrite did not replace the trace"
"$IOTAP" info $T/k.iotap | grep -q "source *replay" || fail "the replaced trace is not the replay's"
ls $T/.k.iotap.* > /dev/null 2>&1 && fail "replay --overwrite left its temporary file"

echo "trust-dataloss: ok"
