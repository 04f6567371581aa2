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


def _shard(args: argparse.Namespace) -> int:
    import json

    from docsaccel import shard
    from docsaccel.budgets import BudgetError
    from docsaccel.schema import SchemaError

    try:
        if args.index is None and not args.plan:
            raise shard.ShardError("give --index I (the shard to print) or --plan")
        if args.json and not args.plan:
            raise shard.ShardError("--json prints the whole plan: use it with --plan")
        if args.index is not None:
            shard.check_index(args.index, args.shards)
        plan = shard.build_plan(
            args.inputs, args.shards, args.gallery_dir, args.budgets, runs=args.runs
        )
    except (shard.ShardError, SchemaError, BudgetError) as exc:
        print(f"docsaccel shard: error: {exc}", file=sys.stderr)
        return 2
    if args.plan:
        print(json.dumps(plan.to_json(), indent=2) if args.json else shard.describe(plan))
    else:
        print("\n".join(plan.examples_of(args.index)))
    return 0


def _add_shard(subparsers: argparse._SubParsersAction) -> None:
    from docsaccel.shard import DEFAULT_RUNS

    parser = subparsers.add_parser(
        "shard",
        help="split the gallery over CI workers by measured durations; print one shard",
        description=(
            "Plan N shards of the gallery balanced by predicted seconds and print the "
            "example files of shard I, one per line (paths inside --gallery-dir, or ids "
            "as in the inputs). Examples without a measurement get their budget or the "
            "median as estimate and are spread over the shards."
        ),
    )
    parser.add_argument(
        "inputs",
        nargs="*",
        metavar="INPUT",
        help="earlier timings: a docsaccel report JSON or a history JSONL",
    )
    parser.add_argument("--shards", type=int, required=True, metavar="N", help="shard count")
    parser.add_argument("--index", type=int, metavar="I", help="the shard to print (0 to N-1)")
    parser.add_argument(
        "--gallery-dir", metavar="DIR", help="gallery folder: plan every example file in it"
    )
    parser.add_argument(
        "--budgets", metavar="FILE", help="budget file: unmeasured examples take their budget"
    )
    parser.add_argument(
        "--runs",
        type=int,
        default=DEFAULT_RUNS,
        metavar="K",
        help=f"predict each example by the median of its last K runs (default: {DEFAULT_RUNS})",
    )
    parser.add_argument("--plan", action="store_true", help="print the whole plan instead")
    parser.add_argument("--json", action="store_true", help="with --plan: print it as JSON")
    parser.set_defaults(handler=_shard)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="docsaccel",
        description="Fast Sphinx docs with executed tutorials: budgets, reports, sharding.",
    )
    parser.add_argument("--version", action="version", version=f"docsaccel {__version__}")
    subparsers = parser.add_subparsers(title="commands", metavar="COMMAND")
    _add_doctor(subparsers)
    _add_shard(subparsers)
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
