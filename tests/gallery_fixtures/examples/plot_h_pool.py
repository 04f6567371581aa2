"""
Restarting pool
===============

Starts processes that start more, and more while they are being ended: a ``spawn`` pool
(and its resource tracker) whose workers cannot read the function given to them (defined
here, not importable), so they end and the pool starts new ones, which wait for work that
never comes, and start again whenever one is ended; and a process that starts one of its
own. Each inherits a variable naming this folder, so a test can find every one of them.
Once the pool's new workers wait for work, waits as ``plot_wait.py`` does.
"""

import multiprocessing
import os
import subprocess
import sys
import time

os.environ["DOCSACCEL_TEST_STARTED_IN"] = os.getcwd()


def sq(x):
    return x * x


pool = multiprocessing.get_context("spawn").Pool(2)
first = {worker.pid for worker in multiprocessing.active_children()}
pending = pool.map_async(sq, range(4), chunksize=1)


def asleep(pid):
    """Whether ``pid`` sleeps (a worker waiting for work; a starting one seldom does)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "S"
    except OSError:
        return False


# Until both first workers were replaced and the new ones wait for work (asleep at each
# of several looks in a row).
idle = 0
replaced = time.monotonic() + 120  # a guard, not a timing
while idle < 10 and time.monotonic() < replaced:
    workers = {worker.pid for worker in multiprocessing.active_children()}
    waiting = not workers & first and len(workers) == 2 and all(map(asleep, workers))
    idle = idle + 1 if waiting else 0
    time.sleep(0.05)
grandparent = subprocess.Popen(
    [sys.executable, "-c", "import subprocess; subprocess.Popen(['sleep', '615']).wait()"]
)
with open("child_pids.txt", "a") as stream:
    stream.write(f"{grandparent.pid}\n")
start = time.monotonic()
while time.monotonic() - start < 8 or (
    os.path.exists("wait.hold") and time.monotonic() - start < 600
):
    time.sleep(0.05)
print("waited")
