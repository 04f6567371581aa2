"""The ``docsaccel`` command line: argument parsing only; the work lives in the modules.

Each subcommand is added by one ``_add_*`` function and calls into its capability module,
so the same logic is callable from Python and tested without a subprocess.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from docsaccel import __version__


def _doctor(args: argparse.Namespace) -> int:
    from docsaccel import doctor

    text, ok = doctor.describe()
    print(text)
    return 0 if ok else 1


def _add_doctor(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "doctor",
        help="show the versions docsaccel runs with and the headless OpenGL backend it picks",
    )
    parser.set_defaults(handler=_doctor)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="docsaccel",
        description="Fast Sphinx docs with executed tutorials: budgets, reports, sharding.",
    )
    parser.add_argument("--version", action="version", version=f"docsaccel {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    _add_doctor(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    return handler(args)


if __name__ == "__main__":
    sys.exit(main())
