#!/bin/bash
# SPDX-License-Identifier: MIT
# ctl-bounded: bounded traces. Under fio, --rotate-size closes each file at
# about SIZE and goes on in NAME.1.iotap, NAME.2.iotap...; --rotate-keep 3
# leaves only the 3 newest (the log says which went). --rotate-time with a
# strftime(3) name rotates by time, and those files together hold every
# write fio made. Every file passes `iotap info --strict`. Bad values are
# refused with exit 2.
# TIMEOUT: 60
. "$(dirname "$0")/lib.sh"
need_fuse
command -v fio >/dev/null || skip "fio not installed"
D=$T/traces
mkdir $D

expect 2 "rotate-size" "$IOTAP" mount "$BACKING" "$MNT" --trace $D/x.iotap --rotate-size 1x
expect 2 "rotate-time" "$IOTAP" mount "$BACKING" "$MNT" --trace $D/x.iotap --rotate-time soon
expect 2 "rotate-keep needs" "$IOTAP" mount "$BACKING" "$MNT" --trace $D/x.iotap --rotate-keep 2

iotap_mount "$BACKING" "$MNT" --trace $D/s.iotap --rotate-size 8k --rotate-keep 2 --log $T/s.log
fio --name=w --directory="$MNT" --rw=randwrite --bs=4k --size=16M --rate_iops=1200 \
	--ioengine=psync --fallocate=none >/dev/null 2>$T/fio.err || { cat $T/fio.err; fail "fio"; }
iotap_umount "$MNT"
nrot=$(grep -c "closed (--rotate-size)" $T/s.log)
[ "$nrot" -ge 2 ] || { cat $T/s.log; fail "only $nrot size rotations in 3.4 s of writes (a chunk a second)"; }
expect_eq "files kept" "$(ls $D | wc -l)" 2
grep -q "removed old trace '$D/s.iotap' (--rotate-keep 2)" $T/s.log || fail "the oldest was not removed"
[ -e $D/s.$nrot.iotap ] || fail "the newest file s.$nrot.iotap is missing: $(ls $D)"
for f in $D/*.iotap; do
	"$IOTAP" info --strict "$f" >$T/info 2>&1 || { cat $T/info; fail "$f is not clean"; }
done
rm -f $D/*

iotap_mount "$BACKING" "$MNT" --trace "$D/t-%Y%m%d-%H%M%S.iotap" --rotate-time 300ms --log $T/t.log
fio --name=t --directory="$MNT" --rw=write --bs=4k --size=4M --rate_iops=1000 \
	--ioengine=psync --fallocate=none --output-format=json --output=$T/fio.json \
	>/dev/null 2>$T/fio.err || { cat $T/fio.err; fail "fio"; }
iotap_umount "$MNT"
n=$(ls $D | wc -l)
[ "$n" -ge 4 ] || fail "only $n files from --rotate-time 300ms over 1 s: $(ls $D)"
ls $D | grep -qE '^t-[0-9]{8}-[0-9]{6}(\.[0-9]+)?\.iotap$' || fail "strftime names: $(ls $D)"
WANT=$(python3 -c 'import json,sys; print(sum(j["write"]["total_ios"] for j in json.load(open(sys.argv[1]))["jobs"]))' $T/fio.json)
got=0
for f in $D/*.iotap; do
	"$IOTAP" info --strict "$f" >$T/info 2>&1 || { cat $T/info; fail "$f is not clean"; }
	got=$((got + $(count_ops "$f" write)))
done
expect_eq "writes across the time-rotated files vs fio" "$got" "$WANT"
exit 0
