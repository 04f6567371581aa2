"""
Record a MuJoCo video without paying for dropped frames
=======================================================

A MuJoCo physics step costs a fraction of a millisecond; rendering a 480x360 frame
through software OpenGL costs tens of milliseconds. A video that keeps one frame in ``k``
still pays for all ``k`` if the environment renders on every step, which is what a
consumer that needs pixels every step (torchrl's ``GymWrapper(from_pixels=True)``, a
``VideoRecorder``) makes it do.

:class:`docsaccel.render.RenderEvery` renders fresh only the frames the video keeps and
hands out the last fresh frame otherwise. :class:`docsaccel.render.VideoFileRecorder`
shares its frame schedule and writes the kept frames with imageio. This page records
HalfCheetah twice, gated and ungated, measures both, and checks that every frame of the
video is exactly the frame the ungated run shows at that position.
"""

# %%
# The knobs
# ---------
# The full build records what a reader wants to watch; the CI fast path (see
# :doc:`03_fast_path`) runs the same code on a shorter rollout.

import time

import gymnasium as gym
import numpy as np

from docsaccel.fast import pick
from docsaccel.render import RenderEvery, VideoFileRecorder

episodes = pick(full=2, fast=1, name="episodes")
steps = pick(full=1000, fast=48, name="steps per episode")
KEEP_ONE_IN = 8  # the video keeps one frame in 8: HalfCheetah steps at 20 Hz
WIDTH, HEIGHT = 480, 360


def make_env():
    return gym.make("HalfCheetah-v5", render_mode="rgb_array", width=WIDTH, height=HEIGHT)


def gait(step):
    """A fixed open-loop gait, so every run takes the same actions."""
    return np.sin(0.45 * step + np.arange(6) * np.pi / 3).astype(np.float32)


# %%
# Record, gated
# -------------
# ``RenderEvery`` wraps the env; ``VideoFileRecorder`` takes the frames its schedule
# keeps (counted across episodes, resets included) and writes them at ``close()``. The
# mp4 lands next to this script, where the docs build finds it and embeds it below.

env = VideoFileRecorder(
    RenderEvery(make_env(), render_every=KEEP_ONE_IN), "cheetah_run.mp4", fps=10
)
gated = env.env  # the RenderEvery wrapper: its render_stats count what it did
started = time.perf_counter()
for episode in range(episodes):
    env.reset(seed=episode)
    for step in range(steps):
        env.step(gait(step))
video_frames = [frame.copy() for frame in env.frames]
env.close()
gated_seconds = time.perf_counter() - started
print(f"wrote {env.written[0].name}: {len(video_frames)} frames at {WIDTH}x{HEIGHT}")

# %%
# The same rollout, ungated
# -------------------------
# Without gating, a consumer that needs a frame every step renders every step; the video
# keeps the same positions as above.

ungated_env = make_env()
ungated_frames, ungated_renders, ungated_render_seconds = [], 0, 0.0
position = 0
started = time.perf_counter()
for episode in range(episodes):
    ungated_env.reset(seed=episode)
    for step in range(steps + 1):
        if step:
            ungated_env.step(gait(step - 1))
        position += 1
        before = time.perf_counter()
        frame = ungated_env.render()
        ungated_render_seconds += time.perf_counter() - before
        ungated_renders += 1
        if position % KEEP_ONE_IN == 0:
            ungated_frames.append(frame)
ungated_env.close()
ungated_seconds = time.perf_counter() - started

# %%
# What gating saved, and what it did not change
# ---------------------------------------------

stats = gated.render_stats
assert len(video_frames) == len(ungated_frames), "the video kept other positions"
identical = sum(np.array_equal(a, b) for a, b in zip(video_frames, ungated_frames, strict=True))
print(f"{'':14}{'render calls':>14}{'render s':>10}{'total s':>9}")
print(f"{'ungated':14}{ungated_renders:>14}{ungated_render_seconds:>10.2f}{ungated_seconds:>9.2f}")
print(f"{'gated':14}{stats.fresh_renders:>14}{stats.render_seconds:>10.2f}{gated_seconds:>9.2f}")
print(f"speedup: {ungated_seconds / gated_seconds:.1f}x")
print(f"video frames identical to the ungated run: {identical} of {len(video_frames)}")
assert identical == len(video_frames), "a kept frame differs from the ungated run"

# %%
# In your own tutorial
# --------------------
# Three lines change: wrap the env in ``RenderEvery``, record with ``VideoFileRecorder``
# (or bind torchrl's ``VideoRecorder``, see :doc:`02_torchrl_video`), and keep
# ``render_every`` equal to the video's skip. The statistics above also go into the
# example's record, and the *Build budget report* shows the seconds saved.
