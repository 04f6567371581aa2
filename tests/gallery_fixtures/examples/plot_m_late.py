"""
Grows, then more while its interruption lands
=============================================

Grows as ``plot_m_grow.py`` does until an exception stops it, then allocates 200 MiB
more before it lets the exception go on: a peak above the one it was stopped at.
"""

import numpy as np

blocks = []
try:
    while len(blocks) < 300:
        blocks.append(np.ones(20 * 1024 * 1024 // 8))
        np.zeros(1)
except BaseException:
    blocks.append(np.ones(200 * 1024 * 1024 // 8))
    raise
