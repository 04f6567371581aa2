"""
Sleep
=====

Sleeps past a short budget, then finishes.
"""

import time

time.sleep(1.5)
print("slept")
