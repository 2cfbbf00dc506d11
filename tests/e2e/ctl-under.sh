#!/bin/bash
# SPDX-License-Identifier: MIT
# ctl-under: the subtree filter, --only-under, under load. Two fio jobs
# write at the same time, one in db/a (recorded) and one in db/b (not):
# the trace holds exactly fio's writes in db/a and no op, and no NAME, of
# anything in db/b; it names db and db/a (so paths resolve) and says
# only_under=db/a in its mount options. Then the hard cases, each with a
# file held open across the change: a file renamed from b into a is
# recorded from the rename on, a directory renamed into a brings its
# open files with it, a file renamed out of a is no longer recorded, a
# file hard-linked into a is recorded through its outside name too, and
# after a rotation the new trace file names the open file of a but not
# the one of b. Bad paths are refused.
# TIMEOUT: 90
. "$(dirname "$0")/lib.sh"
need_fuse
command -v fio >/dev/null || skip "fio not installed"

mkdir -p "$BACKING/db/a" "$BACKING/db/b" "$BACKING/other"
expect 1 "no such file" "$IOTAP" mount "$BACKING" "$MNT" --trace $T/x.iotap --only-under db/nosuch
expect 2 "'..' is not allowed" "$IOTAP" mount "$BACKING" "$MNT" --trace $T/x.iotap --only-under db/../other
expect 1 "not below the mount point" "$IOTAP" mount "$BACKING" "$MNT" --trace $T/x.iotap --only-under /etc
[ -e $T/x.iotap ] && fail "a refused mount left a trace"

# absolute below the mount point works as the relative form
iotap_mount "$BACKING" "$MNT" --trace $T/u.iotap --only-under "$MNT/db/a/"
fio --output-format=json --output=$T/fio.json --ioengine=psync --rw=write --bs=4k \
	--size=4M --fallocate=none --rate_iops=1500 \
	--name=a --directory="$MNT/db/a" --name=b --directory="$MNT/db/b" \
	>/dev/null 2>$T/fio.err || { cat $T/fio.err; fail "fio failed"; }
WANT_A=$(python3 -c 'import json,sys; print([j["write"]["total_ios"] for j in json.load(open(sys.argv[1]))["jobs"] if j["jobname"] == "a"][0])' $T/fio.json)
WANT_B=$(python3 -c 'import json,sys; print([j["write"]["total_ios"] for j in json.load(open(sys.argv[1]))["jobs"] if j["jobname"] == "b"][0])' $T/fio.json)
expect_eq "fio's writes in db/a" "$WANT_A" 1024
expect_eq "fio's writes in db/b" "$WANT_B" 1024

# renames and links with files held open
echo 1 > "$MNT/db/b/in.dat"
exec 5>>"$MNT/db/b/in.dat"
echo not-recorded >&5
mv "$MNT/db/b/in.dat" "$MNT/db/a/in.dat"
echo recorded-in >&5
mkdir "$MNT/db/b/sub"
exec 6>>"$MNT/db/b/sub/deep.dat"
echo not-recorded >&6
mv "$MNT/db/b/sub" "$MNT/db/a/sub"
echo recorded-deep >&6
echo 1 > "$MNT/db/a/out.dat"
exec 7>>"$MNT/db/a/out.dat"
echo recorded-out >&7
mv "$MNT/db/a/out.dat" "$MNT/other/out.dat"
echo not-recorded-out >&7
echo 1 > "$MNT/other/hl.dat"
ln "$MNT/other/hl.dat" "$MNT/db/a/hl.dat"
echo recorded-hl >> "$MNT/other/hl.dat"
# a rotation: files open before it
exec 8>>"$MNT/db/a/rot.dat" 9>>"$MNT/db/b/rot.dat"
check "rotate" "$IOTAP" trace "$MNT" rotate $T/u2.iotap
echo recorded-rot >&8
echo not-recorded-rot >&9
exec 5>&- 6>&- 7>&- 8>&- 9>&-
iotap_umount "$MNT"

for f in $T/u.iotap $T/u2.iotap; do
	"$IOTAP" info --strict $f > $T/info 2>&1 || { cat $T/info; fail "$f is not clean"; }
	grep -q 'only_under=db/a' $T/info || fail "$f: the mount options do not say only_under=db/a"
done
ino() { stat -c %i "$BACKING/$1"; }
"$IOTAP" dump $T/u.iotap > $T/dump
# every op and NAME record's file ids
awk '$1 !~ /^#/ && $4 != "SAMPLE" && $4 != "NOTE" && $4 != "END" && $4 != "PHASE" {
	if ($4 == "NAME") { for (i = 5; i <= NF; i++) if ($i ~ /^file=/) print substr($i, 6), "NAME" }
	else print $5, $4 }' $T/dump > $T/ids
for f in db/b/a.0.0 db/b/b.0.0 db/b db/b/rot.dat other; do
	[ -e "$BACKING/$f" ] || continue
	grep -q "^$(ino $f) " $T/ids && fail "$f is in the trace: $(grep "^$(ino $f) " $T/ids | head -3)"
done
A=$(ino db/a/a.0.0)
expect_eq "fio's writes in db/a in the trace" "$(awk -v f=$A '$4 == "write" && $5 == f' $T/dump | wc -l)" "$WANT_A"
expect_eq "writes of any db/b file" "$(awk '$4 == "write" && $0 ~ /b\.0\.0/' $T/dump | wc -l)" 0
grep -q 'NAME.*name="db"' $T/dump || fail "db (above the subtree) is not named"
grep -q 'NAME.*name="a"' $T/dump || fail "db/a is not named"
grep -q 'NAME.*name="b"' $T/dump && fail "db/b is named"
grep -q 'NAME.*name="a.0.0"' $T/dump || fail "fio's file in db/a is not named"
nwrites() { awk -v f=$(ino "$1") '$4 == "write" && $5 == f' $T/dump | wc -l; }
expect_eq "writes of in.dat (1 after it came in)" "$(nwrites db/a/in.dat)" 1
expect_eq "writes of sub/deep.dat (1 after its directory came in)" "$(nwrites db/a/sub/deep.dat)" 1
expect_eq "writes of out.dat (1 before it left)" "$(nwrites other/out.dat)" 2
expect_eq "writes of hl.dat through its outside name" "$(nwrites other/hl.dat)" 1
expect_eq "writes of db/b/rot.dat" "$(nwrites db/b/rot.dat)" 0
grep -q "NAME.*parent=$(ino db/a) .*name=\"in.dat\"" $T/dump || fail "in.dat is not named in db/a"

"$IOTAP" dump $T/u2.iotap > $T/dump2
grep -q "NAME file=$(ino db/a/rot.dat) .*name=\"rot.dat\"" $T/dump2 || fail "the new file does not name db/a/rot.dat"
grep -q "NAME file=$(ino db/b/rot.dat) " $T/dump2 && fail "the new file names db/b/rot.dat"
expect_eq "writes of db/a/rot.dat after the rotation" \
	"$(awk -v f=$(ino db/a/rot.dat) '$4 == "write" && $5 == f' $T/dump2 | wc -l)" 1
expect_eq "records of db/b/rot.dat after the rotation" \
	"$(awk -v f=$(ino db/b/rot.dat) '$5 == f' $T/dump2 | wc -l)" 0

# a comma list and a repeated option, the absolute form below BACKING too
iotap_mount "$BACKING" "$MNT" --trace $T/m.iotap --only-under db/a,other --only-under "$BACKING/db/b"
echo x > "$MNT/db/b/m.dat"
echo x > "$MNT/x.dat"
iotap_umount "$MNT"
"$IOTAP" info $T/m.iotap | grep -q 'only_under=db/a,only_under=other,only_under=db/b' ||
	fail "the mount options do not list the three subtrees"
"$IOTAP" dump $T/m.iotap > $T/dump3
grep -q 'NAME.*name="m.dat"' $T/dump3 || fail "db/b/m.dat (third subtree) is not named"
grep -q 'NAME.*name="x.dat"' $T/dump3 && fail "x.dat (outside every subtree) is named"
many=$(for i in $(seq 17); do printf 'db/a,'; done)
expect 2 "at most 16" "$IOTAP" mount "$BACKING" "$MNT" --trace $T/x.iotap --only-under "$many"
exit 0
