#!/bin/bash
# SPDX-License-Identifier: MIT
#
# dedup-vs-restic.sh - real restic 0.14 (or borg 1.2) against
# `iotap run dedup --flavor restic` (or --flavor borg)
#
#   tests/bench/dedup-vs-restic.sh [--tool restic|borg] [--files N] [--file-mib M]
#                                  [--generations G] [--change PCT] [--keep DIR]
#
# Both run through an iotap mount (direct_io), so the two captures are
# compared with the same eyes:
#   real:  a generated tree of N files of M MiB (outside the mount; half
#          compressible the model's way: each 512 bytes random bytes then
#          their repeat), backed up G times with PCT% of its 1 MiB extents
#          rewritten before each later backup, every generation restored
#          (to a directory outside the mount), then `restic forget
#          --keep-last G-1` and `restic prune` (borg: `borg create`, `borg
#          extract`, `borg prune --keep-last G-1` as "expire", `borg
#          compact`; its cache, BORG_CACHE_DIR, on the mount too); each
#          step marked with `iotap mark` as the model names its phases;
#   model: iotap run dedup MNT --flavor restic|borg with the same figures
#          (borg: --meta-dir on the mount for its cache; its phases mark
#          the capture).
# Prints per phase, side by side: bytes and requests written and read,
# request-size histograms, fsyncs, renames, unlinks, read/write ratio, and
# model/real. Needs root, /dev/fuse, restic or borg and python3; exits 77
# without.
set -u
cd "$(dirname "$0")/../.."
IOTAP=${IOTAP:-$PWD/build/tools/iotap}
TOOL=restic FILES=4 FMIB=16 GENS=4 CHANGE=5 KEEP=""
while [ $# -gt 0 ]; do
	case $1 in
	--tool) TOOL=$2; shift ;;
	--files) FILES=$2; shift ;;
	--file-mib) FMIB=$2; shift ;;
	--generations) GENS=$2; shift ;;
	--change) CHANGE=${2%\%}; shift ;;
	--keep) KEEP=$2; shift ;;
	-h|--help) sed -n '3,28p' "$0"; exit 0 ;;
	*) echo "dedup-vs-restic: unknown argument '$1'" >&2; exit 2 ;;
	esac
	shift
done
[ "$(id -u)" -eq 0 ] && [ -c /dev/fuse ] || { echo "needs root and /dev/fuse" >&2; exit 77; }
case $TOOL in
restic|borg) ;;
*) echo "dedup-vs-restic: --tool restic or borg, not '$TOOL'" >&2; exit 2 ;;
esac
command -v $TOOL > /dev/null || { echo "needs $TOOL (apt-get install ${TOOL/borg/borgbackup})" >&2; exit 77; }
[ -x "$IOTAP" ] || { echo "no iotap at $IOTAP" >&2; exit 1; }

T=$(mktemp -d /tmp/dedup-vs-$TOOL.XXXXXX)
cleanup() {
	for m in $T/mnt $T/mnt2; do
		mountpoint -q $m 2>/dev/null && fusermount3 -u $m
	done
	sleep 0.5
	if [ -n "$KEEP" ]; then mkdir -p "$KEEP" && cp $T/*.iotap "$KEEP"/; fi
	rm -rf $T
}
trap cleanup EXIT
mkdir -p $T/src $T/back $T/mnt $T/back2 $T/mnt2 $T/tmp $T/cache
export RESTIC_PASSWORD=iotap RESTIC_CACHE_DIR=$T/cache TMPDIR=$T/tmp
export BORG_PASSPHRASE=iotap BORG_BASE_DIR=$T/borgbase BORG_CACHE_DIR=$T/mnt/cache

# the tree: the model's content rule, per file a seed; changes rewrite 1 MiB extents
gen() {
	python3 - "$T/src" $FILES $FMIB "$1" "$CHANGE" <<'PY'
import os, random, sys
d, nf, fmib, gen, change = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]) / 100
MIB, r = 1 << 20, 256
def piece(rng):
    out = bytearray()
    for _ in range(MIB // 512):
        b = rng.randbytes(r)
        out += (b * (512 // r + 1))[:512]
    return bytes(out)
if gen == 0:
    for i in range(nf):
        rng = random.Random(1000 + i)
        with open(f"{d}/f{i:03d}.dat", "wb") as f:
            for _ in range(fmib):
                f.write(piece(rng))
else:
    rng = random.Random(7919 + gen)
    total = nf * fmib
    for e in rng.sample(range(total), round(change * total)):
        with open(f"{d}/f{e // fmib:03d}.dat", "r+b") as f:
            f.seek((e % fmib) * MIB)
            f.write(piece(random.Random(31 + gen * 100003 + e)))
PY
}

mount_at() {
	"$IOTAP" mount "$1" "$2" --trace "$3" -f > $T/mount.log 2>&1 &
	for i in $(seq 100); do
		grep -q " $2 fuse" /proc/mounts && return 0
		sleep 0.1
	done
	cat $T/mount.log >&2
	exit 1
}
umount_at() {
	fusermount3 -u "$1"
	for i in $(seq 100); do
		pgrep -f "iotap mount $2 $1" > /dev/null || return 0
		sleep 0.1
	done
}

echo "dedup-vs-restic: $TOOL, $FILES files x $FMIB MiB, $GENS generations, $CHANGE% change" >&2
gen 0
mount_at $T/back $T/mnt $T/real.iotap
if [ $TOOL = restic ]; then
	R="--repo $T/mnt/repo -q"
	restic init $R > /dev/null || exit 1
	for g in $(seq 0 $((GENS - 1))); do
		[ $g -gt 0 ] && gen $g
		"$IOTAP" mark $T/mnt "backup gen=$g"
		restic backup $R $T/src > /dev/null || exit 1
	done
	ids=$(restic snapshots $R --json | python3 -c 'import json,sys; print(" ".join(s["short_id"] for s in sorted(json.load(sys.stdin), key=lambda s: s["time"])))')
	g=0
	for id in $ids; do
		"$IOTAP" mark $T/mnt "restore gen=$g"
		restic restore $R $id --target $T/rst > /dev/null || exit 1
		rm -rf $T/rst
		g=$((g + 1))
	done
	"$IOTAP" mark $T/mnt expire
	restic forget $R --keep-last $((GENS - 1)) > /dev/null || exit 1
	"$IOTAP" mark $T/mnt compact
	restic prune $R > /dev/null || exit 1
else
	mkdir -p $T/mnt/cache
	B=$T/mnt/repo
	borg init -e repokey $B > /dev/null 2>&1 || exit 1
	for g in $(seq 0 $((GENS - 1))); do
		[ $g -gt 0 ] && gen $g
		"$IOTAP" mark $T/mnt "backup gen=$g"
		(cd $T && borg create $B::g$g src) || exit 1
	done
	for g in $(seq 0 $((GENS - 1))); do
		"$IOTAP" mark $T/mnt "restore gen=$g"
		mkdir -p $T/rst && (cd $T/rst && borg extract $B::g$g) || exit 1
		rm -rf $T/rst
	done
	"$IOTAP" mark $T/mnt expire
	borg prune --keep-last $((GENS - 1)) $B || exit 1
	"$IOTAP" mark $T/mnt compact
	borg compact $B || exit 1
fi
"$IOTAP" mark $T/mnt compact --end
umount_at $T/mnt $T/back

mkdir -p $T/back2/meta
mount_at $T/back2 $T/mnt2 $T/model.iotap
META=
[ $TOOL = borg ] && META="--meta-dir $T/mnt2/meta"
"$IOTAP" run dedup $T/mnt2 --flavor $TOOL $META --image-size $((FILES * FMIB))m \
	--generations $GENS --change $CHANGE% --dup 0 --compressibility 50% --expire 1 -q \
	> $T/model.txt || exit 1
umount_at $T/mnt2 $T/back2
cat $T/model.txt
echo

"$IOTAP" dump $T/real.iotap > $T/real.txt
"$IOTAP" dump $T/model.iotap > $T/model.dump
python3 - $T/real.txt $T/model.dump $TOOL <<'PY'
import collections, re, sys

def load(path):
    ph = collections.OrderedDict()
    cur = None
    for line in open(path):
        f = line.split()
        if len(f) < 5 or line.startswith('#'):
            continue
        op = f[3]
        if op == 'PHASE':
            m = re.search(r'name="([^"]*)"', line)
            cur = m.group(1) if f[4] == 'begin' else None
            if cur and cur not in ph:
                ph[cur] = collections.Counter(), collections.Counter(), collections.Counter()
            continue
        if cur is None or op.isupper():
            continue
        cnt, rh, wh = ph[cur]
        cnt[op] += 1
        if op in ('read', 'write') and len(f) >= 8:
            n = int(f[7]) if f[7].lstrip('-').isdigit() else 0
            if n > 0:
                cnt[op + '_bytes'] += n
                b = 1 << (n.bit_length() - 1)
                (rh if op == 'read' else wh)[b] += 1
    return ph

def hist(h):
    tot = sum(h.values()) or 1
    top = sorted(h.items(), key=lambda kv: -kv[1])[:3]
    return ' '.join(f"{(k >> 10) if k >= 1024 else k}{'k' if k >= 1024 else 'b'}:{100 * v / tot:.0f}%" for k, v in top) or '-'

real, model, tool = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3]
print(f"{'phase':<14} {'figure':<12} {tool:>12} {'model':>12} {'model/real':>10}")
worst = []
for name in real:
    if name not in model:
        continue
    rc, rr, rw = real[name]
    mc, mr, mw = model[name]
    rows = [('written MB', rc['write_bytes'] / 1e6, mc['write_bytes'] / 1e6),
            ('writes', rc['write'], mc['write']),
            ('read MB', rc['read_bytes'] / 1e6, mc['read_bytes'] / 1e6),
            ('reads', rc['read'], mc['read']),
            ('fsyncs', rc['fsync'] + rc['fsyncdir'], mc['fsync'] + mc['fsyncdir']),
            ('renames', rc['rename'], mc['rename']),
            ('unlinks', rc['unlink'], mc['unlink'])]
    for what, a, b in rows:
        if not a and not b:
            continue
        ratio = b / a if a else float('inf')
        print(f"{name:<14} {what:<12} {a:>12.2f} {b:>12.2f} {ratio:>10.2f}")
        if what in ('written MB', 'read MB', 'fsyncs') and a >= 0.05:
            worst.append((abs(ratio - 1), name, what, ratio))
    rwr = (rc['read_bytes'] / rc['write_bytes']) if rc['write_bytes'] else 0
    mwr = (mc['read_bytes'] / mc['write_bytes']) if mc['write_bytes'] else 0
    print(f"{name:<14} {'read/write':<12} {rwr:>12.3f} {mwr:>12.3f}")
    print(f"{name:<14} {'write sizes':<12} {tool} {hist(rw)} | model {hist(mw)}")
    if rr or mr:
        print(f"{name:<14} {'read sizes':<12} {tool} {hist(rr)} | model {hist(mr)}")
# restic draws its chunker polynomial (borg its buzhash seed) per repository:
# which chunks a change hits varies from run to run, so the later backups
# are also given summed. The tree's change sets are fixed (Random(7919 +
# gen)), the model draws its own: with few changes (--files 2: 18) the sum
# differs by the luck of the draw (tests/bench/dedup-borg-chunker.py).
later = [n for n in real if n.startswith('backup gen=') and n != 'backup gen=0' and n in model]
if later:
    a = sum(real[n][0]['write_bytes'] for n in later) / 1e6
    b = sum(model[n][0]['write_bytes'] for n in later) / 1e6
    print(f"{'backups 1..':<14} {'written MB':<12} {a:>12.2f} {b:>12.2f} {b / a if a else 0:>10.2f}")
    worst.append((abs(b / a - 1) if a else 1, 'backups 1..', 'written MB', b / a if a else 0))
off = [w for w in worst if w[0] > 0.15]
print(f"\n{len(worst) - len(off)} of {len(worst)} byte and fsync figures within 15%" +
      ("" if not off else "; outside: " + ", ".join(f"{n} {w} x{r:.2f}" for _, n, w, r in sorted(off, reverse=True))))
PY
