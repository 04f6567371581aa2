"""
Own alarm handler
=================

Installs its own SIGALRM handler, then works on past its budget.
"""

import signal
import time

signal.signal(signal.SIGALRM, lambda signum, frame: None)
end = time.monotonic() + 600
while time.monotonic() < end:
    pass
