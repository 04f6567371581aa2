"""
Hostile video name
==================

Writes a video whose file name holds reST and HTML.
"""

import imageio.v3 as iio
import numpy as np

NAME = "a `b`\n\n.. raw:: html\n\n   <img src=x onerror=alert(1)>\n\n.. <b>x & ..mp4"
frames = np.zeros((4, 16, 16, 3), np.uint8)
iio.imwrite("plain.mp4", frames, fps=4, codec="libx264", plugin="FFMPEG")
with open("plain.mp4", "rb") as source, open(NAME, "wb") as target:
    target.write(source.read())
