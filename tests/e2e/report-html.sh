#!/bin/bash
# SPDX-License-Identifier: MIT
# report-html: `iotap report --html` and `iotap compare --html` write one
# self-contained page each (no scripts, links, fonts or images from
# anywhere), which headless Chromium (Debian's chromium) loads without
# console errors, whose DOM has the charts, and whose screenshot is not
# blank. Skips (77) without chromium. No FUSE needed.
. "$(dirname "$0")/lib.sh"
SYNTH=${IOTAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}/tests/unit/report-synth
[ -x "$SYNTH" ] || skip "no report-synth at $SYNTH (build the tests)"
[ -x "$IOTAP" ] || fail "no iotap binary at $IOTAP"
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome)
[ -n "$CHROME" ] || skip "no chromium (apt-get install chromium)"
command -v python3 >/dev/null || skip "needs python3"

cat > $T/bonnie.script <<'EOF'
putc seqwrite ops=100000 rate=50000 bs=1 lat=5 file=1
write seqwrite ops=40000 rate=20000 bs=8192 lat=20 file=2 slow=6 at=0.5
rewrite rewrite ops=20000 rate=10000 bs=8192 lat=20 file=2
getc seqread ops=100000 rate=50000 bs=1 lat=5 file=3 devread=5
read seqread ops=40000 rate=20000 bs=8192 lat=20 file=4 devread=40
seeks randrw ops=6000 rate=3000 bs=8192 lat=100 threads=3 wpct=10 file=10 size=268435456
seq_create create n=1024 rate=5000 lat=100
seq_stat stat n=1024 rate=10000 lat=20
seq_delete unlink n=1024 rate=10000 lat=30
EOF
check "synth" "$SYNTH" --samples --no-marks $T/a.iotap $T/bonnie.script > /dev/null
check "synth" "$SYNTH" --samples $T/b.iotap $T/bonnie.script > /dev/null

"$IOTAP" report $T/a.iotap --html $T/report.html > $T/r.txt 2> $T/err || { cat $T/err; fail "report --html"; }
grep -q "wrote $T/report.html" $T/err || fail "report --html does not say where the page went"
[ -s $T/r.txt ] && { head -5 $T/r.txt; fail "report --html also printed the text report"; }
"$IOTAP" report $T/a.iotap --html $T/report.html --force -o $T/o.txt 2> $T/err ||
	{ cat $T/err; fail "report --html -o"; }
grep -q "^trace " $T/o.txt || fail "report --html -o FILE: no text report in FILE"
grep -q "<th>read p99 us</th>" $T/report.html || fail "the HTML's p99 is not in microseconds, as the text's"
"$IOTAP" compare --label auto $T/a.iotap --label marked $T/b.iotap $T/b.iotap --html $T/compare.html \
	> /dev/null 2> $T/err || { cat $T/err; fail "compare --html"; }

# self-contained: nothing fetched from anywhere, no scripts at all
for p in report compare; do
	f=$T/$p.html
	[ $(stat -c %s $f) -lt 3000000 ] || fail "$p.html is $(stat -c %s $f) bytes"
	grep -qi "<script\|<link\|<img\|<iframe\|@import\|url(\|src=\|href=" $f && fail "$p.html refers to something outside"
	grep -o 'http[s]*://[^"]*' $f | grep -v '^http://www.w3.org/2000/svg$' && fail "$p.html has a URL"
	python3 -c "import html.parser, sys; html.parser.HTMLParser().feed(open(sys.argv[1]).read())" $f ||
		fail "$p.html does not parse"
done
grep -q "Throughput: filesystem and device" $T/report.html || fail "no throughput chart"
grep -q "Seek maps" $T/report.html || fail "no seek maps"
grep -q "Latency histograms" $T/report.html || fail "no latency histograms"
grep -q "throughput-change" $T/report.html || fail "the slowdown in 'write' is not flagged on the page"
grep -q "seq-write-8k" $T/report.html || fail "automatic phase names missing"

# load each page in headless Chromium: DOM, console, screenshot
for p in report compare; do
	: > $T/chrome.log
	timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir=$(mktemp -d $T/prof.XXXXXX) --enable-logging=stderr --v=0 \
		--dump-dom file://$T/$p.html > $T/$p.dom 2>> $T/chrome.log ||
		{ tail $T/chrome.log; fail "chromium could not load $p.html"; }
	timeout 60 "$CHROME" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir=$(mktemp -d $T/prof.XXXXXX) --enable-logging=stderr --v=0 \
		--window-size=1200,1800 --force-device-scale-factor=0.5 --screenshot=$T/$p.png file://$T/$p.html > /dev/null 2>> $T/chrome.log ||
		{ tail $T/chrome.log; fail "chromium could not screenshot $p.html"; }
	if grep -i "CONSOLE\|Uncaught\|Refused to\|net::ERR_\|Failed to load resource" $T/chrome.log; then
		fail "chromium reported errors loading $p.html"
	fi
	svgs=$(grep -o "<svg" $T/$p.dom | wc -l)
	[ $svgs -ge 4 ] || fail "$p.html: only $svgs charts in the DOM chromium built"
	[ -s $T/$p.png ] || fail "no screenshot of $p.html"
	python3 - $T/$p.png <<'PY' || fail "the screenshot of $p.html is blank"
# Decode the PNG (8-bit RGB/RGBA, non-interlaced, as Chromium writes) and
# require a real picture: many colours, and a tenth of the pixels not the
# background.
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat, w = 8, b"", 0
while pos < len(data):
    n, typ = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if typ == b"IHDR":
        w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        assert depth == 8 and ctype in (2, 6) and not interlace, (depth, ctype, interlace)
        bpp = 3 if ctype == 2 else 4
    elif typ == b"IDAT":
        idat += body
    pos += 12 + n
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
counts = {}
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    if y % 4 == 0:
        for x in range(0, w, 4):
            px = bytes(line[x * bpp:x * bpp + 3])
            counts[px] = counts.get(px, 0) + 1
    prev = line
total = sum(counts.values())
bg = max(counts.values())
print("# %d colours, %.1f%% of pixels not the background" % (len(counts), 100.0 * (total - bg) / total))
assert len(counts) >= 50 and (total - bg) * 10 >= total
PY
done
exit 0
