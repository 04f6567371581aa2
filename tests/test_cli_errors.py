"""Every command turns every bad input, output path and resource limit into exit 2.

Exit 1 means "over budget" or "regression": a crash that exits 1 (or a traceback) would
read as a verdict. Each case runs the command in-process through ``docsaccel.cli.main``
and asserts the exit code, one line on stderr naming the problem, and no traceback; a few
run as real subprocesses too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers.report_factory import record, write_report

from docsaccel.budgets import BudgetTable
from docsaccel.cli import main
from docsaccel.contract import UNFINISHED_ERROR, is_stopped_hard
from docsaccel.examples import Example
from docsaccel.gallery.hook import hard_stop_message, interruption_message

DEEP = 100_000


def _report_text(records: list[dict], **build) -> str:
    return json.dumps(
        {
            "schema": "docsaccel.report",
            "version": 1,
            "build": {"wall_seconds": 10.0, "complete": True, **build},
            "examples": records,
        }
    )


def _with(key: str, value: object) -> str:
    return _report_text([record("plot_a.py", 1.0, **{key: value})])


BAD_JSON = {
    "empty.json": "",
    "blank.json": "  \n\n",
    "truncated.json": '{"schema": "docsaccel.report", "exam',
    "nested.json": "[" * DEEP + "]" * DEEP,
    "nested_mild.json": '{"schema": "docsaccel.report", "version": 1, "build": {}, '
    '"examples": ' + "[" * 200 + "]" * 200 + "}",
    "wrong_schema.json": json.dumps({"schema": "other", "version": 1}),
    "list.json": "[1, 2]",
    "version0.json": _report_text([]).replace('"version": 1', '"version": 0'),
    "version-1.json": _report_text([]).replace('"version": 1', '"version": -1'),
    "version_big.json": _report_text([]).replace('"version": 1', '"version": 10' + "0" * 400),
    "nan_time.json": _with("wall_seconds", 1.0).replace(
        '"wall_seconds": 1.0', '"wall_seconds": NaN'
    ),
    "inf_time.json": _with("wall_seconds", 1.0).replace(
        '"wall_seconds": 1.0', '"wall_seconds": 1e999'
    ),
    "ninf_budget.json": _with("budget_seconds", 1.0).replace(
        '"budget_seconds": 1.0', '"budget_seconds": -Infinity'
    ),
    "huge_int_time.json": _with("wall_seconds", 10**400),
    "zero_budget.json": _with("budget_seconds", 0),
    "negative_budget.json": _with("budget_seconds", -5),
    "negative_time.json": _with("wall_seconds", -1),
    "string_time.json": _with("wall_seconds", "1.0"),
    "bool_fast.json": _with("fast", "yes"),
    "bad_status.json": _with("status", "done"),
    "bad_complete.json": _report_text([record("plot_a.py", 1.0)], complete="no"),
    "duplicate_ids.json": _report_text([record("plot_a.py", 1.0), record("plot_a.py", 2.0)]),
    "bad_rst.rst": "Computation times\n\n- **00:01.2**: :ref:`x` (``plot_a.py``)\n",
    "bad_memory.rst": (
        "- **00:01.000**: :ref:`sphx_glr_a_plot_a.py` (``plot_a.py``) " + "9" * 400 + " MB\n"
    ),
    "bad_junit.xml": '<testsuite><testcase file="a.py" time="nan"/></testsuite>',
    "junit_inf.xml": '<testsuite><testcase file="a.py" time="1e999"/></testsuite>',
    "not_xml.xml": "<testsuite><testcase",
    "prose.txt": "hello\n",
}
# (file name, bytes): inputs that are not text.
BAD_BYTES = {"binary.bin": b"\x00\xff\xfe\x89PNG\r\n", "latin1.rst": "- **é".encode("latin-1")}

BAD_BUDGETS = {
    "huge.toml": 'default = "1e10"\n',
    "huge_int.toml": "default = 10000000000\n",
    "eight_days.toml": 'default = "193h"\n',
    "huge_fast.toml": 'default = "1m"\n[examples]\n"a.py" = { budget = "1m", fast = 1e12 }\n',
    "inf.toml": "default = inf\n",
    "nan.toml": "default = nan\n",
    "zero.toml": "default = 0\n",
    "ci_factor.toml": 'default = "1m"\nci_factor = 1e300\n',
    "bad_toml.toml": "default = \n",
    "unknown_key.toml": 'defualt = "1m"\n',
    "none_default.toml": 'default = "none"\n',
    "deep.toml": "x = " + "[" * 5000 + "]" * 5000 + "\n",
    "digits.toml": "default = " + "9" * 5000 + "\n",
}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bad")
    for name, text in BAD_JSON.items():
        (root / name).write_text(text, encoding="utf-8")
    for name, data in BAD_BYTES.items():
        (root / name).write_bytes(data)
    for name, text in BAD_BUDGETS.items():
        (root / name).write_text(text, encoding="utf-8")
    (root / "folder").mkdir()
    write_report(root / "good.json", [record("plot_a.py", 1.0), record("plot_b.py", 2.0)])
    return root


def run(args: list[str], capsys) -> tuple[int, str, str]:
    """``main(args)`` with argparse's own exit turned into its code, and the output."""
    try:
        code = main(args)
    except SystemExit as exc:  # argparse usage errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def assert_exit_2(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines, "no message"
    for needle in needles:
        assert needle in err, (needle, err)


INPUT_NAMES = [*BAD_JSON, *BAD_BYTES, "folder", "missing.json"]


@pytest.mark.parametrize("name", INPUT_NAMES)
@pytest.mark.parametrize("command", ["check", "report", "report-json", "compare", "history"])
def test_every_bad_input_of_every_reading_command_exits_2(files, capsys, command, name):
    path = str(files / name)
    good = str(files / "good.json")
    args = {
        "check": ["check", path],
        "report": ["report", path],
        "report-json": ["report", good, "--baseline", path, "--format", "json"],
        "compare": ["compare", good, path],
        "history": ["history", "append", path, "--to", str(files / "out" / f"{name}.jsonl")],
    }[command]
    code, out, err = run(args, capsys)
    assert_exit_2(code, err, name)
    assert len([line for line in err.splitlines() if line.strip()]) == 1, err
    assert out == ""


@pytest.mark.parametrize("name", INPUT_NAMES)
def test_every_bad_input_of_shard_exits_2(files, capsys, name) -> None:
    code, _, err = run(["shard", "--shards", "2", "--plan", str(files / name)], capsys)
    assert_exit_2(code, err, name)


@pytest.mark.parametrize("name", [*BAD_BUDGETS, "binary.bin", "folder", "missing.toml"])
def test_every_bad_budget_file_exits_2(files, capsys, name) -> None:
    good = str(files / "good.json")
    code, _, err = run(["check", good, "--budgets", str(files / name)], capsys)
    assert_exit_2(code, err, name)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["check", "{good}", "--budget", "8d"], "--budget"),
        (["check", "{good}", "--budget", "1e10"], "7 days"),
        (["check", "{good}", "--budget", "nan"], "--budget"),
        (["check", "{good}", "--budget", "-1"], "--budget"),
        (["report", "{good}", "--top", "0"], "top"),
        (["report", "{good}", "--last", "0", "--history", "{good}"], "--last"),
        (["report", "{good}", "-o", "/nonexistent/dir/x.html"], "/nonexistent/dir/x.html"),
        (
            ["report", "{good}", "-o", "{root}/nowhere/dir/x.md"],
            "{root}/nowhere/dir/x.md: cannot write the output: its folder {root}/nowhere/dir "
            "does not exist; create it first",
        ),
        (["report", "{good}", "-o", "{root}/folder"], "folder"),
        (["compare", "{good}", "{good}", "--relative", "nan"], "relative"),
        (["compare", "{good}", "{good}", "--absolute", "-1"], "absolute"),
        (["compare", "{good}", "{good}", "--absolute", "inf"], "absolute"),
        (
            ["compare", "{good}", "{good}", "--relative", "-5"],
            "--relative: must be a number of 0 or more, got '-5'",
        ),
        (["compare", "{good}", "{good}", "--absolute", "-1.5"], "got '-1.5'"),
        (["history", "append", "{good}", "--to", "{root}/folder"], "folder"),
        (["history", "append", "{good}", "--to", "{good}/sub.jsonl"], "sub.jsonl"),
        (
            ["history", "append", "{good}", "--to", "{root}/nowhere/dir/h.jsonl"],
            "its folder {root}/nowhere/dir does not exist; create it first",
        ),
        (["shard", "--shards", "1000000000", "--plan", "{good}"], "1024"),
        (["shard", "--shards", "0", "--plan", "{good}"], "shards"),
        (["shard", "--shards", "-3", "--index", "0", "{good}"], "shards"),
        (["shard", "--shards", "2", "--index", "5", "{good}"], "index"),
        (["shard", "--shards", "2", "--plan", "--runs", "0", "{good}"], "runs"),
        (["shard", "--shards", "2", "--plan"], "nothing to plan"),
        (["shard", "--shards", "2", "--plan", "--gallery-dir", "{root}/nowhere"], "nowhere"),
        (["shard", "--shards", "abc", "--plan"], "abc"),
        (["check"], "INPUT"),
    ],
)
def test_bad_arguments_and_output_paths_exit_2(files, capsys, args, needle) -> None:
    good, root = str(files / "good.json"), str(files)
    args = [arg.format(good=good, root=root) for arg in args]
    code, _, err = run(args, capsys)
    assert_exit_2(code, err, needle.format(good=good, root=root))


def test_html_report_without_matplotlib_names_the_extra(files, capsys, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now fails
    code, out, err = run(["report", str(files / "good.json"), "--format", "html"], capsys)
    assert_exit_2(code, err, 'pip install "docsaccel[report]"')
    assert len(err.strip().splitlines()) == 1 and out == ""


def test_json_view_is_strict_json(files, capsys) -> None:
    code, out, _ = run(["report", str(files / "good.json"), "--format", "json"], capsys)
    assert code == 0
    json.loads(out, parse_constant=lambda name: pytest.fail(f"{name} in the JSON view"))


def test_budget_file_with_a_byte_order_mark_is_read(files, capsys, tmp_path) -> None:
    budgets = tmp_path / "budgets.toml"
    budgets.write_bytes('default = "1.5s"\n'.encode("utf-8-sig"))
    code, out, err = run(["check", str(files / "good.json"), "--budgets", str(budgets)], capsys)
    assert code == 1, err
    assert "plot_b.py" in out and "plot_a.py" not in out


def test_inputs_with_a_byte_order_mark_are_read(files, capsys, tmp_path) -> None:
    report = tmp_path / "r.json"
    report.write_bytes((files / "good.json").read_text(encoding="utf-8").encode("utf-8-sig"))
    history = tmp_path / "h.jsonl"
    assert run(["history", "append", str(report), "--to", str(history)], capsys)[0] == 0
    bom_history = tmp_path / "bom.jsonl"
    bom_history.write_bytes(history.read_bytes().decode().encode("utf-8-sig"))
    code, _, err = run(["shard", "--shards", "2", "--plan", str(bom_history)], capsys)
    assert code == 0, err
    assert run(["report", str(report), "--history", str(bom_history)], capsys)[0] == 0


# A build that stopped early ---------------------------------------------------------------


def _incomplete(path: Path, running: bool = True, stopped_hard: bool = False) -> Path:
    records = [record("plot_a.py", 1.0)]
    if running:
        records.append(
            record("plot_b.py", 0.5, status="failed", error=UNFINISHED_ERROR, finished_at=None)
        )
    if stopped_hard:
        records.append(_stopped_hard("plot_x.py"))
    path.write_text(_report_text(records, complete=False), encoding="utf-8")
    return path


def _example(name: str) -> Example:
    budget = BudgetTable().resolve(name, "")
    return Example("tutorials", name, name, name, name, True, budget)


def _stopped_hard(name: str) -> dict:
    """The record the hook writes at the hard stop, with its own message."""
    error = hard_stop_message(_example(name), 4.2, 1.0)
    return record(name, 4.2, budget=3.0, status="interrupted", error=error)


def test_check_refuses_an_incomplete_build_naming_the_running_example(tmp_path, capsys):
    path = _incomplete(tmp_path / "r.json")
    code, out, err = run(["check", str(path)], capsys)
    assert_exit_2(code, err, str(path), "did not finish", "tutorials/plot_b.py was running")
    assert "--allow-incomplete" in err and out == ""


def test_check_allow_incomplete_judges_what_the_report_holds(tmp_path, capsys) -> None:
    """The examples an unfinished build holds are judged (budgets listed), but the build
    did not finish, so it failed (exit 3), said first."""
    path = _incomplete(tmp_path / "r.json", running=False)
    code, out, _ = run(["check", str(path), "--allow-incomplete"], capsys)
    assert code == 3, out
    assert out.startswith(f"FAIL: {path}: the build did not finish"), out
    assert "OK" not in out and "note: " not in out, out
    code, out, _ = run(["check", str(path), "--allow-incomplete", "--budget", "0.7s"], capsys)
    assert code == 3 and out.startswith(f"FAIL: {path}: the build did not finish"), out
    assert "FAIL: 1 of 1 example over budget:" in out, out


@pytest.mark.parametrize(
    "error",
    [
        UNFINISHED_ERROR,
        "did not finish: the build was terminated (SIGTERM) while it ran",
        "did not finish: the example called os._exit(0), which ended the build's process",
    ],
)
def test_check_allow_incomplete_never_passes_an_example_that_did_not_finish(
    tmp_path, capsys, error
) -> None:
    """``--allow-incomplete`` allows an unfinished build, not an example the build stopped
    while it ran (Ctrl-C, SIGTERM, its own ``os._exit``): exit 3 naming it, never OK."""
    records = [
        record("plot_a.py", 1.0),
        record("plot_b.py", 0.5, status="failed", error=error, finished_at=None),
    ]
    path = tmp_path / "r.json"
    path.write_text(_report_text(records, complete=False), encoding="utf-8")
    code, out, _ = run(["check", str(path), "--allow-incomplete"], capsys)
    assert code == 3, out
    assert "OK" not in out
    # "did not finish" said once: the line says it before the example, not again after.
    why = error.removeprefix("did not finish: ")
    assert f"1 example did not finish: tutorials/plot_b.py ({why})" in out
    assert "(did not finish" not in out
    assert f"FAIL: {path}: the build did not finish (tutorials/plot_b.py was running)" in out
    code, out, _ = run(["check", str(path), "--allow-incomplete", "--format", "github"], capsys)
    assert code == 3 and f"tutorials/plot_b.py did not finish: {why}" in out
    assert "plot_b.py failed" not in out
    assert "::error title=Build did not finish::" in out


def test_an_example_failure_and_an_unfinished_example_are_both_named(tmp_path, capsys) -> None:
    """A parallel build: one example raised, another's worker died (or was stopped hard).
    The gate judges the failed build (exit 3), naming both examples and that it did not
    finish, as a serial build's refusal names the example it stopped at."""
    records = [
        record("plot_a.py", 1.0),
        record("plot_r.py", 0.5, status="failed", error="ValueError: boom"),
        record("plot_b.py", 0.5, status="failed", error=UNFINISHED_ERROR, finished_at=None),
        _stopped_hard("plot_x.py"),
    ]
    path = tmp_path / "r.json"
    path.write_text(_report_text(records, complete=False), encoding="utf-8")
    for extra in ([], ["--allow-incomplete"]):
        code, out, _ = run(["check", str(path), *extra], capsys)
        assert code == 3, out
        assert "1 example failed: tutorials/plot_r.py (ValueError: boom)" in out
        assert "1 example did not finish: tutorials/plot_b.py" in out
        assert (
            f"FAIL: {path}: the build did not finish (tutorials/plot_x.py was stopped hard "
            "after its budget; tutorials/plot_b.py was running)"
        ) in out


def test_incomplete_without_a_running_record_still_refused(tmp_path, capsys) -> None:
    path = _incomplete(tmp_path / "r.json", running=False)
    code, _, err = run(["check", str(path)], capsys)
    assert_exit_2(code, err, "the build did not finish")
    assert "was running" not in err


def test_a_record_is_stopped_hard_only_with_the_hooks_message_for_its_own_id() -> None:
    hard = _stopped_hard("plot_x.py")
    assert is_stopped_hard(hard)
    interrupted = {**hard, "error": interruption_message(_example("plot_x.py"), 3.1, "signal")}
    assert not is_stopped_hard(interrupted)
    assert not is_stopped_hard({**hard, "status": "failed"})
    assert not is_stopped_hard({**hard, "id": "tutorials/plot_y.py"})  # another's message
    assert not is_stopped_hard({**hard, "error": None})
    assert not is_stopped_hard(["not", "a", "record"])


def test_check_refuses_a_hard_stopped_build_naming_the_example(tmp_path, capsys) -> None:
    path = _incomplete(tmp_path / "r.json", running=False, stopped_hard=True)
    code, out, err = run(["check", str(path)], capsys)
    assert_exit_2(
        code, err, str(path), "the build did not finish (tutorials/plot_x.py was stopped hard"
    )
    assert "after its budget)" in err and "was running" not in err and out == ""


def test_the_refusal_names_the_hard_stopped_and_the_running_examples(tmp_path, capsys):
    # A parallel build: one worker stopped hard, the other's example never finished.
    path = _incomplete(tmp_path / "r.json", running=True, stopped_hard=True)
    for command in (["check", str(path)], ["compare", str(path), str(path)]):
        code, _, err = run(command, capsys)
        assert_exit_2(
            code,
            err,
            "(tutorials/plot_x.py was stopped hard after its budget; "
            "tutorials/plot_b.py was running)",
        )


def test_check_github_names_the_hard_stopped_example(tmp_path, capsys) -> None:
    path = _incomplete(tmp_path / "r.json", running=False, stopped_hard=True)
    code, _, err = run(["check", str(path), "--format", "github"], capsys)
    assert_exit_2(code, err, "tutorials/plot_x.py was stopped hard after its budget")
    code, out, _ = run(["check", str(path), "--format", "github", "--allow-incomplete"], capsys)
    assert code == 3, out
    assert out.startswith(
        "::error title=Build failed::the build failed: 1 example stopped at its budget: "
        "tutorials/plot_x.py\n::error title=Build did not finish::"
    ), out
    assert "\n::error file=tutorials/plot_x.py,title=Over budget::" in out
    assert "tutorials/plot_x.py was stopped hard after 4.2s, over its budget of 3s" in out


@pytest.mark.parametrize("side", ["base", "head"])
def test_compare_refuses_an_incomplete_build(files, tmp_path, capsys, side) -> None:
    bad, good = str(_incomplete(tmp_path / "r.json")), str(files / "good.json")
    args = ["compare", bad, good] if side == "base" else ["compare", good, bad]
    code, _, err = run(args, capsys)
    assert_exit_2(code, err, "did not finish")
    # Judged all the same, a head an example did not finish in fails, as check says.
    judged = run([*args, "--allow-incomplete"], capsys)[0]
    assert judged == (3 if side == "head" else 0)
    assert judged == (run(["check", bad, "--allow-incomplete"], capsys)[0] if side == "head" else 0)


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_views_say_first_that_the_build_did_not_finish(tmp_path, capsys, fmt) -> None:
    path = _incomplete(tmp_path / "r.json")
    code, out, _ = run(["report", str(path), "--format", fmt], capsys)
    assert code == 0
    if fmt == "md":
        first = out.splitlines()[0]
    else:  # the title, then the first line of the page's content
        first = out.split("<h1>")[1].split("</h1>")[0]
        assert out.split('<div class="docsaccel-report">\n')[1].startswith('<p class="incomplete"')
    assert "did not finish" in first
    if fmt == "md":
        assert "tutorials/plot\\_b.py was running" in first


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_views_name_the_hard_stopped_example_first(tmp_path, capsys, fmt) -> None:
    path = _incomplete(tmp_path / "r.json", running=False, stopped_hard=True)
    code, out, _ = run(["report", str(path), "--format", fmt], capsys)
    assert code == 0
    if fmt == "md":
        first, name = out.splitlines()[0], "tutorials/plot\\_x.py"
    else:  # the warning paragraph opens the page's content
        first = out.split('<div class="docsaccel-report">\n')[1].splitlines()[0]
        assert first.startswith('<p class="incomplete"')
        name = "tutorials/plot_x.py"
    assert "the build did not finish" in first
    assert f"{name} was stopped hard after its budget" in first


# Shard builds --------------------------------------------------------------------------------

CONF = """
extensions = ["sphinx_gallery.gen_gallery", "docsaccel.gallery"]
sphinx_gallery_conf = {"examples_dirs": "tutorials", "gallery_dirs": "auto_tutorials"}
docsaccel_budgets = "budgets.toml"
"""


@pytest.fixture
def project(tmp_path) -> Path:
    docs = tmp_path / "docs"
    (docs / "tutorials").mkdir(parents=True)
    (docs / "tutorials" / "README.txt").write_text("T\n=\n", encoding="utf-8")
    (docs / "tutorials" / "plot_a.py").write_text('"""\nA\n=\n"""\n', encoding="utf-8")
    (docs / "conf.py").write_text(textwrap.dedent(CONF), encoding="utf-8")
    (docs / "budgets.toml").write_text('default = "1m"\n', encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("command", ["shard-build", "shard-local"])
@pytest.mark.parametrize(
    ("file", "text", "needle"),
    [
        ("budgets.toml", 'default = "soon"\n', "budgets.toml"),
        ("budgets.toml", 'default = "200h"\n', "7 days"),
        ("conf.py", "extensions = [\n", "conf.py"),
        ("conf.py", "raise RuntimeError('broken conf')\n", "broken conf"),
        ("conf.py", "import sys\nsys.exit(3)\n", "conf.py"),
        ("conf.py", CONF.replace('"budgets.toml"', "42"), "docsaccel_budgets"),
        ("tutorials/plot_a.py", '# docsaccel_budget = "9999h"\n', "plot_a.py"),
    ],
)
def test_shard_builds_exit_2_before_building(
    project, capsys, monkeypatch, command, file, text, needle
):
    monkeypatch.chdir(project)
    (project / "docs" / file).write_text(text, encoding="utf-8")
    args = [command, "--shards", "2", "--docs", "docs"]
    if command == "shard-build":
        args += ["--index", "0"]
    code, _, err = run(args, capsys)
    assert_exit_2(code, err, needle)
    assert not (project / "docs" / "_build" / "shard-work").exists()  # nothing was built


@pytest.mark.parametrize(
    "args",
    [
        ["shard-build", "--shards", "2", "--index", "0", "--docs", "docs"],
        [
            "shard",
            "--shards",
            "2",
            "--plan",
            "--gallery-dir",
            "{root}/docs/tutorials",
            "--budgets",
            "x",
        ],
    ],
    ids=["shard-build", "shard-absolute-gallery"],
)
def test_a_bad_inline_budget_names_the_example_from_the_working_directory(
    project, capsys, monkeypatch, args
):
    """As a build's error does and the budgets guide shows, whatever folder the command
    resolved the gallery from."""
    monkeypatch.chdir(project)
    (project / "x").write_text('default = "1m"\n', encoding="utf-8")
    example = project / "docs" / "tutorials" / "plot_a.py"
    example.write_text('"""\nA\n=\n"""\n# docsaccel_budget = "9x"\n', encoding="utf-8")
    code, _, err = run([arg.format(root=project) for arg in args], capsys)
    assert_exit_2(code, err)
    said = "error: docs/tutorials/plot_a.py:5: docsaccel_budget: '9x' is not a duration"
    assert said in err, err


@pytest.mark.parametrize(
    ("manifest", "needle"),
    [
        ("{", "manifest.json: the shard manifest is not valid JSON"),
        ('{"schema": "docsaccel.shard"}', "index is None"),
        (
            '{"schema": "docsaccel.shard", "index": 0, "shards": 1, '
            '"executed": {"a": ["../../outside.txt"]}}',
            "not a path inside the source folder",
        ),
    ],
)
def test_shard_merge_refuses_bad_manifests(project, capsys, monkeypatch, manifest, needle):
    monkeypatch.chdir(project)
    (project / "shards" / "s0").mkdir(parents=True)
    (project / "shards" / "s0" / "manifest.json").write_text(manifest, encoding="utf-8")
    code, _, err = run(["shard-merge", "shards", "--docs", "docs"], capsys)
    assert_exit_2(code, err, needle)
    assert not (project / "outside.txt").exists()


# As a real process ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["check", "{root}/nested.json"],
        ["check", "{root}/nan_time.json"],
        ["report", "{root}/good.json", "-o", "/nonexistent/x.html"],
        ["history", "append", "{root}/good.json", "--to", "{root}/folder"],
        ["shard", "--shards", "1000000000", "--plan", "{root}/good.json"],
    ],
)
def test_as_a_process_no_traceback_exit_2(files, args) -> None:
    args = [arg.format(root=files) for arg in args]
    done = subprocess.run(
        [sys.executable, "-m", "docsaccel.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_check_on_an_incomplete_report_as_a_process(tmp_path) -> None:
    path = _incomplete(tmp_path / "r.json")
    done = subprocess.run(
        [sys.executable, "-m", "docsaccel.cli", "check", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "tutorials/plot_b.py was running" in done.stderr


@pytest.mark.parametrize(
    ("docs", "what"),
    [("{tmp}/none", "no such folder"), ("{tmp}", "holds no conf.py"), ("{tmp}/f", "a file")],
)
def test_doctor_given_no_conf_folder_says_so_in_one_line_and_exits_2(
    tmp_path, capsys, docs, what
) -> None:
    """A wrong --docs was a FAIL line among the checks and exit 1, where the command line
    says 2 for a wrong argument."""
    (tmp_path / "f").write_text("", encoding="utf-8")
    docs = docs.format(tmp=tmp_path)
    code, out, err = run(["doctor", "--docs", docs], capsys)
    assert code == 2 and out == "", out
    assert err == (
        f"docsaccel: error: --docs {docs!r}: {what}"
        + ("" if what != "a file" else ", not a folder")
        + "; give the Sphinx conf folder (holding conf.py)\n"
    ), err


def test_doctor_without_mujoco_names_the_package_not_the_gl_libraries(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "mujoco", None)  # import mujoco now fails
    code, out, _ = run(["doctor"], capsys)
    # A [docs] install without MuJoCo is healthy: the missing extra is information.
    assert code == 0, out
    gl_line = next(line for line in out.splitlines() if "MUJOCO_GL" in line)
    assert gl_line.startswith("info MUJOCO_GL not checked")
    assert 'mujoco is not installed; pip install "docsaccel[mujoco]"' in gl_line
    assert "libegl" not in out and "libosmesa" not in out
    assert "FAIL" not in out


def test_doctor_says_a_missing_extra_is_information(capsys, monkeypatch):
    from docsaccel import doctor

    real = doctor._version
    monkeypatch.setattr(
        doctor,
        "_version",
        lambda name: "not installed" if name in ("torch", "torchrl") else real(name),
    )
    code, out, _ = run(["doctor"], capsys)
    assert code == 0, out
    assert 'info extra torchrl: not installed (pip install "docsaccel[torchrl]"' in out
    assert "ok   extra docs: installed" in out


def run_plain_install(tmp_path: Path, args: list[str]) -> subprocess.CompletedProcess:
    """``docsaccel ARGS`` as after ``pip install docsaccel``, which installs no dependency:
    in an interpreter without site-packages (``-S``) that sees only the standard library,
    docsaccel's sources and its installed metadata (``packaging`` made unimportable too)."""
    from importlib import metadata

    import docsaccel

    dist_info = Path(metadata.distribution("docsaccel")._path)
    shutil.copytree(dist_info, tmp_path / "site" / dist_info.name)
    sources = Path(docsaccel.__file__).parents[1]
    code = (
        "import sys; sys.modules['packaging'] = None\n"  # import packaging now fails
        f"from docsaccel.cli import main; sys.exit(main({args!r}))"
    )
    path = os.pathsep.join([str(sources), str(tmp_path / "site")])
    return subprocess.run(
        [sys.executable, "-S", "-c", code],
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_doctor_runs_on_a_plain_install_without_packaging(tmp_path):
    done = run_plain_install(tmp_path, ["doctor"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert "sphinx not installed" in done.stdout
    assert 'info extra docs: not installed (pip install "docsaccel[docs]"' in done.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["shard-local", "--shards", "2"],
        ["shard-build", "--shards", "2", "--index", "0"],
        ["shard-merge", "artifacts"],
    ],
)
def test_shard_builds_on_a_plain_install_name_the_extra(tmp_path, args):
    docs = doctor_project(tmp_path)
    done = run_plain_install(tmp_path, [*args, "--docs", str(docs)])
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr == (
        f"docsaccel {args[0]}: error: needs Sphinx and sphinx-gallery: "
        'pip install "docsaccel[docs]"\n'
    )


SHARD_SAID = "docsaccel shard: error: needs Sphinx and sphinx-gallery: "


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["cache", "explain", "plot_print.py"], "docsaccel: error: {conf}: not read: "),
        (["cache", "stats"], "docsaccel: error: {conf}: not read: "),
        (["cache", "prune", "--max-size", "1G"], "docsaccel: error: {conf}: not read: "),
        (["shard", "--shards", "2", "--plan", "--gallery-dir", "{examples}"], SHARD_SAID),
        (
            ["shard", "--shards", "2", "--plan", "--conf-dir", "{docs}", "--gallery-dir", "x"],
            SHARD_SAID,
        ),
    ],
    ids=["cache-explain", "cache-stats", "cache-prune", "shard-gallery-dir", "shard-conf-dir"],
)
def test_commands_that_need_sphinx_gallery_name_the_extra_on_a_plain_install(tmp_path, args, said):
    docs = doctor_project(tmp_path)
    names = {"conf": docs / "conf.py", "examples": docs / "examples", "docs": docs}
    args = [arg.format(**names) for arg in args]
    if args[0] == "cache":
        args += ["--docs", str(docs)]
    done = run_plain_install(tmp_path, args)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(said.format(**names)), done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert 'needs Sphinx and sphinx-gallery: pip install "docsaccel[docs]"' in done.stderr


DOCTOR_CONF = """\
extensions = ["sphinx_gallery.gen_gallery", "docsaccel.gallery"]
sphinx_gallery_conf = {"examples_dirs": ["examples", "../more"], "gallery_dirs": ["a", "m"]}
docsaccel_budgets = "budgets.toml"
"""


def doctor_project(tmp_path: Path, conf: str = DOCTOR_CONF, budgets: str = "") -> Path:
    docs = tmp_path / "docs"
    for folder in (docs / "examples", tmp_path / "more"):
        folder.mkdir(parents=True)
        (folder / "README.txt").write_text("G\n=\n", encoding="utf-8")
        (folder / "plot_a.py").write_text('"""A\n=\n"""\n', encoding="utf-8")
    (docs / "conf.py").write_text(conf, encoding="utf-8")
    (docs / "budgets.toml").write_text(budgets or 'default = "1m"\n', encoding="utf-8")
    return docs


def test_doctor_checks_a_healthy_project(tmp_path, capsys):
    docs = doctor_project(tmp_path, budgets='[examples]\n"../more/plot_a.py" = "2m"\n')
    code, out, _ = run(["doctor", "--docs", str(docs)], capsys)
    assert code == 0, out
    assert f"ok   {docs / 'conf.py'}: loads docsaccel.gallery; settings valid" in out
    assert f"ok   {docs / 'budgets.toml'}: 1 pattern, 2 examples" in out


@pytest.mark.parametrize("given", ["docs", "./docs", "docs/"])
def test_doctor_checks_a_project_named_by_a_relative_path(tmp_path, capsys, monkeypatch, given):
    """Sphinx runs conf.py in its folder: the path to it must not depend on the cwd."""
    doctor_project(tmp_path, budgets='[examples]\n"../more/plot_a.py" = "2m"\n')
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(["doctor", "--docs", given], capsys)
    assert code == 0, out
    conf_file, budgets = Path(given, "conf.py"), Path(given, "budgets.toml")
    assert f"ok   {conf_file}: loads docsaccel.gallery; settings valid" in out
    assert f"ok   {budgets}: 1 pattern, 2 examples" in out


@pytest.mark.parametrize(
    ("conf", "budgets", "message"),
    [
        (DOCTOR_CONF + 'docsaccel_on_overrun = "explode"\n', "", "'explode'"),
        (DOCTOR_CONF.replace(', "docsaccel.gallery"', ""), "", "does not list docsaccel.gallery"),
        (DOCTOR_CONF + "raise ValueError('no')\n", "", "cannot run the Sphinx config"),
        (DOCTOR_CONF, 'default = "soon"\n', "default"),
    ],
)
def test_doctor_fails_on_a_bad_setting_or_budget_file_naming_it(
    tmp_path, capsys, conf, budgets, message
):
    docs = doctor_project(tmp_path, conf, budgets)
    code, out, _ = run(["doctor", "--docs", str(docs)], capsys)
    assert code == 1, out
    [failure] = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert message in failure


def test_doctor_warns_of_a_pattern_matching_no_example_and_passes(tmp_path, capsys):
    """The build warns of it and runs: a warning, not a failure."""
    docs = doctor_project(tmp_path, budgets='[examples]\n"plot_b.py" = "1m"\n')
    code, out, _ = run(["doctor", "--docs", str(docs)], capsys)
    assert code == 0, out
    [warning] = [line for line in out.splitlines() if line.startswith("warn ")]
    assert "'plot_b.py' matches no example" in warning, out
    assert "FAIL" not in out, out


def test_doctor_warns_of_a_misspelled_setting_and_passes(tmp_path, capsys):
    """The build warns of a ``docsaccel_*`` name that is no setting and runs all the
    same: a warning naming it and the setting meant, not a failure."""
    docs = doctor_project(tmp_path, DOCTOR_CONF + 'docsaccel_budget = "x"\n')
    code, out, _ = run(["doctor", "--docs", str(docs)], capsys)
    assert code == 0, out
    [warning] = [line for line in out.splitlines() if line.startswith("warn ")]
    assert "unknown setting 'docsaccel_budget'" in warning, out
    assert "did you mean 'docsaccel_budgets'" in warning, out
    assert "FAIL" not in out, out


def test_doctor_names_every_bad_setting(tmp_path, capsys):
    conf = DOCTOR_CONF + 'docsaccel_on_overrun = "explode"\ndocsaccel_memory_limit = "lots"\n'
    docs = doctor_project(tmp_path, conf)
    code, out, _ = run(["doctor", "--docs", str(docs)], capsys)
    assert code == 1, out
    failures = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert len(failures) == 2, out
    assert "'explode'" in out and "'lots'" in out, out


@pytest.mark.parametrize("kind", ["device", "fifo"])
@pytest.mark.parametrize(
    "args",
    [
        ["check", "{path}"],
        ["report", "{path}"],
        ["history", "append", "{path}", "--to", "{root}/h.jsonl"],
        ["shard", "--shards", "2", "--plan", "{path}"],
        ["check", "{good}", "--budgets", "{path}"],
    ],
)
def test_devices_and_pipes_are_refused_without_reading(files, tmp_path, capsys, kind, args):
    """/dev/zero would never end, and opening a pipe blocks until a writer comes."""
    if kind == "device":
        path = "/dev/zero"
    else:
        path = str(tmp_path / "pipe")
        os.mkfifo(path)
    args = [a.format(path=path, good=files / "good.json", root=tmp_path) for a in args]
    code, _, err = run(args, capsys)
    assert_exit_2(code, err, path, "not a regular file")


@pytest.mark.parametrize(
    ("command", "args", "needle"),
    [
        ("shard-local", ["--out", "a-file"], "--out a-file: a-file is a file, not a folder"),
        ("shard-local", ["--out", "a-file/html"], "a-file is a file, not a folder"),
        ("shard-merge", ["shards", "--out", "a-file"], "is a file, not a folder"),
        ("shard-build", ["--index", "0", "--artifact", "a-file"], "--artifact a-file: a-file"),
        ("shard-local", ["--docs", "/nonexistent"], "--docs /nonexistent: no such folder"),
        ("shard-local", ["--root", "/nonexistent"], "--root /nonexistent: no such folder"),
        ("shard-build", ["--index", "0", "--docs", "a-file"], "a-file is a file, not a folder"),
    ],
)
def test_shard_builds_refuse_bad_folders_before_any_shard(
    project, capsys, monkeypatch, command, args, needle
):
    monkeypatch.chdir(project)
    (project / "a-file").write_text("mine\n", encoding="utf-8")
    shards = [] if command == "shard-merge" else ["--shards", "2"]
    code, _, err = run([command, "--docs", "docs", *shards, *args], capsys)
    assert_exit_2(code, err, needle)
    assert len(err.strip().splitlines()) == 1, err
    assert not (project / "docs" / "_build" / "shard-work").exists()  # nothing was built
    assert (project / "a-file").read_text(encoding="utf-8") == "mine\n"


def _other_files(tmp_path: Path) -> dict[str, Path]:
    """The files docsaccel writes that are not a build's timings, made by its own CLI."""
    reports = [tmp_path / f"r{n}.json" for n in (1, 2)]
    for index, path in enumerate(reports):
        write_report(path, [record("plot_a.py", 1.0 + index)])
    history = tmp_path / "history.jsonl"
    for path in reports:  # two lines: a JSON reader of the whole file says "Extra data"
        assert main(["history", "append", str(path), "--to", str(history)]) == 0
    made = {"history": history}
    for fmt, name in (("md", "report.md"), ("json", "summary.json"), ("html", "report.html")):
        made[fmt] = tmp_path / name
        assert main(["report", str(reports[0]), "--format", fmt, "-o", str(made[fmt])]) == 0
    return made


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("history", "is a docsaccel history file (pass it to `report --history` or `shard`)"),
        ("md", "is docsaccel's Markdown view of a report (`docsaccel report --format md`)"),
        ("html", "is docsaccel's HTML view of a report (`docsaccel report --format html`)"),
        ("json", "is the JSON view of a report (`docsaccel report --format json`)"),
    ],
)
def test_every_reader_of_a_report_names_another_file_of_docsaccel(
    tmp_path, capsys, kind, said
) -> None:
    path = _other_files(tmp_path)[kind]
    good = str(tmp_path / "r1.json")
    capsys.readouterr()
    for command in (
        ["check", str(path)],
        ["report", str(path)],
        ["compare", good, str(path)],
        ["compare", str(path), good],
        ["report", good, "--baseline", str(path)],
        ["history", "append", str(path), "--to", str(tmp_path / "other.jsonl")],
    ):
        assert main(command) == 2, command
        err = capsys.readouterr().err
        assert err.count("\n") == 1, (command, err)
        assert f"{path}: {said}, not a report: give the build's report (" in err, (command, err)


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        (
            "report",
            "is a docsaccel report (pass it to `report`, `check`, `compare` or `history append`)",
        ),
        (
            "sorted report",
            "is a docsaccel report (pass it to `report`, `check`, `compare` or `history append`)",
        ),
        ("md", "is docsaccel's Markdown view of a report (`docsaccel report --format md`)"),
        ("html", "is docsaccel's HTML view of a report (`docsaccel report --format html`)"),
        ("json", "is the JSON view of a report (`docsaccel report --format json`)"),
    ],
)
def test_every_reader_of_a_history_names_another_file_of_docsaccel(
    tmp_path, capsys, kind, said
) -> None:
    """A report (as the build writes it, indented), or a view of one, given as the history:
    said as what it is, not as a history line that is not valid JSON."""
    made = _other_files(tmp_path)
    good = tmp_path / "r1.json"
    built = tmp_path / "built.json"
    built.write_text(json.dumps(json.loads(good.read_text()), indent=2), encoding="utf-8")
    # Its keys sorted (``jq -S``): "schema" is no longer its first key.
    resorted = tmp_path / "sorted.json"
    resorted.write_text(
        json.dumps(json.loads(good.read_text()), indent=2, sort_keys=True), encoding="utf-8"
    )
    path = {**made, "report": built, "sorted report": resorted}[kind]
    capsys.readouterr()
    assert main(["report", str(good), "--history", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert f"{path}: {said}, not a history: give the history file (" in err, err


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("report", "is a docsaccel report (pass it to `report`, `check`, `compare`"),
        ("history", "is a docsaccel history file (pass it to `report --history` or `shard`)"),
        ("md", "is docsaccel's Markdown view of a report (`docsaccel report --format md`)"),
        ("html", "is docsaccel's HTML view of a report (`docsaccel report --format html`)"),
        ("json", "is the JSON view of a report (`docsaccel report --format json`)"),
    ],
)
def test_every_reader_of_a_budget_file_names_another_file_of_docsaccel(
    tmp_path, capsys, kind, said
) -> None:
    """A report, a history or a view given to ``--budgets`` is said as what it is, in one
    line, not as TOML that does not parse."""
    made = _other_files(tmp_path)
    good = tmp_path / "r1.json"
    path = {**made, "report": tmp_path / "r2.json"}[kind]
    gallery = tmp_path / "gallery"
    gallery.mkdir()
    (gallery / "plot_a.py").write_text('"""A\n=\n"""\n', encoding="utf-8")
    capsys.readouterr()
    shard = ["shard", "--shards", "2", "--index", "0", "--gallery-dir", str(gallery)]
    for command in (
        ["check", str(good), "--budgets", str(path)],
        [*shard, "--budgets", str(path), str(good)],
    ):
        assert main(command) == 2, command
        err = capsys.readouterr().err
        assert err.count("\n") == 1, (command, err)
        assert f"{path}: {said}" in err and "not a budget file" in err, (command, err)


@pytest.mark.parametrize(
    ("kind", "fmt", "said"),
    [
        ("md", "html", "is docsaccel's Markdown view of a report (`docsaccel report --format md`)"),
        ("html", "md", "is docsaccel's HTML view of a report (`docsaccel report --format html`)"),
        ("history", "md", "is a docsaccel history file (pass it to `report --history`"),
    ],
)
def test_an_output_that_is_another_file_of_docsaccel_is_named_as_it(
    tmp_path, capsys, kind, fmt, said
) -> None:
    """``-o`` naming a view of another format (or a history) says what that file is, as
    every reader does, not "not a file docsaccel wrote"; the file is left as it was."""
    path = _other_files(tmp_path)[kind]
    before = path.read_bytes()
    capsys.readouterr()
    command = ["report", str(tmp_path / "r1.json"), "--format", fmt, "-o", str(path)]
    assert main(command) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert f"{path}: {said}" in err and f"not this command's {fmt} output" in err, err
    assert path.read_bytes() == before


def test_a_history_appended_to_itself_is_named_a_history(tmp_path, capsys) -> None:
    history = _other_files(tmp_path)["history"]
    before = history.read_bytes()
    capsys.readouterr()
    assert main(["history", "append", str(history), "--to", str(history)]) == 2
    err = capsys.readouterr().err
    # Not "is the report to append": it is a history, given as both.
    assert f"{history}: is a docsaccel history file (" in err, err
    assert "given both as the report to append and as --to" in err, err
    assert history.read_bytes() == before


@pytest.mark.parametrize("under", [".", "report"])
def test_a_view_is_never_written_into_the_installed_package(tmp_path, capsys, under) -> None:
    """``-o`` inside the installed docsaccel package (its folder, or one of its
    subpackages') is refused in one line, exit 2, and no file is made there."""
    import docsaccel

    report = write_report(tmp_path / "r1.json", [record("plot_a.py", 1.0)])
    package = Path(docsaccel.__file__).parent
    target = package / under / f"view-{os.getpid()}-{under.strip('.')}.md"
    capsys.readouterr()
    try:
        assert main(["report", str(report), "-o", str(target)]) == 2
    finally:
        made = target.exists()
        target.unlink(missing_ok=True)
    assert not made
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert f"{target}: is inside the installed docsaccel package ({package.resolve()})" in err, err


def test_a_history_is_never_appended_to_inside_the_installed_package(tmp_path, capsys) -> None:
    import docsaccel

    report = write_report(tmp_path / "r1.json", [record("plot_a.py", 1.0)])
    target = Path(docsaccel.__file__).parent / f"history-{os.getpid()}.jsonl"
    capsys.readouterr()
    try:
        assert main(["history", "append", str(report), "--to", str(target)]) == 2
    finally:
        made = target.exists()
        target.unlink(missing_ok=True)
    assert not made
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is inside the installed docsaccel package" in err, err


@pytest.mark.parametrize(
    "args",
    [
        ["compare", "--relative", "-5", "a.json", "b.json"],
        ["compare", "--relative", "x", "a.json", "b.json"],
        ["compare", "a.json"],
        ["check"],
        ["check", "--format", "xml", "a.json"],
        ["report", "--top", "x", "a.json"],
        ["history"],
        ["shard", "a.json"],
        ["shard-build", "a.json"],
        ["cache", "stats", "--bogus"],
        ["doctor", "--bogus"],
        ["bogus"],
    ],
)
def test_every_argument_error_is_one_line(capsys, args) -> None:
    """argparse's usage block before the error would bury the line that names the
    problem: every argument error of every command is that one line, as others are."""
    code, out, err = run(args, capsys)
    assert code == 2 and out == "", (code, out)
    assert len(err.splitlines()) == 1 and "error: " in err and "usage:" not in err, err


def test_help_still_shows_the_usage(capsys) -> None:
    code, out, _ = run(["compare", "--help"], capsys)
    assert code == 0 and out.startswith("usage: docsaccel compare"), out
