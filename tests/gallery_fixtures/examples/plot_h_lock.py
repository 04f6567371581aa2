"""
Removes the output folder's lock
================================

Removes the lock file of the build writing into ``../_build/html``: a second build
locking a new file there would write into the folder beside this one.
"""

from pathlib import Path

from docsaccel import layout

layout.lock_path(Path("..", "_build", "html")).unlink()
print("lock removed")
