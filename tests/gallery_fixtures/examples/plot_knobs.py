"""
Knobs
=====

Picks its rollouts with the fast path.
"""

from docsaccel.fast import pick

rollouts = pick(full=4, fast=1, name="rollouts")
print("rollouts:", rollouts)
