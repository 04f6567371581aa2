"""
Allocates 500 MB
================

Holds a touched 500 MB array while it runs, then lets it go.
"""

import numpy as np

block = np.ones(500 * 1024 * 1024 // 8)  # every page written: resident
print("allocated", block.nbytes)
del block
