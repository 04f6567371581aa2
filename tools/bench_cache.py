"""Benchmark the example cache on this project's docs.

Every build runs from a fresh copy of the project, as a CI job starts from a clean
checkout, with budgets reported, not enforced (``tools/timed_build.py``). Measured:

- ``cold_seconds`` / ``warm_seconds``: a build that fills an empty cache, then a build of
  another fresh copy with nothing changed; ``warm_ratio`` (target >= 8) and
  ``examples_executed_warm`` (target 0). These builds are full-quality builds (what
  ``make docs`` builds; ``--path fast`` measures the CI fast path instead, whose warm
  build is mostly Sphinx's own fixed cost);
- ``record_overhead`` (target <= 1.03) and ``record_overhead_function_docs`` (target <= 1.10):
  cold fast-path builds with the cache on (each with an empty cache) against builds with
  it off, alternating, as the median of the paired ratios of wall time, with the ratios
  of CPU time (the build and its child processes) beside them, which the load of other
  processes on a shared machine moves less. Fast-path builds, because recording costs
  about the same per example whatever the example does: its share is larger there;
- ``record_overhead_function`` (target <= 1.05), with ``_cpu`` beside it: the same
  measure on a generated call-heavy gallery (``tools/heavy_gallery.py``: a library of
  a few hundred small functions called from a dozen examples), cache on at ``function``
  granularity against off; this project's own tutorials call little project code, so
  on them the figure is ``record_overhead_function_docs``;
- ``audit_overhead`` (target <= 1.10): an audit build (``DOCSACCEL_CACHE_VERIFY=1``
  over a warm cache: every tutorial runs and its outputs are compared with its entry,
  a second run where they differ) against a cold build (an empty cache: every tutorial
  runs and is stored), fast-path builds alternating, as the median of the paired ratios
  of wall time, the CPU ratio beside it; ``audited`` counts the verdicts of the last
  audit build. A tutorial that prints a measured time differs between two runs, so it
  runs twice and is found ``nondeterministic``: ``audit_overhead_without_second_runs``
  leaves those second runs out (what auditing costs a reproducible gallery);
- ``rerun_fraction_module`` / ``rerun_fraction_function``: this repository's recent
  history replayed (the last ``--commits`` commits that touched ``src/``): for each
  commit, the share of tutorials each granularity would run again, from the dependencies
  the cold builds recorded, averaged over the commits (1.0 without a cache). The
  dependencies are today's, so this is an estimate for older commits;
- ``--part replay``: a real library's history (``tools/replay_gallery.py``: networkx's
  releases from PyPI sdists, its own gallery, the library under the project's roots).
  The first release fills one cache per granularity; each later release is built from
  fresh copies without the cache, then with each granularity's cache that the earlier
  releases filled; every build's gallery is compared with
  the build without the cache, file by file, measured times masked. Printed:
  ``rerun_fraction_module`` / ``rerun_fraction_function`` (mean share of the examples
  that pass re-run per release after the first), ``stale_pages`` (must be 0) and, with
  ``--old-rule REV``, ``rerun_fraction_old_rule``: the same replay with docsaccel's
  ``src/`` at that git revision, at ``function`` granularity. A page that also differs
  between two builds without the cache (unseeded randomness) is counted in
  ``varying_pages``, not as stale.

Prints one line per build and a last line with one JSON object.

Usage::

    python tools/bench_cache.py                 # 2 rounds, 20 commits (~20 minutes)
    python tools/bench_cache.py --rounds 3 --commits 30
    python tools/bench_cache.py --part heavy    # only the call-heavy gallery
    python tools/bench_cache.py --part audit    # only audit_overhead
    python tools/bench_cache.py --part replay --old-rule 43f26ef   # networkx (~90 minutes)
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import heavy_gallery
import replay_gallery
from timed_build import ROOT, compile_docsaccel, timed_build

from docsaccel.cache.fingerprint import code_digests
from docsaccel.cache.store import CacheStore
from docsaccel.formats import write_json


class Bench:
    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.count = 0
        self.last_cpu = 0.0

    def build(
        self,
        cache: Path | None,
        granularity: str = "module",
        fast: bool = True,
        verify: bool = False,
    ) -> tuple[float, dict]:
        """One docs build in a fresh copy; its wall seconds and its report."""
        self.count += 1
        copy = self.workdir / f"build{self.count}"
        env = {
            # The copy's own package: its files are the project's, as in a CI checkout.
            "PYTHONPATH": str(copy / "src"),
            "DOCSACCEL_FAST": "1" if fast else "0",
            "DOCSACCEL_CACHE": str(cache) if cache else "0",
            "DOCSACCEL_CACHE_VERIFY": "1" if verify else "0",
        }
        conf = f"docsaccel_cache_granularity = {granularity!r}" if granularity != "module" else ""
        built = timed_build(copy, env, conf)
        self.last_cpu = built.cpu_seconds
        return built.seconds, built.report


def executed(report: dict) -> int:
    return sum(1 for r in report["examples"] if r["status"] != "cached" and r["pid"] is not None)


def alternate(
    rounds: int, label: str, build: Any, sides: tuple[str, str] = ("off", "on")
) -> tuple[float, float]:
    """Medians of the wall and CPU ratios (``sides[1]``: by default the cache on, empty)
    / (``sides[0]``: the cache off) of ``rounds`` pairs of builds, alternating which side
    goes first; ``build(side, index)`` returns one build's wall and CPU seconds."""
    base, measured = sides
    ratios, cpu_ratios = [], []
    for index in range(rounds):
        seconds, cpu = {}, {}
        for side in sides if index % 2 == 0 else sides[::-1]:
            seconds[side], cpu[side] = build(side, index)
            print(f"{label} round {index + 1} {side}: {seconds[side]:.1f} s, CPU {cpu[side]:.1f} s")
        ratios.append(seconds[measured] / seconds[base])
        cpu_ratios.append(cpu[measured] / cpu[base])
    return statistics.median(ratios), statistics.median(cpu_ratios)


def audit_overhead(bench: Bench, rounds: int) -> dict[str, object]:
    """:func:`alternate` of an audit of a warm cache against a cold build; the wall ratio
    without the second runs of the examples that differed; the verdicts of the last
    audit."""
    warm = bench.workdir / "cache-audit"
    bench.build(warm)
    walls: dict[tuple[str, int], float] = {}
    second: dict[int, float] = {}
    verdicts: dict[str, int] = {}

    def build(side: str, index: int) -> tuple[float, float]:
        nonlocal verdicts
        if side == "cold":
            seconds, _ = bench.build(bench.workdir / f"cache-cold-{index}")
        else:
            seconds, report = bench.build(warm, verify=True)
            audits = [(r.get("cache") or {}).get("audit", {}) for r in report["examples"]]
            statuses = [a.get("status") for a in audits if a]
            verdicts = {s: statuses.count(s) for s in sorted(set(statuses))}
            second[index] = sum(a.get("second_run_seconds", 0.0) for a in audits)
        walls[side, index] = seconds
        return seconds, bench.last_cpu

    ratio, cpu_ratio = alternate(rounds, "audit", build, sides=("cold", "audit"))
    first = [(walls["audit", i] - second[i]) / walls["cold", i] for i in range(rounds)]
    return {
        "audit_overhead": round(ratio, 3),
        "audit_overhead_cpu": round(cpu_ratio, 3),
        "audit_overhead_without_second_runs": round(statistics.median(first), 3),
        "target_audit_overhead": 1.10,
        "audited": verdicts,
    }


def overhead(bench: Bench, rounds: int, granularity: str) -> tuple[float, float]:
    """:func:`alternate` on this project's docs, fast path."""

    def build(side: str, index: int) -> tuple[float, float]:
        cache = bench.workdir / f"cache-{granularity}-{index}" if side == "on" else None
        seconds, _ = bench.build(cache, granularity)
        return seconds, bench.last_cpu

    return alternate(rounds, f"overhead {granularity}", build)


def heavy_overhead(workdir: Path, rounds: int) -> tuple[float, float]:
    """:func:`alternate` on the call-heavy gallery at ``function`` granularity."""
    pristine = heavy_gallery.write_project(workdir / "heavy")

    def build(side: str, index: int) -> tuple[float, float]:
        cache = workdir / f"heavy-cache-{index}" if side == "on" else None
        return heavy_gallery.build(pristine, workdir, cache, "function")

    return alternate(rounds, "call-heavy gallery", build)


def git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout


def show(commit: str, path: str, folder: Path) -> Path | None:
    done = subprocess.run(
        ["git", "show", f"{commit}:{path}"], cwd=ROOT, capture_output=True, check=False
    )
    if done.returncode != 0:
        return None
    target = folder / f"{commit}-{path.replace('/', '__')}"
    target.write_bytes(done.stdout)
    return target


def reruns(
    deps: dict, source: str, changed: set[str], moved: set[str], parent: str, commit: str, tmp: Path
) -> bool:
    """Whether a tutorial with these dependencies runs again after ``parent`` -> ``commit``
    (``changed``: the files the commit touched; ``moved``: those it added or removed)."""
    if source in changed or changed & set(deps["files"]):
        return True
    folders = {os.path.dirname(path) or "." for path in moved}
    if folders & set(deps.get("listings", {})):
        return True
    for path, pieces in deps["code"].items():
        if path not in changed:
            continue
        before, after = show(parent, path, tmp), show(commit, path, tmp)
        if before is None or after is None:
            return True
        old, new = code_digests(before), code_digests(after)
        if old is None or new is None or any(old.get(p) != new.get(p) for p in pieces):
            return True
    return False


def replay(caches: dict[str, Path], commits: int, tmp: Path) -> dict[str, float]:
    """Mean share of tutorials each granularity re-runs per commit touching src/."""
    history = git("log", f"-{commits}", "--format=%H", "--", "src").split()
    fractions: dict[str, list[float]] = {level: [] for level in caches}
    for level, cache in caches.items():
        store = CacheStore(cache)
        entries = [store.load(info.path.name) for info in store.list()]
        for commit in history:
            parent = git("rev-parse", f"{commit}^").strip()
            diff = git("diff", "--name-status", parent, commit).splitlines()
            status = [line.split("\t") for line in diff if line]
            changed = {line[-1] for line in status} | {line[1] for line in status}
            moved = {p for line in status if line[0][0] in "ADR" for p in line[1:]}
            count = sum(
                reruns(e.deps, f"docs/{e.meta['id']}", changed, moved, parent, commit, tmp)
                for e in entries
            )
            fractions[level].append(count / len(entries))
    return {level: round(statistics.mean(values), 3) for level, values in fractions.items()}


def replay_releases(folder: Path, releases: list[str], old_rule: str | None) -> dict[str, Any]:
    """The history replay of ``--part replay`` (see the module docstring)."""
    python = replay_gallery.bench_python(folder / "venv", ROOT / "constraints.txt")
    work = folder / f"work-{releases[0]}-{releases[-1]}"  # replays of other runs may run too
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    sides = {"module": (ROOT / "src", "module"), "function": (ROOT / "src", "function")}
    if old_rule:
        old = work / "old-rule"
        old.mkdir()
        archive = subprocess.run(
            ["git", "archive", old_rule, "src"], cwd=ROOT, capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        sides["old_rule"] = (old / "src", "function")
    fractions: dict[str, list[float]] = {side: [] for side in sides}
    stale: list[str] = []
    varying: set[str] = set()
    failed: set[str] = set()
    examples = 0
    previous: dict[str, bytes] | None = None
    steps = []
    # Every download first: without the network the replay stops before any build.
    sdists = [replay_gallery.fetch(version, folder / "sdists", python) for version in releases]
    for index, (version, sdist) in enumerate(zip(releases, sdists, strict=True)):
        tree = replay_gallery.release_tree(sdist, folder / "trees")
        library = replay_gallery.library_files(tree)
        moved = None if previous is None else replay_gallery.differences(library, previous)
        previous = library
        # The builds of one release run side by side, each in a folder of its own (the
        # pages are compared with that folder's path masked).
        jobs: dict[str, tuple[Path, str | None]] = {
            side: (work / f"cache-{side}", granularity) for side, (_, granularity) in sides.items()
        }
        if index:
            jobs.update({"clean": (None, None), "clean-again": (None, None)})
        with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
            futures = {
                name: pool.submit(
                    replay_gallery.build,
                    tree,
                    work / f"copy-{name}",
                    python,
                    sides[name][0] if name in sides else ROOT / "src",
                    cache,
                    granularity or "module",
                )
                for name, (cache, granularity) in jobs.items()
            }
            built = {name: future.result() for name, future in futures.items()}
        if index == 0:  # the first release fills the caches: nothing is restored yet
            for side in sides:
                print(f"networkx {version} {side}: filled, {built[side].seconds:.0f} s", flush=True)
            steps.append({"release": version, "filled": True})
            continue
        clean = built["clean"]
        passing = clean.executed - clean.failed
        failed |= clean.failed
        examples = max(examples, len(passing))
        again = set(replay_gallery.differences(built["clean-again"].pages, clean.pages))
        varying |= {f"{version}: {page}" for page in again}
        step: dict[str, Any] = {
            "release": version,
            "library_files_changed": moved,
            "varying": sorted(again),
        }
        for side in sides:
            warm = built[side]
            ran = warm.executed & passing
            differ = replay_gallery.differences(warm.pages, clean.pages)
            wrong = [page for page in differ if page not in again]
            stale += [f"{version} {side}: {page}" for page in wrong]
            fractions[side].append(len(ran) / len(passing))
            step[side] = {
                "ran": len(ran),
                "of": len(passing),
                "seconds": round(warm.seconds, 1),
                "stale": wrong,
                "reasons": {e: warm.reasons[e] for e in sorted(ran)},
            }
            print(
                f"networkx {version} ({moved if moved is None else len(moved)} library files "
                f"changed) {side}: {len(ran)} of {len(passing)} examples ran, "
                f"{len(wrong)} stale, {warm.seconds:.0f} s (clean {clean.seconds:.0f} s)",
                flush=True,
            )
            for page in wrong:
                print(f"  STALE {page}", flush=True)
        steps.append(step)
        write_json(work / "steps.json", steps)
    result: dict[str, Any] = {
        "library": replay_gallery.LIBRARY,
        "releases": releases,
        "steps": len(releases) - 1,
        "examples": examples,
        "failed_examples": len(failed),
    }
    for side, values in fractions.items():
        result[f"rerun_fraction_{side}"] = round(statistics.mean(values), 3) if values else None
    old_fraction = result.get("rerun_fraction_old_rule")
    result["target_rerun_fraction_function"] = (
        round(old_fraction / 3, 3) if old_fraction is not None else None
    )
    result["stale_pages"] = len(stale)
    result["varying_pages"] = len(varying)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2, help="overhead pairs (default 2)")
    parser.add_argument("--commits", type=int, default=20, help="commits to replay (20)")
    parser.add_argument(
        "--path",
        choices=("full", "fast"),
        default="full",
        help="the builds of the warm ratio: full quality (default) or the CI fast path",
    )
    parser.add_argument(
        "--part",
        choices=("all", "heavy", "audit", "replay"),
        default="all",
        help="everything (default), or only the call-heavy gallery, audit_overhead or the replay",
    )
    parser.add_argument(
        "--releases",
        default=",".join(replay_gallery.RELEASES),
        help="replay: consecutive networkx releases, comma-separated",
    )
    parser.add_argument(
        "--old-rule", metavar="REV", help="replay: also docsaccel's src/ at this git revision"
    )
    parser.add_argument(
        "--replay-dir",
        type=Path,
        default=ROOT / "build" / "bench-replay",
        help="replay: where the sdists, trees and the builds' venv are kept",
    )
    parser.add_argument(
        "--heavy-rounds", type=int, default=5, help="call-heavy gallery pairs (default 5)"
    )
    args = parser.parse_args()
    if args.rounds < 1 or args.commits < 1 or args.heavy_rounds < 1:
        parser.error("--rounds, --heavy-rounds and --commits must be 1 or more")
    # The call-heavy gallery's builds import docsaccel as a user's would (the docs builds
    # import the copy's own package, the project under test, as a CI checkout does).
    compile_docsaccel()
    if args.part == "audit":
        with tempfile.TemporaryDirectory(prefix="docsaccel-bench-audit-") as name:
            audit_result = audit_overhead(Bench(Path(name)), args.rounds)
        print(json.dumps({**audit_result, "rounds": args.rounds}))
        return
    if args.part == "replay":
        releases = [r.strip() for r in args.releases.split(",") if r.strip()]
        if len(releases) < 2:
            parser.error("--releases needs two releases or more")
        print(json.dumps(replay_releases(args.replay_dir, releases, args.old_rule)))
        return
    with tempfile.TemporaryDirectory(prefix="docsaccel-bench-heavy-") as name:
        heavy, heavy_cpu = heavy_overhead(Path(name), args.heavy_rounds)
    heavy_result = {
        "record_overhead_function": round(heavy, 3),
        "record_overhead_function_cpu": round(heavy_cpu, 3),
        "target_record_overhead_function": 1.05,
        "heavy_rounds": args.heavy_rounds,
    }
    if args.part == "heavy":
        print(json.dumps(heavy_result))
        return
    with tempfile.TemporaryDirectory(prefix="docsaccel-bench-cache-") as name:
        bench = Bench(Path(name))
        audit_result = audit_overhead(bench, args.rounds)
        caches = {level: bench.workdir / f"cache-{level}" for level in ("module", "function")}
        fast = args.path == "fast"
        warm_cache = bench.workdir / "cache-warm"
        cold, cold_report = bench.build(warm_cache, fast=fast)
        print(f"cold {args.path} build (cache empty): {cold:.1f} s, {executed(cold_report)} run")
        warm, warm_report = bench.build(warm_cache, fast=fast)
        print(
            f"warm {args.path} build (nothing changed): {warm:.1f} s, {executed(warm_report)} run"
        )
        # The dependencies the replay reads: one fast build per granularity.
        bench.build(caches["module"])
        bench.build(caches["function"], "function")
        record, record_cpu = overhead(bench, args.rounds, "module")
        record_function, record_function_cpu = overhead(bench, args.rounds, "function")
        os.makedirs(bench.workdir / "replay", exist_ok=True)
        fractions = replay(caches, args.commits, bench.workdir / "replay")
    result = {
        "cold_seconds": round(cold, 2),
        "warm_seconds": round(warm, 2),
        "warm_ratio": round(cold / warm, 2),
        "warm_path": args.path,
        "target_warm_ratio": 8,
        "examples": len(cold_report["examples"]),
        "examples_executed_warm": executed(warm_report),
        "record_overhead": round(record, 3),
        "record_overhead_cpu": round(record_cpu, 3),
        "target_record_overhead": 1.03,
        "record_overhead_function_docs": round(record_function, 3),
        "record_overhead_function_docs_cpu": round(record_function_cpu, 3),
        "target_record_overhead_function_docs": 1.10,
        **heavy_result,
        "rounds": args.rounds,
        "commits": args.commits,
        "rerun_fraction_module": fractions["module"],
        "rerun_fraction_function": fractions["function"],
        **audit_result,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
