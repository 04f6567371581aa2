"""
Grows without bound
===================

Allocates 20 MB more every few milliseconds; it stops by itself only at 6 GB, so that a
test it escapes still ends.
"""

import time

import numpy as np

blocks = []
while len(blocks) < 300:
    blocks.append(np.ones(20 * 1024 * 1024 // 8))
    time.sleep(0.005)
print("grew to", sum(block.nbytes for block in blocks))
