"""The gallery plugin in real Sphinx builds: budgets, enforcement, records, the report."""

from __future__ import annotations

import re

import pytest
from helpers.gallery_build import assert_records_complete, build, make_project

from docsaccel.records import read_records

pytestmark = pytest.mark.slow

BUDGETS = """
default = "1s"

[examples]
"plot_quick.py" = "30s"
"plot_f*.py" = { budget = "1m", reason = "imports matplotlib" }
"""


def test_warn_mode_sources_warnings_and_unchanged_examples(tmp_path) -> None:
    names = ["plot_quick.py", "plot_inline.py", "plot_sleep.py", "skipped.py"]
    conf = 'docsaccel_report_page = "reports/budget"\n'
    src = make_project(tmp_path, names, conf=conf, budgets=BUDGETS)

    # --keep-going: before Sphinx 8.1, -W alone stops the build at its first warning.
    built = build(src, "-W", "--keep-going")

    # -W turns the overrun warning into a failed build; the report is there regardless.
    assert built.returncode == 1, built.output
    assert re.search(r"examples/plot_sleep.py took [\d.]+s, over its budget of 1s", built.output)
    assert "budgets.toml: [examples] pattern 'plot_f*.py' matches no example" in built.output
    assert "budgets.toml default" in built.output
    assert_records_complete(built, names)
    sources = {
        r["name"]: (r["budget_source"], r["budget_seconds"]) for r in built.report["examples"]
    }
    assert sources == {
        "plot_quick.py": ("pattern", 30.0),
        "plot_inline.py": ("inline", 45.0),
        "plot_sleep.py": ("default", 1.0),
        "skipped.py": ("default", 1.0),
    }
    sleep = built.record("plot_sleep.py")
    assert sleep["status"] == "over-budget" and sleep["wall_seconds"] >= 1.5
    assert sleep["cpu_seconds"] < 1.0 and sleep["peak_rss_bytes"] > 0
    assert built.record("plot_quick.py")["status"] == "ok"
    assert built.record("skipped.py")["status"] == "not-executed"
    assert built.report["build"]["complete"] is True
    assert built.report["build"]["on_overrun"] == "warn"
    # The report page lists every example; no chart unless asked (see the chart test).
    report_page = (built.outdir / "reports" / "budget.html").read_text("utf-8")
    assert all(f">examples/{name}<" in report_page for name in names)
    # The page was written before -W failed the build: it says so, as report.json does.
    assert "treated as errors (-W)" in built.report["build"]["sphinx_failed"]
    assert "The build failed" in report_page and "treated as errors (-W)" in report_page
    page_source = (src / "reports" / "budget.rst").read_text("utf-8")
    assert "treated as errors (-W)" in page_source, "the next build would not see it"
    assert "<svg" not in report_page and not (built.outdir / "docsaccel" / "chart.svg").exists()

    # Unchanged examples are skipped by sphinx-gallery and recorded as cached, with the
    # time they took last.
    rebuilt = build(src)
    assert rebuilt.returncode == 0, rebuilt.output
    assert "slept" in rebuilt.page("plot_sleep.py")
    cached = rebuilt.record("plot_sleep.py")
    assert cached["status"] == "cached"
    assert cached["wall_seconds"] == sleep["wall_seconds"]
    assert rebuilt.record("skipped.py")["status"] == "not-executed"
    assert_records_complete(rebuilt, names)


def test_fail_mode_stops_an_endless_example_at_its_budget(tmp_path) -> None:
    names = ["plot_quick.py", "plot_loop.py", "plot_crash.py"]
    conf = 'sphinx_gallery_conf["expected_failing_examples"] = ["examples/plot_crash.py"]\n'
    src = make_project(tmp_path, names, conf=conf, budgets=BUDGETS)

    built = build(src, env={"DOCSACCEL_ON_OVERRUN": "fail"})

    assert built.returncode != 0
    loop = built.record("plot_loop.py")
    assert loop["status"] == "interrupted"
    assert loop["budget_source"] == "inline" and loop["budget_seconds"] == 2.0
    # Time to stop, generously: the budget is 2 s, the promise is stopping within 2 s.
    assert 2.0 <= loop["wall_seconds"] < 10.0
    assert "interrupted after 2.0 s" in loop["error"]
    for part in ("examples/plot_loop.py", "2s from plot_loop.py", "docsaccel.fast.pick"):
        assert part in built.output
        assert part in loop["error"]
    assert "BudgetExceeded" in built.page("plot_loop.py")
    crash = built.record("plot_crash.py")
    assert crash["status"] == "failed"
    assert crash["error"] == "RuntimeError: this example crashes on purpose"
    assert built.record("plot_quick.py")["status"] == "ok"
    assert_records_complete(built, names)


def test_parallel_workers_enforce_budgets_and_the_fast_path(tmp_path) -> None:
    names = ["plot_quick.py", "plot_loop.py", "plot_knobs.py", "plot_sleep.py"]
    src = make_project(
        tmp_path, names, conf='sphinx_gallery_conf["parallel"] = 2\n', budgets=BUDGETS
    )

    built = build(src, env={"DOCSACCEL_ON_OVERRUN": "fail", "DOCSACCEL_FAST": "1"})

    assert built.returncode != 0
    assert_records_complete(built, names)
    loop, sleep = built.record("plot_loop.py"), built.record("plot_sleep.py")
    assert loop["status"] == sleep["status"] == "interrupted"
    assert loop["wall_seconds"] < 10.0 and sleep["wall_seconds"] < 10.0
    knobs = built.record("plot_knobs.py")
    assert knobs["knobs"] == {"rollouts": {"value": 1, "fast": 1, "full": 4}}
    assert knobs["fast"] is True
    assert "rollouts = 1 (full build: 4)" in built.page("plot_knobs.py")
    pids = {r["pid"] for r in built.report["examples"]}
    assert len(pids) >= 2, "the examples were expected to run in two worker processes"


def test_fast_path_note_only_in_fast_builds(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_knobs.py", "plot_quick.py"])

    fast = build(src, "-W", env={"DOCSACCEL_FAST": "1"})
    assert fast.returncode == 0, fast.output
    assert "Built with the CI fast path" in fast.page("plot_knobs.py")
    assert "rollouts = 1 (full build: 4)" in fast.page("plot_knobs.py")
    assert "rollouts: 1" in fast.page("plot_knobs.py")
    assert "Built with the CI fast path" not in fast.page("plot_quick.py")
    assert fast.record("plot_quick.py")["budget_source"] == "builtin"
    # No report page unless asked: nothing is written into the source folder.
    assert not list(src.glob("*report*")) and not list(fast.outdir.glob("*report*.html"))

    # Switching the fast path off runs the example again although its source is unchanged.
    full = build(src, "-W")
    assert full.returncode == 0, full.output
    assert "Built with the CI fast path" not in full.page("plot_knobs.py")
    assert "rollouts: 4" in full.page("plot_knobs.py")
    assert full.record("plot_knobs.py")["status"] == "ok"
    assert full.record("plot_knobs.py")["knobs"]["rollouts"]["value"] == 4
    assert full.record("plot_quick.py")["status"] == "cached"


KNOB_REUSE = '''"""
Knob reuse
==========

Picks one name with two pairs of values, the first with a fast value above its full one.
"""

from docsaccel.fast import pick

first = pick(full=1, fast=5, name="steps")
second = pick(full=3, fast=2, name="steps")
second_again = pick(full=3, fast=2, name="steps")  # the same knob: neither listed nor warned
print("steps:", first, second)
'''


def test_fast_note_shows_every_pick_and_suspect_knobs_warn(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_knobs.py"])
    (src / "examples" / "plot_reuse.py").write_text(KNOB_REUSE, encoding="utf-8")
    reused = (
        "WARNING: docsaccel: examples/plot_reuse.py: knob 'steps' picked with different "
        "values: fast=5, full=1, then fast=2, full=3"
    )
    above = (
        "WARNING: docsaccel: examples/plot_reuse.py: knob 'steps' has fast=5 above full=1: "
        "its fast path does more than the full build"
    )

    fast = build(src, "-W", "--keep-going", env={"DOCSACCEL_FAST": "1"})

    # --keep-going: the pages are written, and -W fails the build on the warnings.
    assert fast.returncode == 1, fast.output
    assert fast.output.count(reused) == 1 and fast.output.count(above) == 1, fast.output
    assert "steps: 5 2" in fast.page("plot_reuse.py")
    assert "steps = 5 (full build: 1), steps = 2 (full build: 3)" in fast.page("plot_reuse.py")
    # A knob picked once, within its full value, is neither warned of nor listed twice.
    assert "rollouts" not in fast.output
    assert "rollouts = 1 (full build: 4)</p>" in fast.page("plot_knobs.py")

    # Restored unchanged, the example still warns: a failed -W build does not pass again.
    again = build(src, "-W", "--keep-going", env={"DOCSACCEL_FAST": "1"})
    assert again.record("plot_reuse.py")["status"] == "cached"
    assert again.returncode == 1 and reused in again.output and above in again.output
    assert "steps = 5 (full build: 1), steps = 2 (full build: 3)" in again.page("plot_reuse.py")
    # A project whose fast value is larger on purpose silences them, as the guide says.
    quiet = build(src, "-W", "-D", "suppress_warnings=docsaccel.knobs", env={"DOCSACCEL_FAST": "1"})
    assert quiet.returncode == 0, quiet.output


def test_fast_builds_use_fast_path_budgets(tmp_path) -> None:
    budgets = 'default = "1m"\nfast_default = "20s"\n[examples]\n"plot_knobs.py" = "40s"\n'
    src = make_project(tmp_path, ["plot_knobs.py", "plot_quick.py"], budgets=budgets)
    fast = build(src, "-W", env={"DOCSACCEL_FAST": "1"})
    assert fast.returncode == 0, fast.output
    quick = fast.record("plot_quick.py")
    assert (quick["budget_seconds"], quick["budget_source"]) == (20, "default")
    assert quick["budget_detail"].endswith("default (fast path)")
    # The winning pattern has no fast budget: it keeps its own.
    assert fast.record("plot_knobs.py")["budget_seconds"] == 40
    full = build(src, "-W")
    assert full.returncode == 0, full.output
    assert full.record("plot_quick.py")["budget_seconds"] == 60


def test_abort_on_example_error_stops_at_once_and_leaves_a_report(tmp_path) -> None:
    conf = (
        'sphinx_gallery_conf["abort_on_example_error"] = True\n'
        'sphinx_gallery_conf["within_subsection_order"] = "FileNameSortKey"\n'
    )
    src = make_project(tmp_path, ["plot_loop.py", "plot_quick.py"], conf=conf)

    built = build(src, env={"DOCSACCEL_ON_OVERRUN": "fail"})

    assert built.returncode != 0
    assert "BudgetExceeded" in built.output
    assert built.report["build"]["complete"] is False
    loop = built.record("plot_loop.py")
    assert loop["status"] == "interrupted" and loop["wall_seconds"] < 10.0
    assert built.record("plot_quick.py")["status"] == "not-executed"


@pytest.mark.parametrize("parallel", [1, 2])
def test_an_example_that_takes_its_process_down_is_still_recorded(tmp_path, parallel) -> None:
    names = ["plot_exit.py", "plot_quick.py"]
    conf = (
        f'sphinx_gallery_conf["parallel"] = {parallel}\n'
        'sphinx_gallery_conf["within_subsection_order"] = "FileNameSortKey"\n'
    )
    src = make_project(tmp_path, names, conf=conf)

    built = build(src)

    assert built.returncode != 0
    # Its record is the provisional one from the start journal: nothing ran after it.
    records = read_records(built.outdir / "docsaccel" / "records")
    gone = records["examples/plot_exit.py"]
    assert gone["status"] == "failed" and "did not finish" in gone["error"]
    assert gone["finished_at"] is None
    if parallel > 1:
        # The worker died, not Sphinx: the report of the stopped build is there too.
        assert built.report["build"]["complete"] is False
        assert built.record("plot_exit.py") == gone


def test_user_reset_modules_and_scrapers_keep_working(tmp_path) -> None:
    conf = (
        "def log_reset(gallery_conf, fname, when):\n"
        "    with open(__file__ + '.resets', 'a') as stream:\n"
        "        stream.write(f'{fname} {when}\\n')\n"
        'sphinx_gallery_conf["reset_modules"] = (log_reset, "matplotlib")\n'
        'sphinx_gallery_conf["reset_modules_order"] = "after"\n'
    )
    budgets = '[examples]\n"plot_f*.py" = { budget = "1m", reason = "imports matplotlib" }\n'
    src = make_project(tmp_path, ["plot_figure.py"], conf=conf, budgets=budgets)

    # No -W: Sphinx warns that it cannot cache a config holding a function, as it does
    # without docsaccel.
    built = build(src)

    assert built.returncode == 0, built.output
    assert (src / "conf.py.resets").read_text().splitlines() == ["plot_figure.py after"]
    assert (src / "auto_examples" / "images" / "sphx_glr_plot_figure_001.png").is_file()
    assert built.record("plot_figure.py")["budget_reason"] == "imports matplotlib"


# Every bad setting and budget file is a unit test (test_gallery_units.py); these show
# one of each stops a real build before any example runs.
@pytest.mark.parametrize(
    ("conf", "budgets", "env", "expected"),
    [
        ("", 'default = "7 min"\n', {}, ["budgets.toml", "default", "'7 min'"]),
        ("", None, {"DOCSACCEL_ON_OVERRUN": "abort"}, ["DOCSACCEL_ON_OVERRUN", "'abort'"]),
    ],
)
def test_bad_settings_stop_the_build_before_any_example(tmp_path, conf, budgets, env, expected):
    src = make_project(tmp_path, ["plot_quick.py"], conf=conf, budgets=budgets)

    built = build(src, env=env)

    assert built.returncode != 0
    for part in expected:
        assert part in built.output
    assert not (src / "auto_examples" / "plot_quick.rst").exists(), "an example ran"


def test_report_page_draws_the_chart_when_asked(tmp_path) -> None:
    conf = 'docsaccel_report_page = "budget_report"\ndocsaccel_report_chart = True\n'
    src = make_project(tmp_path, ["plot_quick.py"], conf=conf)

    built = build(src, "-W")

    assert built.returncode == 0, built.output
    report_page = (built.outdir / "budget_report.html").read_text("utf-8")
    chart = report_page.split('<div class="chart">', 1)[1].split("</div>", 1)[0]
    assert chart.lstrip().startswith("<svg") and "plot_quick.py" in chart
    assert "docsaccel: budget chart" not in report_page, "the placeholder was left"


# The conf.py of a build that notes, once it finished, which docsaccel modules it loaded.
_LOADED = """
import sys as _sys


def setup(app):
    def _note(app, exception):
        loaded = sorted(m for m in _sys.modules if m.split(".")[0] == "docsaccel")
        (app.outdir / "loaded.txt").write_text("\\n".join(loaded), encoding="utf-8")

    app.connect("build-finished", _note, priority=999)
"""


def test_a_plain_build_loads_no_module_of_features_it_does_not_use(tmp_path) -> None:
    # No cache, shard, merge nor report page: their modules are left unloaded, and the
    # build still records every example.
    src = make_project(tmp_path, ["plot_quick.py"], conf=_LOADED, budgets='default = "1m"\n')

    built = build(src, "-W")

    assert built.returncode == 0, built.output
    assert built.record("plot_quick.py")["status"] == "ok"
    loaded = set((built.outdir / "loaded.txt").read_text("utf-8").split())
    assert {"docsaccel.gallery.hook", "docsaccel.incremental.sphinxext"} <= loaded
    unused = {
        "docsaccel.incremental.sphinxext.state_build",
        "docsaccel.incremental.sphinxext.reading",
        "docsaccel.gallery.report_page",
        "docsaccel.shard.roles",
        "docsaccel.cache.cache_build",
        "docsaccel.cache.deps",
        "docsaccel.cache.store",
        "docsaccel.cache.recorder",
    }
    assert loaded & unused == set()


_READ_AT_REPORT_READY = """
import json as _json


def setup(app):
    def _read(app, report):
        on_disk = _json.loads((app.outdir / "docsaccel" / "report.json").read_text("utf-8"))
        build = on_disk["build"]
        writing = (build.pop("complete"), build.pop("writing"), build.pop("reading"))
        expected = {**report, "build": {**report["build"]}}
        expected["build"].pop("complete")
        seen = f"{on_disk == expected} {writing}"
        (app.outdir / "seen.txt").write_text(seen, encoding="utf-8")

    app.connect("docsaccel-report-ready", _read)
"""


def test_the_report_is_on_disk_at_report_ready_and_indented_at_the_end(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py"], conf=_READ_AT_REPORT_READY)

    built = build(src, "-W")

    assert built.returncode == 0, built.output
    # What the handlers get is what the file holds when they run, but the file says the
    # build has still to read its documents and write its pages: killed meanwhile, it did
    # not finish.
    assert (built.outdir / "seen.txt").read_text("utf-8") == "True (False, True, True)"
    text = built.report_path.read_text("utf-8")
    assert text.startswith('{\n  "build": {\n') and text.endswith("}\n")
    assert built.report["build"]["complete"] is True
    assert "writing" not in built.report["build"] and "reading" not in built.report["build"]
    assert built.record("plot_quick.py")["status"] == "ok"


@pytest.mark.parametrize("budgets", [None, 'default = "1m"\n'])
def test_a_bad_inline_budget_names_the_example_file_its_line_key_and_value(
    tmp_path, budgets
) -> None:
    # With or without a budget file: the mistake is in the example, not in docsaccel_budgets.
    src = make_project(tmp_path, ["plot_quick.py"], budgets=budgets)
    bad = src / "examples" / "plot_bad_budget.py"
    bad.write_text('"""\nBad budget\n==========\n"""\n\n# docsaccel_budget = "9x"\n')

    built = build(src)

    assert built.returncode != 0
    line = f"{bad}:6: docsaccel_budget: '9x' is not a duration"
    assert line in built.output, built.output
    assert "docsaccel_budgets" not in built.output
    # One line: the message does not go on below it.
    message = next(text for text in built.output.splitlines() if line in text)
    assert message.rstrip().endswith("such as '90s', '7m' or '1h30m'"), built.output


def test_a_time_over_a_tiny_budget_is_logged_with_the_digits_that_show_it_over(tmp_path) -> None:
    """``took 0s, over its budget of 0.0001s`` would read as within it."""
    budgets = 'default = "1m"\n[examples]\n"plot_quick.py" = "0.0001s"\n'
    src = make_project(tmp_path, ["plot_quick.py"], budgets=budgets)

    built = build(src)

    assert built.returncode == 0, built.output
    said = re.search(
        r"examples/plot_quick.py took ([\d.]+)s, over its budget of 0.0001s", built.output
    )
    assert said and float(said[1]) > 0.0001, built.output
