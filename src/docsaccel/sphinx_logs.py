"""Warnings logged through Sphinx, seen as they are made, kept, and given again.

The design, in full: the reports guide's *Design* section.

Example: a warning caught, kept as JSON and given again.

>>> from sphinx.util import logging as sphinx_logging
>>> capture = Capture()
>>> capture.start()
>>> sphinx_logging.getLogger("demo").warning(
...     "%s not found", "a.png", type="demo", subtype="thumb", location="/p/plot_a.py"
... )
>>> [found] = capture.stop()
>>> found.to_json()
{'message': 'a.png not found', 'level': 30, 'type': 'demo', 'subtype': 'thumb', \
'location': '/p/plot_a.py'}
>>> Logged.from_json(found.to_json()) == found
True
>>> found.relocated("/p", "/q").location
'/q/plot_a.py'
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Capture", "Logged", "handled_once", "sphinx_warns_here"]

#: Sphinx's logger (``sphinx.util.logging.NAMESPACE``), named here so that loading this
#: module loads no Sphinx: the cache's store uses :class:`Logged` in processes without it.
_NAMESPACE = "sphinx"


def handled_once(record: logging.LogRecord, key: str) -> bool:
    """Whether this process sees ``record`` for the first time under ``key`` (the
    attribute a watcher notes it with). Sphinx hands a warning it held back to the
    handlers again when it shows it, and a parallel worker's again in the main process:
    a watcher counts each once."""
    pid = os.getpid()
    if getattr(record, key, None) == pid:
        return False
    setattr(record, key, pid)
    return True


def sphinx_warns_here() -> bool:
    """Whether a warning logged in this process reaches Sphinx's warning stream (``-W``
    counts it): not in a worker process sphinx-gallery started, where Sphinx's logging
    is not set up."""
    from sphinx.util import logging as sphinx_logging

    logger = logging.getLogger(sphinx_logging.NAMESPACE)
    return any(isinstance(h, sphinx_logging.WarningStreamHandler) for h in logger.handlers)


@dataclass(frozen=True)
class Logged:
    """One warning (or error) as it was logged: its text without the type Sphinx adds,
    its level, type, subtype and location (a path, ``"path:line"``, or
    ``[docname, line]``), and whether it was to be shown once."""

    message: str
    level: int
    type: str | None = None
    subtype: str | None = None
    location: str | list[Any] | None = None
    once: bool = False

    @classmethod
    def of(cls, record: logging.LogRecord) -> Logged:
        """The warning of ``record``, as it was made (before Sphinx's handler changed it)."""
        from docutils import nodes
        from sphinx.util import logging as sphinx_logging

        location = getattr(record, "location", None)
        if isinstance(location, nodes.Node):
            location = sphinx_logging.get_node_location(location)
        elif isinstance(location, tuple):
            location = list(location)
        elif location is not None and not isinstance(location, str):
            location = str(location)
        return cls(
            message=logging.LogRecord.getMessage(record),
            level=record.levelno,
            type=getattr(record, "type", None),
            subtype=getattr(record, "subtype", None),
            location=location,
            once=bool(getattr(record, "once", False)),
        )

    def to_json(self) -> dict[str, Any]:
        found = asdict(self)
        return {k: v for k, v in found.items() if v is not None and v is not False}

    @classmethod
    def from_json(cls, data: Any) -> Logged:
        """Raises ``ValueError`` naming what is malformed."""
        if not isinstance(data, dict):
            raise ValueError(f"a logged warning is not an object: {data!r}")
        text, level = data.get("message"), data.get("level")
        if not isinstance(text, str) or not isinstance(level, int):
            raise ValueError(f"a logged warning has no message or level: {data!r}")
        kinds = [data.get("type"), data.get("subtype")]
        if not all(k is None or isinstance(k, str) for k in kinds):
            raise ValueError(f"a logged warning's type is not text: {data!r}")
        location = data.get("location")
        if not (location is None or isinstance(location, (str, list))):
            raise ValueError(f"a logged warning's location is malformed: {data!r}")
        return cls(text, level, kinds[0], kinds[1], location, bool(data.get("once")))

    def relocated(self, old: str, new: str) -> Logged:
        """The warning as a run in folder ``new`` makes it, when it ran in ``old``: a path
        under ``old`` in its text or location is under ``new``."""
        if old == new:
            return self
        prefix, replacement = os.path.join(old, ""), os.path.join(new, "")
        location = self.location
        if isinstance(location, str):
            location = location.replace(prefix, replacement)
        text = self.message.replace(prefix, replacement)
        return Logged(text, self.level, self.type, self.subtype, location, self.once)

    def replay(self, logger_name: str) -> None:
        """Log it again through Sphinx's logging (its filters, ``-W`` included, apply)."""
        from sphinx.util import logging as sphinx_logging

        location = self.location
        if isinstance(location, list):
            location = tuple(location)
        sphinx_logging.getLogger(logger_name).log(
            self.level,
            "%s",
            self.message,
            type=self.type,
            subtype=self.subtype,
            location=location,
            once=self.once,
        )


class Capture(logging.Handler):
    """Collects the warnings Sphinx's logger is handed between :meth:`start` and
    :meth:`stop`, except those ``keep`` turns down.

    It goes first among the logger's handlers: Sphinx's own handler changes a record as it
    shows it (the type appended to its text, the location made a path), and with ``-W``
    raises before the handlers after it see the record."""

    def __init__(self, keep: Callable[[Logged], bool] = lambda logged: True) -> None:
        super().__init__(logging.WARNING)
        self.keep = keep
        self.found: list[Logged] = []

    def emit(self, record: logging.LogRecord) -> None:
        if not handled_once(record, "_docsaccel_captured"):
            return
        logged = Logged.of(record)
        if self.keep(logged):
            self.found.append(logged)

    def start(self) -> None:
        self.found = []
        logger = logging.getLogger(_NAMESPACE)
        if self not in logger.handlers:
            logger.handlers.insert(0, self)

    def stop(self) -> list[Logged]:
        logging.getLogger(_NAMESPACE).removeHandler(self)
        found, self.found = self.found, []
        return found
