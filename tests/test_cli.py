"""The command line lists only subcommands that exist."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from docsaccel import __version__
from docsaccel.cli import build_parser, main


def test_help_lists_real_subcommands_only(capsys) -> None:
    parser = build_parser()
    actions = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    commands = actions[0].choices
    assert "doctor" in commands
    help_text = parser.format_help()
    for name, subparser in commands.items():
        # Every listed command is wired to a handler that does the work.
        assert callable(subparser.get_default("handler")), name
        assert name in help_text


def test_no_subcommand_prints_help_and_fails(capsys) -> None:
    assert main([]) == 2
    assert "commands" in capsys.readouterr().out


def test_console_script_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "docsaccel.cli", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0
    assert "doctor" in done.stdout


def _parsers(parser, name="docsaccel"):
    """Every parser of the command line, by its command, nested ones included."""
    yield name, parser
    for action in parser._actions:
        if action.__class__.__name__ == "_SubParsersAction":
            for sub_name, sub in action.choices.items():
                yield from _parsers(sub, f"{name} {sub_name}")


def test_every_command_and_argument_has_help() -> None:
    found = dict(_parsers(build_parser()))
    assert {"docsaccel doctor", "docsaccel shard-local", "docsaccel cache prune"} <= set(found)
    for name, parser in found.items():
        assert parser.description, f"{name} --help says nothing of what it does"
        for action in parser._actions:
            # A group of subcommands is described by its commands' own help.
            if action.__class__.__name__ != "_SubParsersAction":
                assert action.help, f"{name}: {action.dest} has no help"


def test_doctor_says_an_extra_is_not_installed_when_only_a_shared_dependency_is(
    monkeypatch,
) -> None:
    """numpy, present because matplotlib needs it, is no sign the mujoco extra was
    installed: "partly installed, missing gymnasium, mujoco, imageio" sent the user
    after a partial install that never happened."""
    from types import SimpleNamespace

    from docsaccel import doctor

    installed = {"numpy": "2.4.0", "matplotlib": "3.11.0"}
    wanted = ["gymnasium", "mujoco", "imageio", "numpy"]
    monkeypatch.setattr(doctor, "extra_distributions", lambda extra: wanted)
    monkeypatch.setattr(doctor, "_version", lambda name: installed.get(name, "not installed"))
    dists = [
        SimpleNamespace(metadata={"Name": "matplotlib"}, requires=["numpy>=1.25"]),
        SimpleNamespace(metadata={"Name": "numpy"}, requires=None),
    ]
    monkeypatch.setattr(doctor.metadata, "distributions", lambda: iter(dists))
    assert doctor.check_extra("mujoco").text.startswith("extra mujoco: not installed (")
    # One of the extra's own packages present: partly, naming the missing ones.
    installed["mujoco"] = "4.0.0"
    text = doctor.check_extra("mujoco").text
    assert text.startswith("extra mujoco: partly installed, missing gymnasium, imageio ("), text


#: A line of the doctor, as the adopting guide says: its word, then what it checked.
_DOCTOR_LINE = re.compile(r"(ok   |info |warn |FAIL )\S.*")


@pytest.mark.parametrize(
    "conf",
    [
        None,
        'extensions = ["sphinx_gallery.gen_gallery", "docsaccel.gallery"]\n'
        'sphinx_gallery_conf = {"examples_dirs": "tutorials", "gallery_dirs": "auto"}\n'
        'docsaccel_budgets = "budgets.toml"\ndocsaccel_no_such = 1\n',
        "raise RuntimeError('broken\\nconf')\n",
    ],
    ids=["install", "project", "broken-conf"],
)
def test_every_line_of_the_doctor_starts_with_its_word(tmp_path, capsys, conf) -> None:
    args = ["doctor"]
    if conf is not None:
        (tmp_path / "tutorials").mkdir()
        (tmp_path / "tutorials" / "README.txt").write_text("T\n=\n", encoding="utf-8")
        (tmp_path / "tutorials" / "plot_a.py").write_text('"""\nA\n=\n"""\n', encoding="utf-8")
        (tmp_path / "budgets.toml").write_text(
            'default = "1m"\n[examples]\n"plot_none*.py" = "2s"\n', encoding="utf-8"
        )
        (tmp_path / "conf.py").write_text(conf, encoding="utf-8")
        args += ["--docs", str(tmp_path)]

    main(args)

    out = capsys.readouterr().out
    lines = out.splitlines()
    assert len(lines) > 10, out
    assert [line for line in lines if not _DOCTOR_LINE.fullmatch(line)] == [], out
    assert f"info docsaccel {__version__}" in lines, out
