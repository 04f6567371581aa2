"""Benchmark the docs build: this project's gallery built in full and with the fast path.

Both builds run the same tutorials from a fresh copy of the project without its build
and gallery outputs (so no example is skipped as unchanged and the working tree is not
touched), as separate
``sphinx-build`` processes, alternating full and fast when ``--rounds`` is more than 1.
Budgets are reported, not enforced (``DOCSACCEL_ON_OVERRUN=warn``), so a slow machine
still gives a number.

Prints one line per build, the render savings the fast build's report shows, and a last
line with one JSON object: ``full_seconds``, ``fast_seconds`` (medians), ``ratio`` (target
>= 5) and the per-example times of both builds.

Usage::

    python tools/bench_docs.py              # one full and one fast build (~3 minutes)
    python tools/bench_docs.py --rounds 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from timed_build import timed_build


def build(fast: bool, workdir: Path) -> tuple[float, dict]:
    """One clean docs build in ``workdir``; its wall seconds and its docsaccel report."""
    built = timed_build(
        workdir / ("fast" if fast else "full"), {"DOCSACCEL_FAST": "1" if fast else "0"}
    )
    return built.seconds, built.report


def example_seconds(report: dict) -> dict[str, float]:
    return {record["id"]: round(record["wall_seconds"], 2) for record in report["examples"]}


def render_savings(report: dict) -> tuple[int, int, float]:
    fresh = skipped = 0
    saved = 0.0
    for record in report["examples"]:
        for stats in (record.get("render") or {}).values():
            fresh += stats["fresh_renders"]
            skipped += stats.get("skipped_renders", stats["reused_frames"])
            saved += stats["saved_seconds"]
    return fresh, skipped, saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1, help="full+fast pairs (default 1)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error(f"--rounds must be 1 or more, got {args.rounds}")
    times: dict[bool, list[float]] = {True: [], False: []}
    reports: dict[bool, dict] = {}
    with tempfile.TemporaryDirectory(prefix="docsaccel-bench-docs-") as tmp:
        for round_index in range(args.rounds):
            # Alternate which side goes first, so drift hits both alike.
            for fast in (False, True) if round_index % 2 == 0 else (True, False):
                seconds, reports[fast] = build(fast, Path(tmp))
                times[fast].append(seconds)
                label = "fast" if fast else "full"
                print(f"round {round_index + 1} {label}: {seconds:.1f} s", flush=True)
    full, fast = statistics.median(times[False]), statistics.median(times[True])
    fresh, skipped, saved = render_savings(reports[True])
    print(f"fast build render gating: {fresh} renders, {skipped} skipped, ~{saved:.1f} s saved")
    result = {
        "full_seconds": round(full, 2),
        "fast_seconds": round(fast, 2),
        "ratio": round(full / fast, 2),
        "target_ratio": 5,
        "rounds": args.rounds,
        "full_examples": example_seconds(reports[False]),
        "fast_examples": example_seconds(reports[True]),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
