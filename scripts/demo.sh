#!/usr/bin/env bash
# The main job on the bundled example: set up, then parse the example with
# graphmend's C++ front end and check the tree against CPython's own `ast`
# under every CPython 3.8–3.13 on the machine, then let Dynamo count the
# example's graph breaks.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --no-bench
exec .venv/bin/python scripts/demo.py "${@:-examples/tiny_model.py}"
