"""The report page must be a page Sphinx reads: a build refuses, before any example runs,
a page inside a folder of ``html_static_path``, ``html_extra_path`` or ``templates_path``
or one matched by ``exclude_patterns``, in one line naming the key, the value and the
folder. Before, ``"_static/x"`` was accepted: its reST source was published as a static
file and the site had no report page. Real Sphinx builds in temporary folders."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.gallery_build import build, make_project

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("conf", "said"),
    [
        ('html_static_path = ["_static"]\n', "a folder of html_static_path"),
        ('html_extra_path = ["_static"]\n', "a folder of html_extra_path"),
        ('templates_path = ["_static"]\n', "a folder of templates_path"),
        ('exclude_patterns.append("_static")\n', "matched by exclude_patterns entry '_static'"),
    ],
    ids=["static", "extra", "templates", "excluded"],
)
def test_a_report_page_sphinx_does_not_read_is_refused(tmp_path: Path, conf: str, said: str):
    src = make_project(tmp_path, ["plot_quick.py"], conf=conf)
    (src / "_static").mkdir()
    (src / "_static" / "style.css").write_text("p {}\n", encoding="utf-8")
    with (src / "conf.py").open("a", encoding="utf-8") as stream:
        stream.write('docsaccel_report_page = "_static/x"\n')

    refused = build(src)

    assert refused.returncode == 2, refused.output
    lines = [line for line in refused.output.splitlines() if line.strip()]
    assert len(lines) == 1, refused.output
    assert "docsaccel_report_page = '_static/x'" in lines[0] and said in lines[0], lines[0]
    if "exclude" not in said:
        assert str((src / "_static").resolve()) in lines[0]
    assert refused.report["examples"] == []
    assert not (src / "_static" / "x.rst").exists()
    assert not (refused.outdir / "_static" / "x.rst").exists()
