"""A budget pattern without a ``/`` is an example's file name in any sub-gallery.

One real fast-path ``-W`` build of a gallery with two sub-galleries (each with its
README.txt): a bare name budgets the example in ``advanced/``, and a bare name shared by
examples in ``advanced/`` and ``basics/`` budgets both. The build, ``docsaccel doctor``
and ``docsaccel check --budgets`` read the file alike, with no "matches no example".
"""

from __future__ import annotations

import pytest
from helpers.gallery_build import build, run_cli

pytestmark = pytest.mark.slow

CONF = """
extensions = ["sphinx_gallery.gen_gallery", "docsaccel.gallery"]
exclude_patterns = ["_build", "examples"]
sphinx_gallery_conf = {
    "examples_dirs": ["examples"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "show_memory": False,
    "reset_modules": (),
    "image_scrapers": (),
}
suppress_warnings = ["sphinx_gallery.duplicate_filename"]
docsaccel_budgets = "budgets.toml"
"""
BUDGETS = """default = "1m"

[examples]
"plot_sleep.py" = { budget = "2m", fast = "40s", reason = "sleeps" }
"plot_same.py" = { budget = "3m", reason = "one name, two sub-galleries" }
"""


def _example(title: str) -> str:
    return f'"""\n{title}\n{"=" * len(title)}\n"""\n\nprint("{title}")\n'


FILES = {
    "examples/README.txt": "Examples\n========\n",
    "examples/plot_top.py": _example("Top"),
    "examples/advanced/README.txt": "Advanced\n--------\n",
    "examples/advanced/plot_sleep.py": _example("Sleep"),
    "examples/advanced/plot_same.py": _example("Same advanced"),
    "examples/basics/README.txt": "Basics\n------\n",
    "examples/basics/plot_same.py": _example("Same basics"),
}


@pytest.fixture(scope="module")
def src(tmp_path_factory):
    src = tmp_path_factory.mktemp("patterns") / "src"
    for name, text in FILES.items():
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text(text, encoding="utf-8")
    (src / "conf.py").write_text(CONF, encoding="utf-8")
    (src / "budgets.toml").write_text(BUDGETS, encoding="utf-8")
    (src / "index.rst").write_text(
        "Patterns\n========\n\n.. toctree::\n\n   auto_examples/index\n", encoding="utf-8"
    )
    return src


@pytest.fixture(scope="module")
def built(src):
    return build(src, "-W", env={"DOCSACCEL_FAST": "1"})


def test_a_bare_name_budgets_its_example_in_a_sub_gallery(built) -> None:
    assert built.returncode == 0, built.output
    assert "matches no example" not in built.output
    records = {record["id"]: record for record in built.report["examples"]}
    sleep = records["examples/advanced/plot_sleep.py"]
    # A fast build: the fast budget of the rule the bare name picked.
    assert (sleep["budget_seconds"], sleep["budget_source"]) == (40, "pattern"), sleep
    assert sleep["budget_detail"].endswith("[examples] 'plot_sleep.py' (fast path)")
    assert sleep["budget_reason"] == "sleeps"
    assert records["examples/plot_top.py"]["budget_source"] == "default"


def test_a_bare_name_budgets_every_example_of_that_name(built) -> None:
    records = {record["id"]: record for record in built.report["examples"]}
    for example_id in ("examples/advanced/plot_same.py", "examples/basics/plot_same.py"):
        record = records[example_id]
        assert (record["budget_seconds"], record["budget_source"]) == (180, "pattern"), record
        assert record["budget_reason"] == "one name, two sub-galleries"


def test_doctor_and_check_read_bare_names_as_the_build_does(src, built) -> None:
    doctor = run_cli("doctor", "--docs", str(src))
    assert "FAIL" not in doctor.stdout, doctor.stdout
    assert "matches no example" not in doctor.stdout + doctor.stderr
    check = run_cli("check", str(built.report_path), "--budgets", str(src / "budgets.toml"))
    assert check.returncode == 0, check.stdout + check.stderr
    assert "matches no example" not in check.stdout + check.stderr
