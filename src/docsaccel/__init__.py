"""docsaccel: make Sphinx documentation with executed tutorials build fast, and keep it fast.

Capabilities live in their own modules and do not import each other:

- :mod:`docsaccel.headless`: pick a working headless OpenGL backend for MuJoCo.
- :mod:`docsaccel.registry`: per-example facts shared by the gallery plugin and the rest.
- :mod:`docsaccel.schema`: the record and report formats.
"""

__version__ = "0.1.0"
