"""
Process exit
============

Ends its process with os._exit(1).
"""

import os

os._exit(1)
