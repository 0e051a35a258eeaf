"""The CPython side of the differential harness; runs under the CPython
version being compared (3.8–3.13), so it must stay 3.8-compatible.

    python oracle_worker.py MODE LISTFILE OUTFILE

LISTFILE: one path per line. For each path writes a framed record to OUTFILE
(the same framing as gm_dump --batch):

    #GM <STATUS> <path-bytes> <text-bytes>\n<path>\n<text>\n

MODE
  hash       STATUS OK: text = sha256 of ast.dump(ast.parse(bytes),
             include_attributes=True) as UTF-8 (surrogatepass), then ' ',
             then its length.
  full       STATUS OK: text = the dump itself.
  serialize  STATUS OK: text = the tree in serialize_tree's token format
             (for gm_dump --replay).
  fake       like full, but pretending to be gm_dump: errors are reported
             as gm_dump --batch does (used by --fake-graphmend).

Other statuses: ERR (CPython rejects the file: text = "Kind\\tline\\tcol\\tmessage",
col 0-based), SKIP (CPython could not build or print the tree: recursion
limit, int-to-str digit limit, memory; text = the reason), IOERR.
"""

import ast
import hashlib
import os
import sys
import warnings

def _err_text(exc):
    kind = type(exc).__name__
    if isinstance(exc, SyntaxError):
        line = exc.lineno or 0
        col = (exc.offset or 1) - 1
        msg = exc.msg
    else:  # ValueError: "source code string cannot contain null bytes" (< 3.12)
        line, col, msg = 0, 0, str(exc)
        kind = "SyntaxError"
    return "%s\t%d\t%d\t%s" % (kind, line, col, msg)


def main():
    mode, listfile, outfile = sys.argv[1:4]
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    if mode == "serialize":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import serialize_tree
    warnings.simplefilter("ignore")
    with open(listfile, "rb") as f:
        paths = [p for p in f.read().decode("utf-8", "surrogateescape").split("\n") if p]
    out = open(outfile, "wb")

    def record(status, path, text):
        pb = path.encode("utf-8", "surrogateescape")
        tb = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
        out.write(b"#GM %s %d %d\n" % (status.encode(), len(pb), len(tb)))
        out.write(pb + b"\n" + tb + b"\n")
        out.flush()

    for path in paths:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as exc:
            record("IOERR", path, str(exc))
            continue
        try:
            tree = ast.parse(data)
        except (SyntaxError, ValueError) as exc:
            record("ERR", path, _err_text(exc))
            continue
        except (RecursionError, MemoryError, OverflowError) as exc:
            record("SKIP", path, "CPython could not parse: %s: %s" % (type(exc).__name__, exc))
            continue
        try:
            if mode == "serialize":
                text = serialize_tree.serialise(tree)
            else:
                text = ast.dump(tree, include_attributes=True)
        except (RecursionError, MemoryError, ValueError) as exc:
            record("SKIP", path, "CPython could not dump: %s: %s" % (type(exc).__name__, str(exc)[:200]))
            continue
        if mode == "hash":
            b = text.encode("utf-8", "surrogatepass")
            record("OK", path, "%s %d" % (hashlib.sha256(b).hexdigest(), len(b)))
        else:
            record("OK", path, text)
        del tree, text
    record("END", str(len(paths)), "")
    out.close()


if __name__ == "__main__":
    main()
