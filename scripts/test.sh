#!/usr/bin/env bash
# Builds and runs the whole refx test suite (preset "default").
# Installs missing packages first; safe to re-run (incremental).
# The example tests record their timelines (REFX_TRACE_FILE) in
# build/default/timelines/<example>.json; the last line says so.
# Extra arguments go to ctest, e.g.:  scripts/test.sh -L core
#                                     scripts/test.sh -R compile_fail
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup.sh
cmake --preset default
cmake --build --preset default -j2
status=0
ctest --preset default "$@" || status=$?
shopt -s nullglob
timelines=(build/default/timelines/*.json)
if ((${#timelines[@]} > 0)); then
  echo "test.sh: timelines of the examples (open in https://ui.perfetto.dev, or scripts/render_timeline.py):" \
    "build/default/timelines/ (${#timelines[@]} files)"
fi
exit "$status"
