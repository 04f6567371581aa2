"""docsaccel: make Sphinx documentation with executed tutorials build fast, and keep it fast.

The parts and what they may import (``tests/test_gallery_units.py`` checks these rules):

- :mod:`docsaccel.contract`: the facts the parts share (statuses, settings, registry
  sections); it imports nothing of docsaccel, so every part can import it.
- :mod:`docsaccel.registry`: per-example facts published by what a tutorial uses and read
  by the gallery plugin; it imports only the contract.
- What a tutorial uses, :mod:`docsaccel.fast`, :mod:`docsaccel.render` and
  :mod:`docsaccel.video`, never imports the gallery plugin, the reports or sharding.
- The gallery plugin, :mod:`docsaccel.gallery`, never imports what a tutorial uses: the two
  meet through the registry and the contract (it names :mod:`docsaccel.video` to Sphinx
  as an extension, and imports the report views for its optional page).
- The reports (:mod:`docsaccel.report`) and sharding (:mod:`docsaccel.shard`) read the
  records and reports: :mod:`docsaccel.schema`, :mod:`docsaccel.budgets`.
- :mod:`docsaccel.headless`: pick a working headless OpenGL backend for MuJoCo.
"""

__version__ = "0.1.0"
