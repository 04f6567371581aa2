"""Render gating of torchrl's own MuJoCo envs (MujocoEnv and its family) under a VideoRecorder.

Every test runs the same rollout twice, ungated and gated, each with its own
``VideoRecorder``, and compares the frames the two recorders kept, byte for byte.
"""

from __future__ import annotations

import pytest
from helpers.render_streams import assert_same_frames

torch = pytest.importorskip("torch")
pytest.importorskip("torchrl")
from torchrl.envs import (  # noqa: E402
    AntEnv,
    Compose,
    MultiAction,
    ParallelEnv,
    SatelliteAttitudeTransform,
    SatelliteEnv,
    SerialEnv,
    TransformedEnv,
    Walker2dEnv,
)
from torchrl.envs.utils import step_mdp  # noqa: E402
from torchrl.record import VideoRecorder  # noqa: E402

from docsaccel import registry  # noqa: E402
from docsaccel.render import bind_recorder, gated_video_env, torchrl_compat  # noqa: E402
from docsaccel.render.native import NativeRenderGate, native_gate  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("collect_closed_envs")]

# Small frames: a MuJoCo render costs about the same at any size here, fewer pixels
# only make comparing them cheaper.
WIDTH, HEIGHT = 32, 24
SEED = 7


def make_native(cls, **kwargs):
    """One of torchrl's MuJoCo envs, small frames, seeded reset noise."""
    return cls(
        backend="mujoco",
        from_pixels=True,
        render_width=WIDTH,
        render_height=HEIGHT,
        seed=SEED,
        **kwargs,
    )


def count_renders(env):
    """Count the renders the env's physics backend really makes (a list of one int).

    Independent of docsaccel's own statistics: wraps this one backend object's render.
    """
    backend = env._backend
    render, calls = backend.render, [0]

    def counted(**kwargs):
        calls[0] += 1
        return render(**kwargs)

    backend.render = counted
    return calls


def action_plan(env, episode_steps):
    """Seeded actions within the env's bounds, one list per episode (same for every run)."""
    generator = torch.Generator().manual_seed(SEED)
    spec = env.action_spec
    low, high = spec.space.low, spec.space.high
    return [
        [low + (high - low) * torch.rand(spec.shape, generator=generator) for _ in range(steps)]
        for steps in episode_steps
    ]


def drive(env, recorder, plan):
    """Run each episode of ``plan`` from a reset, ``dump()`` between episodes; return kept frames.

    An episode also ends early when the env is done.
    """
    kept = []
    for episode, actions in enumerate(plan):
        if episode:
            kept.extend(recorder.obs)
            recorder.dump()
        tensordict = env.reset()
        for action in actions:
            tensordict["action"] = action
            tensordict = env.step(tensordict)
            done = tensordict["next", "done"].all()
            tensordict = step_mdp(tensordict)
            if done:
                break
    kept.extend(recorder.obs)
    return kept


@pytest.mark.parametrize("skip", [3, 16])
@pytest.mark.parametrize("env_class", [AntEnv, Walker2dEnv, SatelliteEnv])
def test_native_env_keeps_exact_frames(env_class, skip):
    # Two episodes long enough for the recorder to keep a few frames of each.
    episode_steps = (2 * skip + 2, 2 * skip + 8)

    env = make_native(env_class)
    ungated_renders = count_renders(env)
    recorder = VideoRecorder(None, "ungated", skip=skip)
    plan = action_plan(env, episode_steps)
    reference = drive(TransformedEnv(env, recorder), recorder, plan)

    env = make_native(env_class)
    renders = count_renders(env)
    if env_class is SatelliteEnv:  # the one-call form
        recorded = gated_video_env(env, skip=skip)
        recorder = recorded.transform
        gate = native_gate(env)
    else:
        recorder = VideoRecorder(None, "gated", skip=skip)
        recorded = TransformedEnv(env, recorder)
        (gate,) = bind_recorder(recorder, recorded)
    kept = drive(recorded, recorder, plan)

    assert_same_frames(kept, reference)
    assert isinstance(gate, NativeRenderGate)
    stats = gate.render_stats
    assert stats.frames == ungated_renders[0]
    assert renders[0] == stats.fresh_renders <= len(kept) + stats.resets
    assert stats.reused_frames == stats.frames - stats.fresh_renders > 0
    assert stats.resets == len(episode_steps)
    published = registry.snapshot()[registry.RENDER_SECTION][gate.stats_label]
    assert published["fresh_renders"] == stats.fresh_renders
    assert published["render_every"] == skip


def batched_env(gate):
    """Two AntEnv with different horizons: the rollout resets one while the other runs on."""

    def make(horizon):
        return lambda: make_native(AntEnv, max_episode_steps=horizon)

    env = SerialEnv(2, [make(5), make(8)])
    recorder = VideoRecorder(None, "batch", skip=3)
    recorded = TransformedEnv(env, recorder)
    gates = bind_recorder(recorder, recorded) if gate else []
    return recorded, recorder, gates


def test_batch_with_partial_resets_keeps_exact_frames():
    runs = []
    for gate in (False, True):
        env, recorder, gates = batched_env(gate)
        torch.manual_seed(SEED)  # the rollout's random actions
        first = env.rollout(11, break_when_any_done=False)
        kept = list(recorder.obs)
        recorder.dump()
        env.rollout(7, break_when_any_done=False)
        kept.extend(recorder.obs)
        env.close()
        runs.append((kept, gates, first))

    (reference, _, first), (kept, gates, _) = runs
    done = first["next", "done"].squeeze(-1)
    assert (done[0] != done[1]).any(), "the rollout never reset one env alone"
    assert_same_frames(kept, reference)
    assert len(gates) == 2
    for gate in gates:
        assert gate.render_stats.reused_frames > 0
        assert gate.render_stats.resets > 2


def macro_env(kind, gate):
    """The recorder between a macro action and the env, so it sees every low-level step."""
    if kind == "satellite-attitude":
        base = make_native(SatelliteEnv)
        macro = SatelliteAttitudeTransform(execute=True, macro_steps=4, settle_steps=1)
    else:
        base = make_native(AntEnv)
        macro = MultiAction()
    recorder = VideoRecorder(None, kind, skip=3)
    env = TransformedEnv(base, Compose(recorder, macro))
    gates = bind_recorder(recorder, env) if gate else []
    return env, recorder, gates


def macro_actions(env, kind, outer_steps):
    generator = torch.Generator().manual_seed(SEED)
    if kind == "satellite-attitude":  # target attitudes (random quaternions)
        return [torch.randn(1, 4, generator=generator) for _ in range(outer_steps)]
    # Chunks of 4 low-level actions, executed one after the other by MultiAction.
    return [torch.rand(1, 4, 8, generator=generator) * 2 - 1 for _ in range(outer_steps)]


@pytest.mark.parametrize("kind", ["satellite-attitude", "ant-multiaction"])
def test_macro_actions_keep_exact_frames(kind):
    runs = []
    for gate in (False, True):
        env, recorder, gates = macro_env(kind, gate)
        plan = [macro_actions(env, kind, 3), macro_actions(env, kind, 2)]
        runs.append((drive(env, recorder, plan), gates))

    (reference, _), (kept, gates) = runs
    # The recorder kept more frames than the outer steps alone give: its copy inside the
    # macro action counted the low-level steps.
    assert len(reference) > (1 + 3) // 3 + (1 + 2) // 3
    assert_same_frames(kept, reference)
    (gate,) = gates
    assert 0 < gate.render_stats.fresh_renders < gate.render_stats.frames


def test_gating_is_per_instance():
    gated = make_native(AntEnv)
    recorder = VideoRecorder(None, "run", skip=4)
    bind_recorder(recorder, TransformedEnv(gated, recorder))
    other = make_native(AntEnv)

    assert type(other) is AntEnv and native_gate(other) is None
    assert type(gated) is not AntEnv and isinstance(gated, AntEnv)
    assert type(gated).__name__ == "AntEnv"
    assert type(recorder) is not VideoRecorder and isinstance(recorder, VideoRecorder)
    assert type(VideoRecorder(None, "other")) is VideoRecorder


def test_rebinding_keeps_one_gate():
    env = make_native(AntEnv)
    first = VideoRecorder(None, "first", skip=2)
    (gate,) = bind_recorder(first, TransformedEnv(env, first))
    second = VideoRecorder(None, "second", skip=5)
    (again,) = bind_recorder(second, env)
    assert again is gate and gate.schedule.recorder is second


def test_rejects_env_without_pixels():
    recorder = VideoRecorder(None, "run", skip=2)
    env = TransformedEnv(AntEnv(backend="mujoco"), recorder)
    with pytest.raises(ValueError, match=r"AntEnv was created with from_pixels=False"):
        bind_recorder(recorder, env)


def test_rejects_recorder_with_several_keys():
    recorder = VideoRecorder(None, "run", skip=2, in_keys=["pixels", "other"])
    with pytest.raises(ValueError, match=r"in_keys=\['pixels', 'other'\]"):
        bind_recorder(recorder, make_native(AntEnv))


@pytest.mark.parametrize("backend", ["mujoco-torch", "mjx"])
def test_rejects_unchecked_backend(backend):
    # Those backends need packages (mujoco_torch, jax) this project does not install, so
    # the env is created with "mujoco" and reports another backend, as one of them would.
    env = make_native(AntEnv)
    env.backend_name = backend
    with pytest.raises(ValueError, match=rf"AntEnv\(backend='{backend}'\): render gating"):
        gated_video_env(env, skip=4)
    assert native_gate(env) is None and type(env) is AntEnv


def test_rejects_torchrl_render_every():
    env = make_native(AntEnv, render_every=16)
    with pytest.raises(ValueError, match="created with render_every=16"):
        gated_video_env(env, skip=16)


def test_rejects_parallel_batches():
    # What AntEnv(backend="mujoco", num_envs=2) builds, left unstarted.
    env = ParallelEnv(2, make_native, create_env_kwargs={"cls": AntEnv})
    recorder = VideoRecorder(None, "run", skip=2)
    with pytest.raises(ValueError, match="parallel=False"):
        bind_recorder(recorder, TransformedEnv(env, recorder))
    assert env.is_closed


def test_rejects_pixels_only_for_a_torchrl_env():
    with pytest.raises(ValueError, match="create it with pixels_only=True"):
        gated_video_env(make_native(AntEnv), skip=4, pixels_only=True)


@pytest.mark.parametrize("version", ["0.13.2", "0.15.0", "1.14.1"])
def test_rejects_unchecked_torchrl_version(version):
    with pytest.raises(RuntimeError, match=rf"torchrl {version} is installed"):
        torchrl_compat.check_torchrl_version(version)
    assert torchrl_compat.check_torchrl_version("0.14.1+cpu") == "0.14.1+cpu"
