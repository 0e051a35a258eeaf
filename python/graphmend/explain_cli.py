"""``graphmend explain MODULE:FACTORY [--json]``.

``FACTORY`` names a callable in an importable module (``pkg.mod:make``) or in
a Python file (``path/to/file.py:make``).  Called with no arguments it returns
``(model_or_fn, args)`` or ``(model_or_fn, args, kwargs)``; ``args`` is a
tuple or list of positional arguments, ``kwargs`` a dict.  The report of
:func:`graphmend.judge.explain` is printed as text, or as JSON with
``--json``.

Exit status: 0 when the report was produced (whether or not there are
breaks), 2 on usage errors (bad spec, missing module or factory, a factory
that returns the wrong shape, torch not installed) and when the factory or
the compiled call raises.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import os
import sys
import traceback
from typing import Any, Callable, Sequence

PROG = "graphmend explain"


class UsageError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Compile a model or function with TorchDynamo (counting backend, "
            "fullgraph=False) and report graphs, graph breaks with their "
            "source lines and graph-break types, skipped frames and recompiles."
        ),
    )
    p.add_argument(
        "spec",
        metavar="MODULE:FACTORY",
        help="a factory returning (model_or_fn, args[, kwargs]): "
        "'package.module:make' or 'path/to/file.py:make'",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("-v", "--verbose", action="store_true", help="include Dynamo's full messages")
    return p


def load_factory(spec: str) -> Callable[[], Any]:
    """Resolve ``MODULE:FACTORY`` or ``file.py:FACTORY`` to a callable."""
    target, sep, attr = spec.rpartition(":")
    if not sep or not target or not attr:
        raise UsageError(f"expected MODULE:FACTORY or FILE.py:FACTORY, got {spec!r}")
    if target.endswith(".py") or os.sep in target or "/" in target:
        path = os.path.abspath(target)
        if not os.path.isfile(path):
            raise UsageError(f"no such file: {target}")
        modname = "_graphmend_explain_" + "".join(
            c if c.isalnum() else "_" for c in os.path.splitext(os.path.basename(path))[0]
        )
        s = importlib.util.spec_from_file_location(modname, path)
        if s is None or s.loader is None:
            raise UsageError(f"cannot import {target}")
        module = importlib.util.module_from_spec(s)
        sys.modules[modname] = module
        # let the file import its siblings, as `python file.py` would
        sys.path.insert(0, os.path.dirname(path))
        s.loader.exec_module(module)
    else:
        if os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            module = importlib.import_module(target)
        except ModuleNotFoundError as e:
            if e.name and (target == e.name or target.startswith(e.name + ".")):
                raise UsageError(f"cannot import module {target!r}: {e}") from None
            raise
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise UsageError(f"{target!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise UsageError(f"{spec!r} is not callable")
    return obj


def unpack_factory_result(res: Any) -> tuple[Callable[..., Any], tuple, dict]:
    if not isinstance(res, (tuple, list)) or len(res) not in (2, 3):
        raise UsageError(
            "the factory must return (model_or_fn, args) or (model_or_fn, args, kwargs); "
            f"got {type(res).__name__}"
        )
    fn, args = res[0], res[1]
    kwargs = res[2] if len(res) == 3 else {}
    if not callable(fn):
        raise UsageError("the factory's first element must be callable (a function or nn.Module)")
    if not isinstance(args, (tuple, list)):
        raise UsageError(f"the factory's args must be a tuple or list, got {type(args).__name__}")
    if not isinstance(kwargs, dict):
        raise UsageError(f"the factory's kwargs must be a dict, got {type(kwargs).__name__}")
    return fn, tuple(args), dict(kwargs)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    try:
        ns = parser.parse_args(argv)
    except SystemExit as e:  # argparse: 0 for --help, 2 for errors
        return int(e.code or 0)

    def fail(msg: str) -> int:
        print(f"{PROG}: error: {msg}", file=sys.stderr)
        return 2

    try:
        import torch  # noqa: F401
    except ImportError:
        return fail("torch is not installed in this Python environment")

    # With --json, whatever the model prints goes to stderr so that stdout
    # stays one JSON document.
    quiet = contextlib.redirect_stdout(sys.stderr) if ns.json else contextlib.nullcontext()
    with quiet:
        try:
            factory = load_factory(ns.spec)
            fn, args, kwargs = unpack_factory_result(factory())
        except UsageError as e:
            return fail(str(e))
        except Exception:
            traceback.print_exc()
            return fail(f"the factory {ns.spec!r} raised (traceback above)")

        from .judge import explain

        try:
            report = explain(fn, *args, **kwargs)
        except Exception:
            traceback.print_exc()
            return fail("the compiled call raised (traceback above)")

    if ns.json:
        sys.stdout.write(report.to_json(indent=2) + "\n")
    else:
        sys.stdout.write(report.format_text(verbose=ns.verbose))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
