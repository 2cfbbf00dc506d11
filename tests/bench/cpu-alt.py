#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""cpu-alt.py - CPU and wall time of a few binaries run alternately

  tests/bench/cpu-alt.py RUNS 'ARGS' FILE NAME:BINARY[:VAR=VALUE,...] ...

Runs `BINARY ARGS FILE` (stdout to /dev/null) for each configuration in
turn, RUNS rounds, the order reversed every other round, so a machine
whose load drifts treats them alike; each child's user + system time
comes from wait4's rusage, which counts all its threads. VAR=VALUE pairs
are added to that configuration's environment (e.g.
IOTAP_READ_THREADS=2). Prints, per configuration, the median wall and CPU
time and their quartiles in ms. Example (BENCHMARKS.md, session 9):

  tests/bench/cpu-alt.py 15 report /var/tmp/rd/pg.iotap \\
      t1:build/tools/iotap:IOTAP_READ_THREADS=1 t2:build/tools/iotap:IOTAP_READ_THREADS=2

Exit status: 0, 1 when a run fails, 2 on bad usage.
"""
import os
import statistics
import sys
import time


def usage(msg):
    sys.stderr.write("cpu-alt.py: %s\n%s" % (msg, __doc__.split("\n\n")[1] + "\n"))
    sys.exit(2)


def main():
    if len(sys.argv) < 5:
        usage("need RUNS, ARGS, FILE and at least one configuration")
    try:
        runs = int(sys.argv[1])
    except ValueError:
        usage("RUNS must be a number: %r" % sys.argv[1])
    if runs < 1:
        usage("RUNS must be at least 1")
    args, path, cfgs = sys.argv[2].split(), sys.argv[3], []
    for c in sys.argv[4:]:
        parts = c.split(":", 2)
        if len(parts) < 2 or not parts[0] or not parts[1]:
            usage("configuration %r is not NAME:BINARY[:VAR=VALUE,...]" % c)
        env = dict(os.environ)
        for kv in filter(None, (parts[2] if len(parts) > 2 else "").split(",")):
            if "=" not in kv:
                usage("%r in %r is not VAR=VALUE" % (kv, c))
            k, v = kv.split("=", 1)
            env[k] = v
        if not os.access(parts[1], os.X_OK):
            usage("%s: not an executable" % parts[1])
        cfgs.append((parts[0], parts[1], env))
    res = {c[0]: ([], []) for c in cfgs}
    devnull = os.open(os.devnull, os.O_WRONLY)
    for i in range(runs):
        for name, binary, env in (cfgs if i % 2 == 0 else cfgs[::-1]):
            t0 = time.monotonic()
            pid = os.fork()
            if pid == 0:
                try:
                    os.dup2(devnull, 1)
                    os.execve(binary, [binary] + args + [path], env)
                finally:
                    os._exit(127)
            _, status, ru = os.wait4(pid, 0)
            t1 = time.monotonic()
            if status:
                sys.stderr.write("cpu-alt.py: %s %s %s failed (exit status %d)\n"
                                 % (binary, " ".join(args), path,
                                    os.waitstatus_to_exitcode(status)))
                sys.exit(1)
            res[name][0].append(t1 - t0)
            res[name][1].append(ru.ru_utime + ru.ru_stime)
    for name, _, _ in cfgs:
        wall, cpu = res[name]
        qw = statistics.quantiles(wall, n=4) if runs > 1 else [wall[0]] * 3
        qc = statistics.quantiles(cpu, n=4) if runs > 1 else [cpu[0]] * 3
        print("%-10s wall %.1f ms (%.1f-%.1f)  cpu %.1f ms (%.1f-%.1f)"
              % (name, statistics.median(wall) * 1e3, qw[0] * 1e3, qw[2] * 1e3,
                 statistics.median(cpu) * 1e3, qc[0] * 1e3, qc[2] * 1e3))


if __name__ == "__main__":
    main()
