"""Gates that never pass a build that failed or ran nothing, with real builds.

A build that fails before it loads docsaccel (conf.py raises, an extension listed before
``docsaccel.gallery`` fails to load) writes nothing: the report in its output folder is
the last build's, and its recorded conf.py tells. A build that ran none of its examples
(an empty shard selection, a merge build with no shard outputs) measured nothing: no gate
judges it, ``--allow-incomplete`` or not.
"""

from __future__ import annotations

import signal

import pytest
from helpers.gallery_build import build, make_project

from docsaccel import layout
from docsaccel.contract import CACHED, NOT_EXECUTED, OK
from docsaccel.report.commands import run_check, run_compare, run_history_append, run_report

pytestmark = pytest.mark.slow

EXAMPLES = ["plot_quick.py", "plot_figure.py"]


#: conf.py of a project with a module of its own it imports, and a local extension
#: listed before docsaccel.gallery: neither changes when either one breaks.
LOCAL_CODE = """
import sys
sys.path.insert(0, __import__("os").path.dirname(__file__))
import project_settings
extensions = ["early_ext", *extensions]
"""


@pytest.mark.parametrize(
    ("module", "breakage"),
    [
        ("project_settings.py", "raise RuntimeError('a setting is broken')\n"),
        ("early_ext.py", "def setup(app):\n    raise RuntimeError('broken')\n"),
    ],
    ids=["module-conf-imports", "extension-setup-before-docsaccel"],
)
def test_a_module_that_broke_the_build_before_docsaccel_refuses_its_report(
    tmp_path, module, breakage
) -> None:
    """conf.py is unchanged: a module it imports raises, or an extension listed before
    ``docsaccel.gallery`` raises in its ``setup``. The build fails before docsaccel, so
    the last build's report stays: every reader refuses it in one line naming the module
    changed since it was written (exit 2), ``--allow-incomplete`` too."""
    src = make_project(tmp_path, EXAMPLES, conf=LOCAL_CODE)
    (src / "project_settings.py").write_text("VALUE = 1\n", encoding="utf-8")
    (src / "early_ext.py").write_text("def setup(app):\n    return {}\n", encoding="utf-8")
    first = build(src)
    assert first.returncode == 0, first.output
    report = layout.report_path(first.outdir)
    assert run_check([str(report)])[1] == 0  # the last build's, so far
    conf = (src / "conf.py").read_bytes()
    (src / module).write_text(breakage, encoding="utf-8")

    failed = build(src)

    assert failed.returncode != 0 and "broken" in failed.output, failed.output
    assert (src / "conf.py").read_bytes() == conf
    assert report.is_file(), "the earlier build's report is left: nothing of docsaccel ran"
    for text, code in (
        run_check([str(report)]),
        run_check([str(first.outdir)], allow_incomplete=True),
        run_report(str(report)),
        run_compare(str(report), str(report)),
        run_history_append(str(report), tmp_path / "history.jsonl"),
    ):
        assert code == 2 and text.count("\n") == 1, text
        assert f"{src / module} was modified after this report's build loaded it" in text, text
        assert "rebuild" in text, text
    # A copy kept elsewhere is the build it names.
    kept = tmp_path / "kept.json"
    kept.write_bytes(report.read_bytes())
    assert run_check([str(kept)])[1] == 0


@pytest.mark.parametrize(
    "breakage",
    [
        "\nthis is not python(\n",
        "\nextensions = ['nonexistent_ext', *extensions]\n",
    ],
    ids=["conf-syntax-error", "extension-before-docsaccel"],
)
def test_a_build_that_failed_before_docsaccel_loaded_passes_no_gate(tmp_path, breakage) -> None:
    src = make_project(tmp_path, EXAMPLES)
    first = build(src)
    assert first.returncode == 0, first.output
    report = layout.report_path(first.outdir)
    out, code = run_check([str(report)])
    assert code == 0, out  # the first build's report, while it is the last build's
    with (src / "conf.py").open("a", encoding="utf-8") as stream:
        stream.write(breakage)

    failed = build(src)

    assert failed.returncode == 2, failed.output
    assert report.is_file(), "the earlier build's report is left: nothing of docsaccel ran"
    # A symbolic link is the report where its build wrote it, no copy kept elsewhere.
    link = tmp_path / "linked-report.json"
    link.symlink_to(report)
    for text, code in (
        run_check([str(report)]),
        run_check([str(report)], allow_incomplete=True),
        run_report(str(report)),
        run_compare(str(report), str(report)),
        run_check([str(link)]),
        run_compare(str(report), str(link)),
    ):
        assert code == 2, text
        assert text.count("\n") == 1, text
        assert f"{src / 'conf.py'} changed since this report's build" in text
        assert "may have failed before docsaccel ran" in text and "rebuild" in text
    text, code = run_history_append(str(report), tmp_path / "history.jsonl")
    assert code == 2 and "changed since this report's build" in text, text


LOCAL_EXTENSION = "import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\n"
LOCAL_EXTENSION += "extensions.append('myext')\n"


def test_a_build_that_failed_after_docsaccel_was_set_up_passes_no_gate(tmp_path) -> None:
    """conf.py unchanged, an extension listed after ``docsaccel.gallery`` that no longer
    imports: the build fails before config-inited, where it would remove the last report."""
    src = make_project(tmp_path, EXAMPLES, conf=LOCAL_EXTENSION)
    (src / "myext.py").write_text("def setup(app):\n    return {}\n", "utf-8")
    first = build(src)
    assert first.returncode == 0, first.output
    report = layout.report_path(first.outdir)
    out, code = run_check([str(report)])
    assert code == 0, out
    (src / "myext.py").unlink()

    failed = build(src)

    assert failed.returncode == 2 and "myext" in failed.output, failed.output
    assert report.is_file(), "the earlier build's report is left"
    link = tmp_path / "linked-report.json"
    link.symlink_to(report)
    for text, code in (
        run_check([str(report)]),
        run_check([str(link)]),
        run_history_append(str(link), tmp_path / "linked-history.jsonl"),
        run_check([str(first.outdir)], allow_incomplete=True),
        run_report(str(report)),
        run_compare(str(report), str(report)),
        run_history_append(str(report), tmp_path / "history.jsonl"),
    ):
        assert code == 2, text
        assert text.count("\n") == 1, text
        assert "a later build of this project started (" in text, text
        assert "wrote no report: it failed before docsaccel ran" in text, text
    # The next build that gets through replaces the report, and the gates read it again.
    (src / "myext.py").write_text("def setup(app):\n    return {}\n", "utf-8")
    again = build(src)
    assert again.returncode == 0, again.output
    out, code = run_check([str(report)])
    assert code == 0 and out.startswith("OK"), out


def test_a_build_that_ran_no_example_passes_no_gate(tmp_path) -> None:
    src = make_project(tmp_path, EXAMPLES)
    selection = tmp_path / "empty.txt"
    selection.write_text("", encoding="utf-8")

    built = build(src, env={"DOCSACCEL_SHARD_EXAMPLES": str(selection)})

    assert built.returncode == 0, built.output
    assert {r["status"] for r in built.report["examples"]} == {"not-executed"}
    report = str(layout.report_path(built.outdir))
    for allow in (False, True):
        out, code = run_check([report], allow_incomplete=allow)
        assert code == 2, out
        assert out.count("\n") == 1 and "OK" not in out, out
        assert "ran none of its 2 examples (every one not-executed)" in out
    markdown, code = run_report(report)
    assert code == 0, markdown
    assert "over 0 examples run; 2 not run (not\\-executed)" in markdown
    assert "No example ran: all 2 are not-executed; nothing was judged." in markdown
    assert "within budget" not in markdown
    text, code = run_history_append(report, tmp_path / "history.jsonl")
    assert code == 2 and "ran none of its examples" in text, text


def test_a_merge_build_without_shard_outputs_is_refused_saying_why(tmp_path) -> None:
    src = make_project(tmp_path, EXAMPLES)
    records = tmp_path / "no-shards"
    records.mkdir()

    built = build(src, env={"DOCSACCEL_SHARD_RECORDS": str(records)})

    assert built.returncode == 2, built.output
    assert "no shard left the outputs of" in built.output
    stopped = built.report["build"]["stopped_before_examples"]
    assert "no shard left the outputs of" in stopped
    report = str(layout.report_path(built.outdir))
    for allow in (False, True):
        out, code = run_check([report], allow_incomplete=allow)
        assert code == 2, out
        assert out.count("\n") == 1 and "OK" not in out, out
        assert "it stopped before its examples ran: " in out
        assert "no shard left the outputs of" in out


def test_a_report_the_build_never_wrote_points_to_its_journals(tmp_path) -> None:
    src = make_project(tmp_path, EXAMPLES)
    built = build(src)
    assert built.returncode == 0, built.output
    report = layout.report_path(built.outdir)
    assert layout.journals(layout.records_dir(built.outdir)), "the build keeps journals"
    report.unlink()  # what a build killed outright (SIGKILL) leaves

    out, code = run_check([str(report)])

    assert code == 2, out
    assert out.count("\n") == 1, out
    assert "the build wrote none" in out and f"give its output folder {built.outdir}" in out
    out, code = run_check([str(built.outdir)])
    assert code == 2 and "it wrote no report" in out, out


def test_a_gallery_that_sphinx_gallery_refuses_says_why_it_stopped(tmp_path) -> None:
    misspelled = 'sphinx_gallery_conf["examples_dirs"] = ["exmaples"]\n'
    src = make_project(tmp_path, EXAMPLES, conf=misspelled)

    built = build(src)

    assert built.returncode == 2, built.output
    out, code = run_check([str(layout.report_path(built.outdir))], allow_incomplete=True)
    assert code == 2, out
    assert out.count("\n") == 1, out
    assert (
        "it stopped before its examples ran: sphinx-gallery raised ExtensionError: Example "
        "directory " in out
    ), out


def test_an_example_without_a_docstring_stops_the_build_in_one_line(tmp_path) -> None:
    """sphinx-gallery refuses an example without a docstring (``ExtensionError`` at
    builder-inited): its message, naming the file, is the log's one ``ERROR`` line, with
    no crash report, and the report and ``check`` say it."""
    src = make_project(tmp_path, EXAMPLES)
    (src / "examples" / "plot_child.py").write_text("print('no docstring')\n", "utf-8")

    built = build(src, quiet=False)

    assert built.returncode == 2, built.output
    assert "Traceback" not in built.output and "Extension error" not in built.output, built.output
    errors = [line for line in built.output.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1, built.output
    raised = (
        'sphinx-gallery raised ExtensionError: Could not find docstring in file "'
        f'{src / "examples" / "plot_child.py"}"'
    )
    assert raised in errors[0] and "stopped before its examples ran" in errors[0], errors
    why = built.report["build"]["stopped_before_examples"]
    assert raised in why and "traceback" not in why, why
    out, code = run_check([str(layout.report_path(built.outdir))], allow_incomplete=True)
    assert code == 2, out
    assert out.count("\n") == 1, out
    assert f"it stopped before its examples ran: {raised}" in out, out
    # A view renders any build that did not finish, saying why (the reports guide).
    markdown, code = run_report(str(layout.report_path(built.outdir)))
    assert code == 0 and "it stopped before its examples ran" in markdown, markdown


RAISING_HANDLER = """

def _fails(app):
    raise RuntimeError("the data folder /nowhere is missing\\nsecond line")


def setup(app):
    app.connect("builder-inited", _fails, priority={priority})
"""


def test_a_build_a_handler_of_conf_py_stopped_names_it(tmp_path) -> None:
    """A ``builder-inited`` handler of ``conf.py`` raised after docsaccel planned the
    examples, before sphinx-gallery ran them: the report and ``check`` name it and its
    error, not sphinx-gallery."""
    src = make_project(tmp_path, EXAMPLES, conf=RAISING_HANDLER.format(priority=450))

    built = build(src)

    assert built.returncode == 2, built.output
    assert "RuntimeError" in built.output and "sphinx-gallery stopped" not in built.output
    assert {r["status"] for r in built.report["examples"]} <= {NOT_EXECUTED}, built.report
    raised = (
        "the builder-inited handler _fails in conf.py raised RuntimeError: the data folder "
        "/nowhere is missing (its traceback is in the build log)"
    )
    assert raised in built.report["build"]["stopped_before_examples"]
    out, code = run_check([str(layout.report_path(built.outdir))], allow_incomplete=True)
    assert code == 2, out
    assert out.count("\n") == 1, out
    assert raised in out and "sphinx-gallery" not in out, out


KILLER = """
import os
import signal


def _kill(app, pagename, templatename, context, doctree):
    os.kill(os.getpid(), signal.SIGTERM)


def setup(app):
    app.connect("html-page-context", _kill, priority=500)
"""


def test_sigterm_while_the_pages_are_written_is_logged_and_said(tmp_path) -> None:
    conf = "import os, sys\nsys.path.insert(0, os.path.dirname(__file__))\n"
    conf += "extensions.append('terminating_extension')\n"
    src = make_project(tmp_path, EXAMPLES, conf=conf)
    (src / "terminating_extension.py").write_text(KILLER, "utf-8")

    built = build(src)

    assert built.returncode == -signal.SIGTERM, built.output
    errors = [line for line in built.output.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1, built.output
    assert "the build stopped before its end (it was terminated (SIGTERM))" in errors[0]
    out, code = run_check([str(layout.report_path(built.outdir))])
    assert code == 2, out
    assert out.count("\n") == 1, out
    assert (
        "the build did not finish (it was terminated (SIGTERM); its examples ran; it ended "
        "while its pages were written)"
    ) in out


def test_a_build_stopped_before_its_examples_were_planned_says_so_once(tmp_path) -> None:
    """An error before docsaccel's turn (another extension's, at builder-inited): the log
    and the gate say the examples did not run, and why, without saying it twice."""
    early = (
        "def setup(app):\n"
        "    def boom(app):\n"
        "        raise RuntimeError('an earlier extension fails')\n"
        "    app.connect('builder-inited', boom, priority=1)\n"
    )
    src = make_project(tmp_path, EXAMPLES, conf=early)

    built = build(src)

    assert built.returncode != 0, built.output
    (line,) = [x for x in built.output.splitlines() if "stopped before its examples ran" in x]
    assert "ran (it stopped before" not in line, line
    raised = (
        "it ended before docsaccel planned them: the builder-inited handler "
        "setup.<locals>.boom in conf.py raised RuntimeError: an earlier extension fails "
        "(its traceback is in the build log)"
    )
    assert raised in line, line
    out, code = run_check([str(layout.report_path(built.outdir))], allow_incomplete=True)
    assert code == 2, out
    assert out.count("stopped before its examples ran") == 1, out


TERMINATING_EXAMPLE = '''"""
Terminated
==========
"""

import os
import signal

os.kill(os.getpid(), signal.SIGTERM)
'''


def test_sphinx_gallery_files_a_stopped_build_left_pass_no_gate(tmp_path) -> None:
    """A build stopped while its examples ran (CI cancelling the job) rewrote none of
    sphinx-gallery's files: those left are the last build's, and no gate reads them as
    this build's. The next build that reaches its end makes them current again."""
    conf = 'sphinx_gallery_conf["junit"] = "junit.xml"\n'
    src = make_project(tmp_path, EXAMPLES, conf=conf)
    first = build(src)
    assert first.returncode == 0, first.output
    inputs = [src / "sg_execution_times.rst", src / "auto_examples" / "sg_execution_times.rst"]
    inputs.append(first.outdir / "junit.xml")
    for path in inputs:
        out, code = run_check([str(path)], flat_budget="5m")
        assert code == 0, out
    (src / "examples" / "plot_stop.py").write_text(TERMINATING_EXAMPLE, "utf-8")

    stopped = build(src)

    assert stopped.returncode == -signal.SIGTERM, stopped.output
    for path in inputs:
        for text, code in (
            run_check([str(path)], flat_budget="5m"),
            run_report(str(path)),
            run_compare(str(path), str(path)),
            run_history_append(str(path), tmp_path / "history.jsonl"),
        ):
            assert code == 2, text
            assert text.count("\n") == 1, text
            assert f"{path}: a later build started (" in text, text
            assert "did not finish" in text and "rebuild" in text, text
    (src / "examples" / "plot_stop.py").unlink()
    again = build(src)
    assert again.returncode == 0, again.output
    # sphinx-gallery ran no example again (their sources did not change): its JUnit XML
    # now lists none, and its execution times are left as they were, the last measured.
    for path in inputs[:2]:
        out, code = run_check([str(path)], flat_budget="5m")
        assert code == 0, out


def test_journals_a_later_failed_build_left_behind_pass_no_gate(tmp_path) -> None:
    """A build killed outright leaves journals, no report; a later build that fails before
    docsaccel removed the last report notes that it started: the journals are then an
    earlier build's, and no gate reads them as the last build, ``--allow-incomplete`` or
    not."""
    src = make_project(tmp_path, EXAMPLES, conf=LOCAL_EXTENSION)
    (src / "myext.py").write_text("def setup(app):\n    return {}\n", "utf-8")
    first = build(src)
    assert first.returncode == 0, first.output
    layout.report_path(first.outdir).unlink()  # what a build killed outright leaves
    out, code = run_check([str(first.outdir)], allow_incomplete=True)
    assert "it wrote no report" in out, out  # its journals, read as its report
    (src / "myext.py").unlink()

    failed = build(src)

    assert failed.returncode == 2 and "myext" in failed.output, failed.output
    for text, code in (
        run_check([str(first.outdir)], allow_incomplete=True),
        run_report(str(first.outdir)),
    ):
        assert code == 2, text
        assert text.count("\n") == 1, text
        assert "a later build of this project started (" in text, text


def test_an_example_without_a_docstring_after_examples_ran_names_the_stop(tmp_path) -> None:
    """sphinx-gallery refuses an example without a docstring in a sub-gallery, once the
    gallery's first examples were processed (one restored by the example cache, one run):
    the log's one ``ERROR`` line says the build stopped while generating the galleries
    (not before its examples ran), and the report keeps the reason, which every reader
    names."""
    src = make_project(tmp_path, EXAMPLES)
    env = {"DOCSACCEL_CACHE": str(tmp_path / "cache")}
    first = build(src, env=env)
    assert first.returncode == 0, first.output
    base = tmp_path / "base-report.json"
    base.write_bytes(first.report_path.read_bytes())
    quick = src / "examples" / "plot_quick.py"
    quick.write_text(quick.read_text("utf-8") + "\nprint('edited')\n", "utf-8")
    sub = src / "examples" / "sub"
    sub.mkdir()
    (sub / "README.rst").write_text("Sub\n===\n", "utf-8")
    (sub / "plot_nodoc.py").write_text("print('no docstring')\n", "utf-8")

    built = build(src, env=env)

    assert built.returncode == 2, built.output
    raised = (
        'sphinx-gallery raised ExtensionError: Could not find docstring in file "'
        f'{sub / "plot_nodoc.py"}"'
    )
    errors = [line for line in built.output.splitlines() if line.startswith("ERROR")]
    assert len(errors) == 1, built.output
    assert "stopped while generating the galleries" in errors[0], errors
    assert raised in errors[0] and "before its examples ran" not in errors[0], errors
    statuses = {r["name"]: r["status"] for r in built.report["examples"]}
    assert statuses["plot_figure.py"] == CACHED and statuses["plot_quick.py"] == OK, statuses
    assert raised in built.report["build"]["stopped_while_generating"], built.report["build"]
    said = f"it stopped while generating the galleries: {raised}"
    report = str(layout.report_path(built.outdir))
    for out, code, wanted in [
        (*run_check([report]), 2),
        (*run_check([report], allow_incomplete=True), 3),
        (*run_compare(str(base), report, allow_incomplete=True), 3),
        (*run_history_append(report, tmp_path / "history.jsonl"), 2),
        (*run_report(report), 0),
    ]:
        # The Markdown view escapes its punctuation with backslashes; the reason has none.
        assert code == wanted and said in out.replace("\\", ""), out
