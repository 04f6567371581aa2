"""A gate never passes an example that did not finish: ``check`` names every example
that failed or that the build stopped while it ran, and says the build did not finish,
whether the build ran its examples serially or in sphinx-gallery's parallel workers, with
``--allow-incomplete`` or without. Real Sphinx builds in temporary folders."""

from __future__ import annotations

import pytest
from helpers.gallery_build import build, make_project

from docsaccel.report.commands import run_check

pytestmark = pytest.mark.slow

#: Examples run in file name order, so which one ends the build is known.
ORDERED = 'sphinx_gallery_conf["within_subsection_order"] = "FileNameSortKey"\n'


def test_allow_incomplete_fails_an_example_that_ended_the_process(tmp_path) -> None:
    """``os._exit`` in an example ends a serial build: the build may be judged with
    ``--allow-incomplete``, but not as OK; the example is named (exit 3)."""
    src = make_project(tmp_path, ["plot_h_osexit.py", "plot_quick.py"], conf=ORDERED)
    built = build(src)
    assert built.returncode != 0, built.output
    report = str(built.report_path)

    refused, code = run_check([report])
    assert code == 2 and "examples/plot_h_osexit.py was running" in refused, refused

    out, code = run_check([report], allow_incomplete=True)
    assert code == 3, out
    assert "OK" not in out
    assert "1 example did not finish: examples/plot_h_osexit.py (did not finish" in out
    assert "the build did not finish (examples/plot_h_osexit.py was running)" in out


#: Ends its worker once the other worker's example has failed.
LATE_EXIT = '''"""
Late exit
=========
"""
import os
import time

time.sleep(3)
os._exit(0)
'''


def test_a_parallel_build_a_worker_died_in_names_every_example(tmp_path) -> None:
    """With ``parallel: 2``, one example raises and another ends its worker: ``check``
    names both and says the build did not finish, as the serial build's refusal does."""
    conf = ORDERED + 'sphinx_gallery_conf["parallel"] = 2\n'
    src = make_project(tmp_path, ["plot_crash.py", "plot_quick.py"], conf=conf)
    (src / "examples" / "plot_late_exit.py").write_text(LATE_EXIT, encoding="utf-8")
    built = build(src)
    assert built.returncode != 0, built.output
    assert built.report["build"]["complete"] is False

    for allow_incomplete in (False, True):
        out, code = run_check([str(built.report_path)], allow_incomplete=allow_incomplete)
        assert code == 3, out
        assert "1 example failed: examples/plot_crash.py (RuntimeError" in out, out
        assert "did not finish: examples/plot_late_exit.py (did not finish" in out, out
        assert "the build did not finish (examples/plot_late_exit.py was running)" in out, out
