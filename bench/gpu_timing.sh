#!/usr/bin/env bash
# Table 2 timing on a CUDA machine: ONE prepared script (not yet run; no
# result from it is committed).  It runs the rows of bench/table2.py, both
# arms (original transformers 4.52.4 and graphmend.install-mended), each
# measurement in a fresh process with an empty Inductor/Triton cache:
# cold start (first call incl. compile) with torch.compile mode "default"
# and mode "reduce-overhead" (CUDA graphs), and steady state (median of the
# later calls).  Everything it writes goes to $OUT (default
# bench/.cache/gpu_out): table2_gpu.json, table2_gpu.txt, env.json and the
# log.  It needs no network:
#
#   * torch with CUDA: an existing interpreter ($GM_PYTHON, python3, python)
#     whose torch sees a GPU; torch cannot travel (GBs), so without one the
#     script records "no torch with CUDA" and stops;
#   * transformers 4.52.4 and its dependencies: already importable, else
#     installed into a --system-site-packages venv (reusing that torch) from
#     the wheelhouse carried along (bench/make_wheelhouse.sh builds it here,
#     27 MiB, under bench/.cache/wheelhouse, an ignored path);
#   * graphmend with its compiled extension: already importable, else the
#     wheel from the wheelhouse (cp311), else built from this source tree
#     (needs cmake and a C++20 compiler there; scikit-build-core, nanobind
#     and ninja come from the wheelhouse); without it the mended arm is a
#     recorded error and the original arm is still measured.
#
# Total time is bounded by $GM_GPU_BUDGET_S (default 470 s, i.e. within 8
# minutes with the setup): table2.py starts no measurement after its budget;
# rows are ordered so that the rows the paper fixes fully come first.
#
#   bash bench/gpu_timing.sh                      # here: refuses without CUDA
#   (device machine) run: command "bash bench/gpu_timing.sh",
#                         carry ["bench/.cache/wheelhouse"], timeout_s 560
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
OUT=${OUT:-$repo/bench/.cache/gpu_out}
mkdir -p "$OUT"
budget=${GM_GPU_BUDGET_S:-470}
wheels=${GM_WHEELHOUSE:-$repo/bench/.cache/wheelhouse}
jobs=${GM_GPU_JOBS:-4}
reps=${GM_GPU_REPS:-1}
rows=${GM_GPU_ROWS:-"biogpt t5 whisper bart marian blenderbot pegasus-causal layoutlmv3 phi3-longrope longformer clap bart-fp16 marian-fp16 grounding-dino"}
t_start=$(date +%s)
log() { printf '[gpu_timing %4ss] %s\n' "$(( $(date +%s) - t_start ))" "$*" | tee -a "$OUT/gpu_timing.log" >&2; }
elapsed() { echo $(( $(date +%s) - t_start )); }
finish() {  # status json, then exit with $2
  "${py:-python3}" - "$OUT/env.json" "$1" <<'EOF' 2>/dev/null || printf '{"status": "%s"}\n' "$1" > "$OUT/env.json"
import json, os, sys
path, status = sys.argv[1], sys.argv[2]
d = json.load(open(path)) if os.path.exists(path) else {}
d["status"] = status
json.dump(d, open(path, "w"), indent=1)
EOF
  log "status: $1"
  exit "$2"
}

log "start: budget ${budget}s, rows: $rows"
nvidia-smi -L > "$OUT/nvidia-smi.txt" 2>&1 || true
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv >> "$OUT/nvidia-smi.txt" 2>&1 || true

# 1. an interpreter whose torch sees a GPU (GM_GPU_DEVICE=cpu: a dry run of
#    everything else on a machine without one)
device=${GM_GPU_DEVICE:-cuda}
if [ "$device" = cuda ]; then
  probe="import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"
  modes=${GM_GPU_MODES:-default,reduce-overhead}
else
  probe="import torch"
  modes=${GM_GPU_MODES:-default}
fi
py=""
for cand in ${GM_PYTHON:-} python3 python /opt/conda/bin/python /usr/bin/python3; do
  [ -n "$cand" ] || continue
  command -v "$cand" >/dev/null 2>&1 || [ -x "$cand" ] || continue
  if "$cand" -c "$probe" >/dev/null 2>&1; then
    py=$(command -v "$cand" || echo "$cand"); break
  fi
done
if [ -z "$py" ]; then
  printf '{"measured": false, "reason": "no python whose torch sees a CUDA device"}\n' > "$OUT/env.json"
  finish "no torch with CUDA" 3
fi
"$py" - "$OUT/env.json" "$device" <<'EOF'
import json, platform, sys, torch
cuda = sys.argv[2] == "cuda"
json.dump({"measured": False, "python": sys.executable, "python_version": platform.python_version(),
           "torch": torch.__version__, "cuda": torch.version.cuda, "device": sys.argv[2],
           "gpu": torch.cuda.get_device_name(0) if cuda else None,
           "torch_is_2_13_0": torch.__version__.split("+")[0] == "2.13.0"}, open(sys.argv[1], "w"), indent=1)
EOF
log "python: $py ($("$py" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'))"

# 2. transformers 4.52.4: installed into a --target directory put first on
#    PYTHONPATH (works whatever the interpreter is: system, conda or venv);
#    the four packages whose versions transformers checks are always taken
#    from the wheelhouse, the others only when missing
target=${GM_GPU_TARGET:-/tmp/gm-gpu-site}
export PYTHONPATH="$target${PYTHONPATH:+:$PYTHONPATH}"
if ! "$py" -c "import transformers, sys; sys.exit(0 if transformers.__version__ == '4.52.4' else 1)" >/dev/null 2>&1; then
  if [ ! -d "$wheels" ]; then finish "no transformers 4.52.4 and no wheelhouse at $wheels" 4; fi
  pkgs=(transformers==4.52.4 "tokenizers>=0.21,<0.22" "huggingface_hub>=0.30,<1.0" "safetensors>=0.4.3")
  for pair in regex:regex yaml:PyYAML tqdm:tqdm requests:requests urllib3:urllib3 idna:idna certifi:certifi \
              charset_normalizer:charset-normalizer filelock:filelock fsspec:fsspec packaging:packaging \
              typing_extensions:typing_extensions hf_xet:hf-xet numpy:numpy; do
    "$py" -c "import ${pair%%:*}" >/dev/null 2>&1 || pkgs+=("${pair#*:}")
  done
  log "installing into $target from $wheels: ${pkgs[*]}"
  mkdir -p "$target"
  "$py" -m pip install -q --disable-pip-version-check --no-index --find-links "$wheels" --no-deps \
    --target "$target" --upgrade "${pkgs[@]}" >>"$OUT/gpu_timing.log" 2>&1 \
    || finish "pip install transformers from the wheelhouse failed" 4
fi
"$py" -c "import transformers, sys; sys.exit(0 if transformers.__version__ == '4.52.4' else 1)" \
  || finish "transformers 4.52.4 is not importable after the install" 4
log "transformers: $("$py" -c 'import transformers; print(transformers.__version__, transformers.__file__)')"

# 3. graphmend with its extension and the hook
gm_ok() { "$py" -c "import graphmend._core, graphmend.hook, graphmend.judge" >/dev/null 2>&1; }
if ! gm_ok || [ "${GM_GPU_FORCE_GM_INSTALL:-0}" = 1 ]; then
  log "installing graphmend into $target (wheel from the wheelhouse, else a source build)"
  "$py" -m pip install -q --disable-pip-version-check --no-index --find-links "$wheels" --no-deps \
    --target "$target" --upgrade graphmend >>"$OUT/gpu_timing.log" 2>&1 || true
  if ! gm_ok && command -v cmake >/dev/null 2>&1; then
    "$py" -m pip install -q --disable-pip-version-check --no-index --find-links "$wheels" --no-deps \
      --target "$target" --upgrade scikit-build-core nanobind ninja pathspec packaging \
      >>"$OUT/gpu_timing.log" 2>&1 || true
    CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) timeout 240 "$py" -m pip install -q --disable-pip-version-check \
      --no-index --find-links "$wheels" --no-build-isolation --no-deps --target "$target" --upgrade "$repo" \
      >>"$OUT/gpu_timing.log" 2>&1 || true
  fi
fi
if gm_ok; then
  log "graphmend: $("$py" -c 'import graphmend, os; print(os.path.dirname(graphmend.__file__))')"
else
  log "graphmend with its extension is not importable: the mended arm will be recorded as an error"
fi

# 4. the timing rows, within what is left of the budget
left=$(( budget - $(elapsed) - 15 ))
if [ "$left" -lt 60 ]; then finish "setup used the budget" 5; fi
log "table2 timing: ${left}s, jobs $jobs, reps $reps, modes $modes, device $device"
# shellcheck disable=SC2086
timeout $(( left + 40 )) "$py" bench/table2.py $rows --python "$py" --timing --no-count --device "$device" \
  --modes "$modes" --reps "$reps" --jobs "$jobs" --compile-threads 4 --warmup 10 --iters 50 \
  --lock "$OUT/gpu.lock" --budget "$left" --timeout 240 \
  --json "$OUT/table2_gpu.json" --txt "$OUT/table2_gpu.txt" >>"$OUT/gpu_timing.log" 2>&1
rc=$?
"$py" - "$OUT/env.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["measured"] = True
json.dump(d, open(sys.argv[1], "w"), indent=1)
EOF
[ -f "$OUT/table2_gpu.txt" ] && cat "$OUT/table2_gpu.txt"
finish "done (table2.py exit $rc)" 0
