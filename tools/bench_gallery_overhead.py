"""Benchmark: what docsaccel.gallery adds to a docs build.

Builds one gallery of 40 trivial examples with and without ``docsaccel.gallery``, in
alternation, each build from scratch in a fresh folder with ``python -m sphinx``. Each
round pairs one build of each side, back to back, and gives one ratio with / without; the
median of those ratios is ``overhead_ratio`` (target: <= 1.02). Pairing makes the figure
robust to the slow drift of a shared machine, which moves both builds of a round alike;
``ratio_quartiles`` shows how far single rounds scatter. The same is computed on the
builds' CPU seconds (``cpu_overhead_ratio``), which waiting on other processes does not
inflate. Prints each build, then a JSON object as the last line.

The plugin runs with its defaults, which measure every example's memory (peak, child
processes, retained). ``--memory`` also gives every example a memory budget and the build
a memory ceiling, in fail mode, so a watch thread samples each example's memory while it
runs (:mod:`docsaccel.gallery.memory`): the most memory accounting costs.
``--report-page`` turns on the opt-in report page and its chart
(``docsaccel_report_page``, ``docsaccel_report_chart``), to measure what they add.
``--instructions`` also builds each side once under valgrind's callgrind and gives
``instruction_ratio``: the instructions of the Sphinx process, which the machine's load
does not move (user space only, without the chart process). Under valgrind the build
runs tens of times slower, so the memory watch, which samples by the clock, samples
tens of times more often than in a real build: with ``--memory`` the count overstates.

Usage::

    python tools/bench_gallery_overhead.py [--rounds 15] [--examples 40] [--memory]
                                           [--report-page] [--instructions]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timed_build import compile_docsaccel

CONF = """
extensions = {extensions!r}
exclude_patterns = ["_build", "examples"]
sphinx_gallery_conf = {{
    "examples_dirs": ["examples"],
    "gallery_dirs": ["auto_examples"],
    "download_all_examples": False,
}}
docsaccel_budgets = "budgets.toml"
{extra}"""
REPORT_PAGE = 'docsaccel_report_page = "budget_report"\ndocsaccel_report_chart = True\n'
# Far above what a trivial example needs: the watch samples, and never interrupts.
MEMORY = 'docsaccel_memory_limit = "{ceiling}"\ndocsaccel_on_overrun = "fail"\n'
MEMORY_BUDGETS = 'memory_default = "2G"\n'
EXAMPLE = '''"""
Trivial example {index}
=======================

Prints one line.
"""

print("example {index}")
'''
BUDGETS = 'default = "1m"\n'
WITHOUT = ["sphinx_gallery.gen_gallery"]
WITH = ["sphinx_gallery.gen_gallery", "docsaccel.gallery"]
SIDES = (("without", WITHOUT), ("with", WITH))


def make_project(
    root: Path, extensions: list[str], examples: int, extra: str = "", budgets: str = ""
) -> Path:
    src = root / "src"
    (src / "examples").mkdir(parents=True)
    conf = CONF.format(extensions=extensions, extra=extra)
    (src / "conf.py").write_text(conf, encoding="utf-8")
    (src / "budgets.toml").write_text(BUDGETS + budgets, encoding="utf-8")
    (src / "index.rst").write_text(
        "Bench\n=====\n\n.. toctree::\n\n   auto_examples/index\n", encoding="utf-8"
    )
    (src / "examples" / "README.rst").write_text("Examples\n========\n", encoding="utf-8")
    for index in range(examples):
        path = src / "examples" / f"plot_example_{index:02d}.py"
        path.write_text(EXAMPLE.format(index=index), encoding="utf-8")
    return src


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run_build(
    extensions: list[str],
    examples: int,
    extra: str,
    wrapper: list[str],
    env: dict[str, str],
    budgets: str = "",
) -> tuple[float, float]:
    """One clean build of a fresh project, run under ``wrapper``: its wall and CPU seconds
    (the build alone, not making the project)."""
    with tempfile.TemporaryDirectory(prefix="docsaccel-bench-") as tmp:
        plugin = extensions == WITH
        src = make_project(
            Path(tmp), extensions, examples, extra if plugin else "", budgets if plugin else ""
        )
        command = [sys.executable, "-m", "sphinx", "-b", "html", "-q", str(src), str(src / "_b")]
        started, cpu_started = time.perf_counter(), _children_cpu()
        subprocess.run([*wrapper, *command], env=env, check=True, capture_output=True)
        seconds, cpu_seconds = time.perf_counter() - started, _children_cpu() - cpu_started
        if plugin:
            report = json.loads((src / "_b" / "docsaccel" / "report.json").read_text())
            assert len(report["examples"]) == examples, "the plugin missed examples"
            assert all(r["status"] == "ok" for r in report["examples"]), "an example overran"
            assert all(r["peak_rss_bytes"] for r in report["examples"]), "memory not measured"
    return seconds, cpu_seconds


def _plugin_free_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DOCSACCEL_")}
    env.update(extra)
    return env


def timed_build(
    extensions: list[str], examples: int, extra: str = "", budgets: str = ""
) -> tuple[float, float]:
    """Wall and CPU seconds of one clean build."""
    return _run_build(extensions, examples, extra, [], _plugin_free_env(), budgets)


def counted_build(extensions: list[str], examples: int, extra: str = "", budgets: str = "") -> int:
    """Instructions the Sphinx process executes in one clean build, counted by callgrind.

    The count does not depend on what else the machine runs, so one build per side
    measures what a noisy machine needs many rounds of wall time for. It leaves out
    system time and child processes (the report chart).
    """
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("--instructions needs valgrind (apt install valgrind)")
    with tempfile.TemporaryDirectory(prefix="docsaccel-callgrind-") as tmp:
        out = Path(tmp) / "callgrind.out"
        wrapper = [valgrind, "--tool=callgrind", f"--callgrind-out-file={out}"]
        # A fixed hash seed: string hashing otherwise moves the count by about 0.1 %.
        env = _plugin_free_env(PYTHONHASHSEED="0")
        _run_build(extensions, examples, extra, wrapper, env, budgets)
        for line in out.read_text().splitlines():
            if line.startswith("totals:"):
                return int(line.split()[1])
    raise RuntimeError("callgrind wrote no totals line")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="builds per side (default 15)")
    parser.add_argument("--examples", type=int, default=40, help="examples (default 40)")
    parser.add_argument(
        "--memory",
        action="store_true",
        help="memory budgets and a memory ceiling: every example's memory is sampled",
    )
    parser.add_argument(
        "--report-page", action="store_true", help="turn on the report page and its chart"
    )
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="also count the instructions of one build per side with valgrind's callgrind",
    )
    args = parser.parse_args()
    extra = REPORT_PAGE if args.report_page else ""
    budgets = ""
    if args.memory:
        from docsaccel.memory_sizes import format_size, machine_bytes

        extra += MEMORY.format(ceiling=format_size((machine_bytes() or 8 << 30) * 0.9))
        budgets = MEMORY_BUDGETS
    if args.rounds < 1 or args.examples < 1:
        parser.error("--rounds and --examples must be at least 1")
    compile_docsaccel()
    for extensions in (WITHOUT, WITH):
        timed_build(extensions, args.examples, extra, budgets)  # warm the file cache; not counted
    times: dict[str, list[float]] = {"without": [], "with": []}
    cpu: dict[str, list[float]] = {"without": [], "with": []}
    for round_index in range(args.rounds):
        # Alternate which side goes first, so neither always runs on a warmer machine.
        for side, extensions in SIDES if round_index % 2 == 0 else SIDES[::-1]:
            seconds, cpu_seconds = timed_build(extensions, args.examples, extra, budgets)
            times[side].append(seconds)
            cpu[side].append(cpu_seconds)
            print(
                f"round {round_index + 1}: {side:<7} docsaccel.gallery  {seconds:.3f} s "
                f"(cpu {cpu_seconds:.3f} s)"
            )

    def ratios(values: dict[str, list[float]]) -> list[float]:
        return [w / wo for w, wo in zip(values["with"], values["without"], strict=True)]

    wall_ratios = ratios(times)
    quartiles = statistics.quantiles(wall_ratios, n=4) if len(wall_ratios) > 1 else wall_ratios
    result = {
        "benchmark": "gallery_overhead",
        "examples": args.examples,
        "rounds": args.rounds,
        "report_page": args.report_page,
        "memory": args.memory,
        "without_seconds": round(statistics.median(times["without"]), 3),
        "with_seconds": round(statistics.median(times["with"]), 3),
        "overhead_ratio": round(statistics.median(wall_ratios), 4),
        "ratio_quartiles": [round(quartiles[0], 4), round(quartiles[-1], 4)],
        "cpu_overhead_ratio": round(statistics.median(ratios(cpu)), 4),
        "target_ratio": 1.02,
    }
    if args.instructions:
        counts = {side: counted_build(ext, args.examples, extra, budgets) for side, ext in SIDES}
        result["instructions"] = counts
        result["instruction_ratio"] = round(counts["with"] / counts["without"], 4)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
