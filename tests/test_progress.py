"""Progress in the build log of real builds: one line for every example, as it ends."""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.gallery_build import Built, build, make_project, run_cli
from helpers.processes import kill_children, start_build, wait_for_mark

from docsaccel.budgets import Budget, MemoryBudget
from docsaccel.contract import UNFINISHED_ERROR, stopped_by, unfinished_error, unfinished_why
from docsaccel.examples import Example
from docsaccel.gallery.progress import Progress

NAMES = ["plot_quick.py", "plot_figure.py", "plot_sleep.py", "plot_inline.py"]
BUDGETS = 'default = "1m"\n[examples]\n"plot_sleep.py" = "1.6s"\n'
_ORDERED = 'sphinx_gallery_conf["within_subsection_order"] = "FileNameSortKey"\n'
_LINE = re.compile(r"docsaccel: \[(\d+)/(\d+)\] examples/(\S+): ")


def build_verbose(src: Path, env: dict[str, str] | None = None) -> Built:
    """A build without ``-q``: the log holds the progress lines."""
    outdir = src / "_build" / "html"
    child_env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSACCEL_")}
    child_env.pop("CI", None)
    child_env.update(env or {})
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", str(src), str(outdir)],
        env=child_env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return Built(done.returncode, done.stdout + done.stderr, outdir)


def progress_lines(output: str) -> dict[str, str]:
    """Each example's progress line, by file; fails when an example has more than one."""
    found: dict[str, str] = {}
    for line in output.splitlines():
        if match := _LINE.search(line):
            name = match.group(3)
            assert name not in found, f"{name} logged twice:\n{output}"
            found[name] = line
    return found


def assert_every_example_once(built: Built, names: list[str]) -> dict[str, str]:
    lines = progress_lines(built.output)
    assert sorted(lines) == sorted(names), built.output
    count = len(names)
    numbers = sorted(int(re.search(r"\[(\d+)/", line).group(1)) for line in lines.values())
    assert numbers == list(range(1, count + 1)), built.output
    assert all(f"/{count}] " in line for line in lines.values()), built.output
    return lines


def touch_sources(src: Path) -> None:
    # A changed source makes sphinx-gallery run the example again.
    for path in (src / "examples").glob("plot_*.py"):
        path.write_text(path.read_text(encoding="utf-8") + "\n# again\n", encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("parallel", [1, 2])
def test_the_log_shows_each_example_once_then_estimates(tmp_path, parallel) -> None:
    conf = f'sphinx_gallery_conf["parallel"] = {parallel}\n' if parallel > 1 else ""
    src = make_project(tmp_path, NAMES, conf=conf, budgets=BUDGETS)

    first = build_verbose(src)

    assert first.returncode == 0, first.output
    assert_every_example_once(first, NAMES)
    # A loaded machine may push the sleeper over its budget: either status is right here.
    end = re.search(
        r"examples/plot_sleep.py: [\d.]+s, (ok|over-budget), \d+% of its budget of 1\.6s",
        first.output,
    )
    assert end, first.output
    # The near-budget notice came while the example ran, before its line.
    near = re.search(
        r"plot_sleep.py: still running after [\d.]+s, [89]\d% of its budget of 1\.6s", first.output
    )
    assert near and near.start() < end.start(), first.output
    if parallel > 1:
        assert len({r["pid"] for r in first.report["examples"]}) >= 2

    touch_sources(src)
    second = build_verbose(src)

    assert second.returncode == 0, second.output
    assert_every_example_once(second, NAMES)
    # The first build's times give an estimate of what is left.
    assert re.search(r"; about [\d.]+s left|; under 0\.1s left", second.output), second.output


@pytest.mark.slow
def test_quiet_builds_and_disabled_progress_log_nothing(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py"], budgets='default = "1m"\n')
    quiet = build(src, "-W")
    assert quiet.returncode == 0, quiet.output
    assert "docsaccel: [" not in quiet.output
    (src / "conf.py").write_text(
        (src / "conf.py").read_text() + "docsaccel_progress = False\n", encoding="utf-8"
    )
    touch_sources(src)
    off = build_verbose(src)
    assert off.returncode == 0 and "docsaccel: [" not in off.output


@pytest.mark.slow
def test_history_file_gives_expected_times_of_the_same_kind(tmp_path) -> None:
    history = tmp_path / "src" / "history.jsonl"
    names = ["plot_quick.py", "plot_figure.py"]
    src = make_project(
        tmp_path, names, conf='docsaccel_history = "history.jsonl"\n', budgets=BUDGETS
    )
    lines = [
        {"fast": False, "examples": {"examples/plot_quick.py": {"seconds": 42.0}}},
        {"fast": True, "examples": {"examples/plot_quick.py": {"seconds": 7.0}}},
    ]
    history.write_text(
        "".join(
            json.dumps({"schema": "docsaccel.history", "version": 1, **line}) + "\n"
            for line in lines
        ),
        encoding="utf-8",
    )
    built = build_verbose(src, env={"DOCSACCEL_FAST": "1"})
    assert built.returncode == 0, built.output
    lines = assert_every_example_once(built, names)
    first = next(name for name, line in lines.items() if "[1/2]" in line)
    # plot_quick.py left is expected to take the fast build's 7 s, not the full one's 42 s;
    # plot_figure.py has no time of its own, and no other example's is taken for it.
    left = "; about 7s left" if first == "plot_figure.py" else "; 1 example left, not timed before"
    assert lines[first].endswith(left), built.output


@pytest.mark.slow
def test_recorded_time_is_sphinx_gallerys_own(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py", "plot_figure.py"], budgets=BUDGETS)
    built = build(src)
    assert built.returncode == 0, built.output
    for name in ("plot_quick.py", "plot_figure.py"):
        record = built.record(name)
        assert record["overhead_seconds"] >= 0
        # As the page shows it, with every sphinx-gallery release...
        rst = (src / "auto_examples" / f"{Path(name).stem}.rst").read_text(encoding="utf-8")
        shown = re.search(
            r"\*\*Total running time of the script:\*\* \(0 minutes ([\d.]+) seconds\)", rst
        )
        assert shown and abs(float(shown.group(1)) - record["wall_seconds"]) < 0.01, rst
        # ... and as its cost file (from sphinx-gallery 0.22) keeps it.
        cost_file = src / "auto_examples" / f"{Path(name).stem}.cost.json"
        if cost_file.exists():
            assert abs(record["wall_seconds"] - json.loads(cost_file.read_text())["time"]) <= 0.010


def _example(name: str, budget: float | None, memory: int | None = None) -> Example:
    memory_budget = MemoryBudget(memory, "default", "budgets.toml memory_default")
    return Example(
        gallery="tutorials",
        name=name,
        src_file=f"/src/tutorials/{name}",
        target_file=f"/src/auto/{name}",
        docname=f"auto/{Path(name).stem}",
        executable=True,
        budget=Budget(
            budget, "default" if budget else "builtin", "budgets.toml default", memory=memory_budget
        ),
    )


def test_progress_numbers_examples_and_estimates_what_is_left(tmp_path) -> None:
    lines: list[str] = []
    examples = [_example("a.py", 60.0), _example("b.py", None), _example("c.py", 10.0)]
    extra = _example("d.py", 30.0)  # planned as unchanged, yet run
    expected = {"tutorials/a.py": 20.0, "tutorials/c.py": 10.0}
    progress = Progress(examples, expected=expected, jobs=2, log=lines.append, known=[extra])
    progress.start(tmp_path)
    channel = pickle.loads(pickle.dumps(progress.channel))  # as a worker gets it
    # It travels as its pipe and owner alone: a worker opens the pipe itself.
    assert (channel.pipe, channel.owner_pid) == (progress.channel.pipe, os.getpid())
    assert channel._handle is None and channel._handle_pid is None
    channel.send(event="start", id="tutorials/a.py")
    channel.send(event="near", id="tutorials/a.py", seconds=48.5)
    channel.send(event="end", id="tutorials/a.py", seconds=50.0, status="ok")
    channel.send(event="start", id="tutorials/unknown.py")  # not planned: ignored
    channel.send(event="start", id="tutorials/b.py")
    channel.send(event="start", id="tutorials/d.py")
    channel.send(event="end", id="tutorials/d.py", seconds=3.0, status="ok")
    progress.stop()
    assert lines == [
        "docsaccel: tutorials/a.py: still running after 48.5s, 81% of its budget of 1m",
        # c.py's 10 s, on one of the 2 processes; b.py has no expected time: counted alone.
        "docsaccel: [1/3] tutorials/a.py: 50s, ok, 83% of its budget of 1m; "
        "about 10s left, plus 1 example not timed before",
        "docsaccel: [3/4] tutorials/d.py: 3s, ok, 10% of its budget of 30s; "
        "about 10s left, plus 1 example not timed before",
    ]
    assert not Path(progress.channel.pipe).exists()
    channel.send(event="start", id="tutorials/c.py")  # after stop: dropped, no error


def _lines_of(example: Example, **end) -> list[str]:
    lines: list[str] = []
    progress = Progress([example], log=lines.append)
    progress.handle({"event": "start", "id": example.id})
    progress.handle({"event": "end", "id": example.id, **end})
    return lines


def test_one_line_per_example_in_the_units_of_the_budget_file_and_the_reports() -> None:
    lines = _lines_of(_example("a.py", 420.0), seconds=144.6, status="ok", peak=100 << 20)
    # 7 m is "7m" here as in conf/budgets.toml and every report view, not "420.0s".
    assert lines == [
        "docsaccel: [1/1] tutorials/a.py: 2m25s, ok, 34% of its budget of 7m, peak 100M"
    ]
    assert _lines_of(_example("b.py", 2.0), seconds=1.234, status="ok") == [
        "docsaccel: [1/1] tutorials/b.py: 1.2s, ok, 62% of its budget of 2s"
    ]


@pytest.mark.parametrize(
    ("status", "by", "peak", "share"),
    [
        # Stopped by its memory budget (fail mode), a tenth of its time budget used.
        ("interrupted", "memory", 600 << 20, "peak 600M, 150% of its memory budget of 400M"),
        # Over its memory budget in warn mode: never stopped, still over.
        ("over-budget", None, 500 << 20, "peak 500M, 125% of its memory budget of 400M"),
        ("interrupted", "ceiling", 900 << 20, "peak 900M, stopped by the build's memory ceiling"),
        ("ok", None, 200 << 20, "10% of its budget of 1m, peak 200M"),
    ],
)
def test_a_memory_overrun_line_shows_its_memory_not_its_time(status, by, peak, share) -> None:
    lines = _lines_of(
        _example("m.py", 60.0, memory=400 << 20), seconds=6.0, status=status, peak=peak, by=by
    )
    assert lines == [f"docsaccel: [1/1] tutorials/m.py: 6s, {status}, {share}"]


def test_without_named_pipes_the_sphinx_process_still_logs(tmp_path, monkeypatch) -> None:
    lines: list[str] = []
    monkeypatch.delattr(os, "mkfifo")
    progress = Progress([_example("a.py", 60.0)], log=lines.append).start(tmp_path)
    progress.channel.send(event="start", id="tutorials/a.py")
    progress.channel.send(event="end", id="tutorials/a.py", seconds=1.0, status="ok")
    progress.stop()
    assert lines == ["docsaccel: [1/1] tutorials/a.py: 1s, ok, 2% of its budget of 1m"]


@pytest.mark.slow
def test_a_shard_build_counts_its_own_examples(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_quick.py", "plot_inline.py", "plot_figure.py"])
    selection = tmp_path / "shard.txt"
    selection.write_text("plot_inline.py\n", encoding="utf-8")

    built = build_verbose(src, env={"DOCSACCEL_SHARD_EXAMPLES": str(selection)})

    assert built.returncode == 0, built.output
    assert list(progress_lines(built.output)) == ["plot_inline.py"]
    assert "[1/1] examples/plot_inline.py" in built.output
    assert built.report["build"]["shard"] == {"role": "shard", "examples": 1}


@pytest.mark.parametrize(
    ("status", "seconds", "expected"),
    [
        ("ok", 0.0, {"examples/a.py": 0.0}),  # ran faster than the record's rounding
        ("over-budget", 2.5, {"examples/a.py": 2.5}),
        ("cached", 3.0, {"examples/a.py": 3.0}),
        ("cached", 0.0, {}),  # reused with no measured time: nothing to expect
        ("failed", 4.0, {}),
    ],
)
def test_expected_times_come_from_runs_that_finished(status, seconds, expected) -> None:
    from docsaccel.gallery.progress import expected_seconds

    example = Example(
        "examples",
        "a.py",
        "/src/examples/a.py",
        "/src/auto/a.py",
        "auto/a",
        True,
        Budget(60.0, "default", "default"),
    )
    previous = {"examples/a.py": {"status": status, "fast": False, "wall_seconds": seconds}}

    assert expected_seconds([example], False, previous) == expected
    assert expected_seconds([example], True, previous) == {}, "a fast build expects its own kind"


def test_an_estimate_that_rounds_to_nothing_says_so(tmp_path) -> None:
    lines: list[str] = []
    examples = [_example("a.py", None), _example("b.py", None)]
    quick = {"tutorials/a.py": 0.01, "tutorials/b.py": 0.01}
    progress = Progress(examples, expected=quick, log=lines.append).start(tmp_path)
    progress.channel.send(event="start", id="tutorials/a.py")
    progress.channel.send(event="end", id="tutorials/a.py", seconds=0.01, status="ok")
    progress.stop()
    assert lines[-1] == "docsaccel: [1/2] tutorials/a.py: 0s, ok; under 0.1s left"


def _ends(progress: Progress, *names: str) -> list[str]:
    """Run the examples ``names`` one after another, each in 1 s; the lines they log."""
    lines: list[str] = []
    progress.log = lines.append
    for name in names:
        progress.handle({"event": "start", "id": f"tutorials/{name}"})
        progress.handle({"event": "end", "id": f"tutorials/{name}", "seconds": 1.0, "status": "ok"})
    return lines


def test_examples_never_timed_are_counted_not_guessed() -> None:
    # Two slow examples timed before, then quick ones: one timed, two never timed.
    names = ["slow1.py", "slow2.py", "quick.py", "new1.py", "new2.py"]
    expected = {"tutorials/slow1.py": 30.0, "tutorials/slow2.py": 30.0, "tutorials/quick.py": 0.2}
    progress = Progress([_example(n, None) for n in names], expected=expected)
    lines = _ends(progress, *names)
    assert [line.partition("; ")[2] for line in lines] == [
        "about 30.2s left, plus 2 examples not timed before",
        "about 0.2s left, plus 2 examples not timed before",
        # Not the slow examples' 30 s: nothing says what the new ones take.
        "2 examples left, not timed before",
        "1 example left, not timed before",
        "",
    ]


def test_the_estimate_is_never_less_than_the_longest_example_left() -> None:
    expected = {"tutorials/a.py": 1.0, "tutorials/b.py": 10.0}
    progress = Progress([_example("a.py", None), _example("b.py", None)], expected, jobs=4)
    # One process runs b.py's 10 s, whatever the other three do.
    assert _ends(progress, "a.py")[0].endswith("; about 10s left")


def test_an_example_run_outside_the_plan_does_not_hide_the_estimate() -> None:
    expected = {"tutorials/a.py": 5.0, "tutorials/b.py": 5.0}
    progress = Progress(
        [_example("a.py", None), _example("b.py", None)], expected, known=[_example("d.py", None)]
    )
    # d.py was planned as unchanged, yet ran: b.py is still left after a.py.
    lines = _ends(progress, "d.py", "a.py")
    assert lines[-1] == "docsaccel: [2/3] tutorials/a.py: 1s, ok; about 5s left"


@pytest.mark.slow
@pytest.mark.parametrize("parallel", [1, 2])
@pytest.mark.parametrize("on_overrun", ["warn", "fail"])
def test_the_example_that_aborts_the_build_has_its_line(tmp_path, on_overrun, parallel) -> None:
    # plot_crash.py raises (warn) or plot_loop.py runs out of its budget (fail), and
    # abort_on_example_error stops the build there, before plot_quick.py: sphinx-gallery
    # never reports that example's end, yet the log gives it its one line, with the
    # status its record has; in a parallel build, from the worker that ran it.
    name = "plot_crash.py" if on_overrun == "warn" else "plot_loop.py"
    conf = (
        'sphinx_gallery_conf["abort_on_example_error"] = True\n'
        'sphinx_gallery_conf["within_subsection_order"] = "FileNameSortKey"\n'
        f'sphinx_gallery_conf["parallel"] = {parallel}\n'
    )
    src = make_project(tmp_path, [name, "plot_quick.py"], conf=conf, budgets='default = "1m"\n')

    built = build_verbose(src, env={"DOCSACCEL_ON_OVERRUN": on_overrun})

    assert built.returncode != 0, built.output
    record = built.record(name)
    status = record["status"]
    assert status == ("failed" if on_overrun == "warn" else "interrupted"), built.output
    assert record["finished_at"] is not None, record
    lines = progress_lines(built.output)
    assert re.search(rf"\] examples/{name}: [\d.]+m?s, {status}\b", lines[name]), built.output
    # The build stops there: its line counts no example left to run.
    assert " left" not in lines[name], built.output
    if parallel == 1:
        assert built.record("plot_quick.py")["status"] == "not-executed", built.output
        assert list(lines) == [name], built.output
        assert "[1/2] " in lines[name], built.output
    else:
        # plot_quick.py ran beside it in the other worker: it finished, or did not.
        assert set(lines) <= {name, "plot_quick.py"}, built.output


def _flag_example(flag: Path, then: str) -> str:
    """An example that runs ``then`` (lines of code) once ``flag`` exists; the flag is
    its own to write, or another example's to wait for."""
    head = '"""\nFlagged\n=======\n"""\n\nimport os, pathlib, time\n\n'
    return f"{head}flag = pathlib.Path({str(flag)!r})\n{then}"


#: Says it runs (its pid, in its flag), then runs until the build ends it.
_RUNS_ON = "flag.write_text(str(os.getpid()))\ntime.sleep(600)\n"


def _end_flagged(*flags: Path) -> None:
    """End the processes that ran the :data:`_RUNS_ON` examples, should they outlive the
    build: a test's end does not wait for them."""
    for flag in flags:
        pid = flag.read_text() if flag.is_file() else ""
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), signal.SIGKILL)


#: Raises once the other example runs (its flag).
_RAISES_THEN = 'while not flag.exists():\n    time.sleep(0.05)\nraise RuntimeError("it crashed")\n'


def _running_example_line(name: str, number: str, total: int, record: dict) -> str:
    """The exact line of an example the build's end stopped while it ran: its record's
    status, then what stopped it, as its record says it; nothing after (nothing left)."""
    said = f"did not finish ({unfinished_why(record['error'])})"
    return rf"docsaccel: \[{number}/{total}\] examples/{name}: [\dms.]+, {re.escape(said)}"


@pytest.mark.slow
def test_the_example_another_worker_runs_when_the_build_aborts_has_its_line(tmp_path) -> None:
    # plot_b_crash.py raises while plot_a_runs.py runs in the other worker: the abort
    # ends that worker too, and sphinx-gallery never reports its end. Each has its one
    # line, with its record's status; neither says an example is left (plot_quick.py
    # never runs: the build stops).
    conf = (
        'sphinx_gallery_conf["abort_on_example_error"] = True\n'
        'sphinx_gallery_conf["parallel"] = 2\n' + _ORDERED
    )
    src = make_project(tmp_path, ["plot_quick.py"], conf=conf)
    flag = tmp_path / "runs.flag"
    (src / "examples" / "plot_a_runs.py").write_text(_flag_example(flag, _RUNS_ON))
    (src / "examples" / "plot_b_crash.py").write_text(_flag_example(flag, _RAISES_THEN))

    try:
        built = build_verbose(src)
    finally:
        _end_flagged(flag)

    assert built.returncode != 0, built.output
    runs, crash = built.record("plot_a_runs.py"), built.record("plot_b_crash.py")
    assert runs["error"] == UNFINISHED_ERROR and crash["status"] == "failed", built.output
    lines = progress_lines(built.output)
    assert sorted(lines) == ["plot_a_runs.py", "plot_b_crash.py"], built.output
    assert re.fullmatch(
        _running_example_line("plot_a_runs.py", "[12]", 3, runs), lines["plot_a_runs.py"]
    ), built.output
    assert re.fullmatch(
        r"docsaccel: \[[12]/3\] examples/plot_b_crash.py: [\dms.]+, failed, peak [\d.]+[KMG]",
        lines["plot_b_crash.py"],
    ), built.output
    assert {line[len("docsaccel: [") :][0] for line in lines.values()} == {"1", "2"}
    # Its record is the one its worker wrote as it started: the views give it no time.
    shown = run_cli("report", "--format", "json", str(built.outdir))
    rows = {row["id"]: row for row in json.loads(shown.stdout)["examples"]}
    assert rows["examples/plot_a_runs.py"]["seconds_from"] is None, rows


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_the_examples_workers_run_when_a_signal_ends_the_build_have_their_lines(
    tmp_path, signum
) -> None:
    # The build's process ends while each worker runs an example: their records say
    # they did not finish, and so does each one's line, once.
    conf = 'sphinx_gallery_conf["parallel"] = 2\n' + _ORDERED
    src = make_project(tmp_path, ["plot_quick.py"], conf=conf)
    flags = [tmp_path / "a.flag", tmp_path / "b.flag"]
    for name, flag in zip(("plot_a_runs.py", "plot_b_runs.py"), flags, strict=True):
        (src / "examples" / name).write_text(_flag_example(flag, _RUNS_ON))
    outdir = src / "_build" / "html"
    process = start_build(src, outdir, quiet=False)
    try:
        for flag in flags:
            wait_for_mark(flag, process)  # both examples run
        process.send_signal(signum)
        output, _ = process.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        _end_flagged(*flags)

    built = Built(process.returncode, output, outdir)
    assert built.returncode != 0, output
    lines = progress_lines(output)
    assert sorted(lines) == ["plot_a_runs.py", "plot_b_runs.py"], output
    for name, line in lines.items():
        record = built.record(name)
        assert record["finished_at"] is None, record
        assert re.fullmatch(_running_example_line(name, "[12]", 3, record), line), output
    assert {line[len("docsaccel: [") :][0] for line in lines.values()} == {"1", "2"}


#: An example that says it started (its pid, in ``started.txt`` beside it), then sleeps.
_WAITS = (
    '"""\nWaits\n=====\n"""\n\nimport os, pathlib, time\n\n'
    'pathlib.Path("started.txt").write_text(str(os.getpid()))\ntime.sleep(600)\n'
)


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_the_example_running_when_a_signal_ends_the_build_has_its_line(tmp_path, signum) -> None:
    # The build's process ends while plot_waits.py runs: sphinx-gallery never reports its
    # end, yet the log gives it its one line, with the status its record has.
    # With a budget: the time it ran until the signal is no share of it.
    src = make_project(tmp_path, ["plot_quick.py"], conf=_ORDERED, budgets='default = "5m"\n')
    (src / "examples" / "plot_waits.py").write_text(_WAITS, encoding="utf-8")
    outdir = src / "_build" / "html"
    process = start_build(src, outdir, quiet=False)
    started = src / "examples" / "started.txt"
    try:
        wait_for_mark(started, process)  # the example runs
        process.send_signal(signum)
        output, _ = process.communicate(timeout=120)
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()

    built = Built(process.returncode, output, outdir)
    record = built.record("plot_waits.py")
    assert record["error"] == unfinished_error(stopped_by(signum)), output
    lines = progress_lines(output)
    assert list(lines) == ["plot_quick.py", "plot_waits.py"], output
    said = f"did not finish ({stopped_by(signum)})"
    assert re.fullmatch(
        rf"docsaccel: \[2/2\] examples/plot_waits.py: [\d.]+m?s, {re.escape(said)}"
        r"(, peak [\d.]+[KMG])?",
        lines["plot_waits.py"],
    ), output
    assert "of its budget of 5m" in lines["plot_quick.py"], output


@pytest.mark.slow
def test_the_example_that_ends_the_build_s_process_has_its_line(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_h_osexit.py"])

    built = build_verbose(src)

    assert built.returncode != 0, built.output
    record = built.record("plot_h_osexit.py")
    lines = progress_lines(built.output)
    assert list(lines) == ["plot_h_osexit.py"], built.output
    said = f"did not finish ({unfinished_why(record['error'])})"
    assert "os._exit(1)" in said, record
    assert re.search(
        rf"\[1/1\] examples/plot_h_osexit.py: [\d.]+m?s, {re.escape(said)}",
        lines["plot_h_osexit.py"],
    ), built.output


@pytest.mark.slow
def test_the_example_stopped_hard_has_its_line(tmp_path) -> None:
    # It swallows its interruption: the hard stop ends it and the build's process with it.
    src = make_project(tmp_path, ["plot_h_swallow.py"], budgets='default = "1s"\n')
    env = {"DOCSACCEL_ON_OVERRUN": "fail", "DOCSACCEL_INTERRUPT_GRACE": "2"}

    try:
        built = build_verbose(src, env=env)
    finally:
        kill_children(src)

    assert built.returncode != 0, built.output
    assert built.record("plot_h_swallow.py")["status"] == "interrupted", built.output
    lines = progress_lines(built.output)
    assert list(lines) == ["plot_h_swallow.py"], built.output
    assert re.search(
        r"\[1/1\] examples/plot_h_swallow.py: [\d.]+m?s, interrupted\b", lines["plot_h_swallow.py"]
    ), built.output
