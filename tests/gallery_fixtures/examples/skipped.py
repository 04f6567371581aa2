"""
Not run
=======

Not matched by filename_pattern, so sphinx-gallery shows it without running it.
"""

print("never printed")
