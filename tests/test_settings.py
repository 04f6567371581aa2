"""Every docsaccel setting is declared once, and everything else is made from it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from unittest.mock import MagicMock

import pytest

from docsaccel import settings
from docsaccel.contract import CI_ENV, MAX_BUDGET_SECONDS
from docsaccel.settings import Source, config_values, environment_variables, specs

ROOT = Path(__file__).parents[1]
SRC = ROOT / "src" / "docsaccel"


def test_the_plugin_registers_each_conf_setting_once_from_the_declaration(tmp_path) -> None:
    from docsaccel.gallery.extension import setup

    app = MagicMock()
    app.outdir = tmp_path / "html"  # where setup() notes that a build started
    with pytest.MonkeyPatch.context() as patch:
        # setup() also sets up how the process ends; not this test's subject.
        patch.setattr("docsaccel.gallery.process_end.install", lambda: None)
        setup(app)
    registered = [call.args[:2] for call in app.add_config_value.call_args_list]
    declared = [(key, default) for key, default, _ in config_values()]
    assert registered == declared
    assert len({key for key, _ in registered}) == len(registered)
    assert all(key.startswith(settings.CONFIG_PREFIX) for key, _ in registered)


def test_each_default_passes_its_own_check() -> None:
    for item in specs():
        source = Source(item.describe(), item.default, False, Path("."))
        assert item.check(source) == item.default, item.name
        assert item.help.strip() and item.accepts.strip(), item.name
        assert item.key is not None or item.env is not None, item.name


def test_a_declaration_is_fixed_and_names_its_setting() -> None:
    budgets, video_scan = settings.spec("budgets"), settings.spec("video_scan")
    assert (budgets.key, budgets.describe()) == ("docsaccel_budgets", "docsaccel_budgets")
    # A setting of the environment only is named by its variable.
    assert (video_scan.key, video_scan.describe()) == (None, "DOCSACCEL_VIDEO_SCAN")
    with pytest.raises(AttributeError):
        budgets.default = "elsewhere.toml"  # type: ignore[misc]
    assert settings.spec("budgets") == budgets and budgets.default is None


def test_every_variable_the_code_names_is_declared() -> None:
    named = set()
    for path in SRC.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        named |= set(re.findall(r"[\"'`](DOCSACCEL_[A-Z_]+)\b", text))
    assert named, "the scan found no variable at all"
    assert named <= set(environment_variables()), named - set(environment_variables())
    assert CI_ENV not in environment_variables()


def test_the_docs_table_is_the_declaration(tmp_path) -> None:
    # A real Sphinx build of a page holding the site's directive.
    (tmp_path / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(ROOT / 'docs')!r})\n"
        "extensions = ['settings_table']\n",
        encoding="utf-8",
    )
    (tmp_path / "index.rst").write_text("Settings\n========\n\n.. docsaccel-settings::\n")
    out = tmp_path / "_build"
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-W", str(tmp_path), str(out)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    text = (out / "index.html").read_text(encoding="utf-8")
    for item in specs():
        for name in (item.key, item.env):
            assert name is None or name in text, (item.name, name)
    guide = (ROOT / "docs" / "guide" / "settings.rst").read_text(encoding="utf-8")
    assert ".. docsaccel-settings::" in guide
    # The page holds the table, not a hand-written copy of it.
    assert not any(key in guide for key, _, _ in config_values())


def _read(conf: dict[str, object], env: dict[str, str], confdir: Path) -> settings.Settings:
    from types import SimpleNamespace

    values = {key: default for key, default, _ in config_values()}
    values.update(conf)
    return settings.read_settings(SimpleNamespace(**values), confdir=confdir, env=env)


@pytest.mark.parametrize("case", [str.upper, str.title, lambda text: f" {text} "])
def test_a_choice_is_read_as_a_switch_is_whatever_its_case(tmp_path: Path, case) -> None:
    # DOCSACCEL_FAST=YES is a switch; DOCSACCEL_ON_OVERRUN=FAIL was refused.
    assert _read({}, {"DOCSACCEL_ON_OVERRUN": case("fail")}, tmp_path).on_overrun == "fail"
    assert _read({"docsaccel_on_overrun": case("fail")}, {}, tmp_path).on_overrun == "fail"
    recorder = _read({}, {"DOCSACCEL_CACHE_RECORDER": case("instrument")}, tmp_path)
    assert recorder.cache_recorder == "instrument"


def test_a_bad_choice_names_the_variable_that_gave_it(tmp_path: Path) -> None:
    with pytest.raises(settings.SettingError) as raised:
        _read({"docsaccel_on_overrun": "warn"}, {"DOCSACCEL_ON_OVERRUN": "stop"}, tmp_path)
    assert str(raised.value) == "DOCSACCEL_ON_OVERRUN must be 'warn' or 'fail', got 'stop'"


def test_a_budget_file_that_is_a_folder_is_called_a_folder(tmp_path: Path) -> None:
    (tmp_path / "budgets").mkdir()
    with pytest.raises(settings.SettingError) as raised:
        _read({"docsaccel_budgets": "budgets"}, {}, tmp_path)
    assert "is a folder, not a TOML budget file" in str(raised.value)
    assert "docsaccel_budgets = 'budgets'" in str(raised.value)


def test_a_cache_folder_the_system_refuses_to_look_at_is_one_line(tmp_path: Path) -> None:
    long = str(tmp_path / ("a" * 300))  # longer than any file name may be
    with pytest.raises(settings.SettingError) as raised:
        _read({}, {"DOCSACCEL_CACHE": long}, tmp_path)
    assert str(raised.value) == f"DOCSACCEL_CACHE={long!r}: File name too long"


@pytest.mark.parametrize(
    ("conf", "env"),
    [({}, {"DOCSACCEL_CACHE": "{below}"}), ({"docsaccel_cache": "{below}"}, {})],
    ids=["variable", "conf"],
)
def test_a_cache_folder_below_a_file_is_refused_naming_where_it_came_from(
    tmp_path: Path, conf, env
) -> None:
    # A file where a parent folder should be is a typo: the build stops, as for the file
    # itself, rather than warn and build without a cache.
    (tmp_path / "pyproject.toml").write_text("x")
    below = str(tmp_path / "pyproject.toml" / "cache")
    with pytest.raises(settings.SettingError) as raised:
        _read({k: below for k in conf}, {k: below for k in env}, tmp_path)
    where = "DOCSACCEL_CACHE=" if env else "docsaccel_cache="
    assert str(raised.value) == (
        f"{where}{below!r}: {below} cannot be made: {tmp_path / 'pyproject.toml'} is a file, "
        "not a folder"
    )


def test_a_cache_folder_that_cannot_be_made_is_told_before_any_write() -> None:
    from docsaccel.cache.store import unwritable

    # /proc takes no new folder, whatever access() answers for root.
    assert unwritable(Path("/proc/docsaccel-nonexistent/cache")) == (
        "cannot be made in /proc: the system does not let a folder be made there (a kernel "
        "file system such as /proc or /sys); choose a folder of the project or the home folder"
    )


@pytest.mark.parametrize(
    ("conf", "env"),
    [
        ({}, {"DOCSACCEL_SHARD_RECORDS": "{file}"}),
        ({}, {"DOCSACCEL_CACHE": "{file}"}),
        ({"docsaccel_cache": "{file}"}, {}),
        ({"docsaccel_cache_roots": ["{file}"]}, {}),
    ],
    ids=["shard-records", "cache-variable", "cache-conf", "cache-roots"],
)
def test_a_file_given_for_a_folder_is_called_a_file(tmp_path: Path, conf, env) -> None:
    """Every path setting that wants a folder says a file is one ("no such folder" sent
    the reader looking for a folder that is not missing)."""
    file = tmp_path / "notes.txt"
    file.write_text("x")

    def given(value):
        return [str(file)] if isinstance(value, list) else str(file)

    with pytest.raises(settings.SettingError) as raised:
        _read({k: given(v) for k, v in conf.items()}, {k: str(file) for k in env}, tmp_path)
    assert f"{file} is a file, not a folder" in str(raised.value)


def test_none_in_conf_is_refused_where_the_setting_does_not_allow_it(tmp_path: Path) -> None:
    """Sphinx only warns about a value of the wrong type; None was then read as the default
    (``docsaccel_videos = None`` built with videos on)."""
    for item in specs():
        if item.key is None:
            continue
        if type(None) in item.types:
            assert _read({item.key: None}, {}, tmp_path) is not None, item.key
            continue
        with pytest.raises(settings.SettingError) as raised:
            _read({item.key: None}, {}, tmp_path)
        assert str(raised.value).startswith(f"{item.key} must be "), item.key
        assert str(raised.value).endswith("got None"), item.key


@pytest.mark.parametrize("value", ["1e308", "604801"])
def test_the_grace_is_capped_as_budgets_are(tmp_path: Path, value) -> None:
    """An example swallowing its interruption would hold the build for the grace: no
    duration docsaccel reads is longer than the budgets' cap."""
    with pytest.raises(settings.SettingError) as raised:
        _read({}, {"DOCSACCEL_INTERRUPT_GRACE": value}, tmp_path)
    assert str(raised.value).startswith(f"DOCSACCEL_INTERRUPT_GRACE={value!r} is more than")
    capped = _read({}, {"DOCSACCEL_INTERRUPT_GRACE": "604800"}, tmp_path)
    assert capped.interrupt_grace == MAX_BUDGET_SECONDS


def test_the_unknown_variable_warning_offers_only_what_a_user_sets() -> None:
    [message] = settings.unknown_variables({"DOCSACCEL_CACHE_CHILDREN": "1"})
    offered = message.split("Variables: ")[1].split(", ")
    assert "DOCSACCEL_CACHE" in offered
    assert "DOCSACCEL_CACHE_CHILD" not in offered
    assert "DOCSACCEL_GL_VERIFIED" not in offered
    # Still known: docsaccel sets them for its own processes, no warning for those.
    internal = {"DOCSACCEL_CACHE_CHILD": "x", "DOCSACCEL_GL_VERIFIED": "egl"}
    assert settings.unknown_variables(internal) == []


@pytest.mark.parametrize(
    ("given", "says"),
    [(".", "is the Sphinx conf folder"), ("..", "holds the Sphinx conf folder")],
    ids=["the-conf-folder", "its-parent"],
)
@pytest.mark.parametrize("from_env", [True, False], ids=["variable", "conf"])
def test_a_cache_that_is_or_holds_the_sources_is_refused(
    tmp_path: Path, monkeypatch, given, says, from_env
) -> None:
    """Its kept pages would be read as documents, its entries written among the project's
    files (``DOCSACCEL_CACHE=.`` at the repository root)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    monkeypatch.chdir(docs)  # a variable's path is relative to where the build runs
    conf, env = ({}, {"DOCSACCEL_CACHE": given}) if from_env else ({"docsaccel_cache": given}, {})
    with pytest.raises(settings.SettingError) as raised:
        _read(conf, env, docs)
    where = "DOCSACCEL_CACHE=" if from_env else "docsaccel_cache="
    assert str(raised.value).startswith(f"{where}{given!r}: {(docs / given).resolve()} {says}")
    assert len(str(raised.value).splitlines()) == 1


def test_a_cache_inside_the_sources_is_kept(tmp_path: Path) -> None:
    assert _read({"docsaccel_cache": "_cache"}, {}, tmp_path).cache == tmp_path / "_cache"


@pytest.mark.parametrize("value", ["0", "0.5", "0.0"])
def test_a_grace_too_short_to_unwind_is_refused(tmp_path: Path, value) -> None:
    """A grace of 0 stopped hard every example interrupted at its budget, ending the build."""
    with pytest.raises(settings.SettingError) as raised:
        _read({}, {"DOCSACCEL_INTERRUPT_GRACE": value}, tmp_path)
    assert str(raised.value).startswith(
        f"DOCSACCEL_INTERRUPT_GRACE={value!r} is less than 1 second"
    )
    assert _read({}, {"DOCSACCEL_INTERRUPT_GRACE": "1"}, tmp_path).interrupt_grace == 1.0


def test_every_switch_refuses_none_in_conf(tmp_path: Path) -> None:
    """A switch reads one way: ``docsaccel_fast = None`` was off, ``docsaccel_videos =
    None`` an error saying "must be True or False"."""
    switches = [item for item in specs() if item.check is settings._switch and item.key]
    assert "docsaccel_fast" in [item.key for item in switches]
    for item in switches:
        assert item.types == (bool,), item.key
        with pytest.raises(settings.SettingError) as raised:
            _read({item.key: None}, {}, tmp_path)
        assert str(raised.value) == f"{item.key} must be True or False, got None"


def test_every_d_text_is_read_by_the_settings_rule_or_refused_naming_it(tmp_path) -> None:
    # A real Sphinx config with ``-D`` overrides, as sphinx-build makes it.
    from sphinx.config import Config

    good = {"progress": "off", "report_chart": "yes", "cache_verify": "0.5"}
    for item in specs():
        if item.key is None:
            continue
        config = Config({}, {item.key: "maybe"})
        config.add(item.key, item.default, "", frozenset(item.types))
        try:
            settings.read_overrides(config)
        except settings.SettingError as exc:
            assert f"-D {item.key}='maybe'" in str(exc), exc
        else:  # a text is a text: the setting's own check reads it
            assert not isinstance(getattr(config, item.key), bool), item.name
    for name, text in good.items():
        item = settings.spec(name)
        config = Config({}, {item.key: text})
        config.add(item.key, item.default, "", frozenset(item.types))
        settings.read_overrides(config)
        assert getattr(config, item.key) == {"off": False, "yes": True, "0.5": 0.5}[text]
    assert settings.override_value(settings.spec("cache_env"), "A,B") == ["A", "B"]


def test_a_shard_list_that_is_a_named_pipe_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """Reading a named pipe would wait for a writer: the setting says what it is instead,
    as every path setting that expects a file does."""
    pipe = tmp_path / "shard.txt"
    os.mkfifo(pipe)
    with pytest.raises(settings.SettingError) as raised:
        _read({}, {"DOCSACCEL_SHARD_EXAMPLES": str(pipe)}, tmp_path)
    assert str(raised.value) == (
        f"DOCSACCEL_SHARD_EXAMPLES = {str(pipe)!r}: {pipe} is a named pipe, not a regular file"
    )
