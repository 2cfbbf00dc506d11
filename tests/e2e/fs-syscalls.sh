#!/bin/bash
# SPDX-License-Identifier: MIT
# fs-syscalls: every syscall family gives the same result through the
# mount as on the backing directory (libfuse's test_syscalls idea), and
# each request appears in the trace with the right offset, length and
# result. The same Python sequence runs once in a directory of the backing
# fs and once through the mount; the two result lists must be identical.
# The mount run also writes the records it expects; every one must be
# found in `iotap dump`.
# TIMEOUT: 60
. "$(dirname "$0")/lib.sh"
need_fuse
command -v python3 >/dev/null || skip "python3 not installed"

cat > $T/sc.py <<'EOF'
import ctypes, errno, hashlib, os, stat, sys

libc = ctypes.CDLL(None, use_errno=True)
libc.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
AT_FDCWD = -100
RENAME_NOREPLACE, RENAME_EXCHANGE = 1, 2
FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE = 1, 2

top, expect_path = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None
res, exp = [], []

def r(name, fn, *a):
    try:
        v = fn(*a)
    except OSError as e:
        v = "E" + errno.errorcode[e.errno]
    res.append((name, v))
    return v

def c(fn, *a):
    rc = fn(*a)
    if rc < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return rc

def st(p, follow=False):
    s = os.stat(p, follow_symlinks=follow)
    return (stat.filemode(s.st_mode), s.st_nlink, s.st_uid, s.st_gid, s.st_size
            if not stat.S_ISDIR(s.st_mode) else 0,
            s.st_mtime_ns if s.st_mtime_ns < 10**10 else "now")

def e(op, off, length, result, extra=""):
    exp.append(f"{op} {off} {length} {result} {extra}".rstrip())

w = os.path.join(top, "w")
r("mkdir", os.mkdir, w, 0o755)
p = lambda n: os.path.join(w, n)
fd = r("create", os.open, p("a"), os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o640)
r("create-excl", os.open, p("a"), os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o640)
r("write", os.write, fd, b"x" * 10000); e("write", 0, 10000, 10000)
r("pwrite", os.pwrite, fd, b"y" * 5000, 1000); e("write", 1000, 5000, 5000)
v = r("pread", lambda: hashlib.md5(os.pread(fd, 3000, 2000)).hexdigest()); e("read", 2000, 3000, 3000)
r("pread-eof", lambda: len(os.pread(fd, 4096, 9000))); e("read", 9000, 4096, 1000)
r("ftruncate", os.ftruncate, fd, 20000); e("setattr", 20000, 0, 0)
r("fstat", lambda: os.fstat(fd).st_size)
r("truncate", os.truncate, p("a"), 15000); e("setattr", 15000, 0, 0)
r("fallocate", os.posix_fallocate, fd, 100000, 50000); e("fallocate", 100000, 50000, 0)
r("punch", c, libc.fallocate, fd, FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE, 0, 4096)
e("fallocate", 0, 4096, 0, "flags=0x3")
d = r("seek-data", os.lseek, fd, 0, os.SEEK_DATA); e("lseek", 0, 0, d, "flags=0x3")
h = r("seek-hole", os.lseek, fd, 4096, os.SEEK_HOLE); e("lseek", 4096, 0, h, "flags=0x4")
r("seek-data-eof", os.lseek, fd, 10**7, os.SEEK_DATA); e("lseek", 10**7, 0, -errno.ENXIO)
fd2 = r("open-b", os.open, p("b"), os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o644)
r("copy_file_range", os.copy_file_range, fd, fd2, 4096, 8192, 0)
e("copy_file_range", 8192, 4096, 4096)
r("fsync", os.fsync, fd); e("fsync", 0, 0, 0)
r("fdatasync", os.fdatasync, fd); e("fsync", 0, 0, 0, "flags=0x1")
r("fstat-a", lambda: (os.fstat(fd).st_size, os.fstat(fd).st_blocks > 0))
r("close", os.close, fd)
r("close2", os.close, fd2)
r("read-back", lambda: hashlib.md5(open(p("a"), "rb").read()).hexdigest())
r("read-b", lambda: hashlib.md5(open(p("b"), "rb").read()).hexdigest())
r("append", lambda: open(p("b"), "ab").write(b"tail"))
r("size-b", lambda: os.stat(p("b")).st_size)
r("rename", os.rename, p("a"), p("c")); e("rename", 0, 0, 0)
# the kernel answers these two itself (failed lookup; existing target)
r("rename-missing", os.rename, p("a"), p("d"))
r("renameat2-noreplace", c, libc.renameat2, AT_FDCWD, p("c").encode(), AT_FDCWD, p("b").encode(), RENAME_NOREPLACE)
r("renameat2-noreplace-new", c, libc.renameat2, AT_FDCWD, p("c").encode(), AT_FDCWD, p("n").encode(), RENAME_NOREPLACE)
e("rename", 0, 0, 0, "flags=0x1")
r("rename-back", os.rename, p("n"), p("c"))
r("renameat2-exchange", c, libc.renameat2, AT_FDCWD, p("c").encode(), AT_FDCWD, p("b").encode(), RENAME_EXCHANGE)
e("rename", 0, 0, 0, "flags=0x2")
r("sizes-after-exchange", lambda: (os.stat(p("b")).st_size, os.stat(p("c")).st_size))
r("link", os.link, p("c"), p("l")); e("link", 0, 0, 0)
r("link-exists", os.link, p("c"), p("l"))
r("nlink", lambda: os.stat(p("c")).st_nlink)
# a file with two names: the rename records which name moved
r("rename-hardlinked", os.rename, p("l"), p("l2")); e("rename", 0, 0, 0, 'name="l"')
r("rename-hardlinked-back", os.rename, p("l2"), p("l")); e("rename", 0, 0, 0, 'name="l2"')
r("symlink", os.symlink, "c", p("s")); e("symlink", 0, 1, 0, 'name="c"')
r("readlink", os.readlink, p("s")); e("readlink", 0, 0, 1)
r("stat-through-symlink", lambda: os.stat(p("s")).st_size)
r("chmod", os.chmod, p("c"), 0o600); e("setattr", 0, 0, 0, "mode=0100600")
r("chown", os.chown, p("c"), 1234, 5678)
r("utime", lambda: os.utime(p("c"), ns=(1000000000, 2000000000)))
r("stat-c", st, p("c"))
r("setxattr", os.setxattr, p("c"), "user.t", b"value"); e("setxattr", 0, 5, 0, 'name="user.t"')
r("getxattr", os.getxattr, p("c"), "user.t"); e("getxattr", 0, "*", 5, 'name="user.t"')
r("listxattr", lambda: sorted(os.listxattr(p("c"))))
r("removexattr", os.removexattr, p("c"), "user.t"); e("removexattr", 0, 0, 0, 'name="user.t"')
r("getxattr-missing", os.getxattr, p("c"), "user.t"); e("getxattr", 0, "*", -errno.ENODATA, 'name="user.t"')
r("statvfs", lambda: (lambda v: (v.f_bsize, v.f_namemax))(os.statvfs(w))); e("statfs", 0, 0, 0)
r("mkfifo", os.mkfifo, p("fifo"), 0o644); e("mknod", 0, 0, 0, "mode=010644")
r("stat-fifo", lambda: stat.S_ISFIFO(os.stat(p("fifo")).st_mode))
r("access", os.access, p("c"), os.R_OK | os.W_OK)
r("access-missing", os.access, p("zz"), os.R_OK)
r("mkdir-sub", os.mkdir, p("sub"), 0o750); e("mkdir", 0, 0, 0, "mode=040750")
r("mkdir-exists", os.mkdir, p("sub"))
r("listdir", lambda: sorted(os.listdir(w)))
r("stat-all", lambda: sorted((n,) + st(p(n)) for n in os.listdir(w)))
r("rmdir-nonempty", os.rmdir, w)
r("open-missing", os.open, p("missing"), os.O_RDONLY)
r("unlink-missing", os.unlink, p("missing"))
r("open-dir-wr", os.open, w, os.O_WRONLY)
r("otrunc", lambda: (os.close(os.open(p("c"), os.O_WRONLY | os.O_TRUNC)), os.stat(p("c")).st_size))
r("rmdir", os.rmdir, p("sub")); e("rmdir", 0, 0, 0)
for n in ("b", "c", "l", "s", "fifo"):
    r("unlink-" + n, os.unlink, p(n))
e("unlink", 0, 0, 0)
r("rmdir-w", os.rmdir, w)
r("stat-gone", os.stat, w)

for name, v in res:
    print(name, repr(v))
if expect_path:
    with open(expect_path, "w") as f:
        f.write("\n".join(exp) + "\n")
EOF

mkdir -p "$BACKING/ref" "$BACKING/cap"
python3 $T/sc.py "$BACKING/ref" > $T/ref.txt 2>&1 || { cat $T/ref.txt; fail "checker failed on the backing dir"; }
TR=$T/sc.iotap
iotap_mount "$BACKING" "$MNT" --trace "$TR"
python3 $T/sc.py "$MNT/cap" $T/expect.txt > $T/cap.txt 2>&1 || { cat $T/cap.txt; fail "checker failed through the mount"; }
iotap_umount "$MNT"
expect_eq "daemon exit status" "$MOUNT_RC" 0
diff -u $T/ref.txt $T/cap.txt || fail "results through the mount differ from the backing dir"

"$IOTAP" dump "$TR" > $T/dump.txt || fail "iotap dump failed"
"$IOTAP" info "$TR" > $T/info.txt || { cat $T/info.txt; fail "iotap info failed"; }
grep -q "^lost records *0" $T/info.txt || { cat $T/info.txt; fail "records were lost"; }
missing=0
while read -r op off len res extra; do
	found=$(awk -v op="$op" -v off="$off" -v len="$len" -v res="$res" -v x="$extra" '
		$4 == op && $6 == off && (len == "*" || $7 == len) && $8 == res &&
		(x == "" || index($0, x)) { n++ }
		END { print n + 0 }' $T/dump.txt)
	if [ "$found" -eq 0 ]; then
		echo "not in trace: $op offset=$off length=$len result=$res $extra" >&2
		missing=$((missing + 1))
	fi
done < $T/expect.txt
[ $missing -eq 0 ] || { grep -v " SAMPLE " $T/dump.txt | tail -80 >&2; fail "$missing expected records missing"; }

# every op family the kernel sent shows up; names bound once per file
for op in lookup getattr create open release flush opendir releasedir statfs; do
	grep -q " $op " $T/dump.txt || fail "no $op record"
done
grep -q ' readdir' $T/dump.txt || fail "no readdir(plus) record"
grep -q ' NAME .*name="c"' $T/dump.txt || fail "no NAME record for the renamed file"
grep -q ' NAME .*link=1.*name="l"' $T/dump.txt || fail "no additional-name NAME for the hard link"
grep -q ' NAME .*parent=0 .*name="'"$(realpath "$BACKING")"'"' $T/dump.txt || fail "no root NAME"
exit 0
