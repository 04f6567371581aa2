"""
A child process allocates 300 MB
================================

Runs a Python process that holds a touched 300 MB array for a moment.
"""

import subprocess
import sys

code = "import numpy, time; a = numpy.ones(300 * 1024 * 1024 // 8); time.sleep(0.5)"
subprocess.run([sys.executable, "-c", code], check=True)
print("child done")
