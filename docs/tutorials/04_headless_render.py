"""
Render a MuJoCo scene headless
==============================

docsaccel picks a working headless OpenGL backend (EGL, then OSMesa) before MuJoCo is
imported, so a docs build renders on a CI runner with no display. This page renders one
frame of gymnasium's HalfCheetah and shows it.
"""

import os

import gymnasium as gym
import matplotlib.pyplot as plt

print("MUJOCO_GL =", os.environ.get("MUJOCO_GL"))

env = gym.make("HalfCheetah-v5", render_mode="rgb_array", width=480, height=360)
env.reset(seed=0)
frame = env.render()
env.close()
print("frame:", frame.shape, frame.dtype)

fig, ax = plt.subplots(figsize=(4.8, 3.6))
ax.imshow(frame)
ax.set_axis_off()
plt.show()
