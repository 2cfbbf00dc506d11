#!/bin/bash
# SPDX-License-Identifier: MIT
#
# quickstart.sh - from a fresh Debian machine to a real capture and its report
#
#   examples/quickstart.sh [DIR]          (as root)
#
# Installs what iotap needs (apt-get), builds it with meson into build/,
# mounts DIR (default: a new temp dir) over itself with capture on, runs
# real I/O through it (fio: a 64 MiB sequential write with fsync, then 8 KiB
# random reads; a tar of /usr/share/doc in and out), unmounts, and prints
# `iotap info` and `iotap report` of the trace: the phase table (seq-write
# should read `w 1m 100.0%`: one record per fio write()) and the flags; add
# --detail for each phase's histograms and latencies. The trace is left in
# ./quickstart.iotap.
set -eu
cd "$(dirname "$0")/.."
SRC=$PWD

[ "$(id -u)" -eq 0 ] || { echo "quickstart: run as root (apt-get, FUSE mount)" >&2; exit 1; }

. examples/setup.sh
# shellcheck disable=SC2086 # a list of package names
ex_missing $EX_PKGS fio tar
ex_install
ex_build

DIR=${1:-$(mktemp -d /var/tmp/iotap-quickstart.XXXXXX)}
TRACE=$SRC/quickstart.iotap
mkdir -p "$DIR"

echo "== mounting $DIR over itself, trace $TRACE"
"$IOTAP" mount "$DIR" "$DIR" --trace "$TRACE" --force
trap '"$IOTAP" umount "$DIR" 2>/dev/null || true' EXIT

"$IOTAP" mark "$DIR" seq-write
fio --name=seqwrite --directory="$DIR" --rw=write --bs=1M --size=64M --end_fsync=1 \
	--ioengine=psync --output-format=terse >/dev/null
"$IOTAP" mark "$DIR" rand-read
fio --name=seqwrite --directory="$DIR" --rw=randread --bs=8k --size=64M --runtime=5 \
	--time_based --ioengine=psync --output-format=terse >/dev/null
"$IOTAP" mark "$DIR" tar
tar -C /usr/share/doc -cf - . | tar -C "$DIR" -xf - 2>/dev/null || true
tar -C "$DIR" -cf - . >/dev/null
"$IOTAP" umount "$DIR"
trap - EXIT

echo
echo "== iotap info $TRACE"
"$IOTAP" info "$TRACE"
echo
echo "== iotap report $TRACE   (each phase in full: iotap report $TRACE --detail)"
"$IOTAP" report "$TRACE"
echo
echo "(the files are in $DIR; remove them with: rm -rf '$DIR')"
