"""``docsaccel doctor --docs`` says of a budget file what the build says of it: a warning
where the build warns (and still passes), a failure where the build refuses to run.

Each case builds the project for real and runs the doctor on it; the doctor's ``warn``
lines are the build's budget warnings, word for word.
"""

from __future__ import annotations

import pytest
from helpers.gallery_build import build, make_project, run_cli

pytestmark = pytest.mark.slow

# The build warns of each: a pattern matching no example, a fast-path budget above its
# full one (in the file and in an example's own comment).
WARNED = """\
default = "7m"
[examples]
"plot_qiuck.py" = "1m"
"plot_quick.py" = { budget = "1m", fast = "2m" }
"""
INLINE = '# docsaccel_budget = { budget = "1m", fast = "2m" }\n'
# The build refuses it: two equally specific patterns both match plot_quick.py.
REFUSED = """\
default = "7m"
[examples]
"plot_q*.py" = "1m"
"plot_*k.py" = "2m"
"""


def _build_warnings(output: str) -> list[str]:
    """The budget warnings of a build's log, as the build wrote them."""
    found = []
    for line in output.splitlines():
        _, marker, text = line.partition("WARNING: ")
        if marker and ("budgets.toml" in text or "docsaccel_budget" in text):
            found.append(_said(text.removesuffix(" [docsaccel.budgets]")))
    return found


def _said(line: str) -> str:
    """What a warning says after the file it names: the build names the budget file as
    ``conf.py`` gives it, the doctor from the conf folder."""
    return line.split(": ", 1)[1]


def test_doctor_warns_of_what_the_build_warns_of_and_passes(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py", "plot_sleep.py"], budgets=WARNED)
    sleep = src / "examples" / "plot_sleep.py"
    sleep.write_text(INLINE + sleep.read_text(encoding="utf-8"), encoding="utf-8")
    built = build(src)
    assert built.returncode == 0, built.output
    warned = _build_warnings(built.output)
    assert len(warned) == 3, built.output

    doctor = run_cli("doctor", "--docs", str(src))
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    lines = doctor.stdout.splitlines()
    assert not [line for line in lines if line.startswith("FAIL")], doctor.stdout
    said = [_said(line.removeprefix("warn ")) for line in lines if line.startswith("warn ")]
    assert sorted(said) == sorted(warned), doctor.stdout


def test_doctor_fails_on_what_the_build_refuses(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py"], budgets=REFUSED)
    built = build(src)
    assert built.returncode != 0, built.output
    assert "are equally specific" in built.output, built.output

    doctor = run_cli("doctor", "--docs", str(src))
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    [failure] = [line for line in doctor.stdout.splitlines() if line.startswith("FAIL")]
    assert "are equally specific" in failure, doctor.stdout
