"""
Averaging
=========

The mean of a few numbers.
"""

from pkg.stats import mean

print(mean([1.0, 2.0, 3.0]))
