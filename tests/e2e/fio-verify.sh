#!/bin/bash
# SPDX-License-Identifier: MIT
# fio-verify: fio writes and verifies (crc32c) sequential and random data
# with several jobs through the mount, in both capture modes: zero verify
# errors, and the trace holds every write fio made.
. "$(dirname "$0")/lib.sh"
need_fuse
command -v fio >/dev/null || skip "fio not installed"

for mode in direct cache; do
	TR=$T/fio-$mode.iotap
	if [ $mode = cache ]; then
		iotap_mount "$BACKING" "$MNT" --trace "$TR" --cache
	else
		iotap_mount "$BACKING" "$MNT" --trace "$TR"
	fi
	# page-aligned buffers: libfuse 3.14 caps a request at 256 pages, so a 1 MiB
	# write from an unaligned buffer (257 pages) becomes two requests
	fio --output=$T/fio-$mode.out --directory="$MNT" --ioengine=psync --verify=crc32c \
		--iomem_align=4096 \
		--verify_fatal=1 --do_verify=1 --verify_state_save=0 \
		--name=seq --rw=write --bs=1M --size=16M --numjobs=2 \
		--name=rand --rw=randwrite --bs=8k --size=8M --numjobs=2 \
		--name=mixed --rw=randrw --bs=4k --size=4M --numjobs=2 --verify=crc32c \
		|| { cat $T/fio-$mode.out; fail "fio verify failed in $mode mode"; }
	grep -q "err= 0" $T/fio-$mode.out || fail "fio reported errors in $mode mode"
	grep -q "err= [1-9]" $T/fio-$mode.out && fail "fio job with errors in $mode mode"
	rm -f "$MNT"/seq.* "$MNT"/rand.* "$MNT"/mixed.*
	iotap_umount "$MNT"
	"$IOTAP" info --strict "$TR" > $T/info-$mode.txt || { cat $T/info-$mode.txt; fail "info $mode"; }
	w=$(count_ops "$TR" write)
	[ "$w" -gt 0 ] || fail "no write records in $mode mode"
	if [ $mode = direct ]; then
		# 2 x 16 MiB in 1 MiB + 2 x 8 MiB in 8 KiB + the randrw jobs' writes
		seqw=$("$IOTAP" dump "$TR" --op write | awk '$7 == 1048576' | wc -l)
		expect_eq "1 MiB writes in direct mode" "$seqw" 32
		rw=$("$IOTAP" dump "$TR" --op write | awk '$7 == 8192' | wc -l)
		expect_eq "8 KiB writes in direct mode" "$rw" 2048
	fi
	note "$mode: $w write records"
done
exit 0
