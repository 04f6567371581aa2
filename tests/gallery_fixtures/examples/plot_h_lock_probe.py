"""
Tries to lock the output folder
===============================

Does what a second build into ``../_build/html`` would do first: lock the folder.
"""

from pathlib import Path

from docsaccel.gallery.lock import LockedError, OutdirLock

second = OutdirLock(Path("..", "_build", "html"))
try:
    second.acquire()
except LockedError:
    verdict = "refused"
else:
    second.release()
    verdict = "let in"
print("second build:", verdict.upper())  # upper case: the page also shows the source
