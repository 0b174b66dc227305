#!/usr/bin/env bash
# Runs refx's collectives next to OpenMPI (btl self,vader + cma), the
# hand-written std::thread ring and memcpy (the roofline), and prints one
# markdown comparison with ratios (written to $OUT/summary.md).
#
# This machine changes speed from minute to minute, so every row is measured
# in cells: one cell runs all four programs for one N and size back to back
# (their order rotating from round to round), and ROUNDS rounds of all cells
# are made. A ratio is taken within a cell, then the median over the rounds.
#
#   bench/run_collectives.sh                      # 3 rounds (~10 min on 2 cores)
#   ROUNDS=1 BUDGET=0.1 bench/run_collectives.sh  # quicker, noisier
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-build/bench-collectives}
BUDGET=${BUDGET:-0.4}
ROUNDS=${ROUNDS:-3}
declare -A BYTES=([4K]=4096 [64K]=65536 [1M]=1048576 [16M]=16777216 [64M]=67108864)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

echo "building the peers (../shared/peers) and refx's benchmark"
rm -rf "$OUT/peers" && cp -r ../shared/peers "$OUT/peers"
(cd "$OUT/peers" && ./setup.sh && ./build.sh) > "$OUT/peers-build.log" 2>&1
cmake --preset release > "$OUT/refx-build.log" 2>&1
cmake --build --preset release --target bench_collectives >> "$OUT/refx-build.log" 2>&1
PEERS=$OUT/peers
REFX=$PWD/build/release/bench/bench_collectives

# One cell's programs, each writing into the cell's directory $cell.
run_membw() { (cd "$PEERS" && build/membw --sizes "$size" --threads 2 --samples 7 --csv "$cell/membw.csv" > /dev/null); }
run_mpi() {
  (cd "$PEERS" && CSV=$cell/peers.csv scripts/run_mpi.sh openmpi "$n" --sizes "$size" --budget "$BUDGET" --min-iters 5 \
    > /dev/null 2>> "$OUT/mpi.log")
}
run_ring() {
  (cd "$PEERS" && build/ring_threads --ranks "$n" --sizes "$size" --sync block,yield --budget "$BUDGET" --min-iters 5 \
    --csv "$cell/peers.csv" > /dev/null)
  (cd "$PEERS" && build/ring_threads --no-header --ranks "$n" --sizes "$size" --sync block,yield --ops allreduce --fused \
    --budget "$BUDGET" --min-iters 5 --csv "$cell/peers.csv" > /dev/null)
}
run_refx() {
  "$REFX" --benchmark_filter="^BM_[A-Za-z]+/$n/${BYTES[$size]}/" --benchmark_min_time="$BUDGET" \
    --benchmark_format=json --benchmark_out="$cell/refx.json" > /dev/null
}

rm -rf "$OUT/cells"
programs=(run_mpi run_ring run_refx)
for ((round = 1; round <= ROUNDS; ++round)); do
  for n in 2 4 8; do
    for size in 4K 64K 1M 16M 64M; do
      echo "round $round of $ROUNDS: N = $n, $size"
      cell=$OUT/cells/$round-$n-$size
      mkdir -p "$cell"
      echo "suite,impl,config,N,op,size_bytes,iters,t_med_s,t_min_s,t_max_s,algbw_gbps,busbw_gbps,busbw_best_gbps,check" > "$cell/peers.csv"
      echo "suite,kernel,size_bytes,threads,t_med_s,t_min_s,t_max_s,gbps_med,gbps_min,gbps_max,inner_reps" > "$cell/membw.csv"
      run_membw
      for ((k = 0; k < ${#programs[@]}; ++k)); do "${programs[(k + round) % ${#programs[@]}]}"; done
    done
  done
done

python3 bench/summarize_collectives.py "$OUT"/cells/* | tee "$OUT/summary.md"
