"""docsaccel: make Sphinx documentation with executed tutorials build fast, and keep it fast.

The parts sit in layers, and import only down (``tests/test_layout.py`` checks every
import, lazy ones included):

1. The facts every part shares: :mod:`docsaccel.contract` (statuses, budget rules,
   reading inputs), :mod:`docsaccel.settings` (every setting, declared once),
   :mod:`docsaccel.formats` (file headers, atomic writes), :mod:`docsaccel.layout` (the
   output folder), :mod:`docsaccel.registry` (facts about the running example); then
   :mod:`docsaccel.schema`, :mod:`docsaccel.budgets`, :mod:`docsaccel.headless`.
2. What a tutorial uses (:mod:`docsaccel.fast`, :mod:`docsaccel.render`,
   :mod:`docsaccel.video`), the report views (:mod:`docsaccel.report`), and every use of
   sphinx-gallery's internals (:mod:`docsaccel.sg_compat`).
3. The example model (:mod:`docsaccel.examples`) and the records
   (:mod:`docsaccel.records`).
4. The example cache (:mod:`docsaccel.cache`) and sharding (:mod:`docsaccel.shard`),
   which know nothing of the plugin; the cache's store loads no Sphinx.
5. The Sphinx plugin (:mod:`docsaccel.gallery`), which composes them: what a tutorial
   uses and the plugin meet through the registry, never by import.
6. The command line (:mod:`docsaccel.cli`).

No module registers a signal handler, an audit hook or an exit handler when imported.
"""

__version__ = "0.1.0"
