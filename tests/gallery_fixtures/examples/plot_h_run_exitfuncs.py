"""
Exit handlers run early
=======================

Runs the interpreter's exit handlers in the middle of the build, then goes on.
"""

import atexit

atexit._run_exitfuncs()
print("still running")
