"""
SystemExit without exit handlers
================================

Removes the interpreter's exit handlers, then raises SystemExit(0).
"""

import atexit

atexit._clear()
raise SystemExit(0)
