"""A budget pattern selects the same example whichever file of its build a command reads.

The project is laid out as matplotlib's docs are: ``conf.py`` in ``doc/``, two galleries
beside it (``../examples`` with subsections, ``../tutorials``). sphinx-gallery's root
``sg_execution_times.rst`` names an example by its path from ``doc/``
(``../examples/basics/plot_sleep.py``), a subsection's own file by its file name alone;
the build names it ``../examples/basics/plot_sleep.py``, at ``basics/plot_sleep.py``
inside its gallery, which a pattern matches.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.gallery_build import build, make_doc_layout, run_cli

from docsaccel.report.chart import main as chart_main
from docsaccel.report.commands import run_compare, run_history_append
from docsaccel.report.inputs import judged_input, load_input

pytestmark = pytest.mark.slow

SLEEP = "../examples/basics/plot_sleep.py"
IDS = sorted([SLEEP, "../examples/plotting/plot_line.py", "../tutorials/plot_intro.py"])
# Any run of an example that sleeps half a second is over a tenth of a second.
PATTERN_BUDGET = '[examples]\n"basics/plot_sleep.py" = 0.1\n'


def _example(path: Path, title: str, seconds: float) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    underline = "=" * len(title)
    path.write_text(f'"""\n{title}\n{underline}\n"""\nimport time\ntime.sleep({seconds})\n')


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """The project, built once in warn mode with a budget that fails no example."""
    root = tmp_path_factory.mktemp("nested")
    budget_file = 'docsaccel_budgets = "../conf/budgets.toml"\n'
    doc = make_doc_layout(root, ["auto_examples", "tutorials"], conf=budget_file)
    (root / "conf").mkdir()
    (root / "conf" / "budgets.toml").write_text('default = "7m"\n')
    for folder, title in (("examples", "Examples"), ("tutorials", "Tutorials")):
        (root / folder).mkdir()
        (root / folder / "README.rst").write_text(f"{title}\n{'=' * len(title)}\n")
    for sub in ("basics", "plotting"):
        (root / "examples" / sub).mkdir()
        (root / "examples" / sub / "README.rst").write_text(f"{sub}\n{'-' * len(sub)}\n")
    _example(root / "examples" / "basics" / "plot_sleep.py", "Sleep", 0.5)
    _example(root / "examples" / "plotting" / "plot_line.py", "Line", 0)
    _example(root / "tutorials" / "plot_intro.py", "Intro", 0)
    done = build(doc, outdir=doc / "_build" / "html")
    assert done.returncode == 0, done.output
    assert sorted(r["id"] for r in done.report["examples"]) == IDS
    budgets = root / "path.toml"
    budgets.write_text(PATTERN_BUDGET, encoding="utf-8")
    return doc, done, budgets


def _inputs(doc: Path, outdir: Path) -> list[Path]:
    """Every file of the build that lists ``plot_sleep.py``."""
    return [
        outdir,
        doc / "sg_execution_times.rst",
        doc / "auto_examples" / "basics" / "sg_execution_times.rst",
        # Its gallery's own: all its examples are in subsections, so its table is "N/A".
        doc / "auto_examples" / "sg_execution_times.rst",
        outdir / "junit.xml",
    ]


def test_a_gallery_file_of_subsections_only_is_judged_by_its_gallerys_examples(project) -> None:
    """sphinx-gallery lists no example in the ``sg_execution_times.rst`` of a gallery
    whose examples are all in subsections: read with its build's report, it stands for
    the examples of its gallery (its subsections'), not those of another gallery, and
    ``check`` gives the verdict its subsections' files give."""
    doc, _, _ = project
    times = doc / "auto_examples" / "sg_execution_times.rst"
    assert "N/A" in times.read_text(encoding="utf-8")
    loaded = judged_input(times)
    assert sorted(t.id for t in loaded.timings) == [i for i in IDS if i.startswith("../examples/")]
    assert loaded.part_of_build and loaded.build_report is not None
    said = {
        path: run_cli("check", str(path)) for path in (times, times.parent / "basics" / times.name)
    }
    for path, done_cli in said.items():
        assert done_cli.returncode == 0, (path, done_cli.stdout + done_cli.stderr)


def test_every_file_of_the_build_names_its_examples_by_the_reports_ids(project) -> None:
    doc, done, _ = project
    for path in _inputs(doc, done.outdir):
        loaded = judged_input(path)
        assert SLEEP in [t.id for t in loaded.timings], path
        sleep = next(t for t in loaded.timings if t.id == SLEEP)
        assert sleep.name == "basics/plot_sleep.py", path


def test_a_path_pattern_fails_the_example_through_every_file(project) -> None:
    doc, done, budgets = project
    for path in _inputs(doc, done.outdir):
        done_cli = run_cli("check", str(path), "--budgets", str(budgets))
        output = done_cli.stdout + done_cli.stderr
        assert done_cli.returncode == 1, (path, output)
        assert f"{SLEEP}: " in output and "matches no example" not in output, (path, output)


def test_the_reports_id_as_a_pattern_selects_it_in_its_subsections_file(project) -> None:
    doc, _, budgets = project
    by_id = budgets.with_name("id.toml")
    by_id.write_text(f'[examples]\n"{SLEEP}" = 0.1\n', encoding="utf-8")
    times = doc / "auto_examples" / "basics" / "sg_execution_times.rst"
    done_cli = run_cli("check", str(times), "--budgets", str(by_id))
    assert done_cli.returncode == 1, done_cli.stdout + done_cli.stderr
    assert "matches no example" not in done_cli.stderr, done_cli.stderr


def test_compare_and_history_know_the_example_by_one_id(project, tmp_path) -> None:
    doc, done, _ = project
    for path in _inputs(doc, done.outdir)[1:]:
        text, code = run_compare(str(path), str(done.outdir))
        assert code == 0, text
        # A subsection's file lists its own examples only: the others are new in the head.
        assert "Removed examples" not in text, (path, text)
        assert f"{SLEEP}:" not in text.partition("New examples")[2], (path, text)
        history = tmp_path / f"{path.parent.name}-{path.name}.jsonl"
        text, code = run_history_append(str(path), str(history))
        assert code == 0, text
        line = json.loads(history.read_text(encoding="utf-8").splitlines()[0])
        assert SLEEP in json.dumps(line), (path, line)


def test_every_reader_reads_a_gallery_file_of_subsections_only(project, tmp_path) -> None:
    """A gallery's own ``sg_execution_times.rst`` that ``check`` reads is read by every
    command that reads a build's files: the views of ``report`` and its ``--baseline``,
    ``compare``, ``history append``, the chart, and :func:`load_input` itself, each
    finding the gallery's examples in its subsections' files."""
    doc, done, _ = project
    times = doc / "auto_examples" / "sg_execution_times.rst"
    # Read alone, the subsections' files name each example by its file name.
    assert sorted(t.name for t in load_input(times).timings) == ["plot_line.py", "plot_sleep.py"]
    said = {
        "check": run_cli("check", str(times)),
        "md": run_cli("report", str(times), "--format", "md"),
        "html": run_cli("report", str(times), "--format", "html"),
        "json": run_cli("report", str(times), "--format", "json"),
        "baseline": run_cli("report", str(done.outdir), "--baseline", str(times)),
        "compare": run_cli("compare", str(times), str(done.outdir)),
        "history": run_cli("history", "append", str(times), "--to", str(tmp_path / "h.jsonl")),
    }
    for command, done_cli in said.items():
        assert done_cli.returncode == 0, (command, done_cli.stdout + done_cli.stderr)
    view = json.loads(said["json"].stdout)
    assert SLEEP in json.dumps(view), view
    chart = tmp_path / "chart.svg"
    assert chart_main([str(times), str(chart)]) == 0
    assert "<svg" in chart.read_text(encoding="utf-8")
