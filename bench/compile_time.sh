#!/usr/bin/env bash
# Compile time of a user translation unit that includes <refx/refx.hpp> and
# defines one ring kernel, next to a baseline TU that includes only
# <fmt/format.h> and <range/v3/view.hpp>, in the same run (median of REPS
# compiles each, -O2, g++). Prints both and the ratio (target: <= 2.5).
#   bench/compile_time.sh [REPS]
set -euo pipefail
cd "$(dirname "$0")/.."
REPS=${1:-5}
CXX=${CXX:-g++}
GEN=build/compile-time
mkdir -p "$GEN/include/refx"
sed -e 's/@PROJECT_VERSION_MAJOR@/0/; s/@PROJECT_VERSION_MINOR@/1/; s/@PROJECT_VERSION_PATCH@/0/; s/@PROJECT_VERSION@/0.1.0/' \
  cmake/version.hpp.in > "$GEN/include/refx/version.hpp"
time_one() {
  local start end
  start=$(date +%s.%N)
  $CXX -std=c++20 -O2 -Iinclude -I"$GEN/include" -c "$1" -o /dev/null
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
base=(); refx=()
for ((i = 0; i < REPS; ++i)); do  # interleaved, so load changes hit both alike
  base+=("$(time_one bench/compile_time/baseline.cpp)")
  refx+=("$(time_one bench/compile_time/ring_kernel.cpp)")
done
b=$(printf '%s\n' "${base[@]}" | median)
r=$(printf '%s\n' "${refx[@]}" | median)
printf 'baseline (fmt + range-v3 views): %.2f s\nrefx.hpp + one ring kernel:     %.2f s\nratio: %.2f (target <= 2.5)\n' \
  "$b" "$r" "$(echo "$r / $b" | bc -l)"
