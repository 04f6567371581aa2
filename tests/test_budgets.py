"""The budget file, inline overrides and the one precedence."""

from __future__ import annotations

from pathlib import Path

import pytest

from docsaccel.budgets import (
    BudgetError,
    ExampleFileError,
    Rule,
    format_seconds,
    load_budgets,
    parse_budgets,
    parse_duration,
    read_inline_budget,
)

GOOD = """
default = "7m"
ci_factor = 1.5

[examples]
"plot_quick.py" = "30s"
"mujoco_*.py" = { budget = "3m", reason = "renders a 480x360 video" }
"mujoco_cheetah_*.py" = "4m"
"train_*.py" = { budget = "none", reason = "unbounded on purpose: trains a model" }
"""


def write(tmp_path: Path, text: str, name: str = "budgets.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (90, 90.0),
        (2.5, 2.5),
        ("90s", 90.0),
        ("7m", 420.0),
        ("1h30m", 5400.0),
        ("1m30.5s", 90.5),
        ("45", 45.0),
        ("2h", 7200.0),
    ],
)
def test_durations(value, seconds) -> None:
    assert parse_duration(value, "f: k") == seconds


@pytest.mark.parametrize("value", ["", "abc", "7 minutes", "m", "-5s", "1x", [], True, None])
def test_bad_durations_name_where_and_value(value) -> None:
    with pytest.raises(BudgetError) as excinfo:
        parse_duration(value, "conf/b.toml: [examples] 'x.py'")
    assert "conf/b.toml: [examples] 'x.py'" in str(excinfo.value)
    assert repr(value) in str(excinfo.value)


@pytest.mark.parametrize("value", [0, -3, "0s", "0"])
def test_zero_and_negative_budgets(value) -> None:
    with pytest.raises(BudgetError, match="more than 0 seconds"):
        parse_duration(value, "f: default")


def test_precedence_inline_then_most_specific_pattern_then_default(tmp_path) -> None:
    table = load_budgets(write(tmp_path, GOOD))
    assert table.resolve("other.py", ci=False).seconds == 420
    assert table.resolve("other.py", ci=False).source == "default"
    assert table.resolve("plot_quick.py", ci=False).seconds == 30
    mujoco = table.resolve("mujoco_hopper.py", ci=False)
    assert (mujoco.seconds, mujoco.source, mujoco.reason) == (
        180,
        "pattern",
        "renders a 480x360 video",
    )
    assert "'mujoco_*.py'" in mujoco.detail
    # More literal characters win over the shorter glob.
    assert table.resolve("mujoco_cheetah_run.py", ci=False).seconds == 240
    inline = table.resolve(
        "plot_quick.py", source_text='x = 1\n# docsaccel_budget = "5s"\n', ci=False
    )
    assert (inline.seconds, inline.source) == (5, "inline")
    unbounded = table.resolve("train_ppo.py", ci=False)
    assert unbounded.seconds is None and unbounded.reason.startswith("unbounded on purpose")
    assert unbounded.describe().startswith("unbounded from")


def test_a_loaded_table_travels_to_workers_whole(tmp_path) -> None:
    import pickle

    # The planner carries the table to sphinx-gallery's workers by pickle.
    table = load_budgets(write(tmp_path, GOOD))
    copy = pickle.loads(pickle.dumps(table))
    assert copy == table and copy.patterns == table.patterns
    assert copy.resolve("mujoco_cheetah_run.py", ci=False) == table.resolve(
        "mujoco_cheetah_run.py", ci=False
    )
    assert load_budgets(write(tmp_path, GOOD.replace('"3m"', '"4m"'))) != table


def test_ci_factor_applies_only_on_ci(tmp_path, monkeypatch) -> None:
    table = load_budgets(write(tmp_path, GOOD))
    assert table.resolve("plot_quick.py", ci=True).seconds == 45
    monkeypatch.setenv("CI", "true")
    assert table.resolve("other.py").seconds == 630
    monkeypatch.setenv("CI", "false")
    assert table.resolve("other.py").seconds == 420


def test_no_file_means_unbounded() -> None:
    from docsaccel.budgets import BudgetTable

    budget = BudgetTable().resolve("anything.py")
    assert budget.seconds is None and budget.source == "builtin"


def test_ambiguous_tie_is_an_error_at_load(tmp_path) -> None:
    path = write(tmp_path, '[examples]\n"a_*.py" = "1m"\n"*_b.py" = "2m"\n')
    load_budgets(path, examples=["a_c.py", "c_b.py"])  # one pattern matches each: fine
    with pytest.raises(BudgetError) as excinfo:
        load_budgets(path, examples=["a_b.py"])
    message = str(excinfo.value)
    assert str(path) in message and "'a_*.py'" in message and "'*_b.py'" in message
    assert "'a_b.py'" in message


def test_pattern_matching_nothing_is_reported(tmp_path) -> None:
    table = load_budgets(write(tmp_path, GOOD))
    warnings = table.check_examples(["plot_quick.py", "mujoco_a.py"])
    assert any("'train_*.py' matches no example" in w for w in warnings)
    assert not any("'plot_quick.py'" in w for w in warnings)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('defualt = "7m"\n', ["unknown key 'defualt'", "'7m'"]),
        ('default = "7 min"\n', ["default", "'7 min'"]),
        ("default = 0\n", ["default", "more than 0"]),
        ('default = "none"\n', ["default", "unbounded"]),
        ("ci_factor = -1\n", ["ci_factor", "-1"]),
        ('[examples]\n"a.py" = "none"\n', ["'a.py'", "needs a reason"]),
        ('[examples]\n"a.py" = { budget = "1m", why = "x" }\n', ["'a.py'", "unknown key 'why'"]),
        (
            '[examples]\n"a.py" = { reason = "x" }\n',
            ["'a.py'", "neither a 'budget' nor a 'memory' key"],
        ),
        ('[examples]\n"a.py" = "-2m"\n', ["'a.py'", "'-2m'"]),
        ('default = "7m\n', ["not valid TOML"]),
        ("examples = 3\n", ["[examples] must be a table"]),
        ('fast_default = "30s"\n', ["fast_default", "needs a default"]),
        ('default = "1m"\nfast_default = "none"\n', ["fast_default", "not a budget"]),
        ('[examples]\n"a.py" = { budget = "1m", fast = "none" }\n', ["'a.py'.fast", "none"]),
        ('[examples]\n"a.py" = { budget = "1m", fast = "soon" }\n', ["'a.py'.fast", "'soon'"]),
    ],
)
def test_bad_files_name_file_key_value(tmp_path, text, expected) -> None:
    path = write(tmp_path, text)
    with pytest.raises(BudgetError) as excinfo:
        load_budgets(path)
    message = str(excinfo.value)
    assert message.startswith(str(path))
    for part in expected:
        assert part in message


def test_unreadable_files(tmp_path) -> None:
    with pytest.raises(BudgetError, match="cannot read the budget file"):
        load_budgets(tmp_path / "missing.toml")
    path = tmp_path / "latin1.toml"
    path.write_bytes('default = "7m" # caf\xe9\n'.encode("latin-1"))
    with pytest.raises(BudgetError, match="not UTF-8"):
        load_budgets(path)


def test_inline_override_forms() -> None:
    assert read_inline_budget("# docsaccel_budget = 90\n", "x.py") == Rule(90.0)
    table_form = '#   docsaccel_budget = { budget = "none", reason = "trains" }\n'
    assert read_inline_budget(table_form, "x.py") == Rule(None, reason="trains")
    both = '# docsaccel_budget = { budget = "2m", fast = "10s" }\n'
    assert read_inline_budget(both, "x.py") == Rule(120.0, fast_seconds=10.0)
    assert read_inline_budget("print('no override')\n", "x.py") is None
    with pytest.raises(ExampleFileError, match=r"^x\.py:1: docsaccel_budget: '30s' is not a TOML"):
        read_inline_budget("# docsaccel_budget = 30s\n", "x.py")
    with pytest.raises(
        ExampleFileError, match=r"^x\.py:3: docsaccel_budget is set 2 times \(lines 1, 3\)"
    ):
        read_inline_budget('# docsaccel_budget = "1s"\n\n# docsaccel_budget = "2s"\n', "x.py")
    # A value the TOML parser reads but the budget rules refuse: its line, key and value too.
    with pytest.raises(
        ExampleFileError, match=r"^examples/a\.py:3: docsaccel_budget\.memory: '1P' "
    ):
        read_inline_budget(
            '"""A"""\n\n# docsaccel_budget = { memory = "1P" }\n', "examples/a.py", 1 << 30
        )


def test_format_seconds() -> None:
    assert format_seconds(95) == "1m35s"
    assert format_seconds(0.5) == "0.5s"
    assert format_seconds(3600) == "1h"
    assert format_seconds(5400) == "1h30m"


FAST = """
default = "5m"
fast_default = "30s"

[examples]
"mujoco_*.py" = { budget = "3m", fast = "20s", reason = "renders a video" }
"plot_quick.py" = "10s"
"""


def test_fast_budgets_come_from_the_winning_rule(tmp_path) -> None:
    table = load_budgets(write(tmp_path, FAST))
    mujoco = table.resolve("mujoco_a.py", ci=False, fast=True)
    assert (mujoco.seconds, mujoco.source) == (20, "pattern")
    assert mujoco.detail.endswith("'mujoco_*.py' (fast path)")
    assert table.resolve("mujoco_a.py", ci=False, fast=False).seconds == 180
    # A rule without a fast budget keeps its budget: fast_default never overrides a pattern.
    assert table.resolve("plot_quick.py", ci=False, fast=True).seconds == 10
    default = table.resolve("other.py", ci=False, fast=True)
    assert (default.seconds, default.source) == (30, "default")
    assert table.resolve("other.py", ci=True, fast=True).seconds == 30  # no ci_factor here
    inline = '# docsaccel_budget = { budget = "1m", fast = "5s" }\n'
    assert table.resolve("mujoco_a.py", source_text=inline, ci=False, fast=True).seconds == 5


@pytest.mark.parametrize("value", ["-1s", "-2m30s", "-0s"])
def test_a_negative_duration_string_is_refused_as_negative(value) -> None:
    with pytest.raises(BudgetError, match=rf"budget must be more than 0 seconds, got '{value}'"):
        parse_duration(value, "budgets.toml: [examples] 'plot_a.py'")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (1e400, "more than 168h (7 days)"),
        ("1e400", "more than 168h (7 days)"),
        (10**400, "more than 168h (7 days)"),
        (-(10**400), "more than 0 seconds"),
        (float("-inf"), "more than 0 seconds"),
        ("nan", "is not a number of seconds"),
        (float("nan"), "nan is not a number of seconds"),  # TOML's bare nan
        ("8d", "units h, m, s"),
    ],
    ids=["inf", "inf-text", "huge-int", "huge-negative-int", "-inf", "nan", "toml-nan", "days"],
)
def test_an_out_of_range_duration_names_the_rule_it_breaks(value, message) -> None:
    # "1e400" said "must be more than 0 seconds, got inf"; "8d" did not name the units.
    with pytest.raises(BudgetError) as raised:
        parse_duration(value, "budgets.toml: default")
    assert message in str(raised.value)


# Patterns against ids: what the report shows selects the example ------------------------


def two_galleries(tmp_path: Path) -> Path:
    """A conf folder with a gallery inside it and one beside it, each with plot_print.py."""
    docs = tmp_path / "source"
    for folder in (docs / "examples", tmp_path / "tutorials_src"):
        folder.mkdir(parents=True)
        (folder / "README.txt").write_text("Gallery\n=======\n", encoding="utf-8")
        (folder / "plot_print.py").write_text('"""T\n=\n"""\nprint(1)\n', encoding="utf-8")
    return docs


GALLERIES = {"examples_dirs": ["examples", "../tutorials_src"], "gallery_dirs": ["a", "t"]}


def test_an_id_as_the_report_shows_it_selects_its_example(tmp_path) -> None:
    from docsaccel.examples import plan_examples
    from docsaccel.sg_compat import with_defaults

    docs = two_galleries(tmp_path)
    table = parse_budgets(
        {"examples": {"plot_print.py": "30s", "../tutorials_src/plot_print.py": "2m"}}, "b.toml"
    )
    conf = with_defaults({**GALLERIES, "filename_pattern": "/plot_"})

    examples = plan_examples(docs, conf, table)

    budgets = {example.id: example.budget.seconds for example in examples}
    assert budgets == {"examples/plot_print.py": 30.0, "../tutorials_src/plot_print.py": 120.0}
    assert table.check_examples((e.name, e.id) for e in examples) == []


def test_an_id_pattern_beats_the_name_and_globs_match_ids() -> None:
    table = parse_budgets(
        {
            "examples": {
                "plot_*.py": "1m",
                "examples/plot_print.py": "10s",
                "../tutorials_src/*": "3m",
            }
        },
        "b.toml",
    )

    assert table.resolve("plot_print.py", example_id="examples/plot_print.py").seconds == 10.0
    tutorial = table.resolve("plot_print.py", example_id="../tutorials_src/plot_print.py")
    assert tutorial.seconds == 180.0, "the longer literal part wins"
    assert table.resolve("plot_other.py", example_id="examples/plot_other.py").seconds == 60.0


def test_a_pattern_matching_nothing_says_what_patterns_match() -> None:
    table = parse_budgets({"examples": {"tutorials_src/plot_print.py": "2m"}}, "b.toml")

    [warning] = table.check_examples([("plot_print.py", "../tutorials_src/plot_print.py")])

    assert warning.startswith("b.toml: [examples] pattern 'tutorials_src/plot_print.py' matches")
    assert "path inside its gallery folder" in warning and "its id as reports show it" in warning


@pytest.mark.parametrize(
    ("value", "ci", "problem"),
    [("true", True, False), ("0", False, False), ("", False, False), ("maybe", False, True)],
)
def test_ci_reads_switch_spellings_and_names_any_other(value, ci, problem) -> None:
    from docsaccel.budgets import ci_problem, is_ci

    assert is_ci({"CI": value}) is ci
    said = ci_problem({"CI": value})
    assert (said is not None) is problem
    if problem:
        assert said.startswith(f"CI={value!r} is not a switch")


# One rule for every reader of a budget ---------------------------------------------------


@pytest.mark.parametrize("text", ["", "ci_factor = 2\n", "[examples]\n"])
def test_a_file_that_sets_no_budget_is_warned(tmp_path, text) -> None:
    """An empty budget file was accepted silently: every example ran unbounded."""
    path = write(tmp_path, text)
    warnings = load_budgets(path).check_examples(["plot_a.py"])
    assert warnings == [
        f"{path}: sets no budget (no default, memory_default or [examples] rule); every "
        "example runs unbounded"
    ]
    for text in (GOOD, 'memory_default = "1G"\n'):
        warnings = load_budgets(write(tmp_path, text)).check_examples(["plot_quick.py"])
        assert not any("sets no budget" in line for line in warnings), warnings


def test_every_reader_bounds_memory_budgets_by_this_machines_memory(tmp_path) -> None:
    """``check --budgets`` accepted ``memory_default = "99T"``, which the build refused."""
    path = write(tmp_path, 'memory_default = "99T"\n')
    with pytest.raises(BudgetError, match=r"memory_default: '99T' is more than the memory of"):
        load_budgets(path)
    assert load_budgets(path, memory_at_most=100 * 2**40).memory_default == 99 * 2**40


def test_an_inline_fast_budget_above_the_full_one_warns_as_the_files_does(tmp_path) -> None:
    swapped = '{ budget = "1m", fast = "2m", memory = "1G", fast_memory = "2G" }'
    warned: list[str] = []
    source = f"import time\n# docsaccel_budget = {swapped}\n"
    read_inline_budget(source, "examples/plot_a.py", warn=warned.append)
    path = write(tmp_path, f'[examples]\n"plot_a.py" = {swapped}\n')
    in_file = load_budgets(path).check_examples(["plot_a.py"])
    key = "examples/plot_a.py:2: docsaccel_budget"
    assert warned == [
        f"{key}: fast = 2m is larger than budget = 1m: a fast-path budget above the full "
        "build's (the two swapped?)",
        f"{key}: fast_memory = 2G is larger than memory = 1G: a fast-path budget above the "
        "full build's (the two swapped?)",
    ]
    # The same words after the key, whichever the rule is written in.
    assert [line.split("'.", 1)[1] for line in in_file] == [
        line.split(": ", 2)[2] for line in warned
    ]


@pytest.mark.parametrize("written", ["1e400", "1E+400", "-1e400"])
def test_a_toml_number_out_of_range_is_said_as_written(tmp_path, written) -> None:
    """``default = 1e400`` was said as "inf is more than 168h"."""
    with pytest.raises(BudgetError) as raised:
        load_budgets(write(tmp_path, f"default = {written}\n"))
    assert f"default: {written} is more than" in str(raised.value) or (
        f"got {written}" in str(raised.value)
    )
    with pytest.raises(ExampleFileError) as raised:
        read_inline_budget(f"# docsaccel_budget = {written}\n", "plot_a.py")
    assert "inf" not in str(raised.value) and written in str(raised.value)


# What a pattern matches: a bare name at any depth, a path inside its gallery -------------


def test_a_bare_name_matches_its_file_in_any_sub_gallery() -> None:
    table = parse_budgets(
        {"examples": {"plot_sleep.py": "2m", "mujoco_*.py": "3m", "basics/*": "4m"}}, "b.toml"
    )

    sleep = table.resolve("advanced/plot_sleep.py", example_id="examples/advanced/plot_sleep.py")
    assert (sleep.seconds, sleep.detail) == (120.0, "b.toml [examples] 'plot_sleep.py'")
    assert table.resolve("deep/er/mujoco_ant.py").seconds == 180.0
    # A pattern with a '/' stays anchored at the gallery folder (or the id).
    assert table.resolve("advanced/basics/plot_x.py").seconds is None
    assert table.resolve("basics/plot_x.py").seconds == 240.0
    examples = [
        ("advanced/plot_sleep.py", "e/advanced/plot_sleep.py"),
        ("x/mujoco_a.py", "e/x/mujoco_a.py"),
        ("basics/plot_x.py", "e/basics/plot_x.py"),
    ]
    assert table.check_examples(examples) == []


def test_a_path_beats_a_bare_name_and_an_exact_name_beats_a_folder_glob() -> None:
    table = parse_budgets(
        {
            "examples": {
                "plot_same.py": "1m",
                "basics/plot_same.py": "2m",
                "advanced/*": "3m",
            }
        },
        "b.toml",
    )

    assert table.resolve("basics/plot_same.py").seconds == 120.0
    assert table.resolve("advanced/plot_same.py").seconds == 60.0
    assert table.resolve("advanced/plot_other.py").seconds == 180.0


def test_a_pattern_matching_nothing_names_the_closest_examples() -> None:
    table = parse_budgets(
        {"examples": {"plot_sleap.py": "2m", "advanced/plot_slep.py": "2m", "nothing_*": "1m"}},
        "b.toml",
    )
    examples = [
        ("plot_a.py", "examples/plot_a.py"),
        ("plot_b.py", "examples/plot_b.py"),
        ("advanced/plot_sleep.py", "examples/advanced/plot_sleep.py"),
    ]

    sleap, slep, nothing = table.check_examples(examples)

    assert "'plot_sleap.py' matches no example; did you mean 'advanced/plot_sleep.py'?" in sleap
    assert "'advanced/plot_slep.py' matches no example; did you mean 'advanced/plot_sleep.py'?" in (
        slep
    )
    assert "did you mean" not in nothing and "'plot_a.py'" not in nothing.split("(")[0]
    assert "a pattern without '/' matches an example's file name in any sub-gallery" in nothing
