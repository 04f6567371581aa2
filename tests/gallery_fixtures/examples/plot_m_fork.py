"""
Forks children that allocate
============================

Forks three children with ``os.fork`` (as a multiprocessing pool or a data loader's
workers do); each allocates and touches ``FORK_CHILD_MIB`` MiB of its own (50 unless
set), holds it a moment and exits. A forked child shares its parent's pages until one
of them writes: only what it allocates is new memory.
"""

import os
import time

import numpy as np

size = int(os.environ.get("FORK_CHILD_MIB", "50")) * 1024 * 1024
children = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        block = np.ones(size // 8)
        time.sleep(1.0)
        os._exit(0)
    children.append(pid)
for pid in children:
    os.waitpid(pid, 0)
print("children done")
