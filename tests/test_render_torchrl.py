"""Render gating through torchrl: GymWrapper(from_pixels=True) + a bound VideoRecorder."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.render_streams import SEED, RenderCounter, action_plan, assert_same_frames, make_env

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")
from torchrl.envs import GymWrapper, SerialEnv, TransformedEnv  # noqa: E402
from torchrl.envs.utils import step_mdp  # noqa: E402
from torchrl.record import VideoRecorder  # noqa: E402

from docsaccel.render import RenderEvery, bind_recorder, gated_video_env  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("collect_closed_envs")]


def drive(env, recorder, plan, dump_after):
    """Run ``plan`` (actions per episode); dump after frame ``dump_after``; return kept frames.

    The frames of every dump (explicit or ``dump_on_done``) are kept, then the env closed.
    """
    kept, position = [], 0
    dump = recorder.dump

    def keep_then_dump(*args, **kwargs):
        kept.extend(recorder.obs)
        dump(*args, **kwargs)

    recorder.dump = keep_then_dump
    env.set_seed(SEED)
    for actions in plan:
        tensordict = env.reset()
        position += 1
        for action in actions:
            if position == dump_after:
                recorder.dump()
            tensordict["action"] = torch.as_tensor(np.asarray(action), dtype=torch.float32)
            tensordict = env.step(tensordict)
            position += 1
            done = tensordict["next", "done"].all()
            tensordict = step_mdp(tensordict)
            if done:
                break
    kept.extend(recorder.obs)
    env.close()
    return kept


def seeded_env(env_id):
    """A fresh env whose RNG is seeded, so the unseeded resets torchrl makes are reproducible.

    MuJoCo aims its camera at the state of the first render, which GymWrapper does at an
    unseeded reset: without a seed, two ungated runs would not match either.
    """
    env = make_env(env_id)
    env.reset(seed=SEED)
    return env


def single_env(env_id, skip, gate, **recorder_kwargs):
    counter = RenderCounter(seeded_env(env_id))
    if gate and skip is not None:
        env = gated_video_env(counter, skip=skip, **recorder_kwargs)
        return env, env.transform, counter
    recorder = VideoRecorder(None, "run", skip=skip, **recorder_kwargs)
    inner = RenderEvery(counter, render_every=4) if gate else counter
    env = TransformedEnv(GymWrapper(inner, from_pixels=True), recorder)
    if gate:
        bind_recorder(recorder, env)
    return env, recorder, counter


@pytest.mark.parametrize(
    ("env_id", "skip", "recorder_kwargs"),
    [
        ("HalfCheetah-v5", 5, {}),
        ("Ant-v5", 16, {}),
        ("Hopper-v5", None, {}),  # skip left at its default (2 for a single env)
        ("Hopper-v5", 3, {"dump_on_done": True}),
    ],
)
def test_bound_recorder_keeps_exact_frames(env_id, skip, recorder_kwargs):
    plan = action_plan(env_id)
    dump_after = len(plan[0]) // 2
    env, recorder, _ = single_env(env_id, skip, gate=False, **recorder_kwargs)
    reference = drive(env, recorder, plan, dump_after)
    env, recorder, counter = single_env(env_id, skip, gate=True, **recorder_kwargs)
    kept = drive(env, recorder, plan, dump_after)

    assert_same_frames(kept, reference)
    gated = env.base_env._env
    while not isinstance(gated, RenderEvery):
        gated = gated.env
    assert counter.render_calls <= len(kept) + gated.render_stats.resets
    assert gated.render_stats.reused_frames > 0


def batched_env(skip, gate):
    def make():
        env = seeded_env("HalfCheetah-v5")
        return GymWrapper(RenderEvery(env, render_every=3) if gate else env, from_pixels=True)

    recorder = VideoRecorder(None, "batch", skip=skip)
    env = TransformedEnv(SerialEnv(2, make), recorder)
    gated = bind_recorder(recorder, env) if gate else []
    return env, recorder, gated


@pytest.mark.parametrize("skip", [3, None])  # None: the default, 1 for batched envs
def test_batched_recorder_keeps_exact_frames(skip):
    plan = [[np.zeros((2, 6), np.float32) + 0.1 * step for step in range(14)]]
    env, recorder, _ = batched_env(skip, gate=False)
    reference = drive(env, recorder, plan, dump_after=7)
    env, recorder, gated = batched_env(skip, gate=True)
    kept = drive(env, recorder, plan, dump_after=7)

    assert len(gated) == 2
    assert_same_frames(kept, reference)
    reused = sum(gated_env.render_stats.reused_frames for gated_env in gated)
    assert (reused > 0) == (skip == 3)


def test_bind_recorder_needs_a_gated_env():
    env = TransformedEnv(GymWrapper(make_env("Hopper-v5"), from_pixels=True))
    with pytest.raises(ValueError, match="bind_recorder found nothing to gate inside"):
        bind_recorder(VideoRecorder(None, "run", skip=2), env)


def test_bind_recorder_needs_one_pixel_key():
    gated = RenderEvery(make_env("Hopper-v5"), render_every=2)
    recorder = VideoRecorder(None, "run", skip=2, in_keys=["pixels", "other"])
    with pytest.raises(ValueError, match=r"in_keys=\['pixels', 'other'\]"):
        bind_recorder(recorder, gated)


@pytest.mark.parametrize("skip", [0, -3, 2.5, "16", None, True])
def test_gated_video_env_rejects_bad_skip(skip):
    with pytest.raises(ValueError, match=rf"skip must be an int >= 1, got {skip!r}"):
        gated_video_env(make_env("Hopper-v5"), skip=skip)
