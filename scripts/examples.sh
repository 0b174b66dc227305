#!/usr/bin/env bash
# Builds the examples (preset "release") and runs each one, stopping at the
# first failure. Installs missing packages first; safe to re-run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup.sh
cmake --preset release
cmake --build --preset release -j2 --target refx_examples

export LC_ALL=C   # same (byte-wise) example order as the run_examples target
shopt -s nullglob
sources=(examples/*.cpp)
if ((${#sources[@]} == 0)); then
  echo "examples.sh: no examples/*.cpp found" >&2
  exit 1
fi

for src in "${sources[@]}"; do
  name="$(basename "$src" .cpp)"
  echo
  echo "===== example: ${name} ====="
  # From the build tree: what an example writes (predict_collectives' predicted
  # timelines) lands there, not in the checkout.
  if ! (cd build/release/examples && "./${name}"); then
    echo "examples.sh: example '${name}' FAILED" >&2
    exit 1
  fi
done
echo
echo "examples.sh: all ${#sources[@]} examples passed"
