#!/usr/bin/env python
"""Survey: every transformers model class through Dynamo (counting backend).

Enumerates the ``PreTrainedModel`` subclasses of the installed transformers
named ``*Model``, ``*ForCausalLM`` or ``*ForConditionalGeneration`` (not
``*PreTrainedModel``), builds each from its default config shrunk generically
(bench/hfbuild.py), picks inputs by modality (batch 2, sequence 32, fp32),
and counts graphs and breaks with graphmend.explain in eval mode (no_grad)
and train mode (grad).  Each class runs in its own forked child with a
timeout.  Results are appended to a JSONL file (one record per class and
mode; see bench/README.md); a rerun skips what is done, so the survey can be
interrupted and resumed.  ``--summary`` writes the markdown summary.

  python bench/survey.py                          # everything, eval+train
  python bench/survey.py --only 'Bart|^T5' --modes eval
  python bench/survey.py --summary                # just rewrite the summary
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import sys
import time
from typing import Any, Callable, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402

C.set_offline_env()
C.ensure_graphmend_importable()

NAME_RE = re.compile(r"(Model|ForCausalLM|ForConditionalGeneration)$")
DEFAULT_OUT = os.path.join(C.RESULTS, "survey.jsonl")
STATUSES = ("ok", "build_error", "eager_error", "compile_error", "timeout", "crash", "not_a_model", "skipped")


def candidate_names() -> list[str]:
    """Class names from transformers' lazy namespace (no model module imported)."""
    import transformers

    c2m = getattr(transformers, "_class_to_module", None)
    if c2m:
        names = list(c2m)
    else:  # pragma: no cover - older transformers
        names = [n for n in dir(transformers)]
    return sorted(n for n in set(names) if NAME_RE.search(n) and not n.lower().endswith("pretrainedmodel")
                  and not n.startswith(("TF", "Flax", "Auto")))


def select(names: list[str], only: list[str]) -> list[str]:
    if not only:
        return names
    out = []
    for n in names:
        for pat in only:
            try:
                hit = re.search(pat, n) is not None
            except re.error:
                hit = False
            if hit or fnmatch.fnmatchcase(n, pat):
                out.append(n)
                break
    return out


# --------------------------------------------------------------- the child

def measure_class(name: str, modes: list[str], emit: Callable[[dict], None], seq: int, batch: int) -> None:
    import torch

    torch.set_num_threads(1)
    import hfbuild
    import transformers
    from graphmend.judge import explain
    from transformers import PreTrainedModel

    base: dict[str, Any] = {"class": name}
    cpu0 = time.process_time()

    def out(mode: str, status: str, **kw: Any) -> None:
        emit({**base, "mode": mode, "status": status, "cpu_s": round(time.process_time() - cpu0, 3), **kw})

    try:
        cls = getattr(transformers, name)
    except Exception as e:
        for m in modes:
            out(m, "build_error", stage="import", error=C.short_error(e), error_site=C.error_site(e))
        return
    base["module"] = getattr(cls, "__module__", "?")
    if not (isinstance(cls, type) and issubclass(cls, PreTrainedModel)):
        for m in modes:
            out(m, "not_a_model")
        return

    t0 = time.perf_counter()
    try:
        model, notes = hfbuild.build(cls)
    except Exception as e:
        for m in modes:
            out(m, "build_error", stage="build", error=C.short_error(e), error_site=C.error_site(e))
        return
    base["build_s"] = round(time.perf_counter() - t0, 3)
    base["params"] = hfbuild.count_params(model)
    base["shrink"] = notes[:80]

    # inputs: the first variant that runs eagerly in eval mode
    t0 = time.perf_counter()
    model.eval()
    chosen: Optional[tuple[str, dict]] = None
    first_err: Optional[BaseException] = None
    for label, inputs in hfbuild.input_variants(model, batch=batch, seq=seq):
        try:
            with torch.no_grad():
                model(**inputs)
            chosen = (label, inputs)
            break
        except Exception as e:  # noqa: BLE001
            first_err = first_err or e
    base["eager_s"] = round(time.perf_counter() - t0, 3)
    if chosen is None:
        err = first_err or RuntimeError("no input variant for this model's forward")
        for m in modes:
            out(m, "eager_error", stage="inputs", error=C.short_error(err), error_site=C.error_site(err))
        return
    label, inputs = chosen
    base["inputs"] = label
    base["input_shapes"] = hfbuild.describe_inputs(inputs)

    for mode in modes:
        train = mode == "train"
        model.train(train)
        ctx = torch.enable_grad if train else torch.no_grad
        if train:
            try:
                torch.manual_seed(0)
                with ctx():
                    model(**inputs)
            except Exception as e:  # noqa: BLE001
                out(mode, "eager_error", stage="eager-train", error=C.short_error(e), error_site=C.error_site(e))
                continue
        t0 = time.perf_counter()
        try:
            torch.manual_seed(0)
            with ctx():
                rep = explain(model, **inputs)
        except Exception as e:  # noqa: BLE001
            out(mode, "compile_error", stage="compile", error=C.short_error(e), error_site=C.error_site(e),
                compile_s=round(time.perf_counter() - t0, 3))
            continue
        out(mode, "ok", compile_s=round(time.perf_counter() - t0, 3), **C.summarize_report(rep))


# -------------------------------------------------------------- the driver

def preload(warm: bool = True) -> None:
    """Import what every child needs once, before forking."""
    import torch

    torch.set_num_threads(1)
    import hfbuild  # noqa: F401
    import torch._dynamo  # noqa: F401
    import torch.fx  # noqa: F401
    import transformers
    import transformers.modeling_utils  # noqa: F401
    from graphmend import explain as _e  # noqa: F401
    from transformers import PreTrainedModel  # noqa: F401

    transformers.utils.logging.disable_progress_bar()
    if warm:
        warm_up()


def warm_up() -> None:
    """Compile one tiny model in the driver before forking, so that the lazy
    imports of Dynamo and transformers (a good part of a first compile's CPU
    time) are paid once instead of in every child.  Dynamo is reset after."""
    import hfbuild
    import torch
    import transformers
    from graphmend.judge import explain

    try:
        model, _ = hfbuild.build(transformers.LlamaForCausalLM)
        model.eval()
        _, inputs = hfbuild.input_variants(model)[0]
        with torch.no_grad():
            explain(model, **inputs)
    except Exception as e:  # warming is an optimisation only
        print(f"survey: warm-up failed: {C.short_error(e)}", file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    preload(warm=False)
    import torch
    import transformers

    names = select(candidate_names(), args.only)
    if args.limit:
        names = names[: args.limit]
    modes = args.modes
    train_subset = None
    if "train" in modes and args.train_only:
        train_subset = set(select(names, args.train_only))

    done: dict[tuple[str, str], dict] = {}
    for rec in C.read_jsonl(args.out):
        done[(rec.get("class"), rec.get("mode"))] = rec
    retry = {"timeout", "crash"} if args.retry_failed else set()

    todo: list[tuple[str, list[str]]] = []
    for n in names:
        ms = [m for m in modes if (m != "train" or train_subset is None or n in train_subset)]
        ms = [m for m in ms if (n, m) not in done or done[(n, m)].get("status") in retry]
        if ms:
            todo.append((n, ms))

    meta_path = os.path.splitext(args.out)[0] + ".meta.json"
    meta = json.load(open(meta_path)) if os.path.exists(meta_path) else {}
    meta.setdefault("runs", [])
    run_info = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "argv": sys.argv[1:],
        "versions": C.versions(),
        "classes_selected": len(names),
        "tasks": len(todo),
        "jobs": args.jobs,
        "timeout_s": args.timeout,
        "batch": args.batch,
        "seq": args.seq,
        "cpu_count": os.cpu_count(),
    }
    meta["runs"].append(run_info)
    meta["versions"] = run_info["versions"]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    _write_json(meta_path, meta)

    if todo and not args.no_warm:
        warm_up()

    print(f"survey: transformers {transformers.__version__}, torch {torch.__version__}: "
          f"{len(names)} classes selected, {len(todo)} to run ({sum(len(m) for _, m in todo)} class x mode), "
          f"jobs={args.jobs}, timeout={args.timeout}s -> {args.out}", file=sys.stderr)

    try:
        from tqdm import tqdm
        bar = tqdm(total=len(todo), unit="cls", dynamic_ncols=True, file=sys.stderr)
    except ImportError:  # pragma: no cover
        bar = None

    tasks = ((n, (lambda emit, n=n, ms=ms: measure_class(n, ms, emit, args.seq, args.batch)), args.timeout)
             for n, ms in todo)
    ms_of = dict(todo)
    counts: dict[str, int] = {}
    t_start = time.time()
    for t in C.run_pool(tasks, jobs=args.jobs, quiet=not args.verbose):
        name = t.key
        recs = [r for r in t.records if "_child_error" not in r]
        child_err = next((r for r in t.records if "_child_error" in r), None)
        got = {r["mode"] for r in recs}
        for m in ms_of[name]:
            if m not in got:
                status = "timeout" if t.failure == "timeout" else "crash"
                rec = {"class": name, "mode": m, "status": status, "error": t.failure or (child_err or {}).get("_child_error")}
                if child_err:
                    rec["traceback"] = child_err.get("_traceback", "")[-2000:]
                recs.append(rec)
        for r in recs:
            r["wall_s"] = round(t.elapsed, 3)
            counts[r["status"]] = counts.get(r["status"], 0) + 1
        # drop superseded records (retry) by appending; the reader keeps the last
        C.append_jsonl(args.out, recs)
        if bar is not None:
            bar.set_postfix_str(" ".join(f"{k}={v}" for k, v in sorted(counts.items())) + f" last={name}", refresh=False)
            bar.update(1)
    if bar is not None:
        bar.close()
    run_info["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S")
    run_info["wall_s"] = round(time.time() - t_start, 1)
    run_info["status_counts"] = counts
    _write_json(meta_path, meta)
    print(f"survey: done in {run_info['wall_s']} s: {counts}", file=sys.stderr)
    return 0


def _write_json(path: str, obj: Any) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def main(argv: Optional[list[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=DEFAULT_OUT, help="JSONL results file (appended; resumable)")
    p.add_argument("--only", action="append", default=[], metavar="PATTERN",
                   help="class names to run: a regex (searched) or a glob; repeatable")
    p.add_argument("--modes", default="eval,train", type=lambda s: [m for m in s.split(",") if m],
                   help="comma list of eval,train (default both)")
    p.add_argument("--train-only", action="append", default=[], metavar="PATTERN",
                   help="run train mode only for classes matching (regex/glob; repeatable)")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--timeout", type=float, default=180.0, help="seconds per class (all its modes)")
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--seq", type=int, default=32)
    p.add_argument("--limit", type=int, default=0, help="first N selected classes only")
    p.add_argument("--retry-failed", action="store_true", help="rerun classes that timed out or crashed")
    p.add_argument("--summary", action="store_true", help="only (re)write the markdown summary")
    p.add_argument("--summary-out", default=None, help="markdown path (default: <out>.md)")
    p.add_argument("--no-summary", action="store_true", help="do not write the summary after the run")
    p.add_argument("--no-warm", action="store_true", help="skip the warm-up compile in the driver")
    p.add_argument("-v", "--verbose", action="store_true", help="let children print")
    args = p.parse_args(argv)
    bad = [m for m in args.modes if m not in ("eval", "train")]
    if bad:
        p.error(f"unknown mode(s) {bad}; use eval,train")
    rc = 0
    if not args.summary:
        rc = run(args)
    if not args.no_summary:
        import summarize

        md = args.summary_out or os.path.splitext(args.out)[0] + ".md"
        summarize.write_summary(args.out, md)
        print(f"survey: summary -> {md}", file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
