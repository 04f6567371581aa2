"""
Allocates 500 MB
================

Holds a touched 500 MiB array for a moment (several of the memory tripwire's samples,
however busy the machine), then lets it go. Notes its process's resident memory just
before, for the test that checks the recorded peak.
"""

import os
import time

import numpy as np

with open("/proc/self/statm") as stream:
    resident = int(stream.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
with open("alloc_rss_before.txt", "w") as stream:
    stream.write(str(resident))
block = np.ones(500 * 1024 * 1024 // 8)  # every page written: resident
print("allocated", block.nbytes)
time.sleep(0.5)
del block
