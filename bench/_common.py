"""Shared helpers for the benchmark harnesses (bench/table2.py, bench/survey.py).

Nothing here imports torch or transformers at module level: the drivers
import this file in whatever interpreter runs them, and the measuring code
runs in child processes.
"""

from __future__ import annotations

import json
import os
import platform
import re
import signal
import sys
import time
import traceback
from typing import Any, Callable, Iterable, Optional

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYDIR = os.path.join(REPO, "python")
BENCH = os.path.join(REPO, "bench")
RESULTS = os.path.join(BENCH, "results")

OFFLINE_ENV = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "TORCHINDUCTOR_COMPILE_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
}


def set_offline_env(env: Optional[dict] = None) -> dict:
    """Offline hub, one thread per process. Mutates and returns ``env``."""
    env = os.environ if env is None else env
    for k, v in OFFLINE_ENV.items():
        env.setdefault(k, v)
    return env


def ensure_graphmend_importable() -> None:
    """Make ``import graphmend`` work in any interpreter: a graphmend already
    importable (installed, with its compiled extension, which the mended
    arms need) is used as it is; otherwise the source tree (enough for
    graphmend.judge, which is pure Python)."""
    import importlib.util

    if importlib.util.find_spec("graphmend") is None and PYDIR not in sys.path:
        sys.path.insert(0, PYDIR)


def without_source_tree(env: dict) -> dict:
    """``env`` with the source tree's python/ removed from PYTHONPATH, so that
    a child uses the graphmend installed in its interpreter (the source tree
    has no compiled extension).  Mutates and returns ``env``."""
    pp = [p for p in env.get("PYTHONPATH", "").split(os.pathsep)
          if p and os.path.abspath(p) != os.path.abspath(PYDIR)]
    if pp:
        env["PYTHONPATH"] = os.pathsep.join(pp)
    else:
        env.pop("PYTHONPATH", None)
    return env


def core_digest() -> Optional[str]:
    """First 12 hex digits of the sha256 of the importable graphmend._core
    extension (it holds every rule): which build of the rules was measured."""
    import hashlib
    import importlib.util

    try:
        spec = importlib.util.find_spec("graphmend._core")
        if spec is None or not spec.origin or not os.path.isfile(spec.origin):
            return None
        with open(spec.origin, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()[:12]
    except Exception:  # noqa: BLE001
        return None


def git_describe() -> dict:
    """Commit of the working tree and whether it has uncommitted changes."""
    import subprocess

    out: dict[str, Any] = {}
    try:
        out["commit"] = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True,
                                       text=True, timeout=30).stdout.strip()
        st = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--", "src", "python", "rules"],
                            capture_output=True, text=True, timeout=30).stdout
        out["dirty_src_python"] = bool(st.strip())
    except Exception as e:  # noqa: BLE001
        out["error"] = short_error(e)
    return out


def versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "platform": platform.platform()}
    for mod in ("torch", "transformers", "numpy"):
        try:
            m = __import__(mod)
            out[mod] = str(getattr(m, "__version__", "?"))
        except Exception:
            out[mod] = "missing"
    return out


def short_error(exc: BaseException, limit: int = 400) -> str:
    first = f"{type(exc).__name__}: {exc}".strip()
    first = first.splitlines()[0] if first else type(exc).__name__
    return first[:limit]


def error_site(exc: BaseException) -> Optional[str]:
    """Innermost traceback frame inside transformers (or the innermost one)."""
    tb = traceback.extract_tb(exc.__traceback__)
    for fs in reversed(tb):
        if "/transformers/" in fs.filename:
            return f"{rel_site(fs.filename)}:{fs.lineno}"
    if tb:
        return f"{rel_site(tb[-1].filename)}:{tb[-1].lineno}"
    return None


_SITE_RE = re.compile(r".*?/(site-packages|dist-packages)/")


def rel_site(path: str) -> str:
    """``/…/site-packages/transformers/x.py`` -> ``transformers/x.py``."""
    return _SITE_RE.sub("", path.replace("\\", "/"))


def summarize_report(rep: Any) -> dict[str, Any]:
    """The parts of an ExplainReport that the benchmark records keep."""
    return {
        "graphs": rep.graphs,
        "break_events": rep.break_events,
        "distinct_reasons": len(rep.reasons),
        "skipped_frames": len(rep.skipped_frames),
        "recompiles": rep.recompiles,
        "frames": {"total": rep.frames_total, "ok": rep.frames_ok},
        "counters": {"graph_break": rep.counter_graph_break, "unimplemented": rep.counter_unimplemented},
        "ops_per_graph": rep.ops_per_graph,
        "fully_traced": rep.fully_fixed,
        "reasons": [
            {
                "reason": r.reason,
                "gb_type": r.gb_type,
                "gb_id": r.gb_id,
                "count": r.count,
                "context": r.context[:300],
                "sites": [_rel_loc(s) for s in r.sites],
            }
            for r in rep.reasons
        ],
        "skipped": [
            {
                "function": s.function,
                "file": rel_site(s.filename),
                "fail_type": s.fail_type,
                "reason": s.reason[:300],
                "site": _rel_loc(s.site) if s.site else None,
            }
            for s in rep.skipped_frames
        ],
        "recompile_reasons": [r[:300] for r in rep.recompile_reasons],
    }


def _rel_loc(loc: str) -> str:
    return rel_site(loc)


# --------------------------------------------------------------------------
# running a function in a forked child with a timeout
# --------------------------------------------------------------------------


class ForkedTask:
    """``target(emit)`` running in a forked child; ``emit(dict)`` sends a
    record to the parent through a pipe.  POSIX only.

    Fork from the main thread of a process that has imported what the
    children need (torch, transformers): children then start in
    milliseconds and share those pages copy-on-write.
    """

    def __init__(self, key: Any, target: Callable[[Callable[[dict], None]], None],
                 timeout: float, quiet: bool = True) -> None:
        self.key = key
        self.records: list[dict] = []
        self.failure: Optional[str] = None
        self.done = False
        self._buf = b""
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # child
            try:
                os.setpgid(0, 0)
            except OSError:
                pass
            os.close(r)
            wf = os.fdopen(w, "w", buffering=1)
            if quiet:
                dn = os.open(os.devnull, os.O_WRONLY)
                os.dup2(dn, 1)
                os.dup2(dn, 2)

            def emit(rec: dict) -> None:
                wf.write(json.dumps(rec, default=str) + "\n")
                wf.flush()

            code = 0
            try:
                target(emit)
            except BaseException as e:  # noqa: BLE001 - report everything
                try:
                    emit({"_child_error": short_error(e), "_traceback": traceback.format_exc()[-4000:]})
                except Exception:
                    pass
                code = 1
            finally:
                try:
                    wf.flush()
                except Exception:
                    pass
                os._exit(code)
        os.close(w)
        self.pid = pid
        self.rfile = os.fdopen(r, "rb", buffering=0)
        self.deadline = time.monotonic() + timeout
        self.started = time.monotonic()

    def fileno(self) -> int:
        return self.rfile.fileno()

    def _read(self) -> bool:
        """Read what is there; False at end of file."""
        chunk = self.rfile.read(65536)
        if not chunk:
            return False
        self._buf += chunk
        while b"\n" in self._buf:
            line, self._buf = self._buf.split(b"\n", 1)
            if line.strip():
                try:
                    self.records.append(json.loads(line))
                except ValueError:
                    pass
        return True

    def _finish(self, timed_out: bool) -> None:
        if timed_out:
            self.failure = "timeout"
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except OSError:
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except OSError:
                    pass
        _, status = os.waitpid(self.pid, 0)
        self.rfile.close()
        if not timed_out:
            if os.WIFSIGNALED(status):
                self.failure = f"crash: signal {os.WTERMSIG(status)}"
            elif os.WIFEXITED(status) and os.WEXITSTATUS(status) not in (0, 1):
                self.failure = f"crash: exit {os.WEXITSTATUS(status)}"
        self.done = True
        self.elapsed = time.monotonic() - self.started


def run_pool(tasks: Iterable[tuple[Any, Callable, float]], jobs: int = 1, quiet: bool = True):
    """Run ``(key, target, timeout)`` tasks in forked children, ``jobs`` at a
    time; yield each finished :class:`ForkedTask` (records, failure)."""
    import multiprocessing.connection as mpc

    it = iter(tasks)
    running: list[ForkedTask] = []
    exhausted = False
    while True:
        while not exhausted and len(running) < max(1, jobs):
            try:
                key, target, timeout = next(it)
            except StopIteration:
                exhausted = True
                break
            running.append(ForkedTask(key, target, timeout, quiet=quiet))
        if not running:
            return
        now = time.monotonic()
        wait_for = max(0.0, min(t.deadline for t in running) - now)
        ready = mpc.wait([t.rfile for t in running], timeout=min(wait_for, 1.0))
        finished: list[ForkedTask] = []
        for t in running:
            if t.rfile in ready:
                if not t._read():
                    t._finish(timed_out=False)
                    finished.append(t)
            elif time.monotonic() >= t.deadline:
                t._finish(timed_out=True)
                finished.append(t)
        for t in finished:
            running.remove(t)
            yield t


def run_forked(target: Callable[[Callable[[dict], None]], None], timeout: float,
               quiet: bool = True) -> tuple[list[dict], Optional[str]]:
    """One task: ``(records, failure)``; failure is None, "timeout" or "crash: …"."""
    for t in run_pool([(None, target, timeout)], jobs=1, quiet=quiet):
        return t.records, t.failure
    return [], "crash: no task"


# --------------------------------------------------------------------------
# JSONL results
# --------------------------------------------------------------------------


def read_jsonl(path: str) -> list[dict]:
    out: list[dict] = []
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                out.append(json.loads(line))
            except ValueError:
                continue  # a torn last line from an interrupted run
    return out


def append_jsonl(path: str, recs: Iterable[dict]) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        for rec in recs:
            f.write(json.dumps(rec, default=str, sort_keys=True) + "\n")
        f.flush()
        os.fsync(f.fileno())
