"""
Disarmed timer
==============

Disarms the interval timer, then works on past its budget.
"""

import signal
import time

signal.setitimer(signal.ITIMER_REAL, 0)
end = time.monotonic() + 600
while time.monotonic() < end:
    pass
