"""graphmend's side of the differential harness through the Python
extension (the real user-facing API, graphmend._frontend.dump_ast).

    python ext_worker.py MINOR LISTFILE OUTFILE

Writes the framed records of gm_dump --batch (see tools/gm_dump.cpp).
"""

import sys


def main():
    minor = int(sys.argv[1])
    listfile, outfile = sys.argv[2], sys.argv[3]
    from graphmend import _frontend

    with open(listfile, "rb") as f:
        paths = [p for p in f.read().decode("utf-8", "surrogateescape").split("\n") if p]
    out = open(outfile, "wb")

    def record(status, path, text):
        pb = path.encode("utf-8", "surrogateescape")
        tb = text.encode("utf-8", "surrogatepass")
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
            text = _frontend.dump_ast(data, (3, minor), filename=path)
        except _frontend.GraphmendSyntaxError as exc:
            record("ERR", path, "%s\t%d\t%d\t%s" % (exc.kind, exc.lineno or 0, exc.col, exc.msg))
            continue
        record("OK", path, text)
    record("END", str(len(paths)), "")
    out.close()


if __name__ == "__main__":
    main()
