#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# pgsql_compare.py - the figures of tests/bench/pgsql-vs-postgres.sh
#
# usage: pgsql_compare.py TRACEDIR LOGDIR SCALE CLIENTS SEC RATE
#   TRACEDIR: `iotap dump` of real-data, real-wal (the PostgreSQL captures,
#   phases "init" and "bench" marked), model-data, model-wal (the model's
#   mounts) and model (its own trace); LOGDIR: bench.out (pgbench),
#   bench-pg.log (the server log during the bench), model.out.
import re, sys
from collections import Counter

T, L, S, C, DUR, RATE = sys.argv[1:7]

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

def stats(ops, w):
    s = Counter()
    rs, ws, dl = Counter(), Counter(), []
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
                s['fdatasync'] += 1; dl.append(lat)
            else:
                s['fsync'] += 1
    dl.sort()
    s['p50'] = dl[len(dl) // 2] / 1000 if dl else 0
    s['p99'] = dl[min(len(dl) - 1, int(len(dl) * 0.99))] / 1000 if dl else 0
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
ck_real = sum(1 for l in open(f'{L}/bench-pg.log') if 'checkpoint complete' in l)
ck_model = sum(1 for l in open(f'{L}/model.out') if 'checkpoint complete' in l)

print(f'pgbench -s {S} -c {C} -T {DUR} -R {RATE}: PostgreSQL 15 vs iotap run pgsql '
      f'(ratio model/real; target within 15%, tps within 5%)')
rows = []
def row(what, a, b, tol=0.15):
    r = b / a if a else (1.0 if not b else float('inf'))
    ok = 'ok' if abs(r - 1) <= tol else 'OFF'
    print(f'  {what:44s} {a:12.3f} {b:12.3f} {r:7.2f}  {ok}')

def hist(c):
    n = sum(c.values())
    return ', '.join(f'{k // 1024}k {100 * v / n:.0f}%' for k, v in c.most_common(4)) if n else '-'

print(f'  {"":44s} {"postgres":>12s} {"model":>12s} {"ratio":>7s}')
row('tps', tps_real, tps_model, 0.05)
row('latency average, ms', lat_real, lat_model)
row('checkpoints completed in the run', ck_real, ck_model)
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
        if ph == 'init':
            row('MB written', rs['wbytes'] / 1e6, ms['wbytes'] / 1e6)
            row('writes', rs['writes'], ms['writes'])
            row('reads', rs['reads'], ms['reads'])
            row('fsyncs + fdatasyncs', rs['fsync'] + rs['fdatasync'],
                ms['fsync'] + ms['fdatasync'])
            continue
        row('read/write op ratio', rs['reads'] / max(rs['writes'], 1),
            ms['reads'] / max(ms['writes'], 1))
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
            row('fsyncs per checkpoint', rs['fsync'] / max(ck_real, 1),
                ms['fsync'] / max(ck_model, 1))
