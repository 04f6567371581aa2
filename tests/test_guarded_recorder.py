"""VideoFileRecorder refuses, when it is created, a path or fps it could not write with."""

from __future__ import annotations

import math
import os

import pytest
from helpers.render_streams import make_env

from docsaccel.render import RenderEvery, VideoFileRecorder


def recorder(path, fps=30):
    return VideoFileRecorder(RenderEvery(make_env("Hopper-v5"), render_every=2), path, fps=fps)


@pytest.mark.parametrize("fps", [math.inf, -math.inf, math.nan, -1, 0.0])
def test_fps_must_be_finite_and_positive(tmp_path, fps) -> None:
    with pytest.raises(ValueError, match=r"finite number of frames per second > 0, got .*fps=30"):
        recorder(tmp_path / "a.mp4", fps=fps)


def test_a_directory_is_refused_with_a_file_suggested(tmp_path) -> None:
    (tmp_path / "out.mp4").mkdir()
    with pytest.raises(ValueError, match=r"is a directory; give a file in it, e.g. .*video.mp4"):
        recorder(tmp_path / "out.mp4")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_an_unwritable_folder_is_refused(tmp_path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(ValueError, match=r"the folder .*locked' is not writable"):
            recorder(locked / "sub" / "a.mp4")
    finally:
        locked.chmod(0o700)


def test_a_file_in_place_of_the_folder_is_refused(tmp_path) -> None:
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(ValueError, match=r"notes.txt' is a file, not a folder"):
        recorder(tmp_path / "notes.txt" / "a.mp4")


def test_a_missing_folder_is_fine_it_is_created_when_written(tmp_path) -> None:
    env = recorder(tmp_path / "new" / "deeper" / "a.gif", fps=8)
    env.reset(seed=0)
    for _ in range(4):
        env.step(env.action_space.sample())
    assert env.dump() == tmp_path / "new" / "deeper" / "a.gif"


@pytest.mark.parametrize("path", [None, 3])
def test_a_path_must_be_a_path(path) -> None:
    with pytest.raises(ValueError, match="path must be a file path"):
        recorder(path)
