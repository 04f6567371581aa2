"""The audit's comparison of two runs' outputs, and its verdicts in the report views."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from PIL import Image

from docsaccel.cache.audit import BETWEEN_RUNS, Outputs, compare_file, differences, unexplained
from docsaccel.cache.cache_build import CacheBuild
from docsaccel.contract import AUDIT_STATUSES
from docsaccel.report.check import check_timings, format_check
from docsaccel.report.model import Timing
from docsaccel.schema import SchemaError, validate_record

PAGE = (
    "Alpha\n=====\n\n.. code-block:: none\n\n    alpha 42\n\n"
    "**Total running time of the script:** (0 minutes {seconds} seconds)\n"
)


def _file(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _png(color: tuple[int, int, int], **info: str) -> bytes:
    stream = io.BytesIO()
    from PIL import PngImagePlugin

    meta = PngImagePlugin.PngInfo()
    for key, value in info.items():
        meta.add_text(key, value)
    Image.new("RGB", (4, 3), color).save(stream, "PNG", pnginfo=meta)
    return stream.getvalue()


def _zip(year: int = 1990, **members: bytes) -> bytes:
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, "w") as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name, date_time=(year, 1, 1, 0, 0, 0)), data)
    return stream.getvalue()


def test_measured_times_metadata_and_archive_dates_are_no_difference(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    pairs = {
        "g/plot_a.rst": (PAGE.format(seconds="1.250"), PAGE.format(seconds="9.000")),
        "g/plot_a.cost.json": ("[1.25, 0.0]", "[9.0, 0.0]"),
        "g/plot_a.ipynb": ('{"cells": [], "n": 1}', '{"n": 1,\n "cells": []}'),
    }
    before = Outputs({k: _file(a, k, v[0].encode()) for k, v in pairs.items()})
    after = Outputs({k: _file(b, k, v[1].encode()) for k, v in pairs.items()})
    before.files["g/images/x.png"] = _file(a, "x.png", _png((1, 2, 3), Software="one"))
    after.files["g/images/x.png"] = _file(b, "x.png", _png((1, 2, 3), Software="two"))
    before.files["g/plot_a.zip"] = _file(a, "plot_a.zip", _zip(1990, **{"plot_a.py": b"print(1)"}))
    after.files["g/plot_a.zip"] = _file(b, "z/plot_a.zip", _zip(2020, **{"plot_a.py": b"print(1)"}))
    assert differences(before, after) == []


def test_each_kind_of_output_says_how_it_differs(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert (
        compare_file(
            "g/plot_a.rst",
            _file(a, "p.rst", PAGE.format(seconds="1.0").encode()),
            _file(b, "p.rst", PAGE.format(seconds="2.0").replace("42", "63").encode()),
        )
        == "line 6: 'alpha 42' in the cache, 'alpha 63' now"
    )
    assert compare_file(
        "x.png", _file(a, "x.png", _png((0, 0, 0))), _file(b, "x.png", _png((0, 0, 1)))
    ) == ("its pixels differ")
    assert (
        compare_file(
            "n.ipynb",
            _file(a, "n.ipynb", b'{"cells": [{"source": "a"}]}'),
            _file(b, "n.ipynb", b'{"cells": [{"source": "b"}]}'),
        )
        == "its data differs at /cells/0/source"
    )
    assert (
        compare_file(
            "a.zip",
            _file(a, "a.zip", _zip(**{"a.py": b"1"})),
            _file(b, "a.zip", _zip(**{"a.py": b"2"})),
        )
        == "its member a.py differs"
    )
    assert (
        compare_file("v.mp4", _file(a, "v.mp4", b"\x00\xff"), _file(b, "v.mp4", b"\x00\xfe\x01"))
        == "its bytes differ (2 → 3 bytes)"
    )
    assert (
        compare_file(
            "d.txt", _file(a, "d.txt", b"one\n"), _file(b, "d.txt", b"one\n"), BETWEEN_RUNS
        )
        is None
    )
    found = differences(
        Outputs({"only-old.png": _file(a, "o.png", b"x")}, {"data/out.txt": _file(a, "w", b"1")}),
        Outputs({"only-new.png": _file(b, "n.png", b"x")}, {"data/out.txt": _file(b, "w", b"2")}),
        BETWEEN_RUNS,
    )
    assert found == [
        "only-new.png: only in the second",
        "only-old.png: only in the first run",
        "data/out.txt (written for later examples): line 1: '1' in the first run, "
        "'2' in the second",
    ]


def test_many_differences_are_cut_short(tmp_path: Path) -> None:
    before = Outputs({f"f{i}.txt": _file(tmp_path, f"a{i}", b"a") for i in range(30)})
    after = Outputs({f"f{i}.txt": _file(tmp_path, f"b{i}", b"b") for i in range(30)})
    found = differences(before, after)
    assert len(found) == 20 and found[-1] == "and 11 more differences"


def test_a_fraction_audits_about_that_share() -> None:
    build = CacheBuild.__new__(CacheBuild)
    build.verify = 0.2
    import random

    build._random = random.Random(7)
    picks = sum(build.audit_next() for _ in range(10_000))
    assert 1800 < picks < 2200
    build.verify = 1.0
    assert all(build.audit_next() for _ in range(100))
    build.verify = 0.0
    assert not any(build.audit_next() for _ in range(100))


def _record(audit: object) -> dict:
    return {
        "schema": "docsaccel.record", "version": 1, "id": "g/plot_a.py", "gallery": "g",
        "name": "plot_a.py", "status": "ok", "wall_seconds": 1.0, "budget_seconds": None,
        "budget_source": "builtin", "fast": False,
        "cache": {"hit": False, "reason": "audit", "audit": audit},
    }  # fmt: skip


@pytest.mark.parametrize(
    "audit",
    [{"status": "unknown"}, "stale", {"status": "stale", "differences": "x"},
     {"status": "stale", "dependencies": [1]}, {"status": "stale", "second_run_seconds": -1},
     {"status": "verified", "second_run_seconds": "2"}],
)  # fmt: skip
def test_a_bad_audit_in_a_record_is_refused(audit: object) -> None:
    with pytest.raises(SchemaError, match=r"cache\.audit"):
        validate_record(_record(audit))


def test_check_fails_on_a_stale_entry_and_notes_nondeterministic_ones() -> None:
    for status in AUDIT_STATUSES:
        validate_record(_record({"status": status, "differences": [], "dependencies": []}))
    stale = Timing("g/plot_a.py", "plot_a.py", 1.0, cache={"audit": {
        "status": "stale", "differences": ["g/plot_a.rst: line 6: 'a' in the cache, 'b' now"],
        "dependencies": ["source", "file mylib/a.py"]}})  # fmt: skip
    varied = Timing("g/plot_b.py", "plot_b.py", 1.0, cache={"audit": {
        "status": "nondeterministic", "differences": ["g/plot_b.rst: line 3: ..."]}})  # fmt: skip
    verified = Timing("g/plot_c.py", "plot_c.py", 1.0, cache={"audit": {"status": "verified"}})
    result = check_timings([stale, varied, verified])
    assert result.exit_code == 1
    text = format_check(result)
    assert text.splitlines()[0] == "FAIL: 1 stale cache entry (audit):"
    assert "the dependencies its entry recorded: source, file mylib/a.py" in text
    assert "note: 1 example not reproducible (audit):" in text
    assert check_timings([varied, verified]).exit_code == 0
    assert format_check(check_timings([varied, verified])).startswith("OK: 2 examples checked")


def test_what_two_varying_runs_agree_on_must_be_in_the_entry(tmp_path: Path) -> None:
    def run(name: str, *lines: str, image: bytes = b"") -> Outputs:
        page = _file(tmp_path / name, "a.rst", "\n".join(lines).encode())
        files = {"a.rst": page}
        if image:
            files["a.png"] = _file(tmp_path / name, "a.png", image)
        return Outputs(files=files)

    red, blue = _png((255, 0, 0)), _png((0, 0, 255))
    first = run("first", "Title", "data: v2", "draw 0.1", image=red)
    second = run("second", "Title", "data: v2", "draw 0.7", image=red)
    # Another draw, the same data: what varies explains the difference.
    assert unexplained(run("ok", "Title", "data: v2", "draw 0.4", image=red), first, second) == []
    # Old data beside a draw: stale, named by the line both runs print.
    stale = unexplained(run("old", "Title", "data: v1", "draw 0.4", image=red), first, second)
    assert stale == ["a.rst: line 2: 'data: v2' in both fresh runs, not in the cache"]
    # An image both runs drew alike, another in the entry.
    drawn = unexplained(run("img", "Title", "data: v2", "draw 0.4", image=blue), first, second)
    assert len(drawn) == 1 and drawn[0].startswith("a.png: ") and "same in both runs" in drawn[0]
    missing = unexplained(run("none", "Title", "data: v2", "draw 0.4"), first, second)
    assert missing == ["a.png: in both fresh runs, not in the cache"]


CHILD_PAGE = "Child\n=====\n\n.. code-block:: none\n\n    {output}\n\n    done\n"


def test_a_pid_that_varies_is_not_reproducible_whatever_digits_its_runs_share(
    tmp_path: Path,
) -> None:
    """A page printing a child's pid: the two fresh runs' pids share a '5' by chance, which
    the entry's pid has elsewhere; the pid varies whole, so nothing is stale, and what
    varied names the line."""

    def run(name: str, output: str) -> Outputs:
        page = _file(tmp_path / name, "plot_child.rst", CHILD_PAGE.format(output=output).encode())
        return Outputs(files={"auto_examples/faults/plot_child.rst": page})

    cached, first, second = run("c", "pid 41235"), run("1", "pid 45871"), run("2", "pid 52903")

    assert unexplained(cached, first, second) == []
    assert differences(first, second, BETWEEN_RUNS) == [
        "auto_examples/faults/plot_child.rst: line 6: 'pid 45871' in the first run, "
        "'pid 52903' in the second"
    ]
    # Numbers are tokens whole: two draws sharing '0.' or a digit hold no entry to it.
    draws = [run(name, f"draw {value}") for name, value in (("d", "1.42"), ("e", "0.51"))]
    assert unexplained(*draws, run("f", "draw 0.57")) == []


def test_a_token_both_varying_runs_share_on_a_line_must_be_in_the_entry(tmp_path: Path) -> None:
    """The pid varies, the data version beside it on the same line does not: an entry with
    another version is stale, named by the line and its shared tokens."""

    def run(name: str, output: str) -> Outputs:
        page = _file(tmp_path / name, "plot_child.rst", CHILD_PAGE.format(output=output).encode())
        return Outputs(files={"auto_examples/faults/plot_child.rst": page})

    first, second = run("1", "data v2 pid 45871"), run("2", "data v2 pid 52903")

    assert unexplained(run("ok", "data v2 pid 41235"), first, second) == []
    assert unexplained(run("old", "data v1 pid 41235"), first, second) == [
        "auto_examples/faults/plot_child.rst: line 6: 'data v2 pid <varies>' in both fresh "
        "runs, not in the cache"
    ]
    # A line of another shape is no line of that shape.
    assert unexplained(run("short", "data v2"), first, second) != []


def test_a_log_line_with_the_time_of_day_is_no_difference(tmp_path: Path) -> None:
    # Two runs a second apart both log "Tue Dec  1 22:21:57": the clock, not an input.
    def run(name: str, stamp: str, value: str = "2") -> Outputs:
        log = _file(tmp_path / name, "LOG.TXT", f"WARNING {stamp}: attribute {value}\n".encode())
        return Outputs(written={"docs/LOG.TXT": log})

    entry = run("entry", "Tue Dec  1 21:03:12 2026")
    first = run("first", "Tue Dec  1 22:21:57 2026")
    second = run("second", "Tue Dec  1 22:21:57 2026")
    assert differences(entry, first) == []
    assert unexplained(entry, first, second) == []
    # What the line says besides the time still counts.
    assert differences(entry, run("other", "Tue Dec  1 22:21:57 2026", "3")) != []
