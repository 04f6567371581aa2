"""What a build decided for each example, as ``last-build.json`` keeps it: the next build
says why an example with no entry has none, and ``docsaccel cache explain`` says what the
last build did with it.

>>> ExampleDecision.from_json({"status": "failed", "error": "ValueError: x"}).error
'ValueError: x'
>>> ExampleDecision.from_json("passed") is None
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ExampleDecision", "decisions_from_json"]


@dataclass(frozen=True)
class ExampleDecision:
    """One example's outcome in a build, and why it ran or was not stored."""

    #: Its record's status (``passed``, ``failed``, ``cached``...).
    status: str | None = None
    #: Why it ran rather than being restored (its record's ``cache.reason``).
    reason: str | None = None
    #: The last line of its error, when it failed.
    error: str | None = None
    #: Why it made no entry although it passed (its dependencies said so).
    not_stored: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The stored form: the fields that are set."""
        fields = {"status": self.status, "reason": self.reason, "error": self.error}
        stored = {k: v for k, v in fields.items() if v is not None or k == "status"}
        if self.not_stored is not None:
            stored["not_stored"] = self.not_stored
        return stored

    @classmethod
    def from_json(cls, data: Any) -> ExampleDecision | None:
        """The decision stored as ``data``; ``None`` when it is none (a value of another
        kind); a field of the wrong kind is left unset."""
        if not isinstance(data, dict):
            return None
        return cls(**{k: _text(data.get(k)) for k in ("status", "reason", "error", "not_stored")})


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def decisions_from_json(data: Any) -> dict[str, ExampleDecision]:
    """``{example id: decision}`` of ``last-build.json``'s ``examples`` (``{}``: none)."""
    if not isinstance(data, dict):
        return {}
    found = {str(k): ExampleDecision.from_json(v) for k, v in data.items()}
    return {k: v for k, v in found.items() if v is not None}
