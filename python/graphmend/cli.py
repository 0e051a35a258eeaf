"""The ``graphmend`` command line."""

from __future__ import annotations

import argparse
import sys


def _cmd_dump_ast(args: argparse.Namespace) -> int:
    from . import _frontend

    try:
        version = _frontend.parse_version(args.python_version) if args.python_version \
            else _frontend.default_version()
    except ValueError as exc:
        print(f"graphmend: {exc}", file=sys.stderr)
        return 2
    name = "<stdin>" if args.file == "-" else args.file
    try:
        if args.file == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(args.file, "rb") as handle:
                data = handle.read()
    except OSError as exc:
        print(f"graphmend: cannot read {name}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    try:
        text = _frontend.dump_ast(data, version, filename=name)
    except _frontend.GraphmendSyntaxError as exc:
        print(f"{name}:{exc.lineno}:{exc.col + 1}: {exc.kind}: {exc.msg}", file=sys.stderr)
        return 2
    sys.stdout.write(text + "\n")
    return 0


def _cmd_explain(argv: list[str]) -> int:
    from .explain_cli import main as explain_main

    return explain_main(argv)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="graphmend",
        description="Find and mend TorchDynamo graph breaks in Python source.")
    sub = parser.add_subparsers(dest="command", required=True)

    dump = sub.add_parser("dump-ast", help="print the AST as CPython's ast.dump would")
    dump.add_argument("file", help="a Python file, or - for standard input")
    dump.add_argument("--python-version", metavar="X.Y",
                      help="parse as this CPython version (3.8 to 3.13; default: the running one)")
    dump.set_defaults(func=_cmd_dump_ast)

    sub.add_parser("explain", help="count Dynamo's graphs and breaks for MODULE:FACTORY",
                   add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "explain":
        return _cmd_explain(argv[1:])
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
