#!/bin/bash
# SPDX-License-Identifier: MIT
# trace-same.sh - do two iotap binaries record the same trace of the same
# workload? (a check for changes to the capture path, not a test of the suite)
#
# usage: tests/bench/trace-same.sh OLD_IOTAP [NEW_IOTAP] [--keep]
#
# Mounts BACKING (the same path for both, recreated empty) with each
# binary, traced, one worker thread, attribute and entry timeouts 0 (every
# stat and lookup reaches the trace, whatever the timing), the sampler
# once an hour, over /dev/fuse; runs one deterministic single-threaded
# workload through it (sequential and seeded-random 4 KiB and 8 KiB
# pread/pwrite, a short read at EOF, a failed open, mkdir, create, rename,
# link, symlink, readlink, chmod, truncate, fsync, xattrs, readdir,
# unlink, rmdir); unmounts; and compares `iotap dump --csv` of the two
# traces, every column but the times (time_s, lat_us). Values that differ
# between any two runs are renamed in order of first appearance: thread
# and process ids (T1, P1, ...) and file ids (inode numbers, F1, ...,
# also RENAME's aux, the old parent).
# SAMPLE rows (system counters) are left out; RELEASE(DIR), which the
# kernel sends on its own time, is compared as a set, FORGETs (batched as
# the kernel likes) by their nlookup sum, the rest in order. Prints the
# number of rows
# compared and exits 0 if they are the same, else prints the first
# differences and exits 1. NEW_IOTAP defaults to build/tools/iotap.
set -u

KEEP=0
ARGS=()
for a in "$@"; do
	case $a in
	--keep) KEEP=1 ;;
	-h|--help) sed -n '3,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) ARGS+=("$a") ;;
	esac
done
[ ${#ARGS[@]} -ge 1 ] || { echo "usage: trace-same.sh OLD_IOTAP [NEW_IOTAP] [--keep]" >&2; exit 2; }
OLD=${ARGS[0]}
NEW=${ARGS[1]:-$(cd "$(dirname "$0")/../.." && pwd)/build/tools/iotap}
for b in "$OLD" "$NEW"; do
	[ -x "$b" ] || { echo "trace-same.sh: '$b' is not an executable" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "trace-same.sh: needs root (the capture mount)" >&2; exit 77; }

W=$(mktemp -d "${TMPDIR:-/var/tmp}/iotap-trace-same.XXXXXX")
MNT=$W/mnt
cleanup() {
	grep -q " $MNT fuse" /proc/self/mounts && { fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT"; }
	if [ $KEEP = 1 ]; then echo "kept $W" >&2; else rm -rf "$W"; fi
}
trap cleanup EXIT
mkdir -p $MNT

# The workload: one thread, the same calls in the same order every time.
workload() {
	python3 - "$1" <<'PY'
import os, random, sys
m = sys.argv[1]
rnd = random.Random(7)
os.mkdir(m + "/d")
fd = os.open(m + "/d/f", os.O_CREAT | os.O_RDWR, 0o644)
blk = bytes(range(256)) * 16
for i in range(64):                       # sequential 4 KiB writes
    os.pwrite(fd, blk, i * 4096)
for i in range(64):                       # sequential 4 KiB reads
    os.pread(fd, 4096, i * 4096)
for i in range(200):                      # random 8 KiB reads and writes
    off = rnd.randrange(0, 31) * 8192
    if rnd.random() < 0.3:
        os.pwrite(fd, blk * 2, off)
    else:
        os.pread(fd, 8192, off)
os.pread(fd, 8192, 256 * 1024 - 100)      # short read at EOF
os.fsync(fd)
os.ftruncate(fd, 100000)
os.close(fd)
try:
    os.open(m + "/d/missing", os.O_RDONLY)
except FileNotFoundError:
    pass
os.rename(m + "/d/f", m + "/d/g")
os.link(m + "/d/g", m + "/d/h")
os.symlink("g", m + "/d/s")
os.readlink(m + "/d/s")
os.chmod(m + "/d/g", 0o600)
os.stat(m + "/d/h")
try:
    os.setxattr(m + "/d/g", "user.k", b"v")
    os.getxattr(m + "/d/g", "user.k")
    os.listxattr(m + "/d/g")
except OSError:
    pass
sorted(os.listdir(m + "/d"))
for n in ("s", "h", "g"):
    os.unlink(m + "/d/" + n)
os.rmdir(m + "/d")
PY
}

capture() {
	local bin=$1 out=$2 i
	rm -rf $W/backing
	mkdir -p $W/backing
	"$bin" mount $W/backing $MNT -f --transport dev --threads 1 --attr-timeout 0 \
		--entry-timeout 0 --sample-interval 3600000 --trace $out >$out.log 2>&1 &
	for ((i = 0; i < 100; i++)); do
		grep -q " $MNT fuse" /proc/self/mounts && break
		sleep 0.1
	done
	grep -q " $MNT fuse" /proc/self/mounts || { cat $out.log >&2; exit 1; }
	workload $MNT || { echo "trace-same.sh: the workload failed" >&2; exit 1; }
	fusermount3 -u $MNT
	wait
	"$bin" dump --csv $out > $out.csv || exit 1
}

capture "$OLD" $W/old.iotap
capture "$NEW" $W/new.iotap
python3 - $W/old.iotap.csv $W/new.iotap.csv <<'PY'
import csv, sys

def norm(path):
    rows = list(csv.reader(open(path)))
    head, rows = rows[0], rows[1:]
    ids = {"tid": {}, "pid": {}, "file": {}}
    def rename(kind, v, tag):
        if v in ("", "0"):
            return v
        return ids[kind].setdefault(v, "%s%d" % (tag, len(ids[kind]) + 1))
    out = []
    for r in rows:
        d = dict(zip(head, r))
        if d["type"] == "sample":
            continue
        d.pop("time_s")
        d.pop("lat_us")
        d["tid"] = rename("tid", d["tid"], "T")
        d["pid"] = rename("pid", d["pid"], "P")
        d["file"] = rename("file", d["file"], "F")
        d["file2"] = rename("file", d["file2"], "F")
        if d["op"] == "rename":             # aux: the old parent (FORMAT.md)
            d["aux"] = rename("file", d["aux"], "F")
        out.append(" ".join("%s=%s" % (k, d[k]) for k in head if k in d and d[k] != ""))
    return out

# The kernel sends RELEASE(DIR) on its own time (compared as a set) and
# batches FORGETs as it likes (compared by their nlookup sum); the rest
# in order.
def split(rows):
    late = [r for r in rows if r.split()[1] in ("op=release", "op=releasedir")]
    fg = [r for r in rows if r.split()[1] == "op=forget"]
    nl = sum(int(f.split("length=")[1].split()[0]) for f in fg)
    return [r for r in rows if r not in late and r not in fg], sorted(late), nl

(a, al, an), (b, bl, bn) = split(norm(sys.argv[1])), split(norm(sys.argv[2]))
if al != bl or an != bn:
    print("traces differ: RELEASE rows %d vs %d, FORGET nlookup %d vs %d" %
          (len(al), len(bl), an, bn))
    for x, y in zip(al, bl):
        if x != y:
            print("  old: %s\n  new: %s" % (x, y))
            break
    sys.exit(1)
diffs = [(i, x, y) for i, (x, y) in enumerate(zip(a, b)) if x != y]
if len(a) != len(b) or diffs:
    print("traces differ: %d rows vs %d, %d rows unlike" % (len(a), len(b), len(diffs)))
    for i, x, y in diffs[:10]:
        print("row %d\n  old: %s\n  new: %s" % (i + 1, x, y))
    sys.exit(1)
print("same: %d rows in order, %d RELEASE rows as a set, FORGET nlookup %d (every column "
      "but time_s and lat_us; SAMPLE rows left out)" % (len(a), len(al), an))
PY
