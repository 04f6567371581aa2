"""Whether the processes an example started are gone: no child outlives its example; and
waiting until an example of a build running in the background has started its child.

Example::

    assert_no_child_survives(src, expected=2)  # the pids the example wrote, all ended
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from docsaccel import layout
from docsaccel.records import read_records

__all__ = ["alive", "assert_no_child_survives", "wait_until_running"]


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
