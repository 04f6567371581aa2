"""``check``/``compare --format github``: workflow commands GitHub turns into annotations."""

from __future__ import annotations

import re

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


def test_escaping_follows_the_runner() -> None:
    assert escape_data("100% done\r\nnext: a,b") == "100%25 done%0D%0Anext: a,b"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert annotation("warning", "m", file="x, y.py", title="T: 1") == (
        "::warning file=x%2C y.py,title=T%3A 1::m"
    )


def test_check_annotates_over_and_near_budget_files(tmp_path) -> None:
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


def test_compare_annotates_regressions_as_errors_only_when_they_fail(tmp_path) -> None:
    base = write_report(
        tmp_path / "base.json", [record("plot_a,1.py", 10.0), record("plot_b.py", 5.0)]
    )
    head = write_report(
        tmp_path / "head.json", [record("plot_a,1.py", 30.0), record("plot_b.py", 5.0)]
    )

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


def test_an_example_beside_the_docs_is_annotated_by_its_path_from_the_root(tmp_path) -> None:
    # examples_dirs = "../gal": the id climbs out of the source folder.
    beside = record("plot_slow.py", 12.0, budget=10.0, id="../gal/basics/plot_slow.py")
    report = write_report(tmp_path / "r.json", [beside])

    text, code = run_check([str(report)], fmt="github", source_dir="docs")

    assert code == 1
    assert parse(text)[0]["file"] == "gal/basics/plot_slow.py"
