#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-uring-compare: the same workload traced over /dev/fuse and over
# io_uring records the same requests: per file (by name), the same op
# types with the same offsets, sizes and results, the same counts (issue
# 13: every request is still recorded exactly as on /dev/fuse). The
# workload: a metadata sequence (mkdir, create, write, rename, link,
# symlink, chmod, truncate, xattrs, readdir, unlink, fsync, fsyncdir,
# fallocate) and fio with 4 jobs
# and fixed seeds (randrw 8 KiB, a 1 MiB sequential write and read).
# FORGETs are left out: when the kernel evicts inodes is its business.
# Over io_uring twice: READ and WRITE served straight from the ring (the
# default) and through libfuse (-o uring_direct=0), and the log's counts
# prove which path served them; an out-of-range uring_direct is refused.
. "$(dirname "$0")/lib.sh"
need_fuse
command -v fio >/dev/null || skip "fio not installed"
need_uring

workload() {
	local m=$1
	mkdir "$m/d" "$m/d/sub"
	echo hello > "$m/d/a"
	printf 'x%.0s' $(seq 1 5000) > "$m/d/b"
	mv "$m/d/a" "$m/d/sub/a2"
	ln "$m/d/b" "$m/d/b-link"
	ln -s sub/a2 "$m/d/sym"
	readlink "$m/d/sym" > /dev/null
	chmod 600 "$m/d/b"
	truncate -s 100 "$m/d/b"
	setfattr -n user.k -v v "$m/d/b" 2>/dev/null
	getfattr -d "$m/d/b" > /dev/null 2>&1
	ls -la "$m/d" "$m/d/sub" > /dev/null
	cat "$m/d/sub/a2" "$m/d/b" > /dev/null
	rm "$m/d/b-link" "$m/d/sym"
	# the calls served by helper threads over io_uring: fsync, fsyncdir, fallocate
	dd if=/dev/zero of="$m/d/synced" bs=4k count=4 conv=fsync 2>/dev/null || fail "dd conv=fsync"
	python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)' "$m/d" ||
		fail "fsync of a directory"
	fallocate -l 1M "$m/d/falloc" || fail "fallocate"
	fio --output=/dev/null --directory="$m" --ioengine=psync --randrepeat=1 --randseed=42 \
		--name=rr --rw=randrw --bs=8k --size=2M --numjobs=4 --iomem_align=4096 \
		--name=seq --rw=write --bs=1M --size=4M --iomem_align=4096 \
		--name=seqr --rw=read --bs=1M --size=4M --iomem_align=4096 ||
		fail "fio on $m"
	sync
}

# "DIRECT LIBFUSE": the ring requests served without libfuse and through it (the log at unmount)
paths() {
	sed -n 's/.*; \([0-9]*\) served without libfuse, \([0-9]*\) through it.*/\1 \2/p' $MOUNT_LOG
}

for t in dev uring uring-libfuse; do
	rm -rf "$BACKING"
	mkdir "$BACKING"
	opts=(--transport ${t%-libfuse})
	[ $t = uring-libfuse ] && opts+=(-o uring_direct=0)
	# every stat and lookup reaches the daemon: no timing from the kernel's caches
	iotap_mount "$BACKING" "$MNT" --trace $T/$t.iotap "${opts[@]}" \
		--attr-timeout 0 --entry-timeout 0
	workload "$MNT"
	iotap_umount "$MNT"
	"$IOTAP" dump $T/$t.iotap > $T/$t.txt || fail "dump $t"
	[ $t = dev ] && continue
	grep -q "requests served over io_uring" $MOUNT_LOG || fail "uring not used"
	read -r direct libfuse <<<"$(paths)"
	rw=$(awk '!/^#/ && NF >= 9 && ($4 == "read" || $4 == "write")' $T/$t.txt | wc -l)
	note "$t: $rw reads and writes recorded; ring requests: $direct served without libfuse, $libfuse through it"
	[ -n "$direct" ] || { cat $MOUNT_LOG; fail "$t: no served counts in the log"; }
	[ "$rw" -ge 1000 ] || fail "$t: only $rw reads and writes recorded"
	if [ $t = uring ]; then
		# every READ and WRITE came over the ring (none before INIT's reply)
		[ "$direct" -ge "$rw" ] || fail "uring: $direct READ/WRITE served without libfuse, $rw recorded"
		[ "$libfuse" -gt 0 ] || fail "uring: the other requests did not go through libfuse"
	else
		[ "$direct" -eq 0 ] || fail "uring_direct=0: $direct served without libfuse"
		[ "$libfuse" -ge "$rw" ] || fail "uring_direct=0: $libfuse served through libfuse, $rw recorded"
	fi
done

# One line per request: op, file name, offset, length, result; sorted.
for t in uring uring-libfuse; do
python3 - $T/dev.txt $T/$t.txt <<'PY' || fail "the traces differ: dev and $t"
import collections, re, sys

def ops(path):
    # a NAME follows the OP record of the request that made it (create,
    # mkdir...): it names that OP too, even where an inode number is reused
    names, recs = {}, []
    for line in open(path):
        f = line.split()
        if len(f) < 9 or line.startswith('#'):
            continue
        if f[3] == 'NAME':
            m = re.search(r'file=(\d+) .*name="(.*)"', line)
            if m:
                name = m.group(2) if 'parent=0 ' not in line else '/'
                names[m.group(1)] = name
                for r in recs[-4:]:
                    if r[5] == f[1] and r[1] == m.group(1):
                        r[6] = name
            continue
        if f[3].isupper() or f[3] in ('forget', 'batch_forget'):
            continue
        # the file by its name (inode numbers differ between runs)
        recs.append([f[3], f[4], f[5], f[6], f[7], f[1],
                     names.get(f[4], '?' if f[4] != '0' else '-')])
    return collections.Counter((r[0], r[6], r[2], r[3], r[4]) for r in recs)

a, b = ops(sys.argv[1]), ops(sys.argv[2])
other = sys.argv[2].rsplit('/', 1)[-1]
total = sum(a.values())
print(f"# dev: {total} requests, {other}: {sum(b.values())}", file=sys.stderr)
if total < 1000:
    sys.exit("too few requests recorded over /dev/fuse")
for op in ("fsync", "fsyncdir", "fallocate"):
    if not any(k[0] == op for k in a):
        sys.exit(f"no {op} recorded over /dev/fuse")
if a != b:
    for k in sorted(set(a) | set(b)):
        if a[k] != b[k]:
            print(f"  {k}: dev {a[k]}, {other} {b[k]}", file=sys.stderr)
    sys.exit(1)
PY
done

# out of range: refused before mounting, naming the option
at_exit "grep -q ' $MNT fuse' /proc/mounts && fusermount3 -u '$MNT'"
timeout 10 "$IOTAP" mount "$BACKING" "$MNT" -f --transport uring -o uring_direct=2 > $T/bad.out 2>&1 &&
	fail "-o uring_direct=2 was taken"
grep -q "uring_direct 2 out of range" $T/bad.out || { cat $T/bad.out; fail "the refusal does not name uring_direct"; }
echo "fs-uring-compare: ok"
