"""A module of the gallery folder that takes seconds to import (not an example)."""

import time

time.sleep(2.5)
READY = True
