"""
Loop
====

Never finishes on its own.
"""

# docsaccel_budget = "2s"
while True:
    pass
