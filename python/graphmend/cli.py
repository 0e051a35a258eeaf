"""The ``graphmend`` command line.

    graphmend check PATH...|- [--select CODES] [--ignore CODES] [--fix] [--show-fixes]
                            [--output-format text|json|sarif|github] [--exit-zero]
                            [--statistics] [-q] [--exclude P] [--extend-exclude P]
                            [--force-exclude] [--no-respect-gitignore] [--stdin-filename F]
                            [--unsafe-fixes] [--python-version X.Y] [--jobs N]
    graphmend fix PATH...|- [--diff] [--unsafe-fixes] [--select ...] [--ignore ...] (as check)
    graphmend rules [--output-format text|json]
    graphmend rule CODE
    graphmend dump-ast FILE|- [--python-version X.Y]
    graphmend explain MODULE:FACTORY ...
    graphmend run [--package NAME]... [--unsafe-fixes] [--report] [--dynamo-switches]
                  (SCRIPT | -m MODULE) [ARGS...]
    graphmend --version

Exit status (check / fix), Ruff's convention: 0 nothing found (fix: nothing
left; any with --exit-zero), 1 findings (fix: findings left, or with --diff
changes to apply) -- a file CPython cannot decode or parse is a finding of
that file (``invalid-syntax``) --, 2 a usage or configuration error, or a
file that could not be read or written (not a regular file, no permission,
changed while fix ran) or a rule bug; every other file is still processed.
130 after Ctrl-C (143 after SIGTERM), saying which files were rewritten.
"""

from __future__ import annotations

import argparse
import codecs
import dataclasses
import difflib
import gc
import os
import re
import signal
import stat
import sys
import threading
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
    from . import lint

    try:
        if args.file == "-":
            data = sys.stdin.buffer.read()
        else:
            data, _ = lint.read_regular(args.file)
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


# The code of the diagnostic a file that cannot be decoded or parsed gets (as
# Ruff's invalid-syntax): not a rule, so neither selectable nor ignorable.
SYNTAX_CODE = "invalid-syntax"


@dataclass
class Settings:
    """Resolved options for one file (command line over pyproject.toml)."""

    select: tuple[str, ...]
    ignore: tuple[str, ...]
    unsafe_fixes: bool
    version: tuple[int, int]
    regions: str = "package"
    # package mode: functions of this file that compiled code in the other
    # files of the run reaches (lint.package_roots)
    extra_roots: tuple[str, ...] = ()
    # package mode: the package analysis found no compiled region in this
    # file, and it holds no suppression comment: no rule has anything to
    # look at, so the file is not analysed again
    region_free: bool = False
    # package mode, check: what run_check gave this file in the package
    # analysis (which read, parsed and checked it already)
    checked: dict | None = None


@dataclass
class FileResult:
    path: str
    diagnostics: list = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # lines for stderr
    changed: bool = False
    diff: bytes = b""
    applied: dict[str, int] = field(default_factory=dict)
    mended: bytes | None = None  # fix of standard input: the bytes to print


class RunState:
    """What a check/fix run shares between its worker threads: a stop flag
    (set on Ctrl-C / SIGTERM: no file is written after it) and the files
    already rewritten, for the message an interrupted run prints."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.written: list[str] = []


def _is_venv(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, "pyvenv.cfg"))


def _gitignored(root: str, paths: list[str]) -> set[str]:
    """Those of ``paths`` (below directory ``root``) that git ignores
    (.gitignore files, .git/info/exclude, core.excludesFile; tracked files
    never are), asked of ``git check-ignore``; nothing when ``root`` is not in
    a git work tree or git is missing, and nothing when ``root`` itself is
    ignored: a directory named on the command line is walked (as Ruff does),
    where git would ignore everything in it."""
    if not paths:
        return set()
    import subprocess

    absolute = os.path.abspath(root)
    parent, name = os.path.split(absolute)
    if name:
        try:
            probe = subprocess.run(["git", "check-ignore", "-q", name + "/"], cwd=parent,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   check=False)
        except OSError:
            return set()
        if probe.returncode == 0:
            return set()
    try:
        proc = subprocess.run(
            ["git", "check-ignore", "--stdin", "-z"], cwd=root,
            input=b"".join(os.fsencode(os.path.relpath(p, root)) + b"\0" for p in paths),
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    except OSError:
        return set()
    if proc.returncode not in (0, 1):
        return set()
    return {os.path.normpath(os.path.join(root, os.fsdecode(p)))
            for p in proc.stdout.split(b"\0") if p}


def _cli_excludes(args: argparse.Namespace):
    """(patterns of --exclude/--extend-exclude as a Config rooted at the
    working directory, whether --exclude replaces the files' own exclude)."""
    from . import config

    patterns = tuple(getattr(args, "exclude", None) or ()) + \
        tuple(getattr(args, "extend_exclude", None) or ())
    cli_cfg = config.Config(root=os.getcwd(), exclude=patterns) if patterns else None
    return cli_cfg, getattr(args, "exclude", None) is not None


def _excluded(path: str, args: argparse.Namespace, is_file: bool | None = None) -> bool:
    from . import config

    cfg = config.find(path, _CONFIGS, is_file)
    cli_cfg, replace = _cli_excludes(args)
    if replace:
        cfg = dataclasses.replace(cfg, exclude=())
    return config.is_excluded(path, cfg) or (cli_cfg is not None
                                             and config.is_excluded(path, cli_cfg))


def discover(paths: list[str], errors: list[str], args: argparse.Namespace | None = None,
             warnings: list[str] | None = None) -> list[str]:
    """Files to process, in a deterministic order: each argument in turn; a
    directory walked in sorted order over ``*.py`` regular files, skipping
    SKIP_DIRS, virtualenvs, the ``exclude`` globs (pyproject.toml and the
    command line) and what ``.gitignore`` ignores. A file named on the command
    line is always processed (unless ``--force-exclude``); anything met in a
    walk that is not a regular file (a FIFO, a socket, a device) is reported
    in ``warnings`` and skipped."""
    args = args if args is not None else argparse.Namespace()
    warnings = warnings if warnings is not None else []
    gitignore = getattr(args, "respect_gitignore", True)
    out: list[str] = []
    seen: set[str] = set()

    def add(path: str, key: str | None = None) -> None:
        key = key or os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            out.append(path)

    for arg in paths:
        if os.path.isdir(arg):
            found = []
            real: dict[str, str] = {}  # path -> its realpath, for the files not links
            for root, dirs, files in os.walk(arg):
                dirs[:] = [
                    d for d in dirs
                    if d not in SKIP_DIRS and not _is_venv(os.path.join(root, d))
                    and not _excluded(os.path.join(root, d), args, is_file=False)]
                real_root = None
                for name in files:
                    if not name.endswith(".py"):
                        continue
                    path = os.path.normpath(os.path.join(root, name))
                    if _excluded(path, args, is_file=True):
                        continue
                    try:
                        st = os.lstat(path)
                        if stat.S_ISLNK(st.st_mode):
                            st = os.stat(path)
                        else:  # realpath(root/name) is realpath(root)/name
                            real_root = real_root or os.path.realpath(root)
                            real[path] = os.path.join(real_root, name)
                    except OSError:
                        found.append(path)  # a dangling link: reported when read
                        continue
                    if not stat.S_ISREG(st.st_mode):
                        warnings.append(f"{path}: not a regular file; skipped")
                        continue
                    found.append(path)
            if gitignore and found:
                ignored = _gitignored(arg, found)
                found = [p for p in found if os.path.normpath(p) not in ignored]
            for path in sorted(found, key=lambda p: p.split(os.sep)):
                add(path, real.get(path))
        elif os.path.lexists(arg):
            path = os.path.normpath(arg)
            if getattr(args, "force_exclude", False) and (
                    _excluded(path, args) or (gitignore and _gitignored(
                        os.path.dirname(os.path.abspath(path)), [os.path.abspath(path)]))):
                continue
            add(path)
        else:
            errors.append(f"{arg}: error: no such file or directory")
    return out


def _resolve(args: argparse.Namespace, path: str, cache: dict | None = None) -> Settings:
    """The settings of ``path``. ``cache``: a dict kept for one run
    (configuration -> settings), as the files under one pyproject.toml share
    them; given, ``path`` is a file discover() found."""
    from . import config

    cfg = config.find(path, _CONFIGS, is_file=True if cache is not None else None)
    if cache is None:
        return _settings(args, cfg)
    if cfg not in cache:
        cache[cfg] = _settings(args, cfg)
    return cache[cfg]


def _settings(args: argparse.Namespace, cfg) -> Settings:
    from . import _frontend, lint

    where = f"{os.path.join(cfg.root or '', 'pyproject.toml')}: [tool.graphmend]"
    try:
        cfg_select = lint.normalize_selectors(list(cfg.select)) if cfg.select else []
        cfg_ignore = lint.normalize_selectors(list(cfg.ignore))
    except ValueError as exc:
        raise UsageError(f"{where} {exc}") from None
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
        if args.python_version:
            raise UsageError(str(exc)) from None
        raise UsageError(f"{where} python-version: {exc}") from None
    regions = args.regions or cfg.regions or "package"
    return Settings(select_t, ignore_t, unsafe, version, regions)


def _read(path: str, result: FileResult, stdin: bytes | None = None):
    """(bytes, stat) of a regular file, or (None, None) with the error noted.
    ``stdin``: the bytes already read from standard input for ``-``."""
    from . import lint

    if stdin is not None:
        return stdin, None
    try:
        return lint.read_regular(path)
    except OSError as exc:
        result.errors.append(f"{path}: error: cannot read: {exc.strerror or exc}")
        return None, None


def _syntax_diagnostic(path: str, err: dict):
    """A file that cannot be decoded or parsed: one diagnostic, at the error."""
    from . import lint

    line = err["line"] or 1
    char_col = err["char_col"] or 1
    col = err["col"] or 0
    return lint.Diagnostic(
        code=SYNTAX_CODE, message=f"{err['kind'] or 'SyntaxError'}: {err['message']}", why="",
        line=line, col=col, char_col=char_col, end_line=line, end_col=col,
        end_char_col=char_col, begin=0, end=0, applicability="display-only", path=path)


def _rule_errors(path: str, res: dict, result: FileResult) -> None:
    for e in res["rule_errors"]:
        result.errors.append(f"{path}: error: rule {e['code']} failed (a graphmend bug; "
                             f"its findings are dropped): {e['message']}")


def _check_one(path: str, settings: Settings, stdin: bytes | None = None) -> FileResult:
    from . import lint

    result = FileResult(path)
    if settings.region_free and stdin is None:
        return result
    if settings.checked is not None and stdin is None:
        res = settings.checked
    else:
        data, _ = _read(path, result, stdin)
        if data is None:
            return result
        res = lint.run_check(data, select=settings.select, ignore=settings.ignore,
                             version=settings.version, unsafe_fixes=settings.unsafe_fixes,
                             regions=settings.regions, extra_roots=settings.extra_roots)
    if res["syntax_error"] is not None:
        result.diagnostics = [_syntax_diagnostic(path, res["syntax_error"])]
        return result
    _rule_errors(path, res, result)
    result.diagnostics = [lint.diagnostic_from_dict(d, path) for d in res["diagnostics"]]
    return result


def _diff_name(path: str, prefix: bytes) -> bytes:
    shown = os.fsencode(path).replace(os.fsencode(os.sep), b"/")
    if os.path.isabs(path):
        name = shown
    else:
        name = prefix + shown
    # git's convention: a name holding a space ends with a tab, so that
    # GNU patch reads all of it.
    return name + (b"\t" if b" " in name or b"\t" in name else b"")


def unified_diff(path: str, before: bytes, after: bytes) -> bytes:
    """A unified diff of the file's own bytes (its encoding, BOM and line
    endings as they are), in lines split at ``\n`` only, as ``patch`` and
    ``git apply`` read them (a CR-only file is one line to them). git's
    ``a/`` ``b/`` prefixes for relative paths (``git apply`` / ``patch -p1``
    from the working directory); absolute paths as they are."""
    a = re.split(rb"(?<=\n)", before)
    b = re.split(rb"(?<=\n)", after)
    if a and a[-1] == b"":
        a.pop()
    if b and b[-1] == b"":
        b.pop()
    out = [b"--- " + _diff_name(path, b"a/") + b"\n", b"+++ " + _diff_name(path, b"b/") + b"\n"]
    body = list(difflib.diff_bytes(difflib.unified_diff, a, b, b"", b"", n=3))
    if not body:
        return b""
    for line in body[2:]:
        if line.endswith(b"\n"):
            out.append(line)
        else:
            out.append(line + b"\n\\ No newline at end of file\n")
    return b"".join(out)


def _fix_one(path: str, settings: Settings, diff: bool, state: RunState | None = None,
             stdin: bytes | None = None) -> FileResult:
    from . import lint

    state = state or RunState()
    result = FileResult(path)
    if state.stop.is_set() or (settings.region_free and stdin is None):
        return result
    data, st = _read(path, result, stdin)
    if data is None:
        return result
    if stdin is not None:
        result.mended = data
    res = lint.run_fix(data, select=settings.select, ignore=settings.ignore,
                       version=settings.version, unsafe_fixes=settings.unsafe_fixes,
                       regions=settings.regions, extra_roots=settings.extra_roots)
    status = res["status"]
    if status == "input-syntax-error":
        result.diagnostics = [_syntax_diagnostic(path, res["syntax_error"])]
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
        mended = lint.encode_back(res["text"], res["encoding"], data)
    except lint.EncodingError as exc:
        result.errors.append(f"{path}: error: {exc}")
        return result
    if mended == data:
        return result
    result.changed = True
    result.applied = dict(res["applied_per_code"])
    if diff:
        result.diff = unified_diff(path, data, mended)
        return result
    if stdin is not None:
        result.mended = mended
        return result
    try:
        with state.lock:
            if state.stop.is_set():  # interrupted: write nothing more
                raise InterruptedError
        # An interrupted run waits for the writes under way, so each file
        # is either written and listed or untouched.
        lint.write_atomically(path, mended, original=data, original_stat=st)
        with state.lock:
            state.written.append(path)
    except InterruptedError:
        result.changed = False
        result.applied = {}
    except lint.FileChangedError:
        result.changed = False
        result.applied = {}
        result.errors.append(f"{path}: error: the file changed while graphmend was working on "
                             "it; not rewritten (your edit is kept; run fix again)")
    except OSError as exc:
        result.changed = False
        result.applied = {}
        target = exc.filename or path
        result.errors.append(f"{path}: error: cannot write {target}: {exc.strerror or exc} "
                             "(file left unchanged)")
    return result


class _Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is (exit status 143)."""


def _run(args: argparse.Namespace, work, state: RunState | None = None,
         ) -> tuple[list[FileResult], list[str]]:
    """Discovers files, resolves their settings, and runs ``work(path,
    settings)`` on worker threads (the main thread only waits, so Ctrl-C
    never lands inside a write); results in discovery order."""
    from . import config

    state = state or RunState()
    errors: list[str] = []
    stdin = args.paths == ["-"]
    if "-" in args.paths and not stdin:
        raise UsageError("'-' (standard input) cannot be combined with other paths")
    try:
        walk_warnings: list[str] = []
        if stdin:
            name = args.stdin_filename or "-"
            files = [name]
            data = sys.stdin.buffer.read()
            settings = [_resolve(args, name if args.stdin_filename else os.getcwd())]
            base = work
            def work(f, s):
                return base(f, s, stdin=data)
        else:
            files = discover(args.paths, errors, args, walk_warnings)
            resolved: dict = {}
            settings = [_resolve(args, f, resolved) for f in files]
        warnings = set(walk_warnings)
        # discover() returns files; standard input's name may be anything
        found = {id(c): c for c in (config.find(f, _CONFIGS, is_file=not stdin or None)
                                    for f in files)}
        for cfg in found.values():
            warnings.update(cfg.warnings)
        if not args.quiet:
            for w in sorted(warnings):
                print(f"graphmend: warning: {w}", file=sys.stderr)
    except config.ConfigError as exc:
        raise UsageError(str(exc)) from None
    if not stdin:
        settings = _with_package_roots(files, settings, args.jobs or os.cpu_count() or 1,
                                       check=work is _check_one)

    def guarded(path: str, s: Settings) -> FileResult:
        try:
            return work(path, s)
        except Exception as exc:  # a graphmend bug: report it, go on with the others
            return FileResult(path, errors=[f"{path}: error: internal error "
                                            f"({type(exc).__name__}: {exc})"])

    # What the package analysis already decided (a file it checked, one with
    # no region) takes no work and writes nothing: done here, not queued.
    done = [None if stdin or (s.checked is None and not s.region_free) else guarded(f, s)
            for f, s in zip(files, settings)]
    todo = [i for i, r in enumerate(done) if r is None]
    jobs = args.jobs or min(32, (os.cpu_count() or 1) + 4)
    pool = ThreadPoolExecutor(max_workers=max(1, min(jobs, len(todo))))
    try:
        futures = {i: pool.submit(guarded, files[i], settings[i]) for i in todo}
        results = [r if r is not None else futures[i].result() for i, r in enumerate(done)]
    except KeyboardInterrupt:
        with state.lock:
            state.stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return results, errors


def _with_package_roots(files: list[str], settings: list[Settings],
                        jobs: int, check: bool = False) -> list[Settings]:
    """Package mode: the files of the run that share a package are analysed
    together, and each gets the functions the others' compiled code reaches
    as extra region roots. ``check``: the files are checked in the same pass
    (each parsed once), the results go to the workers in
    ``Settings.checked``. A file that cannot be read is left to the worker
    to report."""
    from . import lint

    by_version: dict[tuple[int, int], list[int]] = {}
    for i, s in enumerate(settings):
        if s.regions == "package":
            by_version.setdefault(s.version, []).append(i)
    settings = list(settings)
    for version, members in by_version.items():
        read: dict[str, bytes] = {}
        for i in members:
            if files[i] == "-":
                continue
            try:
                read[files[i]] = lint.read_regular(files[i])[0]
            except OSError:
                pass
        if check:
            scan = lint.package_check(
                [(files[i], read[files[i]], settings[i].select, settings[i].ignore,
                  settings[i].unsafe_fixes) for i in members if files[i] in read],
                version, jobs=jobs)
        else:
            scan = lint.package_scan(list(read.items()), version, jobs=jobs)
        for i in members:
            roots, regions, *checked = scan.get(files[i], ([], None))
            change: dict = {}
            if checked and checked[0] is not None:
                change["checked"] = checked[0]
            if roots:
                change["extra_roots"] = tuple(roots)
            elif regions is False and _no_suppression(read[files[i]]):
                change["region_free"] = True
            if change:
                settings[i] = dataclasses.replace(settings[i], **change)
    return settings


def _no_suppression(data: bytes) -> bool:
    """No `# graphmend: ignore` comment can be in these bytes (a UTF-16 or
    UTF-32 file may spell one in bytes other than ASCII's)."""
    return b"graphmend" not in data and not data.startswith(
        (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_BE))


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


def _statistics(diags) -> str:
    """Ruff's --statistics: one line per code, most frequent first."""
    from . import lint

    names = {r["code"]: r["name"] for r in lint.rules()}
    counts: dict[str, list[int]] = {}
    for d in diags:
        c = counts.setdefault(d.code, [0, 0])
        c[0] += 1
        c[1] += d.fix_applies
    if not counts:
        return ""
    width = max(len(str(n)) for n, _ in counts.values())
    code_width = max(len(c) for c in counts)
    lines = []
    for code, (n, fixable) in sorted(counts.items(), key=lambda kv: (-kv[1][0], kv[0])):
        mark = "[*]" if fixable else "[ ]"
        lines.append(f"{n:>{width}}\t{code:<{code_width}}\t{mark} {names.get(code, code)}")
    return "\n".join(lines) + "\n"


def _show_fixes(results: list[FileResult], log) -> None:
    """Ruff's --show-fixes: what was fixed, per file and code."""
    from . import lint

    names = {r["code"]: r["name"] for r in lint.rules()}
    fixed = [r for r in results if r.changed and r.applied]
    total = sum(sum(r.applied.values()) for r in fixed)
    if not fixed:
        return
    print(f"\nFixed {total} finding{'s' if total != 1 else ''}:", file=log)
    for r in fixed:
        print(f"- {r.path}:", file=log)
        for code, n in sorted(r.applied.items()):
            print(f"    {n} \u00d7 {code} ({names.get(code, code)})", file=log)
    print(file=log)


def _write_bytes(data: bytes) -> None:
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(data.decode("utf-8", "surrogateescape"))
    else:
        buffer.write(data)
        buffer.flush()


def _interrupted(state: RunState, exc: KeyboardInterrupt) -> int:
    with state.lock:
        state.stop.set()
        written = list(state.written)
    what = "terminated" if isinstance(exc, _Terminated) else "interrupted"
    if written:
        print(f"graphmend: {what}; {len(written)} file{'s' if len(written) != 1 else ''} "
              "had already been rewritten:", file=sys.stderr)
        for p in written:
            print(f"  {p}", file=sys.stderr)
    else:
        print(f"graphmend: {what}; no file was changed", file=sys.stderr)
    return 143 if isinstance(exc, _Terminated) else 130


def _output(args: argparse.Namespace, diags: list, all_errors: list[str], *,
            summary: str | None = None) -> None:
    from . import __version__, lint, output

    unsafe = bool(args.unsafe_fixes)
    fmt = args.output_format
    if args.statistics and fmt == "text":
        sys.stdout.write(_statistics(diags))
        if not args.quiet and diags:
            print(summary or output.summary(diags, unsafe_enabled=unsafe))
    elif fmt == "text":
        if diags:
            sys.stdout.write(output.text(diags, unsafe_enabled=unsafe, show_summary=False))
        if not args.quiet:
            if summary is not None:
                print(summary)
            elif not diags and all_errors:
                print("No findings in the files processed.")
            else:
                print(output.summary(diags, unsafe_enabled=unsafe))
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


def _cmd_check(args: argparse.Namespace) -> int:
    if args.fix:
        return _cmd_fix(args, from_check=True)
    try:
        results, errors = _run(args, _check_one)
    except UsageError as exc:
        print(f"graphmend: error: {exc}", file=sys.stderr)
        return 2
    diags = [d for r in results for d in r.diagnostics]
    all_errors = _report_errors(errors, results)
    _output(args, diags, all_errors)
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


def _cmd_fix(args: argparse.Namespace, from_check: bool = False) -> int:
    state = RunState()
    diff = getattr(args, "diff", False)
    stdin = args.paths == ["-"]
    try:
        results, errors = _run(args, lambda f, s, stdin=None: _fix_one(f, s, diff, state, stdin),
                               state)
    except UsageError as exc:
        print(f"graphmend: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        return _interrupted(state, exc)
    all_errors = _report_errors(errors, results)
    remaining = [d for r in results for d in r.diagnostics]
    changed = [r for r in results if r.changed]
    per_code: dict[str, int] = {}
    for r in changed:
        for code, n in r.applied.items():
            per_code[code] = per_code.get(code, 0) + n
    n_fixed = sum(per_code.values())
    codes = ", ".join(f"{c}: {n}" for c, n in sorted(per_code.items()))
    # Standard input: the mended source (or the diff) goes to stdout, so
    # everything else goes to stderr.
    log = sys.stderr if (diff or stdin) else sys.stdout
    if diff:
        for r in changed:
            _write_bytes(r.diff)
    elif stdin and results and results[0].mended is not None:
        _write_bytes(results[0].mended)
    if getattr(args, "show_fixes", False) and not diff:
        _show_fixes(results, log)
    if from_check and not stdin and not diff:
        n = len(remaining) + n_fixed
        summary = (f"Found {n} finding{'s' if n != 1 else ''} ({n_fixed} fixed, "
                   f"{len(remaining)} remaining).") if n else None
        _output(args, remaining, all_errors, summary=summary)
    else:
        if remaining and not (diff or stdin):
            from . import output

            if getattr(args, "statistics", False):
                sys.stdout.write(_statistics(remaining))
            else:
                sys.stdout.write(output.text(remaining, unsafe_enabled=bool(args.unsafe_fixes),
                                             show_summary=False))
        elif remaining and stdin and not diff:
            from . import output

            sys.stderr.write(output.text(remaining, unsafe_enabled=bool(args.unsafe_fixes),
                                         show_summary=False))
        verb = "Would fix" if diff else "Fixed"
        line = (f"{verb} {n_fixed} finding{'s' if n_fixed != 1 else ''} in {len(changed)} "
                f"file{'s' if len(changed) != 1 else ''}")
        if codes:
            line += f" ({codes})"
        line += f"; {len(remaining)} remaining."
        if not args.quiet:
            print(line, file=log)
    if all_errors:
        return 2
    if args.exit_zero:
        return 0
    if remaining or (diff and changed):
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


def _patterns(value: str) -> list[str]:
    return [p for p in (v.strip() for v in value.split(",")) if p]


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
    p.add_argument("--regions", choices=("package", "reachable", "all"), default=None,
                   help="where rules fire: functions compiled code reaches, across the files "
                        "of the run that share a package (package, default; a file alone: as "
                        "far as it shows), as far as each file shows (reachable), or every "
                        "function (all: library mode)")
    p.add_argument("--exit-zero", action="store_true",
                   help="exit 0 even when findings (syntax errors included) remain; usage, "
                        "configuration and I/O errors still exit 2")
    p.add_argument("--jobs", "-j", type=_jobs, default=None, metavar="N",
                   help="files processed in parallel (default: CPUs + 4, at most 32)")
    p.add_argument("--exclude", type=_patterns, default=None, metavar="PATTERNS",
                   action="extend",
                   help="glob patterns (comma-separated, repeatable) of files and directories "
                        "not to walk into; replaces pyproject.toml's exclude")
    p.add_argument("--extend-exclude", type=_patterns, default=None, metavar="PATTERNS",
                   action="extend", help="more patterns, in addition to exclude")
    p.add_argument("--force-exclude", action="store_true",
                   help="apply the excludes and .gitignore to files named on the command line "
                        "too (as pre-commit passes them)")
    p.add_argument("--respect-gitignore", dest="respect_gitignore", action="store_true",
                   default=True, help="skip what .gitignore ignores in a walk (default)")
    p.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false",
                   help="walk into what .gitignore ignores too")
    p.add_argument("--stdin-filename", metavar="PATH", default=None,
                   help="with PATH -: the name standard input is reported under (and whose "
                        "pyproject.toml applies)")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="print findings (and errors), but no summary or warnings")
    p.add_argument("--statistics", action="store_true",
                   help="print the number of findings per rule instead of each finding")
    p.add_argument("--show-fixes", action="store_true",
                   help="list the fixes applied, per file and rule")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="graphmend",
        description="Find and mend TorchDynamo graph breaks in Python source.")
    from . import __version__

    parser.add_argument("--version", "-V", action="version",
                        version=f"graphmend {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    check = sub.add_parser("check", help="report graph breaks",
                           description="Report TorchDynamo graph breaks. Exit status: 0 none, "
                                       "1 findings (a syntax error is one), 2 usage, "
                                       "configuration or I/O error.")
    _add_common(check)
    check.add_argument("--output-format", choices=("text", "json", "sarif", "github"),
                       default="text", help="output format (default: text)")
    check.add_argument("--fix", action="store_true",
                       help="apply the fixes in place (as `graphmend fix`), then report what "
                            "is left")
    check.set_defaults(func=_cmd_check)

    fix = sub.add_parser("fix", help="mend graph breaks in place",
                         description="Apply fixes in place (atomically), or print them as a "
                                     "unified diff with --diff. Exit status: 0 nothing left, "
                                     "1 findings left (or, with --diff, changes to make), 2 "
                                     "usage, configuration or I/O error (a file not "
                                     "writable, or changed while fix ran).")
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


# Configurations by directory, for one run of main() (config.find's cache).
_CONFIGS: dict = {}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    _CONFIGS.clear()
    if argv and argv[0] == "explain":
        return _cmd_explain(argv[1:])
    if argv and argv[0] == "run":
        return _cmd_run(argv[1:])
    args = build_parser().parse_args(argv)
    if getattr(args, "stdin_filename", None) and args.paths != ["-"]:
        print("graphmend: error: --stdin-filename needs the path - (standard input)",
              file=sys.stderr)
        return 2
    for stream in (sys.stdout, sys.stderr):
        # A file name that the terminal's encoding cannot show is escaped,
        # never a traceback.
        if hasattr(stream, "reconfigure") and stream.errors == "strict":
            try:
                stream.reconfigure(errors="backslashreplace")
            except (ValueError, OSError):
                pass
    old_term = None
    if threading.current_thread() is threading.main_thread():
        old_term = signal.signal(signal.SIGTERM, _on_sigterm)
    # A run builds many small acyclic objects (a dict per diagnostic): the
    # cyclic collector would only traverse them again and again (7% of a
    # check that reports 34,000 findings). Restored for an in-process caller.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return args.func(args)
    except KeyboardInterrupt as exc:
        return 143 if isinstance(exc, _Terminated) else 130
    except BrokenPipeError:
        return 0
    finally:
        if collecting:
            gc.enable()
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)


def _on_sigterm(signum, frame):
    raise _Terminated()


if __name__ == "__main__":
    sys.exit(main())
