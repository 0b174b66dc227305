#!/usr/bin/env bash
# Compile time of a user translation unit that includes <refx/refx.hpp> and
# defines one ring kernel, next to a baseline TU that includes only
# <fmt/format.h> and <range/v3/view.hpp>, in the same run (median of REPS
# compiles each, interleaved, -O2, g++). The ring TU is compiled as a
# program's translation units are (docs/compile-time.md):
#   - header-only (refx::refx), an ordinary TU: refx's definitions are in the
#     program's one REFX_IMPLEMENTATION file, not here (target: <= 6);
#   - with separate compilation (refx::compiled, -DREFX_SEPARATE_COMPILATION),
#     whose library is built once (target: <= 2.5);
#   - on a Runtime of its own (bench/compile_time/own_runtime.cpp, which
#     includes <refx/runtime/runtime.hpp>), with separate compilation;
#   - as the program's REFX_IMPLEMENTATION file, which compiles refx's
#     definitions with the program's flags: paid when that file changes, so a
#     program keeps it apart from the files it edits.
# Prints the medians and the ratios.
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
base=(); header_only=(); separate=(); own_runtime=(); implementation=()
for ((i = 0; i < REPS; ++i)); do  # interleaved, so load changes hit all alike
  base+=("$(time_one bench/compile_time/baseline.cpp)")
  header_only+=("$(time_one bench/compile_time/ring_kernel.cpp)")
  separate+=("$(time_one -DREFX_SEPARATE_COMPILATION bench/compile_time/ring_kernel.cpp)")
  own_runtime+=("$(time_one -DREFX_SEPARATE_COMPILATION bench/compile_time/own_runtime.cpp)")
  implementation+=("$(time_one -DREFX_IMPLEMENTATION bench/compile_time/ring_kernel.cpp)")
done
b=$(printf '%s\n' "${base[@]}" | median)
h=$(printf '%s\n' "${header_only[@]}" | median)
s=$(printf '%s\n' "${separate[@]}" | median)
r=$(printf '%s\n' "${own_runtime[@]}" | median)
m=$(printf '%s\n' "${implementation[@]}" | median)
printf 'baseline (fmt + range-v3 views):                 %6.2f s\n' "$b"
printf 'refx.hpp + one ring kernel, header-only:         %6.2f s  ratio %5.2f (target <= 6)\n' "$h" "$(echo "$h / $b" | bc -l)"
printf 'refx.hpp + one ring kernel, separate (compiled): %6.2f s  ratio %5.2f (target <= 2.5)\n' "$s" "$(echo "$s / $b" | bc -l)"
printf 'the same on its own Runtime, separate:           %6.2f s  ratio %5.2f\n' "$r" "$(echo "$r / $b" | bc -l)"
printf 'the program'"'"'s REFX_IMPLEMENTATION file (once):   %6.2f s  ratio %5.2f\n' "$m" "$(echo "$m / $b" | bc -l)"
