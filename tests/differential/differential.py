#!/usr/bin/env python3
"""Differential test of graphmend's parser against CPython 3.8–3.13.

For every .py file of the corpus (the stdlib of each pyenv CPython plus
site-packages, deduplicated by content) and every CPython version on the
machine, compare graphmend's dump with CPython's

    ast.dump(ast.parse(<file bytes>), include_attributes=True)

computed by that very version in a worker subprocess. Files CPython rejects
must be rejected by graphmend too (messages need not match).

graphmend is driven through `gm_dump --batch` (default: the newest
build*/gm_dump of the repository), or the Python extension
(--use-extension), or, to test the harness itself, a CPython version posing
as graphmend (--fake-graphmend 3.11). --check-dumper tests the dumper alone:
CPython's own tree is serialised, rebuilt in C++ and dumped.

Oracle results are cached (content sha256 + exact CPython version) in
~/.cache/graphmend-differential/oracle.sqlite.

Categories per file and version:
  identical         same dump
  both-reject       CPython and graphmend reject the file
  different         both accept, dumps differ
    fstring-position-only  (< 3.12 only) they differ only in positions of nodes
                           inside f-strings; allowed up to 0.1% of files
  gm-error          graphmend rejects, CPython accepts
  missed-reject     CPython rejects, graphmend accepts
  crash             gm_dump died or timed out on the file
  skipped           CPython could not build or print the tree (recursion
                    limit, 4300-digit int repr limit), or the file is unreadable
  oracle-defect     CPython failed on the file with a known internal error (not
                    a SyntaxError) listed in ORACLE_DEFECTS, and graphmend
                    accepted it; not a failure, but listed with its cause

Exit status: 0 when every checked file agrees (up to the allowance), 1 if
not, 2 on usage errors.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import glob
import hashlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import dumpdiff  # noqa: E402

# The interpreter lookup lives in the package source (no build needed for it).
sys.path.insert(0, os.path.join(REPO, "python"))
from graphmend._interpreters import PYENV, cpython_interpreters, full_version  # noqa: E402
ORACLE = os.path.join(HERE, "oracle_worker.py")
EXT_WORKER = os.path.join(HERE, "ext_worker.py")
CACHE_DIR = os.path.join(os.path.expanduser("~"), ".cache", "graphmend-differential")
ORACLE_SCHEMA = "v1"
FSTRING_ALLOWANCE = 0.001  # fraction of files

CATEGORIES = ["identical", "both-reject", "different", "fstring-position-only", "gm-error",
              "missed-reject", "crash", "skipped", "oracle-defect"]
FAILING = ("different", "gm-error", "missed-reject", "crash")

# Known defects of an oracle: a CPython release that fails on a valid file
# with an internal error rather than a SyntaxError. Without this list the
# file counts as "missed-reject" (CPython rejects, graphmend accepts), which
# would be wrong: graphmend is right to accept it. An entry matches only
# that exact CPython release and that exact message, recorded the way
# oracle_worker.py records an exception that is not a SyntaxError (line 0,
# column 0), and only when graphmend accepted the file. Matches are counted
# as "oracle-defect" and listed, with the cause, in every report.
ORACLE_DEFECTS = [
    {
        "version": "3.12.1",
        "message": "field 'value' is required for Constant",
        "cause": ("CPython 3.12.1's ast.parse raises ValueError (an AST construction error, "
                  "not a SyntaxError) for a self-documenting expression inside a format spec, "
                  "f\"{x:{y=}}\": python/cpython#121130, a bug since 3.12.0 fixed in 2024; "
                  "3.13's Lib/test/test_fstring.py has such an f-string (line 1609)"),
    },
]


def oracle_defect(version: str, cpython_err: bytes) -> dict | None:
    """The ORACLE_DEFECTS entry explaining CPython `version`'s rejection, if any."""
    for d in ORACLE_DEFECTS:
        if version == d["version"] and cpython_err == f"SyntaxError\t0\t0\t{d['message']}".encode():
            return d
    return None


# --------------------------------------------------------------------------
# interpreters and corpus


def find_interpreters() -> dict[int, str]:
    """{minor: python executable} for CPython 3.8–3.13 under pyenv
    (graphmend._interpreters, the one helper the tests and the demo use too)."""
    return {minor: exe for (_, minor), exe in cpython_interpreters(include_current=False).items()}


def default_roots(interps: dict[int, str]) -> list[str]:
    roots = []
    for minor, exe in sorted(interps.items()):
        lib = os.path.join(os.path.dirname(os.path.dirname(exe)), "lib", f"python3.{minor}")
        if os.path.isdir(lib):
            roots.append(lib)  # stdlib; site-packages of this version included below
    venv_sp = os.path.join(REPO, ".venv", "lib", "python3.11", "site-packages")
    if os.path.isdir(venv_sp):
        roots.append(venv_sp)
    return roots


def walk_py(root: str):
    if os.path.isfile(root):
        yield root
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for fn in sorted(filenames):
            if fn.endswith(".py"):
                yield os.path.join(dirpath, fn)


@dataclass
class CorpusFile:
    path: str
    digest: str
    size: int


def collect_corpus(roots: list[str]) -> list[CorpusFile]:
    """Every .py file under roots, one per distinct content (first path wins)."""
    seen: dict[str, CorpusFile] = {}
    real_seen = set()
    for root in roots:
        for p in walk_py(root):
            if "\n" in p or "\r" in p:
                continue
            try:
                rp = os.path.realpath(p)
                if rp in real_seen or not os.path.isfile(rp):
                    continue
                real_seen.add(rp)
                with open(p, "rb") as f:
                    data = f.read()
            except OSError:
                continue
            h = hashlib.sha256(data).hexdigest()
            if h not in seen:
                seen[h] = CorpusFile(p, h, len(data))
    return list(seen.values())


def sample_corpus(files: list[CorpusFile], n: int, seed: int) -> list[CorpusFile]:
    """A deterministic sample: depends on the set of contents and the seed."""
    ordered = sorted(files, key=lambda f: f.digest)
    if n >= len(ordered):
        return ordered
    return sorted(random.Random(seed).sample(ordered, n), key=lambda f: f.path)


# --------------------------------------------------------------------------
# framed records (gm_dump --batch, oracle_worker.py, ext_worker.py)


@dataclass
class Record:
    status: str
    path: str
    text: bytes


def read_records(blob: bytes) -> tuple[list[Record], bool]:
    """Parse framed records; returns (records, ended_cleanly)."""
    out: list[Record] = []
    pos = 0
    n = len(blob)
    while pos < n:
        eol = blob.find(b"\n", pos)
        if eol < 0:
            break
        header = blob[pos:eol].split(b" ")
        if len(header) != 4 or header[0] != b"#GM":
            break
        status = header[1].decode()
        plen, tlen = int(header[2]), int(header[3])
        p0 = eol + 1
        t0 = p0 + plen + 1
        end = t0 + tlen + 1
        if end > n:
            break  # truncated by a crash
        if status == "END":
            return out, True
        out.append(Record(status, blob[p0:p0 + plen].decode("utf-8", "surrogateescape"), blob[t0:t0 + tlen]))
        pos = end
    return out, False


def write_list(paths: list[str], directory: str) -> str:
    fd, name = tempfile.mkstemp(suffix=".lst", dir=directory)
    with os.fdopen(fd, "wb") as f:
        f.write("".join(p + "\n" for p in paths).encode("utf-8", "surrogateescape"))
    return name


# --------------------------------------------------------------------------
# oracle cache


class OracleCache:
    def __init__(self, path: str | None):
        self.db = None
        self.lock = threading.Lock()
        if path:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            self.db = sqlite3.connect(path, check_same_thread=False, timeout=60)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute(
                "CREATE TABLE IF NOT EXISTS oracle (digest TEXT, version TEXT, status TEXT, text BLOB,"
                " PRIMARY KEY (digest, version))")
            self.db.commit()

    def get_many(self, digests: list[str], version: str) -> dict[str, tuple[str, bytes]]:
        if not self.db:
            return {}
        out = {}
        with self.lock:
            for i in range(0, len(digests), 500):
                part = digests[i:i + 500]
                q = "SELECT digest, status, text FROM oracle WHERE version=? AND digest IN (%s)" % (
                    ",".join("?" * len(part)))
                for d, s, t in self.db.execute(q, [version, *part]):
                    out[d] = (s, bytes(t))
        return out

    def put_many(self, rows: list[tuple[str, str, str, bytes]]) -> None:
        if not self.db or not rows:
            return
        with self.lock:
            self.db.executemany("INSERT OR REPLACE INTO oracle VALUES (?, ?, ?, ?)", rows)
            self.db.commit()


# --------------------------------------------------------------------------
# running workers


def run_framed(cmd: list[str], out_path: str, timeout: float, stall: float | None = None
               ) -> tuple[list[Record], bool, str]:
    """Run a worker that writes framed records to out_path (flushed per
    file). Returns (records, ended_cleanly, problem) where problem describes
    a crash or timeout ('' when none). The worker is killed when it runs
    past `timeout` seconds, or when `stall` is given and its output has not
    grown for that many seconds (one file is hanging)."""
    problem = ""
    errf = tempfile.TemporaryFile()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=errf)
    t0 = last_change = time.monotonic()
    last_size = -1
    while True:
        try:
            proc.wait(timeout=0.1)
            break
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if stall is not None:
            try:
                size = os.path.getsize(out_path)
            except OSError:
                size = -1
            if size != last_size:
                last_size, last_change = size, now
            elif now - last_change > stall:
                problem = f"timeout: no progress for {stall:.0f}s"
        if now - t0 > timeout:
            problem = f"timeout after {timeout:.0f}s"
        if problem:
            proc.kill()
            proc.wait()
            break
    if not problem:
        if proc.returncode < 0:
            try:
                name = signal.Signals(-proc.returncode).name
            except ValueError:
                name = str(-proc.returncode)
            problem = f"killed by {name}"
        elif proc.returncode not in (0, 1):
            problem = f"exit status {proc.returncode}"
        if problem:
            errf.seek(0)
            tail = errf.read().decode("utf-8", "replace").strip().splitlines()[-3:]
            if tail:
                problem += ": " + " | ".join(t.strip() for t in tail)
    errf.close()
    try:
        with open(out_path, "rb") as f:
            blob = f.read()
    except OSError:
        blob = b""
    records, ended = read_records(blob)
    if not ended and not problem:
        problem = "output ended early"
    return records, ended, problem


class Backend:
    """How to get graphmend's results for a list of paths under 3.<minor>."""

    name = "?"

    def command(self, minor: int, list_path: str, out_path: str) -> list[str]:
        raise NotImplementedError

    def run(self, minor: int, paths: list[str], tmpdir: str, per_file_timeout: float) -> dict[str, Record]:
        """Run over paths, isolating files that crash or hang the worker."""
        results: dict[str, Record] = {}
        remaining = list(paths)
        while remaining:
            lst = write_list(remaining, tmpdir)
            out = lst[:-4] + ".out"
            timeout = 60 + per_file_timeout * len(remaining)
            records, ended, problem = run_framed(self.command(minor, lst, out), out, timeout,
                                                 stall=per_file_timeout)
            for f in (lst, out):
                try:
                    os.unlink(f)
                except OSError:
                    pass
            for r in records:
                results[r.path] = r
            if ended or not problem:
                break
            done = len(records)
            if done >= len(remaining):
                break
            culprit = remaining[done]
            results[culprit] = Record("CRASH", culprit, problem.encode())
            remaining = remaining[done + 1:]
        return results


class GmDumpBackend(Backend):
    def __init__(self, exe: str):
        self.exe = exe
        self.name = f"gm_dump ({exe})"

    def command(self, minor, list_path, out_path):
        return [self.exe, "--minor", str(minor), "--batch", list_path, "--out", out_path]


class ExtensionBackend(Backend):
    def __init__(self, python: str):
        self.python = python
        self.name = f"graphmend._frontend.dump_ast ({python})"

    def command(self, minor, list_path, out_path):
        return [self.python, EXT_WORKER, str(minor), list_path, out_path]


class FakeBackend(Backend):
    """A CPython version posing as graphmend: tests the harness itself."""

    def __init__(self, exe: str):
        self.exe = exe
        self.name = f"fake graphmend = CPython {full_version(exe)}"

    def command(self, minor, list_path, out_path):
        return [self.exe, ORACLE, "fake", list_path, out_path]


class ReplayBackend(Backend):
    """CPython 3.<minor> serialises its tree; gm_dump --replay rebuilds and
    dumps it: tests dump.cpp/repr.cpp alone, without the parser."""

    def __init__(self, exe: str, interps: dict[int, str]):
        self.exe = exe
        self.interps = interps
        self.name = f"dumper self-check (CPython trees replayed through {exe})"

    def run(self, minor, paths, tmpdir, per_file_timeout):
        lst = write_list(paths, tmpdir)
        ser = lst[:-4] + ".ser"
        records, _, problem = run_framed([self.interps[minor], ORACLE, "serialize", lst, ser], ser,
                                         60 + 5 * len(paths))
        results: dict[str, Record] = {}
        replay = lst[:-4] + ".replay"
        with open(replay, "wb") as f:
            for r in records:
                if r.status == "OK":
                    f.write(b"@ " + r.path.encode("utf-8", "surrogateescape") + b"\n" + r.text + b"\n")
                else:
                    results[r.path] = Record(r.status if r.status in ("ERR", "SKIP") else "IOERR", r.path, r.text)
        out = lst[:-4] + ".out"
        recs, ended, problem = run_framed(
            [self.exe, "--minor", str(minor), "--replay", replay, "--out", out], out, 60 + len(paths))
        for r in recs:
            results[r.path] = r
        if problem:
            for p in paths:
                results.setdefault(p, Record("CRASH", p, problem.encode()))
        for f in (lst, ser, replay, out):
            try:
                os.unlink(f)
            except OSError:
                pass
        return results


# --------------------------------------------------------------------------
# comparison


@dataclass
class FileResult:
    path: str
    minor: int
    category: str
    detail: dict = field(default_factory=dict)


def gm_digest(text: bytes) -> str:
    return "%s %d" % (hashlib.sha256(text).hexdigest(), len(text))


def parse_err(text: bytes) -> dict:
    parts = text.decode("utf-8", "replace").split("\t", 3)
    if len(parts) == 4:
        kind, line, col, msg = parts
        try:
            return {"kind": kind, "line": int(line), "col": int(col), "message": msg}
        except ValueError:
            pass
    return {"kind": "?", "line": 0, "col": 0, "message": text.decode("utf-8", "replace")}


class Harness:
    def __init__(self, args, interps, backend, cache: OracleCache, tmpdir: str):
        self.args = args
        self.interps = interps
        self.backend = backend
        self.cache = cache
        self.tmpdir = tmpdir
        self.detail_budget = {m: args.detail_limit for m in interps}
        self.budget_lock = threading.Lock()

    def oracle(self, minor: int, files: list[CorpusFile], mode: str = "hash") -> dict[str, Record]:
        lst = write_list([f.path for f in files], self.tmpdir)
        out = lst[:-4] + "." + mode
        records, ended, problem = run_framed([self.interps[minor], ORACLE, mode, lst, out], out,
                                             120 + 10 * len(files))
        for f in (lst, out):
            try:
                os.unlink(f)
            except OSError:
                pass
        res = {r.path: r for r in records}
        if problem:
            for f in files:
                res.setdefault(f.path, Record("SKIP", f.path, f"oracle worker failed: {problem}".encode()))
        return res

    def take_detail_budget(self, minor: int) -> bool:
        with self.budget_lock:
            if self.detail_budget[minor] > 0:
                self.detail_budget[minor] -= 1
                return True
            return False

    def chunk(self, minor: int, files: list[CorpusFile], cached: dict[str, tuple[str, bytes]]):
        """Returns (results, new cache rows)."""
        version = full_version(self.interps[minor])
        missing = [f for f in files if f.digest not in cached]
        new_rows = []
        oracle: dict[str, tuple[str, bytes]] = {f.digest: cached[f.digest] for f in files if f.digest in cached}
        if missing:
            recs = self.oracle(minor, missing)
            for f in missing:
                r = recs.get(f.path)
                if r is None:
                    oracle[f.digest] = ("SKIP", b"oracle gave no record")
                    continue
                oracle[f.digest] = (r.status, r.text)
                if r.status in ("OK", "ERR", "SKIP") and not r.text.startswith(b"oracle worker failed"):
                    new_rows.append((f.digest, f"{version}/{ORACLE_SCHEMA}", r.status, r.text))
        gm = self.backend.run(minor, [f.path for f in files], self.tmpdir, self.args.timeout)

        results: list[FileResult] = []
        differing: list[tuple[CorpusFile, bytes]] = []
        for f in files:
            cs, ct = oracle[f.digest]
            g = gm.get(f.path)
            if cs == "IOERR" or (g and g.status == "IOERR"):
                results.append(FileResult(f.path, minor, "skipped", {"reason": "unreadable"}))
            elif cs == "SKIP":
                results.append(FileResult(f.path, minor, "skipped", {"reason": ct.decode("utf-8", "replace")}))
            elif g is None:
                results.append(FileResult(f.path, minor, "crash", {"problem": "no record from graphmend"}))
            elif g.status == "CRASH":
                results.append(FileResult(f.path, minor, "crash", {"problem": g.text.decode("utf-8", "replace")}))
            elif cs == "ERR" and g.status == "ERR":
                results.append(FileResult(f.path, minor, "both-reject"))
            elif cs == "ERR" and g.status == "OK" and oracle_defect(version, ct):
                results.append(FileResult(f.path, minor, "oracle-defect",
                                          {"cpython_error": parse_err(ct),
                                           "cause": oracle_defect(version, ct)["cause"]}))
            elif cs == "ERR":
                results.append(FileResult(f.path, minor, "missed-reject", {"cpython_error": parse_err(ct)}))
            elif g.status == "ERR":
                results.append(FileResult(f.path, minor, "gm-error", {"graphmend_error": parse_err(g.text)}))
            elif g.status == "SKIP":
                results.append(FileResult(f.path, minor, "skipped", {"reason": g.text.decode("utf-8", "replace")}))
            elif gm_digest(g.text) == ct.decode():
                results.append(FileResult(f.path, minor, "identical"))
            else:
                if self.take_detail_budget(minor):
                    differing.append((f, g.text))
                else:
                    results.append(FileResult(f.path, minor, "different", {"unexamined": True}))
        if differing:
            full = self.oracle(minor, [f for f, _ in differing], mode="full")
            for f, gtext in differing:
                r = full.get(f.path)
                if r is None or r.status != "OK":
                    results.append(FileResult(f.path, minor, "different", {"unexamined": True}))
                    continue
                ctext = r.text.decode("utf-8", "surrogatepass")
                gstr = gtext.decode("utf-8", "surrogatepass")
                category = "different"
                if minor < 12 and "JoinedStr(" in ctext:
                    if dumpdiff.strip_fstring_inner_positions(ctext) == dumpdiff.strip_fstring_inner_positions(gstr):
                        category = "fstring-position-only"
                try:
                    with open(f.path, "rb") as fh:
                        source = fh.read()
                except OSError:
                    source = None
                results.append(FileResult(f.path, minor, category, dumpdiff.describe(ctext, gstr, source)))
        return results, new_rows


# --------------------------------------------------------------------------
# reporting


def summarise(results: list[FileResult], minors: list[int]) -> dict[int, dict[str, int]]:
    table = {m: {c: 0 for c in CATEGORIES} for m in minors}
    for r in results:
        table[r.minor][r.category] += 1
    for m in minors:
        table[m]["files"] = sum(table[m][c] for c in CATEGORIES)
    return table


def print_table(table, interps, out=sys.stdout):
    cols = ["files", "identical", "both-reject", "different", "fstring-position-only", "gm-error",
            "missed-reject", "crash", "skipped", "oracle-defect"]
    heads = ["version", "files", "identical", "both-rej", "different", "fstr-pos", "gm-error",
             "missed-rej", "crash", "skipped", "oracle-def"]
    widths = [max(len(h), 9) for h in heads]
    print("  ".join(h.rjust(w) for h, w in zip(heads, widths)), file=out)
    total = {c: 0 for c in cols}
    for m in sorted(table):
        row = [full_version(interps[m])] + [str(table[m][c]) for c in cols]
        for c in cols:
            total[c] += table[m][c]
        print("  ".join(v.rjust(w) for v, w in zip(row, widths)), file=out)
    if len(table) > 1:
        row = ["total"] + [str(total[c]) for c in cols]
        print("  ".join(v.rjust(w) for v, w in zip(row, widths)), file=out)


def print_error_context(path: str, err: dict, indent="  "):
    try:
        with open(path, "rb") as f:
            src = f.read()
    except OSError:
        return
    if err.get("line"):
        col = err.get("col", 0)
        for s in dumpdiff.caret_line(src, err["line"], col, err["line"], col + 1):
            print(indent + s)


def report(results: list[FileResult], args, interps, backend_name: str, elapsed: float) -> int:
    minors = sorted({r.minor for r in results} | set(args.minors))
    table = summarise(results, minors)
    print()
    print(f"graphmend: {backend_name}")
    print(f"elapsed {elapsed:.1f}s")
    print_table(table, interps)

    diffs = [r for r in results if r.category in ("different", "fstring-position-only") and not r.detail.get("unexamined")]
    diffs.sort(key=lambda r: (r.category != "different", r.minor, r.path))
    if diffs:
        # Group by where the dumps first diverge (node.field): one bug usually
        # shows up in many files and versions.
        groups: dict[str, list[FileResult]] = {}
        for r in diffs:
            groups.setdefault(dumpdiff.signature(r.detail), []).append(r)
        ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        print(f"\n=== differences by first diverging node.field ({len(diffs)} examined) ===")
        for sig, rs in ordered[:40]:
            vers = ",".join(f"3.{m}" for m in sorted({r.minor for r in rs}))
            cat = " [fstring-position-only]" if all(r.category == "fstring-position-only" for r in rs) else ""
            print(f"  {len(rs):5d}  {sig}  ({vers}){cat}")
        if len(ordered) > 40:
            print(f"  ... {len(ordered) - 40} more signatures")
        if args.show_diffs:
            # Round-robin over signatures, largest groups first.
            picks: list[FileResult] = []
            depth = 0
            while len(picks) < args.show_diffs and any(len(rs) > depth for _, rs in ordered):
                for _, rs in ordered:
                    if len(rs) > depth and len(picks) < args.show_diffs:
                        picks.append(rs[depth])
                depth += 1
            print(f"\n=== first differences ({len(picks)} of {len(diffs)} examined) ===")
            for r in picks:
                d = r.detail
                line = d.get("cpython_positions", {}).get("lineno", "?")
                print(f"\n--- 3.{r.minor} {r.path}:{line}  [{r.category}] {dumpdiff.signature(d)}")
                print(dumpdiff.format_description(d))

    if args.show_diffs:
        for cat, key, label in (("gm-error", "graphmend_error", "graphmend rejects, CPython accepts"),
                                ("missed-reject", "cpython_error", "CPython rejects, graphmend accepts")):
            rs = sorted((r for r in results if r.category == cat), key=lambda r: (r.minor, r.path))
            if not rs:
                continue
            by_msg: dict[str, list[FileResult]] = {}
            for r in rs:
                by_msg.setdefault(r.detail[key]["message"], []).append(r)
            print(f"\n=== {cat}: {label}: {len(rs)} file-versions, by message ===")
            for msg, group in sorted(by_msg.items(), key=lambda kv: -len(kv[1]))[:30]:
                vers = ",".join(f"3.{m}" for m in sorted({r.minor for r in group}))
                print(f"  {len(group):5d}  {msg[:100]}  ({vers})")
            # one example per message first, then more
            picks, seen = [], set()
            for r in rs:
                if r.detail[key]["message"] not in seen:
                    seen.add(r.detail[key]["message"])
                    picks.append(r)
            picks += [r for r in rs if r not in picks]
            for r in picks[:args.show_diffs]:
                e = r.detail[key]
                print(f"\n--- 3.{r.minor} {r.path}:{e['line']}:{e['col'] + 1}: {e['kind']}: {e['message']}")
                print_error_context(r.path, e)
        crashes = [r for r in results if r.category == "crash"]
        if crashes:
            print(f"\n=== crashes ({len(crashes)}) ===")
            for r in crashes[:args.show_diffs]:
                print(f"  3.{r.minor} {r.path}: {r.detail.get('problem')}")

    defects = sorted((r for r in results if r.category == "oracle-defect"), key=lambda r: (r.minor, r.path))
    if defects:
        print(f"\n=== oracle-defect: CPython's own internal error, allowed ({len(defects)} file-versions) ===")
        for r in defects:
            e = r.detail["cpython_error"]
            print(f"  {full_version(interps[r.minor])} {r.path}: {e['message']}")
            print(f"      cause: {r.detail['cause']}")

    skipped = [r for r in results if r.category == "skipped"]
    if skipped:
        reasons: dict[str, int] = {}
        for r in skipped:
            key = r.detail.get("reason", "?").split(":")[0:2]
            reasons[":".join(key)] = reasons.get(":".join(key), 0) + 1
        print("\nskipped: " + "; ".join(f"{n}× {k}" for k, n in sorted(reasons.items(), key=lambda kv: -kv[1])))

    if args.write_failures:
        fails = [{"path": r.path, "version": f"3.{r.minor}", "category": r.category, "detail": r.detail}
                 for r in results if r.category not in ("identical", "both-reject")]
        with open(args.write_failures, "w") as f:
            json.dump(fails, f, indent=1, ensure_ascii=False)
        print(f"\nwrote {len(fails)} entries to {args.write_failures}")

    failing = 0
    for m in minors:
        t = table[m]
        bad = sum(t[c] for c in FAILING)
        allowed = int(FSTRING_ALLOWANCE * max(t["files"], 1))
        if t["fstring-position-only"] > allowed:
            print(f"3.{m}: {t['fstring-position-only']} fstring-position-only differences exceed "
                  f"the allowance of {allowed} (0.1% of {t['files']})")
            bad += 1
        failing += bad
    print("\nRESULT:", "PASS" if failing == 0 else "FAIL")
    return 0 if failing == 0 else 1


# --------------------------------------------------------------------------
# main


def find_build_tool(name: str) -> str | None:
    """build/NAME first, else the newest build*/NAME that is not a sanitizer
    or fuzzing build."""
    preferred = os.path.join(REPO, "build", name)
    if os.access(preferred, os.X_OK):
        return preferred
    cands = [p for p in glob.glob(os.path.join(REPO, "build*", name)) +
             glob.glob(os.path.join(REPO, "build*", "*", name))
             if os.access(p, os.X_OK) and not any(k in p for k in ("sanit", "fuzz", "asan", "ubsan", "debug"))]
    return max(cands, key=os.path.getmtime) if cands else None


def default_gm_dump() -> str | None:
    return find_build_tool("gm_dump")


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--versions", help="comma-separated, e.g. 3.8,3.12 (default: every 3.8–3.13 found)")
    ap.add_argument("--paths", nargs="+", help="files or directories instead of the default corpus")
    ap.add_argument("--sample", type=int, help="check a deterministic sample of N files")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=64, help="files per worker run")
    ap.add_argument("--timeout", type=float, default=10.0,
                    help="graphmend is stopped when one file takes longer than this (seconds)")
    ap.add_argument("--show-diffs", type=int, default=5, metavar="K")
    ap.add_argument("--detail-limit", type=int, default=300,
                    help="per version, examine at most this many differing files in detail")
    ap.add_argument("--write-failures", metavar="FILE")
    ap.add_argument("--gm-dump", metavar="PATH", help="gm_dump executable (default: newest build*/gm_dump)")
    ap.add_argument("--use-extension", action="store_true", help="use graphmend._frontend.dump_ast")
    ap.add_argument("--extension-python", default=sys.executable)
    ap.add_argument("--fake-graphmend", metavar="X.Y", help="use CPython X.Y as graphmend (harness self-test)")
    ap.add_argument("--check-dumper", action="store_true",
                    help="replay CPython's own trees through gm_dump --replay (tests dump/repr only)")
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument("--cache-dir", default=CACHE_DIR)
    ap.add_argument("--quiet", action="store_true")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    interps = find_interpreters()
    if args.versions:
        try:
            want = [int(v.strip().split(".")[1]) for v in args.versions.split(",") if v.strip()]
        except (IndexError, ValueError):
            print(f"bad --versions {args.versions!r}", file=sys.stderr)
            return 2
        missing = [m for m in want if m not in interps]
        if missing:
            print("not installed: " + ", ".join(f"3.{m}" for m in missing), file=sys.stderr)
            return 2
        interps_used = {m: interps[m] for m in want}
    else:
        interps_used = dict(interps)
    if not interps_used:
        print(f"no CPython 3.8–3.13 under {PYENV}", file=sys.stderr)
        return 2
    args.minors = sorted(interps_used)

    if args.fake_graphmend:
        fm = int(args.fake_graphmend.split(".")[1])
        if fm not in interps:
            print(f"CPython {args.fake_graphmend} not installed", file=sys.stderr)
            return 2
        backend: Backend = FakeBackend(interps[fm])
    elif args.use_extension:
        backend = ExtensionBackend(args.extension_python)
    else:
        exe = args.gm_dump or default_gm_dump()
        if not exe or not os.access(exe, os.X_OK):
            print("no gm_dump found: build it (ninja -C build gm_dump) or pass --gm-dump PATH",
                  file=sys.stderr)
            return 2
        exe = os.path.abspath(exe)
        backend = ReplayBackend(exe, interps) if args.check_dumper else GmDumpBackend(exe)

    t0 = time.time()
    roots = args.paths or default_roots(interps)
    corpus = collect_corpus(roots)
    if args.sample:
        corpus = sample_corpus(corpus, args.sample, args.seed)
    else:
        corpus.sort(key=lambda f: f.path)
    if not args.quiet:
        mb = sum(f.size for f in corpus) / 1e6
        print(f"corpus: {len(corpus)} files ({mb:.1f} MB) from {len(roots)} roots; versions: "
              + ", ".join(full_version(interps_used[m]) for m in args.minors), flush=True)

    cache = OracleCache(None if args.no_cache else os.path.join(args.cache_dir, "oracle.sqlite"))
    tmpdir = tempfile.mkdtemp(prefix="gm-differential-")
    harness = Harness(args, interps_used, backend, cache, tmpdir)
    results: list[FileResult] = []
    try:
        # Big files first so the pool drains evenly.
        jobs = []
        for m in args.minors:
            version = full_version(interps_used[m]) + "/" + ORACLE_SCHEMA
            cached = cache.get_many([f.digest for f in corpus], version)
            by_size = sorted(corpus, key=lambda f: -f.size)
            chunks: list[list[CorpusFile]] = []
            cur: list[CorpusFile] = []
            cur_bytes = 0
            for f in by_size:
                cur.append(f)
                cur_bytes += f.size
                if len(cur) >= args.chunk or cur_bytes > 4_000_000:
                    chunks.append(cur)
                    cur, cur_bytes = [], 0
            if cur:
                chunks.append(cur)
            for c in chunks:
                jobs.append((m, c, {f.digest: cached[f.digest] for f in c if f.digest in cached}))
        done_files = 0
        total_files = sum(len(c) for _, c, _ in jobs)
        last_print = 0.0
        with cf.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futs = [pool.submit(harness.chunk, m, c, cached) for m, c, cached in jobs]
            for fut in cf.as_completed(futs):
                res, rows = fut.result()
                cache.put_many(rows)
                results.extend(res)
                done_files += len(res)
                now = time.time()
                if not args.quiet and (now - last_print > 5 or done_files == total_files):
                    last_print = now
                    bad = sum(1 for r in results if r.category in FAILING)
                    print(f"  {done_files}/{total_files} file-versions checked, {bad} failing "
                          f"({now - t0:.0f}s)", flush=True)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
    return report(results, args, interps_used, backend.name, time.time() - t0)


if __name__ == "__main__":
    sys.exit(main())
