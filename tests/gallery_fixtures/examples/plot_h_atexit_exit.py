"""
An exit handler that ends the process
=====================================

Registers ``os._exit(0)`` as an exit handler (called from C, with no Python caller),
then raises SystemExit(0).
"""

import atexit
import os

atexit.register(os._exit, 0)
raise SystemExit(0)
