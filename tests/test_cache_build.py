"""The example cache in real Sphinx builds, each from a fresh copy of a project, as CI does.

Every build copies a tiny project (a local package ``mylib/``, a data file, a gallery)
into a new folder and builds it with one shared cache folder; a fake installed
distribution (``fakedist``, a ``*.dist-info`` folder outside the project) stands in for a
dependency whose version changes.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from helpers.cache_project import (
    ALL,
    FILES,
    Build,
    Project,
    differing,
    example_source,
    times_masked,
)

from docsaccel.cache.manage import explain
from docsaccel.settings import env_name

pytestmark = pytest.mark.slow


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def _first_build(project: Project, granularity: str, files: dict[str, str]) -> Build:
    """The project at ``granularity``, with ``files`` added, built once (it succeeds)."""
    conf = FILES["docs/conf.py"] + f"docsaccel_cache_granularity = {granularity!r}\n"
    project.write("docs/conf.py", conf)
    for relative, text in files.items():
        project.write(relative, text)
    first = project.build()
    assert first.returncode == 0, first.output
    return first


OPTIONAL = {
    # Takes its other branch once optdep can be imported.
    "mylib/gamma.py": (
        "try:\n    import optdep\nexcept ImportError:\n    optdep = None\n\n\n"
        "def engine():\n    return 'plain' if optdep is None else optdep.NAME\n"
    ),
    # conf.py imports it before any example (its reads are seen by importing it again).
    "mylib/alpha.py": FILES["mylib/alpha.py"].replace(
        "FACTOR = 2",
        "try:\n    import optdep\nexcept ImportError:\n    optdep = None\n\n"
        "FACTOR = 2 if optdep is None else 3",
    ),
    # The first imports mylib.gamma (its body's import fails while it runs); the second
    # uses the module the first left, whose body does not run again.
    "docs/examples/plot_o1.py": example_source(
        "O1", "from mylib import gamma\n\nprint('o1', gamma.engine())\n"
    ),
    "docs/examples/plot_o2.py": example_source(
        "O2", "from mylib import gamma\n\nprint('o2', gamma.engine())\n"
    ),
    # Probes without importing, through a name bound from importlib.util.
    "mylib/probe.py": (
        "from importlib.util import find_spec\n\n"
        "FOUND = find_spec('optdep') is not None\n\n\n"
        "def engine():\n    return 'found' if FOUND else 'plain'\n"
    ),
    "docs/examples/plot_o3.py": example_source(
        "O3", "from mylib import probe\n\nprint('o3', probe.engine())\n"
    ),
}


@pytest.mark.parametrize("granularity", ["module", "function"])
def test_an_optional_dependency_installed_reruns_the_examples_that_missed_it(
    project: Project, granularity: str
) -> None:
    first = _first_build(project, granularity, OPTIONAL)
    assert "o2 plain" in (first.outdir / "auto_examples" / "plot_o2.html").read_text("utf-8")
    # optdep installed beside fakedist (a folder on sys.path), with its distribution.
    (project.site / "optdep").mkdir()
    (project.site / "optdep" / "__init__.py").write_text("NAME = 'optdep'\n", "utf-8")
    info = project.site / "optdep-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: optdep\nVersion: 1.0\n")
    (info / "top_level.txt").write_text("optdep\n", "utf-8")
    again = project.build()
    assert again.returncode == 0, again.output
    assert again.executed() == {"plot_a_alpha.py", "plot_o1.py", "plot_o2.py", "plot_o3.py"}
    for name in ("plot_a_alpha.py", "plot_o1.py", "plot_o2.py", "plot_o3.py"):
        assert again.records[name]["cache"]["reason"] == "optdep: now importable"
    clean = project.build(env={"DOCSACCEL_CACHE": "0"})
    assert clean.returncode == 0, clean.output
    assert differing(again.gallery_files(), clean.gallery_files()) == []
    assert "o2 optdep" in (again.outdir / "auto_examples" / "plot_o2.html").read_text("utf-8")
    assert "o3 found" in (again.outdir / "auto_examples" / "plot_o3.html").read_text("utf-8")
    assert "alpha 63" in (again.outdir / "auto_examples" / "plot_a_alpha.html").read_text("utf-8")
    assert project.build().executed() == set()


def test_second_build_executes_nothing_and_equals_the_first(project: Project) -> None:
    first = project.build()
    assert first.returncode == 0, first.output
    assert first.executed() == set(ALL)
    assert {r["cache"]["reason"] for r in first.records.values()} == {"new example"}
    entries = sorted(p.name.split("--")[0] for p in (project.cache / "entries").iterdir())
    assert entries == [f"examples__{name}" for name in ALL]

    second = project.build()
    assert second.returncode == 0, second.output
    assert second.executed() == set()
    assert second.cached() == set(ALL)
    for name, record in second.records.items():
        assert record["cache"]["hit"] is True
        assert record["wall_seconds"] == first.records[name]["wall_seconds"]
        assert record["cache"]["saved_seconds"] == pytest.approx(
            first.records[name]["wall_seconds"], abs=1e-3
        )
    assert times_masked(second.gallery_files()) == times_masked(first.gallery_files())
    images = [n for n in first.gallery_files() if n.startswith("images/sphx_glr_plot_e")]
    assert images, sorted(first.gallery_files())
    page = (second.outdir / "auto_examples" / "plot_a_alpha.html").read_text("utf-8")
    assert "alpha 42" in page
    last = json.loads((project.cache / "last-build.json").read_text("utf-8"))
    assert (last["hits"], last["misses"]) == (len(ALL), 0)


def test_edits_rerun_exactly_the_examples_that_depend_on_them(project: Project) -> None:
    assert project.build().returncode == 0
    # mylib.alpha was imported by conf.py, before plot_a_alpha ran: still its dependency.
    project.write("mylib/alpha.py", FILES["mylib/alpha.py"].replace("FACTOR = 2", "FACTOR = 3"))
    after_library = project.build()
    assert after_library.returncode == 0, after_library.output
    assert after_library.executed() == {"plot_a_alpha.py"}
    assert after_library.records["plot_a_alpha.py"]["cache"] == {
        "hit": False,
        "reason": "mylib/alpha.py changed",
    }
    assert "alpha 63" in (after_library.outdir / "auto_examples" / "plot_a_alpha.html").read_text(
        "utf-8"
    )

    project.write("data/table.csv", "a,b\n1,2\n3,4\n")
    after_data = project.build()
    assert after_data.executed() == {"plot_c_data.py"}
    assert after_data.records["plot_c_data.py"]["cache"]["reason"] == "data/table.csv changed"

    project.set_dist_version("1.1")
    after_dist = project.build()
    assert after_dist.executed() == {"plot_d_dist.py"}
    assert after_dist.records["plot_d_dist.py"]["cache"]["reason"] == "fakedist 1.0 → 1.1"

    project.write("docs/examples/plot_b_beta.py", FILES["docs/examples/plot_b_beta.py"] + "x = 1\n")
    after_source = project.build()
    assert after_source.executed() == {"plot_b_beta.py"}
    assert after_source.records["plot_b_beta.py"]["cache"]["reason"] == "source changed"
    assert project.build().executed() == set()


def test_an_earlier_example_importing_the_module_first_still_counts(project: Project) -> None:
    # plot_0_first runs first and imports mylib.beta; plot_b_beta then imports it again.
    project.write("docs/examples/plot_0_first.py", example_source("First", "import mylib.beta\n"))
    assert project.build().returncode == 0
    project.write("mylib/beta.py", "def name():\n    return 'BETA'\n")
    again = project.build()
    assert again.executed() == {"plot_0_first.py", "plot_b_beta.py"}
    assert "beta BETA" in (again.outdir / "auto_examples" / "plot_b_beta.html").read_text("utf-8")


CARRY = {
    # Reads a data file once, when first imported.
    "mylib/table.py": (
        "import os\n\nwith open(os.path.join(os.path.dirname(__file__), '..', 'data',"
        " 'table.csv')) as f:\n    ROWS = f.read().splitlines()\n"
    ),
    # Runs once per process; a later call returns what the first one computed.
    "mylib/memo.py": "import functools\n\n\n@functools.cache\ndef load():\n    return 'v1'\n",
    # Made when imported, consumed by two examples.
    "mylib/gen.py": "def steps():\n    yield 'one'\n    yield 'two-v1'\n\n\nSTEPS = steps()\n",
    "docs/examples/plot_k1.py": example_source(
        "K1",
        "from mylib import gen, memo, table\n\n"
        "print('k1', len(table.ROWS), memo.load(), next(gen.STEPS))\n",
    ),
    "docs/examples/plot_k2.py": example_source(
        "K2",
        "from mylib import gen, memo, table\n\n"
        "print('k2', len(table.ROWS), memo.load(), next(gen.STEPS))\n",
    ),
}


def _carried_pages(build: Build) -> str:
    folder = build.outdir / "auto_examples"
    return (folder / "plot_k1.html").read_text("utf-8") + (folder / "plot_k2.html").read_text(
        "utf-8"
    )


@pytest.mark.parametrize("granularity", ["module", "function"])
def test_what_an_earlier_example_left_in_a_module_counts(
    project: Project, granularity: str
) -> None:
    # The first of plot_k1 and plot_k2 to run imports mylib.table (which reads
    # data/table.csv), fills memo.load's cache and starts gen.STEPS; the second, in the
    # same process, uses all three without running that code again. An edit to any of
    # them changes the second one's page too: both must run again.
    first = _first_build(project, granularity, CARRY)
    assert _carried_pages(first).count(" 2 v1 ") == 2
    assert "two-v1" in _carried_pages(first)
    assert project.build().executed() == set()
    edits = [
        ("data/table.csv", FILES["data/table.csv"] + "3,4\n", " 3 v1 ", "two-v1"),
        ("mylib/memo.py", CARRY["mylib/memo.py"].replace("v1", "v2"), " 3 v2 ", "two-v1"),
        ("mylib/gen.py", CARRY["mylib/gen.py"].replace("two-v1", "two-v2"), " 3 v2 ", "two-v2"),
    ]
    for relative, text, both, second in edits:
        project.write(relative, text)
        again = project.build()
        assert again.returncode == 0, again.output
        assert {"plot_k1.py", "plot_k2.py"} <= again.executed(), relative
        assert _carried_pages(again).count(both) == 2, relative
        assert second in _carried_pages(again), relative


def test_fast_and_full_builds_never_share_entries(project: Project) -> None:
    assert project.build(env={"DOCSACCEL_FAST": "0"}).executed() == set(ALL)
    fast = project.build(env={"DOCSACCEL_FAST": "1"})
    assert fast.executed() == set(ALL)
    assert (
        fast.records["plot_a_alpha.py"]["cache"]["reason"] == "fast path switch changed: off → on"
    )
    assert project.build(env={"DOCSACCEL_FAST": "0"}).executed() == set()
    assert project.build(env={"DOCSACCEL_FAST": "1"}).executed() == set()
    assert len(list((project.cache / "entries").iterdir())) == 2 * len(ALL)


def test_a_failing_example_is_never_stored(project: Project) -> None:
    project.write(
        "docs/examples/plot_z_fail.py", '"""\nFail\n====\n"""\nraise RuntimeError("boom")\n'
    )
    conf = FILES["docs/conf.py"].replace(
        '"show_memory": False,', '"show_memory": False, "only_warn_on_example_error": True,'
    )
    project.write("docs/conf.py", conf)
    first = project.build()
    assert first.records["plot_z_fail.py"]["status"] == "failed"
    assert not list((project.cache / "entries").glob("examples__plot_z_fail.py--*"))
    second = project.build()
    assert second.executed() == {"plot_z_fail.py"}
    assert second.records["plot_z_fail.py"]["status"] == "failed"


@pytest.mark.parametrize("granularity", ["module", "function"])
def test_a_failing_import_shows_the_traceback_a_build_without_the_cache_shows(
    project: Project, granularity: str
) -> None:
    # Every import goes through the cache's wrapper (and at function granularity its
    # loader): their frames must not reach the page, nor the import system's they expose.
    project.write("mylib/missing.py", "import not_installed_anywhere\n")
    project.write("mylib/raising.py", "X = 1\nraise RuntimeError('at import')\n")
    for name in ("missing", "raising"):
        project.write(
            f"docs/examples/plot_z_{name}.py", f'"""\nFail\n====\n"""\nimport mylib.{name}\n'
        )
    conf = FILES["docs/conf.py"].replace(
        '"show_memory": False,', '"show_memory": False, "only_warn_on_example_error": True,'
    )
    project.write("docs/conf.py", conf + f"docsaccel_cache_granularity = {granularity!r}\n")
    pages: list[dict[str, str]] = []
    for cache in ("", "0"):
        built = project.build(env={env_name("cache"): cache} if cache else None)
        found = {}
        for name in ("missing", "raising"):
            assert built.records[f"plot_z_{name}.py"]["status"] == "failed"
            page = (built.docs / "auto_examples" / f"plot_z_{name}.rst").read_text("utf-8")
            page = re.sub(r"\d+ minutes \d+\.\d+ seconds", "<time>", page)
            found[name] = page.replace(str(built.docs.parent), "<project>")
        pages.append(found)
    with_cache, without = pages
    assert "ModuleNotFoundError: No module named 'not_installed_anywhere'" in with_cache["missing"]
    assert 'File "<project>/mylib/missing.py", line 1' in with_cache["missing"]
    assert "RuntimeError: at import" in with_cache["raising"]
    for page in with_cache.values():
        assert "docsaccel" not in page
        assert "importlib" not in page
    assert with_cache == without


def test_a_corrupt_entry_is_a_miss_with_a_warning(project: Project) -> None:
    assert project.build().returncode == 0
    (entry,) = (project.cache / "entries").glob("examples__plot_b_beta.py--*")
    (entry / "entry.json").write_text("{not json", "utf-8")
    (other,) = (project.cache / "entries").glob("examples__plot_e_figure.py--*")
    image = next((other / "files").rglob("*.png"))
    image.write_bytes(b"garbage")
    again = project.build()
    assert again.returncode == 0, again.output
    assert again.executed() == {"plot_b_beta.py", "plot_e_figure.py"}
    assert again.records["plot_b_beta.py"]["cache"]["reason"] == "entry corrupt"
    assert "WARNING" in again.output and str(entry) in again.output
    assert "does not match its digest" in again.output
    # Rewritten by the run: the next build hits again.
    assert project.build().executed() == set()


def test_parallel_workers_store_every_entry(project: Project) -> None:
    conf = FILES["docs/conf.py"].replace(
        '"show_memory": False,', '"show_memory": False, "parallel": 2,'
    )
    project.write("docs/conf.py", conf)
    first = project.build()
    assert first.returncode == 0, first.output
    assert first.executed() == set(ALL)
    assert len({r["pid"] for r in first.records.values()}) >= 2
    entries = list((project.cache / "entries").iterdir())
    assert len(entries) == len(ALL)
    assert project.build().executed() == set()
    project.write("mylib/alpha.py", FILES["mylib/alpha.py"].replace("FACTOR = 2", "FACTOR = 5"))
    assert project.build().executed() == {"plot_a_alpha.py"}


def test_the_environment_variable_wins_over_conf_py(project: Project) -> None:
    other = project.root / "other-cache"
    first = project.build(env={"DOCSACCEL_CACHE": str(other)})
    assert first.executed() == set(ALL)
    assert len(list((other / "entries").iterdir())) == len(ALL)
    assert not project.cache.exists()
    off = project.build(env={"DOCSACCEL_CACHE": "0"})
    assert off.executed() == set(ALL)
    assert all("cache" not in r for r in off.records.values())
    assert not project.cache.exists()


def test_function_granularity_reruns_only_for_code_that_ran(project: Project) -> None:
    conf = FILES["docs/conf.py"] + 'docsaccel_cache_granularity = "function"\n'
    project.write("docs/conf.py", conf)
    assert project.build().executed() == set(ALL)
    alpha = FILES["mylib/alpha.py"]
    # unused() never ran: editing it (or a comment) re-runs nothing.
    project.write("mylib/alpha.py", alpha.replace("return 0", "return 1  # edited"))
    assert project.build().executed() == set()
    project.write("mylib/alpha.py", alpha.replace("FACTOR * x", "x * FACTOR"))
    changed_function = project.build()
    assert changed_function.executed() == {"plot_a_alpha.py"}
    reason = changed_function.records["plot_a_alpha.py"]["cache"]["reason"]
    assert reason == "mylib/alpha.py: scale changed"
    # A module-level constant is part of the module body: it counts too.
    project.write("mylib/alpha.py", alpha.replace("x * FACTOR", "FACTOR * x").replace("2", "4"))
    changed_constant = project.build()
    assert changed_constant.executed() == {"plot_a_alpha.py"}
    assert "alpha 84" in (
        changed_constant.outdir / "auto_examples" / "plot_a_alpha.html"
    ).read_text("utf-8")


def test_switching_to_module_granularity_does_not_trust_function_entries(
    project: Project,
) -> None:
    """An entry that kept only the functions that ran cannot promise what ``module``
    promises: any edit of a file it used re-runs it."""
    conf = FILES["docs/conf.py"]
    project.write("docs/conf.py", conf + 'docsaccel_cache_granularity = "function"\n')
    assert project.build().executed() == set(ALL)
    out, _ = explain("examples/plot_a_alpha.py", project.cache, project.pristine / "docs")
    assert "at module granularity it runs" in out
    project.write("docs/conf.py", conf + 'docsaccel_cache_granularity = "module"\n')
    switched = project.build()
    # The examples using no project module have nothing counted by function.
    users = {"plot_a_alpha.py", "plot_b_beta.py", "plot_c_data.py"}
    assert switched.executed() == users
    assert {switched.records[name]["cache"]["reason"] for name in users} == {
        "granularity changed: function → module"
    }
    project.write("mylib/alpha.py", FILES["mylib/alpha.py"].replace("return 0", "return 1"))
    assert project.build().executed() == {"plot_a_alpha.py"}
    # The other way round a whole file serves: nothing runs.
    project.write("docs/conf.py", conf + 'docsaccel_cache_granularity = "function"\n')
    assert project.build().executed() == set()


def test_project_code_outside_the_roots_counts_by_its_file(project: Project) -> None:
    """Source on ``sys.path`` that no distribution provides has no version to stand for
    it: a library beside the roots (here the roots are only the docs folder) counts by
    its file, as when no ``.git`` or ``pyproject.toml`` marks the repository root."""
    project.write("docs/conf.py", FILES["docs/conf.py"] + 'docsaccel_cache_roots = ["."]\n')
    assert project.build().executed() == set(ALL)
    assert project.build().executed() == set()
    project.write("mylib/beta.py", "def name():\n    return 'BETA'\n")
    again = project.build()
    assert again.executed() == {"plot_b_beta.py"}
    assert again.records["plot_b_beta.py"]["cache"]["reason"] == "mylib/beta.py changed"
    assert "beta BETA" in (again.outdir / "auto_examples" / "plot_b_beta.html").read_text("utf-8")
    project.write("mylib/alpha.py", FILES["mylib/alpha.py"].replace("FACTOR = 2", "FACTOR = 3"))
    assert project.build().executed() == {"plot_a_alpha.py"}


def test_an_editable_distribution_outside_the_roots_counts_by_its_file(
    project: Project,
) -> None:
    """``pip install -e ../lib``: its version does not change when its source does, so
    its modules count by their files; an ordinary installed one counts by its version."""
    assert project.build().executed() == set(ALL)
    (project.site / "fakedist.py").write_text("VALUE = 8\n", "utf-8")
    assert project.build().executed() == set()  # installed, not editable: the version rules
    info = project.site / "fakedist-1.0.dist-info"
    (info / "direct_url.json").write_text(
        json.dumps({"url": "file:///src/fakedist", "dir_info": {"editable": True}}), "utf-8"
    )
    switched = project.build()
    assert switched.executed() == {"plot_d_dist.py"}
    assert switched.records["plot_d_dist.py"]["cache"]["reason"] == "fakedist 1.0 → 1.0 (editable)"
    (project.site / "fakedist.py").write_text("VALUE = 9\n", "utf-8")
    again = project.build()
    assert again.executed() == {"plot_d_dist.py"}
    assert again.records["plot_d_dist.py"]["cache"]["reason"].endswith("fakedist.py changed")
    assert "dist 9" in (again.outdir / "auto_examples" / "plot_d_dist.html").read_text("utf-8")


def test_function_granularity_in_parallel_workers(project: Project) -> None:
    conf = FILES["docs/conf.py"].replace(
        '"show_memory": False,', '"show_memory": False, "parallel": 2,'
    )
    project.write("docs/conf.py", conf + 'docsaccel_cache_granularity = "function"\n')
    first = project.build()
    assert first.returncode == 0, first.output
    assert first.executed() == set(ALL)
    assert len({r["pid"] for r in first.records.values()}) >= 2
    alpha = FILES["mylib/alpha.py"]
    project.write("mylib/alpha.py", alpha.replace("return 0", "return 1"))
    assert project.build().executed() == set()
    project.write("mylib/alpha.py", alpha.replace("FACTOR * x", "x * FACTOR"))
    assert project.build().executed() == {"plot_a_alpha.py"}


SCRAPER = "def note(block, block_vars, gallery_conf):\n    return '\\n**scraped v1**\\n'\n"


def test_a_scraper_of_the_project_is_a_dependency_of_everyexample_source(project: Project) -> None:
    """sphinx-gallery runs it with every example, though no example imports it."""
    conf = FILES["docs/conf.py"].replace(
        '"show_memory": False,', '"show_memory": False, "image_scrapers": ("matplotlib", note),'
    )
    project.write("mylib/scrape.py", SCRAPER)
    conf = conf.replace("import mylib.alpha", "import mylib.alpha\nfrom mylib.scrape import note")
    project.write("docs/conf.py", conf)
    assert project.build().executed() == set(ALL)
    assert project.build().executed() == set()
    project.write("mylib/scrape.py", SCRAPER.replace("v1", "v2"))
    changed = project.build()
    assert changed.executed() == set(ALL)
    reasons = {r["cache"]["reason"] for r in changed.records.values()}
    assert reasons == {"mylib/scrape.py changed"}
    page = changed.outdir / "auto_examples" / "plot_b_beta.html"
    assert "scraped v2" in page.read_text("utf-8")


def test_module_granularity_reruns_for_any_edit_of_the_file(project: Project) -> None:
    assert project.build().executed() == set(ALL)
    project.write("mylib/alpha.py", FILES["mylib/alpha.py"].replace("return 0", "return 1"))
    assert project.build().executed() == {"plot_a_alpha.py"}


def test_shards_share_the_cache_and_the_merge_takes_restored_examples(project: Project) -> None:
    first = project.shards_then_merge("run1")
    assert {r["cache"]["hit"] for r in first.records.values()} == {False}
    second = project.shards_then_merge("run2")
    assert second.cached() == set(ALL)
    assert all(r["cache"]["hit"] for r in second.records.values())
    assert second.gallery_files() == first.gallery_files()


FN = '''"""Functions the examples use."""

import functools

__version__ = "1.0"
SCALE = 2
REGISTRY = {}
_default = None


def register(function):
    REGISTRY[function.__name__] = function
    return function


def pure(x):
    """Doubles x."""
    return 2 * x


def other(x):
    return x + 1


@functools.cache
def table():
    return "t1"


def set_default(value):
    global _default
    _default = value


def get_default():
    return _default


def scaled(x):
    return SCALE * x


@register
def plugin_a():
    return "a"


class Shape:
    def area(self):
        return 1
'''
FN_EXAMPLES = {
    "plot_f1_pure.py": "print('pure', fn.pure(2), fn.other(1))\n",
    "plot_f2_state.py": "fn.set_default('d1')\nprint('filled', fn.table())\n",
    "plot_f3_reads.py": "print('reads', fn.table(), fn.get_default())\n",
    "plot_f4_scale.py": "print('scaled', fn.scaled(3))\n",
    "plot_f5_table.py": "print('plugins', sorted(fn.REGISTRY))\n",
    "plot_f6_doc.py": "print('doc', fn.pure.__doc__)\n",
    "plot_f7_version.py": "print('version', fn.__version__)\n",
    "plot_f8_shape.py": "print('area', fn.Shape().area(), fn.other(2))\n",
}


@pytest.fixture(params=["instrument", "monitoring"])
def fn_project(project: Project, request: pytest.FixtureRequest) -> Project:
    """The ``fn`` library's gallery, built once, with either recorder: the instrumenter
    (Python 3.11, or forced), ``sys.monitoring`` (3.12+)."""
    if request.param == "monitoring" and sys.version_info < (3, 12):
        pytest.skip("sys.monitoring needs Python 3.12")
    if request.param == "instrument":
        project.env[env_name("cache_recorder")] = "instrument"
    conf = FILES["docs/conf.py"].replace(
        '"show_memory": False,',
        '"show_memory": False, "within_subsection_order": "FileNameSortKey",',
    )
    project.write("docs/conf.py", conf + 'docsaccel_cache_granularity = "function"\n')
    project.write("mylib/fn.py", FN)
    for name, body in FN_EXAMPLES.items():
        project.write(
            f"docs/examples/{name}", example_source(name, "from mylib import fn\n\n" + body)
        )
    first = project.build()
    assert first.returncode == 0, first.output
    assert project.build().executed() == set()
    return project


def _fn_edit(project: Project, old: str, new: str, base: str = FN) -> Build:
    assert old in base
    project.write("mylib/fn.py", base.replace(old, new))
    built = project.build()
    assert built.returncode == 0, built.output
    return built


def _page(build: Build, name: str) -> str:
    return (build.outdir / "auto_examples" / name.replace(".py", ".html")).read_text("utf-8")


@pytest.mark.slow
def test_a_pure_function_reruns_only_the_examples_that_called_it(fn_project: Project) -> None:
    again = _fn_edit(fn_project, "return 2 * x", "return 3 * x")
    assert again.executed() == {"plot_f1_pure.py"}
    assert again.records["plot_f1_pure.py"]["cache"]["reason"] == "mylib/fn.py: pure changed"
    assert "pure 6 2" in _page(again, "plot_f1_pure.py")


@pytest.mark.slow
def test_a_cache_an_earlier_example_filled_reruns_its_reader(fn_project: Project) -> None:
    again = _fn_edit(fn_project, 'return "t1"', 'return "t2"')
    assert again.executed() == {"plot_f2_state.py", "plot_f3_reads.py"}
    # The functools.cache that plot_f2 filled is no state, but plot_f3 read what table's
    # code made: it depends on that code as on code it ran, the root cause its reason names.
    reason = again.records["plot_f3_reads.py"]["cache"]["reason"]
    assert reason == "mylib/fn.py: table changed", reason
    out, code = explain("examples/plot_f3_reads.py", fn_project.cache, again.docs)
    assert code == 0
    assert "mylib/fn.py: get_default  (ran in the example)" in out
    assert "mylib/fn.py: <module>  (module body)" in out
    filled = "made what examples/plot_f2_state.py filled in table, which the example reads"
    assert f"mylib/fn.py: table  ({filled})" in out
    assert "examples/plot_f2_state.py (mylib/fn.py:_default)" in out
    assert "(state left by an earlier example)" in out
    assert "reads t2 d1" in _page(again, "plot_f3_reads.py")


@pytest.mark.slow
def test_a_global_an_earlier_example_assigned_reruns_its_reader(fn_project: Project) -> None:
    again = _fn_edit(fn_project, "    _default = value", "    _default = value.upper()")
    assert again.executed() == {"plot_f2_state.py", "plot_f3_reads.py"}
    assert "reads t1 D1" in _page(again, "plot_f3_reads.py")


@pytest.mark.slow
def test_new_functions_classes_and_methods_rerun_nothing(fn_project: Project) -> None:
    added = FN.replace(
        "def other(x):", "def added(x):\n    return x\n\n\nclass New:\n    pass\n\n\ndef other(x):"
    ).replace(
        "        return 1\n", "        return 1\n\n    def perimeter(self):\n        return 4\n"
    )
    fn_project.write("mylib/fn.py", added)
    assert fn_project.build().executed() == set()


@pytest.mark.slow
def test_a_docstring_edit_reruns_only_the_example_reading_it(fn_project: Project) -> None:
    again = _fn_edit(fn_project, '"""Doubles x."""', '"""Twice x."""')
    assert again.executed() == {"plot_f6_doc.py"}
    assert "doc Twice x." in _page(again, "plot_f6_doc.py")


@pytest.mark.slow
def test_a_module_constant_reruns_only_the_examples_whose_code_reads_it(
    fn_project: Project,
) -> None:
    again = _fn_edit(fn_project, "SCALE = 2", "SCALE = 5")
    assert again.executed() == {"plot_f4_scale.py"}
    assert again.records["plot_f4_scale.py"]["cache"]["reason"] == "mylib/fn.py: SCALE changed"
    assert "scaled 15" in _page(again, "plot_f4_scale.py")
    base = FN.replace("SCALE = 2", "SCALE = 5")
    version = _fn_edit(fn_project, '__version__ = "1.0"', '__version__ = "1.1"', base)
    assert version.executed() == {"plot_f7_version.py"}


@pytest.mark.slow
def test_a_registering_decorator_reruns_the_examples_reading_the_table(
    fn_project: Project,
) -> None:
    again = _fn_edit(
        fn_project, "class Shape:", '@register\ndef plugin_b():\n    return "b"\n\n\nclass Shape:'
    )
    assert "plot_f5_table.py" in again.executed()
    assert "plugins ['plugin_a', 'plugin_b']" in _page(again, "plot_f5_table.py")


@pytest.mark.slow
def test_module_granularity_suggests_function_once_when_an_example_uses_most_files(
    project: Project,
) -> None:
    modules = [f"m{i}" for i in range(6)]
    for name in modules:
        project.write(f"mylib/{name}.py", f"def {name}():\n    return 1\n")
    init = FILES["mylib/__init__.py"] + "".join(f"from . import {n}\n" for n in modules)
    project.write("mylib/__init__.py", init)
    # A suggestion in the log (an info line, which -q silences) and in the report, not a
    # warning: with -W the build passes as it does without the cache.
    first = project.build("-W")
    assert first.returncode == 0, first.output
    assert "docsaccel_cache_granularity" not in first.output, first.output
    from docsaccel.cache.manage import stats

    out, _ = stats(project.cache)
    assert "suggestion:" in out and "of the project's" in out


# autosummary, listed before sphinx-gallery, imports mylib.units while it generates the API
# pages: before the first example runs. The module's body reads data/units.txt then, once
# for the whole build; the example printing mylib.units.UNITS depends on that file too.
UNITS = {
    "mylib/units.py": (
        "import pathlib\n\n"
        "UNITS = (pathlib.Path(__file__).parents[1] / 'data' / 'units.txt').read_text().strip()\n"
    ),
    "data/units.txt": "metres\n",
    "docs/api.rst": "API\n===\n\n.. autosummary::\n   :toctree: generated\n\n   mylib.units\n",
    "docs/index.rst": "Tiny\n====\n\n.. toctree::\n\n   api\n   auto_examples/index\n",
    "docs/examples/plot_f_units.py": example_source(
        "Units", 'from mylib.units import UNITS\n\nprint("units:", UNITS)\n'
    ),
}


@pytest.mark.parametrize("granularity", ["module", "function"])
def test_what_a_module_read_when_autosummary_imported_it_first_counts(
    project: Project, granularity: str
) -> None:
    conf = FILES["docs/conf.py"].replace(
        'extensions = ["sphinx_gallery.gen_gallery"',
        'extensions = ["sphinx.ext.autosummary", "sphinx_gallery.gen_gallery"',
    )
    conf += f"autosummary_generate = True\ndocsaccel_cache_granularity = {granularity!r}\n"
    project.write("docs/conf.py", conf)
    for relative, text in UNITS.items():
        project.write(relative, text)
    first = project.build()
    assert first.returncode == 0, first.output
    page = first.outdir / "auto_examples" / "plot_f_units.html"
    assert "units: metres" in page.read_text("utf-8")
    assert project.build().executed() == set()

    project.write("data/units.txt", "feet\n")
    again = project.build()

    assert again.returncode == 0, again.output
    assert again.executed() == {"plot_f_units.py"}
    reason = again.records["plot_f_units.py"]["cache"]["reason"]
    assert "data/units.txt" in reason, reason
    page = again.outdir / "auto_examples" / "plot_f_units.html"
    assert "units: feet" in page.read_text("utf-8")


# sphinx-gallery's "examples using" mini-gallery of mylib.alpha.scale on an API page.
MINIGALLERY = {
    "docs/api.rst": "API\n===\n\n.. autofunction:: mylib.alpha.scale\n\n"
    ".. minigallery:: mylib.alpha.scale\n",
    "docs/index.rst": "Tiny\n====\n\n.. toctree::\n\n   api\n   auto_examples/index\n",
}


def test_a_restored_example_stays_in_the_mini_galleries_of_the_api_pages(
    project: Project,
) -> None:
    import sphinx_gallery

    from docsaccel import sg_compat

    conf = (
        FILES["docs/conf.py"]
        .replace(
            'extensions = ["sphinx_gallery.gen_gallery"',
            'extensions = ["sphinx.ext.autodoc", "sphinx_gallery.gen_gallery"',
        )
        .replace(
            '"show_memory": False,',
            '"show_memory": False,\n    "backreferences_dir": "gen_modules/backreferences",\n'
            '    "doc_module": ("mylib",),',
        )
    )
    project.write("docs/conf.py", conf)
    for relative, text in MINIGALLERY.items():
        project.write(relative, text)
    thumbnail = "sphx_glr_plot_a_alpha_thumb"
    first = project.build()
    assert first.returncode == 0, first.output
    assert thumbnail in (first.outdir / "api.html").read_text("utf-8")

    second = project.build()

    assert second.returncode == 0, second.output
    # The page a build without the cache publishes, whichever release.
    assert thumbnail in (second.outdir / "api.html").read_text("utf-8")
    lost = sg_compat.restoring_loses_backreferences({"backreferences_dir": "x"})
    if lost is None:
        assert second.executed() == set(), sphinx_gallery.__version__
    else:
        # Before sphinx-gallery 0.22 a restored example would be missing there: it runs.
        assert second.executed() == set(ALL)
        assert second.records["plot_a_alpha.py"]["cache"]["reason"] == lost
