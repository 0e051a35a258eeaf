"""graphmend.runtime: what mended source calls at run time.

Mended files import this module as ``import graphmend.runtime as _graphmend_rt``
and depend on nothing else of graphmend.  The module imports no third-party
package at import time (``torch`` is only looked up in ``sys.modules``), so
importing it costs a few hundred microseconds.

Two families, documented precisely in ``docs/runtime.md``:

* deferred side effects ([Defer]): ``print``, ``log``, ``warn``, and their
  conditional forms ``print_if``, ``log_if``, ``warn_if`` (``if cond: ...``
  with ``cond`` a tensor, decided after the graph);
* traps ([Trap]): ``trap_if``, ``trap_unless`` and the ``equal`` /
  ``same_shape`` helpers for ``torch.equal`` guards;
* predication ([Where]): ``where``, the data-dependent ``if`` as one select;
* range guards ([Range]): ``above``, ``at_most``, the Python-level condition
  under which a comparison of a random draw is constant (GM105).

Outside compilation every function does exactly what the original statement
did, immediately.  While TorchDynamo traces a function, the call is instead
recorded in a module-level queue (arguments snapshotted: tensors cloned in the
graph) and one marker attribute of this module is assigned.  Dynamo replays both
mutations after the graph; the marker assignment runs this module's
``__setattr__``, which drains the queue in order, outside Dynamo.  This works
from inlined frames (helper functions, submodules' ``forward``), keeps one graph
and counts no graph break.

How this was chosen (torch 2.13) is in docs/runtime.md, section "Mechanism".
"""

from __future__ import annotations

import builtins as _builtins
import sys as _sys
import types as _types

# Served by the module __getattr__ (and cached once armed), hence noqa F822.
__all__ = [  # noqa: F822
    "above",
    "at_most",
    "equal",
    "flush",
    "log",
    "log_if",
    "pending",
    "print",
    "print_if",
    "same_shape",
    "trap_if",
    "trap_unless",
    "warn",
    "warn_if",
    "where",
]

#: Version of the calling convention documented in docs/runtime.md.  Bump only
#: with a compatible change; mended files never check it, tools may.
API_VERSION = 1

# Actions recorded while tracing, replayed by Dynamo after the graph and drained
# by ``_RuntimeModule.__setattr__``.  Each item is a tuple whose first element
# is one of the ``_K_*`` kinds.  Eager calls never put anything here.
_QUEUE: list = []

_K_PRINT = "print"
_K_LOG = "log"
_K_WARN = "warn"
_K_TRAP = "trap"
_K_WHEN = "when"  # (kind, cond snapshot, inner action): the action if bool(cond)

# Name of the marker attribute whose (replayed) assignment drains the queue.
# It is never stored in the module's __dict__.
_MARKER = "_graphmend_flush_marker"

# Logger methods of the standard library that honour ``stacklevel`` (3.8+).
_STDLIB_LOG_METHODS = frozenset(
    [
        "debug",
        "info",
        "warning",
        "warn",
        "error",
        "exception",
        "critical",
        "fatal",
        "log",
    ]
)

_armed = False
_drain_outside_dynamo = None  # set by _arm(): _drain wrapped by torch._dynamo.disable


# ---------------------------------------------------------------------------
# helpers that Dynamo inlines (keep them trivially traceable)


def _compiling() -> bool:
    """True only while TorchDynamo traces (never when code really runs)."""
    torch = _sys.modules.get("torch")
    return torch is not None and torch.compiler.is_compiling()


def _snap(value):
    """Snapshot one argument at the call site (traced: the clone is in the graph)."""
    torch = _sys.modules["torch"]
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, list):
        return [_snap(v) for v in value]
    if isinstance(value, tuple) and type(value) is tuple:
        return tuple(_snap(v) for v in value)
    if isinstance(value, dict) and type(value) is dict:
        return {k: _snap(v) for k, v in value.items()}
    return value


def _snap_args(args):
    return tuple(_snap(a) for a in args)


def _mark():
    # Under tracing this is a recorded mutation of this module, replayed by
    # Dynamo after the graph (after the queue's own update) as a STORE_ATTR on
    # the module object, which runs _RuntimeModule.__setattr__.
    global _graphmend_flush_marker
    _graphmend_flush_marker = None


# ---------------------------------------------------------------------------
# public API: deferred side effects


def _print(*args, **kwargs):
    """``print(*args, **kwargs)``, deferred to after the graph when compiled."""
    if _compiling():
        _QUEUE.append((_K_PRINT, _snap_args(args), kwargs))
        _mark()
        return None
    if _QUEUE:
        _drain()
    return _builtins.print(*args, **kwargs)


def _log(logger, method, *args, **kwargs):
    """``logger.<method>(*args, **kwargs)``, deferred when compiled.

    ``method`` is the attribute name as a string: ``"info"``, ``"warning"``,
    ``"log"`` (then ``args[0]`` is the level), ``"warning_once"``, ...
    """
    if _compiling():
        _QUEUE.append((_K_LOG, logger, method, _snap_args(args), _snap(kwargs)))
        _mark()
        return None
    if _QUEUE:
        _drain()
    return _call_logger(logger, method, args, kwargs)


def _warn(message, category=None, stacklevel=1, source=None):
    """``warnings.warn(message, category, stacklevel, source)``, deferred when compiled."""
    if _compiling():
        _QUEUE.append((_K_WARN, _snap(message), category, stacklevel, source))
        _mark()
        return None
    if _QUEUE:
        _drain()
    return _call_warn(message, category, stacklevel, source)


# ---------------------------------------------------------------------------
# public API: conditional deferred side effects


def _when(cond, emit_now, action):
    """Shared body of the ``*_if`` functions while tracing.

    ``cond`` known at trace time (a Python bool or a static answer) decides
    right away; a one-element tensor is snapshotted and decided after the
    graph; anything else takes the original ``if``'s path now (a tensor of
    several elements raises the same error the ``if`` raised).
    """
    torch = _sys.modules["torch"]
    if isinstance(cond, torch.Tensor) and cond.numel() == 1:
        _QUEUE.append((_K_WHEN, _snap(cond), action()))
        _mark()
        return None
    if cond:
        return emit_now()
    return None


def _print_if(cond, *args, **kwargs):
    """``if cond: print(*args, **kwargs)``; the test and the print after the
    graph when compiled."""
    if _compiling():
        return _when(cond, lambda: _print(*args, **kwargs),
                     lambda: (_K_PRINT, _snap_args(args), kwargs))
    if _QUEUE:
        _drain()
    if cond:
        return _builtins.print(*args, **kwargs)
    return None


def _log_if(cond, logger, method, *args, **kwargs):
    """``if cond: logger.<method>(*args, **kwargs)``, decided after the graph
    when compiled."""
    if _compiling():
        return _when(cond, lambda: _log(logger, method, *args, **kwargs),
                     lambda: (_K_LOG, logger, method, _snap_args(args), _snap(kwargs)))
    if _QUEUE:
        _drain()
    if cond:
        return _call_logger(logger, method, args, kwargs)
    return None


def _warn_if(cond, message, category=None, stacklevel=1, source=None):
    """``if cond: warnings.warn(message, category, stacklevel, source)``,
    decided after the graph when compiled."""
    if _compiling():
        return _when(cond, lambda: _warn(message, category, stacklevel, source),
                     lambda: (_K_WARN, _snap(message), category, stacklevel, source))
    if _QUEUE:
        _drain()
    if cond:
        return _call_warn(message, category, stacklevel, source)
    return None


# ---------------------------------------------------------------------------
# public API: traps


def _trap_if(fail, exc_type, *exc_args):
    """``if fail: raise exc_type(*exc_args)``; checked after the graph when compiled.

    ``fail`` is a ``bool`` or a tensor whose truth value Python would take
    (``bool(fail)``; one element).
    """
    if _compiling():
        if fail is False:
            return
        if fail is True:
            # Decided at trace time (e.g. shapes differ): raise right here, as
            # the original did.  Dynamo breaks the graph at this raise; what was
            # deferred before it is flushed first.
            raise exc_type(*exc_args)
        _QUEUE.append((_K_TRAP, _snap(fail), exc_type, exc_args))
        _mark()
        return
    if _QUEUE:
        _drain()
    if fail:
        raise exc_type(*exc_args)
    return


def _trap_unless(ok, exc_type, *exc_args):
    """``if not ok: raise exc_type(*exc_args)`` (the form of ``assert ok, msg``)."""
    if _compiling():
        if ok is True:
            return None
        if ok is False:
            raise exc_type(*exc_args)
        torch = _sys.modules["torch"]
        if isinstance(ok, torch.Tensor):
            return _trap_if(torch.logical_not(ok), exc_type, *exc_args)
        return _trap_if(not ok, exc_type, *exc_args)
    if _QUEUE:
        _drain()
    if not ok:
        raise exc_type(*exc_args)
    return None


def _same_shape(a, b) -> bool:
    """Static part of ``torch.equal(a, b)``: do the shapes match?  Always a
    Python ``bool`` (shapes are static under Dynamo's default specialisation)."""
    return tuple(a.shape) == tuple(b.shape)


def _equal(a, b):
    """``torch.equal(a, b)``.

    Eagerly: exactly ``torch.equal(a, b)`` (a ``bool``).  While tracing: ``False``
    when the shapes differ (decided at trace time), otherwise a 0-d bool tensor
    ``(a == b).all()`` (same dtype promotion and NaN behaviour as ``torch.equal``),
    which ``trap_if``/``trap_unless`` accept.
    """
    torch = _sys.modules["torch"]
    if _compiling():
        if not _same_shape(a, b):
            return False
        if a.device != b.device:
            # torch.equal raises here; keep that behaviour.
            return torch.equal(a, b)
        return torch.eq(a, b).all()
    return torch.equal(a, b)


# ---------------------------------------------------------------------------
# public API: predication


def _where(cond, if_true, if_false, grad_safe=True):
    """``if_true if cond else if_false``; one ``torch.where`` in the graph when compiled.

    Eagerly this is exactly the conditional expression: ``bool(cond)`` decides
    and the chosen object itself is returned.  While tracing, it is
    ``torch.where(cond, if_true, if_false)`` when that is provably the same
    value: ``cond`` a 0-d tensor, both arms tensors of the same dtype, shape
    and device (all static at trace time), and under autograd the same
    ``requires_grad`` on both arms; when the arms' code is not known to have
    bounded gradients (``grad_safe=False``), arms that require grad are left
    alone (a NaN or Inf in the arm not taken would reach the gradient through
    ``where``).  Otherwise it falls back to the conditional expression, which
    breaks the graph exactly where the original ``if`` did.
    """
    if _compiling():
        torch = _sys.modules["torch"]
        tensor = torch.Tensor
        if (
            isinstance(cond, tensor)
            and isinstance(if_true, tensor)
            and isinstance(if_false, tensor)
            and cond.ndim == 0
            and if_true.dtype == if_false.dtype
            and if_true.shape == if_false.shape
            and if_true.device == if_false.device
            and cond.device == if_true.device
        ):
            grad = torch.is_grad_enabled() and (if_true.requires_grad or if_false.requires_grad)
            if not grad or (grad_safe and if_true.requires_grad == if_false.requires_grad):
                if cond.dtype != torch.bool:
                    cond = cond != 0
                return torch.where(cond, if_true, if_false)
    return if_true if cond else if_false


# ---------------------------------------------------------------------------
# public API: range guards

# Exactly these types: their comparison with a number is a Python ``bool``
# that Dynamo folds (module and config attributes are constants to it).
_NUMBER_TYPES = (int, float, bool)


def _above(value, bound) -> bool:
    """``value > bound`` when ``value`` is a Python ``int``, ``float`` or ``bool``
    (exactly those types); ``True`` for anything else.

    Mended code writes ``_graphmend_rt.above(q, 0) and p < q`` where ``p`` is
    a draw in [0, 1]: for a number ``q <= 0`` (or NaN) the comparison is false
    for every draw, so the test is ``False`` without looking at the tensor; for
    any other ``q`` the original comparison decides, unchanged.
    """
    if type(value) in _NUMBER_TYPES:
        return value > bound
    return True


def _at_most(value, bound) -> bool:
    """``value <= bound`` when ``value`` is a Python ``int``, ``float`` or
    ``bool`` (exactly those types); ``False`` for anything else.

    Mended code writes ``_graphmend_rt.at_most(q, 0) or p >= q`` where ``p`` is
    a draw in [0, 1]: for a number ``q <= 0`` the comparison is true for every
    draw; otherwise (NaN, a positive number, any other object) the original
    comparison decides.
    """
    if type(value) in _NUMBER_TYPES:
        return value <= bound
    return False


def _flush():
    """Drain the queue now.  Never needed by mended code (the replayed marker
    assignment does it); harmless when the queue is empty."""
    if _QUEUE:
        _drain()


def _pending() -> int:
    """Number of recorded actions not yet emitted (for tests and debugging)."""
    return len(_QUEUE)


# ---------------------------------------------------------------------------
# emission (never traced)


def _is_internal_frame(frame) -> bool:
    name = frame.f_globals.get("__name__", "")
    return name == __name__ or name.startswith("torch._dynamo")


def _levels_to_user(frame) -> int:
    """Number of consecutive frames, starting at ``frame`` and walking to
    callers, that belong to this module or to torch._dynamo (its wrappers)."""
    n = 1
    while frame is not None and _is_internal_frame(frame):
        frame = frame.f_back
        n += 1
    return n - 1


def _call_logger(logger, method, args, kwargs):
    import logging

    fn = getattr(logger, method)
    if method in _STDLIB_LOG_METHODS and isinstance(
        logger, (logging.Logger, logging.LoggerAdapter)
    ):
        # logging's findCaller skips its own frames, then counts ``stacklevel``
        # others (3.11+ semantics); make our frames invisible.
        extra = _levels_to_user(_sys._getframe(0))
        kwargs = dict(kwargs)
        kwargs["stacklevel"] = kwargs.get("stacklevel", 1) + extra
    return fn(*args, **kwargs)


def _call_warn(message, category, stacklevel, source):
    import warnings

    # warn's stacklevel=1 is this frame; make all our frames invisible.
    extra = _levels_to_user(_sys._getframe(0))
    return warnings.warn(message, category, stacklevel + extra, source)


def _emit(item):
    kind = item[0]
    if kind == _K_PRINT:
        _builtins.print(*item[1], **item[2])
    elif kind == _K_LOG:
        _call_logger(item[1], item[2], item[3], item[4])
    elif kind == _K_WARN:
        _call_warn(item[1], item[2], item[3], item[4])
    elif kind == _K_WHEN:
        if item[1]:
            _emit(item[2])
    elif kind == _K_TRAP:
        if item[1]:
            # Later actions are dropped: the original never reached them.
            raise item[2](*item[3])
    else:  # pragma: no cover - defensive
        raise RuntimeError(f"graphmend.runtime: unknown queued action {kind!r}")


def _drain_impl():
    items = _QUEUE[:]
    del _QUEUE[:]
    for item in items:
        _emit(item)


def _drain():
    fn = _drain_outside_dynamo
    if fn is None:
        _drain_impl()
    else:
        fn()


# ---------------------------------------------------------------------------
# module plumbing


class _RuntimeModule(_types.ModuleType):
    """Module class whose marker assignment drains the queue."""

    def __setattr__(self, name, value):
        if name == _MARKER:
            _drain()
            return
        super().__setattr__(name, value)


_PUBLIC = {
    "print": _print,
    "log": _log,
    "warn": _warn,
    "print_if": _print_if,
    "log_if": _log_if,
    "warn_if": _warn_if,
    "trap_if": _trap_if,
    "trap_unless": _trap_unless,
    "equal": _equal,
    "same_shape": _same_shape,
    "where": _where,
    "above": _above,
    "at_most": _at_most,
    "flush": _flush,
    "pending": _pending,
}


def _arm() -> bool:
    """Keep our emission frames out of Dynamo.  Needs torch._dynamo loaded.

    * ``_RuntimeModule.__setattr__``'s code is skipped by Dynamo's frame hook;
    * the drain runs under ``torch._dynamo.disable`` (recursive), so the
      logging/warnings/transformers frames it calls are not compiled either.
    Without this, Dynamo would compile those frames when the replay runs and
    count graph breaks inside them.
    """
    global _armed, _drain_outside_dynamo
    if _armed:
        return True
    dynamo = _sys.modules.get("torch._dynamo")
    if dynamo is None:
        return False
    try:
        from torch._dynamo.eval_frame import skip_code

        skip_code(_RuntimeModule.__setattr__.__code__)
        _drain_outside_dynamo = dynamo.disable(
            _drain_impl, reason="graphmend.runtime emission"
        )
    except Exception:  # noqa: BLE001  # pragma: no cover - torch without these internals
        _drain_outside_dynamo = None
    _armed = True
    return True


def __getattr__(name):
    # Public functions are served from here until Dynamo is loaded, so that the
    # first access while tracing (Dynamo really performs this getattr) arms the
    # runtime before any replay.  Then they are cached in the module dict.
    fn = _PUBLIC.get(name)
    if fn is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _arm():
        globals().update(_PUBLIC)
    return fn


def __dir__():
    return sorted(set(globals()) | set(_PUBLIC))


_sys.modules[__name__].__class__ = _RuntimeModule
if "torch._dynamo" in _sys.modules:
    _arm()
    globals().update(_PUBLIC)
