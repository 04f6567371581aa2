"""Every timing input format: real sphinx-gallery output, historic formats, bad files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers.report_factory import record, write_report
from helpers.sg_build import build_tiny_gallery

from docsaccel.cli import main
from docsaccel.report.inputs import load_input, load_timings, parse_sg_time
from docsaccel.report.model import InputError

FIXTURES = Path(__file__).parent / "fixtures" / "sg_times"
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def gallery(tmp_path_factory) -> Path:
    """The root of a tiny gallery really built by sphinx-gallery (src/ and out/)."""
    root = tmp_path_factory.mktemp("sg")
    build_tiny_gallery(root)
    return root


def by_id(timings):
    return {timing.id: timing for timing in timings}


@pytest.mark.slow
def test_current_per_gallery_list_table_from_a_real_build(gallery) -> None:
    loaded = load_input(gallery / "src" / "auto_examples" / "sg_execution_times.rst")
    assert loaded.format == "sg-rst-list-table"
    timings = by_id(loaded.timings)
    assert set(timings) == {"plot_slow.py", "plot_fast.py", "plot_broken.py"}
    # The slow example sleeps 0.3 s; sphinx-gallery prints milliseconds.
    assert timings["plot_slow.py"].seconds >= 0.3
    assert timings["plot_slow.py"].seconds > timings["plot_fast.py"].seconds
    assert timings["plot_slow.py"].memory_bytes is None  # sphinx-gallery's 0.0 MB: not measured


@pytest.mark.slow
def test_root_file_for_all_galleries_from_a_real_build(gallery) -> None:
    timings = by_id(load_timings(gallery / "src" / "sg_execution_times.rst"))
    assert set(timings) == {
        "examples/plot_slow.py",
        "examples/plot_fast.py",
        "examples/plot_broken.py",
    }
    assert timings["examples/plot_slow.py"].name == "plot_slow.py"


@pytest.mark.slow
def test_junit_from_a_real_build(gallery) -> None:
    loaded = load_input(gallery / "out" / "sg-junit.xml")
    assert loaded.format == "sg-junit"
    timings = by_id(loaded.timings)
    assert timings["examples/plot_broken.py"].status == "failed"
    assert timings["examples/plot_slow.py"].status == "ok"
    assert timings["examples/plot_slow.py"].seconds >= 0.3
    # The same ids as the root rst file: the two can be compared.
    root = by_id(load_timings(gallery / "src" / "sg_execution_times.rst"))
    assert set(root) == set(timings)


@pytest.mark.parametrize(
    ("fixture", "kind", "expected"),
    [
        (
            "bullets.rst",
            "sg-rst-bullets",
            {
                "plot_train_agent.py": (62.5, None),
                "plot_env_basics.py": (1.234, None),
                "plot_static.py": (0.0, None),
            },
        ),
        (
            "bullets_memory.rst",
            "sg-rst-bullets",
            {"plot_rollout.py": (2.0, round(150.5 * MIB)), "plot_env_basics.py": (1.0, 12 * MIB)},
        ),
        (
            "grid.rst",
            "sg-rst-grid",
            {
                "plot_train_agent.py": (600.1, round(950.4 * MIB)),
                # sphinx-gallery's 0.0 MB: not measured, never 0 bytes.
                "plot_env_basics.py": (5.2, None),
                "plot_static.py": (0.0, None),
            },
        ),
        (
            "list_table_no_memory.rst",
            "sg-rst-list-table",
            {"plot_rollout.py": (7.0, None), "plot_env_basics.py": (0.5, None)},
        ),
    ],
)
def test_historic_sphinx_gallery_formats(fixture, kind, expected) -> None:
    loaded = load_input(FIXTURES / fixture)
    assert loaded.format == kind
    got = {t.id: (t.seconds, t.memory_bytes) for t in loaded.timings}
    assert got.keys() == expected.keys()
    for example_id, (seconds, memory) in expected.items():
        assert got[example_id][0] == pytest.approx(seconds)
        assert got[example_id][1] == memory


def test_report_json_carries_budgets_and_extras(tmp_path) -> None:
    knobs = {"rollouts": {"value": 1, "fast": 1, "full": 4}}
    path = write_report(
        tmp_path / "r.json",
        [
            record("plot_a.py", 12.5, budget=10.0, status="over-budget", knobs=knobs),
            record("plot_b.py", 1.0, budget=None),
        ],
    )
    loaded = load_input(path)
    assert loaded.format == "docsaccel-report" and loaded.build["wall_seconds"] == 100.0
    a, b = loaded.timings
    assert (a.id, a.name, a.seconds, a.budget_seconds, a.status) == (
        "tutorials/plot_a.py",
        "plot_a.py",
        12.5,
        10.0,
        "over-budget",
    )
    assert a.knobs == knobs and a.over_budget
    assert b.budget_seconds is None and not b.over_budget


@pytest.mark.parametrize("time", ["00:1.500", "1.5 sec", "aa:bb.ccc", ""])
def test_sg_times_that_do_not_parse_name_the_value(time) -> None:
    with pytest.raises(InputError, match=r"f\.rst:3: time"):
        parse_sg_time(time, "f.rst:3")
    assert parse_sg_time("120:00.250", "x") == 7200.25


def write(tmp_path: Path, content: str | bytes, name: str = "in.rst") -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def test_time_cell_that_does_not_parse_in_a_table(tmp_path) -> None:
    text = (FIXTURES / "grid.rst").read_text(encoding="utf-8").replace("00:05.200", "5.2 sec  ")
    path = write(tmp_path, text)
    with pytest.raises(InputError) as excinfo:
        load_timings(path)
    assert f"{path}:13" in str(excinfo.value) and "'5.2 sec'" in str(excinfo.value)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "is empty"),
        ("  \n\n", "is empty"),
        ("hello world\n", "unknown format"),
        ("Computation times\n=================\nnothing here\n", "no bullet list"),
        ((FIXTURES / "list_table_empty.rst").read_text(encoding="utf-8"), "no example"),
        ("Computation times\n\n- **00:01.2", "cannot read the line"),
        ("Computation times\n\n+---+\n| :ref:`x` (``a.py``) | 00:01", "cut short"),
        (
            (FIXTURES / "list_table_no_memory.rst").read_text(encoding="utf-8")[:-15],
            "no time column",
        ),
        ('{"schema": "docsaccel.report", "version": 1, "build": {}, "exam', "not valid JSON"),
        ('<?xml version="1.0"?><testsuite><testcase file="a.py" time=', "not valid XML"),
        ('<testsuite><testcase file="a.py" time="fast"/></testsuite>', "'fast' is not a number"),
        ("<testsuite></testsuite>", "no example"),
        ("<html><body>hi</body></html>", "is an HTML page, not a docsaccel report"),
        ("<!DOCTYPE html>\n<html><body><br></body></html>", "is an HTML page"),
        ('<html xmlns="http://www.w3.org/1999/xhtml"/>', "is an HTML page"),
        ("<svg></svg>", "root element is <svg>, expected <testsuite>"),
        ("Computation times\n\n- **00:01.000**: plot_a.py\n", "is not :ref:"),
    ],
)
def test_malformed_inputs_are_errors_naming_the_file(tmp_path, content, message) -> None:
    path = write(tmp_path, content)
    with pytest.raises(InputError) as excinfo:
        load_timings(path)
    assert str(path) in str(excinfo.value)
    assert message in str(excinfo.value)


def test_wrong_encoding_is_an_error(tmp_path) -> None:
    text = (FIXTURES / "bullets.rst").read_text(encoding="utf-8").replace("static", "stätic")
    path = write(tmp_path, text.encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8 text"):
        load_timings(path)


def test_missing_file_is_an_error(tmp_path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        load_timings(tmp_path / "nope.rst")


def test_report_json_schema_drift_names_the_key(tmp_path) -> None:
    path = write_report(tmp_path / "r.json", [record("plot_a.py", 1.0)])
    path.write_text(path.read_text().replace('"status": "ok"', '"status": "great"'))
    with pytest.raises(InputError) as excinfo:
        load_timings(path)
    assert "examples[0].status" in str(excinfo.value) and "'great'" in str(excinfo.value)


# sphinx-gallery rounds the milliseconds after cutting the seconds: 2.9996 s -> 00:02.1000.
ROUNDED = 2.9996


def _sg_costs(src: Path) -> list:
    from sphinx_gallery.gen_rst import ExampleCost

    (src / "examples").mkdir(parents=True, exist_ok=True)
    return [
        ExampleCost(ROUNDED, 12.3, str(src / "examples" / "plot_edge.py"), str(src / "auto")),
        ExampleCost(0.5, 1.0, str(src / "examples" / "plot_quick.py"), str(src / "auto")),
    ]


@pytest.mark.parametrize("per_gallery", [True, False], ids=["per-gallery", "root"])
def test_sphinx_gallery_writes_1000_milliseconds_and_check_reads_3s(tmp_path, per_gallery):
    from sphinx_gallery.gen_gallery import _sec_to_readable, write_computation_times

    assert _sec_to_readable(ROUNDED) == "00:02.1000"  # the real rounding, still in 0.22
    src = tmp_path / "src"
    costs = _sg_costs(src)
    (src / "auto").mkdir()
    conf = {"write_computation_times": True, "src_dir": str(src)}
    write_computation_times(conf, str(src / "auto") if per_gallery else None, costs)
    path = (src / "auto" if per_gallery else src) / "sg_execution_times.rst"
    assert "00:02.1000" in path.read_text(encoding="utf-8")
    timings = by_id(load_timings(path))
    edge = "plot_edge.py" if per_gallery else "examples/plot_edge.py"
    assert timings[edge].seconds == 3.0
    assert main(["check", str(path), "--budget", "3s"]) == 0
    assert main(["check", str(path), "--budget", "2.5s"]) == 1


@pytest.mark.parametrize("fixture", ["bullets.rst", "bullets_memory.rst", "grid.rst"])
def test_historic_formats_read_1000_milliseconds(tmp_path, fixture) -> None:
    text = (FIXTURES / fixture).read_text(encoding="utf-8")
    first = re.search(r"\b\d\d:\d\d\.\d{3}\b(?!\*\*\s+total)", text.split("files", 1)[1])
    edited = text.replace(first.group(0), "00:02.1000", 1)
    path = tmp_path / fixture
    path.write_text(edited, encoding="utf-8")
    assert 3.0 in [timing.seconds for timing in load_timings(path)]


def test_list_table_without_memory_reads_1000_milliseconds(tmp_path) -> None:
    text = (FIXTURES / "list_table_no_memory.rst").read_text(encoding="utf-8")
    path = tmp_path / "t.rst"
    path.write_text(text.replace("00:07.000", "00:02.1000"), encoding="utf-8")
    assert by_id(load_timings(path))["plot_rollout.py"].seconds == 3.0


def test_junit_of_the_rounded_time_reads_it_exactly(tmp_path) -> None:
    from sphinx_gallery.gen_gallery import write_junit_xml

    src = tmp_path / "src"
    costs = _sg_costs(src)
    conf = {
        "junit": "junit.xml",
        "plot_gallery": True,
        "src_dir": str(src),
        "failing_examples": {},
        "expected_failing_examples": [],
        "passing_examples": [cost.src_file for cost in costs],
        "filename_pattern": "/plot_",
        "titles": {cost.src_file: "t" for cost in costs},
    }
    write_junit_xml(conf, str(tmp_path), costs)
    timings = by_id(load_timings(tmp_path / "junit.xml"))
    assert timings["examples/plot_edge.py"].seconds == ROUNDED


def test_junit_says_each_example_ended_as_a_build_report_does(tmp_path) -> None:
    """sphinx-gallery's own writer: an expected failure (its ``<skipped>``) is failed as
    expected, a raising example failed with its error's last line, and one expected to
    fail that passed (its ``<failure>``) is ``ok``, its build failed by it."""
    from sphinx_gallery.gen_gallery import write_junit_xml
    from sphinx_gallery.gen_rst import ExampleCost

    src = tmp_path / "src"
    files = {name: str(src / "examples" / name) for name in ("a.py", "b.py", "c.py", "d.py")}
    costs = [ExampleCost(0.5, 1.0, path, str(src / "auto")) for path in files.values()]
    conf = {
        "junit": "junit.xml",
        "plot_gallery": True,
        "src_dir": str(src),
        "failing_examples": {
            files["a.py"]: "Traceback (most recent call last):\nValueError: expected\n",
            files["b.py"]: "Traceback (most recent call last):\nRuntimeError: boom\n",
        },
        "expected_failing_examples": ["examples/a.py", "examples/c.py"],
        "passing_examples": [files["c.py"], files["d.py"]],
        "filename_pattern": ".",
        "titles": dict.fromkeys(files.values(), "t"),
    }
    write_junit_xml(conf, str(tmp_path), costs)
    loaded = load_input(tmp_path / "junit.xml")
    timings = by_id(loaded.timings)
    expected, raised = timings["examples/a.py"], timings["examples/b.py"]
    assert (expected.status, expected.expected_failure) == ("failed", True)
    assert expected.status_label == "failed (expected)" and not expected.build_failure
    assert (raised.status, raised.expected_failure) == ("failed", False)
    assert raised.error == "RuntimeError: boom" and raised.build_failure
    assert timings["examples/c.py"].status == "ok"
    assert timings["examples/d.py"].status == "ok"
    assert loaded.failed_examples == [raised]
    assert loaded.build_failures() == [
        "sphinx-gallery: 1 example expected to fail did not: examples/c.py (remove them "
        "from sphinx_gallery_conf['expected_failing_examples'] in conf.py)"
    ]


def test_a_junit_xml_and_a_times_file_say_what_they_cannot_tell(tmp_path) -> None:
    """Both of sphinx-gallery's files get the note, each in its own words; a report none."""
    junit = tmp_path / "junit.xml"
    junit.write_text(
        '<testsuite><testcase file="examples/a.py" time="1.0"></testcase></testsuite>',
        encoding="utf-8",
    )
    said = load_input(junit).no_status_text()
    assert said.startswith(f"{junit}: sphinx-gallery's JUnit XML says how each example ended")
    assert "not whether its build finished or failed otherwise (-W" in said
    times = tmp_path / "sg_execution_times.rst"
    times.write_text(
        "- **00:01.000**: :ref:`sphx_glr_auto_examples_plot_a.py` (``plot_a.py``)\n",
        encoding="utf-8",
    )
    assert "does not say whether an example failed" in load_input(times).no_status_text()
    report = write_report(tmp_path / "r.json", [record("plot_a.py", 1.0)])
    assert load_input(report).no_status_text() == ""


@pytest.mark.parametrize("time", ["00:02.1001", "00:02.9999", "00:60.000", "00:02.10000"])
def test_times_sphinx_gallery_cannot_write_are_refused(time) -> None:
    with pytest.raises(InputError, match=r"is not MM:SS\.mmm"):
        parse_sg_time(time, "f.rst:3")


@pytest.mark.parametrize("budget", [-1, 0])
def test_a_budget_of_zero_or_less_is_refused_stating_the_rule(tmp_path, budget) -> None:
    """-1 was refused as "expected ... 0 or more", though 0 is refused too."""
    path = write_report(tmp_path / "r.json", [record("plot_a.py", 1.0)])
    data = json.loads(path.read_text(encoding="utf-8"))
    data["examples"][0]["budget_seconds"] = budget
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError) as excinfo:
        load_timings(path)
    assert (
        f"examples[0].budget_seconds is {budget}; expected a finite number above 0, or null "
        "for an unbounded example"
    ) in str(excinfo.value)


def test_a_gallery_file_whose_subsections_list_no_example_names_them(tmp_path) -> None:
    """A gallery's ``sg_execution_times.rst`` of one "N/A" row, as sphinx-gallery writes
    it for a gallery whose examples are all in subsections, whose subsections' files list
    none either: the error names the files that would hold its examples."""
    from docsaccel.report.inputs import judged_input

    empty = (
        ".. list-table::\n   :header-rows: 1\n\n   * - Example\n     - Time\n     - Mem (MB)\n"
        "   * - N/A\n     - N/A\n     - N/A\n"
    )
    times = tmp_path / "auto_examples" / "sg_execution_times.rst"
    subsection = times.parent / "basics" / times.name
    subsection.parent.mkdir(parents=True)
    times.write_text(empty, encoding="utf-8")
    subsection.write_text(empty, encoding="utf-8")
    with pytest.raises(InputError) as raised:
        judged_input(times)
    assert str(raised.value) == (
        f"{times}: no example could be read from this sg-rst-list-table file, nor from its "
        f"subsections' files {subsection}"
    )
