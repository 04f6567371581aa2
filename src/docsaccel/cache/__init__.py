"""The example cache across builds: re-run only the examples whose inputs changed.

CI starts every docs build from a clean checkout, so sphinx-gallery's unchanged-example
skip never fires there. With ``docsaccel_cache = "path"`` in ``conf.py`` (or
``DOCSACCEL_CACHE=path``), the gallery plugin records, while each example runs, what it
depended on (its source, the project files and modules it used, the folders it listed,
the versions of the distributions it imported) and keeps its outputs, and the files it
wrote for later examples, in the cache folder. A later build, even
in a fresh copy of the project, restores an example's outputs instead of running it when
every one of those dependencies is unchanged, in the same build context (fast path,
Python, platform, the gallery settings that shape a page).

The parts, one module each:

- :mod:`.recorder`: watch a running example (audit listener, import wrapper, and the
  functions it runs: :mod:`.instrument` on 3.11, :mod:`.monitor` on 3.12+; the state it
  leaves in project modules: :mod:`.module_state`);
- :mod:`.fingerprint`: digests of files and of code pieces (:mod:`.pieces`: how a file
  splits; :mod:`.counting`: which pieces an example counts);
- :mod:`.deps`: from what was seen to the dependency list, and what changed in it;
- :mod:`.context`: the build context an entry belongs to;
- :mod:`.store`: the folder of entries, written atomically;
- :mod:`.cache_build`: lookup before sphinx-gallery runs, store after (the plugin's calls);
- :mod:`.manage`: ``docsaccel cache explain / stats / prune``.

In ``conf.py``: ``docsaccel_cache = "../.docsaccel-cache"`` turns it on, and
``docsaccel_cache_granularity = "function"`` (or ``"module"``) chooses the granularity.
"""
