#!/usr/bin/env bash
# Compile time of a user translation unit that includes <refx/refx.hpp> and
# defines one ring kernel, next to a baseline TU that includes only
# <fmt/format.h> and <range/v3/view.hpp>, in the same run (median of REPS
# compiles each, interleaved, -O2, g++). The ring TU is compiled twice:
# header-only (refx::refx) and with separate compilation (refx::compiled,
# -DREFX_SEPARATE_COMPILATION; docs/compile-time.md), whose library is built
# once and is not part of the user's edit-compile cycle. A third TU,
# bench/compile_time/own_runtime.cpp, runs the same kernel on a Runtime of
# its own (it includes <refx/runtime/runtime.hpp>), with separate
# compilation. Prints the medians and the ratios (target: <= 2.5).
#   bench/compile_time.sh [REPS]
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${1:-5}
CXX=${CXX:-g++}
GEN=build/compile-time
mkdir -p "$GEN/include/refx"
sed -e 's/@PROJECT_VERSION_MAJOR@/0/; s/@PROJECT_VERSION_MINOR@/1/; s/@PROJECT_VERSION_PATCH@/0/; s/@PROJECT_VERSION@/0.1.0/' \
  cmake/version.hpp.in > "$GEN/include/refx/version.hpp"
# Eigen: dot's GEMM, which the header-only TU compiles (docs/compile-time.md).
compile() { $CXX -std=c++20 -O2 -Iinclude -I"$GEN/include" -isystem /usr/include/eigen3 "$@" -c -o /dev/null; }
# A TU that does not compile stops the script (set -e sees time_one fail)
# instead of being timed as a fast one.
time_one() {
  local start end
  start=$(date +%s.%N)
  compile "$@" || return 1
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=(); header_only=(); separate=(); own_runtime=()
for ((i = 0; i < REPS; ++i)); do  # interleaved, so load changes hit all alike
  base+=("$(time_one bench/compile_time/baseline.cpp)")
  header_only+=("$(time_one bench/compile_time/ring_kernel.cpp)")
  separate+=("$(time_one -DREFX_SEPARATE_COMPILATION bench/compile_time/ring_kernel.cpp)")
  own_runtime+=("$(time_one -DREFX_SEPARATE_COMPILATION bench/compile_time/own_runtime.cpp)")
done
b=$(printf '%s\n' "${base[@]}" | median)
h=$(printf '%s\n' "${header_only[@]}" | median)
s=$(printf '%s\n' "${separate[@]}" | median)
r=$(printf '%s\n' "${own_runtime[@]}" | median)
printf 'baseline (fmt + range-v3 views):                %6.2f s\n' "$b"
printf 'refx.hpp + one ring kernel, header-only:        %6.2f s  ratio %5.2f\n' "$h" "$(echo "$h / $b" | bc -l)"
printf 'refx.hpp + one ring kernel, separate (compiled): %5.2f s  ratio %5.2f (target <= 2.5)\n' "$s" "$(echo "$s / $b" | bc -l)"
printf 'the same on its own Runtime, separate:           %5.2f s  ratio %5.2f\n' "$r" "$(echo "$r / $b" | bc -l)"
