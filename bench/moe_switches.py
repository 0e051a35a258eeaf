"""The eager mixture-of-experts loop under Dynamo's switches, with and
without GM409: whole transformers MoE models (random weights, small
configs), each arm in a fresh interpreter.

    python bench/moe_switches.py [--json OUT] [--txt OUT]

Models: transformers 5.18 (``.venv``) Mixtral, Qwen3-MoE, OLMoE, Qwen2-MoE,
PhiMoE, DeepSeek-V3, GraniteMoE and MiniMax built with
``experts_implementation="eager"`` (the loop GM409 mends; the default,
``grouped_mm``, does not loop), and transformers 4.52.4 (``.venv-tf452``)
Mixtral and Qwen2-MoE (their only experts code is the loop, over
``nonzero(as_tuple=True)[0].tolist()``). Arms: ``original``; ``switches``
(``capture_scalar_outputs`` + ``capture_dynamic_output_shape_ops``);
``safe`` (``graphmend.install()``: GM409's fixes whose runtime checks cover
what the body needs), ``safe+switches``, ``unsafe``
(``graphmend.install(unsafe=True)``), ``unsafe+switches``. Each child compiles the model with a counting backend
and prints graphs, graph-break events (Dynamo's ``graph_break`` and
``unimplemented`` counters), skipped frames and whether the logits equal,
bitwise, the original run eagerly (saved by the ``original`` arm's child on
the same inputs), or the exception compilation raised.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common as C  # noqa: E402

ARMS = ["original", "switches", "safe", "safe+switches", "unsafe", "unsafe+switches"]

# (venv, name, config class, config kwargs)
MODELS = [
    (".venv", "mixtral", "MixtralConfig", {"num_local_experts": 4, "num_experts_per_tok": 2}),
    (".venv", "qwen3_moe", "Qwen3MoeConfig", {"num_experts": 4, "num_experts_per_tok": 2,
                                             "moe_intermediate_size": 32}),
    (".venv", "olmoe", "OlmoeConfig", {"num_experts": 4, "num_experts_per_tok": 2}),
    (".venv", "qwen2_moe", "Qwen2MoeConfig", {"num_experts": 4, "num_experts_per_tok": 2,
                                             "moe_intermediate_size": 32,
                                             "shared_expert_intermediate_size": 32}),
    (".venv", "phimoe", "PhimoeConfig", {"num_local_experts": 4, "num_experts_per_tok": 2}),
    (".venv", "deepseek_v3", "DeepseekV3Config", {
        "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
        "first_k_dense_replace": 0, "n_group": 1, "topk_group": 1, "kv_lora_rank": 8,
        "q_lora_rank": 8, "qk_rope_head_dim": 4, "qk_nope_head_dim": 4, "v_head_dim": 8}),
    (".venv", "granitemoe", "GraniteMoeConfig", {"num_local_experts": 4, "num_experts_per_tok": 2}),
    (".venv", "minimax", "MiniMaxConfig", {"num_local_experts": 4, "num_experts_per_tok": 2}),
    (".venv-tf452", "mixtral", "MixtralConfig", {"num_local_experts": 4, "num_experts_per_tok": 2}),
    (".venv-tf452", "qwen2_moe", "Qwen2MoeConfig", {"num_experts": 4, "num_experts_per_tok": 2,
                                                   "moe_intermediate_size": 32,
                                                   "shared_expert_intermediate_size": 32}),
]

CHILD = r"""
import json, sys, torch
arm, config_name, kwargs, reference = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
if arm.startswith(("safe", "unsafe")):
    import graphmend
    graphmend.install(packages=["transformers"], unsafe=arm.startswith("unsafe"))
import torch._dynamo.config as dc
if arm.endswith("switches"):
    dc.capture_scalar_outputs = dc.capture_dynamic_output_shape_ops = True
import transformers
from torch._dynamo.utils import counters
common = dict(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
              num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64)
common.update(kwargs)
try:
    config = getattr(transformers, config_name)(experts_implementation="eager", **common)
except TypeError:
    config = getattr(transformers, config_name)(**common)
torch.manual_seed(0)
model = transformers.AutoModelForCausalLM.from_config(config).eval()
ids = torch.randint(0, 64, (2, 7), generator=torch.Generator().manual_seed(1))
out = {"arm": arm, "transformers": transformers.__version__}
if arm == "original":
    torch.save(model(input_ids=ids).logits, reference)
want = torch.load(reference)
graphs = []
def backend(gm, example_inputs):
    graphs.append(gm)
    return gm.forward
torch._dynamo.reset(); counters.clear()
try:
    logits = torch.compile(model, backend=backend)(input_ids=ids).logits
    out["equal"] = bool(torch.equal(logits, want))
except Exception as error:
    out["error"] = type(error).__name__ + ": " + str(error).splitlines()[0][:160]
out["graphs"] = len(graphs)
out["break_events"] = sum(counters["graph_break"].values()) + sum(counters["unimplemented"].values())
out["skipped_frames"] = sum(1 for k in counters["unimplemented"] if "frame skipped" in k)
print(json.dumps(out))
"""


def run(venv: str, config: str, kwargs: dict, arm: str, reference: str) -> dict:
    python = os.path.join(C.REPO, venv, "bin", "python")
    env = C.without_source_tree(C.set_offline_env(dict(os.environ)))
    proc = subprocess.run([python, "-c", CHILD, arm, config, json.dumps(kwargs), reference],
                          capture_output=True, text=True, env=env, cwd=C.REPO, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode != 0 or not lines:
        return {"arm": arm, "error": "child failed: " + proc.stderr.strip().splitlines()[-1][:200]}
    return json.loads(lines[-1])


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--json", default=os.path.join(C.RESULTS, "moe_switches.json"))
    p.add_argument("--txt", default=os.path.join(C.RESULTS, "moe_switches.txt"))
    args = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for venv, name, config, kwargs in MODELS:
            if not os.path.exists(os.path.join(C.REPO, venv, "bin", "python")):
                print(f"{venv} missing: {name} skipped (scripts/setup.sh makes it)", file=sys.stderr)
                continue
            reference = os.path.join(tmp, f"{venv.strip('.')}_{name}.pt")
            for arm in ARMS:
                rec = run(venv, config, kwargs, arm, reference)
                rec.update(venv=venv, model=name)
                rows.append(rec)
                print(json.dumps(rec), flush=True)
    with open(args.json, "w") as f:
        json.dump({"versions": C.versions(), "git": C.git_describe(), "rows": rows}, f, indent=1)
    lines = ["# bench/moe_switches.py: whole MoE models, eager experts loop, counting backend",
             "", "| transformers | model | arm | graphs | break events | skipped frames | logits |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        verdict = r.get("error") or ("bitwise equal" if r.get("equal") else "DIFFER")
        lines.append(f"| {r.get('transformers', r['venv'])} | {r['model']} | {r['arm']} | {r.get('graphs', '')} "
                     f"| {r.get('break_events', '')} | {r.get('skipped_frames', '')} | {verdict} |")
    with open(args.txt, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
