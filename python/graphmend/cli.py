"""The ``graphmend`` command line.

    graphmend check PATH... [--select CODES] [--ignore CODES]
                            [--output-format text|json|sarif|github] [--exit-zero]
                            [--unsafe-fixes] [--python-version X.Y] [--jobs N]
    graphmend fix PATH...   [--diff] [--unsafe-fixes] [--select ...] [--ignore ...]
    graphmend rules [--output-format text|json]
    graphmend rule CODE
    graphmend dump-ast FILE|- [--python-version X.Y]
    graphmend explain MODULE:FACTORY ...
    graphmend run [--package NAME]... [--unsafe-fixes] [--report] [--dynamo-switches]
                  (SCRIPT | -m MODULE) [ARGS...]

Exit status (check / fix): 0 nothing found (fix: nothing left), 1 findings
(fix: findings left, or with --diff changes to apply), 2 a usage error or a
file that could not be processed (unreadable, undecodable, unparsable, not
writable, a rule bug); every other file is still processed.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

# Directories never entered when a directory is walked (Ruff's defaults,
# less build/dist); a directory holding pyvenv.cfg (a virtualenv) is skipped too.
SKIP_DIRS = frozenset({
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints",
    ".mypy_cache", ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache",
    ".svn", ".tox", ".venv", ".vscode", "__pycache__", "__pypackages__", "buck-out",
    "node_modules", "site-packages", "venv",
})


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


def _cmd_run(argv: list[str]) -> int:
    from .run import main as run_main

    return run_main(argv)


def _cmd_explain(argv: list[str]) -> int:
    from .explain_cli import main as explain_main

    return explain_main(argv)


# ---------------------------------------------------------------- check / fix

class UsageError(Exception):
    pass


@dataclass
class Settings:
    """Resolved options for one file (command line over pyproject.toml)."""

    select: tuple[str, ...]
    ignore: tuple[str, ...]
    unsafe_fixes: bool
    version: tuple[int, int]
    regions: str = "reachable"


@dataclass
class FileResult:
    path: str
    diagnostics: list = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # lines for stderr
    changed: bool = False
    diff: str = ""
    applied: dict[str, int] = field(default_factory=dict)


def _is_venv(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, "pyvenv.cfg"))


def discover(paths: list[str], errors: list[str]) -> list[str]:
    """Files to process, in a deterministic order: each argument in turn; a
    directory walked in sorted order over ``*.py``, skipping SKIP_DIRS,
    virtualenvs and the ``exclude`` globs of the applicable configuration.
    A file named on the command line is always processed."""
    from . import config

    out: list[str] = []
    seen: set[str] = set()

    def add(path: str) -> None:
        key = os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            out.append(path)

    for arg in paths:
        if os.path.isdir(arg):
            found = []
            for root, dirs, files in os.walk(arg):
                dirs[:] = [
                    d for d in dirs
                    if d not in SKIP_DIRS and not _is_venv(os.path.join(root, d))
                    and not config.is_excluded(os.path.join(root, d),
                                               config.find(os.path.join(root, d)))]
                cfg = config.find(root)
                for name in files:
                    if not name.endswith(".py"):
                        continue
                    path = os.path.normpath(os.path.join(root, name))
                    if not config.is_excluded(path, cfg):
                        found.append(path)
            for path in sorted(found, key=lambda p: p.split(os.sep)):
                add(path)
        elif os.path.lexists(arg):
            add(os.path.normpath(arg))
        else:
            errors.append(f"{arg}: error: no such file or directory")
    return out


def _resolve(args: argparse.Namespace, path: str) -> Settings:
    from . import _frontend, config, lint

    cfg = config.find(path)
    try:
        cfg_select = lint.normalize_selectors(list(cfg.select)) if cfg.select else []
        cfg_ignore = lint.normalize_selectors(list(cfg.ignore))
    except ValueError as exc:
        raise UsageError(f"{os.path.join(cfg.root or '', 'pyproject.toml')}: "
                         f"[tool.graphmend] {exc}") from None
    # As Ruff layers them: --select replaces the file's select and drops its
    # ignore; --ignore alone adds to the file's ignore.
    if args.select is not None:
        select_t = tuple(args.select)
        ignore_t = tuple(args.ignore or ())
    else:
        select_t = tuple(cfg_select)
        ignore_t = tuple(cfg_ignore) + tuple(args.ignore or ())
    unsafe = args.unsafe_fixes if args.unsafe_fixes is not None else bool(cfg.unsafe_fixes)
    version_text = args.python_version or cfg.python_version
    try:
        version = _frontend.parse_version(version_text) if version_text \
            else _frontend.default_version()
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    regions = args.regions or cfg.regions or "reachable"
    return Settings(select_t, ignore_t, unsafe, version, regions)


def _read(path: str, result: FileResult) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        result.errors.append(f"{path}: error: cannot read: {exc.strerror or exc}")
        return None


def _syntax_message(path: str, err: dict) -> str:
    return f"{path}:{err['line'] or 1}:{err['char_col'] or 1}: " \
           f"{err['kind'] or 'SyntaxError'}: {err['message']}"


def _rule_errors(path: str, res: dict, result: FileResult) -> None:
    for e in res["rule_errors"]:
        result.errors.append(f"{path}: error: rule {e['code']} failed (a graphmend bug; "
                             f"its findings are dropped): {e['message']}")


def _check_one(path: str, settings: Settings) -> FileResult:
    from . import lint

    result = FileResult(path)
    data = _read(path, result)
    if data is None:
        return result
    res = lint.run_check(data, select=settings.select, ignore=settings.ignore,
                         version=settings.version, unsafe_fixes=settings.unsafe_fixes,
                         regions=settings.regions)
    if res["syntax_error"] is not None:
        result.errors.append(_syntax_message(path, res["syntax_error"]))
        return result
    _rule_errors(path, res, result)
    result.diagnostics = [lint.diagnostic_from_dict(d, path) for d in res["diagnostics"]]
    return result


def _decode_for_diff(data: bytes, encoding: str) -> str:
    import codecs

    if codecs.lookup(encoding).name == "utf-8":
        return data.decode("utf-8-sig", "replace")
    return data.decode(encoding, "replace")


def _split_lines(text: str) -> list[str]:
    """Lines with their endings, split at \n, \r\n and \r only (as Python's
    tokenizer does; str.splitlines also splits at form feeds and others)."""
    lines = re.split(r"(?<=\n)|(?<=\r)(?!\n)", text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def unified_diff(path: str, before: str, after: str) -> str:
    a = _split_lines(before)
    b = _split_lines(after)
    out = []
    # git's a/ b/ prefixes (`git apply` / `patch -p1` from the working
    # directory) for relative paths; absolute paths as they are.
    shown = path.replace(os.sep, "/")
    old, new = (shown, shown) if os.path.isabs(path) else (f"a/{shown}", f"b/{shown}")
    for line in difflib.unified_diff(a, b, fromfile=old, tofile=new):
        if line.endswith(("\n", "\r")):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _fix_one(path: str, settings: Settings, diff: bool) -> FileResult:
    from . import lint

    result = FileResult(path)
    data = _read(path, result)
    if data is None:
        return result
    res = lint.run_fix(data, select=settings.select, ignore=settings.ignore,
                       version=settings.version, unsafe_fixes=settings.unsafe_fixes,
                       regions=settings.regions)
    status = res["status"]
    if status == "input-syntax-error":
        result.errors.append(_syntax_message(path, res["syntax_error"]))
        return result
    _rule_errors(path, res, result)
    result.diagnostics = [lint.diagnostic_from_dict(d, path) for d in res["diagnostics"]]
    if status in ("fix-broke-syntax", "not-converged"):
        culprits = ", ".join(f"{c['code']} ({c['description']})" for c in res["culprits"])
        what = "produced invalid syntax" if status == "fix-broke-syntax" else "did not converge"
        detail = ""
        if res["syntax_error"] is not None:
            e = res["syntax_error"]
            detail = f": {e['kind']}: {e['message']} at line {e['line']}"
        result.errors.append(f"{path}: error: fixes {what} and were reverted (a graphmend bug; "
                             f"file left unchanged): {culprits}{detail}")
        return result
    if status != "fixed":
        return result
    try:
        mended = lint.encode_back(res["text"], res["encoding"])
    except lint.EncodingError as exc:
        result.errors.append(f"{path}: error: {exc}")
        return result
    if mended == data:
        return result
    result.changed = True
    result.applied = dict(res["applied_per_code"])
    if diff:
        result.diff = unified_diff(path, _decode_for_diff(data, res["encoding"]),
                                   _decode_for_diff(mended, res["encoding"]))
        return result
    try:
        lint.write_atomically(path, mended)
    except OSError as exc:
        result.changed = False
        result.applied = {}
        target = exc.filename or path
        result.errors.append(f"{path}: error: cannot write {target}: {exc.strerror or exc} "
                             "(file left unchanged)")
    return result


def _run(args: argparse.Namespace, work) -> tuple[list[FileResult], list[str]]:
    """Discovers files, resolves their settings, and runs ``work(path,
    settings)`` on a thread pool; results in discovery order."""
    from . import config

    errors: list[str] = []
    try:
        files = discover(args.paths, errors)
        settings = [_resolve(args, f) for f in files]
        warnings = set()
        for f in files:
            warnings.update(config.find(f).warnings)
        for w in sorted(warnings):
            print(f"graphmend: warning: {w}", file=sys.stderr)
    except config.ConfigError as exc:
        raise UsageError(str(exc)) from None
    def guarded(path: str, s: Settings) -> FileResult:
        try:
            return work(path, s)
        except Exception as exc:  # a graphmend bug: report it, go on with the others
            return FileResult(path, errors=[f"{path}: error: internal error "
                                            f"({type(exc).__name__}: {exc})"])

    jobs = args.jobs or min(32, (os.cpu_count() or 1) + 4)
    if jobs == 1 or len(files) <= 1:
        results = [guarded(f, s) for f, s in zip(files, settings)]
    else:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(guarded, files, settings))
    return results, errors


def _report_errors(errors: list[str], results: list[FileResult]) -> list[str]:
    all_errors = list(errors)
    for r in results:
        all_errors.extend(r.errors)
    for e in all_errors:
        print(e, file=sys.stderr)
    failed = sum(1 for r in results if r.errors) + len(errors)
    if failed:
        print(f"graphmend: {failed} path{'s' if failed != 1 else ''} could not be processed "
              f"(of {len(results) + len(errors)})", file=sys.stderr)
    return all_errors


def _cmd_check(args: argparse.Namespace) -> int:
    from . import __version__, lint, output

    try:
        results, errors = _run(args, _check_one)
    except UsageError as exc:
        print(f"graphmend: error: {exc}", file=sys.stderr)
        return 2
    diags = [d for r in results for d in r.diagnostics]
    all_errors = _report_errors(errors, results)
    unsafe = bool(args.unsafe_fixes)
    fmt = args.output_format
    if fmt == "text":
        sys.stdout.write(output.text(diags, unsafe_enabled=unsafe))
    elif fmt == "json":
        sys.stdout.write(output.json_output(diags))
    elif fmt == "github":
        sys.stdout.write(output.github(diags))
    else:
        selected = {d.code for d in diags}
        rules = lint.rules()
        if args.select is not None or args.ignore is not None:
            rules = [r for r in rules if r["code"] in selected or _enabled(args, r["code"])]
        sys.stdout.write(output.sarif(diags, rules, version=__version__, errors=all_errors))
    if all_errors:
        return 2
    if diags and not args.exit_zero:
        return 1
    return 0


def _enabled(args: argparse.Namespace, code: str) -> bool:
    """Is ``code`` selected by the command line's --select/--ignore alone?
    (Used only to list rules in SARIF's tool.driver.rules.)"""
    sel = list(args.select or []) or ["ALL"]
    ign = list(args.ignore or [])

    def spec(s: str) -> int:
        return 0 if s == "ALL" else len(s)

    best_sel = max((spec(s) for s in sel if s == "ALL" or code.startswith(s)), default=-1)
    best_ign = max((spec(s) for s in ign if s == "ALL" or code.startswith(s)), default=-1)
    return best_sel >= 0 and best_sel > best_ign


def _cmd_fix(args: argparse.Namespace) -> int:
    try:
        results, errors = _run(args, lambda f, s: _fix_one(f, s, args.diff))
    except UsageError as exc:
        print(f"graphmend: error: {exc}", file=sys.stderr)
        return 2
    all_errors = _report_errors(errors, results)
    remaining = [d for r in results for d in r.diagnostics]
    changed = [r for r in results if r.changed]
    per_code: dict[str, int] = {}
    for r in changed:
        for code, n in r.applied.items():
            per_code[code] = per_code.get(code, 0) + n
    n_fixed = sum(per_code.values())
    codes = ", ".join(f"{c}: {n}" for c, n in sorted(per_code.items()))
    if args.diff:
        for r in changed:
            sys.stdout.write(r.diff)
        verb = "Would fix"
        log = sys.stderr
    else:
        verb = "Fixed"
        log = sys.stdout
        from . import output

        if remaining:
            sys.stdout.write(output.text(remaining, unsafe_enabled=bool(args.unsafe_fixes),
                                         show_summary=False))
    line = (f"{verb} {n_fixed} finding{'s' if n_fixed != 1 else ''} in {len(changed)} "
            f"file{'s' if len(changed) != 1 else ''}")
    if codes:
        line += f" ({codes})"
    line += f"; {len(remaining)} remaining."
    print(line, file=log)
    if all_errors:
        return 2
    if args.exit_zero:
        return 0
    if remaining or (args.diff and changed):
        return 1
    return 0


def _cmd_rules(args: argparse.Namespace) -> int:
    import json

    from . import lint

    rules = lint.rules()
    if args.output_format == "json":
        sys.stdout.write(json.dumps(rules, indent=2, ensure_ascii=False) + "\n")
        return 0
    if not rules:
        print("No rules are shipped in this build.")
        return 0
    width = max(len(r["name"]) for r in rules)
    for r in rules:
        print(f"{r['code']}  {r['name']:<{width}}  {r['summary']}")
    return 0


def _cmd_rule(args: argparse.Namespace) -> int:
    from . import lint

    code = args.code.strip().upper()
    for r in lint.rules():
        if r["code"] == code or r["name"] == args.code.strip():
            print(f"# {r['code']} {r['name']}\n")
            print(f"{r['summary']}\n")
            doc = r["documentation"].rstrip("\n")
            if doc:
                print(doc)
            return 0
    print(f"graphmend: error: unknown rule {args.code!r} (see `graphmend rules`)",
          file=sys.stderr)
    return 2


def _selectors(value: str) -> list[str]:
    from . import lint

    try:
        return lint.normalize_selectors(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _jobs(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid job count {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError("--jobs must be at least 1")
    return n


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="files or directories (directories: every *.py below)")
    p.add_argument("--select", type=_selectors, metavar="CODES", default=None,
                   help="rule selectors to enable, comma-separated: ALL, GM (all), GM1 "
                        "(GM1xx), GM201 (one rule); overrides pyproject.toml")
    p.add_argument("--ignore", type=_selectors, metavar="CODES", default=None,
                   help="rule selectors to disable; overrides pyproject.toml")
    p.add_argument("--unsafe-fixes", action="store_true", default=None,
                   help="also apply (fix) or count (check) fixes marked unsafe")
    p.add_argument("--no-unsafe-fixes", dest="unsafe_fixes", action="store_false",
                   help="never apply unsafe fixes, whatever pyproject.toml says")
    p.add_argument("--python-version", metavar="X.Y",
                   help="parse as this CPython version (3.8 to 3.13; default: pyproject.toml's "
                        "python-version, else the running interpreter)")
    p.add_argument("--regions", choices=("reachable", "all"), default=None,
                   help="where rules fire: functions compiled as far as each file shows "
                        "(reachable, default) or every function (all: library mode, for code "
                        "reached from compiled regions in other modules)")
    p.add_argument("--exit-zero", action="store_true",
                   help="exit 0 even when findings remain (errors still exit 2)")
    p.add_argument("--jobs", "-j", type=_jobs, default=None, metavar="N",
                   help="files processed in parallel (default: CPUs + 4, at most 32)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="graphmend",
        description="Find and mend TorchDynamo graph breaks in Python source.")
    sub = parser.add_subparsers(dest="command", required=True)

    check = sub.add_parser("check", help="report graph breaks",
                           description="Report TorchDynamo graph breaks. Exit status: 0 none, "
                                       "1 findings, 2 usage error or a file not processed.")
    _add_common(check)
    check.add_argument("--output-format", choices=("text", "json", "sarif", "github"),
                       default="text", help="output format (default: text)")
    check.set_defaults(func=_cmd_check)

    fix = sub.add_parser("fix", help="mend graph breaks in place",
                         description="Apply fixes in place (atomically), or print them as a "
                                     "unified diff with --diff. Exit status: 0 nothing left, "
                                     "1 findings left (or, with --diff, changes to make), 2 "
                                     "usage error or a file not processed.")
    _add_common(fix)
    fix.add_argument("--diff", action="store_true",
                     help="write nothing; print a unified diff of the changes")
    fix.set_defaults(func=_cmd_fix)

    rules = sub.add_parser("rules", help="list the rules")
    rules.add_argument("--output-format", choices=("text", "json"), default="text")
    rules.set_defaults(func=_cmd_rules)

    rule = sub.add_parser("rule", help="print one rule's documentation")
    rule.add_argument("code", help="a rule code (GM201) or name")
    rule.set_defaults(func=_cmd_rule)

    dump = sub.add_parser("dump-ast", help="print the AST as CPython's ast.dump would")
    dump.add_argument("file", help="a Python file, or - for standard input")
    dump.add_argument("--python-version", metavar="X.Y",
                      help="parse as this CPython version (3.8 to 3.13; default: the running one)")
    dump.set_defaults(func=_cmd_dump_ast)

    sub.add_parser("explain", help="count Dynamo's graphs and breaks for MODULE:FACTORY",
                   add_help=False)
    sub.add_parser("run", help="run a script with selected packages mended on import",
                   add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "explain":
        return _cmd_explain(argv[1:])
    if argv and argv[0] == "run":
        return _cmd_run(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
