#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""report-split.py - where `iotap report` spends its analysis instructions, per record

    IOTAP_READ_THREADS=1 valgrind --tool=callgrind --callgrind-out-file=cg.out \\
        iotap report CAPTURE > /dev/null
    callgrind_annotate --auto=yes --show-percs=no cg.out > cg.ann
    tests/bench/report-split.py cg.ann RECORDS

Sums the annotated instruction counts of the analysis' sources
(tools/analysis/, trace/base/hist.c, the inline parts of iotap_base.h) by
the source function each line is in, so code the compiler inlined into the
record loop still counts where it was written, and calls from those lines
into libraries (malloc, memset, xxhash) count with their caller; then
divides by RECORDS (`iotap info CAPTURE`'s "records"). The trace layer
(decode, sort, delivery, join) is not counted. Annotate with the sources
the binary was built from: callgrind_annotate reads them from the paths in
its debug information. The groups are the report's stages:
"""
import re
import sys

OURS = ('tools/analysis/', 'trace/base/hist.c', 'trace/base/include/iotap_base.h')
# (label, patterns): "file.c:func" (file and function prefix) or "func" (any file)
GROUPS = [
    ('engine: on_op, in-flight heap, on_sample, record loop',
     ['report.c:on_op', 'report.c:inflight_at', 'report.c:on_sample', 'report.c:report_build',
      'report.c:set_max_end', 'report.c:wbfail_note', 'report.c:on_phase',
      'report.c:new_phase', 'report.c:close_phase']),
    ('pstats_add_op (with size bucket, thread slot)',
     ['pstats_add_op', 'stat.h:tid_slot', 'pstats_size_bucket', 'size_bucket',
      'pstats_is_data_op', 'pstats_lat_alloc']),
    ('latency histogram add (iotap_hist_add, _index)',
     ['iotap_base.h:iotap_hist_add', 'iotap_base.h:iotap_hist_index']),
    ('time series (series_add_op, bins, fold)', ['stat_series.c:', 'stat.h:series_']),
    ('seek map (seek_map_update, hash map)',
     ['seek_map_update', 'iotap_base.h:iotap_map', 'iotap_base.h:iotap_hash', 'xxhash']),
    ('blocks into phases (end_block, phase_auto, pstats_merge/clear, hist merge/clear)',
     ['report.c:end_block', 'phase_auto.c:', 'stat_phase.c:', 'hist.c:', 'report.c:enter_marks',
      'report.c:finish', 'report.c:number_repeats', 'report.c:fold_unmarked']),
    ('application figures (app_feed)', ['app']),
    ('seek-map points', ['stat_points.c:']),
]
FDEF = re.compile(r'^(?:__attribute__\(\([^)]*\)\)\s+)?(?:[a-z_0-9]+\s+)+\**([a-z_0-9]+)\(')


def split(ann):
    cur, func, tot = None, '?', {}
    for raw in open(ann, errors='replace'):
        if raw.startswith('The following files chosen') or 'events annotated' in raw:
            cur = None
            continue
        m = re.match(r'-- Auto-annotated source: (.*)', raw)
        if m:
            cur = m.group(1) if any(o in m.group(1) for o in OURS) else None
            func = '?'
            continue
        if cur is None or raw.startswith('-- line'):
            continue
        m = re.match(r'^\s*([0-9,]+|\.)\s(.*)$', raw.rstrip('\n'))
        if not m:
            continue
        cnt, text = m.group(1), m.group(2)
        src = text[1:] if text.startswith(' ') else text
        key = None
        if text.lstrip().startswith('=>'):
            callee = text.split('=>')[1].strip()
            # calls into annotated sources count there; into libraries, here
            if '/work/' in callee and any(o in callee for o in OURS + ('trace/', 'tools/')):
                continue
            if cnt == '.':
                continue
            key = 'xxhash' if 'XXH' in callee or 'xxhash' in callee else None
        else:
            fm = FDEF.match(src) if src[:1] not in (' ', '\t') else None
            if fm:
                func = fm.group(1)
            if cnt == '.':
                continue
        key = key or cur.split('/')[-1] + ':' + func
        tot[key] = tot.get(key, 0) + int(cnt.replace(',', ''))
    return tot


def matches(key, pat):
    if ':' in pat or pat == 'xxhash':
        return key.startswith(pat) or ('/' + pat) in key or key == pat or \
            (':' in pat and key.split(':')[0] == pat.split(':')[0] and
             key.split(':')[1].startswith(pat.split(':')[1]))
    return key.split(':')[-1].startswith(pat)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    tot, recs = split(sys.argv[1]), int(sys.argv[2])
    left, total = dict(tot), 0
    for label, pats in GROUPS:
        s = sum(left.pop(k) for k in [k for k in left if any(matches(k, p) for p in pats)])
        total += s
        print(f"{s / recs:8.1f}  {label}")
    print(f"{total / recs:8.1f}  analysis, all")
    for k, v in sorted(left.items(), key=lambda x: -x[1]):
        if v / recs >= 0.5:
            print(f"          (not in a group: {k} {v / recs:.1f})")


if __name__ == '__main__':
    main()
