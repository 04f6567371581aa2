"""Benchmark what recording functions costs call-heavy project code.

A generated library of small functions (``--functions``, calling one another) is driven
by a dozen "examples", each a loop of calls, in a child process per measurement:

- ``plain``: no recorder;
- ``instrument``: the 3.11 recorder (:mod:`docsaccel.cache.instrument`), forced on any
  Python by ``DOCSACCEL_CACHE_RECORDER=instrument``;
- ``monitoring``: the ``sys.monitoring`` recorder (:mod:`docsaccel.cache.monitor`), on
  Python 3.12+ only.

Each recorded example is started and stopped as a build does (the recorder's start and
stop, their state snapshots and re-arming included). The sides alternate, ``--rounds``
times; the child measures its CPU time around the examples only (importing the library
is outside, as it is once per build). Printed: one line per run, then one JSON object
with the median ratio of each recorder's CPU time to plain (targets: 1.05 for the
instrumenter, 1.02 for monitoring).

Usage::

    python tools/bench_recorder.py                      # this Python (3.11: instrument)
    python tools/bench_recorder.py --python python3.12  # both recorders
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent(
    """
    import importlib, json, os, sys, time
    mode, root, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sys.path.insert(0, root)
    recorder = None
    if mode != "plain":
        from docsaccel.cache.recorder import Recorder
        recorder = Recorder.get()
        wants = lambda path: path.startswith(os.path.join(root, ""))
        recorder.start([root], code=wants, label="warm-up")
        recorder.stop()
    lib = importlib.import_module("benchlib")
    started = time.process_time()
    for example in range(12):
        if recorder is not None:
            recorder.start([root], code=wants, label=f"example {example}")
        lib.run(example, calls)
        if recorder is not None:
            recorder.stop()
    print(json.dumps({"cpu": time.process_time() - started}))
    """
)


def library(functions: int) -> str:
    """A module of small functions, each calling the next few, and a driver."""
    parts = [
        '"""Call-heavy code: small functions calling each other."""\n\nWEIGHT = {1: 2, 2: 3}\n'
    ]
    for index in range(functions):
        callee = f"f{index + 1}(x - 1)" if index + 1 < functions else "0"
        parts.append(
            f"def f{index}(x):\n"
            "    if x <= 0:\n"
            "        return 1\n"
            "    weights = (x % 3, x % 5, x % 7)\n"
            "    best = max(weights) - min(weights)\n"
            f"    return {callee} + best * WEIGHT.get(x, 1)\n"
        )
    parts.append(
        "def run(example, calls):\n"
        "    total = 0\n"
        f"    funcs = [globals()[f'f{{i}}'] for i in range({functions})]\n"
        "    for i in range(calls):\n"
        f"        total += funcs[(example * 17 + i) % {functions}](8)\n"
        "    return total\n"
    )
    return "\n\n".join(parts)


def measure(python: str, mode: str, root: Path, calls: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    env.pop("DOCSACCEL_CACHE_RECORDER", None)
    if mode == "instrument":
        env["DOCSACCEL_CACHE_RECORDER"] = "instrument"
    done = subprocess.run(
        [python, "-c", CHILD, mode, str(root), str(calls)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(json.loads(done.stdout.strip().splitlines()[-1])["cpu"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the interpreter to measure")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (5)")
    parser.add_argument("--functions", type=int, default=300, help="library size (300)")
    parser.add_argument("--calls", type=int, default=30000, help="calls per example (30000)")
    args = parser.parse_args()
    if args.rounds < 1 or args.functions < 2 or args.calls < 1:
        parser.error("--rounds, --calls must be 1 or more and --functions 2 or more")
    version = subprocess.run(
        [args.python, "-c", "import sys; print(sys.version_info >= (3, 12))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    modes = ["plain", "instrument"] + (["monitoring"] if version == "True" else [])
    ratios: dict[str, list[float]] = {mode: [] for mode in modes[1:]}
    with tempfile.TemporaryDirectory(prefix="docsaccel-bench-recorder-") as name:
        root = Path(name)
        (root / "benchlib.py").write_text(library(args.functions), "utf-8")
        for index in range(args.rounds):
            order = modes if index % 2 == 0 else list(reversed(modes))
            cpu = {}
            for mode in order:
                cpu[mode] = measure(args.python, mode, root, args.calls)
                print(f"round {index + 1} {mode}: CPU {cpu[mode]:.3f} s")
            for mode in ratios:
                ratios[mode].append(cpu[mode] / cpu["plain"])
    result: dict[str, object] = {
        "python": subprocess.run(
            [args.python, "-c", "import platform; print(platform.python_version())"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip(),
        "functions": args.functions,
        "calls_per_example": args.calls,
        "examples": 12,
        "rounds": args.rounds,
        "ratio_instrument_cpu": round(statistics.median(ratios["instrument"]), 3),
        "target_instrument": 1.05,
    }
    if "monitoring" in ratios:
        result["ratio_monitoring_cpu"] = round(statistics.median(ratios["monitoring"]), 3)
        result["target_monitoring"] = 1.02
    print(json.dumps(result))


if __name__ == "__main__":
    main()
