"""
Wait
====

Starts a process, then waits long enough for a test to act while it runs: 8 seconds, or
for as long as a ``wait.hold`` file lies beside it (a test that stops the build while this
runs holds it, so a busy machine cannot let the example end first).
"""

import os
import subprocess
import time

child = subprocess.Popen(["sleep", "613"])
with open("child_pids.txt", "a") as stream:
    stream.write(f"{child.pid}\n")
start = time.monotonic()
while time.monotonic() - start < 8 or (
    os.path.exists("wait.hold") and time.monotonic() - start < 600
):
    time.sleep(0.05)
print("waited")
