"""``docsaccel cache explain`` agrees with the build: it judges an entry with the build's
own ``sys.path`` (as its ``conf.py`` left it), says what the last build decided for the
example and why, finds the cache folder the build's variable names, and says why a failed
example has no entry; a reason to run that comes from another example names the root
cause. Real builds, each from a fresh copy of the tiny project (:mod:`helpers.cache_project`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cache_project import FILES, Build, Project, example_source

from docsaccel.cache.manage import explain
from docsaccel.cli import main

pytestmark = pytest.mark.slow

FAILING = example_source("Fail", 'raise RuntimeError("boom")\n')
# With sphinx-gallery's default order (fewest lines of code first) the writer runs first.
WRITER = example_source(
    "Write",
    "from pathlib import Path\nfrom mylib import beta\n"
    'Path("../../data/derived.txt").write_text(beta.name() + "\\n")\n',
)
READER = example_source(
    "Read",
    "from pathlib import Path\n\n"
    'text = Path("../../data/derived.txt").read_text()\n'
    'print("read:", text.strip())\nprint("done")\nprint("more")\nprint("lines")\n',
)


def _trimmed(root: Path, keep: tuple[str, ...]) -> Project:
    """The tiny project with only the examples ``keep``; failures only warn."""
    project = Project(root)
    for name in set(FILES) - {f"docs/examples/{k}" for k in keep}:
        if name.startswith("docs/examples/plot_"):
            (project.pristine / name).unlink()
    conf = FILES["docs/conf.py"].replace(
        '"show_memory": False,', '"show_memory": False, "only_warn_on_example_error": True,'
    )
    project.write("docs/conf.py", conf)
    return project


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, Build]:
    """A cold build then a warm one: the warm one restored every example that passed."""
    project = _trimmed(tmp_path_factory.mktemp("explain"), ("plot_a_alpha.py", "plot_d_dist.py"))
    project.write("docs/examples/plot_z_fail.py", FAILING)
    project.build()
    warm = project.build()
    assert warm.cached() == {"plot_a_alpha.py", "plot_d_dist.py"}, warm.output
    return project, warm


def test_explain_judges_distributions_with_the_builds_sys_path(
    built: tuple[Project, Build], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # conf.py puts the fake site (fakedist 1.0) on sys.path; this process instead sees
    # another installed copy first, as a shell's site-packages would be.
    project, warm = built
    other = tmp_path / "site-packages"
    info = other / "fakedist-2.0.dist-info"
    info.mkdir(parents=True)
    (other / "fakedist.py").write_text("VALUE = 9\n", "utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakedist\nVersion: 2.0\n")
    monkeypatch.syspath_prepend(str(other))
    out, code = explain("examples/plot_d_dist.py", project.cache, project.pristine / "docs")
    assert code == 0, out
    assert "CHANGED" not in out, out
    assert "up to date" in out, out
    # What the build did, which agrees.
    assert warm.records["plot_d_dist.py"]["status"] == "cached"
    assert "last build: restored it" in out, out


def test_explain_finds_the_cache_the_variable_names(
    built: tuple[Project, Build], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    project, _ = built
    docs = str(project.pristine / "docs")
    monkeypatch.setenv("DOCSACCEL_CACHE", str(project.cache))
    assert main(["cache", "explain", "examples/plot_a_alpha.py", "--docs", docs]) == 0
    assert "examples/plot_a_alpha.py: 1 entry in" in capsys.readouterr().out
    assert main(["cache", "stats"]) == 0
    assert ": 2 hits, 1 miss " in capsys.readouterr().out  # the warm build
    monkeypatch.setenv("DOCSACCEL_CACHE", "0")
    assert main(["cache", "stats"]) == 2
    assert "DOCSACCEL_CACHE='0' turns the cache off; give --cache" in capsys.readouterr().err
    monkeypatch.delenv("DOCSACCEL_CACHE")
    monkeypatch.chdir(project.pristine.parent)  # no docs/conf.py here
    assert main(["cache", "stats"]) == 2
    said = capsys.readouterr().err
    assert "no cache folder: give --cache, or set DOCSACCEL_CACHE" in said, said
    assert "--docs 'docs': no such folder; give the Sphinx conf folder" in said, said


def test_explain_says_a_failed_example_is_never_stored(built: tuple[Project, Build]) -> None:
    project, warm = built
    assert warm.records["plot_z_fail.py"]["status"] == "failed"
    out, code = explain("examples/plot_z_fail.py", project.cache, project.pristine / "docs")
    assert code == 0, out
    assert "examples/plot_z_fail.py: 0 entries in" in out
    assert "its run failed: RuntimeError: boom" in out, out
    assert "a failed or interrupted example is never stored" in out, out


def test_a_reader_of_a_rewritten_file_names_the_root_cause(tmp_path: Path) -> None:
    project = _trimmed(tmp_path, ())
    project.write("docs/examples/plot_w_write.py", WRITER)
    project.write("docs/examples/plot_r_read.py", READER)
    cold = project.build()
    assert cold.executed() == {"plot_w_write.py", "plot_r_read.py"}, cold.output
    project.write("mylib/beta.py", "def name():\n    return 'gamma'\n")
    docs = project.pristine / "docs"
    # Its own dependencies are unchanged; explain says so, and what else runs it.
    before, _ = explain("examples/plot_r_read.py", project.cache, docs)
    assert "up to date" in before, before
    assert "judged by its own dependencies only" in before, before
    edited = project.build()
    assert edited.executed() == {"plot_w_write.py", "plot_r_read.py"}, edited.output
    writer = edited.records["plot_w_write.py"]["cache"]["reason"]
    assert "mylib/beta.py" in writer
    reason = edited.records["plot_r_read.py"]["cache"]["reason"]
    assert reason == (
        f"data/derived.txt is written by examples/plot_w_write.py, which runs again: {writer}"
    )
    # Explain followed the chain to the same root cause before the build.
    assert f"but a build runs it: {reason}" in before, before
    after, _ = explain("examples/plot_r_read.py", project.cache, docs)
    assert f"last build: ran it ({reason}), status ok" in after, after
