"""Random sequences of edits and builds, each successful build compared with a clean one.

A build with a cache folder keeps Sphinx's state and the example cache across builds; a
build that fails, is interrupted or is killed may leave either half-way. This applies
random steps to a small gallery project (the tests' fixtures): add, delete or edit an
example, make one raise (the build fails) or mend it, a build interrupted by SIGINT,
SIGTERM or SIGKILL while an example runs (``plot_wait.py``, held until the signal), a
normal build. After each successful build the output site is compared, file by file with
measured times masked, with a clean build of the same tree (a fresh copy, no cache). It
stops at the first difference and prints the sequence that led to it.

Usage::

    .venv/bin/python tools/fuzz_state_sequences.py --seed 1 --sequences 5 --steps 8
"""

from __future__ import annotations

import argparse
import hashlib
import random
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from helpers.gallery_build import FIXTURES, child_env, sphinx_command
from helpers.processes import hold, kill_children, release, wait_until_running

from docsaccel.incremental.oracle import differences, output_files

WAIT = "plot_wait.py"
#: The tree a clean build sees: what the project's author wrote, nothing a build made.
SOURCES = ("conf.py", "index.rst", "examples")
LEFT_BY_BUILDS = ("child_pids.txt", "wait.hold")
SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM, "SIGKILL": signal.SIGKILL}


def example_text(name: str, version: int, raises: bool = False) -> str:
    body = 'raise RuntimeError("broken on purpose")' if raises else f'print("{name} v{version}")'
    title = name.removesuffix(".py")
    return f'"""\n{title}\n{"=" * len(title)}\n\nVersion {version}.\n"""\n\n{body}\n'


class Project:
    """The project under ``root/src``, its cache in ``root/cache``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.src = root / "src"
        self.cache = root / "cache"
        (self.src / "examples").mkdir(parents=True)
        for name in ("conf.py", "index.rst"):
            shutil.copy(FIXTURES / name, self.src / name)
        shutil.copy(FIXTURES / "examples" / "README.rst", self.src / "examples")
        with (self.src / "conf.py").open("a", encoding="utf-8") as stream:
            # plot_wait.py last, so the examples before it finish before a signal.
            stream.write('sphinx_gallery_conf["within_subsection_order"] = "FileNameSortKey"\n')
        self.clean_outputs: dict[str, dict[str, bytes]] = {}

    @property
    def examples(self) -> Path:
        return self.src / "examples"

    @property
    def outdir(self) -> Path:
        return self.src / "_build" / "html"

    def names(self) -> list[str]:
        return sorted(p.name for p in self.examples.glob("plot_*.py") if p.name != WAIT)

    def raising(self) -> list[str]:
        return [n for n in self.names() if "broken on purpose" in (self.examples / n).read_text()]

    def run(self, cache: Path | None, src: Path) -> subprocess.CompletedProcess[str]:
        env = child_env({"DOCSACCEL_CACHE": str(cache)} if cache else {})
        command = sphinx_command(src, src / "_build" / "html")
        return subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=600, check=False
        )

    def interrupted(self, signum: int) -> int:
        hold(self.src)
        command = sphinx_command(self.src, self.outdir)
        env = child_env({"DOCSACCEL_CACHE": str(self.cache)})
        process = subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        try:
            (self.examples / "child_pids.txt").unlink(missing_ok=True)
            wait_until_running(self.src, WAIT, process)
            process.send_signal(signum)
            process.wait(timeout=120)
        finally:
            kill_children(self.src)
            release(self.src)
        process.communicate(timeout=120)
        return process.returncode

    def tree_digest(self) -> str:
        digest = hashlib.sha256()
        for path in sorted(self.examples.iterdir()):
            if path.is_file() and path.name not in LEFT_BY_BUILDS:
                digest.update(path.name.encode() + b"\0" + path.read_bytes())
        return digest.hexdigest()

    def clean_output(self) -> dict[str, bytes]:
        key = self.tree_digest()
        if key not in self.clean_outputs:
            clean = self.root / "clean"
            shutil.rmtree(clean, ignore_errors=True)
            clean.mkdir()
            for name in SOURCES:
                if (self.src / name).is_dir():
                    shutil.copytree(self.src / name, clean / name)
                else:
                    shutil.copy(self.src / name, clean / name)
            for name in LEFT_BY_BUILDS:
                (clean / "examples" / name).unlink(missing_ok=True)
            done = self.run(None, clean)
            if done.returncode != 0:
                raise RuntimeError(f"the clean build failed:\n{done.stdout}{done.stderr}")
            self.clean_outputs[key] = output_files(clean / "_build" / "html")
        return self.clean_outputs[key]


def step(project: Project, rng: random.Random, counter: list[int], last: str) -> str:
    """Apply one random step; return its description (and its outcome)."""
    names = project.names()
    kinds = ["add", "build", "build", "interrupt"]
    if names:
        kinds += ["delete", "delete", "edit", "raise"]
        if "interrupted" in last or "failed" in last:
            kinds += ["delete"] * 4  # what was reported: a delete after a build that stopped
    if project.raising():
        kinds += ["mend", "delete-raising"]
    kind = rng.choice(kinds)
    return apply(project, rng, counter, kind, names)


def apply(project: Project, rng: random.Random, counter: list[int], kind: str, names) -> str:
    if kind == "add":
        counter[0] += 1
        name = f"plot_ex{counter[0]}.py"
        (project.examples / name).write_text(example_text(name, 0))
        return f"add {name}"
    if kind == "delete":
        name = rng.choice(names)
        (project.examples / name).unlink()
        return f"delete {name}"
    if kind == "delete-raising":
        name = rng.choice(project.raising())
        (project.examples / name).unlink()
        return f"delete {name}"
    if kind in ("edit", "raise", "mend"):
        name = rng.choice(project.raising() if kind == "mend" else names)
        counter[0] += 1
        (project.examples / name).write_text(example_text(name, counter[0], kind == "raise"))
        return f"{kind} {name}"
    if kind == "interrupt":
        shutil.copy(FIXTURES / "examples" / WAIT, project.examples / WAIT)
        signame = rng.choice(sorted(SIGNALS))
        code = project.interrupted(SIGNALS[signame])
        if rng.random() < 0.5:
            (project.examples / WAIT).unlink()
            return f"build interrupted by {signame} (exit {code}), then delete {WAIT}"
        return f"build interrupted by {signame} (exit {code})"
    done = project.run(project.cache, project.src)
    if done.returncode != 0:
        return f"build (failed, exit {done.returncode})"
    found = differences(output_files(project.outdir), project.clean_output())
    if found:
        raise Difference(found)
    return "build (same as a clean build)"


class Difference(Exception):
    """A successful build's output differs from a clean build's."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sequences", type=int, default=5)
    parser.add_argument("--first", type=int, default=0, help="the first sequence's number")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--keep", action="store_true", help="keep the folders of a difference")
    args = parser.parse_args(argv)
    tried = 0
    for number in range(args.first, args.first + args.sequences):
        rng = random.Random(f"{args.seed}-{number}")
        root = Path(tempfile.mkdtemp(prefix="docsaccel-fuzz-"))
        project = Project(root)
        counter = [0]
        for _ in range(2):
            counter[0] += 1
            name = f"plot_ex{counter[0]}.py"
            (project.examples / name).write_text(example_text(name, 0))
        done: list[str] = ["start with plot_ex1.py, plot_ex2.py"]
        try:
            for _ in range(args.steps):
                tried += 1
                done.append(step(project, rng, counter, done[-1]))
                print(f"sequence {number} step {len(done) - 1}: {done[-1]}", flush=True)
            # Every sequence ends with a build that succeeds, so its end state is compared.
            for name in project.raising():
                done.append(apply(project, rng, counter, "mend", [name]))
            done.append(apply(project, rng, counter, "build", project.names()))
            print(f"sequence {number} final: {done[-1]}", flush=True)
        except Difference as difference:
            done.append(f"build: differs from a clean build in {difference.args[0]}")
            print("\n".join(["A difference, after:", *done]))
            print(f"folders kept in {root}" if args.keep else "")
            if not args.keep:
                shutil.rmtree(root, ignore_errors=True)
            return 1
        shutil.rmtree(root, ignore_errors=True)
    print(f"no difference in {args.sequences} sequences, {tried} steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
