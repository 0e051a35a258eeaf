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
  python bench/survey.py --mended                 # re-run the breaking classes with graphmend's hook

``--arms`` (bench/arms.py) takes the same breaking pairs and runs each
under every arm, each arm in its own interpreter: ``original``,
``switches`` (``capture_scalar_outputs`` + ``capture_dynamic_output_shape_ops``),
``safe``, ``unsafe``, ``safe+switches``, ``unsafe+switches`` and ``nested``
(``nested_graph_breaks``); outputs and side effects are compared with an
eager reference run of the original code.  Records per (class, mode, arm)
go to ``survey_arms.jsonl`` as each arm finishes (a rerun continues; with
``--retry-failed`` it reruns what did not run); ``survey_arms.md`` and
``survey_arms.summary.json`` hold the tables (``--arms --summary`` rewrites
them).

  python bench/survey.py --arms                         # every arm
  python bench/survey.py --arms original,switches,safe --every 5

``--mended`` reads the survey JSONL, takes every (class, mode) that broke,
and runs it twice more, each phase in its own interpreter: ``original``
(transformers as installed: the eager outputs, stdout, log records and
warnings on the recorded input and fresh ones, and the initial state_dict)
and ``mended`` (``graphmend.install(packages=["transformers"])`` before
transformers is imported: the same state_dict and inputs, compiled with the
counting backend and eagerly, compared with the original's eager run; then
counted the survey's way).  Results go to ``survey_mended.jsonl`` and
``survey_mended.md``.
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
from arms import ARM_ORDER  # noqa: E402

C.set_offline_env()
C.ensure_graphmend_importable()

NAME_RE = re.compile(r"(Model|ForCausalLM|ForConditionalGeneration)$")
DEFAULT_OUT = os.path.join(C.RESULTS, "survey.jsonl")
SHORT_SEQ = 8
STATUSES = ("ok", "eager_ok", "build_error", "eager_error", "compile_error", "timeout", "crash", "not_a_model", "skipped")


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

def measure_class(name: str, modes: list[str], emit: Callable[[dict], None], seq: int, batch: int,
                  count: bool = True) -> None:
    """Build ``name``, choose its inputs, run it eagerly in each mode and,
    with ``count``, count it with Dynamo (without: status ``eager_ok``, the
    coverage pass of ``--eager-only``)."""
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
    if cls.forward is torch.nn.Module.forward:
        # no forward of its own (generate-only wrappers, deprecated aliases):
        # nothing to run, and nothing Dynamo could trace
        for m in modes:
            out(m, "not_a_model", reason="no forward")
        return

    # the first shrink level that builds and has an input variant that runs
    # eagerly in eval mode (hfbuild.LEVELS); the first level's error is the
    # one reported when none does
    chosen: Optional[tuple[str, dict]] = None
    failure: Optional[tuple[str, str, BaseException]] = None
    for level in hfbuild.LEVELS:
        t0 = time.perf_counter()
        try:
            model, notes = hfbuild.build(cls, level=level)
        except Exception as e:  # noqa: BLE001
            failure = failure or ("build_error", "build", e)
            continue
        base["build_s"] = round(time.perf_counter() - t0, 3)
        t0 = time.perf_counter()
        model.eval()
        first_err: Optional[BaseException] = None
        # a shorter sequence for models whose position table is shorter
        for s in (seq, SHORT_SEQ) if seq > SHORT_SEQ else (seq,):
            for label, inputs in hfbuild.input_variants(model, batch=batch, seq=s):
                try:
                    with torch.no_grad():
                        model(**inputs)
                    chosen = (label, inputs)
                    break
                except Exception as e:  # noqa: BLE001
                    first_err = first_err or e
            if chosen is not None:
                if s != seq:
                    base["seq"] = s
                break
        base["eager_s"] = round(time.perf_counter() - t0, 3)
        if chosen is not None:
            base["shrink_level"] = level
            base["params"] = hfbuild.count_params(model)
            base["shrink"] = notes[:80]
            break
        failure = failure or ("eager_error", "inputs", first_err or RuntimeError(
            "no input variant for this model's forward"))
        model = None  # free it before the next level builds
    if chosen is None:
        assert failure is not None
        status, stage, err = failure
        for m in modes:
            out(m, status, stage=stage, error=C.short_error(err), error_site=C.error_site(err))
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
        if not count:
            out(mode, "eager_ok", inputs=label)
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


# ---------------------------------------------------------- mended re-run

MENDED_OUT = os.path.join(C.RESULTS, "survey_mended.jsonl")
MENDED_WORK = os.path.join(C.BENCH, ".cache", "survey_mended")
N_FRESH = 3


def is_breaking(r: dict) -> bool:
    return r.get("status") == "ok" and (r.get("break_events", 0) > 0 or r.get("skipped_frames", 0) > 0)


def mended_tasks(src: str, only: list[str], modes: list[str] | None = None) -> list[tuple[str, list[str]]]:
    """(class, modes) of every breaking pair in the survey at ``src``, in ``modes`` (default: all)."""
    last: dict[tuple[str, str], dict] = {}
    for r in C.read_jsonl(src):
        last[(r.get("class"), r.get("mode"))] = r
    by_class: dict[str, list[str]] = {}
    for (c, m), r in sorted(last.items()):
        if is_breaking(r) and (modes is None or m in modes):
            by_class.setdefault(c, []).append(m)
    names = select(sorted(by_class), only)
    return [(n, sorted(by_class[n])) for n in names]


def one_per_module(src: str, tasks: list[tuple[str, list[str]]]) -> list[tuple[str, list[str]]]:
    """A sample of ``tasks``: for every (modeling module, mode), the breaking
    class that compiled fastest in the survey.  Classes of one module share
    its code, hence (mostly) its break sites; one of them per mode keeps every
    module in the sample at a fraction of the cost."""
    recs = {(r.get("class"), r.get("mode")): r for r in C.read_jsonl(src)}
    best: dict[tuple[str, str], tuple[float, str]] = {}
    for c, ms in tasks:
        for m in ms:
            r = recs[(c, m)]
            key = (r.get("module") or c, m)
            cand = (r.get("compile_s") or 0.0, c)
            best[key] = min(best.get(key, cand), cand)
    keep = {(c, m) for (_, m), (_, c) in best.items()}
    out = [(c, [m for m in ms if (c, m) in keep]) for c, ms in tasks]
    return [(c, ms) for c, ms in out if ms]


def _install_hook() -> None:
    if "transformers" in sys.modules:
        raise RuntimeError("transformers was imported before graphmend's hook")
    import graphmend

    if not hasattr(graphmend, "install"):
        raise RuntimeError(f"graphmend at {os.path.dirname(graphmend.__file__)} has no install(); "
                           "reinstall graphmend in this interpreter (scripts/setup.sh)")
    graphmend.install(packages=["transformers"])


def _pair_path(work: str, name: str, mode: str) -> str:
    return os.path.join(work, f"{name}.{mode}.pt")


def _inputs_for(model: Any, label: Optional[str], batch: int, seq: int) -> tuple[str, list[dict]]:
    """The recorded input set (by label) for seed 0 and ``N_FRESH`` fresh seeds."""
    import hfbuild
    import torch

    variants = hfbuild.input_variants(model, batch=batch, seq=seq, seed=0)
    if label is None or label not in [v[0] for v in variants]:
        model.eval()
        for lab, inp in variants:
            try:
                with torch.no_grad():
                    model(**inp)
                label = lab
                break
            except Exception:  # noqa: BLE001
                continue
    out = []
    for seed in range(N_FRESH + 1):
        vs = dict(hfbuild.input_variants(model, batch=batch, seq=seq, seed=seed))
        if label not in vs:
            raise RuntimeError(f"input set {label!r} missing for seed {seed}")
        out.append(vs[label])
    return label, out


def input_spec(rec: dict) -> dict:
    """How the survey ran a class, from its record: its input label, shrink
    level and sequence length (None: the default)."""
    return {"inputs": rec.get("inputs"), "level": rec.get("shrink_level", "shrunk"), "seq": rec.get("seq")}


def mended_phase_child(name: str, modes: list[str], phase: str, work: str, labels: dict, emit: Callable,
                       seq: int, batch: int) -> None:
    """One class in one phase, every mode.  Phases: ``original`` (the eager
    reference and, as a control, the original compiled: --mended),
    ``reference`` (the eager reference only: --arms, whose ``original`` arm is
    the control), ``mended`` and ``arm:NAME`` (compiled and eager against the
    reference, and counted).

    Every pass gets a freshly built model with the same state_dict: a model
    that already ran carries state a first call changes (BigBird switches
    ``block_sparse`` to ``original_full`` on short inputs and builds new
    attention modules, which draws from the RNG; BatchNorm running stats in
    train mode), so reusing it would compare different programs.  Every
    fresh model is first warmed as the survey counts (one eager eval forward;
    in train mode one eager train forward), so the count and the outputs come
    from one compilation and the reference sees the same state."""
    import torch

    torch.set_num_threads(1)
    import _equiv as E
    import arms as A
    import hfbuild
    import transformers

    base: dict[str, Any] = {"class": name, "phase": phase}
    t_start = time.perf_counter()

    def out(mode: str, status: str, **kw: Any) -> None:
        emit({**base, "mode": mode, "status": status, "wall_s": round(time.perf_counter() - t_start, 3), **kw})

    label_spec = labels.get(name) or input_spec({})  # the driver's input_spec of the class's record
    level, seq = label_spec["level"], label_spec["seq"] or seq
    try:
        cls = getattr(transformers, name)
        model, _ = hfbuild.build(cls, level=level)
    except Exception as e:  # noqa: BLE001
        for m in modes:
            out(m, "build_error", error=C.short_error(e), error_site=C.error_site(e))
        return
    init_sd = {k: v.detach().clone() for k, v in model.state_dict().items()}

    def warmed(sd: dict, train: bool, x0: dict) -> Any:
        m, _ = hfbuild.build(cls, level=level)
        m.load_state_dict(sd, strict=True)
        m.eval()
        with torch.no_grad():
            m(**x0)
        m.train(train)
        if train:
            with torch.enable_grad():
                _seed()
                m(**x0)
        return m

    def eager_runs(m: Any, inputs: list[dict], ctx: Callable) -> tuple[list, list]:
        outs, effects = [], []
        with ctx():
            for x in inputs:
                _seed()
                with E.SideEffects() as se:
                    y = m(**x)
                outs.append(E.flatten(y))
                effects.append(se.record())
        return outs, effects

    if phase in ("original", "reference"):
        try:
            label, inputs = _inputs_for(model, label_spec["inputs"], batch, seq)
        except Exception as e:  # noqa: BLE001
            for m in modes:
                out(m, "eager_error", stage="inputs", error=C.short_error(e))
            return
    for mode in modes:
        train = mode == "train"
        ctx = torch.enable_grad if train else torch.no_grad
        try:
            if phase in ("original", "reference"):
                outs, effects = eager_runs(warmed(init_sd, train, inputs[0]), inputs, ctx)
                ref = {"state_dict": init_sd, "inputs": inputs, "label": label, "outputs": outs, "effects": effects}
                control = None
                if phase == "original":
                    # control: the ORIGINAL model compiled (counting backend) vs
                    # its eager run, so that a difference Dynamo itself makes
                    # is not charged to graphmend
                    _, _, couts = _compiled_runs(warmed(init_sd, train, inputs[0]), inputs, ctx)
                    control = _merge_cmp([E.compare(a, b) for a, b in zip(outs, couts)])
                    ref.update(compiled_outputs=couts, control=control)
                torch.save(ref, _pair_path(work, name, mode))
                out(mode, "ok", inputs=label, side_effect_events=sum(len(e["events"]) for e in effects),
                    control=control)
                continue
            ref = torch.load(_pair_path(work, name, mode), weights_only=False)
        except Exception as e:  # noqa: BLE001
            out(mode, "eager_error", stage=f"{phase}-eager", error=C.short_error(e), error_site=C.error_site(e))
            continue
        # this phase's program: compiled once (counting backend; the count is
        # its first call's), then eagerly, both against the reference
        inputs = ref["inputs"]
        sd = ref["state_dict"]
        stage = "load"
        try:
            model = warmed(sd, train, inputs[0])
            stage = "compiled"
            t0 = time.perf_counter()
            rep, effects, couts = _compiled_runs(model, inputs, ctx, side_effects=True)
            compile_s = time.perf_counter() - t0
            del model
            stage = "eager"
            if phase.startswith("arm:") and not A.ARMS[phase[4:]]["hook"]:
                # Dynamo's config alone: the eager program is the reference's
                own_outs, own_effects = ref["outputs"], ref["effects"]
            else:
                own_outs, own_effects = eager_runs(warmed(sd, train, inputs[0]), inputs, ctx)
            cmp_c = [E.compare(a, b) for a, b in zip(ref["outputs"], couts)]
            cmp_e = [E.compare(a, b) for a, b in zip(ref["outputs"], own_outs)]
            own = [E.compare(a, b) for a, b in zip(own_outs, couts)]
            se_cmp = E.compare_side_effects(ref["effects"], effects)
            orig = ref
            control_path = _pair_path(work, name, mode) + ".original"
            if phase == "arm:original":  # the control the other arms are judged against
                orig = {"compiled_outputs": couts, "compiled_effects": effects, "control": _merge_cmp(cmp_c)}
                torch.save(orig, control_path)
            elif os.path.exists(control_path):
                orig = torch.load(control_path, weights_only=False)
            outputs = {
                "identical": all(c["identical"] for c in cmp_c + cmp_e) and se_cmp["identical"],
                "compiled_vs_original_eager": _merge_cmp(cmp_c),
                "compiled_vs_original_compiled": _merge_cmp(
                    [E.compare(a, b) for a, b in zip(orig["compiled_outputs"], couts)])
                if "compiled_outputs" in orig else None,
                "control_original_compiled_vs_eager": orig.get("control"),
                "eager_vs_original_eager": _merge_cmp(cmp_e),
                # this phase's compiled model against its own eager run: where
                # they differ the difference is this arm's (the switches are
                # known to diverge sometimes), whatever graphmend does
                "compiled_vs_own_eager": _merge_cmp(own),
                "side_effects": se_cmp,
                # what the program itself does (the rewrite's obligation) and
                # what its compiled run does against the original compiled
                # (Dynamo's own differences, e.g. a warning only tracing emits)
                "eager_side_effects": E.compare_side_effects(ref["effects"], own_effects),
                "compiled_side_effects_vs_original_compiled": E.compare_side_effects(
                    orig["compiled_effects"], effects) if "compiled_effects" in orig else None,
                "inputs": len(inputs),
            }
            out(mode, "ok", inputs=ref["label"], compile_s=round(compile_s, 3), outputs=outputs,
                later_recompiles=rep.later_recompiles, graphmend_core=C.core_digest(), **C.summarize_report(rep))
        except Exception as e:  # noqa: BLE001
            out(mode, "compile_error" if stage == "compiled" else "eager_error", stage=f"{phase}-{stage}",
                error=C.short_error(e), error_site=C.error_site(e))


def _seed() -> None:
    """Every generator a model may draw from, before each call of a pair:
    torch's, and numpy's and Python's global ones (wav2vec2's SpecAugment
    masks come from numpy), so that each process draws the same."""
    import random

    import numpy as np
    import torch

    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)


def _compiled_runs(model: Any, inputs: list[dict], ctx: Callable,
                   side_effects: bool = False) -> tuple[Any, list, list]:
    """``model`` compiled once and called on every input, each after
    ``_seed()`` as the eager reference is: the report (of the first call),
    the side effects of each call (with ``side_effects``) and the flattened
    outputs."""
    import contextlib

    import _equiv as E
    from graphmend.judge import explain_calls

    ses: list = []

    def before(i: int) -> Any:
        _seed()
        stack = contextlib.ExitStack()
        stack.enter_context(ctx())
        if side_effects:
            ses.append(stack.enter_context(E.SideEffects()))
        return stack

    rep, ys = explain_calls(model, [((), x) for x in inputs], before_call=before)
    return rep, [se.record() for se in ses], [E.flatten(y) for y in ys]


def _merge_cmp(cmps: list[dict]) -> dict:
    return {
        "identical": all(c["identical"] for c in cmps),
        "bitwise": all(c["bitwise"] for c in cmps),
        "max_abs_diff": max((c["max_abs_diff"] for c in cmps), default=0.0),
        "mismatches": [f"input {i}: {m}" for i, c in enumerate(cmps) for m in c["mismatches"]][:6],
    }


def run_mended_phase(args: argparse.Namespace) -> int:
    """In its own interpreter: one phase over the tasks (from --tasks-file)."""
    with open(args.tasks_file, encoding="utf-8") as f:
        spec = json.load(f)
    phase = args._mended_phase
    if phase == "mended":
        _install_hook()
    elif phase.startswith("arm:"):
        setup_arm(phase[4:])
    preload(warm=not args.no_warm)
    import _equiv  # noqa: F401
    tasks = ((n, (lambda emit, n=n, ms=ms: mended_phase_child(n, ms, phase, spec["work"], spec["labels"], emit,
                                                                args.seq, args.batch)), args.timeout)
             for n, ms in spec["tasks"])
    out_path = spec["out"]
    for t in C.run_pool(tasks, jobs=args.jobs, quiet=not args.verbose):
        recs = [r for r in t.records if "_child_error" not in r]
        child_err = next((r for r in t.records if "_child_error" in r), None)
        got = {r["mode"] for r in recs}
        for m in dict(spec["tasks"])[t.key]:
            if m not in got:
                status = "timeout" if t.failure == "timeout" else "crash"
                rec = {"class": t.key, "mode": m, "phase": phase, "status": status,
                       "error": t.failure or (child_err or {}).get("_child_error")}
                if child_err:
                    rec["traceback"] = child_err.get("_traceback", "")[-2000:]
                recs.append(rec)
        C.append_jsonl(out_path, recs)
        print(f"survey --mended [{phase}] {t.key}: " + ", ".join(f"{r['mode']} {r['status']}" for r in recs),
              file=sys.stderr, flush=True)
    return 0


def run_mended(args: argparse.Namespace) -> int:
    """Driver of --mended: both phases in fresh interpreters, then the merge."""
    import subprocess

    src = args.mended_from
    tasks = mended_tasks(src, args.only)
    if args.limit:
        tasks = tasks[: args.limit]
    kept: list[dict] = []
    if args.retry_failed and os.path.exists(args.mended_out):
        # keep what ran cleanly; re-run errors, timeouts and regressions
        last = {(r["class"], r["mode"]): r for r in C.read_jsonl(args.mended_out)}
        redo = {k for k, r in last.items() if r.get("status") != "ok" or r.get("regressions")}
        kept = [r for k, r in last.items() if k not in redo]
        done = {(r["class"], r["mode"]) for r in kept}
        tasks = [(c, [m for m in ms if (c, m) not in done]) for c, ms in tasks]
        tasks = [(c, ms) for c, ms in tasks if ms]
    prev = {(r.get("class"), r.get("mode")): r for r in C.read_jsonl(src)}
    labels = {c: input_spec(prev[(c, ms[0])]) for c, ms in tasks}
    work = args.work or MENDED_WORK
    os.makedirs(work, exist_ok=True)
    t_start = time.time()
    print(f"survey --mended: {len(tasks)} breaking classes ({sum(len(m) for _, m in tasks)} class x mode) from "
          f"{src}, jobs={args.jobs} -> {args.mended_out}", file=sys.stderr, flush=True)
    phase_recs: dict[str, dict] = {}
    env = C.without_source_tree(C.set_offline_env(dict(os.environ)))
    for phase in ("original", "mended"):
        todo = tasks
        if phase == "mended":  # only what the original phase could run
            okp = {(r["class"], r["mode"]) for r in phase_recs["original"].values() if r.get("status") == "ok"}
            todo = [(c, [m for m in ms if (c, m) in okp]) for c, ms in tasks]
            todo = [(c, ms) for c, ms in todo if ms]
        raw = os.path.join(work, f"{phase}.jsonl")
        if os.path.exists(raw):
            os.remove(raw)
        spec_path = os.path.join(work, f"{phase}.tasks.json")
        with open(spec_path, "w", encoding="utf-8") as f:
            json.dump({"tasks": todo, "labels": labels, "work": work, "out": raw}, f)
        cmd = [sys.executable, os.path.abspath(__file__), "--_mended-phase", phase, "--tasks-file", spec_path,
               "--jobs", str(args.jobs), "--timeout", str(args.timeout), "--seq", str(args.seq),
               "--batch", str(args.batch)] + (["--no-warm"] if args.no_warm else []) \
            + (["-v"] if args.verbose else [])
        rc = subprocess.run(cmd, env=env, cwd=C.REPO).returncode
        if rc != 0:
            print(f"survey --mended: the {phase} phase exited {rc}", file=sys.stderr)
        phase_recs[phase] = {(r["class"], r["mode"]): r for r in C.read_jsonl(raw)}
    merged = list(kept)
    for c, ms in tasks:
        for m in ms:
            merged.append(merge_mended(prev[(c, m)], phase_recs["original"].get((c, m)),
                                       phase_recs["mended"].get((c, m))))
    order = {k: i for i, k in enumerate((c, m) for c, ms in mended_tasks(src, args.only) for m in ms)}
    merged.sort(key=lambda r: order.get((r["class"], r["mode"]), len(order)))
    if os.path.exists(args.mended_out):
        os.remove(args.mended_out)
    C.append_jsonl(args.mended_out, merged)
    versions = {}
    try:
        r = subprocess.run([sys.executable, "-c", "import json,sys; sys.path.insert(0, %r); import _common as C; "
                            "print(json.dumps(dict(C.versions(), graphmend_core=C.core_digest())))" % C.BENCH],
                           capture_output=True, text=True, env=env)
        versions = json.loads(r.stdout.strip().splitlines()[-1])
    except Exception:  # noqa: BLE001
        pass
    meta = {"source": os.path.relpath(src, C.REPO), "argv": sys.argv[1:], "started": time.strftime(
        "%Y-%m-%dT%H:%M:%S", time.localtime(t_start)), "wall_s": round(time.time() - t_start, 1),
        "jobs": args.jobs, "timeout_s": args.timeout, "versions": versions, "graphmend_commit": C.git_describe(),
        "fresh_inputs": N_FRESH, "retried": sum(len(ms) for _, ms in tasks) if args.retry_failed else None}
    md = os.path.splitext(args.mended_out)[0] + ".md"
    write_mended_summary(merged, md, meta)
    print(f"survey --mended: done in {meta['wall_s']} s -> {args.mended_out}, {md}", file=sys.stderr)
    if not args.keep_work:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    return 0


ARMS_OUT = os.path.join(C.RESULTS, "survey_arms.jsonl")
ARMS_WORK = os.path.join(C.BENCH, ".cache", "survey_arms")


def setup_arm(arm: str) -> None:
    import arms as A

    A.setup_arm(arm, packages=("transformers",))


def _run_phase(phase: str, todo: list, labels: dict, work: str, args: argparse.Namespace, env: dict) -> dict:
    import subprocess

    raw = os.path.join(work, f"{phase.replace(':', '_').replace('+', '_')}.jsonl")
    if os.path.exists(raw):
        os.remove(raw)
    if not todo:
        return {}
    spec_path = raw[:-6] + ".tasks.json"
    with open(spec_path, "w", encoding="utf-8") as f:
        json.dump({"tasks": todo, "labels": labels, "work": work, "out": raw}, f)
    cmd = [sys.executable, os.path.abspath(__file__), "--_mended-phase", phase, "--tasks-file", spec_path,
           "--jobs", str(args.jobs), "--timeout", str(args.timeout), "--seq", str(args.seq),
           "--batch", str(args.batch)] + (["--no-warm"] if args.no_warm else []) + (["-v"] if args.verbose else [])
    rc = subprocess.run(cmd, env=env, cwd=C.REPO).returncode
    if rc != 0:
        print(f"survey --arms: the {phase} phase exited {rc}", file=sys.stderr)
    return {(r["class"], r["mode"]): r for r in C.read_jsonl(raw)}


def run_arms(args: argparse.Namespace) -> int:
    """Driver of --arms: the eager reference, then every arm, each phase in a
    fresh interpreter; records per (class, mode, arm) are appended to
    --arms-out as each arm finishes, so an interrupted run resumes."""
    import arms as A

    arm_list = A.parse_arms(args.arms)
    md = os.path.splitext(args.arms_out)[0] + ".md"
    if args.summary:  # only rewrite the tables from the records
        old = os.path.splitext(args.arms_out)[0] + ".summary.json"
        meta = json.load(open(old)).get("meta", {}) if os.path.exists(old) else {}
        A.write(C.read_jsonl(args.arms_out), md, meta)
        print(f"survey --arms: summary -> {md}", file=sys.stderr)
        return 0
    src = args.mended_from
    tasks = mended_tasks(src, args.only, args.modes)
    if args.one_per_module:
        tasks = one_per_module(src, tasks)
    if args.every > 1:
        tasks = tasks[:: args.every]
    if args.limit:
        tasks = tasks[: args.limit]
    prev = {(r.get("class"), r.get("mode")): r for r in C.read_jsonl(src)}
    have = {(r["class"], r["mode"], r["arm"]): r for r in C.read_jsonl(args.arms_out)}
    redo = (lambda r: True) if args.rerun else (lambda r: r.get("status") != "ok") if args.retry_failed \
        else (lambda r: False)
    pending = {a: [(c, [m for m in ms if (c, m, a) not in have or redo(have[(c, m, a)])]) for c, ms in tasks]
               for a in arm_list}
    pending = {a: [(c, ms) for c, ms in t if ms] for a, t in pending.items()}
    need = sorted({(c, m) for t in pending.values() for c, ms in t for m in ms})
    labels = {c: input_spec(prev[(c, m)]) for c, m in need}
    work = args.work or ARMS_WORK
    os.makedirs(work, exist_ok=True)
    env = C.without_source_tree(C.set_offline_env(dict(os.environ)))
    t_start = time.time()
    commit = C.git_describe()  # the tree the arms ran, not the one at the end of a long run
    print(f"survey --arms: {len(tasks)} breaking classes from {src}; arms {','.join(arm_list)}; "
          f"{sum(len(ms) for t in pending.values() for _, ms in t)} (class, mode, arm) to run -> {args.arms_out}",
          file=sys.stderr, flush=True)
    by_class: dict[str, list[str]] = {}
    for c, m in need:
        by_class.setdefault(c, []).append(m)
    # the eager reference of a pair a kept work folder already holds (a
    # rerun with --keep-work, other arms or modes) is not made again
    ref_raw = os.path.join(work, "reference.jsonl")
    old_refs = {(r["class"], r["mode"]): r for r in C.read_jsonl(ref_raw)
                if r.get("status") == "ok" and os.path.exists(_pair_path(work, r["class"], r["mode"]))} \
        if os.path.exists(ref_raw) else {}
    todo_ref = [(c, [m for m in ms if (c, m) not in old_refs]) for c, ms in sorted(by_class.items())]
    refs = {**old_refs, **_run_phase("reference", [t for t in todo_ref if t[1]], labels, work, args, env)}
    if os.path.exists(ref_raw):
        os.remove(ref_raw)
    C.append_jsonl(ref_raw, list(refs.values()))
    for a in arm_list:
        todo = [(c, [m for m in ms if (refs.get((c, m)) or {}).get("status") == "ok"]) for c, ms in pending[a]]
        got = _run_phase(f"arm:{a}", [(c, ms) for c, ms in todo if ms], labels, work, args, env)
        recs = [A.merge_arm(prev[(c, m)], a, refs.get((c, m)), got.get((c, m))) for c, ms in pending[a] for m in ms]
        C.append_jsonl(args.arms_out, recs)
        n_ok = sum(r["status"] == "ok" for r in recs)
        print(f"survey --arms: {a}: {n_ok}/{len(recs)} ran, "
              f"{sum((r.get('counts') or {}).get('break_events') or 0 for r in recs)} break events",
              file=sys.stderr, flush=True)
    versions = {}
    try:
        import subprocess

        r = subprocess.run([sys.executable, "-c", "import json,sys; sys.path.insert(0, %r); import _common as C; "
                            "print(json.dumps(dict(C.versions(), graphmend_core=C.core_digest())))" % C.BENCH],
                           capture_output=True, text=True, env=env)
        versions = json.loads(r.stdout.strip().splitlines()[-1])
    except Exception:  # noqa: BLE001
        pass
    meta = {"source": os.path.relpath(src, C.REPO), "argv": sys.argv[1:], "arms": arm_list,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t_start)),
            "wall_s": round(time.time() - t_start, 1), "jobs": args.jobs, "timeout_s": args.timeout,
            "versions": versions, "graphmend_commit": commit, "fresh_inputs": N_FRESH,
            "note": args.note}
    # the records accumulate over runs (resumed, other modes, --rerun): keep
    # what each run was
    old_summary = os.path.splitext(args.arms_out)[0] + ".summary.json"
    if os.path.exists(old_summary):
        old = json.load(open(old_summary)).get("meta") or {}
        meta["earlier_runs"] = old.pop("earlier_runs", []) + ([old] if old else [])
    A.write(C.read_jsonl(args.arms_out), md, meta)
    print(f"survey --arms: done in {meta['wall_s']} s -> {args.arms_out}, {md}", file=sys.stderr)
    if not args.keep_work:
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    return 0


def _counts(r: Optional[dict]) -> dict:
    if not r or r.get("status") != "ok":
        return {}
    return {"graphs": r.get("graphs"), "break_events": r.get("break_events"),
            "skipped_frames": r.get("skipped_frames"), "fully_traced": r.get("fully_traced"),
            "break_types": sorted({x.get("gb_type") or x.get("reason") for x in r.get("reasons", [])})}


def merge_mended(before: dict, orig: Optional[dict], mended: Optional[dict]) -> dict:
    rec: dict[str, Any] = {"class": before.get("class"), "mode": before.get("mode"), "module": before.get("module"),
                           "inputs": before.get("inputs"), "before": _counts(before)}
    if orig is None or orig.get("status") != "ok":
        rec["status"] = (orig or {}).get("status", "missing")
        rec["stage"] = "original"
        rec["error"] = (orig or {}).get("error")
    elif mended is None or mended.get("status") != "ok":
        rec["status"] = (mended or {}).get("status", "missing")
        rec["stage"] = (mended or {}).get("stage", "mended")
        rec["error"] = (mended or {}).get("error")
        rec["error_site"] = (mended or {}).get("error_site")
    else:
        rec["status"] = "ok"
        rec["after"] = _counts(mended)
        rec["outputs"] = mended.get("outputs")
        rec["reasons_after"] = mended.get("reasons", [])
        rec["skipped_after"] = mended.get("skipped", [])
        rec["compile_s"] = mended.get("compile_s")
    b, a = rec["before"], rec.get("after") or {}
    regress = []
    if rec["status"] != "ok":
        regress.append(f"newly errors: {rec['status']}: {rec.get('error')}")
    else:
        if (a.get("break_events") or 0) > (b.get("break_events") or 0):
            regress.append(f"more break events: {b.get('break_events')} -> {a.get('break_events')}")
        if (a.get("skipped_frames") or 0) > (b.get("skipped_frames") or 0):
            regress.append(f"more skipped frames: {b.get('skipped_frames')} -> {a.get('skipped_frames')}")
        o = rec.get("outputs") or {}
        if not o.get("identical"):
            ctl = o.get("control_original_compiled_vs_eager") or {}
            same_as_orig = (o.get("compiled_vs_original_compiled") or {}).get("identical")
            if (ctl and not ctl.get("identical") and same_as_orig
                    and (o.get("eager_vs_original_eager") or {}).get("identical")
                    and (o.get("side_effects") or {}).get("identical")):
                # the original model compiled differs from its eager run the
                # same way: Dynamo's doing, not graphmend's
                rec["preexisting_compile_difference"] = True
            else:
                regress.append("outputs or side effects differ")
    rec["regressions"] = regress
    return rec


def write_mended_summary(recs: list[dict], md: str, meta: dict) -> dict:
    modes = sorted({r["mode"] for r in recs})
    s: dict[str, Any] = {"meta": meta, "modes": {}}
    lines = ["# Survey, mended: the breaking classes again with graphmend's import hook", "",
             f"Source: `{meta.get('source')}` (every class x mode that broke: a break event or a skipped frame). "
             f"Versions: {', '.join(f'{k} {v}' for k, v in (meta.get('versions') or {}).items() if k != 'platform')}. "
             f"graphmend at commit {str((meta.get('graphmend_commit') or {}).get('commit', '?'))[:10]}"
             + (" with uncommitted changes in src/ or python/" if (meta.get('graphmend_commit') or {}).get(
                 "dirty_src_python") else "") + f". Wall time {meta.get('wall_s')} s.", "",
             "Each pair runs in two fresh interpreters: the original (eager outputs, stdout, log records and "
             f"warnings on the recorded input and {meta.get('fresh_inputs')} fresh ones, initial state_dict) and "
             "the mended one (`graphmend.install(packages=['transformers'])` first; the same weights and inputs, "
             "compiled with the counting backend and eagerly, torch, numpy and `random` seeded before every call; then counted "
             "as the survey counts). A regression is a pair whose break events or skipped frames grew, whose "
             "outputs or side effects differ from the original's eager run, or that newly errors.", ""]
    lines += ["| mode | pairs | ran | break-free after | breaks before | breaks after | removed | skipped frames "
              "before > after | outputs identical | regressions |", "|---|---|---|---|---|---|---|---|---|---|"]
    for m in modes:
        rs = [r for r in recs if r["mode"] == m]
        ok = [r for r in rs if r["status"] == "ok"]
        bb = sum(r["before"].get("break_events") or 0 for r in ok)
        ba = sum(r["after"].get("break_events") or 0 for r in ok)
        sb = sum(r["before"].get("skipped_frames") or 0 for r in ok)
        sa = sum(r["after"].get("skipped_frames") or 0 for r in ok)
        free = [r for r in ok if r["after"].get("fully_traced")]
        ident = [r for r in ok if (r.get("outputs") or {}).get("identical")]
        reg = [r for r in rs if r["regressions"]]
        s["modes"][m] = {"preexisting_compile_difference": sum(bool(r.get("preexisting_compile_difference"))
                                                            for r in rs),
                         "pairs": len(rs), "ran": len(ok), "break_free_after": len(free), "breaks_before": bb,
                         "breaks_after": ba, "skipped_before": sb, "skipped_after": sa,
                         "outputs_identical": len(ident), "regressions": len(reg),
                         "break_free_classes": [r["class"] for r in free]}
        pct = f" ({100 * (bb - ba) / bb:.0f}%)" if bb else ""
        lines.append(f"| {m} | {len(rs)} | {len(ok)} | {len(free)} | {bb} | {ba} | {bb - ba}{pct} | {sb} > {sa} | "
                     f"{len(ident)} | {len(reg)} |")
    lines += ["", "## Per class", "", "| class | mode | breaks before > after | graphs | skipped | outputs | "
              "break types left | status |", "|---|---|---|---|---|---|---|---|"]
    for r in sorted(recs, key=lambda r: (r["mode"], r["class"])):
        b, a = r["before"], r.get("after") or {}
        o = r.get("outputs") or {}
        outs = "-" if not o else ("identical" if o.get("identical") else "DIFFER")
        if o and o.get("identical") and not (o.get("compiled_vs_original_eager") or {}).get("bitwise"):
            outs = "identical (within tol)"
        st = r["status"] if not r["regressions"] else "REGRESSION: " + "; ".join(r["regressions"])
        if r.get("preexisting_compile_difference"):
            outs = "differ, as the original compiled does"
        lines.append(f"| {r['class']} | {r['mode']} | {b.get('break_events')} > {a.get('break_events', '-')} | "
                     f"{b.get('graphs')} > {a.get('graphs', '-')} | {b.get('skipped_frames')} > "
                     f"{a.get('skipped_frames', '-')} | {outs} | {', '.join(a.get('break_types') or []) or '-'} | "
                     f"{st} |")
    pre = [r for r in recs if r.get("preexisting_compile_difference")]
    if pre:
        lines += ["", "## Outputs that differ before graphmend too", "",
                  "The ORIGINAL model compiled (counting backend) already differs from its eager run, and the mended "
                  "model compiled gives exactly what the original compiled gives (its eager run and side effects "
                  "equal the original's): a difference Dynamo makes, not graphmend; not counted as a regression.", ""]
        for r in pre:
            ctl = (r.get("outputs") or {}).get("control_original_compiled_vs_eager") or {}
            lines.append(f"- {r['class']} ({r['mode']}): original compiled vs eager max |diff| "
                         f"{ctl.get('max_abs_diff', 0):.3g}")
    regs = [r for r in recs if r["regressions"]]
    if regs:
        lines += ["", "## Regressions", ""]
        for r in regs:
            o = r.get("outputs") or {}
            detail = (o.get("compiled_vs_original_eager") or {}).get("mismatches", []) + \
                (o.get("eager_vs_original_eager") or {}).get("mismatches", []) + \
                (o.get("side_effects") or {}).get("diffs", [])
            lines.append(f"- {r['class']} ({r['mode']}): {'; '.join(r['regressions'])}"
                         + (f" — {'; '.join(str(d) for d in detail[:3])}" if detail else "")
                         + (f" at {r.get('error_site')}" if r.get("error_site") else ""))
    with open(md, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    _write_json(os.path.splitext(md)[0] + ".summary.json", s)
    return s


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
    if args.every > 1:
        names = names[:: args.every]
    if args.limit:
        names = names[: args.limit]
    modes = args.modes
    train_subset = None
    if "train" in modes and args.train_only:
        train_subset = set(select(names, args.train_only))

    done: dict[tuple[str, str], dict] = {}
    for rec in C.read_jsonl(args.out):
        done[(rec.get("class"), rec.get("mode"))] = rec
    retry = ({"timeout", "crash"} if args.retry_failed else set()) | (
        {"build_error", "eager_error", "compile_error"} if args.retry_errors else set())

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

    tasks = ((n, (lambda emit, n=n, ms=ms: measure_class(n, ms, emit, args.seq, args.batch,
                                                         count=not args.eager_only)), args.timeout)
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
    p.add_argument("--timeout", type=float, default=None, help="seconds per class (all its modes; "
                   "default 180, with --mended 900 per phase: three fresh builds and compiles under the hook)")
    p.add_argument("--batch", type=int, default=2)
    p.add_argument("--seq", type=int, default=32)
    p.add_argument("--eager-only", action="store_true",
                   help="coverage pass: build, choose inputs and run each mode eagerly, no Dynamo (status eager_ok); "
                        "use with a separate --out")
    p.add_argument("--limit", type=int, default=0, help="first N selected classes only")
    p.add_argument("--one-per-module", action="store_true",
                   help="--arms: a sample of one breaking class per modeling module and mode (the fastest to compile "
                        "in the survey)")
    p.add_argument("--every", type=int, default=1, metavar="N",
                   help="a sample: every N-th selected class (in name order), e.g. --every 10")
    p.add_argument("--retry-failed", action="store_true", help="rerun classes that timed out or crashed (with "
                   "--mended: rerun the pairs of --mended-out that did not run cleanly or regressed, keep the rest)")
    p.add_argument("--retry-errors", action="store_true", help="rerun classes that did not build, run eagerly or "
                   "compile (after an improvement of bench/hfbuild.py; the meta file records each run)")
    p.add_argument("--rerun", action="store_true", help="--arms: run the selected pairs again although "
                   "recorded (the latest record counts)")
    p.add_argument("--summary", action="store_true", help="only (re)write the markdown summary")
    p.add_argument("--summary-out", default=None, help="markdown path (default: <out>.md)")
    p.add_argument("--no-summary", action="store_true", help="do not write the summary after the run")
    p.add_argument("--no-warm", action="store_true", help="skip the warm-up compile in the driver")
    p.add_argument("-v", "--verbose", action="store_true", help="let children print")
    p.add_argument("--mended", action="store_true", help="re-run the breaking (class, mode) pairs of the survey "
                   "with graphmend's import hook: counts before/after, outputs vs the original eager run")
    p.add_argument("--mended-from", default=DEFAULT_OUT, help="survey JSONL to take the breaking pairs from")
    p.add_argument("--mended-out", default=MENDED_OUT, help="JSONL of the mended re-run (rewritten; the "
                   "markdown summary goes beside it)")
    p.add_argument("--arms", nargs="?", const=",".join(ARM_ORDER), default=None,
                   help="re-run the breaking pairs of --mended-from under each arm (comma list; default all: "
                   "original,switches,safe,unsafe,safe+switches,unsafe+switches,nested), each in a fresh interpreter")
    p.add_argument("--arms-out", default=ARMS_OUT, help="JSONL of --arms (appended; resumable; the markdown and "
                   "JSON summaries go beside it)")
    p.add_argument("--note", default=None, help="a line for the --arms summary (e.g. 'sample: every 10th class')")
    p.add_argument("--work", default=None, help="scratch directory for --mended (default bench/.cache/survey_mended)")
    p.add_argument("--keep-work", action="store_true", help="keep the scratch data of --mended")
    p.add_argument("--_mended-phase", default=None, help=argparse.SUPPRESS)
    p.add_argument("--tasks-file", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.timeout is None:
        args.timeout = 900.0 if (args.mended or args.arms or args._mended_phase) else 180.0
    if args._mended_phase:
        return run_mended_phase(args)
    if args.arms:
        return run_arms(args)
    if args.mended:
        return run_mended(args)
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
