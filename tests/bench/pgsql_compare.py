#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# pgsql_compare.py - the figures of tests/bench/pgsql-vs-postgres.sh
#
# usage: pgsql_compare.py TRACEDIR LOGDIR SCALE CLIENTS SEC RATE [WINDOW [SEQUENTIAL]]
#   TRACEDIR: `iotap dump` of real-data, real-wal (the PostgreSQL captures,
#   phases "init" and "bench" marked), model-data, model-wal (the model's
#   mounts, phase "bench" marked when its clients started) and model (its
#   own trace); LOGDIR: bench.out (pgbench), bench-pg.log (the server log
#   after the load), bench-t0 (the bench's start, epoch seconds),
#   model.out. WINDOW: seconds per latency window (default 10);
#   SEQUENTIAL: 1 when the model ran after PostgreSQL, not beside it.
import re, statistics, sys
from collections import Counter
from datetime import datetime, timezone

T, L, S, C, DUR, RATE = sys.argv[1:7]
WIN = float(sys.argv[7]) if len(sys.argv) > 7 else 10.0
SEQ = len(sys.argv) > 8 and sys.argv[8] == '1'

def load(path):
    ops, phases, names = [], [], {}
    for line in open(path):
        f = line.split()
        if len(f) < 4 or not re.match(r'^[0-9.]+$', f[0]):
            continue
        t = float(f[0])
        if f[3] == 'PHASE':
            m = re.search(r'name="([^"]*)"', line)
            phases.append((t, f[4], m.group(1) if m else ''))
        elif f[3] == 'NAME':
            m = re.search(r'file=(\d+).*name="([^"]*)"', line)
            if m:
                names[m.group(1)] = (t, m.group(2))
        elif len(f) >= 9 and f[5].isdigit() and f[6].isdigit():
            ops.append((t, f[3], f[4], int(f[5]), int(f[6]), int(f[7]), float(f[8]), line))
    return ops, phases, names

def window(phases, name):
    b = [t for t, k, n in phases if k == 'begin' and n == name]
    e = [t for t, k, n in phases if k == 'end' and n == name]
    return (b[0], e[-1]) if b and e else None

def first_create(ops, names, wanted):
    for o in ops:
        if o[1] == 'create' and names.get(o[2], (0, ''))[1] == wanted:
            return o[0]
    return None

def syncs(ops, w):
    """(time, latency ms) of the fdatasyncs in window w"""
    return [(t, lat / 1000) for t, op, f, off, ln, res, lat, line in ops
            if w[0] <= t <= w[1] and op == 'fsync' and 'flags=0x1' in line]

def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * q))] if v else 0

def stats(ops, w):
    s = Counter()
    rs, ws = Counter(), Counter()
    for t, op, f, off, ln, res, lat, line in ops:
        if not (w[0] <= t <= w[1]):
            continue
        if op == 'read':
            s['reads'] += 1; s['rbytes'] += max(res, 0); rs[ln] += 1
        elif op == 'write':
            s['writes'] += 1; s['wbytes'] += max(res, 0); ws[ln] += 1
            if ln < 262144:
                s['wsmall'] += max(res, 0)
        elif op == 'fsync':
            if 'flags=0x1' in line:
                s['fdatasync'] += 1
            else:
                s['fsync'] += 1
    dl = [l for t, l in syncs(ops, w)]
    s['p50'] = pct(dl, 0.5)
    s['p99'] = pct(dl, 0.99)
    return s, rs, ws

def grab(path, pat, cast=float):
    for line in open(path):
        m = re.search(pat, line)
        if m:
            return cast(m.group(1))
    return 0

real = {d: load(f'{T}/real-{d}.txt') for d in ('data', 'wal')}
model = {d: load(f'{T}/model-{d}.txt') for d in ('data', 'wal')}
mops, mph, mnames = load(f'{T}/model.txt')
off = first_create(model['data'][0], model['data'][2], 'PG_VERSION') - \
      first_create(mops, mnames, 'PG_VERSION')
steady = [t for t, k, n in mph if k == 'begin' and n in ('warmup', 'steady')]
mwin = {'bench': (steady[0] + off, mph[-1][0] + off),
        'init': tuple(x + off for x in window(mph, 'init'))}

tx_real = grab(f'{L}/bench.out', r'actually processed: (\d+)', int)
tx_model = grab(f'{L}/model.out', r'actually processed: (\d+)', int)
tps_real = grab(f'{L}/bench.out', r'^tps = ([0-9.]+)')
tps_model = grab(f'{L}/model.out', r'^tps = ([0-9.]+) \(including')
lat_real = grab(f'{L}/bench.out', r'latency average = ([0-9.]+) ms')
lat_model = grab(f'{L}/model.out', r'latency average = ([0-9.]+) ms')
init_model_s = grab(f'{L}/model.out', r'^done in ([0-9.]+) s')
bench_t0 = float(open(f'{L}/bench-t0').read())
dur = float(DUR)

# log_checkpoints: (start s from the bench's start, buffers, files synced) of the
# checkpoints completed within the bench (time- or WAL-started, not shutdown)
def ckpts_real():
    out, start = [], None
    for line in open(f'{L}/bench-pg.log'):
        m = re.match(r'(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+) UTC', line)
        if not m:
            continue
        ts = datetime.strptime(m.group(1), '%Y-%m-%d %H:%M:%S.%f').replace(
            tzinfo=timezone.utc).timestamp() - bench_t0
        if re.search(r'checkpoint starting: (time|wal)', line):
            start = ts
        m2 = re.search(r'checkpoint complete: wrote (\d+) buffers.*sync files=(\d+)', line)
        if m2 and start is not None:
            if 0 <= ts <= dur + 1:
                out.append((start, int(m2.group(1)), int(m2.group(2))))
            start = None
    return out

def ckpts_model():
    out, start = [], None
    for line in open(f'{L}/model.out'):
        m = re.search(r'checkpoint starting: \w+ \(at ([0-9.]+) s\)', line)
        if m:
            start = float(m.group(1)) - init_model_s
        m2 = re.search(r'checkpoint complete: wrote (\d+) buffers.*sync files=(\d+)', line)
        if m2 and start is not None:
            out.append((start, int(m2.group(1)), int(m2.group(2))))
            start = None
    return out

ck_real, ck_model = ckpts_real(), ckpts_model()

how = 'after it (sequential)' if SEQ else 'beside it, both benches at once'
print(f'pgbench -s {S} -c {C} -T {DUR} -R {RATE}: PostgreSQL 15 vs iotap run pgsql {how} '
      f'(ratio model/real; target within 15%, tps within 5%)')

def row(what, a, b, tol=0.15, note=''):
    r = b / a if a else (1.0 if not b else float('inf'))
    ok = 'ok' if abs(r - 1) <= tol else 'OFF'
    print(f'  {what:44s} {a:12.3f} {b:12.3f} {r:7.2f}  {ok}{note}')

def hist(c):
    n = sum(c.values())
    return ', '.join(f'{k // 1024}k {100 * v / n:.0f}%' for k, v in c.most_common(4)) if n else '-'

print(f'  {"":44s} {"postgres":>12s} {"model":>12s} {"ratio":>7s}')
row('tps', tps_real, tps_model, 0.05)
row('latency average, ms', lat_real, lat_model)
row('checkpoints completed in the bench', len(ck_real), len(ck_model))
row('files synced per checkpoint (log lines)',
    statistics.mean(x[2] for x in ck_real) if ck_real else 0,
    statistics.mean(x[2] for x in ck_model) if ck_model else 0)
row('buffers written per checkpoint',
    statistics.mean(x[1] for x in ck_real) if ck_real else 0,
    statistics.mean(x[1] for x in ck_model) if ck_model else 0)
for name, ck in (('postgres', ck_real), ('model', ck_model)):
    print(f'    {name:8s} checkpoints (start s from the bench start, buffers, files): ' +
          ('; '.join(f'{a:+.0f} s {b} {c}' for a, b, c in ck) or '-'))
for d in ('data', 'wal'):
    for ph in ('init', 'bench'):
        rw = window(real[d][1], ph)
        rs, rrs, rws = stats(real[d][0], rw)
        ms, mrs, mws = stats(model[d][0], mwin[ph])
        print(f' {d} directory, {ph}:')
        print(f'    write sizes  postgres: {hist(rws)}')
        print(f'                 model:    {hist(mws)}')
        print(f'    read sizes   postgres: {hist(rrs)}')
        print(f'                 model:    {hist(mrs)}')
        row('read/write op ratio', rs['reads'] / max(rs['writes'], 1),
            ms['reads'] / max(ms['writes'], 1))
        if ph == 'init':
            row('MB written', rs['wbytes'] / 1e6, ms['wbytes'] / 1e6)
            row('writes', rs['writes'], ms['writes'])
            row('reads', rs['reads'], ms['reads'])
            row('fsyncs + fdatasyncs', rs['fsync'] + rs['fdatasync'],
                ms['fsync'] + ms['fdatasync'])
            continue
        row('writes per transaction', rs['writes'] / tx_real, ms['writes'] / tx_model)
        row('reads per transaction', rs['reads'] / tx_real, ms['reads'] / tx_model)
        row('bytes written per transaction', rs['wbytes'] / tx_real, ms['wbytes'] / tx_model)
        if d == 'wal':
            row('  of it in writes under 256 KiB (commits)', rs['wsmall'] / tx_real,
                ms['wsmall'] / tx_model)
            row('fdatasyncs per transaction', rs['fdatasync'] / tx_real,
                ms['fdatasync'] / tx_model)
            row('fdatasync latency p50, ms', rs['p50'], ms['p50'])
            row('fdatasync latency p99, ms', rs['p99'], ms['p99'])
        else:
            row('fsyncs per checkpoint (trace)', rs['fsync'] / max(len(ck_real), 1),
                ms['fsync'] / max(len(ck_model), 1))

# commit latency per window of the bench: both WAL mounts' "bench" markers are
# the same instant (side by side), so window k of each saw the same machine
rb = window(real['wal'][1], 'bench')
mb = [t for t, k, n in model['wal'][1] if k == 'begin' and n == 'bench']
if rb and mb:
    rsy = syncs(real['wal'][0], rb)
    msy = syncs(model['wal'][0], (mb[0], mb[0] + dur))
    r50, r99 = [], []
    k = 0
    while (k + 1) * WIN <= dur:
        a = [l for t, l in rsy if rb[0] + k * WIN <= t < rb[0] + (k + 1) * WIN]
        b = [l for t, l in msy if mb[0] + k * WIN <= t < mb[0] + (k + 1) * WIN]
        if len(a) >= 20 and len(b) >= 20:
            r50.append(pct(b, 0.5) / pct(a, 0.5))
            r99.append(pct(b, 0.99) / pct(a, 0.99))
        k += 1
    if r50:
        print(f' fdatasync latency ratio model/real per {WIN:.0f} s window '
              f'({len(r50)} windows{", not simultaneous" if SEQ else ", simultaneous"}):')
        for what, v in (('p50', r50), ('p99', r99)):
            print(f'    {what}: median {statistics.median(v):.2f}, range '
                  f'{min(v):.2f}..{max(v):.2f}; ' + ' '.join(f'{x:.2f}' for x in v))
