#!/usr/bin/env bash
# Wheels that bench/gpu_timing.sh installs on a machine without network:
# transformers 4.52.4 and what it imports beyond torch (pinned as in
# requirements/bench-tf452.txt), graphmend's own wheel built here, and the
# pure-Python build requirements for building graphmend from source there.
# Binary wheels are fetched for several CPython versions (the GPU machine's
# Python is not known in advance).  The result must stay well under the
# 64 MiB that can travel with the working tree.
#
#   bash bench/make_wheelhouse.sh [DEST]        # default bench/.cache/wheelhouse
#   GM_WHEEL_PYTHONS="3.11 3.12" GM_WHEEL_NUMPY=1 bash bench/make_wheelhouse.sh
set -euo pipefail
cd "$(dirname "$0")/.."

dest=${1:-bench/.cache/wheelhouse}
pythons=${GM_WHEEL_PYTHONS:-"3.10 3.11 3.12"}
py=${GM_PYTHON:-.venv/bin/python}
rm -rf "$dest"
mkdir -p "$dest"

# pure Python (one wheel serves every version)
pure=(transformers==4.52.4 huggingface_hub==0.36.2 tqdm==4.70.1 requests==2.34.2 urllib3==2.8.0 idna==3.20
      certifi==2026.10.19.post1 filelock==4.3.1 fsspec==2026.9.0 packaging==26.4 typing_extensions==4.16.0
      scikit_build_core==1.1.2 nanobind==3.1.0 pathspec==1.1.1)
# binary: abi3 wheels serve every version, the others one wheel per version;
# "exact|fallback": the pin used here, else any version transformers 4.52.4
# accepts (the package index may lack the pin's wheel for some versions)
binary=("tokenizers==0.21.4|tokenizers>=0.21,<0.22" "safetensors==0.8.0|safetensors>=0.4.3"
        "hf-xet==1.8.0|hf-xet>=1.1.2,<2" "regex==2026.11.19|regex!=2019.12.17" "PyYAML==6.0.4|PyYAML>=5.1"
        "charset-normalizer==3.5.3|charset-normalizer>=2,<4" "ninja==1.13.2|ninja")
[ "${GM_WHEEL_NUMPY:-0}" = 1 ] && binary+=("numpy==2.4.6|numpy>=1.17")

"$py" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: -d "$dest" "${pure[@]}"
for v in $pythons; do
  for spec in "${binary[@]}"; do
    got=0
    for req in "${spec%%|*}" "${spec#*|}"; do
      if "$py" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
          --implementation cp --python-version "$v" \
          --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
          -d "$dest" "$req" >/dev/null 2>&1; then got=1; break; fi
    done
    [ "$got" = 1 ] || echo "wheelhouse: warning: no wheel of ${spec%%|*} for CPython $v" >&2
  done
done
# graphmend for this interpreter's tag (the GPU side builds from source otherwise)
"$py" -m pip wheel -q --disable-pip-version-check --no-build-isolation --no-deps . -w "$dest"

size=$(du -sm "$dest" | cut -f1)
echo "wheelhouse: $dest, $(ls "$dest" | wc -l) wheels, ${size} MiB"
if [ "$size" -gt 60 ]; then
  echo "wheelhouse: over 60 MiB; it will not travel with the working tree (64 MiB in all)" >&2
  exit 1
fi
