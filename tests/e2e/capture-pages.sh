#!/bin/bash
# SPDX-License-Identifier: MIT
# capture-pages: one application write() is one WRITE record, also from a
# buffer that does not start on a page (fio --iomem_align=16: a 1 MiB
# buffer spans 257 pages). The daemon asks the kernel for max_write/page + 1
# pages per request, up to fs.fuse.max_pages_limit.
#
#   1. limit 257 (raised for the mount only): 16 fio writes = 16 WRITE
#      records of 1 MiB, none flagged cut; the report says 1024k 100%,
#      replay issues 16 writes; info says one call is one record.
#   2. limit 128: each write arrives as 524,272 + 524,288 + 16 bytes; the
#      pieces are flagged cut (all but the last) and cont (all but the
#      first), info counts 16 calls and prints the sysctl, the report flags
#      them, and it and replay join them back into 16 x 1 MiB.
#   4. the daemon tells pieces by the call the thread is blocked in
#      (/proc/TID/syscall), not by their size: at limit 256, a
#      4 MiB write() (4 x max_write), an unaligned 1 MiB write() (cut at the
#      page cap), a 3 MiB pwrite() and a 2 MiB writev() are one record each
#      in the report; an uncut write() of just the cut size (1,048,560
#      bytes from a page-aligned buffer) and the write() after it are two;
#      dump --fio-iolog writes one line per call too.
#
# The kernel reads the limit when the connection is made: the case sets it
# just before each mount and restores it as soon as the mount is up (and
# at exit, pass or fail), so other mounts on the machine keep theirs.
. "$(dirname "$0")/lib.sh"
need_fuse
command -v fio >/dev/null || skip "fio not installed"
LIM=/proc/sys/fs/fuse/max_pages_limit
[ -w $LIM ] || skip "no writable fs.fuse.max_pages_limit (kernel before 6.13)"
ORIG=$(cat $LIM)
at_exit "echo $ORIG > $LIM"

# mount_with_limit N TRACE: mount with fs.fuse.max_pages_limit N, then restore it
mount_with_limit() {
	echo "$1" > $LIM || fail "cannot set max_pages_limit $1"
	iotap_mount "$BACKING" "$MNT" --trace "$2"
	echo "$ORIG" > $LIM
}

fio_writes() {
	fio --output=$T/fio.out --name=w --directory="$MNT" --ioengine=psync --rw=write \
		--bs=1M --size=16M --iomem_align=16 --end_fsync=1 ||
		{ cat $T/fio.out; fail "fio failed"; }
	rm -f "$MNT"/w.*
}

# json_check TRACE: the report's write size histogram and op count
report_writes() {
	"$IOTAP" report "$1" --json | python3 -c '
import json, sys
w = json.load(sys.stdin)["total"]["write"]
print(w["ops"], json.dumps(w["size_hist"], sort_keys=True))'
}

# dump_writes TRACE: "LENGTH:FLAG_NAMES" per WRITE record (cut|cont), counted
dump_writes() {
	"$IOTAP" dump "$1" --json --op write | python3 -c '
import json, sys, collections
c = collections.Counter()
for l in sys.stdin:
    r = json.loads(l)
    n = [f for f in r.get("flag_names", "").split("|") if f in ("cut", "cont")]
    c[(r["length"], "|".join(n) or "-")] += 1
print(" ".join("%d:%s:%d" % (k[0], k[1], v) for k, v in sorted(c.items())))'
}

replayed_writes() {
	rm -rf $T/rdir
	"$IOTAP" replay "$1" $T/rdir --prepare --trace $T/replay.iotap --overwrite \
		> $T/replay.out 2>&1 || { cat $T/replay.out; fail "replay of $1"; }
	count_ops $T/replay.iotap write
}

# --- 1. the limit allows it: one write() = one record ------------------------
TR=$T/whole.iotap
mount_with_limit 257 "$TR"
fio_writes
# (the INIT reply is logged once the first request has been served)
grep -q "max_pages 257" "$MOUNT_LOG" || { cat "$MOUNT_LOG"; fail "the log lacks max_pages 257"; }
iotap_umount "$MNT"
expect_eq "WRITE records at limit 257" "$(dump_writes "$TR")" "1048576:-:16"
expect_eq "report at limit 257" "$(report_writes "$TR")" '16 {"1048576": 16}'
"$IOTAP" report "$TR" | grep -q "sizes: 1m 100.0%" || fail "text report: not 1m 100%"
expect_eq "replayed writes at limit 257" "$(replayed_writes "$TR")" 16
"$IOTAP" info "$TR" > $T/info1 || fail "info"
grep -q "max_pages 257 (257 wanted" $T/info1 || { cat $T/info1; fail "info lacks max_pages"; }
grep -q "one read() or write() of up to 1048576 bytes is one record" $T/info1 ||
	{ cat $T/info1; fail "info does not say one call = one record"; }
grep -q "^split" $T/info1 && fail "info reports split calls at limit 257"

# --- 2. the limit cuts: flagged, counted, joined ----------------------------
TR=$T/cut.iotap
mount_with_limit 128 "$TR"
fio_writes
grep -q "sysctl -w fs.fuse.max_pages_limit=257" "$MOUNT_LOG" ||
	{ cat "$MOUNT_LOG"; fail "the log lacks the sysctl"; }
iotap_umount "$MNT"
expect_eq "WRITE records at limit 128" "$(dump_writes "$TR")" \
	"16:cont:16 524272:cut:16 524288:cut|cont:16"
"$IOTAP" info "$TR" > $T/info2 || fail "info"
grep -q "max_write 524288, max_pages 128 (257 wanted, fs.fuse.max_pages_limit 128)" $T/info2 ||
	{ cat $T/info2; fail "info lacks the limits"; }
grep -q "^split *16 call(s) arrived in pieces" $T/info2 || { cat $T/info2; fail "info lacks the split count"; }
grep -q "'sysctl -w fs.fuse.max_pages_limit=257'" $T/info2 ||
	{ cat $T/info2; fail "info lacks the sysctl"; }
expect_eq "joined report at limit 128" "$(report_writes "$TR")" '16 {"1048576": 16}'
"$IOTAP" report "$TR" | grep -q "split-calls: 16 read()/write() calls came in pieces.*sysctl -w fs.fuse.max_pages_limit=257" ||
	fail "the report does not flag the split calls"
expect_eq "replayed writes at limit 128" "$(replayed_writes "$TR")" 16
expect_eq "the kernel's limit is restored" "$(cat $LIM)" "$ORIG"

# --- 3. --max-write: smaller requests, refused out of range ------------------
expect 2 "max-write wants 4k..1M, or up to 4M" "$IOTAP" mount "$BACKING" "$MNT" --max-write 8M
TR=$T/mw.iotap
iotap_mount "$BACKING" "$MNT" --trace "$TR" --max-write 256k
fio --output=$T/fio.out --name=w --directory="$MNT" --ioengine=psync --rw=write \
	--bs=256k --size=4M --iomem_align=16 || fail "fio 256k"
iotap_umount "$MNT"
expect_eq "256 KiB writes with --max-write 256k" "$(dump_writes "$TR")" "262144:-:16"
grep -q "max_write=262144" <("$IOTAP" info "$TR") || fail "info lacks max_write=262144"

# --- 4. pieces known from the call, not guessed from the size ----------------
TR=$T/calls.iotap
mount_with_limit 256 "$TR"
python3 - "$MNT/c" <<'PY' || fail "the writes"
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
m = memoryview(mmap.mmap(-1, 8 << 20))          # page-aligned
assert os.write(fd, m[:4 << 20]) == 4 << 20     # 4 x max_write
assert os.write(fd, m[:1048560]) == 1048560     # uncut, the cut size ...
assert os.write(fd, m[:16]) == 16               # ... and the next call
assert os.write(fd, m[16:16 + (1 << 20)]) == 1 << 20    # 257 pages: cut
assert os.pwrite(fd, m[100:100 + (3 << 20)], 64 << 20) == 3 << 20
assert os.writev(fd, [m[:1 << 20], m[:1 << 20]]) == 2 << 20
os.close(fd)
PY
iotap_umount "$MNT"
"$IOTAP" report "$TR" --json | python3 -c '
import json, sys
w = json.load(sys.stdin)["total"]["write"]
print(w["ops"], w["bytes"])' > $T/calls.txt || fail "report"
expect_eq "writes in the report (ops bytes)" "$(cat $T/calls.txt)" \
	"6 $(((4 << 20) + 1048560 + 16 + (1 << 20) + (3 << 20) + (2 << 20)))"
"$IOTAP" dump "$TR" --op write > $T/calls.dump
grep -q " 1048560 1048560 .*fh=[0-9]* uid" $T/calls.dump ||
	{ cat $T/calls.dump; fail "the uncut 1,048,560-byte write is flagged"; }
grep -q "^split *4 call(s) arrived in pieces" <("$IOTAP" info "$TR") ||
	{ "$IOTAP" info "$TR"; fail "info does not count 4 calls in pieces"; }
# fio replays the application's calls: one iolog line per call
"$IOTAP" dump --fio-iolog "$TR" 2> /dev/null | awk '$3 == "write" { print $5 }' | sort -n |
	tr '\n' ' ' > $T/calls.fio
expect_eq "fio iolog write sizes" "$(cat $T/calls.fio)" "16 1048560 1048576 2097152 3145728 4194304 "
exit 0
