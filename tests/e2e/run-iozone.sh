#!/bin/bash
# SPDX-License-Identifier: MIT
# run-iozone: `iotap run iozone` on a plain directory: the single run's
# table and trace (write, rewrite, read, re-read, random read, random
# write; each record once, markers "write s=1m r=64k"...), the -a sweep
# with iozone's crossover rule and -R report tables, and -t throughput
# mode's lines and summary.
. "$(dirname "$0")/lib.sh"
[ -x "$IOTAP" ] || fail "no iotap binary at $IOTAP"
D=$T/d
mkdir -p $D

"$IOTAP" run iozone $D -s 1m -r 64 --trace $T/z.iotap --quiet > $T/out.txt ||
	fail "iotap run iozone -s 1m -r 64"
grep -Eq '^ +kB +reclen +write +rewrite +read +reread +read +write$' $T/out.txt ||
	{ cat $T/out.txt; fail "no iozone header"; }
grep -Eq '^ +1024 +64( +[0-9]+){6}$' $T/out.txt || { cat $T/out.txt; fail "no 1024/64 row"; }
grep -q "iozone test complete" $T/out.txt || fail "no completion line"
[ -z "$(ls -A $D)" ] || fail "files left: $(ls -A $D)"
"$IOTAP" dump $T/z.iotap > $T/z.txt || fail dump
awk '$4 == "PHASE" && $5 == "begin"' $T/z.txt | sed 's/.*name="\([^"]*\)".*/\1/' > $T/ph.txt
expect_eq "iozone markers" "$(tr '\n' '|' < $T/ph.txt)" \
	"write s=1m r=64k|rewrite s=1m r=64k|read s=1m r=64k|reread s=1m r=64k|random_read s=1m r=64k|random_write s=1m r=64k|"
awk '
$4 == "PHASE" { ph = ($5 == "begin") ? $6 : ""; next }
ph != "" && ($4 == "read" || $4 == "write") && $7 == 65536 { n[ph " " $4]++; off[ph " " $6]++ }
END { for (k in n) print k, n[k]; for (k in off) if (off[k] != 1) print "twice", k }' $T/z.txt |
	sort > $T/t.txt
grep -q twice $T/t.txt && fail "a record read or written twice in one phase"
# ($6 is the marker's first word: name="write)
for p in write rewrite random_write; do
	grep -qx "name=\"$p write 16" $T/t.txt || { cat $T/t.txt; fail "$p: 16 writes of 64 KiB"; }
done
for p in read reread random_read; do
	grep -qx "name=\"$p read 16" $T/t.txt || { cat $T/t.txt; fail "$p: 16 reads of 64 KiB"; }
done
# random order: not front to back
awk '$4 == "PHASE" { ph = $6 } ph == "name=\"random_read" && $4 == "read" { print $6 }' $T/z.txt \
	> $T/rr.txt
[ "$(cat $T/rr.txt)" != "$(sort -n $T/rr.txt)" ] || fail "random read went front to back"

# -a sweep: files 64k..256k, records from 4k up to the file size; -R tables
"$IOTAP" run iozone $D -a -g 256k -i 0 -R --quiet > $T/a.txt || fail "iozone -a -g 256k"
expect_eq "auto rows" "$(grep -Ec '^ +(64|128|256) +[0-9]+ +[0-9]+ +[0-9]+' $T/a.txt)" $((5 + 6 + 7))
grep -q '^"Writer report"' $T/a.txt || fail "no Writer report (-R)"
grep -q '^"Re-writer report"' $T/a.txt || fail "no Re-writer report"
grep -q '^"Reader report"' $T/a.txt && fail "-i 0 only, yet a Reader report"
grep -Eq '^"256"  ( [0-9]+ ){7}$' $T/a.txt || { cat $T/a.txt; fail "no 256 kB report row of 7 records"; }

# -t: throughput mode
"$IOTAP" run iozone $D -s 2m -r 64 -i 0 -i 1 -t 2 --quiet > $T/t2.txt || fail "iozone -t 2"
grep -q 'Children see throughput for  2 initial writers' $T/t2.txt || fail "no -t writer line"
grep -q 'Children see throughput for  2 re-readers' $T/t2.txt || fail "no -t re-reader line"
grep -Eq '^"  Initial write " +[0-9]+\.[0-9]{2} $' $T/t2.txt || { cat $T/t2.txt; fail "no summary row"; }
[ -z "$(ls -A $D)" ] || fail "files left: $(ls -A $D)"
exit 0
