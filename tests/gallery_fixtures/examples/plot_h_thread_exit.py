"""
Process exit from a thread
==========================

A thread it starts ends the process with status 0 while the example waits.
"""

import os
import threading
import time

threading.Thread(target=lambda: os._exit(0), daemon=True).start()
time.sleep(30)
