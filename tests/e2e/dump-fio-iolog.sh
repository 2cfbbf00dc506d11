#!/bin/bash
# SPDX-License-Identifier: MIT
# dump-fio-iolog: `iotap dump --fio-iolog` of a real fio capture is an iolog
# version 3 that fio itself replays: fio --read_iolog, on a directory that
# `iotap replay --prepare-only` built, does exactly the trace's reads and
# writes (count and bytes) and fsyncs (fio's JSON does not count its
# fdatasyncs: the second replay checks them); replayed through a second capture
# mount, that capture's iolog holds the same reads, writes and syncs in the
# same order (file, offset, length). What the iolog cannot hold (metadata
# ops, failures) is counted on stderr; bad option combinations exit 2.
. "$(dirname "$0")/lib.sh"
need_fuse
command -v fio > /dev/null || skip "no fio"
command -v python3 > /dev/null || skip "needs python3"
TR=$T/c.iotap
mkdir -p "$T/b2" "$T/m2" "$T/r"
dd if=/dev/urandom of="$BACKING/old" bs=64k count=8 status=none || fail "old file"
head -c 100000 /dev/urandom > "$BACKING/odd" || fail "odd file"
iotap_mount "$BACKING" "$MNT" --trace "$TR"
cat "$MNT/old" "$MNT/odd" > /dev/null || fail "read old"	# odd: a short read
fio --name=cap --directory="$MNT" --filename=a --size=2m --bs=16k --rw=randrw --fsync=16 \
	--ioengine=psync --randrepeat=1 --output=$T/fio-cap.out || fail "fio capture"
mkdir "$MNT/sub" && dd if=/dev/zero of="$MNT/sub/b" bs=8k count=5 conv=fdatasync status=none ||
	fail "sub/b"
iotap_umount "$MNT"

"$IOTAP" dump "$TR" --fio-iolog --fio-root "$T/r" > $T/c.log 2> $T/c.err || { cat $T/c.err; fail "dump --fio-iolog"; }
cat $T/c.err >&2
expect_eq "first line" "$(head -1 $T/c.log)" "fio version 3 iolog"
grep -q "not representable in a fio iolog:.*getattr" $T/c.err || fail "no count of what was skipped"
grep -q "^[0-9]* $T/r/sub/b add$" $T/c.log || fail "sub/b is not named under --fio-root"
grep -q "made 1 directory, .*: $T/r/sub$" $T/c.err || fail "the directory fio cannot make is not named"

# the trace's own counts: successful reads and writes, bytes; fsyncs
"$IOTAP" dump "$TR" --no-header | awk '
	$4 == "read" && $8 > 0 { r++; rb += $8 } $4 == "write" && $8 > 0 { w++; wb += $8 }
	$4 == "fsync" && $8 == 0 && !/ flags=0x1[ (]/ { s++ }	# fio counts fdatasync nowhere
	END { print r + 0, rb + 0, w + 0, wb + 0, s + 0 }' > $T/want
note "trace: reads bytes writes bytes fsyncs = $(cat $T/want)"

"$IOTAP" replay "$TR" "$T/r" --prepare-only -q > /dev/null 2>&1 || fail "replay --prepare-only"
mkdir "$T/r/sub" || fail "mkdir"	# as the summary says
fio --name=replay --read_iolog=$T/c.log --ioengine=psync --output-format=json \
	--output=$T/fio.json > $T/fio.err 2>&1 || { cat $T/fio.err $T/fio.json; fail "fio --read_iolog"; }
python3 - $T/fio.json $T/want <<'PY' || fail "fio's replay differs from the trace"
import json, sys
j = json.load(open(sys.argv[1]))["jobs"][0]
assert j["error"] == 0, j["error"]
got = [j["read"]["total_ios"], j["read"]["io_bytes"], j["write"]["total_ios"],
       j["write"]["io_bytes"], j["sync"]["total_ios"]]
want = [int(x) for x in open(sys.argv[2]).read().split()]
print("# fio replay: reads bytes writes bytes syncs =", *got, file=sys.stderr)
assert got == want, (got, want)
PY

# fio's replay through a capture mount: the same I/O in the same order
"$IOTAP" replay "$TR" "$T/b2" --prepare-only -q > /dev/null 2>&1 || fail "prepare b2"
mkdir "$T/b2/sub" || fail "mkdir b2/sub"
iotap_mount "$T/b2" "$T/m2" --trace $T/r.iotap
"$IOTAP" dump "$TR" --fio-iolog --fio-root "$T/m2" > $T/c2.log 2> /dev/null || fail "dump for m2"
fio --name=replay --read_iolog=$T/c2.log --ioengine=psync --output=$T/fio2.out ||
	fail "fio --read_iolog through the mount"
iotap_umount "$T/m2"
io_lines() { awk '$3 == "read" || $3 == "write" || $3 == "sync" || $3 == "datasync" { print $2, $3, $4, $5 }' "$1"; }
"$IOTAP" dump $T/r.iotap --fio-iolog --fio-root "$T/m2" > $T/r.log 2> /dev/null || fail "dump of the replay"
io_lines $T/c2.log > $T/io.want
io_lines $T/r.log > $T/io.got
[ -s $T/io.want ] || fail "no I/O lines"
cmp -s $T/io.want $T/io.got || { diff $T/io.want $T/io.got | head >&2; fail "the replay's capture differs"; }
note "replay through the mount: $(wc -l < $T/io.got) I/O lines identical"

# --op keeps its meaning; misuse is a usage error
"$IOTAP" dump "$TR" --fio-iolog --op read > $T/ro.log 2> /dev/null || fail "--op read"
[ "$(awk '$3 == "write"' $T/ro.log | wc -l)" = 0 ] || fail "--op read wrote writes"
[ "$(awk '$3 == "read"' $T/ro.log | wc -l)" -gt 0 ] || fail "--op read wrote no reads"
expect 2 "exclude each other" "$IOTAP" dump "$TR" --fio-iolog --csv
expect 2 "goes with --fio-iolog" "$IOTAP" dump "$TR" --fio-root /x
expect 2 "white space" "$IOTAP" dump "$TR" --fio-iolog --fio-root "/a b"
exit 0
