"""
Never imports torch
===================

Says whether anything imported torch before it ran (the plugin must not).
"""

import sys

print("torch imported before:", "torch" in sys.modules)
