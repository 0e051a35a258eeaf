"""The main job on a bundled example (see scripts/demo.sh)."""

from __future__ import annotations

import os
import subprocess
import sys

from graphmend import _frontend
from graphmend._interpreters import cpython_interpreters

ORACLE = ("import ast,sys;"
          "sys.stdout.write(ast.dump(ast.parse(open(sys.argv[1],'rb').read()),"
          "include_attributes=True))")


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


def _explain(path: str):
    from graphmend import explain
    from graphmend.explain_cli import load_factory, unpack_factory_result

    fn, args, kwargs = unpack_factory_result(load_factory(f"{path}:make_model")())
    return fn, args, explain(fn, *args, **kwargs)


def mend_example(path: str) -> None:
    """check -> fix -> Dynamo's count before and after -> same outputs."""
    import difflib
    import tempfile

    import graphmend

    source = open(path, encoding="utf-8").read()
    print(f"== graphmend check {path}")
    for d in graphmend.check_source(source, path=path):
        fix = "fix available" if d.fix is not None else f"no fix: {d.declined_reason}"
        print(f"   {path}:{d.line}:{d.col + 1}: {d.code} {d.message} [{fix}]")
    result = graphmend.fix_source(source, path=path)
    print(f"== graphmend fix --diff {path}")
    sys.stdout.writelines(difflib.unified_diff(
        source.splitlines(True), result.source.splitlines(True), f"a/{path}", f"b/{path}"))

    try:
        import torch
    except ImportError:
        print("torch is not installed: skipping Dynamo's count")
        return
    fn, args, before = _explain(path)
    with tempfile.TemporaryDirectory() as tmp:
        mended_path = os.path.join(tmp, os.path.basename(path))
        with open(mended_path, "w", encoding="utf-8") as handle:
            handle.write(result.source)
        mended_fn, _, after = _explain(mended_path)
        mended_fn.load_state_dict(fn.state_dict())
        inputs = [torch.randn(3, 16) for _ in range(3)]
        same = all(torch.allclose(fn(x), torch.compile(mended_fn)(x)) for x in inputs)
    print(f"== Dynamo on {path}:make_model")
    print(f"   before: {before.graphs} graphs, {before.break_events} break events, "
          f"{len(before.skipped_frames)} skipped frames")
    print(f"   after : {after.graphs} graphs, {after.break_events} break events, "
          f"{len(after.skipped_frames)} skipped frames")
    print(f"   outputs of the mended model (compiled) equal the original's (eager) "
          f"on 3 fresh inputs: {same}")
    if after.break_events:
        print("   remaining breaks (graphmend declined them; `graphmend check` says why):")
    print("\n".join("     " + line for line in after.format_text().splitlines()
                    if line.lstrip().startswith(("1.", "2.", "3.", "4.", "5.", "at "))))


if __name__ == "__main__":
    paths = sys.argv[1:]
    code = main(paths)
    if paths == ["examples/tiny_model.py"]:
        mend_example(paths[0])
    sys.exit(code)
