#!/bin/bash
# SPDX-License-Identifier: MIT
# ctl-status: `iotap status` and `iotap top` against fio. An untraced
# mount says so; after `trace start`, fio writes at a paced rate while
# `iotap top -n 2 --interval 2 --batch` runs inside fio's run: each
# refresh's write ops/s and MB/s are within 10% of fio's own rates over
# the same window (fio's IOPS log in 100 ms steps, epoch-stamped: on a loaded machine
# fio's pacing lags and catches up in bursts, so its run average is not
# what a window saw), a p99 write latency is shown,
# and the busiest process and file are fio and its file. Afterwards
# `status --json` counts exactly fio's writes and bytes, records written,
# no loss, a growing trace, the daemon's CPU and RSS. User nobody is
# refused (exit 1); a path that is not an iotap mount too.
# TIMEOUT: 60
. "$(dirname "$0")/lib.sh"
need_fuse
command -v fio >/dev/null || skip "fio not installed"
command -v setpriv >/dev/null || skip "setpriv not installed"
U=$(id -u nobody 2>/dev/null) || skip "no user nobody"

iotap_mount "$BACKING" "$MNT"
"$IOTAP" status "$MNT" > $T/st || fail "status failed"
grep -q "not tracing" $T/st || { cat $T/st; fail "an untraced mount does not say so"; }
"$IOTAP" status "$MNT" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["tracing"] is False and d["trace"] is None, d' ||
	fail "status --json of an untraced mount"
expect 1 "not the root of an iotap mount" "$IOTAP" status "$T"
expect 1 "only root" setpriv --reuid=$U --regid=$U --clear-groups "$IOTAP" status "$MNT"
expect 2 "MOUNTPOINT or TRACE is required" "$IOTAP" top
check "trace start" "$IOTAP" trace "$MNT" start $T/s.iotap

fio --name=w --directory="$MNT" --rw=write --bs=4k --size=40M --ioengine=psync \
	--rate_iops=2000 --fallocate=none --output-format=json --output=$T/fio.json \
	--write_iops_log=$T/fio --log_avg_msec=100 --log_unix_epoch=1 >/dev/null 2>$T/fio.err &
FIO=$!
at_exit "kill $FIO 2>/dev/null"
sleep 0.5
"$IOTAP" top "$MNT" -n 2 --interval 2 --batch > $T/top 2>$T/top.err || { cat $T/top.err; fail "top failed"; }
wait $FIO || { cat $T/fio.err; fail "fio failed"; }
cat $T/top >&2

python3 - $T/fio_iops.1.log $T/top <<'PY' || fail "top's figures are not fio's"
import re, sys
log = [l.split(",") for l in open(sys.argv[1]) if l.strip()]
log = [(int(f[0]), float(f[1])) for f in log]
t0 = 0.0    # --log_unix_epoch: the log's times are ms since the epoch
blocks = [b for b in open(sys.argv[2]).read().split("iotap top ")[1:]]
assert len(blocks) == 2, "want 2 refreshes, got %d" % len(blocks)
for mid in blocks:
    m = re.search(r"over ([\d.]+) s to ([\d.]+)\)", mid)
    over, end = float(m.group(1)), float(m.group(2))
    lo, hi = (end - over - t0) * 1000, (end - t0) * 1000
    # fio's 100 ms steps in the window, the edge steps in proportion
    n = 0.0
    for t, v in log:
        a, b = max(t - 100, lo), min(t, hi)
        if b > a:
            n += v * (b - a) / 1000.0
    iops = n / over
    mbs = iops * 4096 / 1e6
    ops = float(re.search(r"ops/s\s+([\d.]+)", mid).group(1))
    wr = float(re.search(r"write\s+([\d.]+) MB/s", mid).group(1))
    print("# fio %.1f IOPS %.2f MB/s; top %.1f ops/s %.2f MB/s" % (iops, mbs, ops, wr))
    assert abs(ops - iops) <= 0.1 * iops, "ops/s %.1f vs fio %.1f" % (ops, iops)
    assert abs(wr - mbs) <= 0.1 * mbs, "MB/s %.2f vs fio %.2f" % (wr, mbs)
m = re.search(r"write ([\d.]+)", mid.split("p99 us")[1].split("\n")[0])
assert m and float(m.group(1)) > 0, "no p99 write latency"
procs = mid.split("COMMAND")[1].split("FILE")[0].strip().split("\n")[1:]
assert procs and procs[0].split()[1] == "fio", "busiest process: %s" % procs
files = mid.split("FILE")[1].strip().split("\n")[1:]
assert files and files[0].split()[0] == "w.0.0", "busiest file: %s" % files
PY

"$IOTAP" status "$MNT" --json > $T/st.json || fail "status --json"
"$IOTAP" status "$MNT" > $T/st || fail "status"
cat $T/st >&2
python3 - $T/fio.json $T/st.json <<'PY' || fail "status's figures are not fio's"
import json, sys
job = json.load(open(sys.argv[1]))["jobs"][0]["write"]
st = json.load(open(sys.argv[2]))
assert st["tracing"] is True and st["trace"].endswith("/s.iotap"), st
assert st["ops_by_type"]["write"] == job["total_ios"], (st["ops_by_type"], job["total_ios"])
assert st["write_bytes"] == job["io_bytes"], (st["write_bytes"], job["io_bytes"])
assert st["records"] > 0 and st["lost"] == 0 and st["trace_bytes"] > 0, st
assert st["rss_kb"] > 0 and st["cpu_user_s"] + st["cpu_sys_s"] > 0 and st["uptime_s"] > 1, st
PY
grep -q "^trace      $T/s.iotap" $T/st || fail "status does not show the trace"
iotap_umount "$MNT"
exit 0
