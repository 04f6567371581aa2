"""
Peaks at 400 MB between two samples
===================================

Fills a 400 MiB buffer and lets it go within one statement: no sample of the memory
tripwire sees it, only the process's high-water mark does.
"""

print(len(b"\x01" * (400 * 1024 * 1024)))
