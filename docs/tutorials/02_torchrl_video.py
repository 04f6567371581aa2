"""
Gated rendering through TorchRL's VideoRecorder
===============================================

The common TorchRL stack records a gymnasium MuJoCo env like this::

    recorder = VideoRecorder(logger, "run", skip=8)
    env = TransformedEnv(GymWrapper(gym_env, from_pixels=True), recorder)

``from_pixels=True`` renders on every step, and ``VideoRecorder(skip=8)`` keeps one frame
in 8: seven renders in eight are thrown away. TorchRL's own ``render_every`` (on its custom
``MujocoEnv``) restarts its cadence at every reset while the recorder keeps counting
across episodes and dumps, so the frames the video keeps are stale.

docsaccel binds :class:`~docsaccel.render.RenderEvery` to the recorder's own counter:
rendering follows the frames that recorder keeps, through resets, ``dump()`` and a
default ``skip``. :func:`~docsaccel.render.gated_video_env` builds the whole stack in one
call; here we build it by hand to read the gate's statistics, then check on this page
that every kept frame equals the frame of an ungated run.
"""

# %%
# Build the gated stack
# ---------------------
# MuJoCo reads ``MUJOCO_GL`` when first imported, and importing torchrl imports it: pick a
# headless backend first, so this script also runs on its own on a machine with no display
# (the docs build does this in ``conf.py``).

from docsaccel.headless import ensure_headless_gl

ensure_headless_gl()

import tempfile
import time
from pathlib import Path

import gymnasium as gym
import imageio.v3 as iio
import torch
from torchrl.envs import GymWrapper, TransformedEnv
from torchrl.record import VideoRecorder

from docsaccel.fast import pick
from docsaccel.render import RenderEvery, bind_recorder
from docsaccel.video import embed

episodes = pick(full=2, fast=1, name="episodes")
steps = pick(full=600, fast=32, name="steps per episode")
SKIP = 8
log_dir = Path(tempfile.mkdtemp(prefix="docsaccel-torchrl-"))


def make_gym_env():
    env = gym.make("HalfCheetah-v5", render_mode="rgb_array", width=480, height=360)
    # GymWrapper resets the env unseeded when it wraps it, and MuJoCo aims its camera at
    # the state of the first render: seed first, so both runs see the same scene.
    env.reset(seed=0)
    return env


def make_stack(gated: bool):
    # Ungated, render_every=1 is an exact pass-through that still counts the renders.
    gate = RenderEvery(make_gym_env(), render_every=SKIP if gated else 1)
    # No logger: the kept frames stay in recorder.obs (a torchrl logger would write them
    # at dump(); this page writes them with imageio below).
    recorder = VideoRecorder(None, "rollout", skip=SKIP)
    env = TransformedEnv(GymWrapper(gate, from_pixels=True), recorder)
    if gated:
        bind_recorder(recorder, env)  # rendering now follows recorder.count and recorder.skip
    return env, recorder, gate


# A fixed linear policy: the same states give the same actions in both runs.
weights = torch.linspace(-1.0, 1.0, 17 * 6).reshape(17, 6)


def policy(tensordict):
    action = torch.tanh(tensordict["observation"].to(torch.float32) @ weights)
    return tensordict.set("action", action)


def record(gated: bool):
    env, recorder, gate = make_stack(gated)
    env.set_seed(0)
    started = time.perf_counter()
    for _ in range(episodes):
        env.rollout(steps, policy=policy)
    kept = [frame.clone() for frame in recorder.obs]
    seconds = time.perf_counter() - started
    env.close()
    return kept, seconds, gate


gated_frames, gated_seconds, gate = record(gated=True)
video = log_dir / "cheetah_torchrl.mp4"
# macro_block_size=2: keep 480x360 as rendered (H.264 only needs even sizes).
# The recorder keeps channels first (3, H, W); a video file wants (frames, H, W, 3).
frames = torch.stack(gated_frames).permute(0, 2, 3, 1).numpy()
iio.imwrite(video, frames, fps=10, codec="libx264", plugin="FFMPEG", macro_block_size=2)
embed(video)  # written outside this folder: ask the page to show it
print(f"{len(gated_frames)} frames kept, written to {video.name}")

# %%
# The same rollouts without gating
# --------------------------------

ungated_frames, ungated_seconds, ungated_gate = record(gated=False)

# %%
# Every kept frame is exact
# -------------------------

assert len(gated_frames) == len(ungated_frames), "the recorders kept different positions"
identical = sum(torch.equal(a, b) for a, b in zip(gated_frames, ungated_frames, strict=True))
print(
    f"render calls: gated {gate.render_stats.fresh_renders}, "
    f"ungated {ungated_gate.render_stats.fresh_renders}"
)
print(
    f"wall time: gated {gated_seconds:.2f} s, ungated {ungated_seconds:.2f} s "
    f"({ungated_seconds / gated_seconds:.1f}x)"
)
print(f"kept frames identical to the ungated run: {identical} of {len(ungated_frames)}")
assert identical == len(ungated_frames), "a kept frame differs from the ungated run"
