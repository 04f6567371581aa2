"""
Registers an exit handler that never returns
============================================

Python runs exit handlers after the build is done: this one would hold it for ten minutes.
"""

import atexit
import time

atexit.register(time.sleep, 600)
print("registered a slow exit handler")
