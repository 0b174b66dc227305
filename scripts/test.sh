#!/usr/bin/env bash
# Builds and runs the whole refx test suite (preset "default").
# Installs missing packages first; safe to re-run (incremental).
# Extra arguments go to ctest, e.g.:  scripts/test.sh -L core
#                                     scripts/test.sh -R compile_fail
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/setup.sh
cmake --preset default
cmake --build --preset default -j2
ctest --preset default "$@"
