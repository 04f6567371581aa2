"""
Deaf to stops
=============

Ignores Ctrl-C and sets its own SIGTERM handler, then finishes: what it changed must
not outlive it.
"""

import signal

signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, lambda signum, frame: None)
print("deaf")
