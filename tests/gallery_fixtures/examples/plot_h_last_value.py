"""
A traceback shown by hand
=========================

Leaves an exception in ``sys.last_value``, as code showing a traceback itself does.
"""

import sys

sys.last_value = ValueError("shown by the example, not raised")
print("left sys.last_value")
