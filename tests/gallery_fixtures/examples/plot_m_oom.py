"""
Grows, then is killed
=====================

Grows as ``plot_m_grow.py`` does; when it is interrupted, it kills its own process with
SIGKILL, as the kernel's out-of-memory killer would: nothing runs after that.
"""

import os
import signal
import time

import numpy as np

blocks = []
try:
    while len(blocks) < 300:
        blocks.append(np.ones(20 * 1024 * 1024 // 8))
        time.sleep(0.005)
except Exception:
    os.kill(os.getpid(), signal.SIGKILL)
