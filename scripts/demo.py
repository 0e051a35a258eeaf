"""The main job on a bundled example (see scripts/demo.sh)."""

from __future__ import annotations

import glob
import os
import subprocess
import sys

from graphmend import _frontend

ORACLE = ("import ast,sys;"
          "sys.stdout.write(ast.dump(ast.parse(open(sys.argv[1],'rb').read()),"
          "include_attributes=True))")


def cpython_interpreters():
    found = {}
    for path in sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3"))):
        version = tuple(int(p) for p in path.split("/")[-3].split(".")[:2])
        if (3, 8) <= version <= (3, 13):
            found[version] = path
    here = sys.version_info[:2]
    found.setdefault(here, sys.executable)
    return dict(sorted(found.items()))


def main(paths: list[str]) -> int:
    status = 0
    for path in paths:
        data = open(path, "rb").read()
        print(f"== {path}: {len(data)} bytes")
        for version, python in cpython_interpreters().items():
            label = f"{version[0]}.{version[1]}"
            ours = _frontend.dump_ast(data, version, filename=path)
            theirs = subprocess.run([python, "-c", ORACLE, path], capture_output=True,
                                    text=True, check=True).stdout
            same = ours == theirs
            status |= not same
            print(f"   CPython {label}: graphmend's AST {'identical' if same else 'DIFFERS'}"
                  f" ({ours.count('(')} nodes)")
    return status


def explain_example(path: str) -> None:
    """Let Dynamo itself count the example's graphs and breaks."""
    try:
        import torch  # noqa: F401
    except ImportError:
        print("torch is not installed: skipping the Dynamo count")
        return
    from graphmend.explain_cli import load_factory, unpack_factory_result
    from graphmend import explain

    fn, args, kwargs = unpack_factory_result(load_factory(f"{path}:make_model")())
    report = explain(fn, *args, **kwargs)
    print(f"== Dynamo on {path}:make_model (before any fix)")
    print(report.format_text())


if __name__ == "__main__":
    paths = sys.argv[1:]
    code = main(paths)
    if paths == ["examples/tiny_model.py"]:
        explain_example(paths[0])
    sys.exit(code)
