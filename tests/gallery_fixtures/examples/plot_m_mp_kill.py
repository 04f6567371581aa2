"""
Kills its multiprocessing child when stopped, and leaves it unreaped
====================================================================

Starts a ``multiprocessing`` child that touches 200 MiB and frees it (its high-water
mark stays), then grows until a memory limit stops it. Stopped, it kills the child and
leaves it for ``multiprocessing`` to reap later, as memory_profiler's monitor process is
left when the code it measures raises (sphinx-gallery's ``show_memory``). It waits until
the child has ended, so the child is never still running when the example ends.
"""

import multiprocessing
import os
import signal
import time

import numpy as np


def hold(ready):
    block = np.ones(200 * 1024 * 1024 // 8)
    del block
    ready.set()
    time.sleep(600)


def state(pid):
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0]


context = multiprocessing.get_context("fork")
ready = context.Event()
child = context.Process(target=hold, args=(ready,))
child.start()
ready.wait(60)
blocks = []
try:
    while len(blocks) < 100:
        blocks.append(np.ones(20 * 1024 * 1024 // 8))
        np.zeros(1)
except Exception:
    os.kill(child.pid, signal.SIGKILL)
    while state(child.pid) != "Z":
        time.sleep(0.01)
    raise
