"""A count with its noun, in the singular for one: every message counting things says
them the same way (``"1 example"``, ``"2 examples"``)."""

from __future__ import annotations

__all__ = ["counted"]


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` followed by ``noun``, or by ``plural`` (``noun`` + ``"s"`` unless given)
    when ``count`` is not one.

    >>> counted(1, "example"), counted(2, "example"), counted(0, "entry", "entries")
    ('1 example', '2 examples', '0 entries')
    """
    return f"{count} {noun if count == 1 else plural or noun + 's'}"
