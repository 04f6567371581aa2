"""A count with its noun, in the singular for one: every message counting things says
them the same way (``"1 example"``, ``"2 examples"``)."""

from __future__ import annotations

__all__ = ["count_of", "counted"]


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` followed by ``noun``, or by ``plural`` (``noun`` + ``"s"`` unless given)
    when ``count`` is not one.

    >>> counted(1, "example"), counted(2, "example"), counted(0, "entry", "entries")
    ('1 example', '2 examples', '0 entries')
    """
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def count_of(text: str, noun: str, plural: str | None = None) -> int | None:
    """The count ``text`` says when it is exactly what :func:`counted` writes for
    ``noun``, else ``None``: lines read back find their count as it was written.

    >>> count_of("1 example", "example"), count_of("3 examples", "example")
    (1, 3)
    >>> count_of("3 example", "example") is None
    True
    """
    number = text.partition(" ")[0]
    if not number.isdigit() or text != counted(int(number), noun, plural):
        return None
    return int(number)
