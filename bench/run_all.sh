#!/usr/bin/env bash
# Regenerate every before/after benchmark result in one command, after the
# rules or the hook changed:
#
#   bash bench/run_all.sh
#
# 1. scripts/setup.sh: rebuild graphmend from this tree and reinstall it into
#    .venv and .venv-tf452 (skip with GM_BENCH_SKIP_SETUP=1 to measure what is
#    installed);
# 2. bench/table2.py, both arms, counting + outputs with the safe fixes only
#    (what `graphmend.install()` does by default)
#    -> bench/results/table2_mended_counts.{txt,json}; then with
#    --unsafe-fixes (GM104's speculation for Phi-3's LongRoPE, as the paper
#    does), counting + outputs + timing
#    -> bench/results/table2_mended.{txt,json}  (GM_BENCH_TIMING=0: no timing;
#    GM_BENCH_REPS: processes per arm, default 1 to fit a shared 2-core
#    machine; 3 gives every row its own noise estimate), then an A/A run (the
#    original arm alone, 3 processes, on biogpt, bart and pegasus-causal) ->
#    bench/results/table2_aa.json, whose spreads are the noise band of rows
#    with one process per arm; the table is re-rendered with it;
# 3. bench/survey.py --mended over the breaking pairs of bench/results/survey.jsonl
#    -> bench/results/survey_mended.{jsonl,md,summary.json};
# 4. bench/plot.py -> bench/results/table2.png.
# Each step's log goes to bench/.cache/run_all/.  Heavy on a 2-core machine:
# about 2 h with timing (everything at --jobs 1).
set -euo pipefail
cd "$(dirname "$0")/.."
logs=bench/.cache/run_all
mkdir -p "$logs"
py=.venv/bin/python
reps=${GM_BENCH_REPS:-1}
log() { printf '\033[1m[run_all]\033[0m %s\n' "$*" >&2; }

if [ "${GM_BENCH_SKIP_SETUP:-0}" != 1 ]; then
  log "setup (rebuild and reinstall graphmend)"
  scripts/setup.sh >"$logs/setup.log" 2>&1 || { tail -20 "$logs/setup.log" >&2; exit 1; }
fi
timing=(--timing --reps "$reps")
[ "${GM_BENCH_TIMING:-1}" = 0 ] && timing=()
log "table2, safe fixes (both arms, counting) -> bench/results/table2_mended_counts.{txt,json}"
rc_t2=0
"$py" bench/table2.py --jobs 2 --json bench/results/table2_mended_counts.json \
  --txt bench/results/table2_mended_counts.txt 2>"$logs/table2_counts.log" || rc_t2=$?
log "table2, --unsafe-fixes (both arms${timing:+, timing x$reps}) -> bench/results/table2_mended.{txt,json}"
"$py" bench/table2.py --unsafe-fixes "${timing[@]}" --jobs 1 --json bench/results/table2_mended.json \
  --txt bench/results/table2_mended.txt 2>"$logs/table2.log" || rc_t2=$?
if [ "${GM_BENCH_TIMING:-1}" != 0 ]; then
  log "A/A timing (original arm x3) -> bench/results/table2_aa.json; re-render with its noise"
  "$py" bench/table2.py biogpt bart pegasus-causal --arms original --timing --no-count --reps 3 --jobs 1 \
    --json bench/results/table2_aa.json >"$logs/aa.out" 2>"$logs/aa.log" || true
  "$py" bench/table2.py --render-from bench/results/table2_mended.json --aa-from bench/results/table2_aa.json \
    --json bench/results/table2_mended.json --txt bench/results/table2_mended.txt >/dev/null
fi
log "survey --mended -> bench/results/survey_mended.{jsonl,md}"
rc_sv=0
"$py" bench/survey.py --mended --jobs 1 2>"$logs/survey_mended.log" || rc_sv=$?
# pairs that timed out on a loaded machine get one more try
"$py" bench/survey.py --mended --retry-failed --jobs 1 2>>"$logs/survey_mended.log" || rc_sv=$?
log "plot -> bench/results/table2.png"
"$py" bench/plot.py bench/results/table2_mended.json -o bench/results/table2.png \
  --safe-counts bench/results/table2_mended_counts.json
cat bench/results/table2_mended.txt
sed -n '1,12p' bench/results/survey_mended.md
log "done (table2 exit $rc_t2, survey exit $rc_sv; logs in $logs)"
[ "$rc_t2" = 0 ] && [ "$rc_sv" = 0 ]
