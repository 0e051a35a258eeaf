"""``graphmend run``: run a program with the import hook installed.

``graphmend run [options] (SCRIPT | -m MODULE) [ARGS...]`` runs the program
as ``python SCRIPT ARGS...`` / ``python -m MODULE ARGS...`` would, with
:func:`graphmend.install` in place first (see docs/hook.md). ``--report``
prints, when the program ends (normally, by ``sys.exit`` or by an uncaught
exception), what the hook did and what Dynamo saw during the run.
"""

from __future__ import annotations

import os
import sys

RUN_USAGE = """\
usage: graphmend run [--package NAME]... [--unsafe-fixes] [--select CODES]
                     [--ignore CODES] [--cache-dir DIR] [--report] [--dynamo-switches]
                     (SCRIPT | -m MODULE) [ARGS...]

Run SCRIPT (as `python SCRIPT ARGS...` would) or MODULE (as `python -m MODULE
ARGS...`) with graphmend's import hook installed: the named packages and their
submodules are mended with graphmend's safe fixes as they are imported (see
docs/hook.md). The exit status is the program's.

options:
  -p, --package NAME  mend this package and its submodules (repeatable, or
                      comma-separated; default: $GRAPHMEND_PACKAGES, else
                      transformers)
  --unsafe-fixes      also apply fixes marked unsafe
  --select CODES      only these rules (selectors as for `graphmend check`)
  --ignore CODES      not these rules
  --cache-dir DIR     keep mended bytecode in DIR, also under
                      PYTHONDONTWRITEBYTECODE (default: $GRAPHMEND_CACHE_DIR,
                      else __pycache__ next to each source, else the user cache
                      directory)
  --report            when the program ends, print to stderr what the hook
                      mended and what Dynamo saw (graphs, graph breaks with
                      file:line and GB id, skipped frames)
  --dynamo-switches   also set torch._dynamo.config.capture_scalar_outputs and
                      capture_dynamic_output_shape_ops (costs: docs/hook.md)
  -m MODULE           run a module as a script
  -h, --help          show this help and exit
"""


class UsageError(Exception):
    """A bad ``graphmend run`` command line (exit status 2)."""


def parse_run(argv: list[str]) -> dict:
    """Options up to the script (or -m MODULE); everything after it is the
    program's. Raises UsageError."""
    opts: dict = {"packages": [], "unsafe": False, "select": None, "ignore": None,
                  "cache_dir": None, "module": None, "script": None, "args": [],
                  "report": False, "dynamo_switches": False}
    takes_value = {"-p": "packages", "--package": "packages", "--select": "select",
                   "--ignore": "ignore", "--cache-dir": "cache_dir"}
    flags = {"--unsafe-fixes": "unsafe", "--report": "report",
             "--dynamo-switches": "dynamo_switches"}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("-h", "--help"):
            opts["help"] = True
            return opts
        if arg == "--":
            i += 1
            break
        name, eq, value = arg.partition("=")
        if arg in takes_value or (eq and arg.startswith("--") and name in takes_value):
            if not eq:
                if i + 1 >= len(argv):
                    raise UsageError(f"{arg} needs a value")
                value = argv[i + 1]
                i += 1
            key = takes_value[name]
            if key == "packages":
                names = value.replace(",", " ").split()
                if not names:
                    raise UsageError(f"{arg} needs a package name")
                opts["packages"].extend(names)
            else:
                opts[key] = value
            i += 1
            continue
        if arg in flags:
            opts[flags[arg]] = True
            i += 1
            continue
        if arg == "-m" or (arg.startswith("-m") and not arg.startswith("--")):
            module = arg[2:] or (argv[i + 1] if i + 1 < len(argv) else "")
            if not module:
                raise UsageError("-m needs a module name")
            opts["module"] = module
            opts["args"] = argv[i + (1 if arg[2:] else 2):]
            return opts
        if arg.startswith("-") and arg != "-":
            raise UsageError(f"unknown option {arg!r}")
        break
    if i >= len(argv):
        raise UsageError("a script (or -m MODULE) to run is required")
    opts["script"] = argv[i]
    opts["args"] = argv[i + 1:]
    return opts


def _user_traceback(tb):
    """Drop the frames of graphmend's launcher and runpy from a traceback."""
    while tb is not None and tb.tb_frame.f_globals.get("__name__") in (
            __name__, "graphmend.cli", "runpy"):
        tb = tb.tb_next
    return tb


# --------------------------------------------------------------------------
# --report


class RunReport:
    """What ``--report`` prints: the hook's counts and Dynamo's view of the
    run. Dynamo's graph-break log is wrapped (graphmend.judge's capture)
    when ``torch._dynamo.symbolic_convert`` is imported, so a program that
    never imports torch pays nothing and one that does is watched from its
    first compile."""

    def __init__(self, finder):
        from . import hook

        self.finder = finder
        self.capture = None
        hook.when_imported("torch._dynamo.symbolic_convert", self._watch)

    def _watch(self, _module) -> None:
        from .judge import _Capture

        self.capture = _Capture().__enter__()

    def close(self) -> None:
        from . import hook

        hook._forget_callback("torch._dynamo.symbolic_convert", self._watch)
        if self.capture is not None:
            self.capture.__exit__(None, None, None)

    def format(self) -> str:
        f = self.finder
        how = list(f.modules.values())
        mended = how.count("mended")
        mended_cached = how.count("mended (cached)")
        unchanged = how.count("unchanged") + how.count("unchanged (cached)")
        hooked = (f"  hook ({', '.join(f.packages)}): {len(how)} modules imported: "
                  f"{mended + mended_cached} mended ({mended_cached} from the cache), "
                  f"{unchanged} unchanged, {how.count('skipped')} skipped (skip-file), "
                  f"{how.count('failed')} failed")
        lines = ["", "graphmend run report", hooked]
        if f.fixes:
            lines.append("  fixes by rule: " + ", ".join(
                f"{code} x{n}" for code, n in sorted(f.fixes.items())))
        failed = sorted(name for name, h in f.modules.items() if h == "failed")
        if failed:
            lines.append("  not mended (see the HookWarning): " + ", ".join(failed))
        utils = sys.modules.get("torch._dynamo.utils")
        if utils is None:
            lines.append("  dynamo: not imported by the program")
            return "\n".join(lines) + "\n"
        from .judge import _first_line, _group

        counters = utils.counters
        events = list(self.capture.events) if self.capture is not None else []
        metrics = getattr(utils, "get_compilation_metrics", list)()
        skipped = [m for m in metrics if getattr(m, "fail_type", None)]
        recompiles = sum(1 for m in metrics if getattr(m, "recompile_reason", None))
        graphs = int(counters["stats"]["unique_graphs"])
        lines.append(f"  dynamo: {graphs} graphs, {len(events)} graph-break events, "
                     f"{len(skipped)} skipped frames, {recompiles} recompiles")
        reasons = _group(events)
        if reasons:
            lines.append("  graph breaks left:")
            for i, r in enumerate(reasons, 1):
                kind = f" {r.gb_type}" if r.gb_type and r.gb_type != r.reason else ""
                lines.append(f"    {i}. [{r.gb_id or 'GB????'}{kind}] {r.reason} (x{r.count})")
                lines.extend(f"       at {site}" for site in r.sites)
        if skipped:
            lines.append("  frames Dynamo skipped (ran eagerly):")
            for m in skipped:
                where = ""
                if getattr(m, "fail_user_frame_filename", None):
                    where = f" at {m.fail_user_frame_filename}:{m.fail_user_frame_lineno}"
                lines.append(f"    - {m.co_name} ({m.co_filename}:{m.co_firstlineno}): "
                             f"{m.fail_type}: {_first_line(str(m.fail_reason or ''))}{where}")
        if not reasons and not skipped and graphs:
            lines.append("  no graph breaks left")
        return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    try:
        opts = parse_run(argv)
    except UsageError as exc:
        print(RUN_USAGE.split("\n\n")[0], file=sys.stderr)
        print(f"graphmend run: error: {exc}", file=sys.stderr)
        return 2
    if opts.get("help"):
        sys.stdout.write(RUN_USAGE)
        return 0
    packages = opts["packages"] or os.environ.get("GRAPHMEND_PACKAGES", "").replace(
        ",", " ").split() or ["transformers"]
    from . import hook

    try:
        finder = hook.install(packages, unsafe=opts["unsafe"], select=opts["select"],
                              ignore=opts["ignore"], cache_dir=opts["cache_dir"],
                              dynamo_switches=opts["dynamo_switches"])
    except (TypeError, ValueError) as exc:
        print(f"graphmend run: error: {exc}", file=sys.stderr)
        return 2
    report = RunReport(finder) if opts["report"] else None
    try:
        return _run_program(opts)
    finally:
        if report is not None:
            report.close()
            try:
                sys.stdout.flush()
            except (OSError, ValueError):
                pass
            sys.stderr.write(report.format())
            sys.stderr.flush()


def _run_program(opts: dict) -> int:
    import runpy

    # What `python SCRIPT` / `python -m MODULE` put first on sys.path (in
    # place of graphmend's own entry), unless -P / PYTHONSAFEPATH said not to.
    safe_path = getattr(sys.flags, "safe_path", False)
    if opts["module"] is not None:
        entry = os.getcwd()
        sys.argv = [opts["module"], *opts["args"]]  # runpy sets argv[0] to the file
    else:
        script = opts["script"]
        if not os.path.exists(script):
            print(f"graphmend run: can't open file {os.path.abspath(script)!r}: "
                  "[Errno 2] No such file or directory", file=sys.stderr)
            return 2
        entry = os.path.dirname(os.path.abspath(script))
        sys.argv = [script, *opts["args"]]
    if not safe_path:
        if sys.path:
            sys.path[0] = entry
        else:
            sys.path.insert(0, entry)
    try:
        if opts["module"] is not None:
            runpy.run_module(opts["module"], run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(os.path.abspath(opts["script"]), run_name="__main__")
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as exc:  # noqa: BLE001 - report it as Python would, exit status 1
        if opts["module"] is not None and isinstance(exc, ImportError) and \
                exc.__traceback__ is not None and _user_traceback(exc.__traceback__) is None:
            # runpy's own "No module named ..." (no user frame): Python's message.
            print(f"{sys.executable}: {exc}", file=sys.stderr)
            return 1
        tb = _user_traceback(exc.__traceback__)
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
        return 1
    return 0
