"""Render gating on the gymnasium path: RenderEvery, VideoFileRecorder, statistics."""

from __future__ import annotations

import subprocess
import sys
from functools import cache
from typing import ClassVar

import gymnasium as gym
import imageio.v3 as iio
import numpy as np
import pytest
from helpers.render_streams import (
    RenderCounter,
    action_plan,
    assert_identical,
    drive,
    kept_positions,
    make_env,
    reference_stream,
)

from docsaccel import registry
from docsaccel.render import FrameSchedule, RenderEvery, VideoFileRecorder

pytestmark = pytest.mark.slow

ENV_IDS = ("HalfCheetah-v5", "Hopper-v5", "Ant-v5")


@cache
def reference(env_id: str) -> tuple[list, list]:
    plan = action_plan(env_id)
    return plan, reference_stream(env_id, plan)


@pytest.mark.parametrize("every", [2, 5, 16])
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_recorded_frames_are_exact_through_a_dump(env_id, every, tmp_path):
    plan, stream = reference(env_id)
    dump_after = len(stream) // 2 + 1
    counter = RenderCounter(make_env(env_id))
    recorder = VideoFileRecorder(RenderEvery(counter, render_every=every), tmp_path / "run.gif")
    kept = []

    def dump_midway(position):
        if position == dump_after:
            kept.extend(recorder.frames)
            recorder.dump()

    n_frames = drive(recorder, plan, on_frame=dump_midway)
    kept.extend(recorder.frames)
    gated = recorder.env

    positions = kept_positions(n_frames, every, dump_after)
    assert n_frames == len(stream)
    assert_identical(kept, [stream[p - 1] for p in positions])
    assert counter.render_calls <= len(positions) + gated.render_stats.resets
    assert gated.render_stats.resets == len(plan)
    recorder.close()


@pytest.mark.parametrize("every", [1, 4])
def test_every_frame_consumer_gets_exact_kept_frames_and_stale_others(every):
    env_id = "HalfCheetah-v5"
    plan, stream = reference(env_id)
    counter = RenderCounter(make_env(env_id))
    env = RenderEvery(counter, render_every=every)
    handed_out, snapshots = [], []

    def consume(_position):
        frame = env.render()
        handed_out.append(frame)
        snapshots.append(frame.copy())

    n_frames = drive(env, plan, on_frame=consume)
    positions = kept_positions(n_frames, every)
    assert_identical([handed_out[p - 1] for p in positions], [stream[p - 1] for p in positions])
    # Frames handed out earlier are unchanged after all later steps and renders.
    assert_identical(handed_out, snapshots)
    episode_starts = {1, len(plan[0]) + 2}
    fresh = sorted(set(positions) | episode_starts)
    assert counter.render_calls == len(fresh)
    for position, frame in enumerate(handed_out, start=1):
        last_fresh = max(p for p in fresh if p <= position)
        assert frame is handed_out[last_fresh - 1]
    if every == 1:  # exact pass-through: every frame, one underlying render each
        assert_identical(handed_out, stream)
        assert counter.render_calls == n_frames


def test_fresh_frames_are_new_arrays_even_if_the_env_reuses_its_buffer():
    class ReusedBuffer(gym.Wrapper):
        buffer = np.zeros((4, 4, 3), np.uint8)

        def render(self):
            self.buffer += 1
            return self.buffer

    env = RenderEvery(ReusedBuffer(make_env("Hopper-v5")), render_every=2)
    env.reset(seed=0)
    first = env.render()
    env.step(env.action_space.sample())
    second = env.render()
    assert second is not first
    assert first.max() == 1 and second.max() == 2


@pytest.mark.parametrize("value", [0, -3, 2.5, "16", None, True])
def test_render_every_must_be_a_positive_int(value):
    with pytest.raises(ValueError, match=rf"render_every must be an int >= 1, got {value!r}"):
        RenderEvery(make_env("Hopper-v5"), render_every=value)


class TinyEnv(gym.Env):
    """A one-number env that supports every render mode, to test the render_mode check."""

    metadata: ClassVar[dict] = {"render_modes": ["human", "ansi", "rgb_array"]}
    observation_space = gym.spaces.Box(-1.0, 1.0, (1,))
    action_space = gym.spaces.Discrete(2)

    def __init__(self, render_mode=None):
        self.render_mode = render_mode


@pytest.mark.parametrize("render_mode", [None, "human", "ansi"])
def test_render_mode_must_return_an_image(render_mode):
    with pytest.raises(ValueError, match=rf"render_mode is {render_mode!r}, which is incompatible"):
        RenderEvery(TinyEnv(render_mode), render_every=4)


def test_wrapper_follows_gymnasium_conventions():
    base = make_env("Hopper-v5")
    env = RenderEvery(base, render_every=3)
    assert env.render_mode == "rgb_array"
    assert env.metadata == base.metadata
    assert env.spec.id == "Hopper-v5"
    assert env.spec.additional_wrappers[-1].name == "RenderEvery"
    assert env.spec.additional_wrappers[-1].kwargs == {"render_every": 3}
    remade = gym.make(env.spec)
    assert isinstance(remade, RenderEvery) and remade.render_every == 3


def test_stats_are_published_live_under_unique_labels():
    first = RenderEvery(make_env("Hopper-v5"), render_every=3)
    second = RenderEvery(make_env("Hopper-v5"), render_every=3)
    assert first.stats_label != second.stats_label
    assert first.stats_label.startswith("Hopper-v5#")
    first.reset(seed=0)
    first.render()
    for _ in range(5):
        first.step(first.action_space.sample())
        first.render()
    published = registry.snapshot()["render"][first.stats_label]
    assert {"fresh_renders", "reused_frames", "render_seconds", "saved_seconds"} <= set(published)
    # Positions 1..6: the reset frame and positions 3 and 6 are fresh.
    assert published["fresh_renders"] == 3 and published["reused_frames"] == 3
    assert published["render_seconds"] > 0
    assert published["frames"] == 6 and published["skipped_renders"] == 3
    assert published["saved_seconds"] == pytest.approx(3 * first.render_stats.mean_render_seconds)


def test_frames_never_asked_for_count_as_saved(tmp_path):
    # The imageio recorder renders only kept frames: the others are saved without reuse.
    env = VideoFileRecorder(RenderEvery(make_env("Hopper-v5"), render_every=4), tmp_path / "a.gif")
    env.reset(seed=0)
    for _ in range(11):
        env.step(env.action_space.sample())
    stats = env.env.render_stats
    # 12 frames: the reset frame (fresh at reset) and positions 4, 8, 12 kept.
    assert (stats.frames, stats.fresh_renders, stats.reused_frames) == (12, 4, 0)
    assert stats.skipped_renders == 8
    assert stats.saved_seconds == pytest.approx(8 * stats.mean_render_seconds)
    env.close()


@pytest.mark.parametrize("suffix", [".mp4", ".gif"])
def test_video_files_hold_the_kept_frames(tmp_path, suffix):
    env = make_env("HalfCheetah-v5")
    recorder = VideoFileRecorder(RenderEvery(env, render_every=4), tmp_path / f"a{suffix}", fps=8)
    recorder.reset(seed=0)
    for _ in range(11):  # positions 1..12: frames 4, 8, 12 kept
        recorder.step(recorder.action_space.sample())
    first = recorder.dump()
    for _ in range(8):  # the dump restarted the count: frames 4 and 8 kept
        recorder.step(recorder.action_space.sample())
    recorder.close()
    second = tmp_path / f"a-1{suffix}"
    assert recorder.written == [first, second]
    assert iio.imread(first).shape[:3] == (3, 48, 64)
    assert iio.imread(second).shape[:3] == (2, 48, 64)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"path": "run.avi"}, r"path 'run.avi' has suffix '.avi'; use one of"),
        ({"fps": 0}, r"fps must be a finite number of frames per second > 0, got 0"),
        ({"fps": "30"}, r"fps must be a finite number of frames per second > 0, got '30'"),
        ({"fps": True}, r"fps must be a finite number of frames per second > 0, got True"),
    ],
)
def test_video_file_recorder_rejects_bad_arguments(kwargs, message):
    arguments = {"path": "run.mp4", "fps": 30, **kwargs}
    with pytest.raises(ValueError, match=message):
        VideoFileRecorder(RenderEvery(make_env("Hopper-v5"), render_every=2), **arguments)


def test_video_file_recorder_needs_a_gated_env():
    with pytest.raises(ValueError, match="VideoFileRecorder records a RenderEvery env"):
        VideoFileRecorder(make_env("Hopper-v5"), "run.mp4")


def test_frame_schedule_counts_like_video_recorder():
    schedule = FrameSchedule(every=3)
    kept = []
    for position in range(1, 10):
        schedule.advance()
        kept.append(schedule.keeps_current_frame())
        if position == 4:
            schedule.restart()
    assert [i + 1 for i, keep in enumerate(kept) if keep] == [3, 7]
    with pytest.raises(ValueError, match="every must be an int >= 1, got 0"):
        FrameSchedule(every=0)


def test_import_does_not_load_torchrl():
    code = "import sys, docsaccel.render; print(sorted({'torch', 'torchrl'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_render_every_takes_any_integer_type():
    import numpy as np

    from docsaccel.render.schedule import check_stride

    assert check_stride("render_every", np.int64(4)) == 4
    assert type(check_stride("render_every", np.int64(4))) is int
    for value in (np.int64(0), np.float64(4.0), np.bool_(True)):
        with pytest.raises(ValueError, match="render_every must be an int >= 1"):
            check_stride("render_every", value)
