"""Scale-out: split a gallery over CI workers, execute each shard, merge without re-running.

The design, in full: the sharding guide's *Design* section.
"""

# The planner's public names, listed once, in docsaccel.shard.plan.
from docsaccel.shard.plan import *  # noqa: F403
from docsaccel.shard.plan import __all__  # noqa: F401
