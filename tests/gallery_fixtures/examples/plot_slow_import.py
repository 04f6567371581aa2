"""
Slow import
===========

Imports a module of its folder that takes longer than the budget to import.
"""

# docsaccel_budget = "1s"
import time

import slow_module

print("imported", slow_module.READY)
time.sleep(30)
