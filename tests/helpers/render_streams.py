"""Shared fixtures of the render gating tests: small MuJoCo envs, action plans, reference streams.

A *stream* is every frame a video consumer sees, in order: the frame after each reset and
after each step, across episodes. The reference stream renders all of them (no gating);
gated runs must keep byte-identical frames at the positions a recorder keeps.
"""

from __future__ import annotations

from collections.abc import Sequence

import gymnasium as gym
import numpy as np

WIDTH, HEIGHT = 64, 48
SEED = 11
# Two episodes of different lengths; an episode also ends early if the env terminates.
EPISODE_STEPS = (23, 37)


class RenderCounter(gym.Wrapper):
    """Counts the underlying ``render()`` calls, independently of docsaccel's own stats."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.render_calls = 0

    def render(self):
        self.render_calls += 1
        return self.env.render()


def make_env(env_id: str) -> gym.Env:
    return gym.make(env_id, render_mode="rgb_array", width=WIDTH, height=HEIGHT)


def action_plan(env_id: str, episode_steps: Sequence[int] = EPISODE_STEPS) -> list[list]:
    """Fixed actions per episode (seeded, so every run of a test sees the same ones)."""
    space = gym.make(env_id).action_space
    space.seed(SEED)
    return [[space.sample() for _ in range(steps)] for steps in episode_steps]


def drive(env: gym.Env, plan: list[list], on_frame=None) -> int:
    """Run ``plan`` on ``env``; call ``on_frame(position)`` after each reset and step.

    Positions count from 1 across episodes; returns the number of frames in the stream.
    """
    position = 0
    for episode, actions in enumerate(plan):
        env.reset(seed=SEED + episode)
        position += 1
        if on_frame:
            on_frame(position)
        for action in actions:
            _, _, terminated, truncated, _ = env.step(action)
            position += 1
            if on_frame:
                on_frame(position)
            if terminated or truncated:
                break
    return position


def reference_stream(env_id: str, plan: list[list]) -> list[np.ndarray]:
    """Every frame of the ungated stream, rendered by a plain env (index 0 = position 1)."""
    env = make_env(env_id)
    frames: list[np.ndarray] = []
    drive(env, plan, on_frame=lambda _position: frames.append(env.render()))
    env.close()
    return frames


def kept_positions(n_frames: int, every: int, dump_after: int | None = None) -> list[int]:
    """Positions a ``VideoRecorder(skip=every)`` keeps; a dump after ``dump_after`` resets it."""
    kept, count = [], 0
    for position in range(1, n_frames + 1):
        count += 1
        if count % every == 0:
            kept.append(position)
        if position == dump_after:
            count = 0
    return kept


def assert_identical(kept: Sequence[np.ndarray], reference: Sequence[np.ndarray]) -> None:
    assert len(kept) == len(reference)
    for index, (frame, expected) in enumerate(zip(kept, reference, strict=True)):
        assert frame.dtype == expected.dtype and frame.shape == expected.shape, index
        assert np.array_equal(frame, expected), f"kept frame {index} differs"


def assert_same_frames(kept, reference) -> None:
    """Two non-empty sequences of torch frames, equal frame by frame."""
    import torch

    assert len(kept) == len(reference) > 0
    for index, (frame, expected) in enumerate(zip(kept, reference, strict=True)):
        assert torch.equal(frame, expected), f"kept frame {index} differs"
