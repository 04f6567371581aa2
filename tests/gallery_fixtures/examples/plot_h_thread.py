"""
Leaves a thread running
=======================

A non-daemon thread that never stops: Python would wait for it forever at exit.
"""

import threading
import time


def spin():
    while True:
        time.sleep(0.2)


threading.Thread(target=spin, name="never-stops").start()
print("started a thread and returned")
