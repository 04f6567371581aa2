"""Every configuration error of docsaccel's (a ``DOCSACCEL_*`` variable, a ``docsaccel_*``
value, the budget file) stops ``sphinx-build`` with one line naming the setting and the
value, and exit status 2: no crash report, no traceback (Sphinx 9 prints one for any
exception out of a build)."""

from __future__ import annotations

import os

import pytest
from helpers.gallery_build import build, make_project

pytestmark = pytest.mark.slow

#: What Sphinx prints around an exception it did not expect, in any release.
CRASH_WORDS = ("Traceback", "Exception occurred", "crash", "Versions", "sphinx-err-")


@pytest.mark.parametrize(
    ("env", "conf", "budgets", "named"),
    [
        ({"DOCSACCEL_CACHE": "1"}, "", None, "DOCSACCEL_CACHE='1'"),
        ({"DOCSACCEL_CACHE_SPHINX": "maybe"}, "", None, "DOCSACCEL_CACHE_SPHINX='maybe'"),
        ({}, 'docsaccel_cache_granularity = "line"\n', None, "docsaccel_cache_granularity"),
        ({}, "", "[budgets\n", "budgets.toml"),
        ({}, "docsaccel_videos = None\n", None, "docsaccel_videos must be True or False"),
        ({}, "docsaccel_fast = None\n", None, "docsaccel_fast must be True or False"),
        ({"DOCSACCEL_INTERRUPT_GRACE": "0"}, "", None, "DOCSACCEL_INTERRUPT_GRACE='0' is less"),
        ({"DOCSACCEL_CACHE": "{src}"}, "", None, "is the Sphinx conf folder"),
        ({}, 'docsaccel_cache = ".."\n', None, "docsaccel_cache='..': "),
    ],
    ids=[
        "cache-variable",
        "sphinx-state-variable",
        "conf-value",
        "budget-file",
        "conf-none",
        "fast-none",
        "no-grace",
        "cache-is-the-sources",
        "cache-holds-the-sources",
    ],
)
def test_a_configuration_error_is_one_line_and_status_2(tmp_path, env, conf, budgets, named):
    src = make_project(tmp_path, ["plot_quick.py"], conf=conf, budgets=budgets)
    env = {name: value.format(src=src) for name, value in env.items()}
    if "DOCSACCEL_CACHE_SPHINX" in env:
        env = {**env, "DOCSACCEL_CACHE": str(tmp_path / "cache")}
    built = build(src, env=env)
    assert built.returncode == 2, built.output
    for word in CRASH_WORDS:
        assert word not in built.output, built.output
    lines = [line for line in built.output.splitlines() if line.strip()]
    assert len(lines) == 1 and named in lines[0], built.output


def _d_cases() -> list[tuple[str, str]]:
    """A ``-D`` text Sphinx cannot convert itself, for every setting whose conf.py value
    is not a text (a bool, a number, a list): each is refused by docsaccel's rule."""
    from docsaccel.settings import specs

    return [
        (item.key, "maybe")
        for item in specs()
        if item.key is not None and str not in item.types and list not in item.types
    ]


@pytest.mark.parametrize(("key", "text"), _d_cases(), ids=lambda value: str(value))
def test_a_bad_d_value_is_one_line_and_status_2(tmp_path, key, text):
    src = make_project(tmp_path, ["plot_quick.py"])
    built = build(src, "-D", f"{key}={text}")
    assert built.returncode == 2, built.output
    for word in (*CRASH_WORDS, "please open an issue"):
        assert word not in built.output, built.output
    lines = [line for line in built.output.splitlines() if line.strip()]
    assert len(lines) == 1 and f"-D {key}={text!r}" in lines[0], built.output


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ("docsaccel_on_overrun=explode", "-D docsaccel_on_overrun must be 'warn' or 'fail'"),
        ("docsaccel_cache_granularity=line", "-D docsaccel_cache_granularity must be"),
        ("docsaccel_budgets=missing.toml", "-D docsaccel_budgets = 'missing.toml': no such"),
        ("docsaccel_report_page=index", "-D docsaccel_report_page = 'index' would replace"),
    ],
    ids=["on-overrun", "granularity", "budgets", "report-page"],
)
def test_a_bad_d_value_says_it_came_from_d(tmp_path, given, named):
    # conf.py sets the same setting to a good value: the message names the value used.
    conf = 'docsaccel_on_overrun = "warn"\ndocsaccel_cache_granularity = "module"\n'
    src = make_project(tmp_path, ["plot_quick.py"], conf=conf)
    built = build(src, "-D", given)
    assert built.returncode == 2, built.output
    lines = [line for line in built.output.splitlines() if line.strip()]
    assert len(lines) == 1 and named in lines[0], built.output
    assert given.split("=")[1] in lines[0], built.output


@pytest.mark.parametrize("key", ["docsaccel_budgets", "docsaccel_history"])
@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_a_file_setting_given_no_regular_file_says_so(tmp_path, key, kind):
    """A path setting that expects a file, given one that exists but is no regular file
    (``/dev/null``, a named pipe): one line naming the setting, where it came from and
    the value, saying what it is (never "no such file"), before a build reads or appends
    to it."""
    src = make_project(tmp_path, ["plot_quick.py"])
    if kind == "fifo":
        given = str(tmp_path / "pipe")
        os.mkfifo(given)
        what = "a named pipe"
    else:
        given, what = os.devnull, "a character device"
    built = build(src, "-D", f"{key}={given}")
    assert built.returncode == 2, built.output
    lines = [line for line in built.output.splitlines() if line.strip()]
    assert len(lines) == 1, built.output
    assert f"-D {key} = {given!r}: " in lines[0], built.output
    assert f"{given} is {what}, not a regular file" in lines[0], built.output
    assert "no such file" not in lines[0], built.output


def test_d_values_are_read_as_conf_values(tmp_path):
    # A switch's spellings, a number and a list: what conf.py would give, no warning.
    src = make_project(tmp_path, ["plot_quick.py"])
    args = ("-D", "docsaccel_progress=no", "-D", "docsaccel_report_chart=yes")
    built = build(src, "-W", *args, "-D", "docsaccel_cache_env=A,B")
    assert built.returncode == 0, built.output
    assert built.output.strip() == "", built.output


def test_a_misspelled_d_setting_is_named_with_the_right_one(tmp_path):
    # The same hint a misspelled conf.py name gets, beside Sphinx's own warning.
    src = make_project(tmp_path, ["plot_quick.py"])
    built = build(src, "-D", "docsaccel_budget=x.toml")
    assert built.returncode == 0, built.output
    said = "unknown setting 'docsaccel_budget' in -D docsaccel_budget='x.toml' (ignored)"
    assert built.output.count(said) == 1, built.output
    assert f"{said}; did you mean 'docsaccel_budgets'?" in built.output


@pytest.mark.parametrize(
    ("env", "conf"),
    [
        ({"DOCSACCEL_CACHE": "{root}/.git"}, ""),
        ({"DOCSACCEL_CACHE": "{root}/mylib"}, ""),
        # The output folder beside the sources (doc/src, doc/_build/html).
        ({}, 'docsaccel_cache = "../_build/html"\n'),
        # The repository root holds the sources: refused, and its own .docsaccel-cache not.
        ({"DOCSACCEL_CACHE": "{root}"}, ""),
    ],
    ids=["git-folder", "users-package", "output-folder", "repository-root"],
)
def test_a_refused_cache_folder_suggests_one_at_the_project_root(tmp_path, env, conf):
    # The project root is the folder with .git, above the sources (tmp_path/src).
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    (tmp_path / "mylib").mkdir()
    (tmp_path / "mylib" / "__init__.py").write_text("", encoding="utf-8")
    src = make_project(tmp_path, ["plot_quick.py"], conf=conf)
    env = {name: value.format(root=tmp_path) for name, value in env.items()}
    built = build(src, env=env, outdir=tmp_path / "_build" / "html")
    assert built.returncode == 2, built.output
    lines = [line for line in built.output.splitlines() if line.strip()]
    assert len(lines) == 1, built.output
    assert lines[0].endswith(f"such as {tmp_path.resolve() / '.docsaccel-cache'}"), lines[0]
    # What is suggested, the same checks accept.
    suggested = {"DOCSACCEL_CACHE": str(tmp_path.resolve() / ".docsaccel-cache")}
    accepted = build(src, env=suggested, outdir=tmp_path / "_build" / "html")
    assert accepted.returncode == 0, accepted.output


def test_a_refused_cache_folder_of_a_project_built_at_its_root_is_suggested_inside_it(tmp_path):
    """With ``conf.py`` beside ``.git``, the root's ``.docsaccel-cache`` is in the source
    folder, which a cache may be (left out of the documents): suggested, not the folder
    above the repository."""
    src = make_project(tmp_path, ["plot_quick.py"])
    (src / ".git").mkdir()
    outdir = src / "_build" / "html"
    built = build(src, env={"DOCSACCEL_CACHE": str(outdir)}, outdir=outdir)
    assert built.returncode == 2, built.output
    lines = [line for line in built.output.splitlines() if line.strip()]
    assert len(lines) == 1, built.output
    suggested = src.resolve() / ".docsaccel-cache"
    assert lines[0].endswith(f"such as {suggested}"), lines[0]
    accepted = build(src, env={"DOCSACCEL_CACHE": str(suggested)}, outdir=outdir)
    assert accepted.returncode == 0, accepted.output
    assert "docsaccel-cache" not in accepted.output, accepted.output


def test_a_cache_folder_whose_parent_is_missing_is_refused_and_nothing_made(tmp_path):
    src = make_project(tmp_path, ["plot_quick.py"])
    cache = tmp_path / "nonexistent" / "deep" / "cache"
    built = build(src, env={"DOCSACCEL_CACHE": str(cache)})
    assert built.returncode == 2, built.output
    lines = [line for line in built.output.splitlines() if line.strip()]
    assert len(lines) == 1, built.output
    assert f"DOCSACCEL_CACHE={str(cache)!r}" in lines[0], lines[0]
    assert f"parent folder {cache.parent} does not exist" in lines[0], lines[0]
    assert not (tmp_path / "nonexistent").exists()
    # Only the last component is made: a cache whose parent exists is a new folder.
    (tmp_path / "nonexistent").mkdir()
    assert build(src, env={"DOCSACCEL_CACHE": str(tmp_path / "nonexistent" / "c")}).returncode == 0


#: An example whose ``# docsaccel_budget`` comment is not a budget.
BAD_COMMENT = '"""\nBad budget\n==========\n"""\n# docsaccel_budget = "9x"\n'


@pytest.mark.parametrize("cache", [False, True], ids=["no-cache", "cache"])
@pytest.mark.parametrize(
    ("env", "conf", "budgets", "named"),
    [
        ({}, "", None, "docsaccel_budget"),  # BAD_COMMENT
        ({}, "", '[examples]\n"plot_q*.py" = "1m"\n"*_quick.py" = "2m"\n', "equally specific"),
        ({"DOCSACCEL_MEMORY_LIMIT": "50M"}, "", None, "DOCSACCEL_MEMORY_LIMIT"),
        ({}, 'docsaccel_report_page = "index"\n', None, "docsaccel_report_page"),
    ],
    ids=["inline-budget", "tied-patterns", "memory-limit", "report-page"],
)
def test_a_setting_refused_once_planned_is_said_once(tmp_path, cache, env, conf, budgets, named):
    """Refused after the examples were planned, before any ran: one ``ERROR:`` line says
    why, and neither the build's end nor the report's reason says it again."""
    src = make_project(tmp_path, ["plot_quick.py"], conf=conf, budgets=budgets)
    if named == "docsaccel_budget":
        (src / "examples" / "plot_bad_budget.py").write_text(BAD_COMMENT, encoding="utf-8")
    if cache:
        env = {**env, "DOCSACCEL_CACHE": str(tmp_path / "cache")}

    built = build(src, "-W", env=env)

    assert built.returncode == 2, built.output
    for word in CRASH_WORDS:
        assert word not in built.output, built.output
    lines = [line for line in built.output.splitlines() if line.strip()]
    assert len(lines) == 1 and named in lines[0], built.output
    assert lines[0].startswith("ERROR: "), built.output
    why = built.report["build"]["stopped_before_examples"]
    assert named in why and lines[0].count(why) == 1, why


def test_a_cache_that_is_the_source_folder_of_another_conf_folder_is_refused(tmp_path):
    """``sphinx-build -c`` reads ``conf.py`` from elsewhere: the cache is checked against the
    source folder too, not only the conf folder."""
    src = make_project(tmp_path, ["plot_quick.py"])
    confdir = tmp_path / "conf"
    confdir.mkdir()
    (confdir / "conf.py").write_text((src / "conf.py").read_text("utf-8"), encoding="utf-8")
    built = build(src, "-c", str(confdir), env={"DOCSACCEL_CACHE": str(src)})
    assert built.returncode == 2, built.output
    lines = [line for line in built.output.splitlines() if line.strip()]
    said = f"DOCSACCEL_CACHE={str(src)!r}: {src} is the Sphinx source folder"
    assert len(lines) == 1 and said in lines[0], built.output
    assert not (src / "entries").exists()


def test_a_ci_value_that_is_no_switch_is_said_once(tmp_path):
    """``CI=maybe`` is read as not CI (the variable is the CI service's): one warning says
    the budget file's ci_factor does not apply."""
    src = make_project(tmp_path, ["plot_quick.py"], budgets='ci_factor = 2\ndefault = "1m"\n')
    built = build(src, env={"CI": "maybe"})
    assert built.returncode == 0, built.output
    assert built.output.count("CI='maybe' is not a switch") == 1, built.output
    assert "not multiplied by its ci_factor 2" in built.output


SWAPPED = '''"""
Swapped
=======
"""
# docsaccel_budget = { budget = "1m", fast = "2m" }
print("ran")
'''


def test_an_empty_budget_file_and_a_swapped_inline_budget_are_each_warned_once(tmp_path):
    """Both passed silently, while a budget file's swapped rule was warned: the build reads
    the file and the inline comment by the budget file's rule, through Sphinx's logging."""
    src = make_project(tmp_path, ["plot_quick.py"], budgets="")
    (src / "examples" / "plot_swapped.py").write_text(SWAPPED, encoding="utf-8")

    built = build(src)

    assert built.returncode == 0, built.output
    empty = "budgets.toml: sets no budget (no default, memory_default or [examples] rule)"
    assert built.output.count(empty) == 1, built.output
    swapped = "plot_swapped.py:5: docsaccel_budget: fast = 2m is larger than budget = 1m"
    assert built.output.count(swapped) == 1, built.output
    assert built.output.count("WARNING") == 2, built.output
    strict = build(src, "-W")
    assert strict.returncode != 0, strict.output
