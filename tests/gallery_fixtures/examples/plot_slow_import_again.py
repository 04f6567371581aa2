"""
Same import
===========

Imports the module the previous example was interrupted after.
"""

import slow_module

assert slow_module.READY
print("imported again", slow_module.READY)
