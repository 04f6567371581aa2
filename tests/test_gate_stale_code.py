"""A report whose build ran code that changed since is refused, also when the change
cannot be seen in a modification time: a module of the project edited within the
filesystem's timestamp resolution of the report's write (same time, other bytes), and an
extension installed as a distribution whose version changed. Real Sphinx builds in
temporary folders."""

from __future__ import annotations

import os

import pytest
from helpers.gallery_build import build, make_project, run_cli

from docsaccel import layout

pytestmark = pytest.mark.slow

#: conf.py of a project with a module of its own it imports.
IMPORTS_SETTINGS = """
import sys
sys.path.insert(0, __import__("os").path.dirname(__file__))
import project_settings
"""


def test_a_module_edited_within_the_timestamp_resolution_refuses_the_report(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py"], conf=IMPORTS_SETTINGS)
    module = src / "project_settings.py"
    module.write_text("VALUE = 1\n", encoding="utf-8")
    built = build(src)
    assert built.returncode == 0, built.output
    report = layout.report_path(built.outdir)
    assert run_cli("check", str(report)).returncode == 0
    # Same size, other bytes, and the report's own modification time: what an edit in
    # the same tick of a coarse clock leaves.
    module.write_text("VALUE = 2\n", encoding="utf-8")
    written = report.stat().st_mtime_ns
    os.utime(module, ns=(written, written))

    for args in (["check", str(report)], ["report", str(built.outdir)]):
        refused = run_cli(*args)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert refused.stderr.count("\n") == 1, refused.stderr
        assert f"{module} was modified after this report" in refused.stderr, refused.stderr


#: An extension installed as a distribution (its metadata beside it, as pip leaves it).
EXTENSION = "def setup(app):\n    return {'parallel_read_safe': True}\n"


def _install(site, version: str) -> None:
    for old in site.glob("fake_docs_ext-*.dist-info"):
        for item in old.iterdir():
            item.unlink()
        old.rmdir()
    info = site / f"fake_docs_ext-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: fake-docs-ext\nVersion: {version}\n", encoding="utf-8"
    )
    (site / "fake_docs_ext.py").write_text(EXTENSION, encoding="utf-8")


def test_an_extension_whose_distribution_changed_refuses_the_report(tmp_path) -> None:
    site = tmp_path / "site-packages"
    site.mkdir()
    _install(site, "1.0")
    env = {"PYTHONPATH": str(site)}
    src = make_project(tmp_path, ["plot_quick.py"], conf='extensions.append("fake_docs_ext")\n')
    built = build(src, env=env)
    assert built.returncode == 0, built.output
    report = layout.report_path(built.outdir)
    assert run_cli("check", str(report), env=env).returncode == 0

    _install(site, "1.1")

    for args in (["check", str(report)], ["report", str(built.outdir)]):
        refused = run_cli(*args, env=env)
        assert refused.returncode == 2, refused.stdout + refused.stderr
        assert refused.stderr.count("\n") == 1, refused.stderr
        said = refused.stderr
        assert "fake-docs-ext" in said and "1.0" in said and "1.1" in said, said
