"""
Allocates 400 MB in one step
============================

Its last statement fills a 400 MiB buffer in one call and keeps it: its code has
returned before the memory tripwire's next sample, which can only come once the call is
over.
"""

print("allocating")
held = b"\x01" * (400 * 1024 * 1024)
