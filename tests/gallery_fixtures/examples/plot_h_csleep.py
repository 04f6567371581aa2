"""
Native sleep
============

Sleeps in C, where no Python bytecode runs.
"""

import ctypes

ctypes.CDLL(None).sleep(600)
