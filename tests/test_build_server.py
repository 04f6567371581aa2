"""A build forked from the test build server sees what a fresh ``python -m sphinx`` sees.

The project's ``conf.py`` writes down what a build could read of its process (its
environment, folder, import path, arguments, ``__main__``, signal handlers, standard
streams, which modules its names import); the same build is run fresh and forked, and
the two accounts must agree. Exit codes, output, exit handlers and a package shadowed by
a folder on ``PYTHONPATH`` are compared the same way.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from helpers import build_server
from helpers.gallery_build import child_env
from helpers.slow import require_slow

_ERROR_LOG = re.compile(r"sphinx-err-\w+\.log")
CONF = """
import atexit, json, multiprocessing, os, signal, sys
import __main__
import matplotlib, numpy

def _name(handler):
    return getattr(handler, "__name__", str(handler))

facts = {
    "probe": os.environ.get("PROBE"),
    "cwd": os.getcwd(),
    "path": sys.path[:2],
    "argv": sys.argv,
    "orig_argv": sys.orig_argv,
    "main": [__main__.__name__, os.path.basename(__main__.__file__), __main__.__spec__.name],
    "mp_main": sys.modules["__mp_main__"] is __main__,
    "main_names": sorted(n for n in vars(__main__) if not n.startswith("__")),
    "signals": {
        s.name: _name(signal.getsignal(s))
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGCHLD, signal.SIGALRM)
    },
    "streams": [
        [s.encoding, s.errors, s.line_buffering, s.write_through, s is getattr(sys, f"__{n}__")]
        for n, s in (("stdout", sys.stdout), ("stderr", sys.stderr))
    ],
    "matplotlib": [matplotlib.__file__, getattr(matplotlib, "SHADOW", None)],
    "backend": matplotlib.rcParams._get_backend_or_none(),
    "numpy": numpy.random.random(),
}
with open(os.environ["FACTS"], "w") as stream:
    json.dump(facts, stream)
print("conf out")
print("conf err", file=sys.stderr)
atexit.register(lambda: print("exit handler ran"))
"""


def _project(root: Path, conf: str = CONF) -> Path:
    src = root / "src"
    src.mkdir(parents=True)
    (src / "conf.py").write_text(conf, encoding="utf-8")
    (src / "index.rst").write_text("Probe\n=====\n", encoding="utf-8")
    return src


def _build(monkeypatch, src: Path, fresh: bool, tag: str, env=None, cwd: Path | None = None):
    monkeypatch.setenv(build_server.FRESH_ENV, "1" if fresh else "0")
    facts = src.parent / f"facts-{tag}.json"
    argv = [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(src), str(src / "_build")]
    done = build_server.run(
        argv,
        env=child_env({"PROBE": tag, "FACTS": str(facts), **(env or {})}),
        cwd=cwd or src.parent,
    )
    read = json.loads(facts.read_text("utf-8")) if facts.is_file() else None
    return done, read


@pytest.mark.slow
def test_a_forked_build_sees_what_a_fresh_build_sees(tmp_path, monkeypatch) -> None:
    require_slow()
    src = _project(tmp_path)
    library = tmp_path / "library"
    library.mkdir()
    env = {"PYTHONPATH": str(library), "MPLBACKEND": "svg"}
    numbers = set()
    # The second pair in another folder: a server's builds need not start where it did.
    for cwd in (tmp_path, src):
        fresh, fresh_facts = _build(monkeypatch, src, True, "fresh", env, cwd)
        forked, forked_facts = _build(monkeypatch, src, False, "forked", env, cwd)
        assert fresh.returncode == forked.returncode == 0, forked.stderr
        assert (forked.stdout, forked.stderr) == (fresh.stdout, fresh.stderr)
        assert "exit handler ran" in forked.stdout
        for facts in (fresh_facts, forked_facts):
            facts.pop("probe")
            facts["argv"], facts["orig_argv"] = facts["argv"][1:], facts["orig_argv"][1:]
            numbers.add(facts.pop("numpy"))
        assert forked_facts == fresh_facts
        assert fresh_facts["path"] == [str(cwd), str(library)]
        assert fresh_facts["backend"] == "svg"
    # A process's own seeds: no two builds draw the same numbers.
    assert len(numbers) == 4


@pytest.mark.slow
def test_a_package_shadowed_on_the_build_path_is_the_builds(tmp_path, monkeypatch) -> None:
    require_slow()
    src = _project(tmp_path)
    shadow = tmp_path / "shadow" / "matplotlib"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        "SHADOW = 'shadow'\n"
        "rcParams = type('R', (), {'_get_backend_or_none': staticmethod(lambda: None)})()\n",
        encoding="utf-8",
    )
    env = {"PYTHONPATH": str(shadow.parent)}
    fresh, fresh_facts = _build(monkeypatch, src, True, "fresh", env)
    forked, forked_facts = _build(monkeypatch, src, False, "forked", env)
    assert fresh.returncode == forked.returncode == 0, forked.stderr
    assert forked_facts["matplotlib"] == fresh_facts["matplotlib"]
    assert forked_facts["matplotlib"][1] == "shadow"


@pytest.mark.slow
@pytest.mark.parametrize(
    "conf", ["raise SystemExit(3)\n", "x = (\n", "import sys\nsys.exit('conf.py says no')\n"]
)
def test_a_failing_build_exits_and_says_as_a_fresh_one(tmp_path, monkeypatch, conf) -> None:
    require_slow()
    src = _project(tmp_path, conf)
    fresh, _ = _build(monkeypatch, src, True, "fresh")
    forked, _ = _build(monkeypatch, src, False, "forked")
    assert fresh.returncode != 0
    # Sphinx names a new temporary file for the traceback in each build.
    told = [_ERROR_LOG.sub("sphinx-err.log", d.stdout + d.stderr) for d in (fresh, forked)]
    assert forked.returncode == fresh.returncode
    assert told[1] == told[0]
