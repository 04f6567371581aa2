"""Build history: append one JSON line per build; medians and noise per example."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.report_factory import record, write_report

from docsaccel.cli import main
from docsaccel.report.history import read_builds, read_history
from docsaccel.report.model import InputError


def test_append_then_read_median_and_noise(tmp_path, capsys) -> None:
    history = tmp_path / "ci" / "history.jsonl"
    history.parent.mkdir()
    steady = [10.0, 10.2, 9.9, 10.1, 30.0, 10.0]  # one slow runner
    wobbly = [1.0, 2.0, 4.0, 1.5, 3.0, 0.8]
    for index, (a, b) in enumerate(zip(steady, wobbly, strict=True)):
        records = [record("plot_steady.py", a), record("plot_wobbly.py", b)]
        report = write_report(tmp_path / f"r{index}.json", records)
        assert main(["history", "append", str(report), "--to", str(history)]) == 0
    assert "appended 2 examples" in capsys.readouterr().out
    lines = history.read_text().splitlines()
    assert len(lines) == 6 and json.loads(lines[0])["schema"] == "docsaccel.history"
    stats = read_history(history, last=5)
    steady_stats = stats["tutorials/plot_steady.py"]
    assert steady_stats.durations == (10.2, 9.9, 10.1, 30.0, 10.0)
    assert steady_stats.median_seconds == 10.1  # the 30 s outlier does not move it
    assert not steady_stats.noisy
    assert stats["tutorials/plot_wobbly.py"].noisy


def test_append_makes_no_folder_and_says_which_is_missing(tmp_path, capsys) -> None:
    """As ``report -o`` does: a mistyped ``--to`` is said, never a new tree of folders."""
    report = write_report(tmp_path / "r.json", [record("plot_a.py", 1.0)])
    history = tmp_path / "nowhere" / "dir" / "h.jsonl"

    assert main(["history", "append", str(report), "--to", str(history)]) == 2

    err = capsys.readouterr().err
    assert err == (
        f"docsaccel: error: {history}: cannot append to the history: its folder "
        f"{history.parent} does not exist; create it first\n"
    )
    assert not (tmp_path / "nowhere").exists()
    assert main(["report", str(report), "-o", str(history.with_suffix(".md"))]) == 2


def test_too_few_runs_are_never_noisy(tmp_path) -> None:
    history = tmp_path / "h.jsonl"
    for seconds in (1.0, 5.0):
        report = write_report(tmp_path / "r.json", [record("plot_a.py", seconds)])
        assert main(["history", "append", str(report), "--to", str(history)]) == 0
    stats = read_history(history)["tutorials/plot_a.py"]
    assert stats.runs == 2 and stats.median_seconds == 3.0 and not stats.noisy


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "records no build"),
        ("{not json\n", "h.jsonl:1: the history line is not valid JSON"),
        ('{"schema": "other"}\n', "h.jsonl:1: not a docsaccel.history line"),
        (
            '{"schema": "docsaccel.history", "examples": {"a": {"seconds": "x"}}}\n',
            "examples['a'].seconds is 'x'",
        ),
        (
            '{"schema": "docsaccel.history", "examples": {"a": {"seconds": 1, '
            '"status": "failed", "expected_failure": "yes"}}}\n',
            "h.jsonl:1: examples['a'].expected_failure is 'yes'; expected true or false",
        ),
    ],
)
def test_bad_history_names_file_line_and_value(tmp_path, content, message) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as excinfo:
        read_history(path)
    assert message in str(excinfo.value)


def test_a_line_written_before_expected_failures_were_marked_still_reads(tmp_path) -> None:
    """A line without the mark reads as the plain failure it recorded; with it, as the
    views write an expected failure. Neither is a duration."""
    path = tmp_path / "h.jsonl"
    lines = [
        {"schema": "docsaccel.history", "version": 1, "fast": False, "examples": examples}
        for examples in (
            {
                "a.py": {"seconds": 1.0, "status": "ok"},
                "b.py": {"seconds": 2.0, "status": "failed"},
            },
            {
                "a.py": {"seconds": 1.0, "status": "ok"},
                "b.py": {"seconds": 2.0, "status": "failed", "expected_failure": True},
            },
        )
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")

    old, new = read_builds(path)

    assert old.not_whole_status == {"b.py": "failed"}
    assert new.not_whole_status == {"b.py": "failed (expected)"}
    assert old.durations == new.durations == {"a.py": 1.0}


def test_append_of_unreadable_report_exits_2(tmp_path, capsys) -> None:
    bad = tmp_path / "r.json"
    bad.write_text("{", encoding="utf-8")
    assert main(["history", "append", str(bad), "--to", str(tmp_path / "h.jsonl")]) == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert not (tmp_path / "h.jsonl").exists()


def _history_cut_short(tmp_path):
    """Two whole builds, then the start of a third an interrupted append left."""
    history = tmp_path / "htr.jsonl"
    for index, seconds in enumerate((2.0, 4.0)):
        report = write_report(tmp_path / f"r{index}.json", [record("plot_a.py", seconds)])
        assert main(["history", "append", str(report), "--to", str(history)]) == 0
    whole = history.read_text(encoding="utf-8")
    history.write_text(whole + whole.splitlines()[0][:40], encoding="utf-8")
    return history, whole


def test_readers_skip_a_last_line_cut_short_with_a_warning(tmp_path, capsys) -> None:
    history, _ = _history_cut_short(tmp_path)
    capsys.readouterr()
    assert read_history(history)["tutorials/plot_a.py"].durations == (2.0, 4.0)
    err = capsys.readouterr().err
    assert err == (
        f"docsaccel: warning: {history}:3: the history's last line is cut short (not valid "
        "JSON, no line end: an interrupted `docsaccel history append`); skipped\n"
    )
    report = write_report(tmp_path / "now.json", [record("plot_a.py", 3.0)])
    args = ["report", str(report), "--history", str(history), "--format", "md"]
    assert main(args) == 0
    assert main(["shard", "--shards", "1", "--index", "0", str(history)]) == 0
    assert "tutorials/plot_a.py" in capsys.readouterr().out


def test_append_drops_a_last_line_cut_short_and_appends(tmp_path, capsys) -> None:
    history, whole = _history_cut_short(tmp_path)
    capsys.readouterr()
    report = write_report(tmp_path / "r2.json", [record("plot_a.py", 6.0)])
    assert main(["history", "append", str(report), "--to", str(history)]) == 0
    captured = capsys.readouterr()
    assert f"{history}:3: the history's last line is cut short" in captured.err
    assert "dropped it before appending" in captured.err
    assert captured.err.count("cut short") == 1
    text = history.read_text(encoding="utf-8")
    assert text.startswith(whole) and text.endswith("\n") and len(text.splitlines()) == 3
    assert read_history(history)["tutorials/plot_a.py"].durations == (2.0, 4.0, 6.0)


def test_an_invalid_line_that_is_not_the_last_cut_short_stays_an_error(tmp_path) -> None:
    history, whole = _history_cut_short(tmp_path)
    lines = whole.splitlines()
    history.write_text(f"{lines[0]}\n{lines[1][:30]}\n{lines[1]}", encoding="utf-8")
    with pytest.raises(InputError, match=r"htr.jsonl:2: the history line is not valid JSON"):
        read_history(history)
    report = write_report(tmp_path / "r2.json", [record("plot_a.py", 6.0)])
    assert main(["history", "append", str(report), "--to", str(history)]) == 2


def test_append_after_a_whole_last_line_without_its_end_keeps_both(tmp_path) -> None:
    history, whole = _history_cut_short(tmp_path)
    history.write_text(whole.rstrip("\n"), encoding="utf-8")
    report = write_report(tmp_path / "r2.json", [record("plot_a.py", 6.0)])
    assert main(["history", "append", str(report), "--to", str(history)]) == 0
    assert read_history(history)["tutorials/plot_a.py"].durations == (2.0, 4.0, 6.0)


def test_append_of_an_output_folder_appends_the_report_it_holds(tmp_path, capsys) -> None:
    # `check` and `report` take an output folder; `history append` takes it the same way,
    # and knows the build again when given the report file itself.
    outdir = tmp_path / "html"
    (outdir / "docsaccel").mkdir(parents=True)
    report = write_report(outdir / "docsaccel" / "report.json", [record("plot_a.py", 2.0)])
    history = tmp_path / "h.jsonl"
    assert main(["history", "append", str(outdir), "--to", str(history)]) == 0
    assert "appended 1 example" in capsys.readouterr().out
    assert read_history(history)["tutorials/plot_a.py"].durations == (2.0,)
    assert main(["history", "append", str(report), "--to", str(history)]) == 2
    assert "already records the build" in capsys.readouterr().err


def test_append_to_a_history_below_a_file_names_the_file(tmp_path, capsys) -> None:
    report = write_report(tmp_path / "r.json", [record("plot_a.py", 2.0)])
    (tmp_path / "pyproject.toml").write_text("x")
    history = tmp_path / "pyproject.toml" / "h.jsonl"
    assert main(["history", "append", str(report), "--to", str(history)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'pyproject.toml'} is a file, not a folder" in err, err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("records", "build", "said"),
    [
        (
            [record("plot_a.py", 0.2, status="failed", error="ValueError: boom")],
            {},
            "tutorials/plot_a.py failed (ValueError: boom)",
        ),
        (
            [record("plot_a.py", 2.0)],
            {"sphinx_failed": "Sphinx gave 1 warning, treated as errors (-W)"},
            "Sphinx gave 1 warning, treated as errors (-W)",
        ),
    ],
    ids=["example-failed", "sphinx-failed"],
)
def test_append_refuses_a_failed_build(tmp_path, capsys, records, build, said) -> None:
    path = write_report(tmp_path / "r.json", records)
    report = json.loads(path.read_text("utf-8"))
    report["build"].update(build)
    path.write_text(json.dumps(report), "utf-8")
    history = tmp_path / "h.jsonl"

    assert main(["history", "append", str(path), "--to", str(history)]) == 2

    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert f"{path}: the build failed ({said})" in err, err
    assert "a history records passing builds only; " not in err and "not appended" in err
    assert not history.exists()


def _waits_on_lock(path) -> bool:
    """Whether a process waits for a ``flock`` lock on ``path`` (``/proc/locks`` lists
    waiters as ``->`` lines)."""
    status = path.stat()
    inode = f"{os.major(status.st_dev):02x}:{os.minor(status.st_dev):02x}:{status.st_ino}"
    for line in Path("/proc/locks").read_text("ascii", "replace").splitlines():
        fields = line.split()
        if len(fields) >= 7 and fields[1] == "->" and fields[2] == "FLOCK" and fields[6] == inode:
            return True
    return False


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs the kernel's list of locks")
def test_an_append_waits_for_one_under_way_and_drops_none_of_its_line(tmp_path) -> None:
    """An append is writing its line (held here, half written, the history locked as an
    append locks it): a second append started meanwhile waits for it, rather than take
    the half line for one an interrupted append cut short and drop it. Both lines are
    kept, whole, in order."""
    first = write_report(tmp_path / "first.json", [record("plot_a.py", 1.0)])
    second = write_report(tmp_path / "second.json", [record("plot_a.py", 2.0)])
    history = tmp_path / "history.jsonl"
    assert main(["history", "append", str(first), "--to", str(tmp_path / "scratch.jsonl")]) == 0
    line = (tmp_path / "scratch.jsonl").read_text(encoding="utf-8")
    with history.open("ab") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        held.write(line[:40].encode())
        held.flush()
        command = [sys.executable, "-m", "docsaccel.cli", "history", "append", str(second)]
        process = subprocess.Popen(
            [*command, "--to", str(history)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        deadline = time.monotonic() + 60
        while not _waits_on_lock(history):
            assert process.poll() is None, f"it did not wait: {process.communicate()[0]}"
            assert time.monotonic() < deadline, "the second append never reached the history"
            time.sleep(0.05)
        held.write(line[40:].encode())
    output = process.communicate(timeout=60)[0]
    assert process.returncode == 0, output
    assert "cut short" not in output, output
    lines = history.read_text(encoding="utf-8").splitlines()
    assert [json.loads(text)["source"] for text in lines] == [str(first), str(second)]
    assert [h.durations for h in read_history(history).values()] == [(1.0, 2.0)]


TIMES_ONLY = """
- **00:02.000**: :ref:`sphx_glr_auto_examples_plot_raised.py` (``plot_raised.py``)
- **00:00.000**: :ref:`sphx_glr_auto_examples_plot_skipped.py` (``plot_skipped.py``)
"""


def test_append_of_sphinx_gallerys_file_says_it_cannot_tell_a_failure(tmp_path, capsys) -> None:
    """sg_execution_times.rst lists an example that raised with its time, as any other:
    the append says so as check does, and its line does not claim the example passed."""
    times = tmp_path / "sg_execution_times.rst"
    times.write_text(TIMES_ONLY, encoding="utf-8")
    history = tmp_path / "history.jsonl"
    assert main(["history", "append", str(times), "--to", str(history)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"appended 2 examples from {times} to {history}", out
    assert out[1].startswith(f"note: {times}: sphinx-gallery's file does not say whether"), out
    assert len(out) == 2, out
    line = json.loads(history.read_text(encoding="utf-8"))
    assert line["statuses_known"] is False, line
    assert line["examples"]["plot_raised.py"] == {"seconds": 2.0}, line
    assert line["examples"]["plot_skipped.py"]["status"] == "not-executed", line
    (build,) = read_builds(history)
    assert not build.statuses_known
    assert build.durations == {"plot_raised.py": 2.0}  # its time is read as before

    # A report says how each example ended: no note, and its line says nothing more.
    report = write_report(tmp_path / "r.json", [record("plot_a.py", 1.0)])
    assert main(["history", "append", str(report), "--to", str(history)]) == 0
    assert "note:" not in capsys.readouterr().out
    last = json.loads(history.read_text(encoding="utf-8").splitlines()[-1])
    assert (
        "statuses_known" not in last and last["examples"]["tutorials/plot_a.py"]["status"] == "ok"
    )
    assert read_builds(history)[-1].statuses_known


def test_a_statuses_known_flag_that_is_not_a_boolean_is_refused(tmp_path) -> None:
    history = tmp_path / "history.jsonl"
    line = {"schema": "docsaccel.history", "version": 1, "statuses_known": "no", "examples": {}}
    history.write_text(json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"history.jsonl:1: statuses_known is 'no'; expected"):
        read_builds(history)


def test_report_against_sphinx_gallerys_file_says_it_cannot_tell_a_failure(
    tmp_path, capsys
) -> None:
    """A baseline read from sg_execution_times.rst gets the note every gate gives it."""
    times = tmp_path / "sg_execution_times.rst"
    times.write_text(TIMES_ONLY, encoding="utf-8")
    report = write_report(tmp_path / "r.json", [record("plot_raised.py", 1.0)])
    said = f"{times}: sphinx-gallery's file does not say whether an example failed"
    assert main(["report", str(report), "--baseline", str(times)]) == 0
    out = capsys.readouterr().out
    assert "**Baseline failures not known:** " in out and "does not say whether" in out, out
    assert main(["report", str(report), "--baseline", str(times), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["baseline_no_status"].startswith(said)
    assert main(["report", str(report), "--baseline", str(times), "--format", "html"]) == 0
    assert "Baseline failures not known: " in capsys.readouterr().out
    assert main(["report", str(report), "--baseline", str(report), "--format", "json"]) == 2
    capsys.readouterr()


def _history_cut_at_its_first_line(tmp_path, size: int = 300):
    """A history of two builds an interrupted copy or append cut at ``size`` bytes: inside
    its first line, before that line names its schema."""
    history = tmp_path / "h.jsonl"
    for index, seconds in enumerate((2.0, 4.0)):
        records = [record("plot_a.py", seconds), record("plot_b.py", 1.0)]
        report = write_report(tmp_path / f"r{index}.json", records)
        assert main(["history", "append", str(report), "--to", str(history)]) == 0
    text = history.read_text(encoding="utf-8")
    assert len(text.splitlines()[0]) > size and "docsaccel.history" not in text[:size]
    history.write_text(text[:size], encoding="utf-8")
    return history


@pytest.mark.parametrize(
    "command",
    [
        ["report", "{now}", "--history", "{history}", "--format", "md"],
        ["shard", "--shards", "1", "--index", "0", "{history}"],
        ["shard-local", "--shards", "1", "--docs", "{docs}", "{history}"],
        ["shard-build", "--shards", "1", "--index", "0", "--docs", "{docs}", "{history}"],
    ],
    ids=lambda command: command[0],
)
def test_every_reader_names_a_history_cut_in_its_only_line_the_same_way(
    tmp_path, capsys, monkeypatch, command
) -> None:
    history = _history_cut_at_its_first_line(tmp_path)
    now = write_report(tmp_path / "now.json", [record("plot_a.py", 3.0)])
    docs = tmp_path / "docs"
    (docs / "tutorials").mkdir(parents=True)
    (docs / "tutorials" / "README.txt").write_text("T\n=\n", encoding="utf-8")
    (docs / "tutorials" / "plot_a.py").write_text('"""\nA\n=\n"""\n', encoding="utf-8")
    (docs / "conf.py").write_text(
        'extensions = ["sphinx_gallery.gen_gallery", "docsaccel.gallery"]\n'
        'sphinx_gallery_conf = {"examples_dirs": "tutorials", "gallery_dirs": "auto"}\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    args = [arg.format(now=now, history=history, docs=docs) for arg in command]

    assert main(args) == 2

    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.endswith(
        f"error: {history}:1: the history's last line is cut short (not valid JSON, no line "
        "end: an interrupted `docsaccel history append`), its only line: it records no "
        "build\n"
    ), err
    assert not (docs / "_build").exists()  # refused before building


def test_append_drops_a_history_cut_in_its_only_line_naming_it_a_history(tmp_path, capsys) -> None:
    history = _history_cut_at_its_first_line(tmp_path)
    report = write_report(tmp_path / "r2.json", [record("plot_a.py", 6.0)])
    capsys.readouterr()

    assert main(["history", "append", str(report), "--to", str(history)]) == 0

    assert capsys.readouterr().err == (
        f"docsaccel: warning: {history}:1: the history's last line is cut short (not valid "
        "JSON, no line end: an interrupted `docsaccel history append`); dropped it before "
        "appending\n"
    )
    assert read_history(history)["tutorials/plot_a.py"].durations == (6.0,)


def test_a_file_cut_in_its_only_line_that_starts_no_history_line_is_not_taken(
    tmp_path, capsys
) -> None:
    """Only the start of a history line says an unreadable file is one: a report cut short
    given as ``--to`` stays as it is."""
    cut = tmp_path / "cut.json"
    cut.write_text(write_report(tmp_path / "r.json", [record("plot_a.py", 1.0)]).read_text()[:80])
    before = cut.read_bytes()
    report = write_report(tmp_path / "r2.json", [record("plot_a.py", 6.0)])

    assert main(["history", "append", str(report), "--to", str(cut)]) == 2

    assert "is not a docsaccel history" in capsys.readouterr().err
    assert cut.read_bytes() == before


def test_a_history_with_a_line_no_reader_takes_is_not_appended_to(tmp_path, capsys) -> None:
    """A damaged line in the middle of a history makes every reader refuse it: an append
    there would record a build nothing reads back, so it is refused naming the line, and
    the history stays as it was."""
    history = tmp_path / "history.jsonl"
    first = write_report(tmp_path / "r1.json", [record("plot_a.py", 1.0)])
    assert main(["history", "append", str(first), "--to", str(history)]) == 0
    with history.open("a", encoding="utf-8") as stream:
        stream.write('{"garbage": 1}\n')
    before = history.read_bytes()
    capsys.readouterr()
    second = write_report(tmp_path / "r2.json", [record("plot_a.py", 2.0)])

    assert main(["history", "append", str(second), "--to", str(history)]) == 2

    err = capsys.readouterr().err
    assert f"{history}:2:" in err and "not appended" in err, err
    assert history.read_bytes() == before
