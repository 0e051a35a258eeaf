"""The static check against Dynamo on the Table 2 models: recall and precision.

For every Table 2 row (bench/table2.py, transformers 4.52.4 in .venv-tf452):

1. a child process builds the model, runs it once eagerly under a line tracer
   (which lines of transformers' files ran) and once through
   ``graphmend.explain`` (the break sites Dynamo attributes to a file:line);
2. ``graphmend check`` (all rules) runs over every transformers file that ran;
3. recall: break sites (file:line, each distinct site once) that a finding
   covers (the site's line lies in the finding's line range, or within 2
   lines of its start: Dynamo reports the line of the jump, which for a
   multi-line test can be the test's first or last line);
   precision: findings on lines that ran, and how many of them Dynamo confirms
   (a break site within that range). Findings on lines that never ran cannot be
   confirmed or refuted by these inputs and are counted separately.

    python bench/static_vs_dynamo.py [ROW...] [--json PATH] [--python PY] [--regions all]

Prints one line per row and a TOTAL; --json writes every site and finding.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import table2  # noqa: E402

TOL = 2


def child(row_name: str, out_path: str) -> None:
    """In the 4.52.4 interpreter: executed lines and Dynamo's break sites."""
    import _common as C

    C.set_offline_env()
    C.ensure_graphmend_importable()
    import torch

    torch.set_num_threads(1)
    import transformers

    import graphmend

    tf_dir = os.path.dirname(transformers.__file__) + os.sep
    row = table2.ROW_BY_NAME[row_name]
    torch.manual_seed(0)
    model = row.make_model().to(getattr(torch, row.dtype)).eval()
    inputs = table2._cast(row, row.make_inputs(0))
    executed: dict[str, set] = {}

    def tracer(frame, event, arg):
        fn = frame.f_code.co_filename
        if not fn.startswith(tf_dir):
            return None
        lines = executed.setdefault(fn, set())

        def local(frame, event, arg):
            if event == "line":
                lines.add(frame.f_lineno)
            return local

        lines.add(frame.f_lineno)
        return local

    with torch.no_grad():
        sys.settrace(tracer)
        try:
            model(**inputs)
        finally:
            sys.settrace(None)
        report = graphmend.explain(model, **inputs)
    sites = []
    for r in report.reasons:
        for s in r.sites:
            sites.append({"site": s, "gb_type": r.gb_type, "gb_id": r.gb_id, "count": r.count})
    with open(out_path, "w") as f:
        json.dump({"tf_dir": tf_dir, "executed": {k: sorted(v) for k, v in executed.items()},
                   "sites": sites, "break_events": report.break_events, "graphs": report.graphs}, f)


def check(paths: list[str], regions: str) -> list[dict]:
    # graphmend of the interpreter running this driver (the main .venv).
    out = subprocess.run([sys.executable, "-m", "graphmend", "check", "--regions", regions, "--exit-zero", "--output-format", "json", *paths],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows", nargs="*")
    ap.add_argument("--json")
    ap.add_argument("--python", default=table2.default_python())
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--regions", choices=("reachable", "all"), default="reachable",
                    help="graphmend check --regions (all: library mode, as the import hook)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child, a.out)
        return 0
    names = a.rows or [r.name for r in table2.ROWS]
    rows_out = []
    tot = Counter()
    print(f"{'row':16} {'sites':>5} {'flagged':>7} {'findings':>8} {'ran':>5} {'confirmed':>9}  codes of confirmed")
    for name in names:
        with tempfile.TemporaryDirectory() as td:
            out = os.path.join(td, "r.json")
            p = subprocess.run([a.python, os.path.abspath(__file__), "--child", name, "--out", out],
                               capture_output=True, text=True, timeout=a.timeout)
            if p.returncode != 0 or not os.path.exists(out):
                print(f"{name:16} error: {p.stderr.strip().splitlines()[-1:]}")
                continue
            data = json.load(open(out))
        tf_dir = data["tf_dir"]
        files = sorted(data["executed"])
        findings = check(files, a.regions) if files else []
        executed = {k: set(v) for k, v in data["executed"].items()}
        # Distinct break sites as absolute paths.
        def site_path(site: str, tf_dir: str = tf_dir) -> str:
            path = site.rsplit(":", 1)[0]
            if not os.path.isabs(path) and path.startswith("transformers/"):
                path = os.path.join(tf_dir, path.split("transformers/", 1)[1])
            return path

        sites = sorted({(site_path(s["site"]), int(s["site"].rsplit(":", 1)[1]))
                        for s in data["sites"] if site_path(s["site"]).startswith(tf_dir)})

        def covers(fd: dict, site: tuple) -> bool:
            return (fd["path"] == site[0] and
                    (fd["line"] <= site[1] <= fd["end_line"] or abs(site[1] - fd["line"]) <= TOL))

        flagged = [s for s in sites if any(covers(fd, s) for fd in findings)]
        ran = [fd for fd in findings if fd["line"] in executed.get(fd["path"], ())]
        confirmed = [fd for fd in ran if any(covers(fd, s) for s in sites)]
        codes = Counter(fd["code"] for fd in confirmed)
        print(f"{name:16} {len(sites):5} {len(flagged):7} {len(findings):8} {len(ran):5} {len(confirmed):9}  "
              + ", ".join(f"{c} {n}" for c, n in sorted(codes.items())))
        tot.update(sites=len(sites), flagged=len(flagged), findings=len(findings), ran=len(ran),
                   confirmed=len(confirmed))
        rows_out.append({"row": name, "sites": [f"{p}:{l}" for p, l in sites],
                         "flagged": [f"{p}:{l}" for p, l in flagged],
                         "missed": [f"{p}:{l}" for p, l in sites if (p, l) not in flagged],
                         "findings_ran": [{k: fd[k] for k in ("path", "line", "code", "message")} | {
                             "confirmed": fd in confirmed} for fd in ran],
                         "findings_total": len(findings), "files": len(files)})
    print(f"{'TOTAL':16} {tot['sites']:5} {tot['flagged']:7} {tot['findings']:8} {tot['ran']:5} {tot['confirmed']:9}")
    if tot["sites"]:
        print(f"recall {tot['flagged']}/{tot['sites']} = {tot['flagged'] / tot['sites']:.0%}; "
              f"precision on lines that ran {tot['confirmed']}/{tot['ran']} = "
              f"{(tot['confirmed'] / tot['ran'] if tot['ran'] else 0):.0%} "
              "(findings counted once per row; a file shared by rows counts in each)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"rows": rows_out, "total": dict(tot)}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
