"""
Crash
=====

Raises an error.
"""

raise RuntimeError("this example crashes on purpose")
