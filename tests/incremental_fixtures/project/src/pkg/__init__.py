"""A small package to document.

It gathers statistics, shapes and a tool.
"""

from pkg import base, shapes, stats, wrap
from pkg._impl import helper

__all__ = ["base", "helper", "shapes", "stats", "wrap"]
