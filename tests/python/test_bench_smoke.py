"""Smoke tests of the benchmark harnesses: a few small models through each.

bench/survey.py runs under this interpreter (it needs transformers); the
Table 2 harness needs the transformers 4.52.4 environment
($GRAPHMEND_TF452_PYTHON or <repo>/.venv-tf452) and is skipped without it.
"""

import json
import os
import subprocess
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BENCH = os.path.join(REPO, "bench")


def _env():
    env = dict(os.environ)
    env["HF_HUB_OFFLINE"] = "1"
    env["TRANSFORMERS_OFFLINE"] = "1"
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in [os.path.join(REPO, "python"), env.get("PYTHONPATH", "")] if p)
    return env


def _read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def test_survey_two_tiny_classes(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    out = tmp_path / "survey.jsonl"
    cmd = [sys.executable, os.path.join(BENCH, "survey.py"), "--out", str(out),
           "--only", "^BioGptForCausalLM$", "--only", "^LlamaModel$", "--modes", "eval,train",
           "--timeout", "600"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=REPO)
    assert p.returncode == 0, p.stderr[-3000:]
    recs = _read_jsonl(out)
    assert sorted((r["class"], r["mode"]) for r in recs) == [
        ("BioGptForCausalLM", "eval"), ("BioGptForCausalLM", "train"),
        ("LlamaModel", "eval"), ("LlamaModel", "train")]
    by = {(r["class"], r["mode"]): r for r in recs}
    for r in recs:
        assert r["status"] == "ok", r
        assert r["inputs"] == "text"
        assert r["input_shapes"]["input_ids"] == [2, 32]
        assert r["graphs"] >= 1
        assert isinstance(r["break_events"], int) and isinstance(r["skipped_frames"], int)
        assert r["fully_traced"] == (r["graphs"] == 1 and r["break_events"] == 0
                                     and r["skipped_frames"] == 0), r
        assert bool(r["reasons"]) == (r["break_events"] > 0), r
        for reason in r["reasons"]:
            assert reason["count"] >= 1 and reason["sites"]
    # Llama is the reference clean model: one graph, no breaks, both modes.
    for m in ("eval", "train"):
        assert by[("LlamaModel", m)]["fully_traced"], by[("LlamaModel", m)]
    # the markdown summary and its JSON twin were written
    md = (tmp_path / "survey.md").read_text()
    assert "classes tried" in md and "Break types (eval)" in md
    summary = json.loads((tmp_path / "survey.summary.json").read_text())
    assert summary["classes_tried"] == 2 and summary["classes_built"] == 2
    meta = json.loads((tmp_path / "survey.meta.json").read_text())
    assert meta["versions"]["transformers"] and meta["runs"][-1]["tasks"] == 2

    # resumable: a second run finds nothing to do and appends nothing
    p = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=REPO)
    assert p.returncode == 0, p.stderr[-3000:]
    assert len(_read_jsonl(out)) == 4
    assert "0 to run" in p.stderr


def test_survey_records_build_errors_as_data(tmp_path):
    """A class that cannot be built is a status, not a crash of the survey."""
    pytest.importorskip("transformers")
    out = tmp_path / "s.jsonl"
    # RagModel needs a question encoder and a generator no default names
    cmd = [sys.executable, os.path.join(BENCH, "survey.py"), "--out", str(out), "--no-summary",
           "--only", "^RagModel$", "--modes", "eval", "--no-warm"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=REPO)
    assert p.returncode == 0, p.stderr[-3000:]
    (r,) = _read_jsonl(out)
    assert r["status"] == "build_error" and r["error"]


def test_survey_eager_only_coverage_pass(tmp_path):
    """--eager-only builds and runs each class eagerly without Dynamo; a
    class without a forward of its own is not a model; a vision-language
    model whose config leaves its image token None still gets image tokens."""
    pytest.importorskip("transformers")
    out = tmp_path / "cov.jsonl"
    cmd = [sys.executable, os.path.join(BENCH, "survey.py"), "--out", str(out), "--no-summary", "--eager-only",
           "--only", "^BarkModel$", "--only", "^Blip2Model$", "--only", "^TimesformerModel$", "--no-warm"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=REPO)
    assert p.returncode == 0, p.stderr[-3000:]
    by = {(r["class"], r["mode"]): r for r in _read_jsonl(out)}
    assert len(by) == 6
    for m in ("eval", "train"):
        assert by[("BarkModel", m)]["status"] == "not_a_model"
        assert by[("BarkModel", m)]["reason"] == "no forward"
        blip = by[("Blip2Model", m)]
        assert blip["status"] == "eager_ok", blip
        assert "image tokens" in blip["inputs"] and "graphs" not in blip
        assert any(n.startswith("image_token_") for n in blip["shrink"]), blip["shrink"]
        video = by[("TimesformerModel", m)]
        assert video["status"] == "eager_ok" and video["input_shapes"]["pixel_values"][1] == 8, video


def test_survey_input_spec_carries_level_and_seq():
    """The mended and arms phases rebuild a class at the level and sequence
    its survey record says (the spec reaches the child as it is)."""
    pytest.importorskip("transformers")
    sys.path.insert(0, BENCH)
    try:
        import survey
    finally:
        sys.path.remove(BENCH)
    spec = survey.input_spec({"inputs": "text", "shrink_level": "layers", "seq": 8})
    assert spec == {"inputs": "text", "level": "layers", "seq": 8}
    assert json.loads(json.dumps(spec)) == spec
    assert survey.input_spec({"inputs": "image"}) == {"inputs": "image", "level": "shrunk", "seq": None}


def test_survey_one_per_module_keeps_the_fastest_class_of_each_module_and_mode(tmp_path):
    sys.path.insert(0, BENCH)
    try:
        import survey
    finally:
        sys.path.remove(BENCH)
    src = tmp_path / "survey.jsonl"
    rows = [("AModel", "m.a", "eval", 3.0), ("AForX", "m.a", "eval", 1.0), ("AModel", "m.a", "train", 2.0),
            ("AForX", "m.a", "train", 5.0), ("BModel", "m.b", "eval", 9.0)]
    src.write_text("".join(json.dumps({"class": c, "module": mod, "mode": m, "status": "ok", "compile_s": t,
                                       "break_events": 1, "skipped_frames": 0}) + "\n" for c, mod, m, t in rows))
    tasks = survey.mended_tasks(str(src), [])
    assert survey.one_per_module(str(src), tasks) == [("AForX", ["eval"]), ("AModel", ["train"]),
                                                       ("BModel", ["eval"])]


def test_hfbuild_levels_cut_only_what_they_say():
    pytest.importorskip("transformers")
    sys.path.insert(0, BENCH)
    try:
        import hfbuild
        import transformers
    finally:
        sys.path.remove(BENCH)
    full, _ = hfbuild.make_config(transformers.LlamaModel, "depth")
    assert full.num_hidden_layers == hfbuild.TARGET_LAYERS
    assert full.hidden_size == transformers.LlamaConfig().hidden_size
    assert full.vocab_size == transformers.LlamaConfig().vocab_size
    layers, _ = hfbuild.make_config(transformers.LlamaModel, "layers")
    assert layers.vocab_size == hfbuild.MAX_VOCAB and layers.hidden_size == full.hidden_size
    shrunk, _ = hfbuild.make_config(transformers.LlamaModel, "shrunk")
    assert shrunk.hidden_size < full.hidden_size
    assert shrunk.hidden_size // shrunk.num_attention_heads == full.hidden_size // full.num_attention_heads
    with pytest.raises(ValueError):
        hfbuild.make_config(transformers.LlamaModel, "nothing")


def _tf452_python():
    py = os.environ.get("GRAPHMEND_TF452_PYTHON") or os.path.join(REPO, ".venv-tf452", "bin", "python")
    return py if os.path.exists(py) else None


def test_table2_biogpt_row(tmp_path):
    py = _tf452_python()
    if py is None:
        pytest.skip("no transformers 4.52.4 environment: set GRAPHMEND_TF452_PYTHON or create "
                    ".venv-tf452 from requirements/bench-tf452.txt")
    out = tmp_path / "t2.json"
    cmd = [sys.executable, os.path.join(BENCH, "table2.py"), "biogpt", "--arms", "original", "--json", str(out),
           "--python", py]
    p = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=REPO)
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    lines = p.stdout.splitlines()
    assert any(line.startswith("biogpt") for line in lines)
    assert any(line.startswith("TOTAL") for line in lines)
    d = json.loads(out.read_text())
    (row,) = d["rows"]
    assert row["status"] == "ok" and row["transformers"] == "4.52.4"
    # BioGPT under 4.52.4: the legacy-cache warning_once breaks the
    # top-level frame and again the inner decoder frame: 2 events, 3 graphs,
    # as the paper and its artifact count.
    assert row["break_events"] == 2 and row["graphs"] == 3
    assert [r["gb_type"] for r in row["reasons"]] == ["logging.Logger method not supported for non-export cases"]
    assert all((r["gb_id"] or "").startswith("GB") for r in row["reasons"])
    assert all(s.startswith("transformers/models/biogpt/") for r in row["reasons"] for s in r["sites"])


def test_table2_rows_are_data():
    sys.path.insert(0, BENCH)
    try:
        import table2
    finally:
        sys.path.remove(BENCH)
    names = [r.name for r in table2.ROWS]
    assert len(names) == len(set(names))
    for must in ("t5", "whisper", "bart", "marian", "biogpt", "blenderbot", "pegasus-causal", "layoutlmv3",
                 "phi3-longrope", "grounding-dino", "longformer", "clap"):
        assert must in names
    assert "original" in table2.LOADERS and "mended" in table2.LOADERS
    assert sum(r.paper[0] for r in table2.ROWS if not r.name.endswith("-fp16")) > 0
    assert sum(r.paper[0] for r in table2.ROWS if r.in_total) == 59
    assert sum(r.paper[1] for r in table2.ROWS if r.in_total) == 14


def test_table2_fresh_inputs_match_dtype_and_shape():
    torch = pytest.importorskip("torch")
    sys.path.insert(0, BENCH)
    try:
        import table2
    finally:
        sys.path.remove(BENCH)
    for r in table2.ROWS:
        first = r.make_inputs(0)
        changed = False
        for seed in (1, 2, 3):
            x = r.make_inputs(seed)
            assert sorted(x) == sorted(first), r.name
            for k, v in x.items():
                assert v.dtype == first[k].dtype and v.shape == first[k].shape, (r.name, k)
                changed |= not torch.equal(v, first[k])
        assert changed, f"{r.name}: fresh inputs equal the row's own"
    # seed 0 reproduces the inputs the committed counts were measured with
    ids = table2.ROW_BY_NAME["biogpt"].make_inputs(0)["input_ids"]
    assert torch.equal(ids, torch.randint(3, 128, (1, 8), generator=torch.Generator().manual_seed(0)))


def test_equiv_compare_and_side_effects():
    torch = pytest.importorskip("torch")
    import logging
    import warnings

    sys.path.insert(0, BENCH)
    try:
        import _equiv as E
    finally:
        sys.path.remove(BENCH)
    a = E.flatten({"logits": torch.ones(2, 3), "ids": torch.arange(4), "past": (torch.zeros(1), None), "n": 3})
    assert set(a) >= {"out.logits", "out.ids", "out.past#len", "out.past[0]", "out.past[1]", "out.n"}
    b = E.flatten({"logits": torch.ones(2, 3) + 1e-6, "ids": torch.arange(4), "past": (torch.zeros(1), None), "n": 3})
    c = E.compare(a, b)
    assert c["identical"] and not c["bitwise"] and c["max_abs_diff"] > 0
    assert E.compare(a, a)["bitwise"]
    d = dict(b, **{"out.ids": torch.tensor([0, 1, 2, 4])})
    assert not E.compare(a, d)["identical"]
    e = dict(b, **{"out.logits": torch.ones(2, 3, dtype=torch.float64)})
    assert not E.compare(a, e)["identical"]
    assert not E.compare(a, dict(b, **{"out.logits": torch.ones(2, 3) * 1.01}))["identical"]

    log = logging.getLogger("bench_smoke_equiv")
    log.setLevel(logging.INFO)
    with E.SideEffects() as se:
        print("hello", 1)
        log.warning("careful %s", "now")
        warnings.warn("deprecated thing", FutureWarning)
    rec = se.record()
    assert [tuple(x) for x in rec["events"]] == [
        ("stdout", "hello 1\n"), ("log", "bench_smoke_equiv", "WARNING", "careful now"),
        ("warning", "FutureWarning", "deprecated thing")]
    with E.SideEffects() as se2:
        print("hello", 1)
        log.warning("careful %s", "later")
        warnings.warn("deprecated thing", FutureWarning)
    cmp = E.compare_side_effects([rec], [se2.record()])
    assert not cmp["identical"] and "later" in cmp["diffs"][0]
    assert E.compare_side_effects([rec], [rec])["identical"]


def _hook_python():
    """The 4.52.4 interpreter, when its graphmend has the import hook."""
    py = _tf452_python()
    if py is None:
        return None
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    p = subprocess.run([py, "-c", "import graphmend, graphmend._core, sys; "
                        "sys.exit(0 if hasattr(graphmend, 'install') else 1)"], capture_output=True, env=env)
    return py if p.returncode == 0 else None


def test_table2_mended_biogpt(tmp_path):
    """One fast row, both arms, counting and outputs: the mended model gives
    what the original gives eagerly (4 inputs, stdout/logs/warnings) and has
    no more breaks; BioGPT's two warning_once breaks are gone."""
    py = _hook_python()
    if py is None:
        pytest.skip("the transformers 4.52.4 environment has no graphmend with the import hook "
                    "(scripts/setup.sh installs it)")
    out = tmp_path / "t2m.json"
    cmd = [sys.executable, os.path.join(BENCH, "table2.py"), "biogpt", "--json", str(out), "--python", py]
    p = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=REPO)
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    (row,) = json.loads(out.read_text())["rows"]
    m = row["mended"]
    assert row["status"] == "ok" and m["status"] == "ok", m.get("stderr_tail", m)
    assert m["load"] == "mended" and m["graphmend"]["has_install"]
    assert m["break_events"] <= row["break_events"]
    assert m["skipped_frames"] <= row["skipped_frames"]
    outs = m["outputs"]
    assert outs["inputs"] >= 4
    assert outs["identical"], outs
    assert outs["compiled_vs_original_eager"]["identical"] and outs["eager_vs_original_eager"]["identical"]
    assert outs["side_effects"]["identical"]
    assert row["control"]["identical"]
    assert m["break_events"] == 0 and m["fully_traced"], m["reasons"]
    assert any(line.startswith("TOTAL") for line in p.stdout.splitlines())


def test_longrope_unsafe_fix_on_both_sides_of_the_switch():
    """GM104's unsafe fix of Phi-3's LongRoPE switch (transformers 4.52.4):
    short, long, short, long, short sequences through one model give the
    original's logits and inv_freq bitwise, eager and compiled; a long input
    compiles to one graph without breaks."""
    py = _hook_python()
    if py is None:
        pytest.skip("the transformers 4.52.4 environment has no graphmend with the import hook "
                    "(scripts/setup.sh installs it)")
    p = subprocess.run([sys.executable, os.path.join(BENCH, "longrope_paths.py"), "--python", py],
                       capture_output=True, text=True, env=_env(), cwd=REPO)
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    mended = json.loads([ln for ln in p.stdout.splitlines() if '"mended"' in ln][-1])
    assert [c["length"] for c in mended["calls"]] == [8, 24, 8, 40, 12]
    assert mended["long_input"] == {"graphs": 1, "break_events": 0}


def test_survey_mended_one_class(tmp_path):
    """--mended re-runs a breaking pair in two fresh interpreters and reports
    before/after, output identity and regressions."""
    pytest.importorskip("transformers")
    env = _env()
    env.pop("PYTHONPATH", None)
    chk = subprocess.run([sys.executable, "-c", "import graphmend, graphmend._core, sys; "
                          "sys.exit(0 if hasattr(graphmend, 'install') else 1)"], capture_output=True, env=env)
    if chk.returncode != 0:
        pytest.skip("this interpreter's graphmend has no import hook")
    src = tmp_path / "survey.jsonl"
    src.write_text(json.dumps({"class": "XLMModel", "mode": "eval", "status": "ok", "inputs": "text",
                               "graphs": 2, "break_events": 1, "skipped_frames": 0, "fully_traced": False,
                               "reasons": [{"gb_type": "Unsupported Tensor.item() call"}]}) + "\n")
    out = tmp_path / "sm.jsonl"
    cmd = [sys.executable, os.path.join(BENCH, "survey.py"), "--mended", "--mended-from", str(src),
           "--mended-out", str(out), "--work", str(tmp_path / "work"), "--no-warm", "--timeout", "600"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=REPO)
    assert p.returncode == 0, p.stderr[-3000:]
    (r,) = _read_jsonl(out)
    assert r["status"] == "ok", r
    assert r["outputs"]["identical"], r["outputs"]
    assert r["after"]["break_events"] <= r["before"]["break_events"]
    assert r["regressions"] == []
    md = (tmp_path / "sm.md").read_text()
    assert "| eval | 1 | 1 |" in md
    assert not (tmp_path / "work").exists()


def test_plot_writes_png(tmp_path):
    pytest.importorskip("matplotlib")
    doc = {"rows": [{"row": "biogpt", "status": "ok", "break_events": 2, "meta": {"paper": [2, 0], "in_total": True},
                     "mended": {"status": "ok", "break_events": 0},
                     "timing": {"default": {"cold": {"speedup": 1.2, "aa_spread": 1.1},
                                            "steady": {"speedup": 0.9, "aa_spread": 1.05}}}}],
           "timing": {"on": True, "modes": ["default"], "device": "cpu", "reps": 2},
           "total": {"before": 2, "after": 0, "removed_frac": 1.0, "paper_before": 2, "paper_after": 0}}
    src = tmp_path / "t.json"
    src.write_text(json.dumps(doc))
    png = tmp_path / "t.png"
    p = subprocess.run([sys.executable, os.path.join(BENCH, "plot.py"), str(src), "-o", str(png)],
                       capture_output=True, text=True, env=_env(), cwd=REPO)
    assert p.returncode == 0, p.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _bench_import(name):
    sys.path.insert(0, BENCH)
    try:
        return __import__(name)
    finally:
        sys.path.remove(BENCH)


def _arm_rec(cls, mode, arm, breaks, verdict="identical", sites=("m.py:1",), status="ok"):
    if status != "ok":
        return {"class": cls, "mode": mode, "arm": arm, "status": status, "error": "boom"}
    return {"class": cls, "mode": mode, "arm": arm, "status": "ok", "verdict": verdict,
            "counts": {"break_events": breaks, "skipped_frames": 0, "graphs": breaks + 1,
                       "fully_traced": breaks == 0},
            "reasons": [{"gb_type": "Unsupported Tensor.item() call", "count": breaks, "sites": list(sites)}]
            if breaks else []}


def test_arms_tables_are_consistent(tmp_path):
    A = _bench_import("arms")
    assert A.parse_arms("switches,safe") == ["original", "switches", "safe"]
    with pytest.raises(ValueError):
        A.parse_arms("original,bogus")
    recs = [_arm_rec("A", "eval", "original", 3), _arm_rec("A", "eval", "switches", 0, "arm-compile-difference"),
            _arm_rec("A", "eval", "safe", 1),
            _arm_rec("B", "eval", "original", 2), _arm_rec("B", "eval", "switches", 2),
            _arm_rec("B", "eval", "safe", 0, status="crash"),
            # a superseded record (a retry) is replaced by the last one
            _arm_rec("B", "eval", "safe", 9), _arm_rec("B", "eval", "safe", 2)]
    s = A.write(recs, str(tmp_path / "arms.md"), {"source": "x", "fresh_inputs": 3})
    e = s["modes"]["eval"]["arms"]
    assert e["original"]["break_events"] == 5 and e["original"]["compared"] == 2
    assert e["switches"]["break_events"] == 2 and e["switches"]["removed_frac"] == 0.6
    assert e["safe"]["break_events"] == 3 and e["safe"]["original_break_events"] == 5
    assert e["switches"]["break_free"] == 1 and e["switches"]["break_free_classes"] == ["A"]
    assert e["switches"]["findings"] == ["A: arm-compile-difference"]
    types = s["modes"]["eval"]["break_types"]["Unsupported Tensor.item() call"]
    assert types == {"original": 5, "switches": 2, "safe": 3}
    assert s["modes"]["eval"]["sites"]["m.py:1"]["original"] == 5
    md = (tmp_path / "arms.md").read_text()
    assert "| eval | switches | 2 | 2 | 2 | 2 | 60% |" in md
    assert json.loads((tmp_path / "arms.summary.json").read_text())["arms"] == ["original", "switches", "safe"]
    # an arm run in one mode only leaves the other mode's tables as they were
    more = recs + [_arm_rec("A", "train", "original", 4), _arm_rec("A", "train", "safe", 1)]
    t = A.write(more, str(tmp_path / "arms2.md"), {"source": "x", "fresh_inputs": 3})["modes"]["train"]
    assert t["arms_run"] == ["original", "safe"] and t["common"] == 1
    assert t["break_types"]["Unsupported Tensor.item() call"] == {"original": 4, "safe": 1}
    assert "| train | switches |" not in (tmp_path / "arms2.md").read_text()
    # verdicts: the arm's own compile differs vs Dynamo's pre-existing difference
    ok = {"identical": True}
    bad = {"identical": False}
    assert A.verdict({"identical": True}) == "identical"
    assert A.verdict({"identical": False, "eager_vs_original_eager": ok, "side_effects": ok,
                      "compiled_vs_own_eager": bad}) == "arm-compile-difference"
    assert A.verdict({"identical": False, "eager_vs_original_eager": ok, "side_effects": ok,
                      "compiled_vs_original_compiled": ok, "compiled_vs_own_eager": bad}) == "dynamo-difference"
    assert A.verdict({"identical": False, "eager_vs_original_eager": bad, "side_effects": ok}) == "differs"
    # a warning only the compiled run emits: Dynamo's when the original
    # compiled emits it too, the arm's when it does not; the eager program's
    # own side effects must be the original's
    warns = {"identical": True, "eager_vs_original_eager": ok, "compiled_vs_original_compiled": ok,
             "side_effects": bad, "eager_side_effects": ok, "compiled_side_effects_vs_original_compiled": ok}
    assert A.verdict({**warns, "identical": False}) == "dynamo-difference"
    assert A.verdict({**warns, "identical": False, "compiled_side_effects_vs_original_compiled": bad}) \
        == "arm-compile-difference"
    assert A.verdict({**warns, "identical": False, "eager_side_effects": bad}) == "differs"


def test_arms_setup_sets_dynamo_switches():
    pytest.importorskip("torch")
    code = ("import sys; sys.path.insert(0, %r); import arms; d = arms.setup_arm('safe+switches', packages=('nopkg_x',)); "
            "import torch._dynamo.config as c; assert c.capture_scalar_outputs and c.capture_dynamic_output_shape_ops; "
            "assert not c.nested_graph_breaks; import graphmend.hook as h; assert h.installed() is not None; "
            "arms.setup_arm('nested'); assert c.nested_graph_breaks; print('ok')" % BENCH)
    env = _env()
    env.pop("PYTHONPATH", None)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if "has no install" in p.stderr:
        pytest.skip("this interpreter's graphmend has no import hook")
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr[-2000:]


def test_survey_arms_one_breaking_class(tmp_path):
    """--arms on a tiny breaking pair: the original arm breaks (XLM's
    Tensor.item()), Dynamo's switches capture it, every arm gives the
    original's eager outputs, and a rerun finds nothing to do."""
    pytest.importorskip("transformers")
    src = tmp_path / "survey.jsonl"
    src.write_text(json.dumps({"class": "XLMModel", "mode": "eval", "status": "ok", "inputs": "text",
                               "graphs": 2, "break_events": 1, "skipped_frames": 0, "fully_traced": False,
                               "reasons": []}) + "\n")
    out = tmp_path / "arms.jsonl"
    cmd = [sys.executable, os.path.join(BENCH, "survey.py"), "--arms", "original,switches", "--mended-from",
           str(src), "--arms-out", str(out), "--work", str(tmp_path / "work"), "--no-warm", "--timeout", "600"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=REPO)
    assert p.returncode == 0, p.stderr[-3000:]
    recs = {r["arm"]: r for r in _read_jsonl(out)}
    assert sorted(recs) == ["original", "switches"]
    assert all(r["status"] == "ok" for r in recs.values()), recs
    assert recs["original"]["counts"]["break_events"] >= 1
    assert recs["switches"]["counts"]["break_events"] < recs["original"]["counts"]["break_events"]
    assert all(r["verdict"] == "identical" for r in recs.values()), [r["outputs"] for r in recs.values()]
    # the original arm is the control every later arm records (no second compile of the original)
    assert all(r["control"]["identical"] for r in recs.values()), [r["control"] for r in recs.values()]
    assert recs["switches"]["outputs"]["compiled_vs_original_compiled"]["identical"]
    s = json.loads((tmp_path / "arms.summary.json").read_text())
    assert s["modes"]["eval"]["arms"]["original"]["break_events"] == recs["original"]["counts"]["break_events"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=REPO)
    assert p.returncode == 0 and "0 (class, mode, arm) to run" in p.stderr, p.stderr[-2000:]
    assert len(_read_jsonl(out)) == 2


def test_hfbuild_keeps_every_layer_kind_and_repairs_configs():
    pytest.importorskip("transformers")
    H = _bench_import("hfbuild")
    assert H._kinds_pattern(["mamba"] * 4 + ["attention"] + ["mamba"] * 3, 2) == ["mamba", "attention"]
    assert H._kinds_pattern("MMM*MM-", 2) == "M*-"
    assert H._kinds_pattern(["full"] * 6, 2) == ["full", "full"]
    import transformers

    # Jamba's attention layer sits at offset 4 of every 8: after shrinking
    # there is still one, and the model runs with a cache
    m, notes = H.build(transformers.JambaModel)
    c = m.config
    kinds = {c.layers_block_type[i] if hasattr(c, "layers_block_type") else None for i in range(c.num_hidden_layers)}
    assert "attention" in kinds, (notes, kinds)
    # DETR's default timm backbone (timm is not installed) becomes a ResNet
    import importlib.util

    if importlib.util.find_spec("timm") is None:
        m, notes = H.build(transformers.DetrModel)
        assert m.config.backbone_config.model_type == "resnet", notes
        assert any("timm->resnet" in n for n in notes)


def test_hfbuild_vlm_inputs_carry_image_tokens():
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    H = _bench_import("hfbuild")
    import transformers

    m, _ = H.build(transformers.LlavaForConditionalGeneration)
    m.eval()
    label, x = H.input_variants(m)[0]
    assert "image tokens" in label and x["pixel_values"].dim() == 4
    n = int((x["input_ids"] == m.config.image_token_id).sum())
    per = int(label.split("+")[-1].split()[0])
    assert n == per * x["input_ids"].shape[0] > 0
    # the model itself checks that image tokens and image features match
    with torch.no_grad():
        m(**x)
    bad = dict(x, input_ids=x["input_ids"].clone())
    bad["input_ids"][:, 2] = 5
    with pytest.raises(Exception):
        with torch.no_grad():
            m(**bad)
    # a layout model gets valid boxes
    m, _ = H.build(transformers.LayoutLMModel)
    label, x = H.input_variants(m)[0]
    assert "bbox" in x and bool((x["bbox"][..., 2] >= x["bbox"][..., 0]).all())
    # a time-series model gets its past values, time features and mask
    m, _ = H.build(transformers.TimeSeriesTransformerModel)
    label, x = H.input_variants(m)[0]
    assert {"past_values", "past_time_features", "past_observed_mask"} <= set(x)


def test_plot_arms_writes_png(tmp_path):
    pytest.importorskip("matplotlib")
    doc = {"arms": ["original", "switches", "safe"], "modes": {
        "eval": {"arms": {"original": {"break_events": 5}, "switches": {"break_events": 2},
                          "safe": {"break_events": 3}}}}, "meta": {"note": "sample"}}
    src = tmp_path / "arms.summary.json"
    src.write_text(json.dumps(doc))
    P = _bench_import("plot")
    assert P.is_arms_doc(doc)
    groups, arms, vals = P.arms_series(doc)
    assert groups == ["eval"] and vals["switches"] == [2]
    # an arm that ran fewer pairs is drawn against the original on those pairs
    doc["modes"]["eval"]["arms"]["switches"]["original_break_events"] = 4
    doc["modes"]["eval"]["arms"]["safe"]["original_break_events"] = 5
    assert P.original_on_same_pairs(doc, groups, arms) == {"switches": [4]}
    png = tmp_path / "arms.png"
    p = subprocess.run([sys.executable, os.path.join(BENCH, "plot.py"), str(src), "-o", str(png)],
                       capture_output=True, text=True, env=_env(), cwd=REPO)
    assert p.returncode == 0, p.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_table2_vision_rows_and_render():
    T = _bench_import("table2_vision")
    assert set(T.ROWS) == {"fasterrcnn", "maskrcnn", "keypointrcnn", "retinanet", "ssd", "fcos", "googlenet",
                           "inception_v3"}
    doc = {"arms": ["original", "switches"], "versions": {"torch": "2.13.0+cpu", "torchvision": "0.28.0"},
           "rows": {"fcos": {"original": {"status": "ok", "break_events": 4, "graphs": 5, "verdict":
                                          "control identical", "reasons": [{"gb_type": "t", "count": 4}]},
                             "switches": {"status": "ok", "break_events": 1, "graphs": 2,
                                          "verdict": "arm-compile-difference"}}}}
    txt = T.render(doc)
    assert "fcos" in txt and "switches: arm-compile-difference" in txt
    assert [ln for ln in txt.splitlines() if ln.startswith("TOTAL")][0].split()[1:] == ["4", "1"]
    doc["rows"]["fcos"]["switches"] = {"status": "compile_error", "error": "RuntimeError: assert",
                                       "verdict": "compiled raises: RuntimeError: assert"}
    txt = T.render(doc)
    assert [ln for ln in txt.splitlines() if ln.startswith("TOTAL")][0].split()[1:] == ["4", "0+1", "n/a"]
    assert "switches: compiled raises" in txt


def test_table2_vision_model_runs_where_torchvision_imports():
    torch = pytest.importorskip("torch")
    T = _bench_import("table2_vision")
    tv_mod = _bench_import("_tv")
    try:
        tv_mod.import_torchvision()
    except RuntimeError as e:
        pytest.skip(str(e))
    m = T.build("googlenet")
    (x,) = T.make_inputs("cls224", 0)
    with torch.no_grad():
        y = m(x)
    assert y.shape == (1, 1000)
    (imgs,) = T.make_inputs("det", 1)
    assert len(imgs) == 2 and imgs[0].shape != imgs[1].shape


def test_moe_switches_one_model(tmp_path):
    """bench/moe_switches.py's child on transformers 5.18 Mixtral with the
    eager experts loop: the switches alone leave breaks, GM409 (unsafe) with
    the switches one graph, the logits the original's."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    sys.path.insert(0, BENCH)
    import moe_switches

    venv, name, config, kwargs = moe_switches.MODELS[0]
    assert (venv, name) == (".venv", "mixtral")
    if os.path.realpath(sys.prefix) != os.path.realpath(os.path.join(REPO, venv)):
        pytest.skip("needs the project's .venv")
    reference = str(tmp_path / "reference.pt")
    got = {arm: moe_switches.run(venv, config, kwargs, arm, reference)
           for arm in ("original", "switches", "unsafe+switches")}
    assert all(r.get("equal") for r in got.values()), got
    assert got["switches"]["break_events"] > 0
    assert got["unsafe+switches"]["graphs"] == 1 and got["unsafe+switches"]["break_events"] == 0
