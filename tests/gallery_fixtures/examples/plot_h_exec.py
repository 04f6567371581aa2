"""
Replacing the process
=====================

Replaces its process with another program that exits with status 0.
"""

import os
import sys

os.execv(sys.executable, [sys.executable, "-c", "pass"])
