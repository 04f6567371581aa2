"""Whether the processes an example started are gone: no child outlives its example,
nor any process that inherited the variable ``plot_h_pool.py`` sets (its pool's workers);
waiting until an example of a build running in the background has started its child;
holding ``plot_wait.py`` until the test has acted; a build held by a flag file until
the test lets it go; and a build terminated (a CI job cancelled) while one runs.

Example::

    assert_no_child_survives(src, expected=2)  # the pids the example wrote, all ended
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from docsaccel import layout
from docsaccel.records import read_records
from helpers.gallery_build import child_env, sphinx_command

__all__ = [
    "alive",
    "assert_no_child_survives",
    "assert_no_marked_process_survives",
    "flag_waiter",
    "held_build",
    "hold",
    "kill_children",
    "marked_processes",
    "release",
    "shard_projects",
    "start_shard_command",
    "start_shard_local",
    "terminated_while_running",
    "wait_until_a_shard_runs",
    "wait_until_running",
]


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"


def assert_no_child_survives(src: Path, expected: int) -> None:
    """The ``expected`` pids listed in ``examples/child_pids.txt`` all end within 10 s."""
    pids_file = src / "examples" / "child_pids.txt"
    pids = [int(line) for line in pids_file.read_text().split()]
    assert len(pids) == expected
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in pids if alive(pid)], "a process an example started survived"


#: The variable ``plot_h_pool.py`` sets before it starts anything, so every process it
#: starts, and every process those start, inherits it: the folder the example ran in.
STARTED_IN = "DOCSACCEL_TEST_STARTED_IN"


def marked_processes(src: Path) -> dict[int, str]:
    """The running processes (pid: command line) that inherited :data:`STARTED_IN` from
    an example of ``src``, however far down and whatever their parent is now."""
    mark = f"{STARTED_IN}={(src / 'examples').resolve()}".encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if mark in environ and alive(int(entry.name)):
            found[int(entry.name)] = command.strip()
    return found


def assert_no_marked_process_survives(src: Path) -> None:
    """Every process an example of ``src`` started (:func:`marked_processes`) ends within
    10 s of its build's end."""
    deadline = time.monotonic() + 10
    while marked_processes(src) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = marked_processes(src)
    assert not left, f"processes an example started outlived the build: {left}"


#: While this file lies in a project's examples folder, ``plot_wait.py`` keeps waiting: a
#: test that stops a build while it runs cannot lose the race to its end on a busy machine.
HOLD = "wait.hold"

#: An example saying it started (``running.flag``) and running until the test lets it
#: end (``go.flag``), both in one folder whatever the folder its gallery runs it from.
FLAG_WAITER = '''"""
Waiter
======
"""
import time
from pathlib import Path

here = Path(FOLDER)
(here / "running.flag").touch()
deadline = time.monotonic() + 120
while not (here / "go.flag").exists() and time.monotonic() < deadline:
    time.sleep(0.05)
'''


def flag_waiter(folder: Path) -> str:
    """The text of an example that waits in ``folder`` (:data:`FLAG_WAITER`)."""
    return FLAG_WAITER.replace("FOLDER", repr(str(folder)))


def start_build(
    src: Path, outdir: Path, env: dict[str, str] | None = None, quiet: bool = True
) -> subprocess.Popen[str]:
    """A fresh ``python -m sphinx`` build of ``src`` into ``outdir`` in the background,
    its output and errors in one pipe (``quiet=False``: with the progress lines)."""
    return subprocess.Popen(
        sphinx_command(src, outdir, quiet=quiet),
        env=child_env(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@contextlib.contextmanager
def held_build(
    src: Path, outdir: Path, flag: Path, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[str]]:
    """A build of ``src`` into ``outdir`` in the background (``env``: variables it gets
    too), given to the test once ``flag`` exists (an example or an extension of the build
    wrote it, and now waits for ``go.flag`` beside it). On leaving, ``go.flag`` is
    written, so the build ends (or was ended by the test), and a build still running
    after that is killed."""
    process = start_build(src, outdir, env=env)
    try:
        deadline = time.monotonic() + 120  # a guard, not a timing
        while not flag.exists() and process.poll() is None:
            assert time.monotonic() < deadline, f"the build never wrote {flag}"
            time.sleep(0.05)
        yield process
    finally:
        flag.with_name("go.flag").touch()
        if process.returncode is None:  # the test did not read its output to the end
            try:
                process.communicate(timeout=300)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()


def hold(src: Path) -> None:
    """Keep ``plot_wait.py`` of ``src`` running past its usual wait until :func:`release`."""
    (src / "examples" / HOLD).touch()


def release(src: Path) -> None:
    """Let ``plot_wait.py`` of ``src`` end after its usual wait."""
    (src / "examples" / HOLD).unlink(missing_ok=True)


def wait_until_running(src: Path, name: str, process: subprocess.Popen[str]) -> None:
    """Wait until ``name`` has started (journalled) and started its child process."""
    records = layout.records_dir(src / "_build" / "html")
    end = time.monotonic() + 120
    while time.monotonic() < end and process.poll() is None:
        started = f"examples/{name}" in read_records(records)
        if started and (src / "examples" / "child_pids.txt").is_file():
            return
        time.sleep(0.1)
    raise AssertionError(f"{name} never started: {process.communicate()[0]}")


def shard_projects(src: Path) -> list[Path]:
    """The shards' copies of the project ``src`` (each holds ``examples/``) that a
    ``shard-local`` run made in its work folder."""
    return sorted((src / "_build" / "shard-work").glob("*/project"))


def start_shard_local(
    cwd: Path, *args: str, output: int = subprocess.PIPE
) -> subprocess.Popen[str]:
    """``docsaccel shard-local *args``: :func:`start_shard_command`."""
    return start_shard_command(cwd, "shard-local", *args, output=output)


def start_shard_command(
    cwd: Path, command: str, *args: str, output: int = subprocess.PIPE
) -> subprocess.Popen[str]:
    """``docsaccel <command> *args`` (a shard command) started from ``cwd`` in the
    background, fast path on, in a session of its own (so a test can signal or kill the
    whole group)."""
    return subprocess.Popen(
        [sys.executable, "-m", "docsaccel.cli", command, *args],
        cwd=cwd,
        env=child_env({"DOCSACCEL_FAST": "1"}),
        stdout=output,
        stderr=output,
        text=True,
        start_new_session=True,
    )


def wait_for_mark(mark: Path, process: subprocess.Popen[str]) -> str:
    """The text of the file ``mark`` once something in the running ``process`` wrote it
    (an example that started, a build held at a moment): a guard, not a timing. Fails
    with the process's output if it ends first."""
    for _ in range(3000):
        text = mark.read_text() if mark.is_file() else ""
        if text:
            return text
        if process.poll() is not None:
            out, err = process.communicate()
            raise AssertionError(f"{mark.name} was never written: {out}{err or ''}")
        time.sleep(0.2)
    raise AssertionError(f"{mark.name} was never written")


def wait_until_a_shard_runs(src: Path, process: subprocess.Popen[str]) -> None:
    """Until a shard of the ``shard-local`` ``process`` runs ``plot_wait.py`` (it wrote its
    child's pid; a guard, not a timing)."""
    for _ in range(3000):
        if any((copy / "examples" / "child_pids.txt").is_file() for copy in shard_projects(src)):
            return
        assert process.poll() is None, process.communicate()
        time.sleep(0.2)
    raise AssertionError("plot_wait.py never started in a shard")


def kill_children(src: Path) -> None:
    """End the processes the examples started (``examples/child_pids.txt``, and those
    :func:`marked_processes` finds), if they outlived the build: a test's end does not
    wait for them."""
    pids = src / "examples" / "child_pids.txt"
    listed = [int(pid) for pid in (pids.read_text().split() if pids.is_file() else [])]
    for pid in [*listed, *marked_processes(src)]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def terminated_while_running(
    command: list[str],
    env: dict[str, str],
    src: Path,
    name: str,
    signum: int = signal.SIGTERM,
) -> subprocess.CompletedProcess[str]:
    """Run the build ``command``, send it ``signum`` once ``name`` runs (with its child),
    and return how it ended, its output merged, the example's child ended after it."""
    hold(src)
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        wait_until_running(src, name, process)
        process.send_signal(signum)
        process.wait(timeout=120)
    finally:
        kill_children(src)
        release(src)
    output = process.communicate(timeout=120)[0]
    return subprocess.CompletedProcess(command, process.returncode, output)
