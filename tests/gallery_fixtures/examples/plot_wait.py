"""
Wait
====

Starts a process, then waits long enough for a test to act while it runs.
"""

import subprocess
import time

child = subprocess.Popen(["sleep", "613"])
with open("child_pids.txt", "a") as stream:
    stream.write(f"{child.pid}\n")
time.sleep(8)
print("waited")
