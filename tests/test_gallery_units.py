"""The gallery plugin's own modules without a Sphinx build: settings, plan, hook, roles.

Real builds (``test_gallery.py``, ``test_gallery_layouts.py``) show the behaviour; these
check each rule directly, in a fraction of a second each.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from sphinx.errors import ConfigError
from sphinx_gallery import py_source_parser

from docsaccel import sg_compat
from docsaccel.budgets import BudgetError, BudgetTable, load_budgets, read_inline_budget
from docsaccel.examples import Planner
from docsaccel.gallery.hook import ExampleHook
from docsaccel.gallery.note import fast_note_text
from docsaccel.records import read_records
from docsaccel.settings import (
    SettingError,
    config_values,
    read_settings,
    resolve,
    unknown_settings,
)

SRC = Path(__file__).parents[1] / "src" / "docsaccel"


def conf(**values):
    defaults = {key: default for key, default, _ in config_values()}
    return SimpleNamespace(**{**defaults, **values})


# Settings: one precedence -------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "env", "fast", "on_overrun"),
    [
        ({}, {}, False, "warn"),
        ({"docsaccel_fast": True, "docsaccel_on_overrun": "fail"}, {}, True, "fail"),
        ({"docsaccel_fast": None}, {"DOCSACCEL_FAST": "1"}, True, "warn"),
        # The variable beats conf.py, for both settings alike.
        ({"docsaccel_fast": True}, {"DOCSACCEL_FAST": "0"}, False, "warn"),
        ({"docsaccel_fast": False}, {"DOCSACCEL_FAST": "yes"}, True, "warn"),
        ({"docsaccel_on_overrun": "fail"}, {"DOCSACCEL_ON_OVERRUN": "warn"}, False, "warn"),
        ({"docsaccel_on_overrun": "warn"}, {"DOCSACCEL_ON_OVERRUN": " fail "}, False, "fail"),
        # A blank variable is unset.
        (
            {"docsaccel_fast": True},
            {"DOCSACCEL_FAST": " ", "DOCSACCEL_ON_OVERRUN": ""},
            True,
            "warn",
        ),
    ],
)
def test_environment_then_conf_then_default(tmp_path, values, env, fast, on_overrun) -> None:
    settings = read_settings(conf(**values), tmp_path, env=env)
    assert (settings.fast, settings.on_overrun) == (fast, on_overrun)


def test_resolve_names_where_the_value_came_from() -> None:
    assert resolve("fast", conf(), {}) == ("docsaccel_fast", False)
    found = resolve("fast", conf(docsaccel_fast=True), {"DOCSACCEL_FAST": "0"})
    assert found == ("DOCSACCEL_FAST", "0")
    # Settings without a variable come from conf.py whatever the environment holds.
    assert resolve("videos", conf(), {"DOCSACCEL_VIDEOS": "0"})[1] is True


@pytest.mark.parametrize(
    ("values", "env", "expected"),
    [
        ({"docsaccel_on_overrun": "stop"}, {}, ["docsaccel_on_overrun", "'stop'"]),
        ({}, {"DOCSACCEL_ON_OVERRUN": "abort"}, ["DOCSACCEL_ON_OVERRUN", "'abort'"]),
        ({"docsaccel_fast": "yes"}, {}, ["docsaccel_fast", "'yes'"]),
        ({}, {"DOCSACCEL_FAST": "maybe"}, ["DOCSACCEL_FAST", "'maybe'"]),
        ({"docsaccel_report_chart": "yes"}, {}, ["docsaccel_report_chart", "'yes'"]),
        ({"docsaccel_videos": 1}, {}, ["docsaccel_videos", "1"]),
        ({"docsaccel_report_page": "x.rst"}, {}, ["docsaccel_report_page", "'x.rst'"]),
        ({"docsaccel_report_page": "../up"}, {}, ["docsaccel_report_page", "'../up'"]),
        ({"docsaccel_budgets": "missing.toml"}, {}, ["docsaccel_budgets", "missing.toml"]),
        ({"docsaccel_budgets": ""}, {}, ["docsaccel_budgets", "''"]),
        ({}, {"DOCSACCEL_SHARD_RECORDS": "/no/such/folder"}, ["DOCSACCEL_SHARD_RECORDS"]),
        ({}, {"DOCSACCEL_SHARD_EXAMPLES": "/no/such/file"}, ["DOCSACCEL_SHARD_EXAMPLES"]),
        ({"docsaccel_memory_limit": 6500}, {}, ["docsaccel_memory_limit", "6500", "a size"]),
        ({"docsaccel_memory_limit": "6500"}, {}, ["docsaccel_memory_limit: '6500' has no unit"]),
        ({}, {"DOCSACCEL_MEMORY_LIMIT": "-1G"}, ["DOCSACCEL_MEMORY_LIMIT: '-1G' is negative"]),
        ({}, {"DOCSACCEL_MEMORY_LIMIT": "900T"}, ["'900T' is more than the memory"]),
    ],
)
def test_bad_settings_name_the_key_and_value(tmp_path, values, env, expected) -> None:
    with pytest.raises(SettingError) as raised:
        read_settings(conf(**values), tmp_path, env=env)
    for part in expected:
        assert part in str(raised.value)


@pytest.mark.parametrize(
    ("budgets", "expected"),
    [
        ('[examples]\n"plot_*.py" = "1m"\n"*quick.py" = "2m"\n', ["'plot_*.py'", "equally"]),
        ('default = "7 min"\n', ["budgets.toml", "default", "'7 min'"]),
        ('default = "1m"\n[examples]\n"x.py" = "none"\n', ["'x.py'", "needs a reason"]),
        ("default = [\n", ["budgets.toml", "not valid TOML"]),
    ],
)
def test_bad_budget_files_name_the_file_key_and_value(tmp_path, budgets, expected) -> None:
    path = tmp_path / "budgets.toml"
    path.write_text(budgets, encoding="utf-8")
    with pytest.raises(BudgetError) as raised:
        load_budgets(path, examples=["plot_quick.py"])
    for part in expected:
        assert part in str(raised.value)


# The memory ceiling -------------------------------------------------------------------


def test_the_ceiling_comes_from_the_variable_then_conf(tmp_path) -> None:
    assert read_settings(conf(), tmp_path, env={}).memory_limit is None
    settings = read_settings(conf(docsaccel_memory_limit="1.5G"), tmp_path, env={})
    assert settings.memory_limit == int(1.5 * (1 << 30))
    env = {"DOCSACCEL_MEMORY_LIMIT": "500M"}
    assert read_settings(conf(docsaccel_memory_limit="1G"), tmp_path, env=env).memory_limit == (
        500 << 20
    )
    env = {"DOCSACCEL_MEMORY_LIMIT": "none"}
    assert read_settings(conf(docsaccel_memory_limit="1G"), tmp_path, env=env).memory_limit is None


def test_unknown_settings_suggest_the_closest_name() -> None:
    names = ["docsaccel_budget", "docsaccel_fast", "docsaccel_on_overun", "docsaccel_zzz", "x"]
    messages = unknown_settings(names)
    assert len(messages) == 3
    assert "'docsaccel_budget'" in messages[0] and "did you mean 'docsaccel_budgets'" in messages[0]
    assert "did you mean 'docsaccel_on_overrun'" in messages[1]
    assert "did you mean" not in messages[2] and "docsaccel_report_page" in messages[2]


def test_setup_declares_an_env_version_and_notes_that_a_build_started(tmp_path) -> None:
    from unittest.mock import MagicMock

    from docsaccel import layout
    from docsaccel.gallery import setup
    from docsaccel.gallery.extension import ENV_VERSION

    app = MagicMock()
    app.outdir = tmp_path / "html"
    before = signal.getsignal(signal.SIGTERM)
    try:
        assert setup(app)["env_version"] == ENV_VERSION
    finally:
        signal.signal(signal.SIGTERM, before)
    assert (layout.report_path(app.outdir).parent / layout.BUILD_STARTED_FILE).is_file()


# Plan: examples are paths -------------------------------------------------------------


def make_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


EXAMPLE = '"""\nT\n=\n"""\n'


def test_example_files_walk_as_sphinx_gallery_builds(tmp_path) -> None:
    gallery_conf = sg_compat.with_defaults({})
    headed = make_tree(
        tmp_path / "headed",
        {
            "README.txt": "",
            "plot_a.py": EXAMPLE,
            "__init__.py": "",
            "s1/README.rst": "",
            "s1/plot_b.py": EXAMPLE,
            "s1/data/plot_deep.py": EXAMPLE,
            "s1/__pycache__/x.pyc": "",
            "s2/GALLERY_HEADER.rst": "",
            "s2/plot_c.py": EXAMPLE,
            "s3/plot_no_header.py": EXAMPLE,
            "s4/index.rst": "",  # a sub-gallery only when the gallery has an index.rst
            "s4/plot_d.py": EXAMPLE,
        },
    )
    found = [
        p.relative_to(headed).as_posix() for p in sg_compat.example_files(headed, gallery_conf)
    ]
    assert found == ["plot_a.py", "s1/plot_b.py", "s2/plot_c.py"]
    indexed = make_tree(
        tmp_path / "indexed",
        {"index.rst": "", "s3/plot_e.py": EXAMPLE, "s4/index.rst": "", "s4/plot_d.py": EXAMPLE},
    )
    (indexed / "__pycache__").mkdir()
    found = [
        p.relative_to(indexed).as_posix() for p in sg_compat.example_files(indexed, gallery_conf)
    ]
    assert found == ["s3/plot_e.py", "s4/plot_d.py"]
    custom = {**gallery_conf, "example_extensions": {".py", ".jl"}, "ignore_pattern": r"plot_b"}
    make_tree(headed, {"s1/run.jl": "# julia"})
    found = [p.relative_to(headed).as_posix() for p in sg_compat.example_files(headed, custom)]
    assert found == ["__init__.py", "plot_a.py", "s1/run.jl", "s2/plot_c.py"]
    assert sg_compat.example_files(tmp_path / "missing", gallery_conf) == []


def test_same_file_name_in_two_sub_galleries_is_two_examples(tmp_path) -> None:
    src = make_tree(
        tmp_path,
        {
            "ex/README.txt": "",
            "ex/a/README.txt": "",
            "ex/a/plot_x.py": EXAMPLE + "# docsaccel_budget = 5\n",
            "ex/b/README.txt": "",
            "ex/b/plot_x.py": EXAMPLE,
        },
    )
    gallery_conf = sg_compat.with_defaults({"examples_dirs": ["ex"], "gallery_dirs": ["out"]})
    planner = Planner.for_build(src, gallery_conf, BudgetTable(default=60.0), fast=False)
    examples = planner.plan(gallery_conf)
    assert [(e.id, e.budget.seconds, e.docname) for e in examples] == [
        ("ex/a/plot_x.py", 5.0, "out/a/plot_x"),
        ("ex/b/plot_x.py", 60.0, "out/b/plot_x"),
    ]
    assert all(e.executable for e in examples)
    assert planner.example(str(tmp_path / "elsewhere.py")) is None
    assert planner.example_named("ex", "b/plot_x.py") == examples[1]


# Hook: finds the example by its path, plans what the plan missed ----------------------


def test_hook_records_an_example_the_plan_missed(tmp_path, monkeypatch) -> None:
    src = make_tree(tmp_path, {"ex/sub/plot_new.py": EXAMPLE + '# docsaccel_budget = "9s"\n'})
    gallery_conf = sg_compat.with_defaults({"examples_dirs": ["ex"], "gallery_dirs": ["out"]})
    planner = Planner.for_build(src, gallery_conf, BudgetTable(), fast=False)
    records = tmp_path / "records"
    records.mkdir()
    hook = ExampleHook({}, records_dir=str(records), fast=False, on_overrun="warn", planner=planner)
    src_file = str(src / "ex" / "sub" / "plot_new.py")
    monkeypatch.setattr(sg_compat, "running_example", lambda fname: src_file)
    hook(gallery_conf, "plot_new.py", "before")
    hook(gallery_conf, "plot_new.py", "after")
    record = read_records(records)["ex/sub/plot_new.py"]
    assert record["status"] == "ok" and record["budget_seconds"] == 9.0
    # The run's own facts, from its "before" call to its "after" call.
    assert record["pid"] == os.getpid() and record["finished_at"] >= record["started_at"]
    assert record["wall_seconds"] >= 0 and record["cpu_seconds"] >= 0
    assert record["peak_rss_bytes"] > 0
    assert hook._run is None  # the run ended with its "after" call
    # sphinx-gallery shows resetters by repr: the short one, naming the examples planned.
    assert repr(hook) == "docsaccel.gallery.ExampleHook(1 examples)"


def test_hook_called_by_hand_needs_an_unambiguous_name(tmp_path) -> None:
    src = make_tree(tmp_path, {"ex/a/plot_x.py": EXAMPLE, "ex/b/plot_x.py": EXAMPLE})
    gallery_conf = sg_compat.with_defaults({"examples_dirs": ["ex"], "gallery_dirs": ["out"]})
    planner = Planner.for_build(src, gallery_conf, BudgetTable(), fast=False)
    a, b = (planner.example(str(src / "ex" / d / "plot_x.py")) for d in "ab")
    hook = ExampleHook.for_examples(
        [a, b], records_dir=str(tmp_path), fast=False, on_overrun="warn"
    )
    # Outside sphinx-gallery's example loop there is no path to tell the two apart.
    assert sg_compat.running_example("plot_x.py") is None
    assert hook.example_for("plot_x.py") is None
    hook = ExampleHook.for_examples([a], records_dir=str(tmp_path), fast=False, on_overrun="warn")
    assert hook.example_for("plot_x.py") is a


def test_gallery_build_adopts_records_of_unplanned_examples(tmp_path) -> None:
    from docsaccel.gallery.state import GalleryBuild
    from docsaccel.settings import Settings

    src = make_tree(tmp_path, {"ex/plot_a.py": EXAMPLE, "ex/late/plot_b.py": EXAMPLE})
    gallery_conf = sg_compat.with_defaults({"examples_dirs": ["ex"], "gallery_dirs": ["out"]})
    planner = Planner.for_build(src, gallery_conf, BudgetTable(), fast=False)
    build = GalleryBuild(Settings(), BudgetTable(), tmp_path / "out")
    build.planner = planner
    build.examples = [planner.example(str(src / "ex" / "plot_a.py"))]
    seen = {"gallery": "ex", "name": "late/plot_b.py", "id": "ex/late/plot_b.py"}
    build.adopt({"ex/late/plot_b.py": seen, "ex/plot_a.py": {"id": "ex/plot_a.py"}})
    assert [e.id for e in build.examples] == ["ex/plot_a.py", "ex/late/plot_b.py"]
    # A record naming a file outside the galleries (a hostile id) adds nothing.
    build.adopt({"x": {"gallery": "ex", "name": "../../etc/passwd", "id": "x"}})
    assert len(build.examples) == 2


# Shards name examples by id when a path is in two galleries ---------------------------


def test_shard_selection_refuses_a_path_two_galleries_share(tmp_path) -> None:
    from docsaccel.shard.roles import _select_examples

    src = make_tree(tmp_path, {"a/plot_x.py": EXAMPLE, "b/plot_x.py": EXAMPLE, "b/y.py": EXAMPLE})
    gallery_conf = sg_compat.with_defaults(
        {"examples_dirs": ["a", "b"], "gallery_dirs": ["c", "d"]}
    )
    planner = Planner.for_build(src, gallery_conf, BudgetTable(), fast=False)
    examples = planner.plan(gallery_conf)
    assert [e.id for e in _select_examples(examples, ("b/plot_x.py", "y.py"))] == [
        "b/plot_x.py",
        "b/y.py",
    ]
    with pytest.raises(ConfigError, match=r"'plot_x.py' is in several galleries.*a/plot_x.py"):
        _select_examples(examples, ("plot_x.py",))


# Inline budgets and sphinx-gallery's config-comment removal ---------------------------


def test_inline_budget_comments_go_where_sphinx_gallery_comments_go() -> None:
    sg_compat.remove_our_config_comments()
    sg_compat.remove_our_config_comments()  # twice: still one wrapper
    code = 'a = 1\n# docsaccel_budget = "30s"\n  #sphinx_gallery_thumbnail_number = 2\nb = 2\n'
    assert py_source_parser.remove_config_comments(code) == "a = 1\nb = 2\n"
    assert py_source_parser.remove_config_comments("# docsaccel_budget = 1") == ""


def test_inline_budget_is_one_line_and_never_empty() -> None:
    assert read_inline_budget("#\n docsaccel_budget = 5\n", where="x.py") is None
    with pytest.raises(BudgetError, match=r"x.py:1: docsaccel_budget: '' is not a TOML value"):
        read_inline_budget("# docsaccel_budget =\nprint(1)\n", where="x.py")
    fast = read_inline_budget('# docsaccel_budget = { budget = "2m", fast = "20s" }\n', "x.py")
    assert (fast.seconds, fast.fast_seconds) == (120, 20)


def test_fast_note_text() -> None:
    knobs = {"steps": {"value": 10, "fast": 10, "full": 100}, "env": {"value": "a", "full": "b"}}
    assert fast_note_text({"fast": True, "knobs": knobs}) == (
        "Built with the CI fast path: env = a (full build: b), steps = 10 (full build: 100)"
    )
    assert fast_note_text({"fast": False, "knobs": knobs}) == ""
    assert fast_note_text(None) == ""
    # A name picked with other values: each pair the page used, in the order picked.
    reused = {"steps": {"value": 5, "fast": 5, "full": 1, "later": [{"value": 2, "full": 3}]}}
    assert fast_note_text({"fast": True, "knobs": reused}) == (
        "Built with the CI fast path: steps = 5 (full build: 1), steps = 2 (full build: 3)"
    )


def test_records_of_the_journal_are_json_lines(tmp_path) -> None:
    # The hook's journal is what read_records reads: one JSON object a line.
    src = make_tree(tmp_path, {"ex/plot_a.py": EXAMPLE})
    gallery_conf = sg_compat.with_defaults({"examples_dirs": ["ex"], "gallery_dirs": ["out"]})
    example = Planner.for_build(src, gallery_conf, BudgetTable(), fast=True).plan(gallery_conf)[0]
    hook = ExampleHook.for_examples(
        [example], records_dir=str(tmp_path), fast=True, on_overrun="warn"
    )
    hook(gallery_conf, "plot_a.py", "before")
    hook(gallery_conf, "plot_a.py", "after")
    lines = next(tmp_path.glob("journal-*.jsonl")).read_text("utf-8").splitlines()
    assert [json.loads(line)["status"] for line in lines] == ["failed", "ok"]


def test_an_example_page_s_measurements_are_masked_and_nothing_else() -> None:
    page = (
        "Prints one line.\n\n"
        "   **Total running time of the script:** (0 minutes 1.250 seconds)\n\n"
        "**Estimated memory usage:**  182 MB\n"
        "Total running time of the script: (kept, not sphinx-gallery's bold line)\n"
    )
    assert sg_compat.mask_measurements(page) == (
        "Prints one line.\n\n"
        "   **Total running time of the script:** (<time>)\n\n"
        "**Estimated memory usage:** <memory>\n"
        "Total running time of the script: (kept, not sphinx-gallery's bold line)\n"
    )


def test_the_build_stops_are_sphinx_errors_that_sphinx_build_leaves_unprinted() -> None:
    """``sphinx-build`` prints no crash report for them (status 2), and code running Sphinx
    from Python still catches a Sphinx error (a configuration error as one)."""
    import bdb

    from sphinx.errors import SphinxError

    from docsaccel.gallery.events import BudgetOverrunError, RecordsLostError
    from docsaccel.stops import DocsaccelConfigError, ReportedStop

    for stop in (BudgetOverrunError, RecordsLostError, DocsaccelConfigError):
        assert issubclass(stop, SphinxError) and issubclass(stop, ReportedStop), stop
        assert issubclass(stop, bdb.BdbQuit), stop
    assert issubclass(DocsaccelConfigError, ConfigError)


@pytest.mark.parametrize("colour", [False, True])
def test_a_worker_colours_its_messages_as_the_build_does(tmp_path, colour) -> None:
    """The hook reaches a ``parallel`` worker pickled; unpickled, it turns Sphinx's colours
    off there when the build's log has none (no escape codes in a log file)."""
    hook = ExampleHook({}, records_dir=str(tmp_path), fast=False, on_overrun="warn", colour=colour)
    (tmp_path / "hook.pickle").write_bytes(pickle.dumps(hook))
    # A fresh process, as a worker is: Sphinx colours until told otherwise.
    worker = (
        "import pickle, sys\n"
        "from sphinx.util.console import red\n"
        "before = red('x')\n"
        "pickle.loads(open(sys.argv[1], 'rb').read())\n"
        "print(repr(before), repr(red('x')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", worker, str(tmp_path / "hook.pickle")],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    before, after = done.stdout.split()
    assert "\\x1b[" in before, done.stdout  # the worker's default
    assert ("\\x1b[" in after) is colour, done.stdout
