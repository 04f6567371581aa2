"""Audit mode: run the examples the cache would restore, and compare what they produce.

The design, in full: the caching guide's *Design* section.
"""

from __future__ import annotations

import difflib
import io
import json
import os
import re
import shutil
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docsaccel import sg_compat
from docsaccel.cache.store import Entry

__all__ = [
    "AGAINST_THE_CACHE",
    "BETWEEN_RUNS",
    "Outputs",
    "compare_file",
    "copy_outputs",
    "dependency_labels",
    "differences",
    "entry_outputs",
    "mask_clock",
    "unexplained",
]

#: A date and time of day, as logs write them (``Tue Dec  1 22:21:57 2026``, ISO 8601,
#: ``22:21:57.123``): the clock, which no input of the example decides, and which two
#: runs a second apart may print alike (a library's log file, MuJoCo's ``MUJOCO_LOG.TXT``).
_CLOCK = re.compile(
    r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
    r" [ \d]\d \d\d:\d\d:\d\d \d{4}\b"
    r"|\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?"
    r"|\b\d\d:\d\d:\d\d(?:[.,]\d+)?\b"
)


def mask_clock(text: str) -> str:
    """``text`` with every date and time of day replaced by ``<clock>``.

    >>> mask_clock("WARNING Tue Dec  1 22:21:57 2026: compiler attribute")
    'WARNING <clock>: compiler attribute'
    """
    return _CLOCK.sub("<clock>", text)


#: At most this many differences are kept for a record: the first ones tell the story.
DIFFERENCES_KEPT = 20
_IMAGES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff"})
_DATA = frozenset({".json", ".ipynb"})


@dataclass
class Outputs:
    """One run's outputs: ``files`` by path inside the source dir, ``written`` (the files
    it wrote for later examples) by path relative to the project root."""

    files: dict[str, Path] = field(default_factory=dict)
    written: dict[str, Path] = field(default_factory=dict)


def entry_outputs(entry: Entry) -> Outputs:
    """What an entry would have restored."""
    return Outputs(
        files={relative: entry.path / "files" / relative for relative in entry.meta["files"]},
        written={relative: entry.path / "written" / relative for relative in entry.meta["written"]},
    )


def copy_outputs(outputs: Outputs, folder: Path) -> Outputs:
    """A copy of ``outputs`` in ``folder`` (a run's, before a second run replaces them)."""
    shutil.rmtree(folder, ignore_errors=True)
    copied = Outputs()
    for part, source, target in (
        ("files", outputs.files, copied.files),
        ("written", outputs.written, copied.written),
    ):
        for relative, path in source.items():
            copy = folder / part / relative
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, copy)
            target[relative] = copy
    return copied


#: How :func:`differences` names the two sides: an entry against a fresh run, or two runs.
AGAINST_THE_CACHE = ("in the cache", "now")
BETWEEN_RUNS = ("in the first run", "in the second")


def differences(
    before: Outputs, after: Outputs, sides: tuple[str, str] = AGAINST_THE_CACHE
) -> list[str]:
    """What differs between two runs' outputs, one line each (at most
    :data:`DIFFERENCES_KEPT`, the last saying how many more); ``sides`` names them."""
    found = list(_differences(before.files, after.files, "", sides))
    found += _differences(before.written, after.written, " (written for later examples)", sides)
    if len(found) > DIFFERENCES_KEPT:
        more = len(found) - DIFFERENCES_KEPT + 1
        found = [*found[: DIFFERENCES_KEPT - 1], f"and {more} more differences"]
    return found


def _differences(
    before: Mapping[str, Path], after: Mapping[str, Path], kind: str, sides: tuple[str, str]
) -> Iterator[str]:
    for relative in sorted(set(before) | set(after)):
        if sg_compat.is_measurement_file(relative):
            continue
        if relative.endswith(sg_compat.RUN_MARKER_SUFFIX):
            # The plugin's note of the run: the outputs it lists are compared one by one,
            # and whether a build with the cache wrote it (an entry stored before the
            # note said so) is no output of the example.
            continue
        if relative not in after:
            yield f"{relative}{kind}: only {sides[0]}"
        elif relative not in before:
            yield f"{relative}{kind}: only {sides[1]}"
        else:
            difference = compare_file(relative, before[relative], after[relative], sides)
            if difference is not None:
                yield f"{relative}{kind}: {difference}"


def compare_file(
    relative: str, before: Path, after: Path, sides: tuple[str, str] = AGAINST_THE_CACHE
) -> str | None:
    """How two versions of one output differ, in a few words; ``None`` when they do not
    (see the caching guide's design for what counts)."""
    try:
        old, new = before.read_bytes(), after.read_bytes()
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if old == new:
        return None
    suffix = os.path.splitext(relative)[1].lower()
    if relative.endswith(".rst"):
        return _text_difference(
            mask_clock(sg_compat.mask_measurements(old.decode("utf-8", "replace"))),
            mask_clock(sg_compat.mask_measurements(new.decode("utf-8", "replace"))),
            sides,
        )
    if suffix in _IMAGES:
        return _image_difference(old, new, sides)
    if suffix in _DATA:
        return _data_difference(old, new, sides)
    if suffix == ".zip":
        return _zip_difference(old, new, sides)
    try:
        return _text_difference(
            mask_clock(old.decode("utf-8")), mask_clock(new.decode("utf-8")), sides
        )
    except UnicodeDecodeError:
        return f"its bytes differ ({len(old)} → {len(new)} bytes)"


def unexplained(cached: Outputs, first: Outputs, second: Outputs) -> list[str]:
    """What the entry has otherwise than two fresh runs that differ from each other agree
    on: a change that randomness does not explain (a stale entry of an example that also
    varies). A file both runs wrote alike (or both left out) must be so in the entry; in a
    text file, every line both runs wrote must be in the entry, in their order, and so
    must a line they wrote at one place with tokens differing (a pid, a drawn number): a
    line of that shape, holding every token the two runs share there. Tokens, not
    characters: two pids share a digit by chance, never an input."""
    found: list[str] = []
    for kind, parts in (
        ("", (cached.files, first.files, second.files)),
        (" (written for later examples)", (cached.written, first.written, second.written)),
    ):
        entry, one, two = parts
        for relative in sorted(set(entry) | set(one) | set(two)):
            if sg_compat.is_measurement_file(relative):
                continue
            if relative not in one and relative not in two:
                found.append(f"{relative}{kind}: only in the cache, in neither fresh run")
            elif relative not in one or relative not in two:
                continue  # the runs differ on the file itself: nothing they agree on
            elif relative not in entry:
                found.append(f"{relative}{kind}: in both fresh runs, not in the cache")
            elif compare_file(relative, one[relative], two[relative], BETWEEN_RUNS) is None:
                difference = compare_file(relative, entry[relative], one[relative])
                if difference is not None:
                    found.append(f"{relative}{kind}: {difference} (the same in both runs)")
            else:
                missing = _missing_agreed_line(relative, entry[relative], one, two)
                if missing is not None:
                    found.append(
                        f"{relative}{kind}: line {missing.number}: {_short(missing.shown())} "
                        "in both fresh runs, not in the cache"
                    )
    return found


def _text_lines(relative: str, path: Path) -> list[str] | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if relative.endswith(".rst"):
        text = sg_compat.mask_measurements(data.decode("utf-8", "replace"))
        return mask_clock(text).splitlines()
    if os.path.splitext(relative)[1].lower() in _IMAGES | _DATA | {".zip"}:
        return None
    try:
        return mask_clock(data.decode("utf-8")).splitlines()
    except UnicodeDecodeError:
        return None


#: A token of a text line, as the audit compares lines two runs wrote differently: a
#: number whole (``45871``, ``0.25``, ``1e-3``), so two numbers never agree on a digit by
#: chance, a word, a run of spaces, or any other character.
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*(?:[eE][-+]?\d+)?|\w+|\s+|.")
#: How a line's tokens that differ between the two runs are shown in a message.
_VARIES = "<varies>"


@dataclass(frozen=True)
class _AgreedLine:
    """A line both fresh runs wrote at one place: its number in the first run, and its
    tokens, ``None`` where the runs differ (each is the same in both otherwise)."""

    number: int
    tokens: tuple[str | None, ...]

    def matches(self, tokens: tuple[str, ...]) -> bool:
        """Whether a line of ``tokens`` has this line's shape and every shared token."""
        return len(tokens) == len(self.tokens) and all(
            mine is None or mine == theirs for mine, theirs in zip(self.tokens, tokens, strict=True)
        )

    def shown(self) -> str:
        return "".join(_VARIES if token is None else token for token in self.tokens)


def _tokens(line: str) -> tuple[str, ...]:
    return tuple(_TOKEN.findall(line))


def _agreed_lines(first: list[str], second: list[str]) -> list[_AgreedLine]:
    """The lines two runs agree on, in order: those both wrote, and those written at one
    place with as many tokens (the differing ones left open). Lines of different shapes,
    or a different number of lines, say nothing the entry must hold."""
    agreed: list[_AgreedLine] = []
    matcher = difflib.SequenceMatcher(None, first, second, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            agreed += [_AgreedLine(n + 1, _tokens(first[n])) for n in range(a0, a1)]
        elif op == "replace" and a1 - a0 == b1 - b0:
            for n, m in zip(range(a0, a1), range(b0, b1), strict=True):
                one, two = _tokens(first[n]), _tokens(second[m])
                if len(one) == len(two):
                    shared = tuple(a if a == b else None for a, b in zip(one, two, strict=True))
                    agreed.append(_AgreedLine(n + 1, shared))
    return agreed


def _missing_agreed_line(
    relative: str, entry: Path, one: Mapping[str, Path], two: Mapping[str, Path]
) -> _AgreedLine | None:
    """The first line the two runs agree on (:func:`_agreed_lines`) that the entry's
    version lacks, in their order; None when it has them all, or when the file is not
    text. Each is matched to the entry's earliest line after the last one matched: the
    entry holds them all in order exactly when this finds each."""
    cached, first, second = (
        _text_lines(relative, path) for path in (entry, one[relative], two[relative])
    )
    if cached is None or first is None or second is None:
        return None
    remaining = iter([_tokens(line) for line in cached])
    for line in _agreed_lines(first, second):
        if not any(line.matches(candidate) for candidate in remaining):
            return line
    return None


def _short(text: str, width: int = 70) -> str:
    text = text.strip()
    return repr(text if len(text) <= width else f"{text[: width - 1]}…")


def _text_difference(old: str, new: str, sides: tuple[str, str]) -> str | None:
    old_lines, new_lines = old.splitlines(), new.splitlines()
    for number, (a, b) in enumerate(zip(old_lines, new_lines, strict=False), start=1):
        if a != b:
            return f"line {number}: {_short(a)} {sides[0]}, {_short(b)} {sides[1]}"
    if len(old_lines) != len(new_lines):
        return f"{len(old_lines)} lines {sides[0]}, {len(new_lines)} {sides[1]}"
    return None  # only line endings or the measurements differ


def _frames(data: bytes) -> list[tuple[str, tuple[int, int], bytes]] | None:
    try:
        from PIL import Image, ImageSequence
    except ImportError:
        return None
    try:
        with Image.open(io.BytesIO(data)) as image:
            return [
                (frame.mode, frame.size, frame.tobytes()) for frame in ImageSequence.Iterator(image)
            ]
    except Exception:  # not an image Pillow reads (any error of a decoder)
        return None


def _image_difference(old: bytes, new: bytes, sides: tuple[str, str]) -> str | None:
    before, after = _frames(old), _frames(new)
    if before is None or after is None:
        return f"its bytes differ ({len(old)} → {len(new)} bytes)"
    if len(before) != len(after):
        return f"{len(before)} frames {sides[0]}, {len(after)} {sides[1]}"
    for index, ((mode, size, pixels), (mode2, size2, pixels2)) in enumerate(
        zip(before, after, strict=True)
    ):
        where = f" (frame {index + 1})" if len(before) > 1 else ""
        if (mode, size) != (mode2, size2):
            return (
                f"the image is {size[0]}x{size[1]} {mode} {sides[0]}, "
                f"{size2[0]}x{size2[1]} {mode2} {sides[1]}{where}"
            )
        if pixels != pixels2:
            return f"its pixels differ{where}"
    return None


def _data_difference(old: bytes, new: bytes, sides: tuple[str, str]) -> str | None:
    try:
        before, after = json.loads(old), json.loads(new)
    except ValueError:
        return _text_difference(
            old.decode("utf-8", "replace"), new.decode("utf-8", "replace"), sides
        )
    if before == after:
        return None
    path = _first_difference(before, after)
    return f"its data differs at {path}" if path else "its data differs"


def _first_difference(before: Any, after: Any, path: str = "") -> str:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in sorted(set(before) | set(after), key=str):
            if before.get(key) != after.get(key):
                return _first_difference(before.get(key), after.get(key), f"{path}/{key}")
    elif isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for index, (a, b) in enumerate(zip(before, after, strict=True)):
            if a != b:
                return _first_difference(a, b, f"{path}/{index}")
    return path


def _zip_difference(old: bytes, new: bytes, sides: tuple[str, str]) -> str | None:
    try:
        with zipfile.ZipFile(io.BytesIO(old)) as a, zipfile.ZipFile(io.BytesIO(new)) as b:
            names_a, names_b = sorted(a.namelist()), sorted(b.namelist())
            if names_a != names_b:
                return f"its members differ: {names_a} {sides[0]}, {names_b} {sides[1]}"
            for name in names_a:
                if a.read(name) != b.read(name):
                    return f"its member {name} differs"
    except (zipfile.BadZipFile, OSError, ValueError):
        return f"its bytes differ ({len(old)} → {len(new)} bytes)"
    return None  # only the members' times differ


def dependency_labels(deps: Mapping[str, Any]) -> list[str]:
    """An entry's dependencies, one label each: ``source``, ``file mylib/a.py``, ``code
    mylib/a.py: scale``, ``dist numpy 2.1.0``, ``listing data/``."""
    labels = ["source"]
    labels += [f"file {name}" for name in deps.get("files", {})]
    labels += [
        f"code {name}: {piece}"
        for name, pieces in deps.get("code", {}).items()
        for piece in (pieces if isinstance(pieces, Mapping) else {})
    ]
    labels += [f"dist {name} {version}" for name, version in deps.get("dists", {}).items()]
    labels += [f"absent {name}" for name in deps.get("absent", ())]
    labels += [f"listing {name}/" for name in deps.get("listings", {})]
    return labels
