"""
Quick
=====

Finishes at once.
"""

print("quick done")
