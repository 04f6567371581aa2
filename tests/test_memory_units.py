"""Memory without a build: sizes, memory budgets, the ceiling setting, the rules, the
meter in this process, the tripwire, and the views of memory in reports."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import types

import pytest
from helpers.report_factory import record, write_report

from docsaccel.budgets import BudgetError, load_budgets, parse_budgets, read_inline_budget
from docsaccel.cli import main
from docsaccel.contract import (
    InputError,
    is_near_memory_budget,
    is_over_budget,
    is_over_memory_budget,
)
from docsaccel.gallery.interrupt import MemoryExceeded, Tripwire
from docsaccel.gallery.memory import MemoryMeter, hard_line
from docsaccel.gallery.processes import descendants
from docsaccel.memory_sizes import format_size, machine_bytes, parse_size
from docsaccel.report.commands import run_check, run_compare, run_history_append, run_report
from docsaccel.report.inputs import load_input
from docsaccel.schema import SchemaError, validate_record

MIB = 1 << 20
V2 = {"version": 2}


def memory_record(name: str, peak: int, budget: int | None = None, **extra) -> dict:
    """A version 2 record with a peak (bytes) and, if given, a memory budget."""
    memory_budget = None
    if budget is not None:
        memory_budget = {"bytes": budget, "source": "default", "detail": "b.toml memory_default"}
        memory_budget["reason"] = None
    fields = {"peak_rss_bytes": peak, "children_peak_bytes": 0, "retained_bytes": 0}
    fields["memory_budget"] = memory_budget
    fields.update(extra)
    return record(name, 1.0, **V2, **fields)


# --- Sizes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "size"),
    [("500M", 500 * MIB), ("6.5G", int(6.5 * (1 << 30))), ("2gb", 2 << 30), ("1024KiB", MIB)],
)
def test_sizes(text, size) -> None:
    assert parse_size(text, "k") == size
    assert parse_size(format_size(size), "k") == size


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2", "'2' has no unit"),
        (2, "2 has no unit"),
        ("-1G", "'-1G' is negative"),
        ("0M", "'0M' is not more than 0 bytes"),
        ("lots", "'lots' is not a size"),
        ("5P", "'5P' is not a size"),
        (True, "a size is a string"),
        ("2000T", "is more than 1024T"),
    ],
)
def test_bad_sizes_name_where_and_value(value, expected) -> None:
    with pytest.raises(InputError) as raised:
        parse_size(value, "conf/b.toml: memory_default")
    assert str(raised.value).startswith("conf/b.toml: memory_default: ")
    assert expected in str(raised.value)


def test_the_machine_has_some_memory() -> None:
    total = machine_bytes()
    assert total is not None and 256 * MIB < total <= 1 << 50


# --- Memory budgets ---------------------------------------------------------------------

BUDGETS = """
default = "1m"
memory_default = "2G"
fast_memory_default = "1G"
ci_factor = 2

[examples]
"plot_*.py" = "30s"
"plot_big_*.py" = { memory = "6G", fast_memory = "3G", reason = "a large data set" }
"plot_big_free.py" = { memory = "none", reason = "measured by hand" }
"""


def test_memory_budgets_have_the_precedence_of_time_budgets(tmp_path) -> None:
    table = parse_budgets(__import__("tomllib").loads(BUDGETS), "b.toml")
    big = table.resolve("plot_big_a.py", ci=True)
    # The memory-only rule gives the memory; the time comes from the next rule with one.
    assert (big.seconds, big.source) == (60.0, "pattern")  # 30 s, times ci_factor
    assert (big.memory.bytes, big.memory.source) == (6 << 30, "pattern")
    assert big.memory.detail == "b.toml [examples] 'plot_big_*.py'"
    assert table.resolve("plot_big_a.py", fast=True, ci=True).memory.bytes == 3 << 30
    # ci_factor scales time, never memory.
    quick = table.resolve("plot_quick.py", ci=True)
    assert (quick.memory.bytes, quick.memory.detail) == (2 << 30, "b.toml memory_default")
    assert table.resolve("plot_quick.py", fast=True).memory.bytes == 1 << 30
    free = table.resolve("plot_big_free.py")
    assert free.memory.bytes is None and free.memory.reason == "measured by hand"
    assert free.memory.describe() == "unbounded from b.toml [examples] 'plot_big_free.py'"
    # An inline memory budget beats the patterns; its example keeps the pattern's time.
    inline = table.resolve(
        "plot_big_a.py", source_text='# docsaccel_budget = { memory = "1G" }', ci=False
    )
    assert (inline.memory.bytes, inline.memory.source) == (1 << 30, "inline")
    assert (inline.seconds, inline.source) == (30.0, "pattern")


def test_a_recorded_inline_memory_budget_stands_in_check(tmp_path) -> None:
    inline = {"bytes": 100 * MIB, "source": "inline", "detail": "plot_a.py (# docsaccel_budget)"}
    inline["reason"] = None
    report = write_report(
        tmp_path / "r.json",
        [memory_record("plot_a.py", 300 * MIB, memory_budget=inline)],
    )
    budgets = tmp_path / "b.toml"
    budgets.write_text('memory_default = "1G"\n', encoding="utf-8")
    text, code = run_check([str(report)], budgets=str(budgets))
    assert code == 1, text
    assert "plot_a.py: peak 300M > memory budget 100M from plot_a.py (# docsaccel_budget)" in text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('memory_default = "2"\n', ["memory_default", "'2' has no unit"]),
        ("memory_default = 2048\n", ["memory_default", "2048 has no unit"]),
        ('memory_default = "none"\n', ["memory_default", "remove the key"]),
        ('fast_memory_default = "1G"\n', ["needs a memory_default"]),
        ('[examples]\n"a.py" = { memory = "-2G" }\n', ["'a.py'.memory", "'-2G' is negative"]),
        ('[examples]\n"a.py" = { memory = "none" }\n', ["'a.py'", "needs a reason"]),
        ('[examples]\n"a.py" = { fast_memory = "1G" }\n', ["neither a 'budget' nor a 'memory'"]),
        (
            '[examples]\n"a.py" = { budget = "1m", fast_memory = "1G" }\n',
            ["'a.py'.fast_memory", "give 'memory' too"],
        ),
        ('[examples]\n"a.py" = { memory = "64G" }\n', ["'64G' is more than the memory"]),
    ],
)
def test_bad_memory_budgets_name_file_key_and_value(tmp_path, text, expected) -> None:
    path = tmp_path / "budgets.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(BudgetError) as raised:
        load_budgets(path, memory_at_most=32 << 30)
    assert str(raised.value).startswith(str(path))
    for part in expected:
        assert part in str(raised.value)


def test_an_inline_memory_budget_above_the_machine_is_refused() -> None:
    with pytest.raises(BudgetError, match="'64G' is more than the memory of this machine"):
        read_inline_budget('# docsaccel_budget = { memory = "64G" }', "a.py", 32 << 30)
    assert read_inline_budget('# docsaccel_budget = { memory = "1G" }', "a.py").memory == 1 << 30


# --- The rules and the format -----------------------------------------------------------


def test_memory_rules_beside_the_time_rules() -> None:
    # Interrupted by memory: over its memory budget, not over its time budget.
    assert not is_over_budget("interrupted", 1.0, 30.0, "memory")
    assert is_over_budget("interrupted", 1.0, 30.0, None)  # a version 1 record: time
    assert is_over_memory_budget("interrupted", 10, None, "ceiling")
    assert not is_over_memory_budget("interrupted", 10, 100, "time")
    assert is_over_memory_budget("ok", 101, 100, None)
    assert is_near_memory_budget("ok", 90, 100, None) and not is_near_memory_budget(
        "ok", 50, 100, None
    )
    assert not is_near_memory_budget("ok", 90, None, None)


def test_version_1_reports_still_read(tmp_path) -> None:
    report = write_report(
        tmp_path / "v1.json",
        [record("plot_a.py", 3.0, status="interrupted", error="interrupted after 2.0 s")],
    )
    loaded = load_input(report)
    timing = loaded.timings[0]
    assert timing.over_time_budget and not timing.over_memory_budget
    assert timing.memory_bytes == 100 * MIB  # its peak_rss_bytes


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"interrupted_by": "disk"}, "interrupted_by is 'disk'"),
        ({"retained_bytes": -1}, "retained_bytes is -1"),
        ({"memory_budget": {"bytes": 0, "source": "default"}}, "memory_budget.bytes is 0"),
        ({"memory_budget": {"bytes": 1}}, "memory_budget.source"),
        ({"gpu_peak_bytes": 1.5}, "gpu_peak_bytes has the wrong type"),
        ({"version": 3}, "version is 3"),
    ],
)
def test_bad_memory_fields_are_refused(change, expected) -> None:
    with pytest.raises(SchemaError, match=expected.replace("(", r"\(")):
        validate_record({**memory_record("plot_a.py", MIB), **change}, "r.json")


# --- The meter, in this process ---------------------------------------------------------


_METER = """
import gc, json, os, subprocess, sys
import numpy as np
from docsaccel.gallery.memory import MemoryMeter
from docsaccel.gallery.processes import descendants

def child(mib):
    code = f"import numpy; a = numpy.ones({mib} * 1024 * 1024 // 8)"
    subprocess.run([sys.executable, "-c", code], check=True)

gc.collect()
found = {}
# First: the kernel keeps the largest reaped child's peak, which later children must pass.
meter = MemoryMeter.start(descendants())
pid = os.fork()  # a child forked without exec, which ends before any read
if pid == 0:
    own = np.ones(120 * 1024 * 1024 // 8)
    os._exit(0)
os.waitpid(pid, 0)
found["forked"] = meter.finish(descendants())
meter = MemoryMeter.start(descendants())
block = np.ones(200 * 1024 * 1024 // 8)  # touched: resident
kept = np.ones(100 * 1024 * 1024 // 8)
del block
child(1)  # small: the kernel's record of it holds this process's memory at the fork
found["small"] = meter.finish(descendants())
meter = MemoryMeter.start(descendants())
child(600)  # larger than this process: its own peak
found["large"] = meter.finish(descendants())
print(json.dumps({**found, "before": meter.rss_before}))
"""


def test_the_meter_measures_a_peak_a_child_and_what_is_retained() -> None:
    # In a process of its own: this one has reaped the children of earlier tests, whose
    # peaks the kernel keeps (getrusage), and which a fresh process has not.
    done = subprocess.run(
        [sys.executable, "-c", _METER], capture_output=True, text=True, check=True, timeout=120
    )
    found = json.loads(done.stdout)
    small, large = found["small"], found["large"]
    # The first meter started before both arrays: its peak holds both.
    assert small["peak_rss_bytes"] >= found["before"] + 100 * MIB
    assert 95 * MIB <= small["retained_bytes"] <= 120 * MIB
    # A child that ended, smaller than its parent: not taken for the parent's size.
    assert small["children_peak_bytes"] == 0
    # A larger one: its own peak, from the kernel's record of reaped children.
    assert 600 * MIB <= large["children_peak_bytes"] <= 700 * MIB
    # A forked child: the kernel's record of it holds this process's pages, which it
    # shared; what it allocated is what counts.
    assert 120 * MIB <= found["forked"]["children_peak_bytes"] <= 150 * MIB
    assert "gpu_peak_bytes" not in small and "gpu_peak_bytes" not in large


_REAPED_LATER = """
import json, subprocess, sys, time
from docsaccel.gallery.memory import MemoryMeter
from docsaccel.gallery.processes import descendants, unreaped_children

code = "import numpy; a = numpy.ones(300 * 1024 * 1024 // 8)"
earlier = subprocess.Popen([sys.executable, "-c", code])  # an earlier example's child
while earlier.pid not in {pid for pid, _ in unreaped_children()}:
    time.sleep(0.01)
meter = MemoryMeter.start(descendants())
earlier.wait()  # its owner reaps it while the next example runs
print(json.dumps(meter.finish(descendants())))
"""


def test_a_child_that_ended_before_the_example_and_is_reaped_during_it_is_not_its() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _REAPED_LATER],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    # The kernel's mark of reaped children now holds the earlier child's 300 MiB: the
    # example started no process.
    assert json.loads(done.stdout)["children_peak_bytes"] == 0


def test_a_sample_sees_the_example_s_children_now() -> None:
    import os

    meter = MemoryMeter.start(descendants())
    code = "import numpy, time; a = numpy.ones(150 * 1024 * 1024 // 8); time.sleep(30)"
    child = subprocess.Popen([sys.executable, "-c", code])
    try:
        deadline = time.monotonic() + 30
        sample = meter.sample(os.getpid())
        while sample.example - meter.rss_before < 150 * MIB and time.monotonic() < deadline:
            time.sleep(0.05)
            sample = meter.sample(os.getpid())
        assert sample.example - meter.rss_before >= 150 * MIB
        assert sample.build >= sample.example and sample.largest
        assert meter.so_far()["children_peak_bytes"] >= 150 * MIB
    finally:
        child.kill()
        child.wait()


_GROWING_WORKER = """
import itertools, json, os
import docsaccel.gallery.memory as memory
from docsaccel.gallery.processes import descendants

real = memory.rss_bytes
grown = itertools.count(8 << 30, 64 << 20)  # a worker that grows between two reads


def growing(pid="self"):
    return next(grown) if pid in ("self", os.getpid()) else real(pid)


memory.rss_bytes = growing
meter = memory.MemoryMeter.start(descendants())
sample = meter.sample(os.getppid())
print(json.dumps({"largest": sample.largest, "build": sample.build}))
"""


def test_a_growing_parallel_worker_is_the_largest_branch_of_the_build() -> None:
    # A parallel worker (a child of the build's process) that grows between reads must
    # not compare itself with a later read of its own memory and find itself smaller.
    done = subprocess.run(
        [sys.executable, "-c", _GROWING_WORKER],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    found = json.loads(done.stdout)
    assert found["largest"], found
    assert 8 << 30 <= found["build"] < 9 << 30, found


_FORKED = """
import json, os, time
import numpy as np
from docsaccel.gallery.memory import MemoryMeter
from docsaccel.gallery.processes import descendants

held = np.ones(300 * 1024 * 1024 // 8)  # touched: every forked child maps it
meter = MemoryMeter.start(descendants())
pids = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        own = np.ones(20 * 1024 * 1024 // 8)
        time.sleep(30)
        os._exit(0)
    pids.append(pid)
time.sleep(1)
found = {"quick": meter.sample(os.getpid()).example,
         "once": meter.sample(os.getpid(), shared_once=True).example,
         "before": meter.rss_before}
found.update(meter.so_far())
for pid in pids:
    os.kill(pid, 9)
    os.waitpid(pid, 0)
print(json.dumps(found))
"""


def test_forked_children_count_their_own_pages_not_their_parent_s() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _FORKED], capture_output=True, text=True, check=True, timeout=120
    )
    found = json.loads(done.stdout)
    # The quick sample counts the 300 MiB the children share with their parent in each.
    assert found["quick"] >= found["before"] + 3 * 300 * MIB
    # Counted once, the example holds what it held and the children's 3 x 20 MiB.
    assert found["once"] <= found["before"] + 3 * 20 * MIB + 30 * MIB
    assert 3 * 20 * MIB <= found["children_peak_bytes"] <= 3 * 20 * MIB + 30 * MIB


class _FakeCuda:
    """Stands in for ``torch.cuda`` on this machine without CUDA: the documented calls the
    meter makes, on two devices, with the allocator's numbers set by the test."""

    def __init__(self) -> None:
        self.allocated = [10, 20]
        self.peaks = [10, 20]
        self.resets = 0

    def is_initialized(self) -> bool:
        return True

    def device_count(self) -> int:
        return 2

    def reset_peak_memory_stats(self, device: int) -> None:
        self.resets += 1
        self.peaks[device] = self.allocated[device]

    def max_memory_allocated(self, device: int) -> int:
        return self.peaks[device]

    def memory_allocated(self, device: int) -> int:
        return self.allocated[device]


def test_gpu_memory_through_torch_s_documented_calls(monkeypatch) -> None:
    cuda = _FakeCuda()
    monkeypatch.setitem(sys.modules, "torch", types.SimpleNamespace(cuda=cuda))
    meter = MemoryMeter.start(descendants())
    assert cuda.resets == 2 and meter.gpu_before == 30
    cuda.peaks = [500, 900]  # the example's peak on each device
    cuda.allocated = [110, 20]  # and what stays allocated after it
    fields = meter.finish(descendants())
    assert fields["gpu_peak_bytes"] == 1400
    assert fields["gpu_retained_bytes"] == 100


def test_without_cuda_in_use_torch_is_left_alone(monkeypatch) -> None:
    torch = pytest.importorskip("torch")
    assert not torch.cuda.is_initialized()
    fields = MemoryMeter.start(descendants()).finish(descendants())
    assert "gpu_peak_bytes" not in fields and "gpu_retained_bytes" not in fields
    assert not torch.cuda.is_initialized()  # measuring did not initialise CUDA


def test_the_hard_line_is_halfway_to_the_machine() -> None:
    assert hard_line(6 << 30, 8 << 30) == 7 << 30
    assert hard_line(6 << 30, None) is None  # the grace alone
    assert hard_line(6 << 30, 6 << 30) is None


# --- The tripwire -----------------------------------------------------------------------


def test_a_tripwire_interrupts_once_its_condition_holds() -> None:
    steps = []
    messages = []
    wire = Tripwire(
        lambda: "memory" if len(steps) >= 5 else None,
        lambda why: messages.append(why) or f"over its {why} budget",
        every=0.01,
    ).start()
    try:
        with pytest.raises(MemoryExceeded, match="over its memory budget"):
            for _ in range(10_000):
                steps.append(1)
                time.sleep(0.01)
    finally:
        wire.cancel()
    assert messages == ["memory"] and wire.why == "memory" and wire.tier == "watchdog"
    assert len(steps) < 200


def test_a_cancelled_tripwire_never_trips() -> None:
    wire = Tripwire(lambda: "memory", lambda why: "late", every=0.2).start()
    wire.cancel()
    time.sleep(0.4)
    assert not wire.fired


def test_a_tripwire_decides_at_a_check_and_none_after_the_last() -> None:
    # The code whose thread it would interrupt never runs: only the checks can reach it.
    at_check = []
    wire = Tripwire(
        lambda: None,
        lambda why: f"over its {why} budget",
        code_file="/nowhere/plot_never.py",
        every=0.01,
        at_check=lambda: "memory" if at_check else None,
    ).start()
    assert wire.decide_now(last=False) is None
    at_check.append(True)
    assert wire.decide_now(last=False) == "over its memory budget"
    assert wire.why == "memory"
    quiet = Tripwire(lambda: "ceiling", lambda why: "late", every=0.2, at_check=lambda: None)
    quiet.start()
    assert quiet.decide_now(last=True) is None
    time.sleep(0.4)  # its watch would have tripped by now: it ended at the last check
    assert not quiet.fired and quiet.decide_now(last=True) is None


@pytest.mark.parametrize("hard", [True, False])
def test_the_tripwire_s_hard_stop(hard) -> None:
    stopped: list[float] = []
    # Tripped only once start() returned: without a code file to wait for, the watch
    # would deliver into start() itself on a slow machine.
    armed: list[bool] = []
    wire = Tripwire(
        lambda: "ceiling" if armed else None,
        lambda why: "over",
        every=0.01,
        grace=30.0 if hard else 0.5,
        on_hard_stop=stopped.append,
        hard=lambda: hard,
    ).start()
    armed.append(True)
    caught = 0
    try:
        end = time.perf_counter() + 20
        while not stopped and time.perf_counter() < end:
            try:
                time.sleep(0.01)
            except MemoryExceeded:
                caught += 1
    finally:
        wire.cancel()
    assert stopped and wire.tier == "hard stop"
    # The hard line stops at once (at the first check after the trip); else the grace.
    assert stopped[0] < 5 if hard else stopped[0] >= 0.5 and caught >= 1


# --- Reports ----------------------------------------------------------------------------


@pytest.fixture
def memory_reports(tmp_path):
    head = write_report(
        tmp_path / "head.json",
        [
            memory_record("plot_big.py", 700 * MIB, budget=500 * MIB, status="over-budget"),
            memory_record("plot_near.py", 450 * MIB, budget=500 * MIB),
            memory_record("plot_leak.py", 200 * MIB, budget=500 * MIB, retained_bytes=150 * MIB),
            memory_record(
                "plot_grow.py",
                900 * MIB,
                status="interrupted",
                interrupted_by="ceiling",
                error="tutorials/plot_grow.py was interrupted at 880M: ...",
            ),
        ],
    )
    base = write_report(
        tmp_path / "base.json",
        [
            memory_record("plot_big.py", 300 * MIB),
            memory_record("plot_near.py", 440 * MIB),
            memory_record("plot_leak.py", 190 * MIB),
        ],
    )
    return head, base


def test_check_names_examples_over_their_memory_budget_with_their_peak(memory_reports) -> None:
    head, _ = memory_reports
    text, code = run_check([str(head)])
    assert code == 1
    assert "FAIL: 2 of 4 examples over budget:" in text
    assert (
        "tutorials/plot_big.py: peak 700M > memory budget 500M from b.toml memory_default" in text
    )
    assert "tutorials/plot_grow.py: peak 900M (interrupted by the build's memory ceiling)" in text
    # Interrupted by memory, not by time: no time line for it.
    assert "plot_grow.py: 1s" not in text and "plot_near" not in text


def test_github_annotations_of_memory(memory_reports, tmp_path, monkeypatch) -> None:
    head, base = memory_reports
    for timing in load_input(str(head)).timings:  # the source folder holds the examples
        (tmp_path / "docs" / timing.id).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "docs" / timing.id).touch()
    monkeypatch.chdir(tmp_path)
    text, code = run_check([str(head)], fmt="github", source_dir="docs")
    assert code == 1
    lines = text.splitlines()
    assert any(
        line.startswith("::error file=docs/tutorials/plot_big.py,title=Over memory budget::")
        for line in lines
    )
    near = next(line for line in lines if "plot_near.py" in line)
    assert near.startswith("::warning") and "90%25 of its memory budget of 500M" in near
    text, code = run_compare(str(base), str(head), fmt="github", fail_on_regression=True)
    assert code == 1
    assert "title=Docs build memory regression::tutorials/plot_big.py needs more memory" in text
    assert "300M -> 700M (+400M, +133%25)" in text  # % escaped for the runner


def test_compare_flags_a_memory_regression_like_a_time_regression(memory_reports, capsys) -> None:
    head, base = memory_reports
    assert main(["compare", str(base), str(head)]) == 0
    text = capsys.readouterr().out
    assert "Peak memory: 1 regression (larger by > 20% and > 100M)" in text
    assert "tutorials/plot_big.py: 1s -> 1s (+0s, +0%); memory 300M -> 700M" in text
    assert "MEMORY REGRESSED" in text and text.count("REGRESSED") == 1  # plot_leak: +10M
    assert main(["compare", str(base), str(head), "--fail-on-regression"]) == 1
    capsys.readouterr()
    args = ["compare", str(base), str(head), "--fail-on-regression", "--absolute-memory", "1G"]
    assert main(args) == 0
    capsys.readouterr()
    assert main(["compare", str(base), str(head), "--absolute-memory", "lots"]) == 2
    assert "--absolute-memory: 'lots' is not a size" in capsys.readouterr().err


def test_views_show_peak_budget_and_retained_memory(memory_reports, tmp_path) -> None:
    head, base = memory_reports
    md, code = run_report(str(head), baseline=str(base))
    assert code == 0
    assert "- **Memory:** largest peak 900M \\(tutorials/plot\\_grow.py\\); retained 150M" in md
    over = md.split("### Over budget")[1].split("###")[0]
    assert "| 700M / 500M (140%), +400M | 0B |" in over and "plot\\_grow" in over
    assert "plot\\_near.py" in md.split("### Near budget (above 80%)")[1].split("###")[0]
    top = md.split("### Top 4 by peak memory")[1].split("###")[0]
    assert top.index("plot\\_grow") < top.index("plot\\_big") < top.index("plot\\_leak")
    assert "| 200M / 500M (40%), +10M | 150M |" in top
    data = json.loads(run_report(str(head), fmt="json")[0])
    assert data["over_memory_budget"] == ["tutorials/plot_big.py", "tutorials/plot_grow.py"]
    assert data["retained_bytes"] == 150 * MIB
    page, code = run_report(str(head), fmt="html")
    assert code == 0
    assert f'data-sort="{700 * MIB}">700M / 500M (140%)</td>' in page
    assert "<dt>retained memory</dt><dd>150M</dd>" in page


def test_history_keeps_peaks_and_trends_show_them(tmp_path) -> None:
    history = tmp_path / "h.jsonl"
    for step in range(6):
        report = write_report(
            tmp_path / "r.json", [memory_record("plot_a.py", (200 + 40 * step) * MIB)]
        )
        assert run_history_append(str(report), history)[1] == 0
    line = json.loads(history.read_text().splitlines()[-1])
    assert line["examples"]["tutorials/plot_a.py"]["peak_bytes"] == 400 * MIB
    md, code = run_report(str(report), history=str(history))
    assert code == 0
    row = next(line for line in md.splitlines() if line.startswith("| tutorials/plot\\_a"))
    assert row.rstrip().endswith("| \\+0% over 6 builds; memory \\+100% over 6 builds |")
    page, _ = run_report(str(report), history=str(history), fmt="html")
    assert "<dt>memory trend</dt>" in page and "+100% over 6 builds</dd>" in page
    assert "plot_a.py memory" in page


def test_sphinx_gallery_s_memory_column_is_checked_against_memory_budgets(tmp_path) -> None:
    from pathlib import Path

    grid = Path(__file__).parent / "fixtures" / "sg_times" / "grid.rst"
    budgets = tmp_path / "b.toml"
    budgets.write_text('default = "1h"\nmemory_default = "500M"\n', encoding="utf-8")
    text, code = run_check([str(grid)], budgets=str(budgets))
    assert code == 1
    assert (
        f"plot_train_agent.py: peak {format_size(round(950.4 * MIB))} > memory budget 500M" in text
    )
    assert "plot_env_basics" not in text


def test_what_a_forked_child_carries_is_the_least_the_process_held_at_a_fork() -> None:
    # A process that forked while big, then shrank and forked again at once (a pool after
    # a large step): its children carry the smaller figure, not the first fork's.
    script = (
        "import os\n"
        "from docsaccel.gallery.memory import MemoryMeter\n"
        "def fork():\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        os._exit(0)\n"
        "    os.waitpid(pid, 0)\n"
        "meter = MemoryMeter.start(set())\n"
        "big = bytearray(b'x') * (300 << 20)\n"
        "fork()\n"
        "first = meter.held_at_fork\n"
        "del big\n"
        "fork()\n"
        "print(first >> 20, meter.held_at_fork >> 20)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    first, least = map(int, done.stdout.split())
    assert first >= 300 and least < first - 250, done.stdout


def _ceiling_message(own: int, rest: int, limit_given: str | None = None) -> str:
    from docsaccel.budgets import Budget
    from docsaccel.examples import Example
    from docsaccel.gallery.hook import BY_CEILING, memory_interruption_message
    from docsaccel.gallery.memory import Sample

    example = Example(
        "howto",
        "plot_write.py",
        "src/howto/plot_write.py",
        "src/auto_howto/plot_write.py",
        "auto_howto/plot_write",
        True,
        Budget(30.0, "default", "default"),
    )
    started = 90 << 20
    sample = Sample(example=started + own, build=rest + own, largest=True)
    ceiling = rest + own - (1 << 20)
    return memory_interruption_message(
        example, BY_CEILING, sample, ceiling, started, started + own, limit_given=limit_given
    )


def test_an_example_stopped_by_a_ceiling_that_leaves_no_room_is_not_blamed() -> None:
    """A ceiling of 100M over a build holding ~100M before any example stopped an example
    using 1M of its own, telling it to use less memory: the ceiling is the cause."""
    said = _ceiling_message(own=1 << 20, rest=99 << 20)
    assert "The ceiling is the cause, not this example: it used 1M of its own" in said, said
    assert "Make it use less memory" not in said, said
    # An example using much of its own is still the one told to use less.
    said = _ceiling_message(own=500 << 20, rest=99 << 20)
    assert "Make it use less memory" in said and "ceiling is the cause" not in said, said


@pytest.mark.parametrize("own", [1 << 20, 500 << 20], ids=["ceiling-blamed", "example-blamed"])
def test_a_ceiling_error_names_the_setting_where_the_build_was_given_it(own, monkeypatch) -> None:
    """The error is made in the process running the example, which has the build's
    environment but not its ``-D`` values: the build's process says where the ceiling came
    from, and every mention of the setting in the error names that, never conf.py's key
    for a ``-D`` value."""
    monkeypatch.delenv("DOCSACCEL_MEMORY_LIMIT", raising=False)
    said = _ceiling_message(own=own, rest=99 << 20, limit_given="-D docsaccel_memory_limit")
    assert "(-D docsaccel_memory_limit)" in said, said
    assert "(docsaccel_memory_limit)" not in said, said
    said = _ceiling_message(own=own, rest=99 << 20)
    assert "(docsaccel_memory_limit)" in said, said
