"""Scale-out: split a gallery over CI workers, execute each shard, merge without re-running.

- :mod:`docsaccel.shard.plan`: the shard plan from measured durations (``docsaccel shard``);
- :mod:`docsaccel.shard.roles`: the gallery plugin's side, a build that executes one
  shard's examples or merges shards executing none (``DOCSACCEL_SHARD_EXAMPLES``,
  ``DOCSACCEL_SHARD_RECORDS``);
- :mod:`docsaccel.shard.build`: executing a shard, keeping its outputs and merging the
  shards into a site (``docsaccel shard-build``, ``shard-merge``, ``shard-local``);
- :mod:`docsaccel.shard.sphinx_runs`: the ``sphinx-build`` processes those start, and how
  an interrupt stops them.

The planner's names are importable from here (it needs neither Sphinx nor
sphinx-gallery); the others are imported by name::

    from docsaccel.shard import plan_shards

    plan = plan_shards({"plot_a.py": 120.0, "plot_b.py": 30.0}, shards=2)
"""

# The planner's public names, listed once, in docsaccel.shard.plan.
from docsaccel.shard.plan import *  # noqa: F403
from docsaccel.shard.plan import __all__  # noqa: F401
