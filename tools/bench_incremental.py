"""Benchmark the Sphinx state: builds from fresh copies, clean against restored.

1. An API-reference project is generated (``--modules`` modules in subpackages, numpy-style
   docstrings, ``autosummary`` with ``:recursive:`` making a page per module, its
   functions and classes documented there with their summary tables,
   a few narrative pages with cross-references, a small sphinx-gallery gallery). Every
   build copies it afresh into the same folder (new modification times everywhere, as a
   CI checkout) and runs ``sphinx-build`` in a child process. Alternating, per round:

   - ``clean``: an empty cache (nothing to restore);
   - ``noop``: the cache of a build of the same tree;
   - ``one_change``: that cache, with one function's docstring changed.

   ``noop_ratio`` (target >= 10) and ``one_change_ratio`` (target >= 5) are the medians
   of the clean builds' wall times over the others' (CPU-time ratios beside them); the
   pages read and written in each; ``identical_fraction``: the share of output files equal
   to a clean build of the same tree (measured times masked), which must be 1.0.

2. This project's docs (``tools/timed_build.py``): a fresh copy with a warm example cache,
   today's way (``DOCSACCEL_CACHE_SPHINX=0``: every example restored, Sphinx from
   scratch) against the Sphinx state restored too, alternating. The warm cache is the
   one in ``.docsaccel-cache`` (run ``make docs`` once to fill it; without it the first
   build executes every tutorial).

3. ``--networkx --replay-dir DIR``: networkx 3.5's own docs (``tools/nx_docs.py``), the
   gallery off on both sides, clean against restored for each of nothing changed, one
   docstring in ``networkx/algorithms`` edited, one narrative page edited, one ``html_*``
   setting of ``conf.py`` edited (``--cases``). Targets: ratio >= 5 with nothing changed
   and with the docstring edited, >= 1 (never slower than clean) in every case, 0 pages
   and 0 warning lines differing from a clean build of the same tree. Needs the network
   the first time (the docs' requirements and the sdist); a clean build takes minutes.

Prints a line per build and one JSON object last.

Usage::

    python tools/bench_incremental.py                    # 300 modules, 2 rounds each
    python tools/bench_incremental.py --modules 100 --rounds 3 --skip-project
    python tools/bench_incremental.py --skip-api --docs-rounds 3
    python tools/bench_incremental.py --networkx --replay-dir ../replay --rounds 1
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
import textwrap
import time
from pathlib import Path

import nx_docs
from timed_build import ROOT, timed_build

from docsaccel.incremental.oracle import differences, output_files

SUBPACKAGES = 10

CONF = """\
import os, sys
sys.path.insert(0, os.path.abspath("../src"))
project = "apiproj"
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx_gallery.gen_gallery",
    "docsaccel.gallery",
]
templates_path = ["_templates"]
exclude_patterns = ["_build", "examples", "sg_execution_times.rst"]
autosummary_generate = True
html_theme = "furo"
sphinx_gallery_conf = {
    "examples_dirs": ["examples"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "show_memory": False,
    "reset_modules": (),
}
"""
MODULE_TEMPLATE = """\
{{ fullname | escape | underline}}

.. automodule:: {{ fullname }}

{% block functions %}{% if functions %}
.. rubric:: Functions

.. autosummary::
{% for item in functions %}
   {{ item }}
{%- endfor %}

{% for item in functions %}
.. autofunction:: {{ item }}
{%- endfor %}
{% endif %}{% endblock %}

{% block classes %}{% if classes %}
.. rubric:: Classes

.. autosummary::
{% for item in classes %}
   {{ item }}
{%- endfor %}

{% for item in classes %}
.. autoclass:: {{ item }}
   :members:
{%- endfor %}
{% endif %}{% endblock %}

{% block modules %}{% if modules %}
.. rubric:: Modules

.. autosummary::
   :toctree:
   :recursive:
{% for item in modules %}
   {{ item }}
{%- endfor %}
{% endif %}{% endblock %}
"""


def _function(name: str, index: int) -> str:
    return textwrap.dedent(f'''
        def {name}(values, scale=1.0):
            """Compute the {name} of the values (variant {index}).

            Parameters
            ----------
            values : list of float
                The sample.
            scale : float, optional
                A factor applied to the result.

            Returns
            -------
            float
                The {name}, scaled.

            See Also
            --------
            summary : Another view of the same values.
            """
            return scale * sum(values) / max(len(values), 1)
        ''')


def _module(package: str, index: int) -> str:
    functions = "".join(_function(f"{verb}_{index}", index) for verb in ("mean", "spread", "peak"))
    klass = textwrap.dedent(f'''
        class Model{index}:
            """A model of the data (number {index}).

            Parameters
            ----------
            size : int
                How many values it holds.
            """

            def __init__(self, size=3):
                self.size = size

            def fit(self, values):
                """Fit the model to the values.

                Parameters
                ----------
                values : list of float
                    The sample.
                """
                return self

            def predict(self):
                """The model's prediction."""
                return 0.0
        ''')
    return f'"""Module {index} of {package}: statistics of samples."""\n{functions}{klass}'


def generate(root: Path, modules: int) -> None:
    """The project: ``src/apipkg`` and ``docs``."""
    src = root / "src" / "apipkg"
    per_package = max(1, modules // SUBPACKAGES)
    src.mkdir(parents=True)
    (src / "__init__.py").write_text('"""A package generated to benchmark API references."""\n')
    count = 0
    for sub in range(SUBPACKAGES):
        package = src / f"sub{sub}"
        package.mkdir()
        (package / "__init__.py").write_text(f'"""Subpackage {sub}."""\n')
        for index in range(per_package):
            (package / f"mod{index}.py").write_text(_module(f"apipkg.sub{sub}", count))
            count += 1
    (root / "pyproject.toml").write_text('[project]\nname = "apipkg"\nversion = "0"\n')
    docs = root / "docs"
    (docs / "_templates" / "autosummary").mkdir(parents=True)
    (docs / "conf.py").write_text(CONF)
    (docs / "_templates" / "autosummary" / "module.rst").write_text(MODULE_TEMPLATE)
    pages = ["intro", "install", "tutorial", "concepts", "faq"]
    (docs / "index.rst").write_text(
        "apipkg\n======\n\n.. toctree::\n   :maxdepth: 1\n\n"
        + "".join(f"   {p}\n" for p in pages)
        + "   api\n   auto_examples/index\n"
    )
    for page in pages:
        title = page.capitalize()
        (docs / f"{page}.rst").write_text(
            f".. _{page}:\n\n{title}\n{'=' * len(title)}\n\n"
            "See :func:`apipkg.sub0.mod0.mean_0`, :class:`apipkg.sub1.mod0.Model"
            f"{per_package}` and :ref:`intro`.\n\nSection\n-------\n\nText.\n"
        )
    (docs / "api.rst").write_text(
        "API reference\n=============\n\n.. autosummary::\n   :toctree: api\n"
        "   :recursive:\n\n   apipkg\n"
    )
    examples = docs / "examples"
    examples.mkdir()
    (examples / "README.txt").write_text("Examples\n========\n")
    for index in range(3):
        used = min(index, per_package - 1)  # module ``used`` of sub0 defines mean_<used>
        (examples / f"plot_example{index}.py").write_text(
            f'"""\nExample {index}\n==========\n\nA computation.\n"""\n\n'
            f"from apipkg.sub0.mod{used} import mean_{used}\n\n"
            f"print(mean_{used}([1.0, 2.0]))\n"
        )


def one_change(root: Path) -> None:
    """One function's docstring, in a module of the middle."""
    modules = sorted((root / "src" / "apipkg" / "sub5").glob("mod*.py"))
    module = modules[len(modules) // 2]
    text = module.read_text()
    module.write_text(text.replace("Compute the mean", "Work out the mean", 1))


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Bench:
    def __init__(self, workdir: Path, modules: int, jobs: int) -> None:
        self.workdir = workdir
        self.source = workdir / "source"
        self.project = workdir / "project"
        self.jobs = jobs
        generate(self.source, modules)

    def copy(self, changed: bool) -> None:
        shutil.rmtree(self.project, ignore_errors=True)
        shutil.copytree(self.source, self.project)
        if changed:
            one_change(self.project)

    def build(self, cache: Path, changed: bool) -> tuple[float, float, dict]:
        """A build of a fresh copy with ``cache``; wall and CPU seconds, the report."""
        self.copy(changed)
        docs = self.project / "docs"
        outdir = docs / "_build" / "html"
        env = {**os.environ, "DOCSACCEL_CACHE": str(cache), "MPLBACKEND": "agg"}
        command = [sys.executable, "-m", "sphinx", "-q", "-b", "html", "-j", str(self.jobs)]
        cpu, started = _children_cpu(), time.perf_counter()
        done = subprocess.run(
            [*command, str(docs), str(outdir)], env=env, capture_output=True, text=True
        )
        seconds, cpu = time.perf_counter() - started, _children_cpu() - cpu
        if done.returncode != 0:
            sys.exit(f"build failed:\n{done.stderr[-3000:]}")
        report = json.loads((outdir / "docsaccel" / "report.json").read_text())
        return seconds, cpu, report

    def output(self) -> dict[str, bytes]:
        return output_files(self.project / "docs" / "_build" / "html")


def identical(mine: dict[str, bytes], clean: dict[str, bytes]) -> float:
    return 1 - len(differences(mine, clean)) / max(len(set(mine) | set(clean)), 1)


def _state(report: dict) -> dict:
    return report["build"].get("sphinx_state") or {}


def api_project(args: argparse.Namespace, workdir: Path) -> dict:
    bench = Bench(workdir, args.modules, args.jobs)
    warm = {False: workdir / "warm-unchanged", True: workdir / "warm-changed"}
    clean_output: dict[bool, dict[str, bytes]] = {}
    times: dict[str, list[float]] = {"clean": [], "noop": [], "one_change": []}
    cpus: dict[str, list[float]] = {k: [] for k in times}
    pages: dict[str, tuple[int, int]] = {}
    fractions: list[float] = []
    # The warm caches: a build of the unchanged tree (and its clean output).
    for changed in (False, True):
        cache = workdir / f"prime-{changed}"
        seconds, cpu, report = bench.build(cache, changed)
        clean_output[changed] = bench.output()
        print(f"prime ({'changed' if changed else 'unchanged'} tree): {seconds:.1f} s")
        if not changed:
            shutil.copytree(cache, warm[False])
    pages_total = len(_state(report).get("read", {}))
    for index in range(args.rounds):
        kinds = ["clean", "noop", "one_change"]
        for kind in kinds if index % 2 == 0 else reversed(kinds):
            cache = workdir / f"cache-{kind}-{index}"
            shutil.rmtree(cache, ignore_errors=True)
            if kind != "clean":
                shutil.copytree(warm[False], cache)
            changed = kind == "one_change"
            seconds, cpu, report = bench.build(cache, changed)
            state = _state(report)
            times[kind].append(seconds)
            cpus[kind].append(cpu)
            pages[kind] = (len(state.get("read", {})), int(state.get("written", 0)))
            mine = bench.output()
            fraction = identical(mine, clean_output[changed])
            fractions.append(fraction)
            for name in differences(mine, clean_output[changed])[:10]:
                print(f"  differs from a clean build: {name}")
            print(
                f"round {index + 1} {kind}: {seconds:.1f} s (CPU {cpu:.1f} s), "
                f"read {pages[kind][0]}, written {pages[kind][1]}, identical {fraction:.4f}"
            )
    clean = statistics.median(times["clean"])
    clean_cpu = statistics.median(cpus["clean"])
    return {
        "modules": args.modules,
        "pages": pages_total,
        "clean_seconds": round(clean, 2),
        "noop_seconds": round(statistics.median(times["noop"]), 2),
        "one_change_seconds": round(statistics.median(times["one_change"]), 2),
        "noop_ratio": round(clean / statistics.median(times["noop"]), 2),
        "one_change_ratio": round(clean / statistics.median(times["one_change"]), 2),
        "noop_cpu_ratio": round(clean_cpu / statistics.median(cpus["noop"]), 2),
        "one_change_cpu_ratio": round(clean_cpu / statistics.median(cpus["one_change"]), 2),
        "clean_read_written": pages["clean"],
        "noop_read_written": pages["noop"],
        "one_change_read_written": pages["one_change"],
        "identical_fraction": min(fractions),
    }


def this_project(args: argparse.Namespace, workdir: Path) -> dict:
    """This project's docs from fresh copies: the examples restored from a warm cache,
    Sphinx from scratch (today) or its state restored too, alternating."""
    source = ROOT / ".docsaccel-cache"
    warm = workdir / "docs-cache"
    if source.is_dir():
        shutil.copytree(source, warm, ignore=shutil.ignore_patterns("sphinx"))
    copy = workdir / "docs-copy"
    # With the examples warm, one build with the Sphinx state on stores the state.
    built = timed_build(copy, {"DOCSACCEL_CACHE": str(warm)})
    print(f"docs: priming build {built.seconds:.1f} s")
    times: dict[str, list[float]] = {"today": [], "restored": []}
    cpus: dict[str, list[float]] = {"today": [], "restored": []}
    read = written = 0
    for index in range(args.docs_rounds):
        for kind in ("today", "restored") if index % 2 == 0 else ("restored", "today"):
            cache = workdir / f"docs-cache-{kind}-{index}"
            shutil.copytree(warm, cache)
            env = {"DOCSACCEL_CACHE": str(cache)}
            if kind == "today":
                env["DOCSACCEL_CACHE_SPHINX"] = "0"
            built = timed_build(copy, env)
            times[kind].append(built.seconds)
            cpus[kind].append(built.cpu_seconds)
            state = _state(built.report)
            why = ""
            if kind == "restored":
                reasons = state.get("read", {})
                read, written = len(reasons), int(state.get("written", 0))
                why = "".join(f"\n  read: {d}: {r}" for d, r in sorted(reasons.items()))
            cpu = built.cpu_seconds
            print(f"docs round {index + 1} {kind}: {built.seconds:.1f} s (CPU {cpu:.1f} s){why}")
            shutil.rmtree(cache, ignore_errors=True)
    today, restored = statistics.median(times["today"]), statistics.median(times["restored"])
    return {
        "today_seconds": round(today, 2),
        "restored_seconds": round(restored, 2),
        "ratio": round(today / restored, 2),
        "cpu_ratio": round(
            statistics.median(cpus["today"]) / statistics.median(cpus["restored"]), 2
        ),
        "restored_read_written": (read, written),
    }


def main() -> None:
    # A line per build as it ends, also when the output is a file or a pipe.
    sys.stdout.reconfigure(line_buffering=True)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modules", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the generated project")
    parser.add_argument("--docs-rounds", type=int, default=2, help="rounds of this project's docs")
    parser.add_argument("--jobs", type=int, default=1, help="sphinx-build -j")
    parts = parser.add_mutually_exclusive_group()
    parts.add_argument("--skip-project", action="store_true", help="only the generated project")
    parts.add_argument("--skip-api", action="store_true", help="only this project's docs")
    parts.add_argument(
        "--networkx", action="store_true", help="only networkx's docs (needs --replay-dir)"
    )
    parser.add_argument(
        "--replay-dir", type=Path, help="where networkx's sdist, trees and venvs are kept"
    )
    parser.add_argument(
        "--cases",
        default=",".join(nx_docs.CASES),
        help=f"networkx cases, comma-separated (default: all of {','.join(nx_docs.CASES)})",
    )
    args = parser.parse_args()
    if args.rounds < 1 or args.docs_rounds < 1 or args.modules < SUBPACKAGES:
        parser.error(f"--rounds and --docs-rounds must be >= 1, --modules >= {SUBPACKAGES}")
    if args.networkx:
        cases = tuple(c for c in args.cases.split(",") if c)
        unknown = sorted(set(cases) - set(nx_docs.CASES))
        if args.replay_dir is None or unknown or not cases:
            parser.error(
                f"--networkx needs --replay-dir and --cases from {','.join(nx_docs.CASES)} "
                f"(unknown: {','.join(unknown) or 'none'})"
            )
        workdir = args.replay_dir.resolve() / "incremental"
        networkx = nx_docs.run(args.replay_dir.resolve(), workdir, args.rounds, cases)
        print(json.dumps({"networkx": networkx}), flush=True)
        return
    result: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-incremental-") as tmp:
        workdir = Path(tmp)
        if not args.skip_api:
            result.update(api_project(args, workdir))
        if not args.skip_project:
            result["project_docs"] = this_project(args, workdir)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
