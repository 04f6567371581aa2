"""docsaccel: make Sphinx documentation with executed tutorials build fast, and keep it fast.

The design, in full: the adopting guide's *Design* section.
"""

__version__ = "0.1.0"
