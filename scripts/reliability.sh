#!/usr/bin/env bash
# The sanitizer and fuzzing stage of the test run (docs/reliability.md):
#
#   tsan   ThreadSanitizer build of the threaded-runtime stressors: the
#          differential fuzzer, fault injection, stress, and the runtime's
#          scheduling and error tests
#   asan   AddressSanitizer + UBSan build of the differential fuzzer, fault
#          injection (LeakSanitizer at exit), the bad-input tests and the
#          REFX_TRACE_FILE timeline written at exit by the static destructors
#          (stress runs in the default and tsan stages: about 60 s of CI time
#          saved)
#   fuzz   the libFuzzer build (clang-15) of the graph-builder fuzz target,
#          REFX_LIBFUZZER_RUNS runs (default 50000)
#
# Only these targets are built (a whole sanitizer build of the suite would
# not fit the CI time budget). Counts are scaled down in sanitizer builds
# (the tests see it); the environment variables of the tests still apply.
# Usage: scripts/reliability.sh [tsan|asan|fuzz ...]   (default: all three)
# Called by scripts/test.sh after the default suite; prints its own timings.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

stages=("$@")
if ((${#stages[@]} == 0)); then stages=(tsan asan fuzz); fi

TSAN_TARGETS=(reliability_differential_fuzz_test reliability_fault_injection_test reliability_stress_test
              runtime_scheduling_test runtime_errors_test runtime_bound_launch_test
              runtime_cores_test)  # several cores per device: lanes sharing Hbm, core_barrier
TSAN_TESTS='^(reliability|runtime)\.'  # the runtime tests not built here show up as *_NOT_BUILT, unmatched
# (reliability_graph_fuzz_test is left to the fuzz stage: the same target under ASan + UBSan, coverage-guided.)
ASAN_TARGETS=(reliability_differential_fuzz_test reliability_fault_injection_test reliability_bad_input_test
              runtime_bound_launch_test runtime_timeline_at_exit_test)
# (the runtime tests not built here show up as *_NOT_BUILT, unmatched; bound launches hold their Arrays
# and program in ways only a sanitizer sees go wrong, and a timeline written at exit reads what other
# static destructors may have freed)
ASAN_TESTS='^(reliability\.|runtime\.(Devices/BoundLaunch|InlineLaunch|WorkerPoolMail|TimelineAtExit)\.)'

run_stage() {  # name, ctest regex, targets...
  local preset=$1 regex=$2
  shift 2
  local t0=$SECONDS
  echo "== reliability: ${preset} build (${#@} targets)"
  cmake --preset "${preset}" >/dev/null
  cmake --build --preset "${preset}" -j2 --target "$@"
  local t1=$SECONDS
  echo "== reliability: ${preset} tests"
  ctest --preset "${preset}" -R "${regex}"
  echo "== reliability: ${preset}: build $((t1 - t0)) s, tests $((SECONDS - t1)) s"
}

for stage in "${stages[@]}"; do
  case "${stage}" in
    tsan) run_stage tsan "${TSAN_TESTS}" "${TSAN_TARGETS[@]}" ;;
    asan) run_stage asan "${ASAN_TESTS}" "${ASAN_TARGETS[@]}" ;;
    fuzz)
      t0=$SECONDS
      echo "== reliability: libFuzzer build (clang-15)"
      cmake --preset fuzz >/dev/null
      cmake --build --preset fuzz -j2 --target refx_graph_fuzzer
      t1=$SECONDS
      runs="${REFX_LIBFUZZER_RUNS:-50000}"
      log=build/fuzz/libfuzzer.log
      echo "== reliability: libFuzzer, ${runs} runs (log: ${log})"
      if ! build/fuzz/tests/fuzz/refx_graph_fuzzer -runs="${runs}" -seed=1 -max_len=2048 -len_control=20 \
             -max_total_time=900 -print_final_stats=1 -artifact_prefix=build/fuzz/ >"${log}" 2>&1; then
        tail -n 60 "${log}"
        echo "reliability: the libFuzzer target failed; the input is saved as build/fuzz/crash-* (rerun:" \
             "build/fuzz/tests/fuzz/refx_graph_fuzzer <file>)" >&2
        exit 1
      fi
      done_runs=$(grep -Eo '^Done [0-9]+ runs' "${log}" | grep -Eo '[0-9]+' || echo 0)
      echo "refx-reliability: ${done_runs} graph-builder inputs fuzzed (libFuzzer, coverage-guided)" | tee -a "${log}"
      echo "== reliability: fuzz: build $((t1 - t0)) s, runs $((SECONDS - t1)) s"
      ;;
    *) echo "reliability.sh: unknown stage '${stage}' (tsan, asan or fuzz)" >&2; exit 2 ;;
  esac
done
