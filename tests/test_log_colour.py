"""A build's log written to a file (or a pipe) carries no colour escape codes, whichever
process wrote the message: ``sphinx-build`` turns colour off when its output is no
terminal, and sphinx-gallery's ``parallel`` workers, which Sphinx never set up, follow it.
Real Sphinx builds in temporary folders."""

from __future__ import annotations

import pytest
from helpers.gallery_build import build, make_project

pytestmark = pytest.mark.slow

PARALLEL = 'sphinx_gallery_conf["parallel"] = 2\n'


@pytest.mark.parametrize("parallel", [False, True], ids=["serial", "parallel"])
def test_a_log_in_a_file_has_no_colour_codes(tmp_path, parallel) -> None:
    conf = PARALLEL if parallel else ""
    src = make_project(tmp_path, ["plot_crash.py", "plot_quick.py"], conf=conf)

    built = build(src)  # its output is a pipe, as a log file is: no terminal

    assert built.returncode != 0, built.output
    # sphinx-gallery's traceback of the failing example, from the process that ran it.
    assert "unexpectedly failed to execute correctly" in built.output, built.output
    assert "\x1b[" not in built.output, repr(built.output)
