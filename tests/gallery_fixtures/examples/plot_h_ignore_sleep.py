"""
Ignored alarm in a sleep
========================

Ignores SIGALRM, then sleeps: no signal can cut the sleep short.
"""

import signal
import time

signal.signal(signal.SIGALRM, signal.SIG_IGN)
time.sleep(600)
