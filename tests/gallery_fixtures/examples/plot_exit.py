"""
Exit
====

Takes its whole process down mid-run, as a crash in native code (a segfault) would.
"""

import os

os._exit(3)
