#!/usr/bin/env bash
# Sanitizer build + fuzzing.
#
# 1. Configure with clang++ (or g++ when clang is missing) and
#    -DGRAPHMEND_SANITIZE=address,undefined, build the C++ tests and gm_dump,
#    run the tests (any ASan/UBSan report aborts: -fno-sanitize-recover=all).
# 2. Build the libFuzzer target fuzz/fuzz_parser with clang
#    (-DGRAPHMEND_FUZZ=ON, the core instrumented with -fsanitize=fuzzer-no-link
#    plus ASan/UBSan) and run it FUZZ_SECONDS (default 60) from fuzz/seed,
#    failing on a crash. New inputs go to fuzz/corpus-work (git-ignored);
#    crash reproducers to fuzz/crash-*.
#
# Environment: JOBS (default 2), FUZZ_SECONDS (60), SKIP_TESTS=1, SKIP_FUZZ=1,
#              SAN_BUILD (build-sanitize), FUZZ_BUILD (build-fuzz), CXX (the
#              sanitizer build's compiler), EXTRA_CXXFLAGS (added to both builds).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JOBS=${JOBS:-2}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
SAN_BUILD=${SAN_BUILD:-$ROOT/build-sanitize}
FUZZ_BUILD=${FUZZ_BUILD:-$ROOT/build-fuzz}
GEN=()
command -v ninja >/dev/null && GEN=(-G Ninja)

CLANG=$(command -v clang++ || true)
SAN_CXX=${CXX:-${CLANG:-g++}}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

if [[ "${SKIP_TESTS:-0}" != 1 ]]; then
  echo "== sanitizer build ($SAN_CXX) in $SAN_BUILD"
  cmake -S "$ROOT" -B "$SAN_BUILD" "${GEN[@]}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$SAN_CXX" \
    -DCMAKE_CXX_FLAGS="${EXTRA_CXXFLAGS:-}" \
    -DGRAPHMEND_SANITIZE=address,undefined -DGRAPHMEND_TESTS=ON -DGRAPHMEND_TOOLS=ON >/dev/null
  cmake --build "$SAN_BUILD" -j "$JOBS" --target graphmend_tests gm_dump
  echo "== C++ tests under ASan/UBSan"
  "$SAN_BUILD/graphmend_tests" --gtest_brief=1
  echo "== gm_dump under ASan/UBSan on the seed corpus, every version"
  for minor in 8 9 10 11 12 13; do
    ls "$ROOT"/fuzz/seed/* > "$SAN_BUILD/seed.lst"
    "$SAN_BUILD/gm_dump" --minor "$minor" --batch "$SAN_BUILD/seed.lst" --out /dev/null
  done
fi

if [[ "${SKIP_FUZZ:-0}" != 1 ]]; then
  if [[ -z "$CLANG" ]]; then
    echo "clang++ not found: cannot build the libFuzzer target" >&2
    exit 1
  fi
  echo "== fuzzer build (clang, libFuzzer + ASan/UBSan) in $FUZZ_BUILD"
  cmake -S "$ROOT" -B "$FUZZ_BUILD" "${GEN[@]}" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER="$CLANG" \
    -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link ${EXTRA_CXXFLAGS:-}" \
    -DGRAPHMEND_FUZZ=ON -DGRAPHMEND_SANITIZE=address,undefined \
    -DGRAPHMEND_TESTS=OFF -DGRAPHMEND_TOOLS=OFF >/dev/null
  cmake --build "$FUZZ_BUILD" -j "$JOBS" --target fuzz_parser
  mkdir -p "$ROOT/fuzz/corpus-work"
  echo "== fuzzing ${FUZZ_SECONDS}s"
  # libFuzzer exits non-zero on a crash, leak, timeout or OOM.
  "$FUZZ_BUILD/fuzz_parser" -max_total_time="$FUZZ_SECONDS" -max_len=4096 -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$ROOT/fuzz/crash-" \
    "$ROOT/fuzz/corpus-work" "$ROOT/fuzz/seed"
fi
echo "== sanitize.sh: OK"
