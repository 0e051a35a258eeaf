"""graphmend.runtime: what mended source calls at run time.

Mended files import this module as ``import graphmend.runtime as _graphmend_rt``
and depend on nothing else of graphmend.  The module imports no third-party
package at import time (``torch`` is only looked up in ``sys.modules``), so
importing it costs a few hundred microseconds.

Two families, documented precisely in ``docs/runtime.md``:

* deferred side effects ([Defer]): ``print``, ``log``, ``warn``, and their
  conditional forms ``print_if``, ``log_if``, ``warn_if`` (``if cond: ...``
  with ``cond`` a tensor, decided after the graph); ``fmt`` and ``item`` for
  arguments that read tensor data (f-strings, ``str.format``, ``t.item()``,
  ``float(t)``), converted and formatted after the graph;
* traps ([Trap]): ``trap_if``, ``trap_unless`` and the ``equal`` /
  ``same_shape`` helpers for ``torch.equal`` guards;
* predication ([Where]): ``where``, the data-dependent ``if`` as one select;
* range guards ([Range]): ``above``, ``at_most``, the Python-level condition
  under which a comparison of a random draw is constant (GM105);
* masked reductions and copies ([Masked]): ``masked_reduce``,
  ``x[mask].sum()`` and its kin as one fixed-shape reduction, and
  ``masked_copy``, ``y[mask] = x[mask]`` as one ``torch.where``, and
  ``masked_update``, ``x[mask] += v`` and its kin likewise (GM404);
* loops ([Rows]): ``nonzero_rows``, ``for e in hit.nonzero():`` over every
  index of ``hit`` while compiling with dynamic-output-shape capture, when
  the indices ``hit`` leaves out provably do nothing, and ``hit_row``, the
  mask's row of an index, all zero for one ``hit`` leaves out (GM409);
* stores ([Store]): ``assign_to``, ``self.buf = self.buf.to(...)`` without
  the store that changes nothing (GM506).

Outside compilation every function does exactly what the original statement
did, immediately.  While TorchDynamo traces a function, the call is instead
recorded in a module-level queue (arguments snapshotted: tensors cloned in the
graph, with what their repr shows) and one marker attribute of this module is assigned.  Dynamo replays both
mutations after the graph; the marker assignment runs this module's
``__setattr__``, which drains the queue in order, outside Dynamo.  This works
from inlined frames (helper functions, submodules' ``forward``), keeps one graph
and counts no graph break.

How this was chosen (torch 2.13) is in docs/runtime.md, section "Mechanism".
"""

from __future__ import annotations

import builtins as _builtins
import operator as _operator
import sys as _sys
import types as _types

# Served by the module __getattr__ (and cached once armed), hence noqa F822.
__all__ = [  # noqa: F822
    "above",
    "assign_to",
    "at_most",
    "check_tensor_all",
    "check_tensor_all_with",
    "compare_item",
    "equal",
    "flush",
    "fmt",
    "fmt_percent",
    "hit_row",
    "item",
    "log",
    "log_if",
    "masked_copy",
    "masked_reduce",
    "masked_update",
    "message",
    "message_percent",
    "nonzero_rows",
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

# Call sites of deferred warnings and log records, recorded at trace time:
# _SITES[i] is a tuple of (filename, line, function, module globals), the
# innermost user frame first; queued actions carry the index.
_SITES: list = []
_SITE_INDEX: dict = {}

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
_comptime = None  # set by _arm(): torch._dynamo.comptime.comptime


# ---------------------------------------------------------------------------
# helpers that Dynamo inlines (keep them trivially traceable)


def _compiling() -> bool:
    """True only while TorchDynamo traces (never when code really runs)."""
    torch = _sys.modules.get("torch")
    return torch is not None and torch.compiler.is_compiling()


# Markers of snapshotted values inside queued actions (first element of a
# tuple; private objects, so no user tuple can start with them).
_S_TENSOR = object()  # (_S_TENSOR, detached clone, grad_fn name, requires_grad, parameter)
_S_ITEM = object()  # (_S_ITEM, detached clone, conversion or None, site): t.item() / conv(t)
_S_FMT = object()  # (_S_FMT, template, snapshotted values): template.format(*values)
_S_PERCENT = object()  # (_S_PERCENT, template, snapshotted values): template % values
# A trap's exception argument, formatted only if the trap raises:
# (_S_LAZY, template, values, percent)
_S_LAZY = object()

# Values formatted after the graph as they were at the call: immutable, and
# their str/repr/format read nothing that the program can change.
_IMMUTABLE = (str, int, float, complex, bool, bytes, type(None), type(Ellipsis), range)

_UNKNOWN = "<graphmend: unknown>"


# Returned by the snapshot helpers while tracing when a value cannot be
# snapshotted exactly; the call then runs at once, where the original ran it.
_NO = object()


def _ct_grad_fn_name(ctx):  # pragma: no cover - runs inside Dynamo only
    # comptime: runs while Dynamo traces _tensor_meta; sets its local
    # ``name`` to the type name of the traced tensor's grad_fn (the fake
    # tensor's autograd node is the one eager autograd builds: same op).
    from torch._dynamo.variables import ConstantVariable

    tx = ctx._i_will_not_complain_if_bc_breaks_InstructionTranslator()
    fake = tx.symbolic_locals["t"].as_proxy().node.meta["example_value"]
    node = fake.grad_fn
    name = None
    if node is not None:
        name = type(node).__name__
        if name == "CppFunction":
            name = node.name().rsplit("::", 1)[-1]
    tx.symbolic_locals["name"] = ConstantVariable.create(name)


def _tensor_meta(t):
    """(grad_fn name or None, requires_grad, is a Parameter) of ``t`` at the
    call, read at trace time; _NO when its repr cannot be rebuilt."""
    torch = _sys.modules["torch"]
    kind = type(t)
    if kind is not torch.Tensor and kind is not torch.nn.Parameter:
        return _NO
    if t.is_sparse or t.is_quantized or t.is_nested or t.layout != torch.strided:
        return _NO
    requires_grad = t.requires_grad
    name = None
    if requires_grad:
        comptime = _comptime
        if comptime is None:
            return _NO
        name = _UNKNOWN
        comptime(_ct_grad_fn_name)
        if name == _UNKNOWN:
            return _NO
    return name, requires_grad, kind is torch.nn.Parameter


def _snap(value):
    """Snapshot one argument at the call site (traced: the clone is in the
    graph), or _NO when it cannot be snapshotted exactly."""
    torch = _sys.modules["torch"]
    if isinstance(value, torch.Tensor):
        meta = _tensor_meta(value)
        if meta is _NO:
            return _NO
        return (_S_TENSOR, value.detach().clone(), meta[0], meta[1], meta[2])
    if isinstance(value, _IMMUTABLE):
        return value
    if isinstance(value, (torch.Size, torch.dtype, torch.device)):
        return value
    if type(value) is tuple and value and (
        value[0] is _S_ITEM or value[0] is _S_FMT or value[0] is _S_PERCENT
    ):
        return value  # already snapshotted at the call (item() / fmt())
    if _is_lazy(value):  # message(): its values now, the string after the graph
        return _snapped_format(value[1], value[2], value[3])
    if type(value) is list or type(value) is tuple:
        items = _snap_args(value)
        if items is _NO:
            return _NO
        return list(items) if type(value) is list else items
    if type(value) is dict:
        keys = _snap_args(tuple(value.keys()))
        vals = _snap_args(tuple(value.values()))
        if keys is _NO or vals is _NO:
            return _NO
        return dict(zip(keys, vals))
    # Any other object may print state that changes after the call.
    return _NO


def _snap_args(args):
    out = []
    for a in args:
        v = _snap(a)
        if v is _NO:
            return _NO
        out.append(v)
    return tuple(out)


def _ct_site(ctx):  # pragma: no cover - runs inside Dynamo only
    # comptime: runs while Dynamo traces _call_site; sets its local ``site``
    # to a key of _SITES describing the frames that called the runtime (the
    # innermost user frame first), as (filename, line, function, globals).
    from torch._dynamo.variables import ConstantVariable

    tx = ctx._i_will_not_complain_if_bc_breaks_InstructionTranslator()
    frames = []
    t = tx
    while t is not None:
        g = t.f_globals
        if g.get("__name__") != __name__:
            name = t.f_code.co_name
            # The frame Dynamo resumes after an (un-mended) graph break runs
            # a copy of the function named torch_dynamo_resume_in_<name>_at_<line>.
            if name.startswith("torch_dynamo_resume_in_") and "_at_" in name:
                name = name[len("torch_dynamo_resume_in_"):name.rindex("_at_")]
            frames.append((t.f_code.co_filename, t.lineno, name, g))
        t = getattr(t, "parent", None)
    key = tuple((f[0], f[1], f[2], id(f[3])) for f in frames)
    index = _SITE_INDEX.get(key)
    if index is None:
        index = len(_SITES)
        _SITES.append(tuple(frames))
        _SITE_INDEX[key] = index
    tx.symbolic_locals["site"] = ConstantVariable.create(index)


def _call_site():
    """While tracing: a key of _SITES for the user frames of this call
    (innermost first), or None when it cannot be known."""
    comptime = _comptime
    if comptime is None:
        return None
    site = None
    comptime(_ct_site)
    return site


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
        action = _print_action(args, kwargs)
        if action is not _NO:
            _QUEUE.append(action)
            _mark()
            return None
        return _builtins.print(*_now(args), **kwargs)
    if _QUEUE:
        _drain()
    return _builtins.print(*args, **kwargs)


def _print_action(args, kwargs):
    snapped = _snap_args(args)
    if snapped is _NO:
        return _NO
    return (_K_PRINT, snapped, kwargs)


def _log(logger, method, *args, **kwargs):
    """``logger.<method>(*args, **kwargs)``, deferred when compiled.

    ``method`` is the attribute name as a string: ``"info"``, ``"warning"``,
    ``"log"`` (then ``args[0]`` is the level), ``"warning_once"``, ...
    """
    if _compiling():
        action = _log_action(logger, method, args, kwargs)
        if action is not _NO:
            _QUEUE.append(action)
            _mark()
            return None
        return _call_logger(logger, method, _now(args), kwargs)
    if _QUEUE:
        _drain()
    return _call_logger(logger, method, args, kwargs)


def _log_action(logger, method, args, kwargs):
    snapped = _snap_args(args)
    snapped_kwargs = _snap(kwargs)
    if snapped is _NO or snapped_kwargs is _NO:
        return _NO
    return (_K_LOG, logger, method, snapped, snapped_kwargs, _call_site())


def _warn(message, category=None, stacklevel=1, source=None):
    """``warnings.warn(message, category, stacklevel, source)``, deferred when compiled."""
    if _compiling():
        action = _warn_action(message, category, stacklevel, source)
        if action is not _NO:
            _QUEUE.append(action)
            _mark()
            return None
        return _call_warn(_now((message,))[0], category, stacklevel, source)
    if _QUEUE:
        _drain()
    return _call_warn(message, category, stacklevel, source)


def _warn_action(message, category, stacklevel, source):
    snapped = _snap(message)
    if snapped is _NO:
        return _NO
    return (_K_WARN, snapped, category, stacklevel, source, _call_site())


# ---------------------------------------------------------------------------
# public API: values read from tensors, formatted after the graph


def _item(t, convert=None):
    """``t.item()`` (``convert`` None) or ``convert(t)`` (``int``, ``float``,
    ``bool``, ``complex``) of a tensor that is only formatted: an argument of
    ``print``/``log``/``warn``/``fmt``.

    Eagerly: exactly that value.  While tracing, a one-element tensor is
    snapshotted (a detached clone, in the graph) and converted when the
    action is emitted, to the same Python number; anything else is converted
    at once, as the original did (Dynamo breaks there as before).
    """
    if _compiling():
        torch = _sys.modules["torch"]
        if isinstance(t, torch.Tensor) and t.numel() == 1 and not t.is_sparse:
            # torch warns when some conversions see requires_grad=True
            # (float(t)); the conversion after the graph replays that warning
            # at this call's site.
            site = _call_site() if t.requires_grad else None
            return (_S_ITEM, t.detach().clone(), convert, site)
    if convert is None:
        return t.item()
    return convert(t)


def _fmt(template, *values):
    """``template.format(*values)`` (an f-string or a ``str.format`` call
    with positional fields).

    Eagerly: exactly that string.  While tracing, the values are snapshotted
    and the string is built when the action is emitted: the same text, as the
    values were at the call.  A value that cannot be snapshotted exactly
    (an object whose ``__format__`` may read state that changes later) makes
    the string be built at once, as the original did.
    """
    if _compiling():
        snapped = _snapped_format(template, values, False)
        if snapped is not _NO:
            return snapped
        return template.format(*_now(values))
    return template.format(*values)


def _fmt_percent(template, values):
    """``template % values`` (printf-style ``%`` formatting), as ``fmt``:
    eagerly exactly that string; while tracing the values (one value or a
    tuple) are snapshotted and the string is built when the action is
    emitted, or at once when a value cannot be snapshotted."""
    if _compiling():
        snapped = _snapped_format(template, values, True)
        if snapped is not _NO:
            return snapped
        return template % _now((values,))[0]
    return template % values


def _snapped_format(template, values, percent):
    """``template.format(*values)`` (``template % values`` when ``percent``)
    with the values snapshotted, to be built after the graph (_restore), or
    _NO when a value cannot be kept exactly."""
    snapped = _snap(values) if percent else _snap_args(values)
    if snapped is _NO:
        return _NO
    return (_S_PERCENT if percent else _S_FMT, template, snapped)


def _now(values):
    """Values as the original had them at the call (item()/fmt() snapshots
    of this call converted now, while tracing: the original's own path)."""
    out = []
    for v in values:
        if _is_lazy(v):
            v = v[1] % _now((v[2],))[0] if v[3] else v[1].format(*_now(v[2]))
        elif type(v) is tuple and v and v[0] is _S_ITEM:
            v = v[1].item() if v[2] is None else v[2](v[1])
        elif type(v) is tuple and v and v[0] is _S_FMT:
            v = v[1].format(*_now(v[2]))
        elif type(v) is tuple and v and v[0] is _S_PERCENT:
            v = v[1] % _now((v[2],))[0]
        elif type(v) is tuple:
            v = _now(v)
        out.append(v)
    return tuple(out)


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
        queued = action()
        if queued is not _NO:
            _QUEUE.append((_K_WHEN, cond.detach().clone(), queued))
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
                     lambda: _print_action(args, kwargs))
    if _QUEUE:
        _drain()
    if cond:
        return _builtins.print(*_now(args), **kwargs)
    return None


def _log_if(cond, logger, method, *args, **kwargs):
    """``if cond: logger.<method>(*args, **kwargs)``, decided after the graph
    when compiled."""
    if _compiling():
        return _when(cond, lambda: _log(logger, method, *args, **kwargs),
                     lambda: _log_action(logger, method, args, kwargs))
    if _QUEUE:
        _drain()
    if cond:
        return _call_logger(logger, method, _now(args), kwargs)
    return None


def _warn_if(cond, message, category=None, stacklevel=1, source=None):
    """``if cond: warnings.warn(message, category, stacklevel, source)``,
    decided after the graph when compiled."""
    if _compiling():
        return _when(cond, lambda: _warn(message, category, stacklevel, source),
                     lambda: _warn_action(message, category, stacklevel, source))
    if _QUEUE:
        _drain()
    if cond:
        return _call_warn(_now((message,))[0], category, stacklevel, source)
    return None


# ---------------------------------------------------------------------------
# public API: traps


def _message(template, *values):
    """An exception argument of a trap, ``template.format(*values)`` (an
    f-string or a ``str.format`` call), built only if the trap raises: the
    values are taken at the call, the string is formatted when raising."""
    return (_S_LAZY, template, values, False)


def _message_percent(template, values):
    """``template % values``, as ``message``."""
    return (_S_LAZY, template, values, True)


def _is_lazy(a):
    return type(a) is tuple and len(a) == 4 and a[0] is _S_LAZY


def _args_now(args):
    """Exception arguments with every ``message`` formatted now."""
    return tuple((a[1] % a[2] if a[3] else a[1].format(*a[2])) if _is_lazy(a) else a for a in args)


def _args_snapped(args):
    """Exception arguments with every ``message``'s values snapshotted (the
    string is built after the graph, from the values as they were here), or
    _NO when a value cannot be kept exactly."""
    out = []
    for a in args:
        if _is_lazy(a):
            a = _snapped_format(a[1], a[2], a[3])
            if a is _NO:
                return _NO
        out.append(a)
    return tuple(out)


def _trap_if(fail, exc_type, *exc_args):
    """``if fail: raise exc_type(*exc_args)``; checked after the graph when compiled.

    ``fail`` is a ``bool`` or a tensor whose truth value Python would take
    (``bool(fail)``; one element).  An argument made by ``message`` is
    formatted only when raising.
    """
    if _compiling():
        if fail is False:
            return
        if fail is True:
            # Decided at trace time (e.g. shapes differ): raise right here, as
            # the original did.  Dynamo breaks the graph at this raise; what was
            # deferred before it is flushed first.
            raise exc_type(*_args_now(exc_args))
        if any(_is_lazy(a) for a in exc_args):
            snapped = _args_snapped(exc_args)
            if snapped is _NO:
                # A value whose text may change before the graph ends: decide
                # here, as the original did (Dynamo breaks the graph on it).
                if fail:
                    raise exc_type(*_args_now(exc_args))
                return
            exc_args = snapped
        torch = _sys.modules["torch"]
        if isinstance(fail, torch.Tensor):
            fail = fail.detach().clone()
        _QUEUE.append((_K_TRAP, fail, exc_type, exc_args))
        _mark()
        return
    if _QUEUE:
        _drain()
    if fail:
        raise exc_type(*_args_now(exc_args))
    return


def _trap_unless(ok, exc_type, *exc_args):
    """``if not ok: raise exc_type(*exc_args)`` (the form of ``assert ok, msg``)."""
    if _compiling():
        if ok is True:
            return None
        if ok is False:
            raise exc_type(*_args_now(exc_args))
        torch = _sys.modules["torch"]
        if isinstance(ok, torch.Tensor):
            return _trap_if(torch.logical_not(ok), exc_type, *exc_args)
        return _trap_if(not ok, exc_type, *exc_args)
    if _QUEUE:
        _drain()
    if not ok:
        raise exc_type(*_args_now(exc_args))
    return None


def _check_failure(error_type, message):
    """What ``torch._check_tensor_all_with(error_type, <false>, message)`` raises:
    torch's own type and text (its default message or ``message()``; the
    ``TypeError`` / ``AssertionError`` torch raises for a bad ``message`` or
    ``error_type``), built only once the check has failed."""
    torch = _sys.modules["torch"]
    try:
        torch._check_tensor_all_with(error_type, torch.tensor(False), message)
    except BaseException as e:  # noqa: BLE001 - torch's exception, returned to be raised
        return e
    return RuntimeError("graphmend.runtime: torch's check did not fail")  # pragma: no cover


def _check_tensor_all_with(error_type, cond, message=None):
    """``torch._check_tensor_all_with(error_type, cond, message)``; checked after
    the graph when compiled.

    Eagerly: exactly torch's call.  While tracing, the static part of torch's
    check runs at once (``cond`` a tensor of dtype bool, else torch's own
    ``TypeError``) and ``cond.all()`` stays in the graph as a 0-d output; right
    after the graph the runtime raises what torch raises when it is false.
    ``message`` is called only then, as torch calls it.
    """
    torch = _sys.modules["torch"]
    if not _compiling():
        if _QUEUE:
            _drain()
        return torch._check_tensor_all_with(error_type, cond, message)
    if not torch.is_tensor(cond) or cond.dtype != torch.bool:
        return torch._check_tensor_all_with(error_type, cond, message)  # torch's TypeError, at trace time
    return _trap_if(torch.logical_not(cond.all()), _check_failure, error_type, message)


def _check_tensor_all(cond, message=None):
    """``torch._check_tensor_all(cond, message)``: ``check_tensor_all_with`` with
    ``RuntimeError``, torch's own error type."""
    return _check_tensor_all_with(RuntimeError, cond, message)


_COMPARISONS = {
    "<": _operator.lt,
    "<=": _operator.le,
    ">": _operator.gt,
    ">=": _operator.ge,
    "==": _operator.eq,
    "!=": _operator.ne,
}

_INT64 = (-(2**63), 2**63 - 1)
_EXACT_IN_DOUBLE = 2**53  # every int of at most this magnitude is a double


def _exact_scalar(torch, t, other):
    """A tensor standing for ``t.item()`` whose comparison with ``other`` gives
    the bit Python's comparison of the scalar would, or None.

    Floating ``t`` is compared in float64 (every float16/bfloat16/float32/
    float64 value is a double, and so is ``other`` when it is a float, a bool
    or an int of magnitude at most 2**53); bool and integer ``t`` in int64
    against a bool or an int in int64's range, or in float64 against a float
    when ``t``'s dtype has at most 32 bits.  A SymInt ``other`` (a size under
    dynamic shapes) counts as an int of that range: no tensor has 2**53
    elements.
    """
    if not isinstance(t, torch.Tensor) or t.numel() != 1 or t.dtype.is_complex:
        return None
    sym = isinstance(other, torch.SymInt)
    is_int = sym or (type(other) is int)
    in_range = lambda lo, hi: sym or lo <= other <= hi  # noqa: E731
    if t.dtype.is_floating_point:
        if type(other) in (float, bool) or (is_int and in_range(-_EXACT_IN_DOUBLE, _EXACT_IN_DOUBLE)):
            return t.double()
        return None
    if t.dtype not in (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
        return None  # uint16/32/64 and the rest: not proven
    if type(other) is bool or (is_int and in_range(*_INT64)):
        return t.long()
    if type(other) is float and t.element_size() <= 4:
        return t.double()
    return None


def _compare_item(left, op, right, item=0):
    """``left.item() OP right`` (``item=0``) or ``left OP right.item()`` (``item=1``).

    Eagerly: exactly that.  While tracing, when the comparison can be made on
    the tensor with the same result (see ``_exact_scalar``), a one-element
    bool tensor, which ``trap_if``/``trap_unless`` take; otherwise the
    original ``.item()`` (the original graph break).
    """
    fn = _COMPARISONS[op]
    if _compiling():
        torch = _sys.modules["torch"]
        t, other = (left, right) if item == 0 else (right, left)
        exact = _exact_scalar(torch, t, other)
        if exact is not None:
            return fn(exact, other) if item == 0 else fn(other, exact)
    return fn(left.item(), right) if item == 0 else fn(left, right.item())


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
# public API: masked reductions

# What an element outside the mask becomes, per reduction: it must leave the
# reduction's result unchanged ("low"/"high": the dtype's lowest/highest value).
_REDUCE_FILL = {
    "sum": 0,
    "nansum": 0,
    "mean": 0,
    "count_nonzero": 0,
    "any": 0,
    "prod": 1,
    "all": 1,
    "amax": "low",
    "max": "low",
    "amin": "high",
    "min": "high",
}
# Reductions that raise on an empty selection.
_REDUCE_NONEMPTY = frozenset(["amax", "max", "amin", "min"])
# Exact for every real dtype: they only ask which elements are nonzero.
_REDUCE_LOGICAL = frozenset(["any", "all", "count_nonzero"])
# Differentiable reductions whose gradient, through the masked form, is the
# original's (1 or 1/n at the selected elements, 0 elsewhere).
_REDUCE_GRAD = frozenset(["sum", "nansum", "mean"])


def _integer_dtypes(torch):
    return (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def _reduce_fill(torch, x, op):
    fill = _REDUCE_FILL[op]
    if fill not in ("low", "high"):
        return bool(fill) if x.dtype == torch.bool else fill
    high = fill == "high"
    if x.dtype == torch.bool:
        return high
    if x.dtype.is_floating_point:
        return float("inf") if high else -float("inf")
    info = torch.iinfo(x.dtype)
    return info.max if high else info.min


def _reduce_failure(op, shape, dtype, device):
    """What ``x[mask].<op>()`` raises when the mask selects nothing: torch's
    own exception, from the same reduction of an empty tensor of that shape."""
    torch = _sys.modules["torch"]
    try:
        getattr(torch.empty(shape, dtype=dtype, device=device), op)()
    except BaseException as e:  # noqa: BLE001 - torch's exception, returned to be raised
        return e
    return RuntimeError(f"graphmend.runtime: {op}() of an empty selection did not fail")  # pragma: no cover


def _leading_mask(torch, x, mask):
    """``mask`` padded with trailing size-1 dimensions to ``x``'s rank, when
    ``x[mask]`` selects along ``x``'s leading dimensions with it: ``x`` exactly
    a ``torch.Tensor`` or ``nn.Parameter`` (a subclass may index differently),
    ``mask`` exactly a bool ``torch.Tensor`` of ``x``'s leading shape (else
    ``x[mask]`` raises, and the original keeps its error) on ``x``'s device.
    Otherwise None.  Everything here is static at trace time."""
    tensor = torch.Tensor
    if (
        type(x) in (tensor, torch.nn.Parameter)
        and type(mask) is tensor
        and mask.dtype == torch.bool
        and 1 <= mask.ndim <= x.ndim
        and tuple(x.shape[: mask.ndim]) == tuple(mask.shape)
        and mask.device == x.device
    ):
        return mask.reshape(tuple(mask.shape) + (1,) * (x.ndim - mask.ndim))
    return None


def _masked_full(torch, x, mask, op, exact):
    """``x[mask].<op>()`` as a reduction over all of ``x``, or None when that is
    not provably the same (or, with ``exact=False``, the same up to rounding)."""
    keep = _leading_mask(torch, x, mask)
    if keep is None:
        return None
    integer = x.dtype in _integer_dtypes(torch)
    if not integer and x.dtype not in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        return None
    if not (op in _REDUCE_LOGICAL or (integer and op != "mean") or (not integer and not exact)):
        return None
    if torch.is_grad_enabled() and x.requires_grad and op not in _REDUCE_GRAD | _REDUCE_LOGICAL:
        return None
    inner = 1
    for size in x.shape[mask.ndim:]:
        inner *= size
    if op in _REDUCE_NONEMPTY and (inner == 0 or mask.numel() == 0):
        return None  # the selection is always empty: the original raises now
    full = x.masked_fill(keep.logical_not(), _reduce_fill(torch, x, op))
    if op == "mean":
        return full.sum() / (mask.sum() * inner)
    if op in _REDUCE_NONEMPTY:
        _trap_if(mask.logical_not().all(), _reduce_failure, op,
                 (0,) + tuple(x.shape[mask.ndim:]), x.dtype, x.device)
    return getattr(full, op)()


def _masked_reduce(x, mask, op, exact=True):
    """``x[mask].<op>()``; one fixed-shape reduction when compiled.

    Eagerly: exactly that.  While tracing, ``x.masked_fill(~mask, fill).<op>()``
    when it provably gives the same tensor (see docs/runtime.md, [Masked]):
    boolean ``mask`` of ``x``'s leading shape, on its device; ``any``, ``all``
    and ``count_nonzero`` of any real dtype, the other reductions of bool and
    integer dtypes; with ``exact=False`` also floating ``sum``, ``nansum``,
    ``prod``, ``mean``, ``amax``/``amin``/``max``/``min``, whose summation
    order (or, for max and min, the sign of a zero result) may differ.  An
    empty selection of ``amax``/``amin``/``max``/``min`` raises torch's error
    after the graph.  Otherwise the original (its graph break).
    """
    if _compiling():
        torch = _sys.modules["torch"]
        full = _masked_full(torch, x, mask, op, exact)
        if full is not None:
            return full
    return getattr(x[mask], op)()


def _masked_copy(y, mask, x):
    """``y[mask] = x[mask]``; one ``torch.where`` copied into ``y`` when compiled.

    Eagerly: exactly that statement.  While tracing, ``y.copy_(torch.where(
    mask, x, y))`` (the mask padded to ``y``'s rank) when it provably writes
    the same values into the same memory: plain tensors, a bool mask of
    ``y``'s leading shape, ``x`` of ``y``'s shape and dtype, all on one device,
    ``y`` contiguous (no element written twice), and no autograd involved.
    Otherwise the original statement (its graph break).
    """
    if _compiling():
        torch = _sys.modules["torch"]
        keep = _leading_mask(torch, y, mask)
        if (
            keep is not None
            and type(x) in (torch.Tensor, torch.nn.Parameter)
            and x.shape == y.shape
            and x.dtype == y.dtype
            and x.device == y.device
            and y.is_contiguous()
            and not (torch.is_grad_enabled() and (x.requires_grad or y.requires_grad))
        ):
            y.copy_(torch.where(keep, x, y))
            return
    y[mask] = x[mask]


# The in-place operators ``masked_update`` applies (exact elementwise: one
# correctly rounded IEEE operation per element, or integer arithmetic).
_INPLACE = {
    "+": _operator.iadd,
    "-": _operator.isub,
    "*": _operator.imul,
    "/": _operator.itruediv,
}


def _kind(torch, dtype) -> int:
    """Type-promotion category: 0 bool, 1 integer, 2 floating, 3 complex."""
    if dtype == torch.bool:
        return 0
    if dtype.is_complex:
        return 3
    return 2 if dtype.is_floating_point else 1


def _updates_in_place(torch, x, op, value) -> bool:
    """Whether ``x <op>= value`` computes in ``x``'s own dtype without an error
    (torch's promotion, decided at trace time: a scalar of a category no
    higher than ``x``'s keeps ``x``'s dtype; an int scalar must fit it)."""
    if x.dtype == torch.bool or x.dtype.is_complex:
        return False  # bool arithmetic raises for `-`; not needed
    if op == "/" and not x.dtype.is_floating_point:
        return False  # true division of integers is floating
    t = type(value)
    if t is bool:
        return True
    if t is int:
        if x.dtype.is_floating_point:
            return True
        info = torch.iinfo(x.dtype)
        return info.min <= value <= info.max
    if t is float:
        return x.dtype.is_floating_point
    if t is torch.Tensor:
        return (value.ndim == 0 and value.device == x.device
                and _kind(torch, value.dtype) <= _kind(torch, x.dtype)
                and not (torch.is_grad_enabled() and value.requires_grad))
    return False


def _masked_update(x, mask, op, value):
    """``x[mask] <op>= value``; one ``torch.where`` copied into ``x`` when compiled.

    Eagerly: exactly the augmented assignment (``t = x[mask]``, ``t <op>= value``,
    ``x[mask] = t``).  While tracing, ``x.copy_(torch.where(mask, t, x))`` with
    ``t = x.clone(); t <op>= value`` when that provably writes the same values:
    the conditions of ``masked_copy`` for ``x`` and ``mask``, ``value`` a Python
    ``int``/``float``/``bool`` or a 0-d tensor on ``x``'s device, and a result
    type that can be cast back to ``x``'s dtype (else the original raises, and
    runs).  Otherwise the original statement (its graph break).
    """
    fn = _INPLACE[op]
    if _compiling():
        torch = _sys.modules["torch"]
        keep = _leading_mask(torch, x, mask)
        if (
            keep is not None
            and _updates_in_place(torch, x, op, value)
            and x.is_contiguous()
            and not (torch.is_grad_enabled() and x.requires_grad)
        ):
            x.copy_(torch.where(keep, fn(x.clone(), value), x))
            return
    selected = x[mask]
    selected = fn(selected, value)
    x[mask] = selected


def _fill_lengths(out, lengths, value, tail=False):
    """``for i, n in enumerate(lengths.tolist()): out[i, :n] = value``
    (``out[i, n:]`` when ``tail``): a padding mask or padded tensor built from
    per-row lengths; one ``masked_fill_`` when compiled.

    Eagerly: exactly that loop.  While tracing, when ``lengths`` is a 1-D
    integer or bool tensor with no more rows than ``out``, ``out`` a tensor
    of at least two dimensions that does not require grad and ``value`` a
    Python ``bool``/``int``/``float``: ``out[:len(lengths)].masked_fill_(mask,
    value)`` with ``mask[i, j]`` the columns the slice selects (``j <
    stop_i``, ``stop_i = n_i + T`` for a negative ``n_i``, clamped as slicing
    clamps), the same elements written with the same value cast.  Otherwise
    the loop (its graph break).
    """
    if _compiling():
        torch = _sys.modules["torch"]
        if (
            isinstance(out, torch.Tensor)
            and isinstance(lengths, torch.Tensor)
            and type(value) in (bool, int, float)
            and lengths.dim() == 1
            and out.dim() >= 2
            and lengths.shape[0] <= out.shape[0]
            and (lengths.dtype == torch.bool or not (lengths.is_floating_point() or lengths.is_complex()))
            and not out.requires_grad
        ):
            width = out.shape[1]
            n = lengths.to(device=out.device, dtype=torch.int64)
            stop = torch.where(n < 0, n + width, n)[:, None]
            cols = torch.arange(width, device=out.device)
            mask = cols >= stop if tail else cols < stop
            mask = mask.view(mask.shape + (1,) * (out.dim() - 2))
            out[: lengths.shape[0]].masked_fill_(mask, value)
            return
    for i, n in enumerate(lengths.tolist()):
        if tail:
            out[i, n:] = value
        else:
            out[i, :n] = value


# ---------------------------------------------------------------------------
# public API: stores


def _store_changes_nothing(torch, obj, name, value) -> bool:
    """Whether ``setattr(obj, name, value)`` leaves ``obj`` exactly as it is:
    ``value`` is the object already stored, and the store runs no code but
    ``nn.Module``'s own (a registered buffer or parameter is re-registered as
    itself, with its persistence unchanged) or ``object``'s."""
    if value is not getattr(obj, name):
        return False
    cls = type(obj)
    module = torch.nn.Module
    if isinstance(obj, module):
        _m = _sys.modules["torch.nn.modules.module"]
        return (
            cls.__setattr__ is module.__setattr__
            and cls.register_buffer is module.register_buffer
            and cls.register_parameter is module.register_parameter
            and not _m._global_buffer_registration_hooks
            and not _m._global_parameter_registration_hooks
        )
    return cls.__setattr__ is object.__setattr__


def _assign_to(obj, name, *args, **kwargs):
    """``obj.<name> = obj.<name>.to(*args, **kwargs)``; no store while compiling
    when ``.to()`` returned the tensor already stored.

    Eagerly: exactly that statement.  While tracing the same ``.to()``, then
    the store unless it provably changes nothing (``_store_changes_nothing``;
    Dynamo knows at trace time whether ``.to()`` returned its input): a
    buffer's store goes through ``register_buffer``, which Dynamo cannot trace.
    """
    value = getattr(obj, name).to(*args, **kwargs)
    if _compiling() and _store_changes_nothing(_sys.modules["torch"], obj, name, value):
        return
    setattr(obj, name, value)


# ---------------------------------------------------------------------------
# public API: loops


def _hook_free(module) -> bool:
    """No forward hook on ``module`` or any module under it, and no global one:
    calling a submodule then runs its ``forward`` and nothing else."""
    _m = _sys.modules["torch.nn.modules.module"]
    if _m._global_forward_hooks or _m._global_forward_pre_hooks:
        return False
    return all(not m._forward_hooks and not m._forward_pre_hooks for m in module.modules())


# Activations that compute element by element and do nothing else: called on
# zero rows they return zero rows.  Exact classes (a subclass may override
# forward), matched by module and name so that transformers need not be
# imported; XIELUActivation is left out (it may log from forward).
_ELEMENTWISE_TORCH = frozenset({
    "CELU", "ELU", "GELU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh",
    "Identity", "LeakyReLU", "LogSigmoid", "Mish", "PReLU", "ReLU", "ReLU6", "SELU",
    "SiLU", "Sigmoid", "Softplus", "Softshrink", "Softsign", "Tanh", "Tanhshrink", "Threshold",
})
_ELEMENTWISE_TRANSFORMERS = frozenset({
    "AccurateGELUActivation", "ClippedGELUActivation", "FastGELUActivation", "GELUActivation",
    "GELUTanh", "LaplaceActivation", "LinearActivation", "MishActivation",
    "NewGELUActivation", "QuickGELUActivation", "ReLUSquaredActivation", "SiLUActivation",
    "SqrtSoftplusActivation",
})


def _elementwise(fn) -> bool:
    """``fn`` is one of the activations above, with no forward hook."""
    cls = type(fn)
    where = cls.__module__
    if where.startswith("torch.nn.modules."):
        known = cls.__name__ in _ELEMENTWISE_TORCH
    elif where == "transformers.activations":
        known = cls.__name__ in _ELEMENTWISE_TRANSFORMERS
    else:
        return False
    return known and not fn._forward_hooks and not fn._forward_pre_hooks


# Layers that compute row by row with no effect: an expert calling only them
# does nothing on zero rows.  Dropout only when it is the identity (eval, or
# p == 0): in training a draw on zero rows could still move a generator.
_ROWWISE_TORCH = frozenset({"Linear", "LayerNorm", "RMSNorm"})


def _identity_dropout(m) -> bool:
    """``m`` is exactly torch.nn's ``Dropout``, without hooks, and the
    identity: in eval, or with ``p == 0``."""
    cls = type(m)
    return (cls.__module__.startswith("torch.nn.modules.") and cls.__name__ == "Dropout"
            and (not m.training or m.p == 0) and not m._forward_hooks and not m._forward_pre_hooks)


def _known_layer(m) -> bool:
    cls = type(m)
    if cls.__module__.startswith("torch.nn.modules.") and cls.__name__ in _ROWWISE_TORCH:
        return True
    return _identity_dropout(m) or _elementwise(m)


def _entry_keys(container, count, key=None) -> list | None:
    """The keys of ``container``'s entries for the indices ``0 <= i < count``:
    ``i`` itself, or ``key.format(i)`` for a container of named entries
    (``self[f"expert_{i}"]``: an ``nn.ModuleDict``, or a ``dict``, whose
    ``in`` is a plain key lookup); None when one of them is missing."""
    if key is None:
        return list(range(count)) if _has_entries(container, count) else None
    torch = _sys.modules["torch"]
    if not isinstance(container, (torch.nn.ModuleDict, dict)):
        return None
    keys = [key.format(i) for i in range(count)]
    return keys if all(k in container for k in keys) else None


def _experts_of(container, cls, layers, count, key=None) -> bool:
    """``container[i]`` (``container[key.format(i)]``) is exactly a ``cls``
    (whose forward GM409 proved pure but for calling its attributes
    ``layers``) for every ``0 <= i < count``, and each of those attributes is
    a layer the runtime knows."""
    keys = _entry_keys(container, count, key)
    if keys is None:
        return False
    for k in keys:
        expert = container[k]
        if type(expert) is not cls:
            return False
        for name in layers:
            if not _known_layer(getattr(expert, name, None)):
                return False
    return True


def _has_entries(container, count) -> bool:
    """``container[i]`` exists for every ``0 <= i < count``."""
    torch = _sys.modules["torch"]
    if isinstance(container, torch.Tensor):
        return (container.dim() >= 1 and type(container.shape[0]) is int
                and container.shape[0] >= count)
    nn = torch.nn
    if isinstance(container, (nn.ModuleList, nn.ParameterList, nn.Sequential, list, tuple)):
        return len(container) >= count
    return False


def _nonzero_rows(rows, length, module=None, item=False, row=False, entries=(), guarded=(),
                  elementwise=(), experts=(), keys=()):
    """The indices where a 1-d ``hit`` of ``length`` elements is true, in
    ascending order, as the original loop had them: for ``rows =
    hit.nonzero()`` what ``for row in rows: i = row[0]`` visits (``i =
    row.item()`` with ``item``; the one-element rows themselves with
    ``row``); for ``rows = hit.nonzero(as_tuple=True)[0]`` the list
    ``rows.tolist()``.

    While TorchDynamo traces with ``capture_dynamic_output_shape_ops`` on (so
    ``rows`` was traced, with a number of rows Dynamo does not know) and,
    given ``module`` (the loop calls its submodules), no forward hook is
    installed: every index as a Python int, ``range(length)``.  GM409 proves
    statically that the loop body does nothing for an index ``hit`` leaves
    out, and that it uses the index only where a Python int and a 0-d
    integer tensor behave alike; the loop then has the same effects in a
    number of steps Dynamo knows; with ``row``, each index as ``[i]``, which
    indexes a tensor as the one-element row does (``mask[[i]]`` keeps the
    leading dimension of size 1) and gives the int as ``[i][0]``.  Only when,
    too, every container in ``entries`` has an entry for each index, each
    ``(container, bound)`` of ``guarded`` one for each index below ``bound``
    (the body indexes it only under ``i < bound``), and each of
    ``elementwise`` (submodules the body calls on the selected rows, so on
    zero rows for an index ``hit`` leaves out) is an elementwise activation
    or a ``Dropout`` that is the identity, without hooks; for each
    ``(container, cls, layers)`` of ``experts`` (the body calls
    ``container[i]``), every entry is exactly a ``cls``, whose
    forward GM409 proved pure but for calling its attributes ``layers``, and
    each of those is a layer known to compute row by row with no effect
    (``_known_layer``); a 4-tuple ``(container, cls, layers, key)`` names its
    entries ``key.format(i)``, and each ``(container, key)`` of ``keys`` has
    an entry ``key.format(i)`` for every index (``self[f"expert_{i}"]``: the
    f-string formats the index's 0-d tensor as it formats the int).
    Otherwise (and always eagerly) exactly the original values.
    """
    torch = _sys.modules["torch"]
    one_column = rows.dim() == 2 and rows.shape[1] == 1
    if (
        _compiling()
        and torch._dynamo.config.capture_dynamic_output_shape_ops
        and type(rows) is torch.Tensor
        and (one_column or rows.dim() == 1)
        and type(length) is int
        and (module is None or _hook_free(module))
        and all(_has_entries(c, length) for c in entries)
        and all(type(b) is int and _has_entries(c, min(length, b)) for c, b in guarded)
        and all(_elementwise(f) or _identity_dropout(f) for f in elementwise)
        and all(_experts_of(c, cls, layers, length, *key) for c, cls, layers, *key in experts)
        and all(_entry_keys(c, length, k) is not None for c, k in keys)
    ):
        return [[i] for i in range(length)] if row else range(length)
    if row:
        return rows
    if rows.dim() == 1:
        return rows.tolist()
    if _compiling() and torch._dynamo.config.capture_dynamic_output_shape_ops and not item:
        # A check failed with the switch on: the loop Dynamo meets is the
        # original's, over a tensor's rows (a map object it cannot iterate).
        return rows[:, 0]
    # map: no Python frame of ours runs per row, so eagerly and in a frame
    # Dynamo skips nothing of this module is compiled (as for the original).
    return map(torch.Tensor.item if item else _operator.itemgetter(0), rows)


def _hit_row(mask, index, rows):
    """``mask[index]``, for an ``index`` of the loop ``nonzero_rows(rows, ...)``
    runs.

    Eagerly, and for an index that is a row of ``rows`` (a tensor), exactly
    ``mask[index]``.  While compiling, for an index of the unrolled loop (an
    int ``i``, or ``[i]``), that row where ``rows`` lists ``i`` and a row of
    zeros of the same shape and dtype where it does not: one
    ``torch.where`` on whether ``i`` is among ``rows``, so the loop's step
    for an index the original skipped selects nothing, whatever the sign of
    the mask (GM409 proves that a step selecting nothing does nothing)."""
    selected = mask[index]
    i = index[0] if type(index) is list and len(index) == 1 else index
    if _compiling() and type(i) is int:
        torch = _sys.modules["torch"]
        listed = rows[:, 0] if rows.dim() == 2 else rows
        return torch.where((listed == i).any(), selected, torch.zeros_like(selected))
    return selected


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


_NAMED_GRAD_FNS: dict = {}


def _with_grad_fn(t, name):
    """``t`` (a detached snapshot) with a grad_fn whose type is named ``name``
    (the original tensor's), so that torch's own repr prints it as the
    original: ``tensor(..., grad_fn=<AddmmBackward0>)``.  The node is not
    connected to any graph; its backward passes the gradient through."""
    import torch
    from torch.autograd.function import BackwardCFunction

    fn = _NAMED_GRAD_FNS.get(name)
    if fn is None:

        class _Named(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.view_as(x)

            @staticmethod
            def backward(ctx, grad):
                return grad

        # Function.apply instantiates ``_backward_cls`` as the output's grad_fn.
        _Named._backward_cls = type(name, (BackwardCFunction,), {"_forward_cls": _Named})
        fn = _NAMED_GRAD_FNS[name] = _Named
    with torch.enable_grad():
        return fn.apply(t.requires_grad_())


def _restore(value):
    """The value a queued action formats: snapshots turned back into what the
    original call received (tensors that print as the original did, the
    numbers ``.item()`` gave, the strings ``format`` built)."""
    kind = type(value)
    if kind is tuple and value:
        head = value[0]
        if head is _S_TENSOR:
            _, t, name, requires_grad, param = value
            if name is not None:
                return _with_grad_fn(t, name)
            if param:
                import torch

                return torch.nn.Parameter(t, requires_grad=requires_grad)
            if requires_grad:
                return t.requires_grad_()
            return t
        if head is _S_ITEM:
            return _convert(*value[1:])
        if head is _S_FMT:
            return value[1].format(*_restore(value[2]))
        if head is _S_PERCENT:
            return value[1] % _restore(value[2])
        return tuple(_restore(v) for v in value)
    if kind is list:
        return [_restore(v) for v in value]
    if kind is dict:
        return {k: _restore(v) for k, v in value.items()}
    return value


_AT_SITE_CODE: dict = {}


def _convert(t, convert, site):
    """``t.item()`` / ``convert(t)`` of a snapshot.  ``site`` is set when the
    original tensor required grad: torch then warns about some conversions
    (``float(t)``: "Converting a tensor with requires_grad=True to a scalar",
    once per process), attributing the warning to the converting frame.  The
    conversion runs on a tensor that requires grad, in a frame with the
    original call's filename, line and module globals, so that warning (its
    text, location, registry and filters) is the original's.  No filter is
    touched (that would reset every module's once-per-location registry)."""
    if site is None:
        return t.item() if convert is None else convert(t)
    filename, lineno, _, module_globals = _SITES[site][0]
    key = (filename, lineno, convert is None)
    code = _AT_SITE_CODE.get(key)
    if code is None:
        expr = "_t.item()" if convert is None else "_c(_t)"
        code = _AT_SITE_CODE[key] = compile("\n" * (lineno - 1) + expr, filename, "eval")
    return eval(code, module_globals, {"_t": t.requires_grad_(), "_c": convert})  # noqa: S307


def _site_frame(site, stacklevel):
    """(filename, line, function, globals) of the frame ``stacklevel`` levels
    up from the recorded call site, or (None, levels above the compiled root)
    when that frame is outside the traced frames."""
    frames = _SITES[site]
    level = max(int(stacklevel), 1)
    if level <= len(frames):
        return frames[level - 1], 0
    return None, level - len(frames)


def _call_logger(logger, method, args, kwargs, site=None):
    import logging

    fn = getattr(logger, method)
    if method in _STDLIB_LOG_METHODS and isinstance(
        logger, (logging.Logger, logging.LoggerAdapter)
    ):
        if site is not None and _log_at(logger, method, args, kwargs, site):
            return None
        # logging's findCaller skips its own frames, then counts ``stacklevel``
        # others (3.11+ semantics); make our frames invisible.
        extra = _levels_to_user(_sys._getframe(0))
        kwargs = dict(kwargs)
        kwargs["stacklevel"] = kwargs.get("stacklevel", 1) + extra
    return fn(*args, **kwargs)


_METHOD_LEVELS = {
    "debug": "DEBUG",
    "info": "INFO",
    "warning": "WARNING",
    "error": "ERROR",
    "critical": "CRITICAL",
    "fatal": "CRITICAL",
}


def _log_at(logger, method, args, kwargs, site) -> bool:
    """Emit a deferred record of a plain ``logging.Logger`` as the original
    call did (``Logger._log``), with the call site recorded at trace time as
    its pathname, lineno and funcName.  False when the logger's class changes
    how records are made (then the caller uses ``stacklevel``)."""
    import logging

    cls = type(logger)
    if not isinstance(logger, logging.Logger) or cls.findCaller is not logging.Logger.findCaller:
        return False
    if cls._log is not logging.Logger._log or getattr(cls, method) is not getattr(
        logging.Logger, method
    ):
        return False
    if kwargs.get("exc_info") or kwargs.get("stack_info"):
        return False
    if method == "log":
        if not args:
            return False
        level, args = args[0], args[1:]
        if not isinstance(level, int):
            return False  # Logger.log raises (or not) by raiseExceptions
    elif method in _METHOD_LEVELS:
        level = getattr(logging, _METHOD_LEVELS[method])
    else:
        return False  # "warn": also issues a DeprecationWarning; keep the real call
    if not args:
        return False
    frame, above = _site_frame(site, kwargs.get("stacklevel", 1))
    if frame is None:
        return False
    if not logger.isEnabledFor(level):
        return True
    msg, margs = args[0], args[1:]
    record = logger.makeRecord(
        logger.name, level, frame[0], frame[1], msg, margs, None, frame[2],
        kwargs.get("extra"), None,
    )
    logger.handle(record)
    return True


def _call_warn(message, category, stacklevel, source, site=None):
    import warnings

    if site is not None:
        frame, above = _site_frame(site, stacklevel)
        if frame is not None:
            _warn_at(message, category, source, frame)
            return None
        stacklevel = above + 1
    # warn's stacklevel=1 is this frame; make all our frames invisible.
    extra = _levels_to_user(_sys._getframe(0))
    return warnings.warn(message, category, stacklevel + extra, source)


def _warn_at(message, category, source, frame):
    """``warnings.warn`` as issued from ``frame`` (filename, line, function,
    globals): the same category defaulting, registry (the module's
    ``__warningregistry__``), module name and filters."""
    import warnings

    if isinstance(message, Warning):
        category = message.__class__
    if category is None:
        category = UserWarning
    if not (isinstance(category, type) and issubclass(category, Warning)):
        raise TypeError(
            "category must be a Warning subclass, not '{:s}'".format(type(category).__name__)
        )
    filename, lineno, _, module_globals = frame
    registry = module_globals.setdefault("__warningregistry__", {})
    module = module_globals.get("__name__", "<string>")
    warnings.warn_explicit(
        message, category, filename, lineno, module, registry, module_globals, source
    )


def _emit(item):
    kind = item[0]
    if kind == _K_PRINT:
        _builtins.print(*_restore(item[1]), **item[2])
    elif kind == _K_LOG:
        _call_logger(item[1], item[2], _restore(item[3]), _restore(item[4]), item[5])
    elif kind == _K_WARN:
        _call_warn(_restore(item[1]), item[2], item[3], item[4], item[5])
    elif kind == _K_WHEN:
        if item[1]:
            _emit(item[2])
    elif kind == _K_TRAP:
        if item[1]:
            # Later actions are dropped: the original never reached them.
            raise item[2](*_restore(item[3]))
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
    "fmt": _fmt,
    "fmt_percent": _fmt_percent,
    "message": _message,
    "message_percent": _message_percent,
    "item": _item,
    "warn_if": _warn_if,
    "trap_if": _trap_if,
    "trap_unless": _trap_unless,
    "check_tensor_all": _check_tensor_all,
    "check_tensor_all_with": _check_tensor_all_with,
    "compare_item": _compare_item,
    "equal": _equal,
    "same_shape": _same_shape,
    "where": _where,
    "above": _above,
    "assign_to": _assign_to,
    "at_most": _at_most,
    "fill_lengths": _fill_lengths,
    "masked_copy": _masked_copy,
    "masked_reduce": _masked_reduce,
    "masked_update": _masked_update,
    "nonzero_rows": _nonzero_rows,
    "hit_row": _hit_row,
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
    global _armed, _drain_outside_dynamo, _comptime
    if _armed:
        return True
    dynamo = _sys.modules.get("torch._dynamo")
    if dynamo is None:
        return False
    try:
        from torch._dynamo.eval_frame import skip_code

        skip_code(_RuntimeModule.__setattr__.__code__)
        # A helper called from a frame Dynamo skipped (a break in a loop
        # there, say) runs eagerly, as the code it replaces did; compiled as
        # a frame of its own it would add a graph and, where it must refuse,
        # a break the original never had. Inlined into a traced frame, it is
        # traced as before (skip_code only marks the code as a frame to skip).
        for fn in _PUBLIC.values():
            skip_code(fn.__code__)
        from torch._dynamo.comptime import comptime

        _comptime = comptime
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
