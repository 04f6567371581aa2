"""
Gated rendering of TorchRL's own MuJoCo envs, macro actions included
====================================================================

TorchRL ships MuJoCo envs of its own (``AntEnv``, ``Walker2dEnv``, ``SatelliteEnv``, ...)
that render a ``"pixels"`` observation at every physics step when created with
``from_pixels=True``. A scripted policy built from *macro actions* makes this expensive:
one ``env.step`` of ``SatelliteAttitudeTransform(execute=True)`` runs dozens of
low-level steps, each rendered, while ``VideoRecorder(skip=8)`` keeps one frame in 8.

TorchRL's own ``render_every=8`` renders less, but its cadence restarts at every reset and
does not follow the recorder's counter, so the frames the video keeps are stale.
:func:`~docsaccel.render.bind_recorder` gates the env instead: it renders fresh exactly
the frames the recorder keeps, low-level steps included, and this page checks every kept
frame against an ungated run.
"""

# %%
# A scripted attitude policy
# --------------------------
# MuJoCo reads ``MUJOCO_GL`` when first imported, and importing torchrl imports it: pick a
# headless backend first, so this script also runs on its own on a machine with no display.

from docsaccel.headless import ensure_headless_gl

ensure_headless_gl()

import math
import tempfile
import time
from pathlib import Path

import imageio.v3 as iio
import torch
from torchrl.envs import Compose, SatelliteAttitudeTransform, SatelliteEnv, TransformedEnv
from torchrl.envs.utils import step_mdp
from torchrl.record import VideoRecorder

from docsaccel.fast import pick
from docsaccel.render import bind_recorder
from docsaccel.video import embed

slews = pick(full=8, fast=2, name="attitude slews")
steps_per_slew = pick(full=36, fast=12, name="low-level steps per slew")
SKIP = 8
log_dir = Path(tempfile.mkdtemp(prefix="docsaccel-native-"))


def attitude(axis, degrees):
    """The quaternion (w, x, y, z) of a rotation by ``degrees`` about ``axis``."""
    half = math.radians(degrees) / 2
    return torch.tensor([[math.cos(half), *(math.sin(half) * a for a in axis)]])


# The script: slew about the three body axes in turn, back and forth.
axes = [(0, 0, 1), (1, 0, 0), (0, 1, 0)]
targets = [attitude(axes[n % 3], 60 if n % 2 == 0 else -30) for n in range(slews)]

# %%
# The recorder sits between the macro action and the env, so it sees every low-level
# step; torchrl counts those in a copy of the recorder it makes for the macro action, and
# ``bind_recorder`` follows whichever copy steps the env.


def make_stack(mode: str):
    env = SatelliteEnv(
        backend="mujoco",
        seed=0,
        from_pixels=True,
        render_width=480,
        render_height=360,
        render_every=SKIP if mode == "torchrl render_every" else 1,
    )
    recorder = VideoRecorder(None, "satellite", skip=SKIP, make_grid=False)
    macro = SatelliteAttitudeTransform(execute=True, macro_steps=steps_per_slew, settle_steps=4)
    stack = TransformedEnv(env, Compose(recorder, macro))
    gates = bind_recorder(recorder, stack) if mode == "gated" else []
    return stack, recorder, gates


def record(mode: str):
    stack, recorder, gates = make_stack(mode)
    started = time.perf_counter()
    tensordict = stack.reset()
    for target in targets:
        tensordict["action"] = target
        tensordict = step_mdp(stack.step(tensordict))
    seconds = time.perf_counter() - started
    return list(recorder.obs), seconds, gates


gated_frames, gated_seconds, (gate,) = record("gated")
video = log_dir / "satellite_native.mp4"
# Recorder frames are (3, H, W); macro_block_size=2 keeps 480x360 as rendered.
frames = torch.stack(gated_frames).permute(0, 2, 3, 1).numpy()
iio.imwrite(video, frames, fps=10, codec="libx264", plugin="FFMPEG", macro_block_size=2)
embed(video)  # written outside this folder: ask the page to show it
print(f"{slews} slews, {gate.render_stats.frames} frames, {len(gated_frames)} kept")

# %%
# The same script without gating, and with TorchRL's own ``render_every``
# ------------------------------------------------------------------------

ungated_frames, ungated_seconds, _ = record("ungated")
torchrl_frames, torchrl_seconds, _ = record("torchrl render_every")

# %%
# Every kept frame is exact
# -------------------------


def identical(frames):
    assert len(frames) == len(ungated_frames), "the recorders kept different positions"
    return sum(torch.equal(a, b) for a, b in zip(frames, ungated_frames, strict=True))


exact = identical(gated_frames)
stats = gate.render_stats
print(f"renders: gated {stats.fresh_renders}, ungated {stats.frames}")
print(
    f"wall time: gated {gated_seconds:.2f} s, ungated {ungated_seconds:.2f} s "
    f"({ungated_seconds / gated_seconds:.1f}x), render time saved ~{stats.saved_seconds:.1f} s"
)
print(f"kept frames identical to the ungated run: {exact} of {len(ungated_frames)}")
print(
    f"with torchrl's render_every={SKIP} instead: "
    f"{identical(torchrl_frames)} of {len(ungated_frames)} identical"
)
assert exact == len(ungated_frames), "a kept frame differs from the ungated run"
