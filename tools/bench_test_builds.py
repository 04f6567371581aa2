"""Time slow test files with the test builds forked from a build server and as fresh
processes (``FRESH_TEST_BUILDS=1``), alternating, and print wall and CPU time of each.

CPU time (user + system of every process the run started, from
``resource.getrusage(RUSAGE_CHILDREN)``) is the figure that counts on a shared machine;
wall time follows the load of the other users. The last line is JSON.

Example::

    python tools/bench_test_builds.py --runs 2 tests/test_gallery.py tests/test_cache_warnings.py
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The switch is the test helpers' own: one name, defined where the builds read it.
sys.path.insert(0, str(ROOT / "tests"))
from helpers.build_server import FRESH_ENV  # noqa: E402

MODES = ("server", "fresh")


def run_once(files: list[str], mode: str, workers: int) -> dict:
    """One pytest run of ``files`` (slow tests) in ``mode``: its wall and CPU seconds."""
    env = {**os.environ, FRESH_ENV: "1" if mode == "fresh" else "0"}
    command = [sys.executable, "-m", "pytest", "-m", "slow", "-q", "-p", "no:cacheprovider"]
    command += ["-n", str(workers), *files]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    tail = (done.stdout.strip().splitlines() or ["no output"])[-1]
    return {
        "mode": mode,
        "wall": round(wall, 1),
        "cpu": round(cpu, 1),
        "rc": done.returncode,
        "tail": tail,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="test files (their slow tests run)")
    parser.add_argument("--runs", type=int, default=2, help="runs of each mode (default 2)")
    parser.add_argument("--workers", type=int, default=2, help="pytest-xdist workers (default 2)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.workers < 1:
        parser.error(f"--runs {args.runs} and --workers {args.workers} must be at least 1")
    runs = []
    for index in range(args.runs):
        # Alternating, so a change in the machine's load falls on both modes.
        for mode in MODES if index % 2 == 0 else MODES[::-1]:
            run = run_once(args.files, mode, args.workers)
            runs.append(run)
            times = f"wall {run['wall']:7.1f} s  cpu {run['cpu']:7.1f} s"
            print(f"{run['mode']:<6} {times}  {run['tail']}")
    totals = {
        mode: {
            key: round(sum(r[key] for r in runs if r["mode"] == mode) / args.runs, 1)
            for key in ("wall", "cpu")
        }
        for mode in MODES
    }
    ratio = {
        key: round(totals["server"][key] / totals["fresh"][key], 3)
        if totals["fresh"][key]
        else None
        for key in ("wall", "cpu")
    }
    print(f"mean server/fresh: wall {ratio['wall']}, cpu {ratio['cpu']}")
    failed = [r for r in runs if r["rc"] != 0]
    print(json.dumps({"files": args.files, "runs": runs, "mean": totals, "ratio": ratio}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
