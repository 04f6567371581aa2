"""
Child left running
==================

Starts a process and never stops it.
"""

import subprocess

child = subprocess.Popen(["sleep", "611"])
with open("child_pids.txt", "a") as stream:
    stream.write(f"{child.pid}\n")
print("started", child.pid)
