"""
A short video
=============

Writes an mp4 whose length follows the fast path.
"""

import imageio.v3 as iio
import numpy as np

from docsaccel.fast import pick

frames_count = pick(full=24, fast=8, name="frames")
frames = np.zeros((frames_count, 48, 64, 3), np.uint8)
for i in range(frames_count):
    frames[i, :, (i * 4) % 56 : (i * 4) % 56 + 8] = (255, 0, 0)
iio.imwrite("short_video.mp4", frames, fps=8, codec="libx264", plugin="FFMPEG")
