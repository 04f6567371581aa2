"""The report commands given a relative path: run inside the report's own folder, or
through a relative symbolic link in the current folder, each ends as given the report's
absolute path (the output folder is the one the build wrote the report in)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from helpers.gallery_build import Built, build, make_project, run_cli

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Built:
    src = make_project(tmp_path_factory.mktemp("relative"), ["plot_quick.py"])
    done = build(src)
    assert done.returncode == 0, done.output
    return done


def _commands(report: str, history: Path, base: Path) -> dict[str, list[str]]:
    return {
        "check": ["check", report],
        "report": ["report", report],
        "compare": ["compare", str(base), report],
        "history append": ["history", "append", "--to", str(history), report],
    }


def _ways(built: Built, tmp_path: Path) -> dict[str, tuple[str, Path]]:
    """Each way of naming the report: ``(the path given, the folder it is run in)``."""
    report = built.report_path
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = elsewhere / "latest.json"
    link.symlink_to(os.path.relpath(report, elsewhere))
    return {
        "inside its folder": ("report.json", report.parent),
        "its folder, inside it": (".", report.parent),
        "a relative symbolic link": (link.name, elsewhere),
    }


@pytest.mark.parametrize("command", ["check", "report", "compare", "history append"])
def test_a_relative_report_path_ends_as_its_absolute_path(built, tmp_path, command) -> None:
    base = tmp_path / "base.json"  # a copy kept elsewhere: not the same file as the head
    shutil.copy(built.report_path, base)
    given = str(built.report_path)
    absolute = run_cli(*_commands(given, tmp_path / "absolute.jsonl", base)[command])
    assert absolute.returncode == 0, absolute.stderr
    for way, (given, cwd) in _ways(built, tmp_path).items():
        history = tmp_path / f"{way}.jsonl"
        done = run_cli(*_commands(given, history, base)[command], cwd=cwd)
        assert "Traceback" not in done.stderr, (way, done.stderr)
        assert done.returncode == absolute.returncode, (way, done.stdout, done.stderr)
        if command == "history append":
            assert _line(history) == _line(tmp_path / "absolute.jsonl"), way


def _line(history: Path) -> dict:
    """The history's one line, without when it was appended and the path given."""
    (line,) = history.read_text("utf-8").splitlines()
    return {k: v for k, v in json.loads(line).items() if k not in ("recorded_at", "source")}
