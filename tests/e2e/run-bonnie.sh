#!/bin/bash
# SPDX-License-Identifier: MIT
# run-bonnie: `iotap run bonnie` on a plain directory (no FUSE) writes a
# trace whose every operation matches bonnie++ 2.00a's model: per-char
# 1-byte writes and reads at consecutive offsets, 2048 block writes of
# 8192 bytes at consecutive offsets, rewrite = read + write of each chunk,
# 8192 seeks with ~10% rewrites, -n 1 = 1024 creates, stats and deletes per
# pass; phase markers present, paired and in bonnie++'s order with their
# CPU; the CSV is accepted by Debian's bon_csv2txt and bon_csv2html; with
# the same -z seed, the files are named as the real bonnie++ names them.
. "$(dirname "$0")/lib.sh"
[ -x "$IOTAP" ] || fail "no iotap binary at $IOTAP"
D=$T/d
mkdir -p $D
TR=$T/b.iotap

"$IOTAP" run bonnie $D -s 16 -r 8 -n 1 --char-size 1 -z 42 -m e2e --trace $TR -q \
	> $T/csv.txt 2> $T/err.txt || { cat $T/err.txt; fail "iotap run bonnie failed"; }
[ -z "$(ls -A $D)" ] || fail "the run left files in $D: $(ls -A $D)"
# -q: bonnie++'s text tables on stderr, the CSV alone on stdout
grep -q "^Version 2.00a  *------Sequential Output" $T/err.txt || fail "no text table on stderr"
grep -q "^Latency " $T/err.txt || fail "no Latency line"
expect_eq "CSV lines" "$(wc -l < $T/csv.txt)" 1
grep -q '^1\.98,2\.00a,e2e,1,42,16M,,8192,5,' $T/csv.txt || fail "CSV prefix: $(cat $T/csv.txt)"
expect_eq "CSV columns (as bonnie++ 2.00a)" "$(awk -F, '{ print NF }' $T/csv.txt)" 50

if command -v bon_csv2txt >/dev/null; then
	bon_csv2txt < $T/csv.txt > $T/c2t.txt 2> $T/c2t.err || fail "bon_csv2txt failed"
	[ -s $T/c2t.err ] && { cat $T/c2t.err; fail "bon_csv2txt complained"; }
	grep -q "^e2e  *16M::8192:5 " $T/c2t.txt || { cat $T/c2t.txt; fail "bon_csv2txt lost the IO row"; }
	grep -q "^e2e  *1 " $T/c2t.txt || { cat $T/c2t.txt; fail "bon_csv2txt lost the file row"; }
	bon_csv2html < $T/csv.txt > $T/c2h.html 2> $T/c2h.err || fail "bon_csv2html failed"
	[ -s $T/c2h.err ] && { cat $T/c2h.err; fail "bon_csv2html complained"; }
	grep -q '<td class="size"[^>]*>16M</td>' $T/c2h.html || fail "bon_csv2html has no 16M row"
else
	note "bon_csv2txt not installed (Debian package bonnie++): CSV not checked with it"
fi

"$IOTAP" info --strict $TR > $T/info.txt || { cat $T/info.txt; fail "info --strict"; }
grep -q "^source *workload" $T/info.txt || fail "trace source is not workload"
grep -q "^lost records *0" $T/info.txt || fail "records were lost"
"$IOTAP" dump $TR > $T/dump.txt || fail "dump"

# phases: paired, in bonnie++'s order
awk '$4 == "PHASE" { print $5, $6 }' $T/dump.txt > $T/phases.txt
want=""
for p in putc write rewrite getc read seeks seq_create seq_stat seq_delete \
	 rand_create rand_stat rand_delete; do
	want="${want}begin name=\"$p\"
end name=\"$p\"
"
done
[ "$(cat $T/phases.txt)" = "$(printf '%s' "$want")" ] || { cat $T/phases.txt; fail "phase markers"; }
grep ' PHASE ' $T/dump.txt | grep -qv 'cpu_user_ns=[0-9]* cpu_sys_ns=[0-9]*' &&
	fail "a PHASE marker lacks its CPU"

# per-phase op tallies: "phase op length" -> count; offsets checked in order
awk '
$4 == "PHASE" { ph = ($5 == "begin") ? substr($6, 7, length($6) - 7) : ""; next }
ph == "" || NF < 9 { next }
{ n[ph " " $4]++ }
($4 == "read" || $4 == "write") && ph != "seeks" && ph != "rewrite" {
	if ($6 != off[ph]) bad[ph]++
	off[ph] += $8
	len[ph " " $4 " " $7]++
}
ph == "rewrite" && ($4 == "read" || $4 == "write") {
	if ($6 != roff) bad[ph]++
	if ($4 == "write") roff += 8192
}
ph == "seeks" && $4 == "read" && $6 % 8192 != 0 { bad[ph]++ }
END {
	for (k in n) print "n", k, n[k]
	for (k in len) print "len", k, len[k]
	for (k in bad) print "bad", k, bad[k]
}' $T/dump.txt | sort > $T/tally.txt
t() { awk -v k="$1" '{ key = $2; for (i = 3; i < NF; i++) key = key " " $i } key == k { print $NF }' $T/tally.txt; }
grep '^bad' $T/tally.txt && fail "offsets out of order (above)"
expect_eq "putc 1-byte writes" "$(t 'putc write 1')" 1048576
expect_eq "putc fsync" "$(t 'putc fsync')" 1
expect_eq "write 8192-byte writes" "$(t 'write write 8192')" 2048
expect_eq "rewrite reads" "$(t 'rewrite read')" 2048
expect_eq "rewrite writes" "$(t 'rewrite write')" 2048
expect_eq "getc 1-byte reads" "$(t 'getc read 1')" 1048576
expect_eq "read 8192-byte reads" "$(t 'read read 8192')" 2048
expect_eq "seek reads" "$(t 'seeks read')" 8192
rw=$(t 'seeks write')
[ "$rw" -ge 650 ] && [ "$rw" -le 990 ] || fail "seek rewrites $rw, want about 10% of 8192"
expect_eq "seeker fsyncs" "$(t 'seeks fsync')" 5
for p in seq rand; do
	expect_eq "$p creates" "$(t "${p}_create create")" 1024
	expect_eq "$p stats" "$(t "${p}_stat getattr")" 1024
	expect_eq "$p deletes" "$(t "${p}_delete unlink")" 1024
	expect_eq "$p rmdir" "$(t "${p}_delete rmdir")" 1
done
expect_eq "NAME records of created files (2 x Bonnie.PID, 2048 files)" \
	"$(grep -c ' NAME .*mode=0100600' $T/dump.txt)" 2050

"$IOTAP" report $TR --json > $T/r.json || fail "report --json"
python3 - $T/r.json <<'PY' || fail "report JSON does not match the run"
import json, sys
r = json.load(open(sys.argv[1]))
names = [p["name"] for p in r["phases"] if not p["name"].startswith("(")]
assert names == ["putc", "write", "rewrite", "getc", "read", "seeks", "seq_create",
                 "seq_stat", "seq_delete", "rand_create", "rand_stat", "rand_delete"], names
w = [p for p in r["phases"] if p["name"] == "write"][0]
assert w["write"]["ops"] == 2048 and w["write"]["bytes"] == 16 << 20, w["write"]
assert r["trace"]["source"] == "workload", r["trace"]
PY

# the real bonnie++ with the same seed seeks the same chunks and names the
# same files in the same order
if command -v bonnie++ >/dev/null && command -v strace >/dev/null; then
	mkdir -p $T/real
	strace -f -e trace=openat,lseek -o $T/real.strace \
		bonnie++ -d $T/real -s 16 -r 8 -n 1 -f -z 42 -u "$(id -un)" -q > /dev/null 2>&1 ||
		fail "real bonnie++ failed"
	sed -n 's/.*openat(AT_FDCWD, "\([^"]*\)", O_WRONLY|O_CREAT|O_EXCL.*/\1/p' \
		$T/real.strace > $T/real.names
	awk '$4 == "NAME" && /mode=0100600/ && !/name="Bonnie\./ {
		sub(/.*name="/, ""); sub(/"$/, ""); print }' $T/dump.txt > $T/ours.names
	expect_eq "names of the real bonnie++" "$(wc -l < $T/real.names)" 2048
	cmp -s $T/real.names $T/ours.names || fail "file names differ from bonnie++ -z 42's"
	# seekers are the threads that are not the main one (the first pid)
	main=$(awk 'NR == 1 { print $1 }' $T/real.strace)
	awk -v m=$main '$1 != m && /lseek\([0-9]+, [0-9]+, SEEK_SET/ {
		sub(/.*lseek\([0-9]+, /, ""); sub(/,.*/, ""); print }' $T/real.strace |
		sort -n > $T/real.seeks
	awk '$4 == "PHASE" { ph = $6 } ph == "name=\"seeks\"" && ($4 == "read" || $4 == "write") {
		print $6 }' $T/dump.txt | sort -n > $T/ours.seeks
	expect_eq "seek reads+rewrites of the real bonnie++" "$(wc -l < $T/real.seeks)" \
		"$(wc -l < $T/ours.seeks)"
	cmp -s $T/real.seeks $T/ours.seeks || fail "seek offsets differ from bonnie++ -z 42's"
else
	note "bonnie++ or strace missing: not compared with the real bonnie++"
fi
exit 0
