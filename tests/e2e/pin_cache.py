#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pin_cache.py READY FILE... - hold FILEs' pages in the page cache

Maps every FILE and locks the maps (mlockall, MCL_CURRENT | MCL_FUTURE:
each map is read in whole and its pages cannot be evicted), creates READY,
then waits for a signal. Kill it to let the pages go.

Why: the VMs these tests run on page cold page cache out. They run a
DAMON scheme (kdamond; /sys/kernel/mm/damon/admin/kdamonds/0: action
"pageout" on physical memory, for pages that are neither anonymous nor
mapped, in regions seen accessed in at most one of ten samples of 5 s,
for 60 s: a file read once is cold to it), so with 23 GB free and no
reclaim counted in /proc/vmstat, a tenth of a 22 MB file read a moment
before was gone 30 s later. A mapped page is not taken, an mlock'ed one
by no reclaim at all. A case that needs a file to stay cached holds it
with this (lib.sh's pin_cache).
"""
import ctypes
import mmap
import os
import signal
import sys

MCL_CURRENT, MCL_FUTURE = 1, 2


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: pin_cache.py READY FILE...")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.mlockall(MCL_CURRENT | MCL_FUTURE):
        sys.exit("pin_cache.py: mlockall: " + os.strerror(ctypes.get_errno()))
    maps = []
    for path in sys.argv[2:]:
        try:
            fd = os.open(path, os.O_RDONLY)
            if os.fstat(fd).st_size:
                maps.append(mmap.mmap(fd, 0, prot=mmap.PROT_READ))
            os.close(fd)
        except OSError as e:
            sys.exit("pin_cache.py: %s: %s" % (path, e.strerror))
    with open(sys.argv[1], "w"):
        pass
    signal.pause()


if __name__ == "__main__":
    main()
