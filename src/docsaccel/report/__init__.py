"""Budget reports of a docs build: read timings, check budgets, compare builds, keep history.

The design, in full: the reports guide's *Design* section.
"""
