"""What an example's child processes run is part of its dependencies, in real builds from
fresh copies sharing a cache, and children behave as they would without the plugin.

The examples (``helpers.children_project``) run ``mylib.work.triple`` only in child
processes: pool workers of every start method, a ``ProcessPoolExecutor``, joblib's loky,
and a Python started with ``subprocess`` (``mylib.other.triple``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cache_project import Build, Project, example_source
from helpers.children_project import OTHER, WORK, children_project

from docsaccel.cache.manage import explain

pytestmark = pytest.mark.slow

FOLLOWED = [
    "plot_pool_fork.py",
    "plot_pool_spawn.py",
    "plot_pool_forkserver.py",
    "plot_executor.py",
    "plot_loky.py",
    "plot_subprocess.py",
]


def _entry(project: Project, name: str) -> dict:
    (folder,) = (project.cache / "entries").glob(f"examples__{name}--*")
    return json.loads((folder / "entry.json").read_text("utf-8"))


def _page(build: Build, name: str) -> str:
    return (build.outdir / "auto_examples" / f"{Path(name).stem}.html").read_text("utf-8")


def _pids(tmp_path: Path) -> dict[str, str]:
    path = tmp_path / "worker-pids.txt"
    path.touch()
    return {"WORKER_PIDS": str(path)}


def _running(pids_file: str) -> list[int]:
    """The processes of the file that are still running (not zombies)."""
    running = []
    for word in Path(pids_file).read_text("utf-8").split():
        try:
            stat = Path(f"/proc/{word}/stat").read_text("utf-8")
        except OSError:
            continue
        if stat[stat.rfind(")") + 2] not in "ZX":
            running.append(int(word))
    return running


@pytest.mark.parametrize("granularity", ["module", "function"])
def test_editing_what_only_children_run_reruns_the_example(
    tmp_path: Path, granularity: str
) -> None:
    project = children_project(tmp_path, FOLLOWED, granularity)
    env = _pids(tmp_path)
    first = project.build(env=env)
    assert first.returncode == 0, first.output
    assert first.executed() == set(FOLLOWED)
    for name in FOLLOWED:
        deps = _entry(project, name)["deps"]
        path = "mylib/other.py" if name == "plot_subprocess.py" else "mylib/work.py"
        if granularity == "function":
            assert "triple" in deps["code"].get(path, {}), (name, deps)
            assert "unused" not in deps["code"][path]
        else:
            assert path in deps["files"], (name, deps)
        assert deps["children"]["followed"] >= 1, (name, deps["children"])
    assert "[3, 6, 9]" in _page(first, "plot_pool_spawn.py")
    assert project.build(env=env).executed() == set()

    if granularity == "function":
        # A function of the same file that no child ran changes nothing.
        project.write("mylib/work.py", WORK.replace("return 0", "return 1"))
        assert project.build(env=env).executed() == set()
    project.write("mylib/work.py", WORK.replace("3 * x", "4 * x"))
    project.write("mylib/other.py", OTHER.replace("3 * x", "4 * x"))
    edited = project.build(env=env)
    assert edited.returncode == 0, edited.output
    assert edited.executed() == set(FOLLOWED)
    reason = edited.records["plot_pool_fork.py"]["cache"]["reason"]
    expected = (
        "mylib/work.py: triple changed" if granularity == "function" else "mylib/work.py changed"
    )
    assert reason == expected
    for name in FOLLOWED[:-1]:
        assert "[4, 8, 12]" in _page(edited, name), name
    assert "subprocess 8" in _page(edited, "plot_subprocess.py")
    assert _running(env["WORKER_PIDS"]) == []


BEHAVE = [
    "plot_unclosed_fork.py",
    "plot_unclosed_forkserver.py",
    "plot_pool_forkserver.py",  # a second forkserver pool, after the first one's example
    "plot_os_fork.py",
    "plot_loky.py",
    "plot_joblib_mp.py",
]


@pytest.mark.parametrize("cache", ["off", "module", "function"])
@pytest.mark.parametrize("parallel", [False, True])
def test_children_end_as_they_would_without_the_plugin(
    tmp_path: Path, cache: str, parallel: bool
) -> None:
    # A forkserver pool hangs in sphinx-gallery's own parallel workers, without docsaccel
    # too (loky sets the start method its children cannot find): left out there.
    examples = [n for n in BEHAVE if not (parallel and "forkserver" in n)]
    conf = '"parallel": 2,' if parallel else ""
    project = children_project(tmp_path, examples, "module" if cache == "off" else cache, conf)
    env = _pids(tmp_path)
    if cache == "off":
        env["DOCSACCEL_CACHE"] = "0"
    built = project.build(env=env)
    assert built.returncode == 0, built.output
    assert {name: r["status"] for name, r in built.records.items()} == dict.fromkeys(examples, "ok")
    assert _running(env["WORKER_PIDS"]) == []
    if cache != "off":
        # A child that outlived its example (the os.fork one, ended with it) may have run
        # more than it recorded: that example is not stored; the pools' are.
        assert "plot_os_fork.py" in built.executed()
        stored = {p.name.split("--")[0] for p in (project.cache / "entries").iterdir()}
        assert stored == {f"examples__{n}" for n in examples if n != "plot_os_fork.py"}
        assert "not storing examples/plot_os_fork.py" in built.output
        assert "had not exited when the example ended" in built.output


NOT_FOLLOWED = {
    "plot_shell.py": (
        "import subprocess\n\n"
        "out = subprocess.run(['sh', '-c', 'cat ../../data/table.csv'], capture_output=True,\n"
        "                     text=True, check=True)\nprint(out.stdout)\n"
    ),
    "plot_no_site.py": (
        "import subprocess\nimport sys\n\n"
        "subprocess.run([sys.executable, '-S', '-c', 'print(1)'], check=True)\n"
    ),
    # Its child has time to start (and record so) before the example ends.
    "plot_left_running.py": (
        "import subprocess\nimport sys\nimport time\n\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        "time.sleep(3)\n"
    ),
    # A child subprocess forks to run preexec_fn, then becomes the program (imageio's
    # ffmpeg does so): the program is not followed, and no Python child is left waiting.
    "plot_preexec.py": (
        "import os\nimport subprocess\n\n"
        "subprocess.run(['true'], preexec_fn=os.setpgrp, check=True)\n"
    ),
    # A forked child that becomes a Python (os.execv): followed as that Python.
    "plot_exec.py": (
        "import os\nimport sys\n\n"
        "env = dict(os.environ, PYTHONPATH=os.path.abspath('../..'))\n"
        "pid = os.fork()\nif pid == 0:\n"
        "    code = 'from mylib.other import triple; triple(2)'\n"
        "    os.execve(sys.executable, [sys.executable, '-c', code], env)\n"
        "os.waitpid(pid, 0)\n"
    ),
    # Hostile: writes a bad record where its children's go.
    "plot_forged.py": (
        "import json\nimport os\n\n"
        "control = json.load(open(os.environ['DOCSACCEL_CACHE_CHILD']))\n"
        "with open(os.path.join(control['records'], '1.json'), 'w') as stream:\n"
        '    stream.write(\'{"schema": "docsaccel.cache-child", "version": 1, "seen": 3}\')\n'
    ),
}


def test_what_docsaccel_cannot_follow_is_named_or_never_stored(tmp_path: Path) -> None:
    project = children_project(tmp_path, [])
    for name, body in NOT_FOLLOWED.items():
        project.write(f"docs/examples/{name}", example_source(name, body))
    first = project.build()
    assert first.returncode == 0, first.output
    assert {name: r["status"] for name, r in first.records.items()} == dict.fromkeys(
        NOT_FOLLOWED, "ok"
    )
    stored = {p.name.split("--")[0] for p in (project.cache / "entries").iterdir()}
    assert stored == {
        f"examples__{n}" for n in ("plot_shell.py", "plot_preexec.py", "plot_exec.py")
    }
    children = _entry(project, "plot_shell.py")["deps"]["children"]
    assert children["not_followed"] == ["sh -c cat ../../data/table.csv"]
    assert _entry(project, "plot_preexec.py")["deps"]["children"]["not_followed"] == ["true"]
    assert "mylib/other.py" in _entry(project, "plot_exec.py")["deps"]["files"]
    text, code = explain("examples/plot_shell.py", project.cache, first.docs)
    assert code == 0
    assert "not followed (what they read is not seen): sh -c cat ../../data/table.csv" in text
    assert "-S: no site folder" in first.output
    assert "had not exited when the example ended" in first.output
    assert "a child process record is unreadable" in first.output
    again = project.build()
    assert again.executed() == {"plot_no_site.py", "plot_left_running.py", "plot_forged.py"}


def test_a_fork_bomb_is_bounded_by_the_budget(tmp_path: Path) -> None:
    bomb = (
        '# docsaccel_budget = "3s"\nimport os\nimport time\n\npids = []\n'
        "while len(pids) < 64:\n    pid = os.fork()\n    if pid == 0:\n"
        "        time.sleep(600)\n        os._exit(0)\n    pids.append(pid)\n"
        # Each child named as soon as it is made: on a loaded machine the budget may
        # end the example before all 64 are.
        "    with open(os.environ['WORKER_PIDS'], 'a') as stream:\n"
        "        stream.write(f'{pid}\\n')\n"
        "    time.sleep(0.02)\n"
        "time.sleep(600)\n"
    )
    project = children_project(tmp_path, [], conf="")
    project.write("docs/examples/plot_bomb.py", example_source("Bomb", bomb))
    project.write(
        "docs/conf.py",
        (project.pristine / "docs" / "conf.py").read_text("utf-8")
        + 'docsaccel_on_overrun = "fail"\n',
    )
    env = _pids(tmp_path)
    built = project.build(env=env)
    assert built.records["plot_bomb.py"]["status"] == "interrupted"
    assert built.returncode != 0
    assert Path(env["WORKER_PIDS"]).read_text("utf-8").split()
    assert _running(env["WORKER_PIDS"]) == []
    assert not (project.cache / "entries").exists() or not list(
        (project.cache / "entries").iterdir()
    )
    last = json.loads((project.cache / "last-build.json").read_text("utf-8"))
    assert (last["hits"], last["stored"], last["saved_seconds"]) == (0, 0, 0)


STATE = '''# docsaccel_budget = "60s"
import json
import multiprocessing
import os
import signal
import threading
import time

from docsaccel.cache.recorder import Recorder
from docsaccel import registry


def state(_=None):
    """What a forked child inherited of docsaccel: handlers, threads, locks."""
    return {
        "sigterm": repr(signal.getsignal(signal.SIGTERM)),
        "sigalrm": repr(signal.getsignal(signal.SIGALRM)),
        "threads": sorted(t.name for t in threading.enumerate()),
        "locks": [Recorder._lock.locked(), registry._lock.locked()],
    }


# Another thread holds docsaccel's locks while the children are forked.
held = threading.Event()


def hold():
    with Recorder._lock, registry._lock:
        held.set()
        time.sleep(3)


threading.Thread(target=hold, daemon=True).start()
held.wait()
read, write = os.pipe()
pid = os.fork()
if pid == 0:
    os.write(write, json.dumps(state()).encode())
    os._exit(0)
os.waitpid(pid, 0)
forked = json.loads(os.read(read, 65536))
with multiprocessing.get_context("fork").Pool(1) as pool:
    worker = pool.apply(state)
mine = state()
with open(os.environ["WORKER_PIDS"] + ".json", "w") as stream:
    json.dump({"forked": forked, "worker": worker, "parent": mine}, stream)
print("checked")
'''


def test_forked_children_get_no_handler_lock_or_thread_of_the_build(tmp_path: Path) -> None:
    project = children_project(tmp_path, [], "function")
    project.write("docs/examples/plot_state.py", example_source("State", STATE))
    conf = (project.pristine / "docs" / "conf.py").read_text("utf-8")
    project.write("docs/conf.py", conf + 'docsaccel_on_overrun = "fail"\n')
    env = _pids(tmp_path)
    built = project.build(env=env)
    assert built.returncode == 0, built.output
    found = json.loads(Path(env["WORKER_PIDS"] + ".json").read_text("utf-8"))
    # The parent, for contrast: its budget's alarm handler, and the holding thread.
    assert "Deadline._on_alarm" in found["parent"]["sigalrm"]
    assert any(name.startswith("docsaccel") for name in found["parent"]["threads"])
    for child in ("forked", "worker"):
        state = found[child]
        assert state["sigterm"] == "<Handlers.SIG_DFL: 0>", (child, state)
        assert state["sigalrm"] == "<Handlers.SIG_DFL: 0>", (child, state)
        assert state["locks"] == [False, False], (child, state)
        assert not any(name.startswith("docsaccel") for name in state["threads"]), state


SWALLOW = (
    '# docsaccel_budget = "1s"\nimport time\n\nwhile True:\n'
    "    try:  # noqa: SIM105 (the pattern of a real escape)\n        time.sleep(10)\n"
    "    except Exception:\n        pass\n"
)


def test_a_run_stopped_hard_is_never_an_example_cost(tmp_path: Path) -> None:
    project = children_project(tmp_path, ["plot_pool_fork.py"])
    project.write("docs/examples/plot_swallow.py", example_source("Swallow", SWALLOW))
    conf = (project.pristine / "docs" / "conf.py").read_text("utf-8")
    project.write("docs/conf.py", conf + 'docsaccel_on_overrun = "fail"\n')
    stopped = project.build(env={**_pids(tmp_path), "DOCSACCEL_INTERRUPT_GRACE": "1"})
    assert stopped.returncode != 0
    assert "was stopped hard after" in stopped.records["plot_swallow.py"]["error"]
    entries = project.cache / "entries"
    names = {p.name.split("--")[0] for p in entries.iterdir()} if entries.is_dir() else set()
    assert "examples__plot_swallow.py" not in names
    # No build that used the cache recorded seconds saved from it.
    last = project.cache / "last-build.json"
    assert not last.exists() or json.loads(last.read_text("utf-8"))["saved_seconds"] == 0
