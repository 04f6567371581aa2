"""
Inline budget
=============

Sets its own budget in a config comment.
"""

# docsaccel_budget = "45s"
print("inline budget")
