"""
Figure
======

Draws a matplotlib figure, which sphinx-gallery's scraper saves.
"""

import matplotlib.pyplot as plt

plt.plot([0, 1, 4])
plt.show()
