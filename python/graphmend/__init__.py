"""graphmend: find and mend TorchDynamo graph breaks in Python source."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = [
    "__version__", "dump_ast", "explain", "check_source", "fix_source", "rules",
    "Diagnostic", "FixResult", "GraphmendSyntaxError", "install", "uninstall",
]


def __getattr__(name: str):
    # The lint API loads the C++ extension: import it on first use only, so
    # `import graphmend` (and graphmend.runtime in mended files) stays light.
    if name in ("check_source", "fix_source", "rules", "Diagnostic", "FixResult",
                "EncodingError"):
        from . import lint

        return getattr(lint, name)
    if name in ("install", "uninstall"):
        from . import hook

        return getattr(hook, name)
    if name == "GraphmendSyntaxError":
        from ._frontend import GraphmendSyntaxError

        return GraphmendSyntaxError
    raise AttributeError(f"module 'graphmend' has no attribute {name!r}")


def dump_ast(source: bytes | str, python_version: tuple[int, int] | None = None) -> str:
    """Return what ``ast.dump(ast.parse(source), include_attributes=True)``
    prints under CPython ``python_version`` (default: the running one).

    Raises ``SyntaxError`` for source that CPython rejects.
    """
    from ._frontend import dump_ast as _dump

    return _dump(source, python_version)


def explain(model_or_fn, *args, **kwargs):
    """Compile ``model_or_fn`` with TorchDynamo and report graphs and breaks."""
    from .judge import explain as _explain

    return _explain(model_or_fn, *args, **kwargs)
