#!/usr/bin/env bash
# Set up everything on a fresh machine: the virtual environment .venv with
# graphmend and the pinned development dependencies, the system packages the
# C++ tests need, and the benchmark environment for transformers 4.52.4.
# Idempotent: a second run only rebuilds what changed.
#
#   scripts/setup.sh            # everything
#   scripts/setup.sh --no-bench # skip the transformers 4.52.4 environment
set -euo pipefail
cd "$(dirname "$0")/.."

want_bench=1
for arg in "$@"; do
  case "$arg" in
    --no-bench) want_bench=0 ;;
    *) echo "setup.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done

python=${GRAPHMEND_PYTHON:-}
if [ -z "$python" ]; then
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then python=$candidate; break; fi
  done
fi

log() { printf '\033[1m[setup]\033[0m %s\n' "$*"; }

# System packages for the C++ test suite and the fuzzer (Debian).
need_apt=()
[ -d /usr/include/gtest ] || need_apt+=(libgtest-dev)
command -v clang++ >/dev/null 2>&1 || need_apt+=(clang)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    log "installing ${need_apt[*]} (apt)"
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    log "warning: missing ${need_apt[*]}; C++ tests or the fuzzer will be skipped"
  fi
fi

if [ ! -x .venv/bin/python ]; then
  log "creating .venv with $python"
  "$python" -m venv .venv
fi
log "installing pinned development dependencies into .venv"
.venv/bin/python -m pip install -q --disable-pip-version-check -r requirements/dev.txt
log "building and installing graphmend into .venv"
.venv/bin/python -m pip install -q --disable-pip-version-check --no-build-isolation \
  --no-deps .

# torchvision for the Table 2 vision rows (bench/table2_vision.py): the
# release that matches torch 2.13.0, with --no-deps so that it can never pull
# a CUDA torch, into its own directory outside site-packages (transformers
# imports torchvision whenever it can; the survey measures it without). PyPI's
# wheel is built against the CUDA torch, so its C++ ops need two CUDA
# libraries a CPU torch lacks: stubs for the CUDA entry points, never reached
# on CPU tensors (scripts/torchvision_cpu_stubs.py; bench/_tv.py loads them).
if [ "$want_bench" = 1 ]; then
  tvdir=.venv/lib/torchvision-0.28.0
  if [ ! -f "$tvdir/torchvision-0.28.0.dist-info/METADATA" ]; then
    log "installing torchvision 0.28.0 into $tvdir (--no-deps, keeps torch 2.13.0)"
    rm -rf "$tvdir"
    .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps --target "$tvdir" torchvision==0.28.0
  fi
  PYTHONPATH="$tvdir" .venv/bin/python scripts/torchvision_cpu_stubs.py "$tvdir/cpu-stubs" >/dev/null
  .venv/bin/python -c 'import sys; sys.path.insert(0, "bench"); import _tv; _tv.import_torchvision()' \
    || log "warning: torchvision's ops do not load; bench/table2_vision.py will say why"
fi

if [ "$want_bench" = 1 ] && [ -f requirements/bench-tf452.txt ]; then
  if [ ! -x .venv-tf452/bin/python ]; then
    log "creating .venv-tf452 (transformers 4.52.4, the paper's version)"
    "$python" -m venv .venv-tf452
  fi
  .venv-tf452/bin/python -m pip install -q --disable-pip-version-check -r requirements/bench-tf452.txt
  # graphmend itself (its import hook mends transformers in the "mended" arm
  # of bench/table2.py): the wheel built by .venv's toolchain when both
  # interpreters share a CPython tag (the same build directory, so this is
  # incremental), else a build with .venv-tf452's own build requirements.
  log "installing graphmend into .venv-tf452"
  tag_main=$(.venv/bin/python -c 'import sys; print(sys.implementation.cache_tag)')
  tag_bench=$(.venv-tf452/bin/python -c 'import sys; print(sys.implementation.cache_tag)')
  if [ "$tag_main" = "$tag_bench" ]; then
    rm -rf build/wheels-tf452
    .venv/bin/python -m pip wheel -q --disable-pip-version-check --no-build-isolation --no-deps . \
      -w build/wheels-tf452
    .venv-tf452/bin/python -m pip install -q --disable-pip-version-check --no-deps --force-reinstall \
      build/wheels-tf452/graphmend-*.whl
  else
    .venv-tf452/bin/python -m pip install -q --disable-pip-version-check \
      "scikit-build-core>=0.10" "nanobind>=2.0" "cmake>=3.20" ninja
    .venv-tf452/bin/python -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps .
  fi
fi
log "done: .venv/bin/graphmend is ready"
