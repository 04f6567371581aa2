"""
Replacing the process from a thread
===================================

A thread it starts replaces the process with a program that exits 0 while the example
waits.
"""

import os
import threading
import time

true = "/bin/true"
threading.Thread(target=lambda: os.execv(true, [true]), daemon=True).start()
time.sleep(30)
