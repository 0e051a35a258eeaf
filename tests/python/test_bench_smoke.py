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
        assert r["break_events"] >= 0 and r["skipped_frames"] >= 0
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
    cmd = [sys.executable, os.path.join(BENCH, "table2.py"), "biogpt", "--json", str(out), "--python", py]
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
    assert "original" in table2.LOADERS
    assert sum(r.paper[0] for r in table2.ROWS if not r.name.endswith("-fp16")) > 0
