#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""traces-sql.py - two or more traces in one SQL table, compared per phase

usage: examples/traces-sql.py [--iotap PATH] [--db FILE] TRACE...

Loads each TRACE with `iotap dump --csv` into a table `rec` of an SQLite
database (in memory, or --db FILE to keep it for your own queries), adds
the column `trace` (the file name) and `phase` (the name of the last PHASE
begin marker before the record, '' before the first), and prints, per
phase and trace: ops, MB read and written (10^6 bytes), fsyncs and the mean
and max latency in microseconds. Python's csv and sqlite3 are all it
needs; the same CSV loads into DuckDB (`from 'a.csv'`), pandas or Spark.
"""
import argparse
import csv
import os
import sqlite3
import subprocess
import sys

COLS = None

QUERY = """
select phase, trace, count(*) as ops,
       round(sum(case when op = 'read' and result > 0 then result else 0 end) / 1e6, 3),
       round(sum(case when op = 'write' and result > 0 then result else 0 end) / 1e6, 3),
       sum(op = 'fsync'), round(avg(lat_us), 1), round(max(lat_us), 1)
from rec where type = 'op'
group by phase, trace order by min(min(rowid)) over (partition by phase), trace
"""


def load(db, iotap, path):
    global COLS
    name = os.path.basename(path)
    p = subprocess.Popen([iotap, "dump", path, "--csv"], stdout=subprocess.PIPE, text=True)
    rows = csv.reader(p.stdout)
    head = next(rows)
    if COLS is None:
        COLS = head
        text = {"type", "op", "error", "name", "dev"}
        db.execute("create table rec (trace text, phase text, %s)" % ", ".join(
            '"%s" %s' % (c, "text" if c in text else "numeric") for c in head))
    phase = ""
    ti, oi, ni = head.index("type"), head.index("op"), head.index("name")
    batch = []
    for r in rows:
        if r[ti] == "phase" and r[oi] == "begin":
            phase = r[ni]
        batch.append([name, phase] + r)
        if len(batch) >= 10000:
            db.executemany("insert into rec values (%s)" % ",".join("?" * (len(head) + 2)), batch)
            batch = []
    if batch:
        db.executemany("insert into rec values (%s)" % ",".join("?" * (len(head) + 2)), batch)
    if p.wait():
        sys.exit("traces-sql.py: iotap dump %s failed" % path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iotap", default=os.environ.get("IOTAP", "iotap"))
    ap.add_argument("--db", default=":memory:")
    ap.add_argument("traces", nargs="+")
    a = ap.parse_args()
    db = sqlite3.connect(a.db)
    for t in a.traces:
        load(db, a.iotap, t)
    db.commit()
    print("%-20s %-16s %9s %10s %10s %7s %10s %10s" % ("phase", "trace", "ops", "read_MB",
                                                       "write_MB", "fsyncs", "mean_us", "max_us"))
    for row in db.execute(QUERY):
        print("%-20s %-16s %9d %10.3f %10.3f %7d %10.1f %10.1f" % tuple(
            (x if x is not None else 0) for x in row))


if __name__ == "__main__":
    main()
