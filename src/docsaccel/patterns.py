"""What an ``[examples]`` budget pattern matches: the one rule, the way gitignore reads one.

A pattern without a ``/`` matches an example's file name, in any sub-gallery of any
gallery; a pattern with a ``/`` matches its path inside its gallery folder, or its id as
reports show it (``<examples_dirs entry>/<path>``). Globs are :func:`fnmatch.fnmatchcase`'s.
The budget file, and so the fast-path budgets and every command that reads it, match
examples only through :func:`matches`.

Example:

>>> matches("plot_sleep.py", "advanced/plot_sleep.py")
True
>>> matches("basics/plot_*.py", "advanced/plot_sleep.py", "examples/advanced/plot_sleep.py")
False
>>> matches("examples/advanced/*", "advanced/plot_sleep.py", "examples/advanced/plot_sleep.py")
True
>>> closest("plot_sleap.py", [("advanced/plot_sleep.py", "examples/advanced/plot_sleep.py")])
['advanced/plot_sleep.py']
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from difflib import SequenceMatcher
from fnmatch import fnmatchcase

__all__ = ["MATCHED_AGAINST", "closest", "matches"]

#: What patterns are matched against, for the messages that need to say it.
MATCHED_AGAINST = (
    "a pattern without '/' matches an example's file name in any sub-gallery, 'plot_a.py'; "
    "one with '/' matches its path inside its gallery folder, 'basics/plot_a.py', or its "
    "id as reports show it, '<examples_dirs entry>/basics/plot_a.py'"
)

# As close as ``cache explain`` asks of a name it suggests: looser hints mislead.
_CLOSE = 0.8


def matches(pattern: str, name: str, example_id: str | None = None) -> bool:
    """Whether ``pattern`` matches the example whose path inside its gallery folder is
    ``name`` (posix) and whose id is ``example_id``."""
    if "/" not in pattern:
        return fnmatchcase(posixpath.basename(name), pattern)
    return fnmatchcase(name, pattern) or (
        example_id is not None and fnmatchcase(example_id, pattern)
    )


def closest(pattern: str, examples: Iterable[tuple[str, str | None]], count: int = 3) -> list[str]:
    """The example paths closest to ``pattern``, which matches none of ``examples``
    (``(path inside its gallery, id)`` pairs), for a "did you mean" hint: those tied for
    closest (several examples of one name), at most ``count``, each in the form the
    pattern is compared with (a path, or an id when that is closer)."""
    scored: dict[str, float] = {}
    for name, example_id in examples:
        if "/" not in pattern:
            forms = [(posixpath.basename(name), name)]
        else:
            forms = [(name, name)] + ([(example_id, example_id)] if example_id else [])
        ratio, shown = max(
            (SequenceMatcher(None, pattern, key).ratio(), shown) for key, shown in forms
        )
        if ratio >= _CLOSE:
            scored[shown] = max(ratio, scored.get(shown, 0.0))
    best = max(scored.values(), default=0.0)
    return sorted(shown for shown, ratio in scored.items() if ratio == best)[:count]
