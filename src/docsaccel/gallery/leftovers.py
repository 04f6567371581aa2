"""What an example leaves running in the build's process, and a bound on waiting for it.

Python waits for every non-daemon thread before it exits, then runs the exit handlers: a
thread an example started and never stopped, or an exit handler an example registered
that never returns, would keep a finished build from ever ending, whatever its budget.
The hook notes what each example leaves behind (:func:`before_example`,
:func:`after_example`); when the build ends, :func:`bound_exit` gives those threads and
handlers the hard stop's grace period, then ends the process with a failing status,
naming the examples. A process that ends in time is left alone, so the exit handlers of
libraries an example imports (torch registers some) cost nothing.

Example::

    mark = before_example()
    ...  # the example runs
    after_example("tutorials/plot_a.py", mark)
    ...  # at the end of the build
    bound_exit(grace=5.0, status=2)
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
import time

__all__ = ["after_example", "before_example", "bound_exit", "leftovers"]

# Example id -> what it left: non-daemon threads, and whether it added exit handlers.
_left: dict[str, tuple[list[threading.Thread], bool]] = {}
_real_exit = os._exit


def before_example() -> tuple[frozenset[int | None], int]:
    """The threads and the number of exit handlers before an example runs."""
    return frozenset(t.ident for t in threading.enumerate()), atexit._ncallbacks()


def after_example(example_id: str, mark: tuple[frozenset[int | None], int]) -> None:
    """Note the non-daemon threads and exit handlers the example added (in this process)."""
    idents, handlers = mark
    threads = [
        t for t in threading.enumerate() if t.ident not in idents and not t.daemon and t.is_alive()
    ]
    added_handlers = atexit._ncallbacks() > handlers
    if threads or added_handlers:
        _left[example_id] = (threads, added_handlers)


def leftovers() -> list[str]:
    """What examples left that can still hold the process: one description each."""
    found = []
    for example_id, (threads, handlers) in sorted(_left.items()):
        alive = [t.name for t in threads if t.is_alive()]
        if alive:
            found.append(f"{example_id} left thread(s) running: {', '.join(alive)}")
        elif handlers:
            found.append(f"{example_id} registered exit handler(s)")
    return found


def bound_exit(grace: float, status: int) -> None:
    """End this process with ``status`` if it has not ended ``grace`` seconds from now.

    Only when an example left a thread running or registered an exit handler; the timer
    is a daemon thread, so a process that ends in time ends as it would have.
    """
    if not leftovers():
        return

    def stop() -> None:
        time.sleep(grace)
        what = "; ".join(leftovers()) or "examples registered exit handlers"
        print(
            f"ERROR: docsaccel: the build's process had not ended {grace:g} s after the build: "
            f"{what}. Ended with status {status}; an example must stop what it starts.",
            file=sys.__stderr__,
            flush=True,
        )
        _real_exit(status)

    threading.Thread(target=stop, name="docsaccel-exit-bound", daemon=True).start()
