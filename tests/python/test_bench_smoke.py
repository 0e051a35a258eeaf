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
    # T5GemmaEncoderModel refuses a default (encoder-decoder) config
    cmd = [sys.executable, os.path.join(BENCH, "survey.py"), "--out", str(out), "--no-summary",
           "--only", "^T5GemmaEncoderModel$", "--modes", "eval"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=_env(), cwd=REPO)
    assert p.returncode == 0, p.stderr[-3000:]
    (r,) = _read_jsonl(out)
    assert r["status"] == "build_error" and r["error"]


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
