"""The shard planner, its inputs (history JSONL, report JSON) and ``docsaccel shard``."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from docsaccel.cli import main
from docsaccel.contract import InputError
from docsaccel.report.history import HISTORY_SCHEMA
from docsaccel.schema import REPORT_SCHEMA, validate_report
from docsaccel.shard import (
    ShardError,
    build_plan,
    check_index,
    discover_examples,
    load_durations,
    match_gallery,
    plan_shards,
)

# A gallery's worth of timings with a heavy tail (seconds).
TABLE = {
    **{f"plot_{n:02d}.py": round(1.5 + (n * 7919 % 97) / 9.0, 3) for n in range(40)},
    "plot_fit_model.py": 95.25,
    "plot_load_data.py": 61.5,
    "train_agent.py": 412.0,
    "render_cheetah.py": 238.75,
}


def graham_table(shards: int) -> dict[str, float]:
    """Graham's worst case for plain LPT: 2m-1, 2m-1, ..., m+1, m+1, m, m, m on m shards.

    LPT alone gives a makespan of 4m - 1 against an optimum (and lower bound) of 3m.
    """
    jobs = [2 * shards - 1 - i // 2 for i in range(2 * shards - 2)] + [shards] * 3
    return {f"ex_{i:02d}.py": float(seconds) for i, seconds in enumerate(jobs)}


def history_line(examples: dict | list, **extra) -> str:
    if isinstance(examples, dict):
        examples = {name: {"seconds": seconds} for name, seconds in examples.items()}
    return json.dumps({"schema": HISTORY_SCHEMA, "version": 1, "examples": examples, **extra})


def record(example_id: str, seconds: float, status: str = "ok") -> dict:
    gallery, name = example_id.split("/", 1)
    return {
        "schema": "docsaccel.record",
        "version": 1,
        "id": example_id,
        "gallery": gallery,
        "name": name,
        "status": status,
        "wall_seconds": seconds,
        "budget_seconds": 60.0,
        "budget_source": "default",
        "fast": True,
    }


def write_report(path: Path, records: list[dict]) -> Path:
    report = {
        "schema": REPORT_SCHEMA,
        "version": 1,
        "generated_at": "2026-11-29T17:00:00+00:00",
        "build": {"wall_seconds": 10.0, "fast": True, "on_overrun": "fail", "complete": True},
        "examples": sorted(records, key=lambda r: r["id"]),
    }
    validate_report(report, path)  # the fixture follows the documented format
    path.write_text(json.dumps(report), encoding="utf-8")
    return path


def make_gallery(root: Path, names: list[str]) -> Path:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text('"""Example."""\nprint("hi")\n', encoding="utf-8")
    return root


# Planner ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shards", [1, 2, 3, 4, 8, 16, 50])
def test_every_example_is_in_exactly_one_shard(shards) -> None:
    plan = plan_shards(TABLE, shards)
    assigned = [name for shard in plan.shards for name in shard.examples]
    assert sorted(assigned) == sorted(TABLE)
    assert len(plan.shards) == shards
    for shard in plan.shards:
        assert shard.predicted_seconds == pytest.approx(sum(TABLE[n] for n in shard.examples))
    assert plan.makespan == max(shard.predicted_seconds for shard in plan.shards)


def test_same_plan_for_any_input_order() -> None:
    items = list(TABLE.items())
    expected = plan_shards(dict(items), 4).to_json()
    rng = random.Random(7)
    for _ in range(10):
        rng.shuffle(items)
        assert plan_shards(dict(items), 4).to_json() == expected
        on_disk = [name for name, _ in items]
        assert plan_shards(dict(items), 4, examples_on_disk=on_disk).to_json() == expected


def test_ties_are_broken_by_name() -> None:
    plan = plan_shards({"b.py": 5.0, "a.py": 5.0, "d.py": 5.0, "c.py": 5.0}, 2)
    assert [shard.examples for shard in plan.shards] == [("a.py", "c.py"), ("b.py", "d.py")]


def test_lower_bound_is_longest_or_average() -> None:
    total = sum(TABLE.values())
    assert plan_shards(TABLE, 2).lower_bound == pytest.approx(total / 2)
    assert plan_shards(TABLE, 16).lower_bound == 412.0  # the longest example dominates
    assert plan_shards(TABLE, 16).makespan == 412.0


@pytest.mark.parametrize("shards", [2, 3, 4, 5, 8])
def test_improvement_pass_fixes_lpt_worst_case(shards) -> None:
    plan = plan_shards(graham_table(shards), shards)
    assert plan.lower_bound == 3 * shards
    # Plain LPT would give (4m - 1) / 3m, up to 1.31; the move/swap pass reaches the optimum.
    assert plan.makespan == 3 * shards
    assert plan.ratio == 1.0


@pytest.mark.parametrize("shards", [2, 4, 8])
def test_heavy_tailed_table_is_within_five_percent(shards) -> None:
    assert plan_shards(TABLE, shards).ratio <= 1.05


def test_unmeasured_examples_get_the_median_and_are_spread() -> None:
    measured = {"a.py": 100.0, "b.py": 100.0, "c.py": 100.0, "d.py": 10.0}
    new = [f"new_{n}.py" for n in range(6)]
    plan = plan_shards(measured, 4, examples_on_disk=[*measured, *new])
    assert plan.estimates == dict.fromkeys(new, 100.0)
    plan = plan_shards(measured, 4, examples_on_disk=[*measured, *new], estimate=lambda n: 5.0)
    assert plan.estimates == dict.fromkeys(new, 5.0)
    # Balancing alone would put all six on the shard of d.py (10 s + 6 x 5 s < 100 s);
    # estimates are guesses, so no shard takes more than ceil(6 / 4) of them.
    counts = [len(shard.estimated) for shard in plan.shards]
    assert sorted(counts) == [1, 1, 2, 2]
    assert sorted(n for shard in plan.shards for n in shard.estimated) == new


def test_estimate_none_falls_back_to_the_median() -> None:
    plan = plan_shards(
        {"a.py": 1.0, "b.py": 3.0, "c.py": 8.0},
        2,
        examples_on_disk=["a.py", "b.py", "c.py", "x.py", "y.py"],
        estimate=lambda name: 50.0 if name == "x.py" else None,
    )
    assert plan.estimates == {"x.py": 50.0, "y.py": 3.0}


def test_nothing_measured_balances_counts() -> None:
    names = [f"plot_{n}.py" for n in range(7)]
    plan = plan_shards({}, 3, examples_on_disk=names)
    assert sorted(len(shard.examples) for shard in plan.shards) == [2, 2, 3]


def test_zero_second_examples_are_spread() -> None:
    plan = plan_shards(dict.fromkeys([f"e{n}.py" for n in range(6)], 0.0), 3)
    assert [len(shard.examples) for shard in plan.shards] == [2, 2, 2]
    assert plan.ratio == 1.0


def test_measured_examples_not_on_disk_are_ignored() -> None:
    plan = plan_shards({"a.py": 3.0, "gone.py": 9.0}, 2, examples_on_disk=["a.py", "b.py"])
    assert plan.ignored == ("gone.py",)
    assert sorted(n for shard in plan.shards for n in shard.examples) == ["a.py", "b.py"]


@pytest.mark.parametrize("shards", [0, -1, True, "2", 2.0])
def test_bad_shard_count(shards) -> None:
    with pytest.raises(ShardError, match=r"shards must be an integer from 1 to 1024, got"):
        plan_shards(TABLE, shards)


@pytest.mark.parametrize(("index", "shards"), [(-1, 3), (3, 3), (True, 3)])
def test_bad_index(index, shards) -> None:
    with pytest.raises(ShardError, match=rf"index {index!r} is out of range .* use 0 to 2"):
        check_index(index, shards)


@pytest.mark.parametrize("seconds", [-1.0, float("nan"), "3", None])
def test_bad_duration_names_the_example(seconds) -> None:
    with pytest.raises(ShardError, match=r"duration of 'b.py' is .*expected seconds"):
        plan_shards({"a.py": 1.0, "b.py": seconds}, 2)


def test_empty_plan_is_an_error() -> None:
    with pytest.raises(ShardError, match="nothing to plan"):
        plan_shards({}, 2)


# Inputs ----------------------------------------------------------------------------------


def test_history_median_of_last_runs(tmp_path) -> None:
    lines = [history_line({"t/a.py": s, "t/b.py": 1.0}) for s in (10, 20, 30, 100, 1000)]
    lines.insert(2, "")  # blank lines are allowed
    lines.append(history_line({"t/c.py": 4.0}, commit="abc123"))
    path = tmp_path / "history.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert load_durations([path], runs=3) == {"t/a.py": 100.0, "t/b.py": 1.0, "t/c.py": 4.0}
    assert load_durations([path], runs=5)["t/a.py"] == 30.0
    assert load_durations([path], runs=2)["t/a.py"] == 550.0


def test_report_uses_wall_seconds_and_skips_not_executed(tmp_path) -> None:
    path = write_report(
        tmp_path / "report.json",
        [
            record("tutorials/plot_a.py", 12.5),
            record("tutorials/plot_b.py", 40.0, status="cached"),
            record("tutorials/plot_c.py", 60.0, status="interrupted"),
            record("tutorials/plot_d.py", 0.0, status="not-executed"),
        ],
    )
    assert load_durations([path]) == {
        "tutorials/plot_a.py": 12.5,
        "tutorials/plot_b.py": 40.0,
        "tutorials/plot_c.py": 60.0,
    }


def test_inputs_are_runs_in_the_order_given(tmp_path) -> None:
    report = write_report(tmp_path / "report.json", [record("t/a.py", 50.0)])
    history = tmp_path / "h.jsonl"
    history.write_text(history_line({"t/a.py": 10.0}) + "\n", encoding="utf-8")
    assert load_durations([history, report], runs=1) == {"t/a.py": 50.0}
    assert load_durations([report, history], runs=1) == {"t/a.py": 10.0}
    assert load_durations([report, history], runs=2) == {"t/a.py": 30.0}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the file is empty"),
        ("  \n\n", "the file is empty"),
        ("{not json\n", r"timings.jsonl: the report is not valid JSON"),
        (f"{history_line({'a': 1})}\nnope\n", r"jsonl:2: the history line is not valid JSON"),
        (f"{history_line({'a': 1})}\n[1, 2]\n", r"jsonl:2: not a docsaccel.history line"),
        (f"{history_line({'a': 1})}\n{{}}\n", r"jsonl:2: not a docsaccel.history line"),
        (history_line({"a": -2}), r"jsonl:1: examples\['a'\].seconds is -2"),
        (history_line({"a": True}), r"jsonl:1: examples\['a'\].seconds is True"),
        (history_line([1]), r"jsonl:1: examples must be an object, got \[1\]"),
        (history_line({}).replace('"version": 1', '"version": 9'), r"jsonl:1: version is 9"),
        ('{"schema": "other"}', r"schema is 'other', expected 'docsaccel.report'"),
        ("[1, 2]", r"unknown format: expected a docsaccel report JSON.*starts with '\[1, 2\]'"),
        ("1.5", r"unknown format.*starts with '1.5'"),
    ],
)
def test_malformed_input_names_file_and_line(tmp_path, text, message) -> None:
    path = tmp_path / "timings.jsonl"
    path.write_text(text, encoding="utf-8")
    # The one error class of unreadable inputs, whichever reader found the problem.
    with pytest.raises(InputError, match=message) as excinfo:
        load_durations([path])
    assert str(excinfo.value).startswith(f"{path}")


def test_invalid_report_is_rejected_with_its_file(tmp_path) -> None:
    path = tmp_path / "report.json"
    bad = record("t/a.py", 3.0, status="done")
    path.write_text(
        json.dumps(
            {"schema": REPORT_SCHEMA, "version": 1, "build": {"complete": True}, "examples": [bad]}
        ),
        encoding="utf-8",
    )
    with pytest.raises(InputError, match=r"report.json: examples\[0\].status is 'done'"):
        load_durations([path])


def test_unreadable_input(tmp_path) -> None:
    with pytest.raises(InputError, match=r"missing.json: cannot read"):
        load_durations([tmp_path / "missing.json"])
    binary = tmp_path / "times.bin"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InputError, match=r"times.bin: the input is not UTF-8"):
        load_durations([binary])


# Gallery on disk -------------------------------------------------------------------------


def test_discover_examples_follows_sphinx_gallery(tmp_path) -> None:
    names = ["plot_a.py", "b.py", "sub/plot_c.py", "__init__.py", "_helper.py", "_data/x.py"]
    names += ["sub/data/deep.py", "loose/plot_d.py", "later/plot_e.py"]
    gallery = make_gallery(tmp_path / "tutorials", names)
    for header in ("README.rst", "sub/README.txt", "_data/GALLERY_HEADER.rst", "later/README.txt"):
        (gallery / header).write_text("Gallery\n=======\n", encoding="utf-8")
    # sphinx-gallery's build walk with its defaults: sub-galleries have a header
    # ("loose/" has none), one level deep ("sub/data/" is not walked, and does not end
    # the walk before "later/"), every .py file but __init__.py.
    assert discover_examples(gallery) == [
        "_data/x.py",
        "_helper.py",
        "b.py",
        "later/plot_e.py",
        "plot_a.py",
        "sub/plot_c.py",
    ]


def test_discover_examples_errors(tmp_path) -> None:
    with pytest.raises(ShardError, match=r"'.*nowhere' does not exist"):
        discover_examples(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ShardError, match=r"has no example"):
        discover_examples(tmp_path / "empty")


def test_report_ids_match_files_in_the_gallery(tmp_path) -> None:
    names = ["plot_a.py", "sub/plot_b.py", "plot_c.py", "plot_d.py"]
    durations = {
        "tutorials/plot_a.py": 1.0,
        "tutorials/sub/plot_b.py": 2.0,
        "../docs/tutorials/plot_c.py": 3.0,  # an examples dir outside the conf dir
        "plot_d.py": 4.0,  # a bare path inside the gallery
        "examples/plot_a.py": 9.0,  # another gallery
    }
    matched, unmatched = match_gallery(durations, tmp_path / "docs" / "tutorials", names)
    assert matched == {"plot_a.py": 1.0, "sub/plot_b.py": 2.0, "plot_c.py": 3.0, "plot_d.py": 4.0}
    assert unmatched == ("examples/plot_a.py",)


def test_two_times_for_one_file_is_an_error(tmp_path) -> None:
    with pytest.raises(ShardError, match=r"two times for 'plot_a.py'"):
        match_gallery(
            {"plot_a.py": 1.0, "tutorials/plot_a.py": 2.0}, tmp_path / "tutorials", ["plot_a.py"]
        )


def test_budgets_estimate_unmeasured_examples(tmp_path, monkeypatch) -> None:
    gallery = make_gallery(tmp_path / "tutorials", ["plot_a.py", "plot_b.py", "mujoco_c.py"])
    (gallery / "plot_new.py").write_text('# docsaccel_budget = "45s"\n', encoding="utf-8")
    budgets = tmp_path / "budgets.toml"
    budgets.write_text(
        'default = "2m"\nci_factor = 3\n[examples]\n"mujoco_*.py" = "5m"\n', encoding="utf-8"
    )
    report = write_report(tmp_path / "report.json", [record("tutorials/plot_a.py", 10.0)])
    monkeypatch.setenv("CI", "true")  # the plan must not depend on the CI factor
    plan = build_plan([report], 2, gallery_dir=gallery, budgets=budgets)
    assert plan.estimates == {"mujoco_c.py": 300.0, "plot_b.py": 120.0, "plot_new.py": 45.0}
    assert plan.lower_bound == 300.0


def test_budgets_need_a_gallery(tmp_path) -> None:
    with pytest.raises(ShardError, match="--budgets needs --gallery-dir"):
        build_plan([], 2, budgets=tmp_path / "budgets.toml")


# Command line ----------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path) -> tuple[Path, Path]:
    names = [f"plot_{n}.py" for n in range(7)] + ["sub/plot_deep.py"]
    gallery = make_gallery(tmp_path / "docs" / "tutorials", names)
    history = tmp_path / "history.jsonl"
    runs = [{f"tutorials/plot_{n}.py": float(10 * n + k) for n in range(5)} for k in range(3)]
    history.write_text("".join(history_line(run) + "\n" for run in runs), encoding="utf-8")
    return gallery, history


def test_cli_prints_each_shard(project, capsys) -> None:
    gallery, history = project
    printed = []
    for index in range(3):
        args = ["shard", "--shards", "3", "--index", str(index), str(history)]
        assert main([*args, "--gallery-dir", str(gallery)]) == 0
        printed.append(capsys.readouterr().out.split())
    assert sorted(name for names in printed for name in names) == discover_examples(gallery)
    assert all(printed)


def test_cli_plan_json(project, capsys) -> None:
    gallery, history = project
    args = ["shard", "--shards", "2", "--plan", "--json", str(history)]
    assert main([*args, "--gallery-dir", str(gallery)]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["lower_bound"] == max(40.0 + 1, (1 + 11 + 21 + 31 + 41 + 3 * 21) / 2)
    assert plan["makespan"] == max(shard["predicted_seconds"] for shard in plan["shards"])
    assert sorted(plan["estimates"]) == ["plot_5.py", "plot_6.py", "sub/plot_deep.py"]
    assert set(plan["estimates"].values()) == {21.0}  # the median of the measured ones


@pytest.mark.parametrize("extra", [["--plan", "--json"], ["--index", "0"]])
def test_a_closed_pipe_ends_the_command_quietly(project, extra) -> None:
    """``docsaccel shard --plan --json | head -1``: the reader gone, the command ends with
    128 + SIGPIPE and no traceback, whatever it was printing."""
    gallery, history = project
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone before the first line is written
    try:
        args = ["shard", "--shards", "2", *extra, str(history), "--gallery-dir", str(gallery)]
        done = subprocess.run(
            [sys.executable, "-m", "docsaccel.cli", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    finally:
        os.close(write_end)
    assert done.stderr == ""
    assert done.returncode == 128 + signal.SIGPIPE


def test_cli_plan_text_and_ids_as_given(project, capsys) -> None:
    _, history = project
    assert main(["shard", "--shards", "2", "--plan", str(history)]) == 0
    assert "makespan" in capsys.readouterr().out
    assert main(["shard", "--shards", "1", "--index", "0", str(history)]) == 0
    assert capsys.readouterr().out.split() == [f"tutorials/plot_{n}.py" for n in range(5)]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--index", "3"], "shard index 3 is out of range for 3 shards; use 0 to 2"),
        ([], "give --index I"),
        (["--index", "0", "--json"], "--json prints the whole plan"),
        (["--index", "0", "missing.jsonl"], "missing.jsonl: cannot read"),
        (["--index", "0", "--runs", "0"], "runs must be an integer >= 1, got 0"),
    ],
)
def test_cli_errors_exit_2(project, capsys, extra, message) -> None:
    _, history = project
    assert main(["shard", "--shards", "3", *extra, str(history)]) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert captured.out == ""


def test_cli_malformed_line_names_file_and_line(project, capsys) -> None:
    _, history = project
    with history.open("a", encoding="utf-8") as stream:
        stream.write("{oops\n")
    assert main(["shard", "--shards", "2", "--index", "0", str(history)]) == 2
    assert f"{history}:4: the history line is not valid JSON" in capsys.readouterr().err


def test_shard_builds_plan_the_examples_sphinx_gallery_sees(tmp_path) -> None:
    from docsaccel.shard import build_gallery_plan
    from docsaccel.shard.build import read_project

    docs = tmp_path / "docs"
    (docs / "examples" / "sub").mkdir(parents=True)
    (docs / "conf.py").write_text(
        'sphinx_gallery_conf = {"examples_dirs": ["examples"], "gallery_dirs": ["auto"],\n'
        '                       "ignore_pattern": r"skip_"}\n',
        encoding="utf-8",
    )
    for name in ("plot_a.py", "_helper.py", "skip_me.py", "sub/plot_b.py"):
        (docs / "examples" / name).write_text("print(1)\n", encoding="utf-8")
    project = read_project(docs, tmp_path)
    # sphinx-gallery's own rule: its ignore_pattern, not a guess from the file names.
    assert project.example_names(docs / "examples") == ["_helper.py", "plot_a.py", "sub/plot_b.py"]
    plan = build_gallery_plan(
        [], 2, {"examples": docs / "examples"}, list_examples=project.example_names
    )
    planned = sorted(name for shard in plan.shards for name in shard.examples)
    assert planned == ["examples/_helper.py", "examples/plot_a.py", "examples/sub/plot_b.py"]


def test_cli_plans_a_gallery_with_its_conf_py_patterns(tmp_path, capsys) -> None:
    """``--conf-dir`` plans the files the build runs: ``conf.py``'s ``ignore_pattern``
    and ``example_extensions``, not sphinx-gallery's defaults."""
    docs = tmp_path / "docs"
    gallery = make_gallery(docs / "examples", ["plot_a.py", "skip_me.py", "plot_c.pyw"])
    (docs / "conf.py").write_text(
        'sphinx_gallery_conf = {"examples_dirs": ["examples"], "gallery_dirs": ["auto"],\n'
        '                       "ignore_pattern": r"skip_",\n'
        '                       "example_extensions": {".py", ".pyw"}}\n',
        encoding="utf-8",
    )
    args = ["shard", "--shards", "1", "--index", "0", "--gallery-dir", str(gallery)]

    assert main([*args, "--conf-dir", str(docs)]) == 0
    assert capsys.readouterr().out.split() == ["plot_a.py", "plot_c.pyw"]
    assert main(args) == 0  # sphinx-gallery's defaults
    assert capsys.readouterr().out.split() == ["plot_a.py", "skip_me.py"]


def test_cli_conf_dir_needs_a_gallery_and_a_conf_py(tmp_path, capsys) -> None:
    gallery = make_gallery(tmp_path / "examples", ["plot_a.py"])
    assert main(["shard", "--shards", "1", "--plan", "--conf-dir", str(tmp_path)]) == 2
    assert "--conf-dir needs --gallery-dir" in capsys.readouterr().err
    args = ["shard", "--shards", "1", "--plan", "--gallery-dir", str(gallery)]
    assert main([*args, "--conf-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "conf.py: no such file" in err and len(err.strip().splitlines()) == 1


# Copying the project into a shard's workspace ---------------------------------------------


def _project_tree(root: Path):
    """A project whose root holds sources beside the outputs of earlier builds."""
    from docsaccel.shard.build import DocsProject

    docs = root / "docs"
    sources = ["docs/conf.py", "docs/examples/plot_a.py", "data/table.csv", "build/notes.txt"]
    outputs = {
        "docs/_build/html/index.html": "",  # the docs' own build folder
        "docs/auto/plot_a.rst": "",  # a gallery's output
        "_build/x/.buildinfo": "",  # sphinx-build source _build/x
        "_build/x/index.html": "",
        "build/doctrees/environment.pickle": "",  # sphinx-build -M: its doctrees
        "out/site/docsaccel/build.lock": "",  # a docsaccel build's output folder
        "given/index.html": "",  # named by the caller
    }
    for relative in [*sources, *outputs]:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text("x\n", encoding="utf-8")
    project = DocsProject(root, docs, {"examples": "auto"}, None)
    return project, sources


def _files(root: Path) -> list[str]:
    """The files under ``root`` but the copy's root marker (docsaccel's, no source)."""
    from docsaccel.layout import COPY_ROOT_MARKER

    found = (p for p in root.rglob("*") if not p.is_dir() and p.name != COPY_ROOT_MARKER)
    return sorted(p.relative_to(root).as_posix() for p in found)


@pytest.mark.parametrize("marker", [".git", "pyproject.toml", None])
def test_the_copy_has_the_project_root_where_the_project_has_it(tmp_path, marker) -> None:
    """The copy sits inside the project's repository (``<docs>/_build/shard-work``): its
    root is its own, at the place of the project's, so the example cache's paths relative
    to it match a serial build's."""
    from docsaccel.cache.deps import find_root
    from docsaccel.shard.build import copy_project

    project, _ = _project_tree(tmp_path / "root")
    if marker == ".git":
        (project.root / ".git").mkdir()
    elif marker is not None:
        (project.root / marker).write_text("", encoding="utf-8")
    copy = copy_project(project, project.docs / "_build" / "shard-work" / "0" / "project")
    real_root = Path(find_root(project.docs)).relative_to(project.root)
    assert Path(find_root(copy.docs)).relative_to(copy.root) == real_root


def test_copy_project_copies_sources_not_build_outputs(tmp_path) -> None:
    from docsaccel.shard.build import copy_project

    project, sources = _project_tree(tmp_path / "root")
    copy = copy_project(project, tmp_path / "copy", [project.root / "given"])
    assert _files(tmp_path / "copy") == sorted(sources)
    assert not (tmp_path / "copy" / "_build").exists()  # Sphinx's build folder by name
    assert copy.docs == (tmp_path / "copy" / "docs").resolve()


def test_copy_project_leaves_out_named_pipes_and_sockets(tmp_path) -> None:
    """An interrupted build leaves its progress pipe; shutil.copytree cannot copy one."""
    import socket

    from docsaccel.shard.build import copy_project

    project, sources = _project_tree(tmp_path / "root")
    records = project.root / "_build" / "y" / "docsaccel" / "records"
    records.mkdir(parents=True)
    os.mkfifo(records / "progress-123.pipe")  # an interrupted build's output folder
    os.mkfifo(project.docs / "stray.pipe")  # one among the sources
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(project.root / "data" / "s.sock"))
        copy_project(project, tmp_path / "copy")
    assert _files(tmp_path / "copy") == sorted([*sources, "given/index.html"])


def test_copy_project_error_is_one_line_naming_the_file(tmp_path, monkeypatch) -> None:
    import errno
    import shutil

    from docsaccel.shard.build import copy_project

    project, _ = _project_tree(tmp_path / "root")
    real = shutil.copystat

    def failing(source, destination, **kwargs):
        if Path(source).name == "table.csv":
            raise OSError(errno.EIO, "Input/output error", str(source))
        return real(source, destination, **kwargs)

    monkeypatch.setattr(shutil, "copystat", failing)
    with pytest.raises(ShardError) as caught:
        copy_project(project, tmp_path / "copy")
    message = str(caught.value)
    assert "\n" not in message
    assert str(project.root / "data" / "table.csv") in message
    assert "Input/output error" in message


def test_stop_all_stops_the_builds_and_refuses_new_ones_until_resume() -> None:
    """What ``shard-local`` does on Ctrl-C: every build's process group is signalled and
    waited for, and no build starts until the threads that ran them have returned."""
    import sys
    import threading

    from docsaccel.shard import sphinx_runs

    codes: list[int] = []
    sleeper = [sys.executable, "-c", "import time; time.sleep(120)"]
    thread = threading.Thread(target=lambda: codes.append(sphinx_runs.run_build(sleeper, {})))
    thread.start()
    for _ in range(600):  # until the thread has started the build (a guard, not a timing)
        if sphinx_runs._running:
            break
        thread.join(0.05)
    try:
        sphinx_runs.stop_all()
        thread.join(60)
        assert not thread.is_alive() and codes and codes[0] != 0
        with pytest.raises(sphinx_runs.Stopped):
            sphinx_runs.run_build(sleeper, {})
    finally:
        sphinx_runs.resume()
    assert sphinx_runs.run_build([sys.executable, "-c", "pass"], {}) == 0


def _restored_history(tmp_path) -> Path:
    """Two full builds of 7 examples, 6 of them restored from the example cache."""
    examples = {
        f"tutorials/plot_{n}.py": {"seconds": 10.0 + n, "status": "cached"} for n in range(6)
    }
    examples["tutorials/plot_new.py"] = {"seconds": 4.0, "status": "ok"}
    path = tmp_path / "h.jsonl"
    line = {"schema": HISTORY_SCHEMA, "version": 1, "fast": False, "examples": examples}
    lines = [json.dumps(line)] * 2
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_every_example_a_history_names_is_planned(tmp_path, capsys) -> None:
    history = _restored_history(tmp_path)
    plan = build_plan([history], 2)
    planned = sorted(name for shard in plan.shards for name in shard.examples)
    assert planned == sorted(
        [*(f"tutorials/plot_{n}.py" for n in range(6)), "tutorials/plot_new.py"]
    )
    # No whole run of the restored ones in the history: estimated (the measured median).
    assert plan.estimates == {f"tutorials/plot_{n}.py": 4.0 for n in range(6)}
    assert main(["shard", "--shards", "2", "--index", "1", str(history)]) == 0
    assert capsys.readouterr().out.split()


def test_an_empty_shard_says_so(tmp_path, capsys) -> None:
    history = tmp_path / "h.jsonl"
    history.write_text(history_line({"t/a.py": 3.0}) + "\n", encoding="utf-8")
    assert main(["shard", "--shards", "2", "--index", "1", str(history)]) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "docsaccel shard: shard 1 of 2 has no example to run (the plan has 1 example for "
        "2 shards)\n"
    )


# Arguments checked before anything is removed --------------------------------------------


@pytest.fixture
def built(tmp_path, monkeypatch) -> Path:
    """A project whose last build left a site and its report (as after ``shard-local``)."""
    from helpers.gallery_build import make_project

    src = make_project(tmp_path, ["plot_quick.py"])
    report = src / "_build" / "html" / "docsaccel" / "report.json"
    report.parent.mkdir(parents=True)
    report.write_text("{}", encoding="utf-8")
    monkeypatch.chdir(src)
    return src


def _refused(capsys, args: list[str], message: str) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err, err
    assert len(err.splitlines()) == 1, err


def test_a_mistyped_merge_folder_keeps_the_last_report(built, capsys) -> None:
    missing = built.parent / "nonexistent"
    _refused(capsys, ["shard-merge", "--docs", ".", str(missing)], f"{missing}: no such folder")
    assert (built / "_build" / "html" / "docsaccel" / "report.json").is_file()


def test_a_folder_of_no_artifact_keeps_the_last_report(built, capsys) -> None:
    (built.parent / "empty").mkdir()
    _refused(capsys, ["shard-merge", "--docs", ".", "../empty"], "no shard artifact")
    assert (built / "_build" / "html" / "docsaccel" / "report.json").is_file()


def test_a_missing_input_of_shard_local_keeps_the_last_report(built, capsys) -> None:
    artifacts = built / "_build" / "shard-artifacts" / "docs-shard-0"
    artifacts.mkdir(parents=True)
    _refused(capsys, ["shard-local", "--docs", ".", "--shards", "2", "gone.jsonl"], "gone.jsonl")
    assert (built / "_build" / "html" / "docsaccel" / "report.json").is_file()
    assert artifacts.is_dir()


def test_shard_build_refuses_an_artifact_folder_holding_other_files(built, capsys) -> None:
    args = ["shard-build", "--docs", ".", "--shards", "1", "--index", "0", "--artifact", "."]
    _refused(capsys, args, "is not a shard artifact folder (it holds '_build'")
    assert (built / "conf.py").is_file() and (built / "examples" / "plot_quick.py").is_file()


def _shard_report(tmp_path: Path, index: int, **build: object) -> dict:
    from helpers.report_factory import record as make_record
    from helpers.report_factory import write_report

    path = write_report(tmp_path / f"shard{index}.json", [make_record(f"plot_{index}.py", 1.0)])
    report = json.loads(path.read_text("utf-8"))
    report["build"].update(build)
    return report


@pytest.mark.parametrize("failing", [0, 1])
def test_a_merged_report_keeps_why_any_shard_failed(tmp_path, failing) -> None:
    """A sharded build stopped before its merge: why a shard's build failed although its
    examples ran is in the merged report, whichever shard said it, and the gate fails."""
    from docsaccel.report.commands import run_check
    from docsaccel.shard.build import merged_report

    why = "Sphinx gave 1 warning, treated as errors (-W)"
    reports = [
        _shard_report(tmp_path, index, **({"sphinx_failed": why} if index == failing else {}))
        for index in range(2)
    ]
    merged = merged_report(reports, 2, tmp_path / "merged.json", errors=["shard 1 failed"])
    assert merged["build"]["sphinx_failed"] == why
    path = tmp_path / "merged.json"
    path.write_text(json.dumps(merged), "utf-8")
    out, code = run_check([str(path)])
    assert code == 3 and why in out.splitlines()[0], out


def test_a_merged_report_counts_the_warnings_of_every_shard(tmp_path) -> None:
    """Two shards that ``-W`` failed on one warning each: the merged report says two, as
    a serial build of both would, not one shard's line once."""
    from docsaccel.shard.build import merged_report

    why = "Sphinx gave 1 warning, treated as errors (-W)"
    reports = [_shard_report(tmp_path, index, sphinx_failed=why) for index in range(2)]
    merged = merged_report(reports, 2, tmp_path / "merged.json")
    assert merged["build"]["sphinx_failed"] == "Sphinx gave 2 warnings, treated as errors (-W)"


def test_a_merged_report_of_shards_that_failed_without_saying_why_fails(tmp_path) -> None:
    from docsaccel.shard.build import merged_report

    reports = [_shard_report(tmp_path, index) for index in range(2)]
    assert "sphinx_failed" not in merged_report(reports, 2, tmp_path / "m.json")["build"]
    merged = merged_report(
        reports, 2, tmp_path / "m.json", errors=["shard 1: sphinx-build exited 2"]
    )
    assert merged["build"]["sphinx_failed"] == (
        "a shard's build failed: shard 1: sphinx-build exited 2"
    )


@pytest.mark.parametrize(
    ("command", "out", "message"),
    [
        ("shard-local", "_static/site", "is inside a folder copied into the site as static"),
        ("shard-local", "../extra", "is a folder copied into the site as extra files"),
        ("shard-merge", "_templates/html", "is inside a folder read as templates"),
    ],
)
def test_a_site_folder_among_the_conf_folders_is_refused_up_front(
    built, capsys, command, out, message
) -> None:
    # The merge build would copy the site into itself, or read it as templates.
    for folder in ("_static", "../extra", "_templates"):
        (built / folder).mkdir()
    conf = 'html_static_path = ["_static"]\nhtml_extra_path = ["../extra"]\n'
    with (built / "conf.py").open("a", encoding="utf-8") as stream:
        stream.write(f'{conf}templates_path = ["_templates"]\n')
    args = ["--shards", "2"] if command == "shard-local" else ["_build/shard-artifacts"]
    _refused(
        capsys,
        [command, "--docs", ".", "--out", out, *args],
        f"--out {(built / out).resolve()} {message}",
    )
    assert (built / "_build" / "html" / "docsaccel" / "report.json").is_file()
    assert not (built / "_build" / "shard-work").exists()
    assert not (built / out).exists() or out == "../extra"


@pytest.mark.parametrize(
    ("command", "out", "message"),
    [
        ("shard-local", ".", "is the Sphinx conf folder"),
        ("shard-local", "..", "holds the Sphinx conf folder"),
        ("shard-local", "examples/site", "is inside an examples folder"),
        ("shard-local", "auto_examples", "is a gallery folder"),
        ("shard-merge", ".", "is the Sphinx conf folder"),
    ],
)
def test_a_site_folder_among_the_sources_is_refused_up_front(
    built, capsys, command, out, message
) -> None:
    args = ["--shards", "2"] if command == "shard-local" else ["_build/shard-artifacts"]
    _refused(
        capsys,
        [command, "--docs", ".", "--out", out, *args],
        f"--out {(built / out).resolve()} {message}",
    )
    assert (built / "_build" / "html" / "docsaccel" / "report.json").is_file()
    assert not (built / "_build" / "shard-work").exists()
