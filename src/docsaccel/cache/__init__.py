"""The example cache across builds: re-run only the examples whose inputs changed.

The design, in full: the caching guide's *Design* section.
"""
