"""Dynamo as the judge: count graphs and graph breaks the way Dynamo sees them.

``explain(model_or_fn, *args, **kwargs)`` compiles ``model_or_fn`` with
``torch.compile(fullgraph=False)`` and a *counting* backend (it records every
``GraphModule`` and returns ``gm.forward``, so nothing is lowered), runs it
once on the given inputs and returns an :class:`ExplainReport`.

What is counted (see ``docs/BENCHMARKS.md`` §1):

* ``graphs``: GraphModules handed to the backend;
* ``break_events``: graph breaks Dynamo logged while tracing.  Each call of
  Dynamo's ``InstructionTranslatorBase.log_graph_break`` is one event; we wrap
  it to keep the exception (its ``gb_type``) and the user stack.  This
  includes the data-dependent-branching breaks that Dynamo (as of torch 2.13)
  leaves under ``counters["unimplemented"]`` instead of moving them to
  ``counters["graph_break"]``; the raw counter sums are reported beside it
  (``counter_graph_break``, ``counter_unimplemented``) so the two can be
  compared.  If the hook is unavailable (a torch without that method), the
  count falls back to ``counters["graph_break"]`` plus the graph-compile
  reasons the backend received;
* ``reasons``: distinct break reasons (grouped like the keys of
  ``counters["graph_break"]``: by Dynamo's full message), each with its
  first line, Dynamo's graph-break type, the registry id ``GBxxxx`` from
  ``torch/_dynamo/graph_break_registry.json`` and the ``file:line`` sites;
* ``skipped_frames``: frames Dynamo gave up on (a compile that failed softly,
  e.g. a break inside a loop: the frame runs eagerly), from Dynamo's
  compilation metrics;
* ``recompiles``: compiles of a code object that had already been compiled;
* ``ops_per_graph``: call_function/call_method/call_module nodes per graph.

torch is imported lazily so that ``import graphmend`` works without it.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

__all__ = [
    "BreakEvent",
    "BreakReason",
    "ExplainReport",
    "GraphInfo",
    "SkippedFrame",
    "explain",
    "gb_registry",
    "lookup_gb_id",
]

_GB_LINK_RE = re.compile(r"/gb/gb(\d+)\.html")


# --------------------------------------------------------------------------
# report types
# --------------------------------------------------------------------------


@dataclass
class StackFrame:
    filename: str
    lineno: int
    function: str
    line: str = ""

    def location(self) -> str:
        return f"{self.filename}:{self.lineno}"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class BreakEvent:
    """One graph break as Dynamo logged it."""

    gb_type: Optional[str]
    gb_id: Optional[str]
    reason: str  # first line of Dynamo's message
    context: str  # Dynamo's "Developer debug context", if any
    message: str  # Dynamo's full message (key of counters["graph_break"])
    site: Optional[StackFrame]  # innermost user frame (outside torch)
    user_stack: list[StackFrame] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["site"] = self.site.location() if self.site else None
        d["user_stack"] = [f.location() + f" in {f.function}" for f in self.user_stack]
        return d


@dataclass
class BreakReason:
    """A distinct break reason with every site where it was hit."""

    reason: str
    gb_type: Optional[str]
    gb_id: Optional[str]
    count: int
    sites: list[str]  # "file:line" (distinct, in order of first occurrence)
    context: str = ""
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class SkippedFrame:
    function: str
    filename: str
    firstlineno: int
    fail_type: str
    reason: str
    site: Optional[str]  # file:line Dynamo blamed, if known

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class GraphInfo:
    ops: int
    nodes: int
    compile_reason: Optional[str]  # why Dynamo ended this graph (first line)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class ExplainReport:
    name: str
    graphs: int
    break_events: int
    reasons: list[BreakReason]
    events: list[BreakEvent]
    skipped_frames: list[SkippedFrame]
    recompiles: int
    recompile_reasons: list[str]
    frames_total: int
    frames_ok: int
    counter_graph_break: int
    counter_unimplemented: int
    graph_info: list[GraphInfo]
    torch_version: str
    hooked: bool  # True when break events came from Dynamo's log hook
    later_recompiles: int = 0  # explain_calls: recompiles caused by the calls after the first

    # -- derived ------------------------------------------------------------
    @property
    def ops_per_graph(self) -> list[int]:
        return [g.ops for g in self.graph_info]

    @property
    def fully_fixed(self) -> bool:
        """One graph, no break events, no skipped frames (BENCHMARKS §1)."""
        return self.graphs == 1 and self.break_events == 0 and not self.skipped_frames

    def break_types(self) -> Counter:
        return Counter(e.gb_type or e.reason for e in self.events)

    # -- output -------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "graphs": self.graphs,
            "break_events": self.break_events,
            "distinct_reasons": len(self.reasons),
            "skipped_frames": [s.to_dict() for s in self.skipped_frames],
            "recompiles": self.recompiles,
            "recompile_reasons": list(self.recompile_reasons),
            "frames": {"total": self.frames_total, "ok": self.frames_ok},
            "counters": {
                "graph_break": self.counter_graph_break,
                "unimplemented": self.counter_unimplemented,
            },
            "ops_per_graph": self.ops_per_graph,
            "graph_info": [g.to_dict() for g in self.graph_info],
            "reasons": [r.to_dict() for r in self.reasons],
            "events": [e.to_dict() for e in self.events],
            "fully_fixed": self.fully_fixed,
            "torch_version": self.torch_version,
            "hooked": self.hooked,
        }

    def to_json(self, **kw: Any) -> str:
        return json.dumps(self.to_dict(), **kw)

    def format_text(self, verbose: bool = False) -> str:
        lines = [
            f"graphmend explain: {self.name}  (torch {self.torch_version})",
            f"  graphs compiled : {self.graphs}  (ops per graph: {self.ops_per_graph})",
            f"  graph breaks    : {self.break_events} events, {len(self.reasons)} distinct reasons",
            f"  skipped frames  : {len(self.skipped_frames)}",
            f"  recompiles      : {self.recompiles}",
            f"  frames          : {self.frames_ok}/{self.frames_total} ok",
        ]
        if self.reasons:
            lines.append("")
            lines.append("Break reasons:")
            for i, r in enumerate(self.reasons, 1):
                gid = r.gb_id or "GB????"
                typ = f" {r.gb_type}" if r.gb_type and r.gb_type != r.reason else ""
                lines.append(f"  {i}. [{gid}{typ}] {r.reason}  (x{r.count})")
                if r.context:
                    lines.append(f"       context: {_shorten(r.context, 160)}")
                for s in r.sites:
                    lines.append(f"       at {s}")
                if verbose and r.message:
                    for ml in r.message.splitlines()[1:]:
                        lines.append("       | " + ml)
        if self.skipped_frames:
            lines.append("")
            lines.append("Frames Dynamo skipped (ran eagerly):")
            for s in self.skipped_frames:
                where = f" at {s.site}" if s.site else ""
                lines.append(
                    f"  - {s.function} ({s.filename}:{s.firstlineno}): "
                    f"{s.fail_type}: {_shorten(s.reason, 160)}{where}"
                )
        if self.recompile_reasons:
            lines.append("")
            lines.append("Recompiles:")
            for r in self.recompile_reasons:
                lines.append(f"  - {_shorten(r, 200)}")
        lines.append("")
        lines.append(
            "verdict: "
            + ("fully traced (1 graph, 0 breaks, 0 skipped frames)" if self.fully_fixed else "breaks")
        )
        return "\n".join(lines) + "\n"


def _shorten(s: str, n: int) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 3] + "..."


# --------------------------------------------------------------------------
# graph-break registry
# --------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _registry_path() -> Optional[str]:
    try:
        import torch._dynamo  # noqa: F401

        base = os.path.dirname(torch._dynamo.__file__)
    except Exception:  # pragma: no cover - torch missing
        return None
    p = os.path.join(base, "graph_break_registry.json")
    return p if os.path.exists(p) else None


@functools.lru_cache(maxsize=None)
def gb_registry() -> dict[str, list[dict[str, Any]]]:
    """The installed torch's graph-break registry ({"GB0000": [entries]}), or {}."""
    p = _registry_path()
    if not p:
        return {}
    try:
        with open(p, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


@functools.lru_cache(maxsize=None)
def _gb_index() -> tuple[dict[str, str], list[tuple[re.Pattern[str], str]]]:
    exact: dict[str, str] = {}
    templates: list[tuple[re.Pattern[str], str]] = []
    # Same resolution as Dynamo's own doc link (_load_gb_type_to_gb_id_map):
    # later entries win for a gb_type listed under several ids.
    for gid, entries in gb_registry().items():
        for e in entries:
            t = e.get("Gb_type")
            if not isinstance(t, str):
                continue
            exact[t] = gid
            if "{" in t:
                pat = re.escape(t)
                pat = re.sub(r"\\\{[^}]*\\\}", ".*?", pat)
                templates.append((re.compile("^" + pat + "$"), gid))
    return exact, templates


def lookup_gb_id(gb_type: Optional[str], message: str = "") -> Optional[str]:
    """Registry id for a graph-break type (or a reason's first line)."""
    exact, templates = _gb_index()
    cands = [c for c in (gb_type, message.splitlines()[0] if message else None) if c]
    for c in cands:
        c = c.strip()
        if c in exact:
            return exact[c]
    for c in cands:
        for pat, gid in templates:
            if pat.match(c.strip()):
                return gid
    m = _GB_LINK_RE.search(message or "")
    if m:
        return "GB" + m.group(1)
    return None


# --------------------------------------------------------------------------
# message parsing helpers
# --------------------------------------------------------------------------

_CTX_RE = re.compile(r"Developer debug context:\s*(.*)")


def _first_line(msg: str) -> str:
    for ln in (msg or "").splitlines():
        if ln.strip():
            return ln.strip()
    return ""


def _context_of(msg: str) -> str:
    m = _CTX_RE.search(msg or "")
    return m.group(1).strip() if m else ""


@functools.lru_cache(maxsize=None)
def _torch_dir() -> str:
    try:
        import torch

        return os.path.dirname(os.path.abspath(torch.__file__)).replace("\\", "/") + "/"
    except Exception:  # pragma: no cover
        return "/site-packages/torch/"


def _is_torch_internal(filename: str) -> bool:
    """A frame inside torch itself (or synthetic, like ``<string>``)."""
    f = filename.replace("\\", "/")
    return f.startswith("<") or f.startswith(_torch_dir()) or "/site-packages/torch/" in f


def _frames_from(stack: Any) -> list[StackFrame]:
    out: list[StackFrame] = []
    for fs in stack or []:
        try:
            out.append(
                StackFrame(
                    filename=str(fs.filename),
                    lineno=int(fs.lineno or 0),
                    function=str(getattr(fs, "name", "")),
                    line=(getattr(fs, "line", "") or "").strip(),
                )
            )
        except Exception:
            continue
    return out


def _site_of(frames: list[StackFrame]) -> Optional[StackFrame]:
    for f in reversed(frames):
        if not _is_torch_internal(f.filename):
            return f
    return frames[-1] if frames else None


# --------------------------------------------------------------------------
# the capture
# --------------------------------------------------------------------------


class _Capture:
    """Patches Dynamo's graph-break logger for the duration of a run."""

    def __init__(self) -> None:
        self.events: list[BreakEvent] = []
        self.hooked = False
        self._orig: Any = None
        self._cls: Any = None

    def _record(self, exc: Any, frame_loc: Any = None) -> None:
        msg = str(getattr(exc, "msg", None) or exc)
        gb_type = getattr(exc, "gb_type", None) or None
        if not isinstance(gb_type, str):
            gb_type = None
        frames = _frames_from(getattr(exc, "real_stack", None))
        site = _site_of(frames)
        self.events.append(
            BreakEvent(
                gb_type=gb_type,
                gb_id=lookup_gb_id(gb_type, msg),
                reason=_first_line(msg),
                context=_context_of(msg),
                message=msg,
                site=site,
                user_stack=frames,
            )
        )

    def __enter__(self) -> "_Capture":
        try:
            from torch._dynamo.symbolic_convert import InstructionTranslatorBase
        except Exception:  # pragma: no cover
            return self
        orig = getattr(InstructionTranslatorBase, "log_graph_break", None)
        if orig is None:  # pragma: no cover - other torch versions
            return self
        cap = self

        @functools.wraps(orig)
        def log_graph_break(tx: Any, code_options: Any, reason: str, exc: Any, *a: Any, **k: Any) -> Any:
            if not getattr(exc, "logged", False):
                try:
                    cap._record(exc)
                except Exception:  # never let bookkeeping break tracing
                    pass
            return orig(tx, code_options, reason, exc, *a, **k)

        self._cls, self._orig = InstructionTranslatorBase, orig
        InstructionTranslatorBase.log_graph_break = log_graph_break  # type: ignore[method-assign]
        self.hooked = True
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if self._cls is not None:
            self._cls.log_graph_break = self._orig  # type: ignore[method-assign]


def _group(events: Iterable[BreakEvent]) -> list[BreakReason]:
    groups: dict[str, BreakReason] = {}
    for e in events:
        g = groups.get(e.message)
        site = e.site.location() if e.site else "?"
        if g is None:
            groups[e.message] = BreakReason(
                reason=e.reason,
                gb_type=e.gb_type,
                gb_id=e.gb_id,
                count=1,
                sites=[site],
                context=e.context,
                message=e.message,
            )
        else:
            g.count += 1
            if site not in g.sites:
                g.sites.append(site)
    return list(groups.values())


def _name_of(obj: Any) -> str:
    if hasattr(obj, "forward") and hasattr(obj, "named_parameters"):
        return type(obj).__name__
    return getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)


def _count_ops(gm: Any) -> tuple[int, int]:
    nodes = list(gm.graph.nodes)
    ops = sum(1 for n in nodes if n.op in ("call_function", "call_method", "call_module"))
    return ops, len(nodes)


def explain(model_or_fn: Callable[..., Any], *args: Any, **kwargs: Any) -> ExplainReport:
    """Compile ``model_or_fn`` with a counting backend, call it once, report.

    The call's result is discarded; exceptions raised by the compiled call
    propagate (the caller decides whether that is an error of the model or
    of the compiler).  Dynamo is reset before and after.
    """
    report, _ = explain_with_output(model_or_fn, *args, **kwargs)
    return report


def explain_with_output(model_or_fn: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[ExplainReport, Any]:
    """Like :func:`explain`, and also return what the compiled call returned."""
    report, outs = explain_calls(model_or_fn, [(args, kwargs)])
    return report, outs[0]


def explain_calls(
    model_or_fn: Callable[..., Any],
    calls: list[tuple[tuple, dict]],
    before_call: Optional[Callable[[int], Any]] = None,
) -> tuple[ExplainReport, list[Any]]:
    """Compile once and make every call ``(args, kwargs)`` in turn; the report
    counts the first call (as :func:`explain` does), the later calls reuse what
    it compiled (a recompile they cause is added to ``later_recompiles``).

    ``before_call(i)`` runs eagerly before call ``i`` (e.g. to seed the RNG);
    its result, a context manager or None, wraps the call.  One Dynamo
    compilation serves a count and several output checks."""
    import torch
    import torch._dynamo as dynamo
    from torch._dynamo.utils import counters

    dynamo.reset()
    counters.clear()
    metrics_mod = getattr(dynamo, "utils", None)
    clear_metrics = getattr(metrics_mod, "clear_compilation_metrics", None)
    get_metrics = getattr(metrics_mod, "get_compilation_metrics", None)
    if clear_metrics:
        clear_metrics()

    gms: list[Any] = []

    def counting_backend(gm: Any, example_inputs: Any) -> Any:
        gms.append(gm)
        return gm.forward

    compiled = torch.compile(model_or_fn, backend=counting_backend, fullgraph=False)

    def call(i: int) -> Any:
        args, kwargs = calls[i]
        ctx = before_call(i) if before_call is not None else None
        if ctx is None:
            return compiled(*args, **kwargs)
        with ctx:
            return compiled(*args, **kwargs)

    try:
        with _Capture() as cap:
            outs = [call(0)]

        graph_info = []
        for gm in gms:
            ops, nodes = _count_ops(gm)
            r = getattr(gm, "compile_subgraph_reason", None)
            reason = None
            if r is not None and getattr(r, "graph_break", False):
                reason = _first_line(str(getattr(r, "reason", "")))
            graph_info.append(GraphInfo(ops=ops, nodes=nodes, compile_reason=reason))

        skipped: list[SkippedFrame] = []
        recompile_reasons: list[str] = []
        recompiles = 0
        for m in get_metrics() if get_metrics else []:
            if getattr(m, "fail_type", None):
                site = None
                if getattr(m, "fail_user_frame_filename", None):
                    site = f"{m.fail_user_frame_filename}:{m.fail_user_frame_lineno}"
                skipped.append(
                    SkippedFrame(
                        function=str(m.co_name),
                        filename=str(m.co_filename),
                        firstlineno=int(m.co_firstlineno or 0),
                        fail_type=str(m.fail_type),
                        reason=_first_line(str(m.fail_reason or "")),
                        site=site,
                    )
                )
            rr = getattr(m, "recompile_reason", None)
            if rr:
                recompiles += 1
                recompile_reasons.append(_first_line(str(rr)))

        cg = sum(counters["graph_break"].values())
        cu = sum(counters["unimplemented"].values())
        events = list(cap.events)
        hooked = cap.hooked
        if not hooked:  # fallback: Dynamo's counter plus backend-side reasons
            for gm in gms:
                r = getattr(gm, "compile_subgraph_reason", None)
                if r is not None and getattr(r, "graph_break", False):
                    msg = str(r.reason)
                    frames = _frames_from(getattr(r, "user_stack", None))
                    events.append(
                        BreakEvent(
                            gb_type=None,
                            gb_id=lookup_gb_id(None, msg),
                            reason=_first_line(msg),
                            context=_context_of(msg),
                            message=msg,
                            site=_site_of(frames),
                            user_stack=frames,
                        )
                    )
        report = ExplainReport(
            name=_name_of(model_or_fn),
            graphs=len(gms),
            break_events=len(events) if hooked else max(cg, len(events)),
            reasons=_group(events),
            events=events,
            skipped_frames=skipped,
            recompiles=recompiles,
            recompile_reasons=recompile_reasons,
            frames_total=int(counters["frames"]["total"]),
            frames_ok=int(counters["frames"]["ok"]),
            counter_graph_break=cg,
            counter_unimplemented=cu,
            graph_info=graph_info,
            torch_version=str(torch.__version__),
            hooked=hooked,
        )
        # Dynamo keeps only the last 64 metrics: cleared after the report, the
        # ones left are the later calls' own, however many the first made
        if clear_metrics:
            clear_metrics()
        for i in range(1, len(calls)):
            outs.append(call(i))
        if get_metrics:
            report.later_recompiles = sum(1 for m in get_metrics() if getattr(m, "recompile_reason", None))
        return report, outs
    finally:
        dynamo.reset()
