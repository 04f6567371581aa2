"""Memory in real builds: every example measured, memory budgets and the ceiling enforced.

The builds that allocate run with a ceiling a few hundred MB above the build's own
memory, and every process of them under ``RLIMIT_AS`` (:data:`ADDRESS_SPACE`), so that
however the plugin fails, a test cannot take more than a few GB of this machine.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
from helpers.gallery_build import assert_records_complete, build, make_project
from helpers.processes import assert_no_child_survives

from docsaccel.cli import main
from docsaccel.contract import is_stopped_hard
from docsaccel.memory_sizes import format_size, parse_size
from docsaccel.records import read_records
from docsaccel.report.check import EXIT_BUILD_FAILED
from docsaccel.schema import load_report, peak_bytes

pytestmark = pytest.mark.slow

MIB = 1 << 20
#: The most virtual memory one process of a test build may map.
ADDRESS_SPACE = 4 << 30
ORDERED = 'sphinx_gallery_conf["within_subsection_order"] = "FileNameSortKey"\n'


def check(report_path, capsys) -> tuple[int, str]:
    code = main(["check", str(report_path)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def baseline_ceiling(tmp_path, extra: int = 300 * MIB) -> int:
    """A ceiling ``extra`` above what a build of a trivial example peaks at."""
    src = make_project(tmp_path / "baseline", ["plot_quick.py"])
    built = build(src)
    assert built.returncode == 0, built.output
    return built.record("plot_quick.py")["peak_rss_bytes"] + extra


def test_every_example_is_measured_peak_children_retained_no_gpu(tmp_path) -> None:
    # torch has a CPU build for Python 3.11 only (see the README): elsewhere, no torch example.
    has_torch = importlib.util.find_spec("torch") is not None
    names = [
        "plot_m_alloc.py",
        "plot_m_child.py",
        "plot_m_leak.py",
        "plot_m_no_torch.py",
        *(["plot_m_torch.py"] if has_torch else []),
        "plot_quick.py",
    ]
    src = make_project(tmp_path, names, conf=ORDERED)

    built = build(src, "-W")

    assert built.returncode == 0, built.output
    assert_records_complete(built, names)
    assert built.report["version"] == 2
    alloc = built.record("plot_m_alloc.py")
    # The recorded peak against the known allocation (500 MiB, every page touched), over
    # what the process held just before it: within 5 %.
    before = int((src / "examples" / "alloc_rss_before.txt").read_text())
    grew = alloc["peak_rss_bytes"] - before
    assert abs(grew - 500 * MIB) <= 0.05 * 500 * MIB, (grew, before)
    # Its child: a Python process holding a touched 300 MiB array.
    child = built.record("plot_m_child.py")
    assert 300 * MIB <= child["children_peak_bytes"] <= 400 * MIB
    assert peak_bytes(child) == child["peak_rss_bytes"] + child["children_peak_bytes"]
    # What the leak left behind (200 MiB on a module); the others left next to nothing.
    leak = built.record("plot_m_leak.py")
    assert 190 * MIB <= leak["retained_bytes"] <= 230 * MIB
    assert alloc["retained_bytes"] < 50 * MIB
    for record in built.report["examples"]:
        assert record["peak_rss_bytes"] > 0 and record["retained_bytes"] is not None
        # No CUDA on this machine: no GPU keys, even for the example that used torch.
        assert "gpu_peak_bytes" not in record and "gpu_retained_bytes" not in record
        assert record["memory_budget"]["source"] == "builtin"
    # The plugin never imports torch itself: the example before plot_m_torch saw none.
    assert "torch imported before: False" in built.page("plot_m_no_torch.py")
    if has_torch:
        assert "cuda initialised: False" in built.page("plot_m_torch.py")


@pytest.mark.parametrize("mode", ["warn", "fail"])
def test_an_example_over_its_memory_budget(tmp_path, capsys, mode) -> None:
    budgets = 'memory_default = "400M"\n[examples]\n"plot_quick.py" = { memory = "300M" }\n'
    src = make_project(tmp_path, ["plot_m_alloc.py", "plot_quick.py"], budgets=budgets)

    built = build(src, env={"DOCSACCEL_ON_OVERRUN": mode}, address_space=ADDRESS_SPACE)

    alloc, quick = built.record("plot_m_alloc.py"), built.record("plot_quick.py")
    peak = format_size(peak_bytes(alloc))
    assert alloc["memory_budget"] == {
        "bytes": 400 * MIB,
        "source": "default",
        "detail": "budgets.toml memory_default",
        "reason": None,
    }
    assert quick["status"] == "ok" and quick["memory_budget"]["bytes"] == 300 * MIB
    if mode == "warn":
        assert built.returncode == 0, built.output
        assert alloc["status"] == "over-budget"
        assert alloc["error"] == (
            f"peaked at {peak}, over its memory budget of 400M from budgets.toml memory_default"
        )
        assert f"examples/plot_m_alloc.py peaked at {peak}, over its memory budget" in built.output
    else:
        assert built.returncode == 2, built.output
        assert (alloc["status"], alloc["interrupted_by"]) == ("interrupted", "memory")
        assert alloc["error"].startswith("examples/plot_m_alloc.py was interrupted at ")
        assert "its memory budget is 400M from budgets.toml memory_default" in alloc["error"]
        assert "MemoryExceeded" in built.page("plot_m_alloc.py")
    code, out = check(built.report_path, capsys)
    if mode == "warn":  # the build passed, with an example over its budget
        assert code == 1, out
    else:  # its budget failed the build: no gate passes it
        assert code == EXIT_BUILD_FAILED, out
        assert out.splitlines()[0] == (
            "FAIL: the build failed: 1 example stopped at its budget: examples/plot_m_alloc.py"
        ), out
    state = " (interrupted by its memory budget)" if mode == "fail" else ""
    assert f"examples/plot_m_alloc.py: peak {peak}{state} > memory budget 400M" in out, out
    assert "plot_quick.py" not in out


def test_w_makes_a_memory_budget_warning_an_error(tmp_path, capsys) -> None:
    budgets = '[examples]\n"plot_m_alloc.py" = { memory = "300M" }\n'
    src = make_project(tmp_path, ["plot_m_alloc.py"], budgets=budgets)

    built = build(src, "-W", address_space=ADDRESS_SPACE)

    assert built.returncode == 1, built.output
    alloc = built.record("plot_m_alloc.py")
    assert alloc["status"] == "over-budget"
    assert f"plot_m_alloc.py peaked at {format_size(peak_bytes(alloc))}" in built.output
    code, out = check(built.report_path, capsys)
    # -W made the warning an error: the build failed, and the budget is still judged.
    assert code == EXIT_BUILD_FAILED, out
    assert "Sphinx gave 1 warning, treated as errors (-W)" in out.splitlines()[0], out
    assert "examples/plot_m_alloc.py: peak" in out, out


def test_the_ceiling_stops_unbounded_growth_within_a_second(tmp_path, capsys) -> None:
    ceiling = baseline_ceiling(tmp_path)
    src = make_project(tmp_path, ["plot_m_grow.py", "plot_quick.py"], conf=ORDERED)

    # Warn mode: the ceiling is the machine's, and stops the example in any mode.
    built = build(
        src,
        env={"DOCSACCEL_MEMORY_LIMIT": f"{ceiling}B"},
        address_space=ADDRESS_SPACE,
    )

    assert built.returncode == 2, built.output
    grow = built.record("plot_m_grow.py")
    assert (grow["status"], grow["interrupted_by"]) == ("interrupted", "ceiling")
    assert built.report["build"]["memory_limit"] == ceiling
    assert built.report["build"]["complete"] is True  # the build went on after it
    assert built.record("plot_quick.py")["status"] == "ok"
    # The trace: the time and the example's resident memory after each step, then the
    # time the interruption reached it. It crossed the ceiling after the last step below.
    trace = [
        line.split() for line in (src / "examples" / "grow_trace.txt").read_text().splitlines()
    ]
    assert trace[-1][1] == "stopped"
    below = [float(t) for t, resident in trace[:-1] if int(resident) <= ceiling]
    delay = float(trace[-1][0]) - below[-1]
    assert delay < 1.0, f"stopped {delay:.2f} s after crossing the ceiling"
    assert grow["peak_rss_bytes"] < ceiling + 300 * MIB
    assert f"ceiling of {format_size(ceiling)} (DOCSACCEL_MEMORY_LIMIT)" in grow["error"]
    # Its peak when stopped, counted as the record counts it: never below what its
    # process held when it started, never above the record's peak.
    found = re.search(r"at a peak of (\S+) \(its process held (\S+) when", grow["error"])
    assert found, grow["error"]
    at, started = (parse_size(size, "error") for size in found.groups())
    assert started <= at <= peak_bytes(grow) * 1.01, grow["error"]
    # docsaccel says it once, when it happens (sphinx-gallery's traceback repeats it).
    said = [line for line in built.output.splitlines() if line.startswith("ERROR:")]
    assert sum(grow["error"] in line for line in said) == 1, built.output
    # The ceiling failed the build: no gate passes it, the example named first.
    code, out = check(built.report_path, capsys)
    assert code == EXIT_BUILD_FAILED, out
    assert out.splitlines()[0] == (
        "FAIL: the build failed: 1 example stopped by the build's memory ceiling: "
        "examples/plot_m_grow.py"
    ), out
    history = tmp_path / "history.jsonl"
    assert main(["history", "append", str(built.report_path), "--to", str(history)]) != 0
    assert "the build failed (1 example stopped by" in capsys.readouterr().err
    assert not history.exists()
    peak = format_size(peak_bytes(grow))
    assert f"plot_m_grow.py: peak {peak} (interrupted by the build's memory ceiling)" in out


@pytest.mark.parametrize(
    ("budgets", "env", "named"),
    [
        (None, {"DOCSACCEL_MEMORY_LIMIT": "50M"}, "DOCSACCEL_MEMORY_LIMIT = '50M' is not above"),
        (
            '[examples]\n"plot_quick.py" = { memory = "50M" }\n',
            {"DOCSACCEL_ON_OVERRUN": "warn"},
            "docsaccel_budgets: examples/plot_quick.py: its memory budget of 50M from "
            "budgets.toml [examples] 'plot_quick.py' is not above",
        ),
    ],
)
def test_a_limit_the_build_already_fills_is_refused_before_any_example(
    tmp_path, capsys, budgets, env, named
) -> None:
    # Sphinx and sphinx-gallery alone hold more than 50M: every example would be stopped
    # (or over its budget) by memory that is not its own.
    src = make_project(tmp_path, ["plot_quick.py"], budgets=budgets)

    built = build(src, env=env)

    assert built.returncode == 2, built.output
    said = [line for line in built.output.splitlines() if named in line]
    assert len(said) == 1, built.output  # said once, not again as the build ends
    held = re.search(r"before any example runs \((\S+)\)", said[0])
    assert held and parse_size(held.group(1), "held") > 50 * MIB, said[0]
    assert not (src / "auto_examples" / "plot_quick.rst").exists(), "an example ran"
    assert built.report["build"]["complete"] is False
    assert named in built.report["build"]["stopped_before_examples"]
    # No gate passes it: check says why the build measured nothing (exit 2, as for a
    # report it cannot judge).
    code, out = check(built.report_path, capsys)
    assert code == 2, out
    assert "stopped before its examples ran" in out and named in out, out


def test_the_report_is_on_disk_before_the_process_can_be_killed(tmp_path, capsys) -> None:
    ceiling = baseline_ceiling(tmp_path)
    src = make_project(tmp_path, ["plot_m_oom.py", "plot_quick.py"], conf=ORDERED)

    # The example kills its own process with SIGKILL once interrupted: as the kernel's
    # out-of-memory killer would, it leaves the build no moment to write anything.
    built = build(src, env={"DOCSACCEL_MEMORY_LIMIT": f"{ceiling}B"}, address_space=ADDRESS_SPACE)

    assert built.returncode == -9, built.output
    report = load_report(built.report_path)
    assert report["build"]["complete"] is False
    oom = next(r for r in report["examples"] if r["name"] == "plot_m_oom.py")
    assert (oom["status"], oom["interrupted_by"]) == ("interrupted", "ceiling")
    assert oom["peak_rss_bytes"] > ceiling - 100 * MIB
    assert "plot_m_oom.py was interrupted at" in built.output  # said before the kill
    code, out = check(built.report_path, capsys)
    assert code == 2
    assert "examples/plot_m_oom.py (interrupted by the build's memory ceiling at" in out


def test_an_example_that_ignores_its_interruption_is_stopped_hard(tmp_path) -> None:
    ceiling = baseline_ceiling(tmp_path)
    src = make_project(tmp_path, ["plot_m_swallow.py"])

    env = {"DOCSACCEL_MEMORY_LIMIT": f"{ceiling}B", "DOCSACCEL_INTERRUPT_GRACE": "1"}
    built = build(src, env=env, address_space=ADDRESS_SPACE)

    assert built.returncode == 2, built.output
    records = read_records(built.outdir / "docsaccel" / "records")
    swallow = records["examples/plot_m_swallow.py"]
    assert is_stopped_hard(swallow) and swallow["interrupted_by"] == "ceiling"
    assert swallow["wall_seconds"] < 10
    assert built.report["build"]["complete"] is False


@pytest.mark.parametrize("limit", ["ceiling", "memory"])
def test_an_example_waiting_on_a_child_that_holds_the_memory_is_interrupted(
    tmp_path, capsys, limit
) -> None:
    """The interruption cannot reach an example blocked in ``waitpid``: the child that
    holds the memory is ended, the example interrupted, and the build goes on."""
    names = ["plot_m_child_wait.py", "plot_quick.py"]
    base = {"DOCSACCEL_INTERRUPT_GRACE": "3"}
    env, budgets = _stopping(tmp_path, limit, "plot_m_child_wait.py", "300M", base)
    src = make_project(tmp_path, names, conf=ORDERED, budgets=budgets)

    built = build(src, env=env, address_space=ADDRESS_SPACE)

    assert built.returncode == 2, built.output
    assert built.report["build"]["complete"] is True, built.output
    waited = built.record("plot_m_child_wait.py")
    assert (waited["status"], waited["interrupted_by"]) == ("interrupted", limit), waited
    assert not is_stopped_hard(waited), waited["error"]
    assert "MemoryExceeded" in built.page("plot_m_child_wait.py")
    (pid,) = (src / "examples" / "child_pids.txt").read_text().split()
    assert re.search(
        rf"the processes it started held [0-9.]+[MG] and were ended so that it could be "
        rf"interrupted: pid {pid} \(python",
        waited["error"],
    ), waited["error"]
    assert "ignores or swallows" not in waited["error"]
    assert_no_child_survives(src, expected=1)
    assert built.record("plot_quick.py")["status"] == "ok"
    code, out = check(built.report_path, capsys)
    assert code == EXIT_BUILD_FAILED and "plot_m_child_wait.py: peak" in out, out
    stopped = "by the build's memory ceiling" if limit == "ceiling" else "at its budget"
    assert out.splitlines()[0] == (
        f"FAIL: the build failed: 1 example stopped {stopped}: examples/plot_m_child_wait.py"
    ), out


def _stopping(
    tmp_path: Path, limit: str, name: str, memory: str, env: dict[str, str]
) -> tuple[dict[str, str], str | None]:
    """The variables (added to ``env``) and budget file that stop ``name`` by ``limit``:
    the build's memory ceiling, or its memory budget of ``memory`` in fail mode."""
    if limit == "ceiling":
        return {**env, "DOCSACCEL_MEMORY_LIMIT": f"{baseline_ceiling(tmp_path)}B"}, None
    budgets = f'[examples]\n"{name}" = {{ memory = "{memory}" }}\n'
    return {**env, "DOCSACCEL_ON_OVERRUN": "fail"}, budgets


@pytest.mark.parametrize("limit", ["ceiling", "memory"])
def test_the_example_after_a_stopped_one_is_not_charged_with_its_child(tmp_path, limit) -> None:
    """A child the stopped example killed but left for ``multiprocessing`` to reap (as
    memory_profiler's monitor is, with ``show_memory``) is reaped before the next example
    starts: its high-water mark is never the next example's."""
    names = ["plot_m_mp_kill.py", "plot_m_mp_reap.py"]
    base = {}
    env, budgets = _stopping(tmp_path, limit, "plot_m_mp_kill.py", "400M", base)
    src = make_project(tmp_path, names, conf=ORDERED, budgets=budgets)

    built = build(src, env=env, address_space=ADDRESS_SPACE)

    killed = built.record("plot_m_mp_kill.py")
    assert (killed["status"], killed["interrupted_by"]) == ("interrupted", limit), killed
    reaped = built.record("plot_m_mp_reap.py")
    assert reaped["status"] == "ok", built.output
    # It started no process: no reaped child is its.
    assert not reaped["children_peak_bytes"], reaped
    assert peak_bytes(reaped) < peak_bytes(killed), (reaped, killed)


@pytest.mark.parametrize(("child_mib", "watched"), [(50, False), (50, True), (200, True)])
def test_forked_children_count_what_they_allocate_not_what_they_share(
    tmp_path, child_mib, watched
) -> None:
    ceiling = baseline_ceiling(tmp_path)
    src = make_project(tmp_path, ["plot_m_fork.py"])

    # Three forked children, each mapping the whole build process: their resident sizes
    # add up past the ceiling whatever they allocate. Only their own pages are new.
    env = {"FORK_CHILD_MIB": str(child_mib)}
    if watched:
        env["DOCSACCEL_MEMORY_LIMIT"] = f"{ceiling}B"
    built = build(src, env=env, address_space=ADDRESS_SPACE)

    fork = built.record("plot_m_fork.py")
    if not watched:
        # Unwatched, the children ended unseen: the kernel's record of the largest one,
        # less what it shared with the build's process.
        assert built.returncode == 0, built.output
        assert 50 * MIB <= fork["children_peak_bytes"] < 80 * MIB, fork
    elif child_mib == 50:  # 150 MiB in all: under the ceiling, which is 300 MiB above
        assert built.returncode == 0, built.output
        assert fork["status"] == "ok", fork
        # A page the build's process writes while a child lives becomes the child's own
        # copy, so each child may hold some of its parent's pages beyond what it
        # allocated, more the longer a loaded machine keeps it alive; counting what they
        # share would add the whole build process three times over.
        assert 3 * 50 * MIB <= fork["children_peak_bytes"] < 3 * (50 + 30) * MIB, fork
    else:  # 600 MiB in all: over it
        assert built.returncode == 2, built.output
        assert (fork["status"], fork["interrupted_by"]) == ("interrupted", "ceiling"), fork


PARALLEL = 'sphinx_gallery_conf["parallel"] = 2\n'


def test_parallel_workers_record_memory(tmp_path) -> None:
    names = ["plot_m_alloc.py", "plot_m_child.py", "plot_m_leak.py", "plot_quick.py"]
    src = make_project(tmp_path, names, conf=PARALLEL)

    built = build(src, "-W")

    assert built.returncode == 0, built.output
    assert_records_complete(built, names)
    records = {r["name"]: r for r in built.report["examples"]}
    assert len({r["pid"] for r in records.values()}) == 2, "two workers ran the examples"
    for record in records.values():
        assert record["peak_rss_bytes"] > 0 and record["retained_bytes"] is not None
    assert records["plot_m_alloc.py"]["peak_rss_bytes"] > 500 * MIB
    assert records["plot_m_child.py"]["children_peak_bytes"] >= 300 * MIB
    assert records["plot_m_leak.py"]["retained_bytes"] >= 190 * MIB


def test_parallel_workers_obey_the_build_wide_ceiling(tmp_path) -> None:
    quick = make_project(tmp_path / "quick", ["plot_quick.py", "plot_m_no_torch.py"], conf=PARALLEL)
    baseline = build(quick)
    assert baseline.returncode == 0, baseline.output
    # The build's processes: Sphinx's and two workers, each about a worker's size.
    worker = max(r["peak_rss_bytes"] for r in baseline.report["examples"])
    ceiling = 3 * worker + 300 * MIB
    names = ["plot_m_grow.py", "plot_m_no_torch.py", "plot_quick.py"]
    src = make_project(tmp_path, names, conf=PARALLEL)

    built = build(src, env={"DOCSACCEL_MEMORY_LIMIT": f"{ceiling}B"}, address_space=ADDRESS_SPACE)

    assert built.returncode == 2, built.output
    assert_records_complete(built, names)
    grow = built.record("plot_m_grow.py")
    assert (grow["status"], grow["interrupted_by"]) == ("interrupted", "ceiling"), grow
    # Stopped for what the build held: the Sphinx process and the other worker counted
    # beside it (at least a trivial example's process), not for its own memory alone.
    found = re.search(
        r"interrupted at a peak of (\S+) .*the build's processes held (\S+) ", grow["error"]
    )
    assert found, grow["error"]
    example, whole = (parse_size(size, "error") for size in found.groups())
    # The message rounds sizes (573.2M reads 573M): over the ceiling as it rounds it.
    assert whole >= parse_size(format_size(ceiling), "ceiling"), grow["error"]
    assert whole - example >= worker // 2, grow["error"]
    assert grow["peak_rss_bytes"] < ceiling + 300 * MIB
    assert built.record("plot_quick.py")["status"] == "ok"
    assert built.record("plot_m_no_torch.py")["status"] == "ok"


@pytest.mark.parametrize(
    ("budgets", "env", "expected"),
    [
        ('memory_default = "2"\n', {}, ["budgets.toml: memory_default", "'2' has no unit"]),
        (
            '[examples]\n"plot_quick.py" = { memory = "-1G" }\n',
            {},
            ["budgets.toml: [examples] 'plot_quick.py'.memory", "'-1G' is negative"],
        ),
        (
            '[examples]\n"plot_quick.py" = { memory = "900T" }\n',
            {},
            ["'plot_quick.py'.memory", "'900T' is more than the memory of this machine"],
        ),
        (
            None,
            {"DOCSACCEL_MEMORY_LIMIT": "6500"},
            ["DOCSACCEL_MEMORY_LIMIT", "'6500' has no unit"],
        ),
        (
            None,
            {"DOCSACCEL_MEMORY_LIMIT": "900T"},
            ["DOCSACCEL_MEMORY_LIMIT = '900T' is more than the memory of this machine"],
        ),
    ],
)
def test_bad_memory_budgets_and_ceilings_stop_the_build(tmp_path, budgets, env, expected) -> None:
    src = make_project(tmp_path, ["plot_quick.py"], budgets=budgets)

    built = build(src, env=env)

    assert built.returncode == 2, built.output
    for part in expected:
        assert part in built.output
    assert not (src / "auto_examples" / "plot_quick.rst").exists(), "an example ran"


def test_a_cached_example_keeps_its_measured_memory(tmp_path) -> None:
    src = make_project(tmp_path, ["plot_m_leak.py"])
    first = build(src)
    assert first.returncode == 0, first.output
    again = build(src)
    assert again.returncode == 0, again.output
    ran, cached = first.record("plot_m_leak.py"), again.record("plot_m_leak.py")
    assert cached["status"] == "cached"
    for key in ("peak_rss_bytes", "children_peak_bytes", "retained_bytes"):
        assert cached[key] == ran[key]
    assert json.dumps(cached["memory_budget"]) == json.dumps(ran["memory_budget"])


def _held_before_examples(src, tmp_path) -> int:
    """What the build's processes hold before any example runs, as a ceiling of 1M
    (refused) makes the build say it."""
    refused = build(src, env={"DOCSACCEL_MEMORY_LIMIT": "1M"}, outdir=tmp_path / "probe")
    assert refused.returncode == 2, refused.output
    held = re.search(r"before any example runs \(([^)]+)\)", refused.output)
    assert held is not None, refused.output
    return parse_size(held.group(1), "held")


def test_a_ceiling_with_no_room_above_the_build_is_warned_also_when_all_is_restored(
    tmp_path,
) -> None:
    """A ceiling just above what Sphinx holds before any example was accepted silently,
    and the example running when Sphinx's memory moved was blamed."""
    src = make_project(tmp_path, ["plot_quick.py"])
    cache = {"DOCSACCEL_CACHE": str(tmp_path / "cache")}
    assert build(src, env=cache).returncode == 0  # fills the cache
    ceiling = _held_before_examples(src, tmp_path) + 30 * MIB
    # Every example restored from the cache: the warning is said all the same.
    built = build(src, env={**cache, "DOCSACCEL_MEMORY_LIMIT": f"{ceiling}B"})
    assert built.returncode == 0, built.output
    assert built.record("plot_quick.py")["status"] == "cached"
    warned = [line for line in built.output.splitlines() if "leaves" in line]
    assert len(warned) == 1, built.output
    assert "DOCSACCEL_MEMORY_LIMIT" in warned[0] and "raise the ceiling" in warned[0], warned


def test_an_example_the_ceiling_stopped_has_one_peak_in_every_line(tmp_path, capsys) -> None:
    ceiling = baseline_ceiling(tmp_path)
    src = make_project(tmp_path, ["plot_m_late.py"])

    # It grows by 200 MiB more after the ceiling stopped it, while the interruption lands.
    built = build(
        src,
        env={"DOCSACCEL_MEMORY_LIMIT": f"{ceiling}B"},
        address_space=ADDRESS_SPACE,
        quiet=False,
    )

    late = built.record("plot_m_late.py")
    assert (late["status"], late["interrupted_by"]) == ("interrupted", "ceiling"), late
    peak = format_size(peak_bytes(late))
    assert f"interrupted at a peak of {peak} (" in late["error"], late["error"]
    lines = built.output.splitlines()
    said = [line for line in lines if "interrupted at a peak of" in line]
    assert said and all(f"at a peak of {peak} (" in line for line in said), built.output
    progress = [line for line in lines if "] examples/plot_m_late.py: " in line]
    assert len(progress) == 1 and f"peak {peak}, " in progress[0], built.output
    _, out = check(built.report_path, capsys)
    assert f"plot_m_late.py: peak {peak} (" in out, out
