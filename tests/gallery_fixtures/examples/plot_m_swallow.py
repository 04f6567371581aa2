"""
Grows, then ignores its interruption
====================================

Grows as ``plot_m_grow.py`` does until it is interrupted, then swallows every
interruption while holding on to what it allocated: only the hard stop ends it.
"""

import time

import numpy as np

blocks = []
interrupted = False
while True:
    try:
        if not interrupted:
            blocks.append(np.ones(20 * 1024 * 1024 // 8))
        time.sleep(0.005)
    except Exception:
        interrupted = True
