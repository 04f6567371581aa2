"""How precise and how safe the example cache is on a real library, edit by edit.

At ``function`` granularity an edit to a library function should run again only the
examples that executed it. This benchmark measures that on networkx's own gallery (its
release sdist from PyPI, the library under the project's roots as in its repository:
``tools/replay_gallery.py`` makes the tree, the builds' environment and every build, each
from a fresh copy):

1. A traced build without the cache: a small ``sitecustomize`` (:data:`TRACER`, on the
   build's ``PYTHONPATH``) notes, through ``sys.setprofile``, which library functions
   each example called. That is the oracle: an edit to a function must re-run the
   examples that executed it. Calls made between examples (the gallery's own hooks) are
   given to the example that ran last, which can only make the oracle larger.
2. A build without the cache and a cold build (cache empty, ``function`` granularity),
   alternating over ``--rounds``: ``cold_cost_ratio`` is the median ratio of their wall
   times. A cold ``module`` build fills that granularity's cache.
3. A warm build with nothing changed (``function``): the examples it executed are printed
   by name; only failing examples (never stored) may be among them. How many entries
   each cold build stored is printed first (``stored_cold``): an example the cache
   declined to store (say, because what the library read when ``conf.py`` imported it
   is unknown) runs in every build, which shows here, not as a precise cache.
4. ``--edits N`` functions the examples ran, drawn with ``--seed`` from N strata of the
   functions sorted by how many examples executed them (from leaf helpers to the hub
   methods every example uses). Each edit is a fresh copy of the tree with one line
   (``_docsaccel_bench_edit = None``) put first in that function's body, after its
   docstring: its results do not change. Each is built warm from a copy of each
   granularity's cold cache. Printed per granularity: ``over_run`` (mean of the passing
   examples re-run / the passing examples that executed the function) and ``safe_share``
   (the share of edits whose re-run set holds the oracle's: must be 1.0).
5. ``--results-pass``: the first ``--results-edits`` of those functions edited so that
   their results change: the first call in each example prints a line (the flag lives on
   the ``__main__`` module sphinx-gallery makes afresh for each example, so the page of
   every example that executed the function changes, whatever ran before it). Each edit is
   built without the cache and warm from each cold cache; the galleries are compared file
   by file, measured times masked (``replay_gallery.pages``). ``stale_pages`` must be 0;
   a page that differs between two builds that both ran every example afresh (the two
   builds of the unedited tree without the cache, and each edit's build without the cache
   against a warm build that ran every example) is nondeterministic and not counted
   (``nondeterministic_pages`` lists them).

The edit adds a line, so the rest of the file moves down one line: the cache must not
take that for a change of the functions below (``function`` granularity digests code,
not positions), and a page that printed a library line number would show as stale.

Prints one line per build and a last line with one JSON object.

Usage (needs the network the first time; ``--replay-dir`` keeps the venv and sdist)::

    python tools/bench_precision.py --edits 3                   # smoke
    python tools/bench_precision.py --edits 20 --results-pass   # the full measure
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import json
import os
import random
import shutil
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import replay_gallery
from timed_build import ROOT

VERSION = "3.5"
#: The no-op edit: a local name no library function uses, so nothing it computes changes.
NOOP = "_docsaccel_bench_edit = None"
#: The results edit: one printed line per example that calls the function (see step 5).
PRINT = (
    "if not getattr(__import__('sys').modules['__main__'], '_docsaccel_bench', False): "
    "__import__('sys').modules['__main__']._docsaccel_bench = True; "
    "print('docsaccel bench: {name} ran')"
)
TRACER = '''"""Note which library functions each example calls (bench_precision's oracle)."""
import os, sys, threading

_out = os.environ.get("DOCSACCEL_BENCH_TRACE")
if _out:
    _library = os.environ["DOCSACCEL_BENCH_LIBRARY"]
    _examples = os.environ["DOCSACCEL_BENCH_EXAMPLES"]
    _seen = set()
    _current = [None]
    _stream = open(_out, "a", encoding="utf-8", buffering=1)

    def _profile(frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        name = code.co_filename
        if name.startswith(_examples):
            _current[0] = name
        elif name.startswith(_library) and _current[0] is not None:
            key = (_current[0], name, code.co_qualname)
            if key not in _seen:
                _seen.add(key)
                _stream.write("\\t".join(key) + "\\n")

    sys.setprofile(_profile)
    threading.setprofile(_profile)
'''


@dataclass(frozen=True)
class Function:
    """An editable library function: ``path::qualname``, where its body starts, and the
    indentation of its first statement (the line inserted goes before ``line``)."""

    key: str
    path: str
    line: int
    indent: str


def editable_functions(tree: Path) -> dict[str, Function]:
    """The library's module-level functions and the methods of its module-level classes
    whose first statement (after the docstring) starts a line of its own, by key.

    Nested functions are left out (an edit would change the function around them too),
    as are names defined twice in one file (a property's getter and setter)."""
    found: dict[str, Function] = {}
    twice: set[str] = set()
    for file in sorted((tree / replay_gallery.LIBRARY).rglob("*.py")):
        path = file.relative_to(tree).as_posix()
        source = file.read_text("utf-8")
        lines = source.splitlines()
        for qualname, node in _definitions(ast.parse(source)):
            function = _insertion(path, qualname, node, lines)
            key = f"{path}::{qualname}"
            if key in found or key in twice:
                twice.add(key)
                found.pop(key, None)
            elif function is not None:
                found[key] = function
    return found


def _definitions(module: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    functions = (ast.FunctionDef, ast.AsyncFunctionDef)
    found = [(n.name, n) for n in module.body if isinstance(n, functions)]
    for cls in (n for n in module.body if isinstance(n, ast.ClassDef)):
        found += [(f"{cls.name}.{n.name}", n) for n in cls.body if isinstance(n, functions)]
    return found


def _insertion(
    path: str, qualname: str, node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]
) -> Function | None:
    """Where a line goes first in ``node``'s body, or ``None`` where no line can."""
    body = node.body
    first = body[0]
    docstring = (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    )
    if docstring:
        if len(body) < 2:
            return None  # a body that is only a docstring (a stub): nothing runs
        after = body[1]
        line = first.end_lineno + 1 if first.end_lineno else after.lineno
        statement = after
    else:
        # Before a decorated first statement's decorators, not between them and it.
        decorators = getattr(first, "decorator_list", [])
        line, statement = min([first.lineno] + [d.lineno for d in decorators]), first
    text = lines[statement.lineno - 1]
    indent = text[: statement.col_offset]
    if statement.lineno <= node.lineno or indent.strip():
        return None  # the body shares a line with the ``def`` or another statement
    return Function(f"{path}::{qualname}", path, line, indent)


def edited(tree: Path, function: Function, statement: str, folder: Path) -> Path:
    """A copy of ``tree`` at ``folder`` with ``statement`` put first in the function."""
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(tree, folder, symlinks=True)
    file = folder / function.path
    lines = file.read_text("utf-8").splitlines(keepends=True)
    lines.insert(function.line - 1, f"{function.indent}{statement}\n")
    source = "".join(lines)
    ast.parse(source, function.path)  # an edit that breaks the file is the bench's bug
    file.write_text(source, "utf-8")
    return folder


def example_id(path: str, docs: Path) -> str:
    """The report's id of an example (``../examples/drawing/plot_a.py``: its path from
    the docs folder, :class:`docsaccel.examples.Example`) from its script's path."""
    return Path(os.path.relpath(path, docs)).as_posix()


def oracle(trace: Path, copy: Path) -> dict[str, frozenset[str]]:
    """``{function key: the examples that executed it}`` from the tracer's file."""
    ran: dict[str, set[str]] = {}
    for row in trace.read_text("utf-8").splitlines():
        example, file, qualname = row.split("\t")
        key = f"{Path(file).relative_to(copy).as_posix()}::{qualname}"
        ran.setdefault(key, set()).add(example_id(example, copy / replay_gallery.DOCS))
    return {key: frozenset(examples) for key, examples in ran.items()}


def draw(candidates: dict[str, frozenset[str]], count: int, seed: int) -> list[str]:
    """``count`` keys, one at random from each of ``count`` strata of the keys sorted by
    how many examples executed them (ties by key, so a seed always draws the same)."""
    ordered = sorted(candidates, key=lambda k: (len(candidates[k]), k))
    rng = random.Random(seed)
    count = min(count, len(ordered))
    bounds = [round(i * len(ordered) / count) for i in range(count + 1)]
    return [rng.choice(ordered[bounds[i] : bounds[i + 1]]) for i in range(count)]


class Bench:
    """The builds of one run: the tree, the builds' interpreter, the work folder."""

    def __init__(self, tree: Path, python: Path, work: Path) -> None:
        self.tree, self.python, self.work = tree, python, work
        self.count = 0

    def build(
        self,
        label: str,
        tree: Path | None = None,
        cache: Path | None = None,
        granularity: str = "module",
        env: dict[str, str] | None = None,
    ) -> replay_gallery.Built:
        """One build of a fresh copy of ``tree`` (the unedited one by default); ``cache``
        is used as it is (see :meth:`warm` for a copy of a cold one)."""
        self.count += 1
        built = replay_gallery.build(
            tree or self.tree,
            self.copy(label),
            self.python,
            ROOT / "src",
            cache,
            granularity,
            env=env,
        )
        side = f"{granularity} cache" if cache else "no cache"
        print(
            f"{label} ({side}): {built.seconds:.0f} s, {len(built.executed)} ran, "
            f"{len(built.cached)} restored, {len(built.failed)} failed",
            flush=True,
        )
        return built

    def copy(self, label: str) -> Path:
        return self.work / f"copy-{label}"

    def warm(self, label: str, tree: Path, cold: Path, granularity: str) -> replay_gallery.Built:
        """A build of ``tree`` from a copy of the cold cache ``cold``, so every edit starts
        from the same cache whatever the builds before it stored."""
        cache = self.work / f"cache-{label}"
        shutil.rmtree(cache, ignore_errors=True)
        shutil.copytree(cold, cache)
        try:
            return self.build(label, tree, cache, granularity)
        finally:
            shutil.rmtree(cache, ignore_errors=True)


def traced(bench: Bench) -> tuple[replay_gallery.Built, dict[str, frozenset[str]]]:
    """The build without the cache that says which examples executed which function."""
    hook = bench.work / "tracer"
    hook.mkdir(exist_ok=True)
    (hook / "sitecustomize.py").write_text(TRACER, "utf-8")
    trace = bench.work / "trace.tsv"
    trace.unlink(missing_ok=True)
    copy = bench.copy("traced").resolve()
    env = {
        "PYTHONPATH": f"{ROOT / 'src'}:{hook}",
        "DOCSACCEL_BENCH_TRACE": str(trace),
        "DOCSACCEL_BENCH_LIBRARY": f"{copy / replay_gallery.LIBRARY}/",
        "DOCSACCEL_BENCH_EXAMPLES": f"{copy / 'examples'}/",
    }
    built = bench.build("traced", env=env)
    return built, oracle(trace, copy)


def cost(bench: Bench, rounds: int) -> tuple[float, replay_gallery.Built, Path, list[Any]]:
    """Median wall ratio of cold ``function`` builds / builds without the cache,
    alternating; the last build without the cache; the first round's cold cache."""
    ratios, clean = [], None
    cold = bench.work / "cold-function-0"
    for index in range(rounds):
        seconds = {}
        for side in ("off", "cold") if index % 2 == 0 else ("cold", "off"):
            if side == "off":
                clean = bench.build(f"off-{index}")
                seconds[side] = clean.seconds
            else:
                cache = bench.work / f"cold-function-{index}"
                shutil.rmtree(cache, ignore_errors=True)
                seconds[side] = bench.build(f"cold-{index}", None, cache, "function").seconds
        ratios.append(seconds["cold"] / seconds["off"])
    assert clean is not None
    return statistics.median(ratios), clean, cold, ratios


def rerun_pass(
    bench: Bench,
    functions: list[Function],
    ran: dict[str, frozenset[str]],
    passing: frozenset[str],
    colds: dict[str, Path],
    jobs: int,
) -> dict[str, Any]:
    """Step 4: the no-op edits, each built warm at each granularity."""
    over: dict[str, list[float]] = {g: [] for g in colds}
    safe: dict[str, list[bool]] = {g: [] for g in colds}
    rows = []
    for index, function in enumerate(functions):
        tree = edited(bench.tree, function, NOOP, bench.work / "tree-noop")
        expected = ran[function.key] & passing
        built = _side_by_side(
            jobs,
            {g: partial(bench.warm, f"noop-{index}-{g}", tree, colds[g], g) for g in colds},
        )
        row: dict[str, Any] = {"function": function.key, "executed_by": len(expected)}
        for granularity, warm in built.items():
            again = warm.executed & passing
            over[granularity].append(len(again) / len(expected))
            safe[granularity].append(expected <= again)
            missed = sorted(expected - again)
            row[granularity] = {"ran": len(again), "missed": missed}
            print(
                f"  edit {index + 1} {function.key} ({len(expected)} examples executed it) "
                f"{granularity}: {len(again)} re-run" + (f", MISSED {missed}" if missed else ""),
                flush=True,
            )
        rows.append(row)
        shutil.rmtree(tree, ignore_errors=True)
    result: dict[str, Any] = {"edits": rows}
    for granularity in colds:
        result[f"over_run_{granularity}"] = round(statistics.mean(over[granularity]), 3)
        result[f"safe_share_{granularity}"] = round(statistics.mean(safe[granularity]), 3)
    return result


def results_pass(
    bench: Bench,
    functions: list[Function],
    colds: dict[str, Path],
    varying: set[str],
    jobs: int,
) -> dict[str, Any]:
    """Step 5: edits that change what the function prints, each warm build's gallery
    compared with a build of the same tree without the cache.

    A page is nondeterministic (not counted as stale) if two builds that both executed
    every example afresh, in the same order, differ on it: the two builds of the
    unedited tree without the cache (``varying``), and each edit's build without the
    cache against a warm build that ran every example (``module`` granularity re-runs
    all for a library edit). One pair of builds can agree on a page by chance, so every
    such pair of every edit is learned before any edit is judged."""
    built_edits: list[tuple[Function, dict[str, replay_gallery.Built]]] = []
    learned = set(varying)
    for index, function in enumerate(functions):
        statement = PRINT.format(name=function.key)
        tree = edited(bench.tree, function, statement, bench.work / "tree-results")
        builds: dict[str, Callable[[], replay_gallery.Built]] = {
            g: partial(bench.warm, f"results-{index}-{g}", tree, colds[g], g) for g in colds
        }
        builds["clean"] = partial(bench.build, f"results-{index}-clean", tree)
        built = _side_by_side(jobs, builds)
        clean = built["clean"]
        for name, warm in built.items():
            if name != "clean" and warm.executed == clean.executed:
                learned.update(replay_gallery.differences(warm.pages, clean.pages))
        built_edits.append((function, built))
        shutil.rmtree(tree, ignore_errors=True)
    stale: list[str] = []
    for index, (function, built) in enumerate(built_edits):
        clean = built.pop("clean")
        for granularity, warm in built.items():
            differ = replay_gallery.differences(warm.pages, clean.pages)
            wrong = [page for page in differ if page not in learned]
            stale += [f"{function.key} {granularity}: {page}" for page in wrong]
            print(
                f"  results edit {index + 1} {function.key} {granularity}: "
                f"{len(warm.executed)} ran, {len(wrong)} stale pages"
                + (f" ({len(differ) - len(wrong)} nondeterministic)" if differ else ""),
                flush=True,
            )
            for page in wrong:
                print(f"    STALE {page}", flush=True)
    return {
        "results_edits": len(functions),
        "stale_pages": len(stale),
        "stale": stale,
        "nondeterministic_pages": sorted(learned),
    }


def entries_stored(cache: Path) -> int | None:
    """How many entries a cold build stored, as its ``last-build.json`` says: an example
    the cache declined to store runs in every build, which the measure must show."""
    try:
        return int(json.loads((cache / "last-build.json").read_text("utf-8"))["stored"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _side_by_side(
    jobs: int, builds: dict[str, Callable[[], replay_gallery.Built]]
) -> dict[str, replay_gallery.Built]:
    """Run ``builds`` on ``jobs`` threads (each build is its own process)."""
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        futures = {name: pool.submit(build) for name, build in builds.items()}
        return {name: future.result() for name, future in futures.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=20, help="functions edited (20)")
    parser.add_argument("--seed", type=int, default=0, help="the draw of the functions (0)")
    parser.add_argument(
        "--results-pass", action="store_true", help="also the edits that change results"
    )
    parser.add_argument(
        "--results-edits", type=int, default=5, help="edits of the results pass (5)"
    )
    parser.add_argument("--rounds", type=int, default=1, help="cold-cost pairs (1)")
    parser.add_argument("--jobs", type=int, default=2, help="edit builds at once (2)")
    parser.add_argument("--version", default=VERSION, help=f"networkx release ({VERSION})")
    parser.add_argument(
        "--replay-dir",
        type=Path,
        default=ROOT / "build" / "bench-replay",
        help="where the sdists, trees and the builds' venv are kept (shared with the replay)",
    )
    args = parser.parse_args()
    if min(args.edits, args.results_edits, args.rounds, args.jobs) < 1:
        parser.error("--edits, --results-edits, --rounds and --jobs must be 1 or more")
    folder = args.replay_dir
    python = replay_gallery.bench_python(folder / "venv", ROOT / "constraints.txt")
    sdist = replay_gallery.fetch(args.version, folder / "sdists", python)
    tree = replay_gallery.release_tree(sdist, folder / "trees")
    work = folder / f"precision-{args.version}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    bench = Bench(tree, python, work)

    # Neither of these two builds is timed: they run side by side.
    cold_module = work / "cold-module"
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        tracing = pool.submit(traced, bench)
        pool.submit(bench.build, "cold-module", None, cold_module, "module").result()
        first, ran = tracing.result()
    ratio, clean, cold_function, ratios = cost(bench, args.rounds)
    colds = {"function": cold_function, "module": cold_module}
    failed = clean.failed | first.failed
    passing = frozenset(clean.executed - failed)
    varying = set(replay_gallery.differences(first.pages, clean.pages))

    stored = {g: entries_stored(cache) for g, cache in colds.items()}
    print(f"entries the cold builds stored: {stored} (of {len(passing)} passing)", flush=True)
    warm = bench.warm("warm", tree, cold_function, "function")
    warm_ran = sorted(warm.executed)
    print(
        f"warm build, nothing changed: {len(warm_ran)} executed: {warm_ran or 'none'}"
        f"; of them not failing: {sorted(warm.executed - failed) or 'none'}",
        flush=True,
    )

    library = editable_functions(tree)
    candidates = {k: v & passing for k, v in ran.items() if k in library and v & passing}
    chosen = [library[k] for k in draw(candidates, args.edits, args.seed)]
    print(
        f"{len(candidates)} editable functions executed by passing examples; edited: "
        + ", ".join(f"{f.key} ({len(candidates[f.key])})" for f in chosen),
        flush=True,
    )
    result: dict[str, Any] = {
        "library": f"{replay_gallery.LIBRARY}=={args.version}",
        "examples": len(clean.executed),
        "failed_examples": sorted(failed),
        "warm_executed": warm_ran,
        "warm_executed_not_failing": sorted(warm.executed - failed),
        "stored_cold": stored,
        "cold_cost_ratio": round(ratio, 3),
        "cold_cost_ratios": [round(r, 3) for r in ratios],
        "functions_executed": len(ran),
        "functions_editable": len(candidates),
        "seed": args.seed,
        "varying_pages": len(varying),
        "target_safe_share": 1.0,
        **rerun_pass(bench, chosen, candidates, passing, colds, args.jobs),
    }
    if args.results_pass:
        limited = chosen[: args.results_edits]
        result.update(results_pass(bench, limited, colds, varying, args.jobs))
        result["target_stale_pages"] = 0
    print(json.dumps(result))


if __name__ == "__main__":
    main()
