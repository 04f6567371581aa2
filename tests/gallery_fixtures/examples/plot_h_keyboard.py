"""
KeyboardInterrupt
=================

Raises KeyboardInterrupt itself, with no Ctrl-C.
"""

raise KeyboardInterrupt
