#!/bin/bash
# SPDX-License-Identifier: MIT
#
# compare-layouts.sh - replay one capture on ext4 and on XFS, compare
#
#   sudo examples/compare-layouts.sh [TRACE] [--size MIB] [--timing MODE] [--out DIR]
#
# The recipe for choosing a layout: capture the application once through
# `iotap mount`, replay the capture on each candidate, compare. Here the
# candidates are an ext4 and an XFS filesystem, each made with its mkfs
# defaults on a loop device over an image file in /var/tmp (--size MiB,
# default 1024; the images are sparse and removed afterwards). Without a
# TRACE the script makes one: fio and tar through an iotap mount of a
# temporary directory, in marked phases (seq-write, rand-read, rand-rw,
# tar-extract, tar-read).
#
# For each filesystem: `iotap replay TRACE MNT --prepare --trace FS.iotap`
# (the initial state is built first, then the ops are re-issued with the
# capture's threads, order and --timing, recorded by default; asap
# measures what the filesystem can do rather than how it keeps pace), then
# `iotap compare` of the capture and both replays, per phase, with ratios
# to the ext4 run. Written to --out DIR (default ./compare-layouts/):
# compare.txt, compare.html (bar charts), ext4.iotap, xfs.iotap, the
# capture if made here, and each replay's summary (ext4.txt, xfs.txt).
# (A fresh ext4 has lost+found in its root: a listing of the replay's root
# returns one entry more than the capture's, which the ext4 summary counts
# as a difference.) Needs root (loop devices, mounts), e2fsprogs, xfsprogs;
# fio and tar to make the capture.
set -eu
cd "$(dirname "$0")/.."
SRC=$PWD
IOTAP=${IOTAP:-$SRC/build/tools/iotap}
TRACE=
SIZE=1024
TIMING=recorded
OUT=$PWD/compare-layouts
while [ $# -gt 0 ]; do
	case $1 in
	--size) SIZE=$2; shift 2 ;;
	--timing) TIMING=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	-h|--help) sed -n '3,28p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "compare-layouts: unknown option $1" >&2; exit 2 ;;
	*) TRACE=$1; shift ;;
	esac
done
[ "$(id -u)" -eq 0 ] || { echo "compare-layouts: run as root (loop devices, mounts)" >&2; exit 1; }
[ -x "$IOTAP" ] || { echo "compare-layouts: build iotap first (meson setup build; ninja -C build)" >&2; exit 1; }
for t in losetup mkfs.ext4 mkfs.xfs; do
	command -v $t >/dev/null || { echo "compare-layouts: $t not found (e2fsprogs, xfsprogs)" >&2; exit 1; }
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
W=$(mktemp -d /var/tmp/iotap-layouts.XXXXXX)
LOOPS=""
cleanup() {
	local m l
	for m in "$W"/mnt-* "$W/capture"; do
		mountpoint -q "$m" 2>/dev/null && { umount "$m" 2>/dev/null || fusermount3 -u "$m"; }
	done
	for l in $LOOPS; do losetup -d "$l" 2>/dev/null || true; done
	rm -rf "$W"
}
trap cleanup EXIT

if [ -z "$TRACE" ]; then
	command -v fio >/dev/null || { echo "compare-layouts: fio not found" >&2; exit 1; }
	TRACE=$OUT/capture.iotap
	echo "== capturing fio and tar through an iotap mount into $TRACE"
	mkdir "$W/capture"
	"$IOTAP" mount "$W/capture" "$W/capture" --trace "$TRACE" --force
	F="fio --directory=$W/capture --ioengine=psync --iomem_align=4096 --output=/dev/null"
	"$IOTAP" mark "$W/capture" seq-write
	$F --name=data --rw=write --bs=1M --size=128M --end_fsync=1
	"$IOTAP" mark "$W/capture" rand-read
	$F --name=data --rw=randread --bs=8k --size=128M --numjobs=2 --runtime=5 --time_based \
		--filename=data.0.0
	"$IOTAP" mark "$W/capture" rand-rw
	$F --name=rw --rw=randrw --bs=8k --size=32M --numjobs=4 --fdatasync=8 --runtime=5 --time_based
	"$IOTAP" mark "$W/capture" tar-extract
	tar -C /usr/include -cf - . | tar -C "$W/capture" -xf -
	"$IOTAP" mark "$W/capture" tar-read
	tar -C "$W/capture" -cf - . > /dev/null
	"$IOTAP" mark "$W/capture" tar-read --end
	"$IOTAP" umount "$W/capture"
fi

for fs in ext4 xfs; do
	echo "== $fs: ${SIZE} MiB image, loop device, mkfs.$fs"
	truncate -s "${SIZE}M" "$W/$fs.img"
	dev=$(losetup -f --show "$W/$fs.img")
	LOOPS="$LOOPS $dev"
	if [ $fs = xfs ]; then mkfs.xfs -q -f "$dev"; else mkfs.ext4 -q -F "$dev"; fi
	mkdir "$W/mnt-$fs"
	mount "$dev" "$W/mnt-$fs"
	echo "== $fs: iotap replay $TRACE $W/mnt-$fs --prepare --timing $TIMING"
	"$IOTAP" replay "$TRACE" "$W/mnt-$fs" --prepare --timing "$TIMING" \
		--trace "$OUT/$fs.iotap" --overwrite 2> "$OUT/$fs.txt" || { cat "$OUT/$fs.txt"; exit 1; }
	grep -E "^  time:|^  results" "$OUT/$fs.txt" | sed "s/^ */   /"
	umount "$W/mnt-$fs"
done

echo "== iotap compare (ratios to ext4) -> $OUT/compare.txt, $OUT/compare.html"
"$IOTAP" compare --baseline ext4 --label capture "$TRACE" --label ext4 "$OUT/ext4.iotap" \
	--label xfs "$OUT/xfs.iotap" --html "$OUT/compare.html" -o "$OUT/compare.txt"
cat "$OUT/compare.txt"
