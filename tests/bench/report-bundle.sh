#!/bin/bash
# SPDX-License-Identifier: MIT
# report-bundle.sh - report-threads.sh, packed to run on another host
#
#   tests/bench/report-bundle.sh DIR        (from the source tree, after a build)
#   ... then on the other host:  bash DIR/run.sh [TRACE-DIR]
#
# Copies iotap, report-synth and report-threads.sh into DIR with every
# shared library the two programs load and the dynamic loader, so that the
# bundle runs on an x86-64 Linux host where nothing can be installed (a
# many-core server; the device machines these sessions are lent), as
# ../shared/bench-bundle does for the transport benchmark. run.sh passes
# THREADS, RECORDS, ROUNDS, RUN and PERF through to report-threads.sh
# (defaults there; the issue's run: THREADS="1 2 4 8 16"
# RECORDS=100000000 ROUNDS=3), writes its trace in TRACE-DIR (default
# /var/tmp) and keeps the output in $OUT/report-threads.txt when OUT is
# set. DIR is added to .git/info/exclude.
set -eu
D=${1:?usage: report-bundle.sh DIR}
BUILD=${IOTAP_BUILD:-$(cd "$(dirname "$0")/../.." && pwd)/build}
for x in "$BUILD/tools/iotap" "$BUILD/tests/unit/report-synth"; do
	[ -x "$x" ] || { echo "report-bundle: no $x (build first)" >&2; exit 1; }
done
rm -rf "$D"
mkdir -p "$D/bin" "$D/lib"
cp "$BUILD/tools/iotap" "$BUILD/tests/unit/report-synth" "$D/bin/"
cp "$(dirname "$0")/report-threads.sh" "$D/"
for b in "$D/bin/iotap" "$D/bin/report-synth"; do
	ldd "$b" | awk '/=>/ && $3 ~ /^\// { print $3 } /ld-linux/ { print $1 }'
done | sort -u | while read -r l; do cp -L "$l" "$D/lib/"; done
for p in iotap report-synth; do	# each program through the bundle's loader and libraries
	# shellcheck disable=SC2016	# $D and $0 expand in the wrapper, not here
	printf '#!/bin/sh\nD=$(cd "$(dirname "$0")/.." && pwd)\nexec "$D/lib/ld-linux-x86-64.so.2" --library-path "$D/lib" "$D/bin/%s" "$@"\n' \
		"$p" > "$D/bin/$p.sh"
	chmod +x "$D/bin/$p.sh"
done
cat > "$D/run.sh" <<'RUN'
#!/bin/bash
# run.sh [TRACE-DIR]: report-threads.sh with the bundle's programs (report-bundle.sh)
D=$(cd "$(dirname "$0")" && pwd)
echo "# $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { print $2 / 1048576 " GiB" }' /proc/meminfo)"
if [ -n "${OUT:-}" ]; then
	IOTAP=$D/bin/iotap.sh SYNTH=$D/bin/report-synth.sh bash "$D/report-threads.sh" "${1:-/var/tmp}" |
		tee "$OUT/report-threads.txt"
else
	IOTAP=$D/bin/iotap.sh SYNTH=$D/bin/report-synth.sh exec bash "$D/report-threads.sh" "${1:-/var/tmp}"
fi
RUN
if git rev-parse --git-dir > /dev/null 2>&1; then
	ex=$(git rev-parse --git-dir)/info/exclude
	rel=$(realpath --relative-to="$(git rev-parse --show-toplevel)" "$D")
	grep -qxF "/$rel/" "$ex" 2> /dev/null || echo "/$rel/" >> "$ex"
fi
du -sh "$D"
