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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
