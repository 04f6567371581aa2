"""The Sphinx state on a real project's docs: networkx 3.5's own ``doc/``, clean against
restored, every page and every warning compared.

``tools/bench_incremental.py --networkx --replay-dir DIR`` runs it. The sdist is the one
``tools/replay_gallery.py`` fetches (into ``DIR/sdists``); it is unpacked once into
``DIR/docs-trees`` as a project of its own (a git root), and its ``doc/conf.py`` gets
three lines, the same for both sides, so the builds need no network: no intersphinx
inventory is fetched (``intersphinx_mapping = {}``), pydata-sphinx-theme does not fetch
its version switcher (``check_switcher``), and ``docsaccel.gallery`` is added to the
extensions as a user adds it (the Sphinx state is on with the cache, ``DOCSACCEL_CACHE``).
The docs' own requirements (``requirements/doc.txt``) are installed in a virtual
environment of their own, ``DIR/docs-venv`` (:func:`replay_gallery.bench_python`, pinned
by ``constraints.txt``), made the first time; docsaccel comes from this checkout's
``src`` on ``PYTHONPATH``, networkx from the copy's root.

Both sides run sphinx-gallery with ``-D plot_gallery=0``: executing the gallery is what
the example cache saves (``tools/bench_cache.py``, ``tools/bench_precision.py``); here
only Sphinx's own work is measured. Every build starts from a fresh copy of the tree
(new modification times everywhere, as a CI checkout), ``clean`` with an empty cache,
``restored`` with a copy of the cache a clean build of the unchanged tree left. The cases
(:data:`CASES`): nothing changed; the docstring of ``has_path`` (``networkx/algorithms``)
edited; the docstring of ``Graph.order``, which four classes inherit; the body of
``has_path`` (code that does not run on import); its signature (a keyword added: the
``def`` runs on import); the title of ``INSTALL.rst``, which ``doc/install.rst`` includes
(the navigation of every page changes); one narrative page
edited; one ``html_*`` setting of ``conf.py`` edited. Each build prints its wall and CPU
time, the documents it read, the pages it wrote, the output files differing from the clean
build of the same tree (:func:`docsaccel.incremental.oracle.output_files`: measured times
masked) and the warning lines differing from that build's (paths of the copy masked).

Example::

    result = run(replay_dir, workdir, rounds=1, cases=("noop", "docstring"))
    result["cases"]["noop"]["ratio"], result["cases"]["noop"]["differing_pages"]
"""

from __future__ import annotations

import collections
import hashlib
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import replay_gallery
from timed_build import ROOT

from docsaccel.incremental.oracle import differences, output_files

VERSION = "3.5"
#: What ``doc/conf.py`` gets, after its own code, on both sides.
CONF_OVERRIDE = """

# Added by docsaccel's benchmark: the builds run offline, with the Sphinx state.
intersphinx_mapping = {}
html_theme_options["check_switcher"] = False
extensions.append("docsaccel.gallery")
"""
#: ``{case: (file, old text, new text)}``: the edit each case makes to a fresh copy.
CASES: dict[str, tuple[str, str, str] | None] = {
    "noop": None,
    "docstring": (
        "networkx/algorithms/shortest_paths/generic.py",
        "Returns *True* if *G* has a path from *source* to *target*.",
        "Returns *True* if *G* has a path from *source* to *target* (edited).",
    ),
    "inherited": (
        "networkx/classes/graph.py",
        'def order(self):\n        """Returns the number of nodes in the graph.',
        'def order(self):\n        """Returns the number of nodes in the graph (edited).',
    ),
    "body": (
        "networkx/algorithms/shortest_paths/generic.py",
        "    except nx.NetworkXNoPath:\n        return False\n    return True\n",
        "    except nx.NetworkXNoPath:\n        return False\n    else:\n        return True\n",
    ),
    "signature": (
        "networkx/algorithms/shortest_paths/generic.py",
        "def has_path(G, source, target):",
        "def has_path(G, source, target, *, edited=None):",
    ),
    "include": (
        "INSTALL.rst",
        "Install\n=======\n",
        "Installing\n==========\n",
    ),
    "rst": (
        "doc/developer/values.rst",
        "NetworkX aims to be the reference library",
        "NetworkX aims to be the edited reference library",
    ),
    "conf": (
        "doc/conf.py",
        'html_last_updated_fmt = "%b %d, %Y"',
        'html_last_updated_fmt = "%d %b %Y"',
    ),
}


def docs_tree(sdist: Path, folder: Path) -> Path:
    """networkx's release unpacked under ``folder`` with :data:`CONF_OVERRIDE` added to its
    ``doc/conf.py``, made once (a tree of its own: the gallery replay's has no ``doc/``
    changes and other benchmarks copy it)."""
    tree = folder / sdist.name.removesuffix(".tar.gz")
    stamp = tree / ".bench-tree"
    if stamp.is_file():
        return tree
    shutil.rmtree(tree, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(sdist) as archive:
        archive.extractall(folder, filter="data")
    conf = tree / "doc" / "conf.py"
    conf.write_text(conf.read_text("utf-8") + CONF_OVERRIDE, "utf-8")
    # Its own repository, as the library's checkout is: the root docsaccel finds.
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    stamp.write_text(VERSION, "utf-8")
    return tree


def edit(copy: Path, case: str) -> None:
    """Make ``case``'s edit in ``copy``; an edit that no longer applies ends the run."""
    change = CASES[case]
    if change is None:
        return
    name, old, new = change
    path = copy / name
    text = path.read_text("utf-8")
    if old not in text:
        sys.exit(f"nx_docs: case {case}: {name} does not hold {old!r}")
    path.write_text(text.replace(old, new, 1), "utf-8")


@dataclass(frozen=True)
class Built:
    """One build: wall and CPU seconds, the documents it read (with the first reason),
    the pages it wrote, its output as compared and its warning lines (copy masked)."""

    seconds: float
    cpu_seconds: float
    read: dict[str, str]
    written: int
    #: ``{path: digest of its bytes as compared}``: the whole site's bytes are too many to
    #: hold for every tree.
    output: dict[str, str]
    warnings: collections.Counter[str]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def warning_lines(log: str, copy: Path) -> collections.Counter[str]:
    """The lines of a ``-q`` build's log (its warnings and errors), the copy's folder masked
    and counted, so two builds' warnings compare whatever order they came in."""
    masked = log.replace(str(copy), "<copy>")
    return collections.Counter(line for line in masked.splitlines() if line.strip())


class Bench:
    """Fresh copies of the tree built with ``python`` and docsaccel from this checkout."""

    def __init__(self, tree: Path, workdir: Path, python: Path) -> None:
        self.tree = tree
        self.workdir = workdir
        self.python = python
        self.copy = workdir / "copy"

    def build(self, case: str, cache: Path, label: str) -> Built:
        """A build of a fresh copy with ``case``'s edit and the cache at ``cache``; its log
        is kept as ``label.log`` in the work folder."""
        shutil.rmtree(self.copy, ignore_errors=True)
        shutil.copytree(self.tree, self.copy)
        edit(self.copy, case)
        docs = self.copy / "doc"
        outdir = docs / "build" / "html"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DOCSACCEL", "PYTHON"))}
        env.update(
            PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(self.copy)]),
            DOCSACCEL_CACHE=str(cache),
            DOCSACCEL_ON_OVERRUN="warn",
            MPLBACKEND="agg",
        )
        command = [str(self.python), "-m", "sphinx", "-b", "html", "-q", "-D", "plot_gallery=0"]
        log = self.workdir / f"{label}.log"
        cpu, started = _children_cpu(), time.perf_counter()
        with log.open("w", encoding="utf-8") as stream:
            done = subprocess.run(
                [*command, str(docs), str(outdir)], env=env, stdout=stream, stderr=stream
            )
        seconds, cpu = time.perf_counter() - started, _children_cpu() - cpu
        text = log.read_text("utf-8")
        if done.returncode != 0:
            sys.exit(f"nx_docs: build {label} failed (exit {done.returncode}):\n{text[-3000:]}")
        report = json.loads((outdir / "docsaccel" / "report.json").read_text("utf-8"))
        state = report["build"].get("sphinx_state") or {}
        return Built(
            seconds,
            cpu,
            dict(state.get("read", {})),
            int(state.get("written", 0)),
            {name: hashlib.sha256(data).hexdigest() for name, data in output_files(outdir).items()},
            warning_lines(text, self.copy),
        )


def warning_differences(
    mine: collections.Counter[str], clean: collections.Counter[str]
) -> list[str]:
    """Warning lines one build gave more often than the other, marked ``+`` (this build
    only) or ``-`` (the clean build only)."""
    return [f"+ {line}" for line in sorted(mine - clean)] + [
        f"- {line}" for line in sorted(clean - mine)
    ]


_SHOWN = 10


def _print_build(kind: str, case: str, built: Built, pages: list[str], warned: list[str]) -> None:
    print(
        f"networkx {case} {kind}: {built.seconds:.1f} s (CPU {built.cpu_seconds:.1f} s), "
        f"read {len(built.read)}, written {built.written}, warnings "
        f"{sum(built.warnings.values())}, differing pages {len(pages)}, "
        f"differing warnings {len(warned)}"
    )
    if kind == "restored":
        for docname, reason in sorted(built.read.items())[:_SHOWN]:
            print(f"  read: {docname}: {reason}")
        # Many documents read for one kind of reason (a module's code changed) show as one.
        reasons = collections.Counter(re.sub(r"^[^:]*: ", "", r) for r in built.read.values())
        for reason, count in reasons.most_common(_SHOWN):
            print(f"  read {count}: {reason}")
    for name in pages[:_SHOWN]:
        print(f"  page differs: {name}")
    for line in warned[:_SHOWN]:
        print(f"  warning differs: {line}")


def run(replay_dir: Path, workdir: Path, rounds: int, cases: tuple[str, ...]) -> dict:
    """The networkx part (see the module docstring): per case, medians and ratios."""
    constraints = ROOT / "constraints.txt"
    python = replay_gallery.bench_python(
        replay_dir / "docs-venv", constraints, replay_gallery.DOC_REQUIREMENTS
    )
    sdist = replay_gallery.fetch(VERSION, replay_dir / "sdists", python)
    tree = docs_tree(sdist, replay_dir / "docs-trees")
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    bench = Bench(tree, workdir, python)
    warm = workdir / "warm"
    # The clean build of the unchanged tree leaves the state the restored builds start from.
    primed = bench.build("noop", warm, "prime")
    print(f"networkx prime (clean, unchanged): {primed.seconds:.1f} s, read {len(primed.read)}")
    references: dict[str, Built] = {"noop": primed}
    results: dict[str, dict] = {}
    for case in cases:
        times: dict[str, list[Built]] = {"clean": [], "restored": []}
        worst_pages: list[str] = []
        worst_warnings: list[str] = []
        for index in range(rounds):
            order = ("clean", "restored") if index % 2 == 0 else ("restored", "clean")
            for kind in order:
                if case == "noop" and kind == "clean" and index == 0:
                    # The priming build is that build: a clean one of the unchanged tree.
                    _print_build(kind, case, primed, [], [])
                    times[kind].append(primed)
                    continue
                cache = workdir / f"cache-{case}-{kind}-{index}"
                shutil.rmtree(cache, ignore_errors=True)
                if kind == "restored":
                    shutil.copytree(warm, cache)
                built = bench.build(case, cache, f"{case}-{kind}-{index}")
                shutil.rmtree(cache, ignore_errors=True)
                # The first clean build of a tree is the reference every build of it meets.
                reference = references.setdefault(case, built)
                pages = differences(built.output, reference.output)
                warned = warning_differences(built.warnings, reference.warnings)
                worst_pages = max(worst_pages, pages, key=len)
                worst_warnings = max(worst_warnings, warned, key=len)
                _print_build(kind, case, built, pages, warned)
                times[kind].append(built)
        results[case] = _summary(times, worst_pages, worst_warnings)
    return {"pages": len(primed.read), "prime_seconds": round(primed.seconds, 2), "cases": results}


def _summary(times: dict[str, list[Built]], pages: list[str], warned: list[str]) -> dict:
    def median(kind: str, field: Callable[[Built], float]) -> float:
        return statistics.median(field(b) for b in times[kind])

    clean, restored = median("clean", lambda b: b.seconds), median("restored", lambda b: b.seconds)
    clean_cpu = median("clean", lambda b: b.cpu_seconds)
    restored_cpu = median("restored", lambda b: b.cpu_seconds)
    last = times["restored"][-1]
    return {
        "clean_seconds": round(clean, 2),
        "restored_seconds": round(restored, 2),
        "ratio": round(clean / restored, 2),
        "cpu_ratio": round(clean_cpu / restored_cpu, 2),
        "restored_read_written": (len(last.read), last.written),
        "differing_pages": len(pages),
        "differing_warnings": len(warned),
    }
