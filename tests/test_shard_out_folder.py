"""``--out`` of ``shard-local`` and ``shard-merge`` names the site folder, which the merge
build fills: it must be missing, empty or a site a build wrote. A folder of the user's
files (a package, the folder of the budgets) is refused up front in one line, nothing
written, as ``shard-build --artifact`` refuses one.

Real runs of the CLI; the refusals come before any shard is built.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.gallery_build import make_project, run_cli

from docsaccel import layout


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project whose budgets lie in ``conf/`` beside the docs, with a package ``pkg/``."""
    src = make_project(tmp_path, ["plot_quick.py"], conf='docsaccel_budgets = "../conf/b.toml"\n')
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "b.toml").write_text('default = "1m"\n', encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    return src


def _shard(project: Path, command: str, out: Path) -> tuple[int, list[str]]:
    args = ["--shards", "2"] if command == "shard-local" else [str(project / "_build" / "arts")]
    done = run_cli(
        *(command, "--docs", str(project), "--root", str(project.parent)),
        *("--out", str(out), *args),
    )
    return done.returncode, done.stderr.splitlines()


def _contents(tmp_path: Path) -> list[str]:
    return sorted(path.relative_to(tmp_path).as_posix() for path in tmp_path.rglob("*"))


@pytest.mark.parametrize(
    ("command", "folder", "held"),
    [("shard-local", "pkg", "__init__.py"), ("shard-merge", "conf", "b.toml")],
)
def test_a_site_folder_of_the_users_files_is_refused_up_front(
    project, tmp_path, command, folder, held
) -> None:
    before = _contents(tmp_path)
    code, lines = _shard(project, command, tmp_path / folder)
    assert code == 2, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith(
        f"docsaccel {command}: error: --out {tmp_path / folder} is not a site folder "
        f"(it holds {held!r}"
    ), lines[0]
    assert str(project / "_build" / "html") in lines[0], lines[0]
    assert _contents(tmp_path) == before


@pytest.mark.parametrize("left", [".buildinfo", "docsaccel/report.json", None])
def test_an_empty_folder_or_an_earlier_site_is_taken_as_the_site(project, tmp_path, left) -> None:
    # What a Sphinx build leaves, and the report a sharded build stopped before its merge
    # leaves alone (a missing folder is the default's case).
    site = tmp_path / "site"
    site.mkdir()
    if left is not None:
        (site / left).parent.mkdir(parents=True, exist_ok=True)
        (site / left).write_text("{}", encoding="utf-8")
        (site / "index.html").write_text("", encoding="utf-8")
    code, lines = _shard(project, "shard-merge", site)
    # Refused further on, for the artifacts: the site folder passed.
    assert code == 2, lines
    assert "no shard artifact" in lines[0] or "no such folder" in lines[0], lines
    assert layout.report_path(site).is_file() == (left == "docsaccel/report.json")
