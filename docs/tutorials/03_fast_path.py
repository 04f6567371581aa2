"""
Writing fast-path-aware tutorials
=================================

A tutorial should show a reader the real thing: enough episodes for a smooth curve, a
video long enough to watch. A CI build that checks every pull request needs none of that;
it needs the same code path, quickly. :func:`docsaccel.fast.pick` gives each setting that
can shrink a *full* and a *fast* value, and one switch for the whole build chooses:
``DOCSACCEL_FAST=1`` (what ``nox -s docs`` and ``make docs-fast`` set) or
``docsaccel_fast = True`` in ``conf.py``.

This page evaluates a random policy on gymnasium's CartPole. Built with the fast path,
the page starts with a note listing each knob with its fast and its full value, so a
reviewer of the CI preview knows what they are looking at. A full build shows no note.
"""

# %%
# Name the knobs
# --------------
# Each call returns the value for this build and records the knob, so the gallery
# plugin can write it into the example's record and onto the page.

from docsaccel.fast import is_fast, pick

episodes = pick(full=400, fast=40, name="episodes")
bins = pick(full=40, fast=10, name="histogram bins")
print(f"fast path: {is_fast()}, episodes: {episodes}, bins: {bins}")

# %%
# Same code path, smaller numbers
# -------------------------------
# Nothing below knows which build this is: the fast build runs every line the full build
# runs, so it catches the same breakage.

import gymnasium as gym
import matplotlib.pyplot as plt
import numpy as np

env = gym.make("CartPole-v1")
env.action_space.seed(0)
returns = []
for episode in range(episodes):
    env.reset(seed=episode)
    total, done = 0.0, False
    while not done:
        _, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        total += reward
        done = terminated or truncated
    returns.append(total)
env.close()
returns = np.array(returns)
print(f"mean return {returns.mean():.1f} +/- {returns.std():.1f} over {episodes} episodes")

fig, ax = plt.subplots(figsize=(6, 3.5))
ax.hist(returns, bins=bins, color="#3b7dd8")
ax.set_xlabel("episode return")
ax.set_ylabel("episodes")
ax.set_title(f"Random policy on CartPole-v1 ({episodes} episodes)")
fig.tight_layout()
plt.show()

# %%
# Run it as a plain script
# ------------------------
# Outside a docs build the environment variable alone decides, so the tutorial still runs
# on its own::
#
#     DOCSACCEL_FAST=1 python docs/tutorials/plot_fast_path.py
#
# Switching the fast path on or off re-runs the examples that picked knobs, even when
# their source did not change, so a page never shows the other build's values.
