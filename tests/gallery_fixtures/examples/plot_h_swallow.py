"""
Swallowed interruption
======================

Starts a process, then swallows every exception while it sleeps.
"""

import subprocess
import time

child = subprocess.Popen(["sleep", "612"])
with open("child_pids.txt", "a") as stream:
    stream.write(f"{child.pid}\n")
while True:
    try:  # noqa: SIM105 (the pattern of a real escape)
        time.sleep(10)
    except Exception:
        pass
