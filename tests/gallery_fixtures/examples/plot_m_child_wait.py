"""
Waits on a child that holds 600 MB
==================================

Runs a Python process that allocates 600 MB, 50 MB at a time, then sleeps for ten
minutes; the example waits for it in ``subprocess.run`` (blocked in ``waitpid``, where no
exception raised in Python can reach it). The child writes its pid to ``child_pids.txt``.
"""

import subprocess
import sys

code = (
    "import os, time\n"
    "open('child_pids.txt', 'w').write(str(os.getpid()))\n"
    "blocks = [bytearray(50 * 1024 * 1024) for _ in range(12)]\n"
    "time.sleep(600)\n"
)
subprocess.run([sys.executable, "-c", code])
print("child done")
