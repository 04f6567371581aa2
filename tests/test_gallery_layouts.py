"""Every gallery layout sphinx-gallery builds: each example it runs is planned and bounded.

One real build (shared by the tests of this file) of two galleries holding every form of
sub-gallery sphinx-gallery knows (README.txt, README.rst, GALLERY_HEADER.rst, a gallery
with its own index.rst whose sub-folders are all sub-galleries), each with a folder of its
own (``data/``, ``__pycache__``) that used to end docsaccel's walk, examples sharing a file
name across sub-galleries, and a Julia example (``example_extensions``) that is not run.
Fast path on, fail mode, two workers, ``remove_config_comments``.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from helpers.gallery_build import assert_records_complete, build

pytestmark = pytest.mark.slow

HEADER = "Section\n=======\n"


def _example(title: str, body: str) -> str:
    return f'"""\n{title}\n{"=" * len(title)}\n"""\n\n{textwrap.dedent(body)}'


def _loop(seconds: int) -> str:
    return _example("Loop", f"# docsaccel_budget = {seconds}\nwhile True:\n    pass\n")


QUICK = _example("Quick", 'print("quick")\n')
# Never run: its name does not match filename_pattern. Still a page, so a docstring.
HELPER = _example("Helper", "VALUE = 1\n")

FILES = {
    "examples/README.rst": HEADER,
    "examples/plot_root.py": QUICK,
    "examples/hello.jl": '"""\nHello\n=====\n"""\n\nprintln("not run by sphinx-gallery")\n',
    # README.txt, a data folder and a __pycache__ listed before the others.
    "examples/a_txt/README.txt": HEADER,
    "examples/a_txt/plot_loop.py": _loop(1),
    "examples/a_txt/local_module.py": HELPER,
    "examples/a_txt/data/points.csv": "x\n1\n",
    "examples/a_txt/__pycache__/local_module.cpython-311.pyc": "",
    # README.rst; the inline budget gives a fast budget; config comments go away.
    "examples/b_rst/README.rst": HEADER,
    "examples/b_rst/plot_loop.py": _loop(2),
    "examples/b_rst/local_module.py": HELPER,
    "examples/b_rst/plot_comments.py": _example(
        "Comments",
        """\
        # docsaccel_budget = { budget = "2m", fast = "20s" }
        # sphinx_gallery_thumbnail_number = 1
        print("comments")
        """,
    ),
    "examples/b_rst/data/nested/more.txt": "x\n",
    # GALLERY_HEADER.rst.
    "examples/c_header/GALLERY_HEADER.rst": HEADER,
    "examples/c_header/plot_loop.py": _loop(1),
    "examples/c_header/data/.keep": "",
    # No header: not a sub-gallery, sphinx-gallery never builds it.
    "examples/no_header/plot_orphan.py": QUICK,
    # After every folder above.
    "examples/z_last/README.txt": HEADER,
    "examples/z_last/plot_quick.py": QUICK,
    # A second gallery with its own index.rst: every sub-folder is a sub-gallery.
    "more/index.rst": "More\n====\n",
    "more/plot_quick.py": QUICK,
    "more/d_index/index.rst": "D\n=\n",
    "more/d_index/plot_loop.py": _loop(2),
    "more/d_index/data/x.txt": "x\n",
}

CONF = """
extensions = ["sphinx_gallery.gen_gallery", "docsaccel.gallery"]
exclude_patterns = ["_build", "examples", "more"]
sphinx_gallery_conf = {
    "examples_dirs": ["examples", "more"],
    "gallery_dirs": ["auto_examples", "auto_more"],
    "filename_pattern": r"/plot_",
    "example_extensions": {".py", ".jl"},
    "download_all_examples": False,
    "show_memory": False,
    "remove_config_comments": True,
    "parallel": 2,
}
docsaccel_budgets = "budgets.toml"
docsaccel_on_overun = "warn"  # misspelled: warned about, ignored
"""

EXECUTED = [
    "examples/a_txt/plot_loop.py",
    "examples/b_rst/plot_comments.py",
    "examples/b_rst/plot_loop.py",
    "examples/c_header/plot_loop.py",
    "examples/plot_root.py",
    "examples/z_last/plot_quick.py",
    "more/d_index/plot_loop.py",
    "more/plot_quick.py",
]
NOT_RUN = ["examples/a_txt/local_module.py", "examples/b_rst/local_module.py", "examples/hello.jl"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    src = tmp_path_factory.mktemp("layouts") / "src"
    for name, text in FILES.items():
        path = src / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (src / "conf.py").write_text(CONF, encoding="utf-8")
    (src / "budgets.toml").write_text('default = "1m"\n', encoding="utf-8")
    (src / "index.rst").write_text(
        "Layouts\n=======\n\n.. toctree::\n\n   auto_examples/index\n", encoding="utf-8"
    )
    # A misspelled variable beside the real ones: it must be named, and change nothing.
    env = {"DOCSACCEL_FAST": "1", "DOCSACCEL_ON_OVERRUN": "fail", "DOCSACCEL_ONOVERRUN": "warn"}
    return build(src, env=env)


def test_every_example_sphinx_gallery_builds_has_one_record(built) -> None:
    ids = [record["id"] for record in built.report["examples"]]
    assert sorted(ids) == sorted(EXECUTED + NOT_RUN), built.output
    assert_records_complete(built, [Path(i).relative_to(i.split("/")[0]).as_posix() for i in ids])
    for example_id in EXECUTED:
        gallery, _, name = example_id.partition("/")
        folder = {"examples": "auto_examples", "more": "auto_more"}[gallery]
        # sphinx-gallery did build each page docsaccel planned, and nothing else.
        assert (built.outdir.parent.parent / folder / name).with_suffix(".rst").is_file()
    records = {record["id"]: record for record in built.report["examples"]}
    assert {i for i in NOT_RUN if records[i]["status"] == "not-executed"} == set(NOT_RUN)
    assert not (built.outdir.parent.parent / "auto_examples" / "no_header").exists()


def test_a_runaway_example_is_interrupted_in_every_sub_gallery_form(built) -> None:
    assert built.returncode != 0
    records = {record["id"]: record for record in built.report["examples"]}
    loops = [i for i in EXECUTED if i.endswith("plot_loop.py")]
    # Same file name, four examples: each has its own budget from its own source.
    budgets = {i: records[i]["budget_seconds"] for i in loops}
    assert budgets == {
        "examples/a_txt/plot_loop.py": 1,
        "examples/b_rst/plot_loop.py": 2,
        "examples/c_header/plot_loop.py": 1,
        "more/d_index/plot_loop.py": 2,
    }
    for example_id in loops:
        record = records[example_id]
        assert record["status"] == "interrupted", record
        assert record["budget_source"] == "inline"
        assert record["wall_seconds"] < 30.0, "stopped far later than its budget"
        assert example_id in record["error"]
    quick = [i for i in EXECUTED if not i.endswith("plot_loop.py")]
    assert all(records[i]["status"] == "ok" for i in quick), [records[i] for i in quick]


def test_inline_fast_budget_and_removed_config_comments(built) -> None:
    record = next(r for r in built.report["examples"] if r["name"] == "b_rst/plot_comments.py")
    assert record["fast"] is True
    assert (record["budget_seconds"], record["budget_source"]) == (20, "inline")
    assert record["budget_detail"].endswith("(fast path)")
    page = (built.outdir / "auto_examples" / "b_rst" / "plot_comments.html").read_text("utf-8")
    assert "comments" in page
    # Ours go wherever sphinx-gallery's own go (remove_config_comments: True) ...
    assert "sphinx_gallery_thumbnail_number" not in page
    assert "docsaccel_budget" not in page
    notebook = built.outdir.parent.parent / "auto_examples" / "b_rst" / "plot_comments.ipynb"
    cells = "".join("".join(c["source"]) for c in json.loads(notebook.read_text("utf-8"))["cells"])
    assert "print(" in cells
    assert "sphinx_gallery_thumbnail_number" not in cells and "docsaccel_budget" not in cells
    # ... and stay where sphinx-gallery keeps its own: the downloadable script.
    script = built.outdir.parent.parent / "auto_examples" / "b_rst" / "plot_comments.py"
    assert "# sphinx_gallery_thumbnail_number = 1" in script.read_text("utf-8")
    assert "# docsaccel_budget = " in script.read_text("utf-8")


def test_a_misspelled_setting_is_named_with_the_right_one(built) -> None:
    assert "unknown setting 'docsaccel_on_overun'" in built.output
    assert "did you mean 'docsaccel_on_overrun'?" in built.output
    assert built.report["build"]["on_overrun"] == "fail"


def test_a_misspelled_variable_is_named_with_the_right_one(built) -> None:
    assert "unknown variable 'DOCSACCEL_ONOVERRUN' (ignored)" in built.output
    assert "did you mean 'DOCSACCEL_ON_OVERRUN'?" in built.output
    assert built.report["build"]["on_overrun"] == "fail"
