#!/bin/bash
# SPDX-License-Identifier: MIT
#
# fleet.sh - two "hosts" captured, exported to Parquet, asked fleet
#            questions in SQL (DuckDB)
#
#   examples/fleet.sh [DIR] [SECONDS]      (as root)
#
# Installs what it needs (apt-get; npm's @duckdb/node-api into tests/.node,
# as tests/run does), builds iotap into build/, and mounts two directories
# under DIR (default: a new temp dir) over themselves, each with its own
# trace, as two hosts of a fleet running at once:
#   web1  a media server: `load` untars /usr/share/doc, `serve` is fio
#         reading 1 MiB sequentially and 64 KiB at random (2 jobs);
#   db1   a database: `load` is fio writing 8 KiB with an fdatasync every
#         16 writes, `serve` fio's 8 KiB random 70/30 read/write mix with an
#         fsync every 32 writes.
# `serve` runs SECONDS (default 45) on both. One machine has one host name,
# so `iotap export --host` names each trace's host; then fleet.js runs
# fleet.sql's three questions over both Parquet files as one table: IOPS
# per host per minute, p99 latency per phase and host, the 10 slowest files.
# The traces and the Parquet files are left in DIR.
set -eu
cd "$(dirname "$0")/.."
SRC=$PWD

[ "$(id -u)" -eq 0 ] || { echo "fleet: run as root (apt-get, FUSE mounts)" >&2; exit 1; }

. examples/setup.sh
# shellcheck disable=SC2086 # a list of package names
ex_missing $EX_PKGS fio tar
# Debian's nodejs and npm, unless a node and npm are there already (the
# NodeSource nodejs package brings its own npm, which Debian's conflicts with)
command -v node > /dev/null || missing="$missing nodejs"
command -v npm > /dev/null || missing="$missing npm"
ex_install
NODE_DIR=${IOTAP_NODE_DIR:-$SRC/tests/.node}
[ -d "$NODE_DIR/node_modules/@duckdb/node-api" ] ||
	npm install --prefix "$NODE_DIR" --no-audit --no-fund --no-save @duckdb/node-api@1.5.6-r.1
ex_build

DIR=${1:-$(mktemp -d /var/tmp/iotap-fleet.XXXXXX)}
SECS=${2:-45}
HOSTS="web1 db1"
mkdir -p "$DIR"
umount_all() {
	for h in $HOSTS; do
		"$IOTAP" umount "$DIR/$h" 2>/dev/null || true
	done
}
trap umount_all EXIT
for h in $HOSTS; do
	mkdir -p "$DIR/$h"
	echo "== $h: mounting $DIR/$h over itself, trace $DIR/$h.iotap"
	"$IOTAP" mount "$DIR/$h" "$DIR/$h" --trace "$DIR/$h.iotap" --force
done

web1() {
	local d=$DIR/web1
	"$IOTAP" mark "$d" load
	tar -C /usr/share/doc -cf - . | tar -C "$d" -xf - 2>/dev/null || true
	fio --name=media --directory="$d" --rw=write --bs=1M --size=64M --nrfiles=4 \
		--ioengine=psync --output-format=terse > /dev/null
	"$IOTAP" mark "$d" serve
	fio --directory="$d" --filename_format='media.0.$filenum' --nrfiles=4 --size=64M \
		--ioengine=psync --time_based --runtime="$SECS" --output-format=terse \
		--name=seq --rw=read --bs=1M --name=rand --rw=randread --bs=64k > /dev/null
}
db1() {
	local d=$DIR/db1
	"$IOTAP" mark "$d" load
	fio --name=table --directory="$d" --rw=write --bs=8k --size=32M --fdatasync=16 \
		--ioengine=psync --output-format=terse > /dev/null
	"$IOTAP" mark "$d" serve
	fio --name=table --directory="$d" --rw=randrw --rwmixread=70 --bs=8k --size=32M \
		--fsync=32 --ioengine=psync --time_based --runtime="$SECS" \
		--output-format=terse > /dev/null
}
echo "== load, then $SECS s of serve, on both at once"
web1 & w=$!
db1 & d=$!
wait $w
wait $d
umount_all
trap - EXIT

for h in $HOSTS; do
	echo "== iotap export $DIR/$h.iotap $DIR/$h.parquet --host $h"
	"$IOTAP" export "$DIR/$h.iotap" "$DIR/$h.parquet" --host "$h" --force
done
echo
echo "== examples/fleet.sql over $DIR/*.parquet (DuckDB)"
NODE_PATH="$NODE_DIR/node_modules" node examples/fleet.js "$DIR"/*.parquet
echo "(the files are in $DIR; remove them with: rm -rf '$DIR')"
