"""sphinx-gallery's files of a build that restored examples from the example cache say
what the build's report says: a restored example was not measured by that build.

One project built twice with the cache, a local module edited between the builds: the
second build, from a fresh copy (no outputs left), runs the one example that imports it
and restores the others. Its root ``sg_execution_times.rst`` and JUnit XML list the
restored examples with their stored runs' times; every reader that finds the build's
report (``check``, ``report``, ``compare``, ``history append``, the shard plan) counts
them as restored.
"""

from __future__ import annotations

import json

import pytest
from helpers.cache_project import ALL, CONF, Project

from docsaccel import layout
from docsaccel.contract import CACHED, NOT_MEASURED, unmeasured_text
from docsaccel.report.commands import run_check, run_compare, run_history_append, run_report
from docsaccel.report.history import PART_OF_BUILD, PART_OF_BUILD_TEXT
from docsaccel.shard.plan import load_inputs

pytestmark = pytest.mark.slow

RESTORED = len(ALL) - 1
NOTE = unmeasured_text(0, restored=RESTORED)
JUNIT = "junit.xml"


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """The first build's report and the second build, which ran ``plot_b_beta.py``."""
    project = Project(tmp_path_factory.mktemp("sg_restored"))
    project.write("docs/conf.py", CONF + f'sphinx_gallery_conf["junit"] = "{JUNIT}"\n')
    first, second = project.built_then_beta_edited()
    return layout.report_path(first.outdir), second


def _root(second) -> str:
    return str(second.docs / "sg_execution_times.rst")


def test_check_of_the_root_file_counts_the_restored_examples_apart(builds) -> None:
    _, second = builds

    text, code = run_check([_root(second)])

    assert code == 0, text
    assert text.startswith("OK: 1 example checked"), text
    assert f"note: {NOTE}." in text, text


def test_report_of_the_root_file_counts_only_the_example_run(builds) -> None:
    _, second = builds

    text, code = run_report(_root(second), fmt="md")
    own, _ = run_report(str(layout.report_path(second.outdir)), fmt="md")

    assert code == 0, text
    assert f"over 1 example run (1 ok); {RESTORED} restored from the example cache" in text, text
    assert NOTE in text and NOTE in own


def test_compare_judges_a_restored_example_by_its_stored_run(builds) -> None:
    base, second = builds

    text, _ = run_compare(str(base), _root(second), relative=0.0)

    # Each restored example's time is the run that stored it, the base build's own run:
    # no change, and never the restore's time as one.
    assert "not compared" not in text, text
    for name in second.cached():
        assert f"{name}: " not in text, text
    assert f"{CACHED} ({NOT_MEASURED})" not in text, text


def test_history_of_the_root_file_records_the_restored_examples_as_cached(builds, tmp_path) -> None:
    _, second = builds
    history = tmp_path / "history.jsonl"

    text, code = run_history_append(_root(second), history)

    assert code == 0, text
    statuses = _statuses(history)
    assert statuses.pop("plot_b_beta.py") != CACHED
    assert set(statuses.values()) == {CACHED}, statuses


def test_history_of_the_junit_file_records_the_whole_build(builds, tmp_path) -> None:
    _, second = builds
    history = tmp_path / "history.jsonl"

    text, code = run_history_append(str(second.outdir / JUNIT), history)

    assert code == 0, text
    assert PART_OF_BUILD_TEXT not in text, text
    line = json.loads(history.read_text("utf-8"))
    assert PART_OF_BUILD not in line, line
    statuses = _statuses(history)
    assert sorted(statuses) == sorted(ALL), statuses
    assert statuses.pop("plot_b_beta.py") != CACHED
    assert set(statuses.values()) == {CACHED}, statuses


def _statuses(history) -> dict[str, str]:
    line = json.loads(history.read_text("utf-8"))
    return {i.rsplit("/", 1)[-1]: e.get("status") for i, e in line["examples"].items()}


def test_the_shard_plan_reads_every_example_of_the_build_from_its_junit_file(builds) -> None:
    _, second = builds

    _, named = load_inputs([second.outdir / JUNIT])

    assert sorted(name.rsplit("/", 1)[-1] for name in named) == sorted(ALL), named


#: The starts of the notes said of a sphinx-gallery file whose build's report is unknown.
STATUSLESS = (
    "sphinx-gallery's file does not say whether an example failed",
    "sphinx-gallery's JUnit XML says how each example ended, not whether",
)


@pytest.mark.parametrize("which", ["root", JUNIT])
def test_no_view_says_the_statuses_are_unknown_when_the_report_says_them(builds, which) -> None:
    base, second = builds
    given = _root(second) if which == "root" else str(second.outdir / JUNIT)

    said = {
        "check": run_check([given])[0],
        "report": run_report(given, fmt="md")[0],
        "compare": run_compare(str(base), given, relative=0.0)[0],
    }

    for command, text in said.items():
        assert not any(note in text for note in STATUSLESS), f"{command}:\n{text}"
    # The statuses are the build's: the report counts the example run by its status.
    assert "over 1 example run (1 " in said["report"], said["report"]
