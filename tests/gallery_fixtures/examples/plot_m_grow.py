"""
Grows without bound
===================

Allocates 20 MiB more every few milliseconds, noting the time and its resident memory at
each step in ``grow_trace.txt``, and the time an exception stopped it. It stops by itself
only at 6 GiB, so that a test it escapes still ends.
"""

import os
import time

import numpy as np

page = os.sysconf("SC_PAGE_SIZE")
blocks = []
with open("grow_trace.txt", "w") as trace:
    try:
        while len(blocks) < 300:
            blocks.append(np.ones(20 * 1024 * 1024 // 8))
            with open("/proc/self/statm") as stream:
                resident = int(stream.read().split()[1]) * page
            trace.write(f"{time.monotonic()} {resident}\n")
            trace.flush()
            time.sleep(0.005)
    except BaseException:
        trace.write(f"{time.monotonic()} stopped\n")
        raise
print("grew to", sum(block.nbytes for block in blocks))
