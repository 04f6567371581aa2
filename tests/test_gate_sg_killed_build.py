"""sphinx-gallery's ``sg_execution_times.rst`` of a build killed outright, at the gates.

A build killed with ``SIGKILL`` (the out-of-memory killer) after a gallery ended leaves
that gallery's file, complete and saying nothing of the kill, and no docsaccel report: only
the journals its examples wrote. The gates judge the file by those journals, as its
build's report, so a killed build never passes through its sphinx-gallery file.
"""

from __future__ import annotations

import pytest
from helpers.gallery_build import build, make_project
from helpers.processes import flag_waiter, held_build

from docsaccel import layout
from docsaccel.report.check import EXIT_BUILD_FAILED
from docsaccel.report.commands import run_check, run_compare, run_history_append

pytestmark = pytest.mark.slow

#: Two galleries: ``examples`` ends first (its file written), then ``more`` runs the waiter.
TWO_GALLERIES = (
    'sphinx_gallery_conf["examples_dirs"] = ["examples", "more"]\n'
    'sphinx_gallery_conf["gallery_dirs"] = ["auto_examples", "auto_more"]\n'
    'exclude_patterns.append("more")\n'
)


def test_a_killed_builds_sphinx_gallery_files_pass_no_gate(tmp_path) -> None:
    """The first gallery ended (its ``sg_execution_times.rst`` written, its example passed),
    the second one's example runs. While it runs, every gate given the first gallery's file
    says a build is running now (exit 2). Then the build is killed outright: no report, only
    journals, and the file says nothing of it. Every gate reads the journals in its stead:
    ``check`` refuses it (exit 2) or, with ``--allow-incomplete``, fails it (exit 3) saying
    the build was killed; ``compare`` fails it; ``history append`` refuses it in one line.
    A copy of the file kept elsewhere is no build's: judged by its times."""
    src = make_project(tmp_path, ["plot_quick.py"], conf=TWO_GALLERIES)
    more = src / "more"
    more.mkdir()
    (more / "README.rst").write_text("More\n====\n", encoding="utf-8")
    waiter = flag_waiter(tmp_path)
    (more / "plot_wait.py").write_text(waiter, encoding="utf-8")
    outdir = src / "_build" / "html"
    times = src / "auto_examples" / "sg_execution_times.rst"
    base = tmp_path / "base.rst"
    history = tmp_path / "history.jsonl"
    with held_build(src, outdir, tmp_path / "running.flag") as process:
        assert times.is_file() and "plot_quick.py" in times.read_text(encoding="utf-8")
        base.write_bytes(times.read_bytes())
        running = [
            run_check([str(times)]),
            run_check([str(times)], allow_incomplete=True),
            run_compare(str(base), str(times), allow_incomplete=True),
            run_history_append(str(times), history),
        ]
        process.kill()
        output = process.communicate(timeout=120)[0]
    for text, code in running:
        assert code == 2 and text.count("\n") == 1, text
        assert f"a build is running now (process {process.pid})" in text, text
    assert not layout.report_path(outdir).exists(), output
    assert layout.journals(layout.records_dir(outdir)), output

    text, code = run_check([str(times)])
    assert code == 2 and "--allow-incomplete" in text and "killed" in text, text
    text, code = run_check([str(times)], allow_incomplete=True)
    assert code == EXIT_BUILD_FAILED, text
    assert text.startswith("FAIL: ") and "killed" in text.splitlines()[0], text
    text, code = run_compare(str(base), str(times), allow_incomplete=True)
    assert code == EXIT_BUILD_FAILED, text
    assert text.startswith("The head build failed: "), text
    text, code = run_history_append(str(times), history)
    assert code == 2 and text.count("\n") == 1 and "killed" in text, text
    assert not history.exists()

    text, code = run_check([str(base)])
    assert code == 0, text


def test_a_build_refused_beside_a_running_one_leaves_its_files_to_it(tmp_path) -> None:
    """A second build of the source tree, into another folder, is refused while the first
    runs (it holds the gallery folders). Once the first ends and passes, its
    sphinx-gallery files are judged by its own report, never by the refused one's."""
    src = make_project(tmp_path, ["plot_quick.py"])
    waiter = flag_waiter(tmp_path)
    (src / "examples" / "plot_wait.py").write_text(waiter, encoding="utf-8")
    outdir, other = src / "_build" / "html", tmp_path / "other"
    with held_build(src, outdir, tmp_path / "running.flag") as process:
        refused = build(src, outdir=other)
        (tmp_path / "go.flag").touch()
        output = process.communicate(timeout=300)[0]
    assert refused.returncode == 2 and "another build" in refused.output, refused.output
    assert process.returncode == 0, output
    for times in (src / "sg_execution_times.rst", src / "auto_examples" / "sg_execution_times.rst"):
        assert layout.built_outdir(times) == (src.resolve(), outdir.resolve())
        text, code = run_check([str(times)])
        assert code == 0 and str(other) not in text, text
