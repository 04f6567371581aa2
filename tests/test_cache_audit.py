"""Audit mode in real builds from fresh copies sharing a cache: the examples the cache
would restore run instead, and their outputs are compared with the entries.

``mylib/native.py`` reads ``data/native.txt`` through the C library (``fopen``), as a C
extension would: no audit event shows that read, so the file is no dependency of the
example using it and a change to it is the cache's blind spot, which the audit finds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cache_project import ALL, Build, Project, example_source

from docsaccel.cli import main

pytestmark = pytest.mark.slow

NATIVE = '''
import ctypes
import os

_LIBC = ctypes.CDLL(None)
_LIBC.fopen.restype = ctypes.c_void_p
_LIBC.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
_LIBC.fread.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_void_p]
_LIBC.fclose.argtypes = [ctypes.c_void_p]
PATH = os.path.join(os.path.dirname(__file__), "..", "data", "native.txt")


def read():
    """The file's text, read by C code."""
    handle = _LIBC.fopen(PATH.encode(), b"rb")
    buffer = ctypes.create_string_buffer(256)
    size = _LIBC.fread(buffer, 1, 256, handle)
    _LIBC.fclose(handle)
    return buffer.raw[:size].decode().strip()
'''
EXAMPLES = {
    "plot_n_native.py": example_source(
        "Native", 'from mylib import native\n\nprint("native:", native.read())\n'
    ),
    "plot_s_seeded.py": example_source(
        "Seeded", 'import random\n\nrandom.seed(4)\nprint("seeded draw", random.random())\n'
    ),
}
UNSEEDED = example_source("Unseeded", 'import random\n\nprint("draw", random.random())\n')
AUDIT = {"DOCSACCEL_CACHE_VERIFY": "1"}


@pytest.fixture
def project(tmp_path: Path) -> Project:
    project = Project(tmp_path)
    project.write("mylib/native.py", NATIVE)
    project.write("data/native.txt", "version 1\n")
    for name, text in EXAMPLES.items():
        project.write(f"docs/examples/{name}", text)
    return project


def _audits(build: Build) -> dict[str, dict]:
    return {name: r["cache"].get("audit", {}) for name, r in build.records.items()}


def _audit_after(project: Project, **examples: str) -> tuple[Build, dict[str, dict]]:
    """A build filling the cache with ``examples`` added, then an audit build: the audit
    build and its verdicts."""
    for name, text in examples.items():
        project.write(f"docs/examples/{name}", text)
    assert project.build().returncode == 0
    audit = project.build(env=AUDIT)
    assert audit.returncode == 0, audit.output
    return audit, _audits(audit)


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out + err


def test_an_audit_over_a_warm_cache_verifies_every_entry(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    cold = project.build()
    assert cold.returncode == 0, cold.output
    names = {*ALL, *EXAMPLES}
    audit = project.build(env=AUDIT)
    assert audit.returncode == 0, audit.output
    assert audit.executed() == names
    assert {name: a.get("status") for name, a in _audits(audit).items()} == dict.fromkeys(
        names, "verified"
    )
    assert all(r["cache"]["reason"] == "audit" for r in audit.records.values())
    assert "alpha 42" in (audit.outdir / "auto_examples" / "plot_a_alpha.html").read_text("utf-8")
    report = str(audit.outdir / "docsaccel" / "report.json")
    code, out = _cli(capsys, "check", report)
    assert code == 0, out
    code, out = _cli(capsys, "report", report, "--format", "md")
    assert f"Example cache audit:** {len(names)} verified" in out
    code, out = _cli(capsys, "cache", "stats", "--cache", str(project.cache))
    assert f"its audit: {len(names)} verified, 0 stale, 0 nondeterministic" in out
    # The entries it verified are still there: the next build restores everything.
    assert project.build().executed() == set()


def test_a_change_the_recorder_cannot_see_is_stale_and_check_fails(
    project: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert project.build().returncode == 0
    project.write("data/native.txt", "version 2\n")
    served = project.build()
    # The blind spot: the cache serves the old page.
    assert "plot_n_native.py" in served.cached()
    page = served.outdir / "auto_examples" / "plot_n_native.html"
    assert "native: version 1" in page.read_text("utf-8")

    audit = project.build(env=AUDIT)
    assert audit.returncode == 0, audit.output
    found = _audits(audit)
    assert found["plot_n_native.py"]["status"] == "stale", found["plot_n_native.py"]
    assert {a["status"] for n, a in found.items() if n != "plot_n_native.py"} == {"verified"}
    differences = found["plot_n_native.py"]["differences"]
    assert any(
        "plot_n_native.rst" in d and "version 1" in d and "version 2" in d for d in differences
    ), differences
    assert "file mylib/native.py" in found["plot_n_native.py"]["dependencies"]
    assert "data/native.txt" not in json.dumps(found["plot_n_native.py"]["dependencies"])
    assert "is stale" in audit.output
    page = audit.outdir / "auto_examples" / "plot_n_native.html"
    assert "native: version 2" in page.read_text("utf-8")

    report = str(audit.outdir / "docsaccel" / "report.json")
    code, out = _cli(capsys, "check", report)
    assert code == 1, out
    assert "FAIL: 1 stale cache entry (audit):" in out
    assert "examples/plot_n_native.py: the cache would have restored another page" in out
    monkeypatch.chdir(audit.docs.parent)  # the repository root, where a workflow runs
    code, out = _cli(capsys, "check", report, "--format", "github", "--source-dir", "docs")
    assert code == 1
    assert "::error file=docs/examples/plot_n_native.py,title=Stale cache entry::" in out
    code, out = _cli(capsys, "report", report, "--format", "md")
    assert "1 stale: examples/plot\\_n\\_native.py" in out
    # The audit stored what the fresh run made: a plain build now serves version 2.
    after = project.build()
    assert "plot_n_native.py" in after.cached()
    page = after.outdir / "auto_examples" / "plot_n_native.html"
    assert "native: version 2" in page.read_text("utf-8")


def test_an_unseeded_example_is_nondeterministic_not_stale(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    audit, found = _audit_after(project, **{"plot_u_unseeded.py": UNSEEDED})
    assert found["plot_u_unseeded.py"]["status"] == "nondeterministic"
    varied = found["plot_u_unseeded.py"]["differences"]
    assert any("in the first run" in d and "in the second" in d for d in varied), varied
    assert found["plot_s_seeded.py"]["status"] == "verified"
    report = str(audit.outdir / "docsaccel" / "report.json")
    code, out = _cli(capsys, "check", report)
    assert code == 0, out
    assert "note: 1 example not reproducible (audit):" in out
    code, out = _cli(capsys, "check", report, "--format", "github")
    assert "::warning file=examples/plot_u_unseeded.py,title=Not reproducible::" in out


# Unseeded, and reading the file the recorder cannot see: its runs vary, and its entry can
# be stale as well.
VARYING_NATIVE = example_source(
    "Varying native",
    "import random\n\nfrom mylib import native\n\n"
    'print("native:", native.read())\nprint("draw", random.random())\n',
)


def test_a_stale_entry_of_an_example_that_also_varies_is_stale(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.write("docs/examples/plot_v_varying.py", VARYING_NATIVE)
    assert project.build().returncode == 0
    project.write("data/native.txt", "version 2\n")

    audit = project.build(env=AUDIT)

    assert audit.returncode == 0, audit.output
    verdict = _audits(audit)["plot_v_varying.py"]
    # Both fresh runs print version 2: the draw varies, the entry's version 1 is stale.
    assert verdict["status"] == "stale", verdict
    assert any("'native: version 2'" in d for d in verdict["differences"]), verdict
    assert not any("draw" in d for d in verdict["differences"]), verdict
    code, out = _cli(capsys, "check", str(audit.outdir / "docsaccel" / "report.json"))
    assert code == 1, out


def test_a_sample_audits_a_share_and_restores_the_rest(project: Project) -> None:
    assert project.build().returncode == 0
    none = project.build(env={"DOCSACCEL_CACHE_VERIFY": "0"})
    assert none.executed() == set()
    # A tiny share: at most a few of the examples, usually none, run; the rest restored.
    sample = project.build(env={"DOCSACCEL_CACHE_VERIFY": "0.01"})
    assert sample.returncode == 0, sample.output
    audited = {name for name, a in _audits(sample).items() if a}
    assert audited == sample.executed()
    assert sample.cached() == {*ALL, *EXAMPLES} - audited


WRITER = example_source(
    "Write", 'from pathlib import Path\nPath("../../data/derived.txt").write_text("derived 1\\n")\n'
)
READER = example_source(
    "Read",
    'from pathlib import Path\n\nprint("read:", Path("../../data/derived.txt").read_text())\n'
    'print("more")\nprint("lines")\n',
)


def test_an_example_reading_what_an_audited_one_writes_is_audited_too(project: Project) -> None:
    # The writer runs first (fewer lines); restored, it would put data/derived.txt back
    # for the reader; audited, it writes the file again, and the reader is compared too.
    audit, found = _audit_after(project, **{"plot_w_writer.py": WRITER, "plot_r_reader.py": READER})
    assert found["plot_w_writer.py"]["status"] == "verified"
    assert found["plot_r_reader.py"]["status"] == "verified", audit.records["plot_r_reader.py"]
    assert project.build().executed() == set()
