#!/bin/bash
# SPDX-License-Identifier: MIT
# ctl-top-tmux: `iotap top MNT` in a real terminal. tmux (a private
# server, 160x50) runs top with its screen redrawn in place (stdout is the
# pane, so not --batch) while fio writes 4 KiB blocks at a fixed rate on
# the traced mount; the test reads the pane (capture-pane) after each
# refresh. Every frame it sees shows ops/s and write MB/s within 10% of
# fio's own rate over the same window (fio's epoch-stamped IOPS log in
# 100 ms steps; the title's HH:MM:SS.mmm is the window's end), the screen
# was cleared and redrawn (one title, not a scroll of them), and the
# busiest file is fio's. tmux is always killed and the mount unmounted.
# TIMEOUT: 60
. "$(dirname "$0")/lib.sh"
need_fuse
command -v fio >/dev/null || skip "fio not installed"
command -v tmux >/dev/null || skip "tmux not installed"

SOCK=iotap-e2e-$$
at_exit "tmux -L $SOCK kill-server 2>/dev/null"
iotap_mount "$BACKING" "$MNT" --trace $T/t.iotap

fio --name=w --directory="$MNT" --rw=write --bs=4k --size=36M --ioengine=psync \
	--rate_iops=1500 --fallocate=none --write_iops_log=$T/fio --log_avg_msec=100 \
	--log_unix_epoch=1 >/dev/null 2>$T/fio.err &
FIO=$!
at_exit "kill $FIO 2>/dev/null"
sleep 0.5
tmux -L $SOCK -f /dev/null new-session -d -s top -x 160 -y 50 \
	"TZ=${TZ:-UTC} '$IOTAP' top '$MNT' --interval 2 2>$T/top.err; sleep 30" ||
	fail "tmux cannot start"
for i in 1 2 3; do
	sleep 2.3
	tmux -L $SOCK capture-pane -p -t top > $T/pane.$i || fail "capture-pane failed"
done
wait $FIO || { cat $T/fio.err; fail "fio failed"; }
tmux -L $SOCK kill-server 2>/dev/null
[ -s $T/top.err ] && { cat $T/top.err; fail "top printed errors"; }
cat $T/pane.3 >&2

TZ=${TZ:-UTC} python3 - $T/fio_iops.1.log $T/pane.1 $T/pane.2 $T/pane.3 <<'PY' || fail "the screen's figures are not fio's"
import datetime, re, sys, time
log = [l.split(",") for l in open(sys.argv[1]) if l.strip()]
log = [(int(f[0]), float(f[1])) for f in log]
seen = {}
for path in sys.argv[2:]:
    pane = open(path).read()
    titles = re.findall(r"^iotap top .*$", pane, re.M)
    assert len(titles) == 1, "%s: want one title on the screen, got %d" % (path, len(titles))
    m = re.search(r"  (\d\d):(\d\d):(\d\d)\.(\d\d\d)  .*\(over ([\d.]+) s\)", titles[0])
    assert m, "no window in the title: " + titles[0]
    seen[titles[0]] = (pane, m)
assert len(seen) >= 2, "the screen was not refreshed: %d distinct frames" % len(seen)
for title, (pane, m) in seen.items():
    today = datetime.date.today()
    end = time.mktime(datetime.datetime(today.year, today.month, today.day, int(m.group(1)),
                                        int(m.group(2)), int(m.group(3))).timetuple())
    end = (end + int(m.group(4)) / 1000.0) * 1000
    over = float(m.group(5))
    lo, hi = end - over * 1000, end
    n = 0.0
    for t, v in log:
        a, b = max(t - 100, lo), min(t, hi)
        if b > a:
            n += v * (b - a) / 1000.0
    iops = n / over
    mbs = iops * 4096 / 1e6
    ops = float(re.search(r"ops/s\s+([\d.]+)", pane).group(1))
    wr = float(re.search(r"write\s+([\d.]+) MB/s", pane).group(1))
    print("# fio %.1f IOPS %.2f MB/s; the screen %.1f ops/s %.2f MB/s" % (iops, mbs, ops, wr))
    assert iops > 500, "fio's log does not cover the window (%.1f IOPS)" % iops
    assert abs(ops - iops) <= 0.1 * iops, "ops/s %.1f vs fio %.1f" % (ops, iops)
    assert abs(wr - mbs) <= 0.1 * mbs, "MB/s %.2f vs fio %.2f" % (wr, mbs)
    files = pane.split("FILE")[1].strip().split("\n")[1:]
    assert files and files[0].split()[0] == "w.0.0", "busiest file: %s" % files
PY
iotap_umount "$MNT"
exit 0
