"""
Exit
====

Calls sys.exit(0) in the middle of the gallery.
"""

import sys

sys.exit(0)
