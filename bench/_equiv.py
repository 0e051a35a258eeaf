"""Output and side-effect equivalence for the mended benchmarks.

docs/BENCHMARKS.md §1: a mended model must give what the original gives when
run eagerly: same seed and ``state_dict``, several fresh random inputs,
dtype and shape equal, ``allclose`` (tight) for floats and exact equality for
integers and booleans, and the same stdout, log records and warnings.

* :func:`flatten` turns a model output (``ModelOutput``, tuples, caches, ...)
  into ``{path: tensor-or-scalar}`` with tensors detached on the CPU, so it
  can be saved with ``torch.save`` in one process and compared in another.
* :func:`compare` compares two flattened outputs.
* :class:`SideEffects` captures, in order, what one call writes to stdout,
  the log records it emits and the warnings it raises.

torch is imported lazily (the drivers import this file without torch).
"""

from __future__ import annotations

import io
import logging
import math
import sys
import warnings
from typing import Any, Optional

# Tolerances (rtol, atol) by dtype for "identical": the counting backend runs
# the captured FX graph eagerly (the same ATen ops in the same order), so
# anything beyond rounding noise is a real difference.
TIGHT = {"float32": (1e-5, 1e-6), "float64": (1e-7, 1e-9), "float16": (1e-3, 1e-4), "bfloat16": (1e-2, 1e-3)}
# For Inductor (fused kernels reorder floating-point sums): reported, not
# part of the "identical" verdict.
LOOSE = {"float32": (1e-3, 1e-4), "float64": (1e-6, 1e-8), "float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2)}

_MAX_DEPTH = 8


def _dtype_name(t: Any) -> str:
    return str(t.dtype).replace("torch.", "")


def flatten(obj: Any, prefix: str = "out", out: Optional[dict] = None, depth: int = 0) -> dict:
    """``{path: value}``: tensors (detached, CPU, cloned), scalars, strings;
    other objects by their public attributes (depth-limited)."""
    import torch

    out = {} if out is None else out
    if torch.is_tensor(obj):
        out[prefix] = obj.detach().to("cpu").clone()
    elif obj is None or isinstance(obj, (bool, int, float, str, complex)):
        out[prefix] = obj
    elif isinstance(obj, torch.dtype) or isinstance(obj, torch.device) or isinstance(obj, torch.Size):
        out[prefix] = str(obj)
    elif depth >= _MAX_DEPTH:
        out[prefix] = f"<{type(obj).__name__}>"
    elif hasattr(obj, "items") and callable(obj.items):  # dict, ModelOutput
        for k, v in list(obj.items()):
            flatten(v, f"{prefix}.{k}", out, depth + 1)
    elif isinstance(obj, (list, tuple)):
        out[prefix + "#len"] = len(obj)
        for i, v in enumerate(obj):
            flatten(v, f"{prefix}[{i}]", out, depth + 1)
    elif isinstance(obj, torch.nn.Module):
        out[prefix] = f"<module {type(obj).__name__}>"
    elif hasattr(obj, "__dict__"):  # Cache objects and the like
        out[prefix + "#type"] = type(obj).__name__
        for k, v in sorted(vars(obj).items()):
            if not k.startswith("_"):
                flatten(v, f"{prefix}.{k}", out, depth + 1)
    else:
        out[prefix] = f"<{type(obj).__name__}>"
    return out


def compare(ref: dict, got: dict, tol: Optional[dict] = None, limit: int = 6) -> dict:
    """Compare flattened outputs.  ``identical``: same keys, tensors of equal
    dtype and shape, floats ``allclose`` within ``tol[dtype]`` (NaNs equal),
    integers and booleans exactly equal, other values equal."""
    import torch

    tol = TIGHT if tol is None else tol
    mismatches: list[str] = []
    bitwise = True
    max_abs = 0.0
    max_rel = 0.0
    tensors = 0
    kr, kg = set(ref), set(got)
    if kr != kg:
        missing = sorted(kr - kg)[:3]
        extra = sorted(kg - kr)[:3]
        mismatches.append(f"keys differ: missing {missing} extra {extra}")
    for k in sorted(kr & kg, key=lambda s: (len(s), s)):
        a, b = ref[k], got[k]
        if torch.is_tensor(a) != torch.is_tensor(b):
            mismatches.append(f"{k}: tensor vs {type(b).__name__}")
            continue
        if torch.is_tensor(a):
            tensors += 1
            if a.dtype != b.dtype or a.shape != b.shape:
                mismatches.append(f"{k}: {a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}")
                continue
            if a.is_floating_point() or a.is_complex():
                same = (a == b) | (torch.isnan(a) & torch.isnan(b))
                if not bool(same.all()):
                    bitwise = False
                    rtol, atol = tol.get(_dtype_name(a), tol["float32"])
                    d = (a.double() - b.double()).abs()
                    d = torch.where(torch.isnan(d), torch.zeros_like(d), d)
                    if d.numel():
                        m = float(d.max())
                        max_abs = max(max_abs, m)
                        den = a.double().abs().clamp_min(1e-12)
                        max_rel = max(max_rel, float((d / den).max()))
                    if not torch.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True):
                        mismatches.append(f"{k}: max |diff| {float(d.max()):.3g} beyond rtol {rtol} atol {atol}")
            else:
                if not torch.equal(a, b):
                    bitwise = False
                    mismatches.append(f"{k}: {int((a != b).sum())} of {a.numel()} {a.dtype} elements differ")
        else:
            eq = a == b
            if isinstance(a, float) and isinstance(b, float):
                eq = (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)
            if not eq:
                bitwise = False
                mismatches.append(f"{k}: {str(a)[:40]!r} vs {str(b)[:40]!r}")
    return {
        "identical": not mismatches,
        "bitwise": not mismatches and bitwise,
        "tensors": tensors,
        "max_abs_diff": max_abs,
        "max_rel_diff": max_rel,
        "mismatches": mismatches[:limit],
        "n_mismatches": len(mismatches),
    }


# ------------------------------------------------------------ side effects

# Log records and warnings that belong to the compiler, not the model.
_INTERNAL_LOGGERS = ("torch", "filelock", "urllib3", "fsspec", "asyncio", "PIL", "matplotlib")
_INTERNAL_WARN_PATHS = ("/torch/_dynamo/", "/torch/_inductor/", "/torch/fx/", "/torch/_functorch/",
                        "/torch/_subclasses/", "/torch/_guards", "/torch/_higher_order_ops/",
                        "/torch/_logging/", "/torch/utils/_sympy/", "/torch/_library/", "/torch/_prims")


class _Stdout(io.TextIOBase):
    def __init__(self, events: list) -> None:
        self.events = events

    def write(self, s: str) -> int:
        if s:
            if self.events and self.events[-1][0] == "stdout":
                self.events[-1] = ("stdout", self.events[-1][1] + s)
            else:
                self.events.append(("stdout", s))
        return len(s)

    def flush(self) -> None:
        pass


class _Handler(logging.Handler):
    def __init__(self, cap: "SideEffects") -> None:
        super().__init__(level=logging.NOTSET)
        self.cap = cap

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = record.getMessage()
        except Exception as e:  # noqa: BLE001
            msg = f"<unformattable: {e}>"
        if record.name == "root" or not record.name.startswith(_INTERNAL_LOGGERS):
            self.cap.events.append(("log", record.name, record.levelname, msg))
            self.cap.locations.append(f"{record.pathname}:{record.lineno}")
        else:
            self.cap.ignored += 1


class SideEffects:
    """Capture what a call prints, logs and warns, in order.

    stdout is replaced by a recorder; a handler is attached to the root
    logger and to every logger that does not propagate (transformers' library
    logger does not); warnings are shown through a recorder with the
    ``"always"`` filter (both arms alike, so once-per-location filtering does
    not hide a difference).  ``events`` are tuples ``("stdout", text)``,
    ``("log", logger, level, message)``, ``("warning", category, message)``;
    ``locations`` keeps file:line of log records and warnings separately
    (mending may shift line numbers; those are reported, not compared).
    Records of torch's own loggers and warnings raised inside the compiler
    are counted in ``ignored`` and left out.
    """

    def __init__(self) -> None:
        self.events: list[tuple] = []
        self.locations: list[str] = []
        self.ignored = 0
        self._handler = _Handler(self)
        self._loggers: list[logging.Logger] = []

    def __enter__(self) -> "SideEffects":
        self._stdout = sys.stdout
        sys.stdout = _Stdout(self.events)  # type: ignore[assignment]
        root = logging.getLogger()
        self._loggers = [root]
        for name in list(logging.root.manager.loggerDict):
            lg = logging.root.manager.loggerDict[name]
            if isinstance(lg, logging.Logger) and not lg.propagate and not name.startswith(_INTERNAL_LOGGERS):
                self._loggers.append(lg)
        for lg in self._loggers:
            lg.addHandler(self._handler)
        self._wcm = warnings.catch_warnings()
        self._wcm.__enter__()
        warnings.simplefilter("always")
        cap = self

        def showwarning(message: Any, category: Any, filename: str, lineno: int, file: Any = None,
                        line: Any = None) -> None:
            fn = str(filename).replace("\\", "/")
            if any(p in fn for p in _INTERNAL_WARN_PATHS):
                cap.ignored += 1
                return
            cap.events.append(("warning", getattr(category, "__name__", str(category)), str(message)))
            cap.locations.append(f"{filename}:{lineno}")

        warnings.showwarning = showwarning
        return self

    def __exit__(self, *exc: Any) -> None:
        self._wcm.__exit__(*exc)
        for lg in self._loggers:
            lg.removeHandler(self._handler)
        sys.stdout = self._stdout

    def record(self) -> dict:
        return {"events": [list(e) for e in self.events], "locations": list(self.locations),
                "ignored": self.ignored}


def compare_side_effects(ref: list[dict], got: list[dict]) -> dict:
    """Per-call comparison of :meth:`SideEffects.record` lists."""
    diffs: list[str] = []
    n_events = 0
    loc_same = True
    if len(ref) != len(got):
        diffs.append(f"{len(ref)} calls vs {len(got)}")
    for i, (a, b) in enumerate(zip(ref, got)):
        ea = [tuple(e) for e in a["events"]]
        eb = [tuple(e) for e in b["events"]]
        n_events += len(ea)
        if ea != eb:
            diffs.append(f"call {i}: {_short_events(ea)} vs {_short_events(eb)}")
        if a.get("locations") != b.get("locations"):
            loc_same = False
    return {"identical": not diffs, "events": n_events, "diffs": diffs[:6], "locations_same": loc_same}


def _short_events(ev: list[tuple]) -> str:
    parts = []
    for e in ev[:4]:
        parts.append(f"{e[0]}:{str(e[-1])[:50]!r}")
    if len(ev) > 4:
        parts.append(f"... {len(ev)} in all")
    return "[" + ", ".join(parts) + "]"
