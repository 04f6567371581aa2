"""Two galleries each holding an example of one file name (``examples/plot_a.py`` and
``tutorials/plot_a.py``): docsaccel never mixes them up.

sphinx-gallery warns about the shared name (``Duplicate example file name(s) found``,
type ``sphinx_gallery.duplicate_filename``), so a ``-W`` build fails unless ``conf.py``
suppresses that warning, as the budgets guide says, with every supported sphinx-gallery
(those before 0.22 log it without a type: the plugin gives it one). Every record,
budget, cache entry, report row and page belongs to the one example it names, in the
build that runs them and in the next one, which the cache answers.
"""

from __future__ import annotations

import pytest
from helpers.gallery_build import (
    SAME_NAME_CONF,
    SAME_NAME_GALLERIES,
    SUPPRESS_SAME_NAMES,
    build,
    make_same_name_galleries,
    printing_example,
)

from docsaccel import layout
from docsaccel.cache.store import CacheStore
from docsaccel.records import read_records
from docsaccel.report.commands import run_report

pytestmark = pytest.mark.slow

CONF = SAME_NAME_CONF + 'docsaccel_budgets = "budgets.toml"\ndocsaccel_cache = ".cache"\n'
BUDGETS = """[examples]
"examples/plot_a.py" = { budget = "1m", memory = "2G", reason = "the examples one" }
"tutorials/plot_a.py" = { budget = "2m", reason = "the tutorials one" }
"""
GALLERIES = SAME_NAME_GALLERIES
#: How sphinx-gallery's warning of the shared name begins.
WARNED = "Duplicate example file name(s) found"


@pytest.fixture(scope="module")
def src(tmp_path_factory):
    src = make_same_name_galleries(tmp_path_factory.mktemp("same_names") / "src", "plot_a.py", CONF)
    (src / "budgets.toml").write_text(BUDGETS, encoding="utf-8")
    return src


def _assert_apart(built, status: str) -> None:
    records = {record["id"]: record for record in built.report["examples"]}
    assert sorted(records) == ["examples/plot_a.py", "tutorials/plot_a.py"], built.output
    for gallery, folder in GALLERIES.items():
        record = records[f"{gallery}/plot_a.py"]
        assert record["status"] == status, record
        assert record["budget_reason"] == f"the {gallery} one", record
        # The page of each is its own example's, whether it ran or was restored.
        page = (built.outdir / folder / "plot_a.html").read_text("utf-8")
        assert f"printed by {gallery}" in page
        assert f"printed by {'tutorials' if gallery == 'examples' else 'examples'}" not in page
    assert records["examples/plot_a.py"]["budget_seconds"] == 60
    assert records["tutorials/plot_a.py"]["budget_seconds"] == 120
    assert records["examples/plot_a.py"]["memory_budget"]["bytes"] == 2 << 30
    assert records["tutorials/plot_a.py"]["memory_budget"]["bytes"] is None
    markdown, _ = run_report(str(layout.report_path(built.outdir)), fmt="md")
    assert "| examples/plot\\_a.py |" in markdown and "| tutorials/plot\\_a.py |" in markdown


def test_w_fails_on_sphinx_gallerys_warning_unless_conf_py_suppresses_it(src) -> None:
    # In the source folder, as ``make html`` runs: sphinx-gallery before 0.22 looks for
    # same-named examples from the current folder, so only there does it warn.
    # ``--keep-going``: before Sphinx 8.1, ``-W`` stops at the first warning.
    failed = build(src, "-W", "--keep-going", outdir=src / "_build" / "warned", cwd=src)
    assert failed.returncode == 1, failed.output
    assert WARNED in failed.output
    _assert_apart(failed, "ok")  # the examples ran; Sphinx failed it for the warning

    with (src / "conf.py").open("a", encoding="utf-8") as stream:
        stream.write(SUPPRESS_SAME_NAMES)
    first = build(src, "-W", cwd=src)
    assert first.returncode == 0, first.output
    # Whichever sphinx-gallery: before 0.22 its warning had no type to suppress it by.
    assert WARNED not in first.output
    _assert_apart(first, "cached")
    entries = sorted(
        path.name.rsplit("--", 1)[0] for path in CacheStore(src / ".cache").entries.iterdir()
    )
    assert entries == ["examples__plot_a.py", "tutorials__plot_a.py"]

    # From a fresh output folder and fresh gallery pages: the cache restores each.
    for folder in GALLERIES.values():
        for page in (src / folder).glob("plot_a.*"):
            page.unlink()
    again = build(src, "-W", outdir=src / "_build" / "again")
    assert again.returncode == 0, again.output
    _assert_apart(again, "cached")


def test_ids_whose_plain_file_names_would_meet_keep_a_record_each(tmp_path) -> None:
    # ``examples/a/plot_b.py`` (a sub-gallery) and ``examples/a__plot_b.py`` would both be
    # ``examples__a__plot_b.py`` with ``/`` written as ``__``.
    src = tmp_path / "src"
    for name, text in {
        "examples/README.rst": "Ex\n==\n",
        "examples/a__plot_b.py": printing_example("A", "flat"),
        "examples/a/README.rst": "A\n=\n",
        "examples/a/plot_b.py": printing_example("A", "nested"),
    }.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text, encoding="utf-8")
    conf = CONF.replace('["examples", "tutorials"]', '["examples"]')
    conf = conf.replace('["auto_examples", "auto_tutorials"]', '["auto_examples"]')
    # Both run: the flat one's path has no "/plot_".
    (src / "conf.py").write_text(conf.replace('r"/plot_"', 'r"plot_"'), encoding="utf-8")
    (src / "budgets.toml").write_text('default = "1m"\n', encoding="utf-8")
    (src / "index.rst").write_text("X\n=\n\n.. toctree::\n\n   auto_examples/index\n")

    ran = build(src, "-W")
    assert ran.returncode == 0, ran.output
    # Again: both unchanged, so both get a record file (their journal has no line).
    built = build(src, "-W", outdir=src / "_build" / "again")

    assert built.returncode == 0, built.output
    on_disk = read_records(layout.records_dir(built.outdir))
    assert sorted(on_disk) == ["examples/a/plot_b.py", "examples/a__plot_b.py"], on_disk
    for example_id, record in on_disk.items():
        assert record["status"] == "cached", record
        page = "a/plot_b.html" if example_id == "examples/a/plot_b.py" else "a__plot_b.html"
        which = "nested" if example_id == "examples/a/plot_b.py" else "flat"
        assert f"printed by {which}" in (built.outdir / "auto_examples" / page).read_text()
