"""A PE program that fails on purpose, for test_errors.py: ``die`` (PE 1 exits abruptly
while the others wait in a barrier), ``raise`` (PE 1 raises an uncaught exception), and
``mismatch`` (the PEs pass different sizes to one reduce, with RSHMEM_COLL_CHECK=1)."""

import os
import sys

import rshmem

mode = sys.argv[1]
rshmem.init()
me = rshmem.my_pe()
if mode == "die":
    if me == 1:
        os._exit(3)
    rshmem.barrier_all()
elif mode == "raise":
    if me == 1:
        raise RuntimeError("PE 1 gives up")
    rshmem.barrier_all()
elif mode == "mismatch":
    a = rshmem.array(8, "int64")
    b = rshmem.array(8, "int64")
    try:
        rshmem.reduce(rshmem.TEAM_WORLD, a[: 4 + 4 * me], b[: 4 + 4 * me])
        print(f"PE {me}: no error", flush=True)
    except rshmem.ArgumentError as e:
        print(f"PE {me}: {type(e).__name__}: {e} | call={e.call} arg={e.arg} pe={e.pe}", flush=True)
    rshmem.barrier_all()
print(f"PE {me}: reached the end", flush=True)
