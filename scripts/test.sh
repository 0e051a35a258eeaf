#!/usr/bin/env bash
# Run every test: set up what is missing, lint (clang-format, ruff), build
# the C++ core and its GoogleTest suite (ctest), run the Python tests (pytest,
# including the differential sample against every CPython on the machine), then the
# sanitizer build (ASan + UBSan) of the C++ tests and a short fuzzing run.
#
#   scripts/test.sh            # everything (what CI runs)
#   GRAPHMEND_QUICK=1 scripts/test.sh   # skip sanitizers and fuzzing
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\033[1m[test]\033[0m %s\n' "$*"; }

scripts/setup.sh

export PATH="$PWD/.venv/bin:$PATH"
jobs=$(nproc 2>/dev/null || echo 2)

log "lint: clang-format (C++, .clang-format), ruff (Python, pyproject.toml)"
find src tests/cpp fuzz tools \( -name '*.cpp' -o -name '*.h' \) -print0 |
  xargs -0 .venv/bin/clang-format --dry-run --Werror
.venv/bin/ruff check --quiet .

log "C++: configure, build, ctest"
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j "$jobs"
ctest --test-dir build/release --output-on-failure -j "$jobs"

log "Python: pytest"
GRAPHMEND_BUILD_DIR="$PWD/build/release" .venv/bin/python -m pytest -q tests/python

if [ "${GRAPHMEND_QUICK:-0}" != 1 ]; then
  log "sanitizers and fuzzing"
  scripts/sanitize.sh
fi
log "all tests passed"
