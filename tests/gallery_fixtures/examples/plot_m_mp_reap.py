"""
Lets multiprocessing reap the children that ended
=================================================

Allocates nothing and starts no process: asks ``multiprocessing`` for its live children,
which reaps those that ended, as starting a process does (memory_profiler's monitor at
each code block, with sphinx-gallery's ``show_memory``).
"""

import multiprocessing

print(len(multiprocessing.active_children()), "children alive")
