"""
Leaks 200 MB
============

Leaves a 200 MB array on a module that outlives it.
"""

import json

import numpy as np

json.docsaccel_test_leak = np.ones(200 * 1024 * 1024 // 8)
print("left", json.docsaccel_test_leak.nbytes)
