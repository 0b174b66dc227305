#!/usr/bin/env bash
# Builds and runs the refx test suite (preset "default").
# Installs missing packages first; safe to re-run (incremental).
#
#   scripts/test.sh                  every behaviour test: the GoogleTest suites,
#                                    the examples, docs, format, MPI and
#                                    refx::compiled checks
#   REFX_TEST_ALL=1 scripts/test.sh  also the compile-time checks (labels
#                                    compile_fail, headers, odr, consumer: every
#                                    refx: message under g++ and clang++, the
#                                    API under clang++-14 too, every
#                                    header alone, the installed package) and
#                                    the sanitizer and fuzzing stage
#                                    (scripts/reliability.sh: ThreadSanitizer,
#                                    ASan + UBSan and libFuzzer builds of the
#                                    reliability tests; docs/reliability.md).
#                                    .ci/run sets it.
#
# The example tests record their timelines (REFX_TRACE_FILE) in
# build/default/timelines/<example>.json; the last line says so. With
# REFX_TEST_ALL=1 the totals of the reliability counts (programs fuzzed,
# faults injected, bad inputs tried, ...) of every stage are printed.
# Extra arguments go to ctest instead of the label selection, and skip the
# sanitizer stage, e.g.:  scripts/test.sh -L trace
#                         scripts/test.sh -R compile_fail
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

start=$SECONDS
scripts/setup.sh
cmake --preset default
cmake --build --preset default -j2
built=$SECONDS
status=0
all=0
[[ "${REFX_TEST_ALL:-0}" != 0 ]] && all=1
selection=("$@")
if (($# == 0)) && ((all == 0)); then
  selection=(-LE '^(compile_fail|headers|odr|consumer)$')  # the compile-time checks: REFX_TEST_ALL=1
fi
ctest --preset default "${selection[@]}" || status=$?
echo "test.sh: default preset: build $((built - start)) s, tests $((SECONDS - built)) s"
if (($# == 0)) && ((all == 0)); then
  echo "test.sh: compile-time checks and the sanitizer stage skipped (REFX_TEST_ALL=1 runs them, as CI does)"
fi
if (($# == 0)) && ((all == 1)); then
  scripts/reliability.sh || status=$?
  echo "test.sh: reliability counts (docs/reliability.md):"
  for log in build/default/Testing/Temporary/LastTest.log build/tsan/Testing/Temporary/LastTest.log \
             build/asan/Testing/Temporary/LastTest.log build/fuzz/libfuzzer.log; do
    [[ -f "$log" ]] || continue
    stage=${log#build/}
    stage=${stage%%/*}
    { grep -h '^refx-reliability: [0-9]' "$log" || true; } | awk -v stage="$stage" '
      { n = $2; $1 = ""; $2 = ""; sub(/^ +/, ""); total[$0] += n; if (!($0 in seen)) { seen[$0] = 1; order[++k] = $0 } }
      END { for (i = 1; i <= k; ++i) printf "  %-7s %9d %s\n", stage, total[order[i]], order[i] }'
  done
  echo "test.sh: total $((SECONDS - start)) s"
fi
shopt -s nullglob
timelines=(build/default/timelines/*.json)
if ((${#timelines[@]} > 0)); then
  echo "test.sh: timelines of the examples (open in https://ui.perfetto.dev, or scripts/render_timeline.py):" \
    "build/default/timelines/ (${#timelines[@]} files)"
fi
exit "$status"
