"""Which example holds a finished build's process (:func:`process_end.stuck`), without a
build: a fresh interpreter stands in for the build's process and plays its examples."""

from __future__ import annotations

import json
import subprocess
import sys

from docsaccel.gallery import process_end

# An exit handler registered before the examples (conf.py's), one an example registers,
# one registered after the examples: each says, as it runs, what the guard would blame.
SCRIPT = """
import atexit, json
from docsaccel.gallery import process_end

def says(who):
    found = process_end.stuck()
    print(json.dumps([who, found.culprits, found.suspects]), flush=True)

atexit.register(says, "conf")
mark = process_end.before_example()
atexit.register(says, "example")
process_end.after_example("examples/plot_a.py", mark)
mark = process_end.before_example()
process_end.after_example("examples/plot_b.py", mark)
atexit.register(says, "late")
"""


def test_only_the_example_whose_exit_handler_runs_is_blamed() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60, check=True
    )
    said = [json.loads(line) for line in done.stdout.splitlines()]
    blamed = {"examples/plot_a.py": "an exit handler it registered did not return"}
    # Exit handlers run last registered first.
    assert said == [
        ["late", {}, ["examples/plot_a.py"]],
        ["example", blamed, []],
        ["conf", {}, ["examples/plot_a.py"]],
    ]


def test_an_exit_handler_running_in_a_worker_is_blamed_in_a_sentence(tmp_path) -> None:
    """A worker's word that an example's exit handler runs, that worker still running."""
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        said = {"id": "examples/plot_a.py", "running_handlers": True, "pid": worker.pid}
        (tmp_path / f"left-{worker.pid}.jsonl").write_text(json.dumps(said) + "\n")
        found = process_end.stuck(process_end.left_in_workers(tmp_path))
    finally:
        worker.kill()
        worker.wait()
    assert found.culprits == {
        "examples/plot_a.py": "an exit handler it registered did not return "
        f"(in worker process {worker.pid}, which did not end)"
    }
