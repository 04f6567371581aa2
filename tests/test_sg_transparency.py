"""sphinx-gallery stays what it is with docsaccel.gallery loaded.

docsaccel wraps one sphinx-gallery function (``py_source_parser.remove_config_comments``,
so inline budget comments leave the page with sphinx-gallery's own config comments). The
wrapper must pass for the original everywhere something looks at it: autodoc documents a
module's functions by their ``__module__``, pickle finds a function by its qualified name.
Without that, a project documenting ``sphinx_gallery.py_source_parser`` lost the function
from its API pages as soon as it added docsaccel.gallery (sphinx-gallery's own
``tests/test_full.py`` tinybuild does; ``tools/sg_full_suite.py`` compares that suite with
and without the plugin).
"""

from __future__ import annotations

import importlib.util
import inspect
import pickle
from pathlib import Path

import pytest
from helpers.gallery_build import build, make_project
from sphinx_gallery import py_source_parser

from docsaccel import sg_compat

TOOL = Path(__file__).parents[1] / "tools" / "sg_full_suite.py"
API_PAGE = """API
===

.. automodule:: sphinx_gallery.py_source_parser
   :members:
"""


def test_the_wrapped_function_passes_for_sphinx_gallerys_own() -> None:
    sg_compat.remove_our_config_comments()
    wrapped = py_source_parser.remove_config_comments
    assert wrapped("# docsaccel_budget = 1") == ""  # it is the wrapper ...
    assert wrapped.__module__ == "sphinx_gallery.py_source_parser"
    assert wrapped.__name__ == wrapped.__qualname__ == "remove_config_comments"
    assert wrapped.__doc__.strip().startswith("Return the content of")
    assert list(inspect.signature(wrapped).parameters) == ["code_block"]
    # ... which pickle finds where the original was, as sphinx-gallery's workers would.
    assert pickle.loads(pickle.dumps(wrapped)) is wrapped


@pytest.mark.slow
def test_autodoc_still_documents_the_wrapped_function(tmp_path) -> None:
    autodoc = 'extensions.append("sphinx.ext.autodoc")\n'
    src = make_project(tmp_path, ["plot_quick.py"], conf=autodoc)
    (src / "api.rst").write_text(API_PAGE, encoding="utf-8")
    with (src / "index.rst").open("a", encoding="utf-8") as stream:
        stream.write("   api\n")
    built = build(src)
    assert built.returncode == 0, built.output
    page = (built.outdir / "api.html").read_text(encoding="utf-8")
    assert 'id="sphinx_gallery.py_source_parser.split_code_and_text_blocks"' in page
    assert 'id="sphinx_gallery.py_source_parser.remove_config_comments"' in page
    assert "Return the content of" in page  # its own docstring, not the wrapper's
    assert built.report["examples"][0]["status"] == "ok"
    # The suite tool's comparison of documented objects sees it too.
    objects = _tool().inventory(built.outdir / "objects.inv")
    assert "py:function sphinx_gallery.py_source_parser.remove_config_comments" in objects


def _tool():
    spec = importlib.util.spec_from_file_location("sg_full_suite", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_suite_tool_refuses_packages_that_would_replace_the_environments(tmp_path) -> None:
    (tmp_path / "docutils").mkdir()
    (tmp_path / "docutils" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "sphinxcontrib" / "video").mkdir(parents=True)  # a namespace: merges
    (tmp_path / "docsaccel_no_such_module.py").write_text("", encoding="utf-8")
    assert _tool().shadowed(tmp_path) == ["docutils"]
    sdist = tmp_path / "sdist"
    (sdist / _tool().TINYBUILD_CONF).parent.mkdir(parents=True)
    (sdist / _tool().TINYBUILD_CONF).write_text("", encoding="utf-8")
    # Refused before anything runs: the comparison would not be of the project's docutils.
    work = tmp_path / "work"
    assert _tool().main([str(sdist), "--extra-path", str(tmp_path), "--workdir", str(work)]) == 2
    assert not work.exists()


def test_suite_tool_reads_outcomes_from_junit(tmp_path) -> None:
    junit = tmp_path / "junit.xml"
    junit.write_text(
        '<testsuites><testsuite><testcase classname="m" name="a"/>'
        '<testcase classname="m" name="b"><failure message="x"/></testcase>'
        '<testcase classname="m" name="c"><error message="x"/></testcase>'
        '<testcase classname="m" name="d"><skipped message="x"/></testcase>'
        "</testsuite></testsuites>",
        encoding="utf-8",
    )
    assert _tool().outcomes(junit) == {
        "m::a": "passed",
        "m::b": "failed",
        "m::c": "error",
        "m::d": "skipped",
    }
    assert _tool().outcomes(tmp_path / "missing.xml") == {}
