"""``check``/``compare --format github``: workflow commands GitHub turns into annotations."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers.report_factory import record, write_report

from docsaccel.cli import main
from docsaccel.report.commands import run_check, run_compare
from docsaccel.report.github import annotation, escape_data, escape_property

# ::level key=value,key=value::message; in properties neither ":" nor "," may appear
# unescaped, in the message no CR or LF, and "%" only as an escape.
_COMMAND = re.compile(
    r"^::(?P<level>error|warning|notice)(?: (?P<props>[^:,=]+=[^:,]*(?:,[^:,=]+=[^:,]*)*))?"
    r"::(?P<message>[^\r\n]*)$"
)
_ESCAPE = re.compile(r"%(25|0D|0A|3A|2C)")


def unescape(text: str) -> str:
    assert not re.search(r"%(?!25|0D|0A|3A|2C)", text), f"a bare % in {text!r}"
    return _ESCAPE.sub(
        lambda m: {"25": "%", "0D": "\r", "0A": "\n", "3A": ":", "2C": ","}[m.group(1)], text
    )


def parse(output: str) -> list[dict[str, str]]:
    commands = []
    for line in output.splitlines():
        match = _COMMAND.match(line)
        assert match, f"not a workflow command: {line!r}"
        props = dict(item.split("=", 1) for item in (match.group("props") or "").split(",") if item)
        commands.append(
            {
                "level": match.group("level"),
                "message": unescape(match.group("message")),
                **{key: unescape(value) for key, value in props.items()},
            }
        )
    return commands


def in_repository(root: Path, monkeypatch: pytest.MonkeyPatch, *examples: str) -> None:
    """``root`` the working directory (a repository root) with ``docs/<example>`` files."""
    for example in examples:
        path = root / "docs" / example
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("print(1)\n", encoding="utf-8")
    monkeypatch.chdir(root)


def test_escaping_follows_the_runner() -> None:
    assert escape_data("100% done\r\nnext: a,b") == "100%25 done%0D%0Anext: a,b"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert annotation("warning", "m", file="x, y.py", title="T: 1") == (
        "::warning file=x%2C y.py,title=T%3A 1::m"
    )


def test_check_annotates_over_and_near_budget_files(tmp_path, monkeypatch) -> None:
    detail = "budgets.toml [examples]\n'plot_a,b.py'"
    report = write_report(
        tmp_path / "r.json",
        [
            record("plot_a,b.py", 12.0, budget=10.0, budget_detail=detail),
            record("plot_near.py", 9.0, budget=10.0),
            record("plot_fine.py", 1.0, budget=10.0),
            record("plot_100%.py", 5.0, budget=None),
        ],
    )
    names = ("plot_a,b.py", "plot_near.py", "plot_fine.py", "plot_100%.py")
    in_repository(tmp_path, monkeypatch, *(f"tutorials/{name}" for name in names))

    text, code = run_check([str(report)], fmt="github", source_dir="docs")

    assert code == 1
    commands = parse(text)
    assert [(c["level"], c["file"]) for c in commands] == [
        ("error", "docs/tutorials/plot_a,b.py"),
        ("warning", "docs/tutorials/plot_near.py"),
    ]
    over, near = commands
    assert over["title"] == "Over budget"
    assert over["message"] == (
        f"tutorials/plot_a,b.py took 12s, over its budget of 10s (from {detail})"
    )
    assert "\n" in over["message"]  # a newline survived the round trip
    assert near["title"] == "Near budget" and "90% of its budget" in near["message"]


def test_check_github_without_findings_prints_nothing_and_passes(tmp_path, capsys) -> None:
    report = write_report(tmp_path / "r.json", [record("plot_a.py", 1.0)])
    assert main(["check", str(report), "--format", "github"]) == 0
    assert capsys.readouterr().out == ""


def test_the_recorded_source_dir_gives_paths_from_the_repository_root(
    tmp_path, monkeypatch
) -> None:
    report = write_report(tmp_path / "r.json", [record("plot_a.py", 12.0, budget=10.0)])
    data = report.read_text().replace(
        '"fast": true,', f'"fast": true, "source_dir": "{tmp_path / "docs"}",', 1
    )
    report.write_text(data)
    monkeypatch.chdir(tmp_path)
    text, _ = run_check([str(report)], fmt="github")
    assert parse(text)[0]["file"] == "docs/tutorials/plot_a.py"


def test_compare_annotates_regressions_as_errors_only_when_they_fail(tmp_path, monkeypatch) -> None:
    base = write_report(
        tmp_path / "base.json", [record("plot_a,1.py", 10.0), record("plot_b.py", 5.0)]
    )
    head = write_report(
        tmp_path / "head.json", [record("plot_a,1.py", 30.0), record("plot_b.py", 5.0)]
    )
    in_repository(tmp_path, monkeypatch, "tutorials/plot_a,1.py", "tutorials/plot_b.py")

    warned, code = run_compare(str(base), str(head), fmt="github", source_dir="docs")
    assert code == 0
    (command,) = parse(warned)
    assert command["level"] == "warning" and command["file"] == "docs/tutorials/plot_a,1.py"
    assert command["title"] == "Docs build regression"
    assert "10s -> 30s" in command["message"]

    failed, code = run_compare(
        str(base), str(head), fail_on_regression=True, fmt="github", source_dir="docs"
    )
    assert code == 1 and parse(failed)[0]["level"] == "error"


def test_an_example_beside_the_docs_is_annotated_by_its_path_from_the_root(
    tmp_path, monkeypatch
) -> None:
    # examples_dirs = "../gal": the id climbs out of the source folder.
    beside = record("plot_slow.py", 12.0, budget=10.0, id="../gal/basics/plot_slow.py")
    report = write_report(tmp_path / "r.json", [beside])
    in_repository(tmp_path, monkeypatch, "../gal/basics/plot_slow.py")

    text, code = run_check([str(report)], fmt="github", source_dir="docs")

    assert code == 1
    assert parse(text)[0]["file"] == "gal/basics/plot_slow.py"


def test_a_source_dir_without_the_examples_is_one_line_naming_folder_and_file(
    tmp_path, monkeypatch
) -> None:
    report = write_report(tmp_path / "r.json", [record("plot_a.py", 12.0, budget=10.0)])
    base = write_report(tmp_path / "base.json", [record("plot_a.py", 1.0)])
    in_repository(tmp_path, monkeypatch, "plot_a.py")  # not in the gallery's folder
    # Whatever the format: an option given is checked, never left unread.
    for fmt in ("github", "text", "md"):
        for folder in ("docs", "nowhere", str(tmp_path / "docs")):
            answers = [run_compare(str(base), str(report), fmt=fmt, source_dir=folder)]
            if fmt != "md":
                answers.append(run_check([str(report)], fmt=fmt, source_dir=folder))
            for text, code in answers:
                assert code == 2, (fmt, text)
                assert text.count("\n") == 1, text
                assert text.startswith(f"error: --source-dir {folder}: "), text
                assert "no such folder" in text or "tutorials/plot_a.py from " in text
    for fmt in ("github", "text"):
        args = ["check", str(report), "--format", fmt, "--source-dir", "nowhere"]
        assert main(args) == 2


def test_a_source_dir_holding_the_examples_works_relative_and_absolute(
    tmp_path, monkeypatch
) -> None:
    report = write_report(tmp_path / "r.json", [record("plot_a.py", 12.0, budget=10.0)])
    in_repository(tmp_path, monkeypatch, "tutorials/plot_a.py")
    for folder in ("docs", "./docs/", str(tmp_path / "docs")):
        text, code = run_check([str(report)], fmt="github", source_dir=folder)
        assert code == 1, text
        assert parse(text)[0]["file"] == "docs/tutorials/plot_a.py"
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    monkeypatch.chdir(outside)
    text, code = run_check([str(report)], fmt="github", source_dir=str(tmp_path / "docs"))
    assert code == 2 and "outside the working directory" in text, text


def test_a_gallery_beside_the_docs_run_from_the_docs_folder_is_refused(
    tmp_path, monkeypatch
) -> None:
    # doc/src is the source folder, examples/ the gallery beside it: run from doc/, its
    # examples' files climb out of the working directory, where GitHub matches nothing.
    example = record("plot_a.py", 12.0, budget=10.0, id="../../examples/plot_a.py")
    report = write_report(tmp_path / "r.json", [example])
    data = json.loads(report.read_text(encoding="utf-8"))
    data["build"]["source_dir"] = str(tmp_path / "doc" / "src")
    report.write_text(json.dumps(data), encoding="utf-8")
    (tmp_path / "doc" / "src").mkdir(parents=True)
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "plot_a.py").write_text("print(1)\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path / "doc")
    for source_dir in ("src", None):
        text, code = run_check([str(report)], fmt="github", source_dir=source_dir)
        assert code == 2 and text.count("\n") == 1, text
        assert "../../examples/plot_a.py from " in text and "outside the working" in text
    monkeypatch.chdir(tmp_path)
    text, code = run_check([str(report)], fmt="github", source_dir="doc/src")
    assert code == 1 and parse(text)[0]["file"] == "examples/plot_a.py", text


def test_a_time_over_a_tiny_budget_reads_over_it() -> None:
    """``took 0s, over its budget of 0.0001s`` reads as within it: enough digits."""
    from docsaccel.report.github import check_annotations
    from docsaccel.report.model import Timing

    timing = Timing("t/plot_a.py", "plot_a.py", 0.004, status="over-budget", budget_seconds=1e-4)
    text = check_annotations([timing], {})
    assert "t/plot_a.py took 0.004s, over its budget of 0.0001s" in text, text
