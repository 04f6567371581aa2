"""Memory sizes as docsaccel reads and writes them, and how much memory the machine has.

The design, in full: the budgets guide's *Design* section.

Example:

>>> parse_size("6.5G", "docsaccel_memory_limit")
6979321856
>>> format_size(6979321856), format_size(512 * 1024 * 1024), format_size(1536)
('6.5G', '512M', '1.5K')
>>> parse_size("2", "memory")
Traceback (most recent call last):
...
docsaccel.contract.InputError: memory: '2' has no unit; write a size such as '500M' or '2G'
"""

from __future__ import annotations

import functools
import math
import os
import re
from typing import Any

from docsaccel.contract import InputError

__all__ = ["UNITS", "ceiling_room", "format_size", "machine_bytes", "parse_size"]

#: Bytes per unit; ``""`` (no unit) is bytes where a caller allows it.
UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_SIZE = re.compile(r"^\s*(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>[kmgt]?)(?:i?b)?\s*$", re.IGNORECASE)
#: A size beyond this (1 PiB) is a typo, whatever the machine.
MAX_BYTES = 1 << 50


#: The least room a memory ceiling leaves for the examples, whatever the build holds.
MIN_CEILING_ROOM = 64 << 20


def ceiling_room(held: int) -> int:
    """The least room a memory ceiling should leave above ``held``, what the build's
    processes hold before any example runs: a quarter of it, at least 64M. Sphinx's own
    memory moves by that much as it reads and writes, so a ceiling closer than this stops
    whichever example runs when it does, whatever that example uses.

    >>> ceiling_room(100 << 20) == MIN_CEILING_ROOM, ceiling_room(1 << 30) == 256 << 20
    (True, True)
    """
    return max(held // 4, MIN_CEILING_ROOM)


def parse_size(
    value: Any,
    where: str,
    error: type[Exception] = InputError,
    bare_bytes: bool = False,
    allow_zero: bool = False,
) -> int:
    """Bytes from a size such as ``"500M"``; raise ``error`` naming ``where`` and the value.

    ``bare_bytes``: a number without a unit is bytes (else it is refused); ``allow_zero``:
    0 is a size (else it is refused). Negative sizes and sizes above 1 PiB are refused.
    """
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise error(f"{where}: a size is a string such as '500M' or '2G', got {value!r}")
    text = str(value).strip()
    if text.startswith("-"):
        least = "0 or more" if allow_zero else "more than 0"
        raise error(f"{where}: {value!r} is negative; a size is {least}")
    match = _SIZE.match(text)
    if not match:
        bytes_too = " or 1048576 (bytes)" if bare_bytes else " or '6.5G'"
        raise error(f"{where}: {value!r} is not a size; write e.g. '500M', '2G'{bytes_too}")
    unit = match.group("unit").lower()
    has_unit = bool(unit) or text.lower().endswith("b")
    if not has_unit and not bare_bytes:
        raise error(f"{where}: {value!r} has no unit; write a size such as '500M' or '2G'")
    size = float(match.group("number")) * UNITS[unit]
    if not math.isfinite(size) or size < (0 if allow_zero else 1):
        raise error(f"{where}: {value!r} is not more than 0 bytes")
    if size > MAX_BYTES:
        raise error(f"{where}: {value!r} is more than {format_size(MAX_BYTES)}")
    return int(size)


def format_size(size: float) -> str:
    """Bytes as :func:`parse_size` reads them back, to 3 significant digits: ``"1.5G"``."""
    for unit in ("T", "G", "M", "K"):
        scale = UNITS[unit.lower()]
        if abs(size) >= scale:
            value = size / scale
            return f"{value:.0f}{unit}" if abs(value) >= 100 else f"{value:.3g}{unit}"
    return f"{round(size)}B"


def _read_number(path: str) -> int | None:
    try:
        with open(path, encoding="ascii") as stream:
            text = stream.read(64).strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None  # cgroup v2 writes "max" for no limit


def _cgroup_limits() -> list[int]:
    """The memory limits of this process's control group (v2 ``memory.max``, v1
    ``memory.limit_in_bytes``), where the file system shows them."""
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as stream:
            lines = stream.read().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        hierarchy, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if hierarchy == "0" and controllers == "":
            candidates = [f"/sys/fs/cgroup{path}/memory.max", "/sys/fs/cgroup/memory.max"]
        elif "memory" in controllers.split(","):
            base = "/sys/fs/cgroup/memory"
            candidates = [f"{base}{path}/memory.limit_in_bytes", f"{base}/memory.limit_in_bytes"]
        else:
            continue
        for candidate in candidates:
            limit = _read_number(os.path.normpath(candidate))
            if limit is not None:
                found.append(limit)
                break
    return found


def _mem_total() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as stream:
            for line in stream:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


@functools.cache
def machine_bytes() -> int | None:
    """The memory this process can have at most: the machine's, or its control group's
    limit when lower; ``None`` when neither can be read."""
    limits = [size for size in (_mem_total(), *_cgroup_limits()) if size]
    return min(limits) if limits else None
