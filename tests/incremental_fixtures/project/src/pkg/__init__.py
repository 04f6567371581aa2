"""A small package to document.

It gathers statistics, shapes and a tool.
"""

from pkg._impl import helper
from pkg import base, shapes, stats, wrap

__all__ = ["base", "helper", "shapes", "stats", "wrap"]
