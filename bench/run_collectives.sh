#!/usr/bin/env bash
# Runs refx's collectives next to OpenMPI (btl self,vader + cma), the
# hand-written std::thread ring and memcpy (the roofline), all in one session,
# and prints one markdown comparison with ratios (written to $OUT/summary.md).
#
#   bench/run_collectives.sh            # full run (~10 min on 2 cores)
#   BUDGET=0.1 bench/run_collectives.sh # quicker, noisier
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-build/bench-collectives}
BUDGET=${BUDGET:-0.4}
SIZES=4K,64K,1M,16M,64M
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

echo "[1/4] building the peers (../shared/peers) and refx's benchmark"
rm -rf "$OUT/peers" && cp -r ../shared/peers "$OUT/peers"
(cd "$OUT/peers" && ./setup.sh && ./build.sh) > "$OUT/peers-build.log" 2>&1
cmake --preset release > "$OUT/refx-build.log" 2>&1
cmake --build --preset release --target bench_collectives >> "$OUT/refx-build.log" 2>&1

PEERS=$OUT/peers.csv
echo "suite,impl,config,N,op,size_bytes,iters,t_med_s,t_min_s,t_max_s,algbw_gbps,busbw_gbps,busbw_best_gbps,check" > "$PEERS"
echo "suite,kernel,size_bytes,threads,t_med_s,t_min_s,t_max_s,gbps_med,gbps_min,gbps_max,inner_reps" > "$OUT/membw.csv"

echo "[2/4] memcpy bandwidth (roofline)"
(cd "$OUT/peers" && build/membw --sizes $SIZES --threads 2 --samples 7 --csv "$OUT/membw.csv" > /dev/null)

echo "[3/4] OpenMPI and the thread ring"
(cd "$OUT/peers" && CSV=$PEERS scripts/run_mpi.sh openmpi "2 4 8" --sizes $SIZES --budget "$BUDGET" --min-iters 5 > /dev/null 2>> "$OUT/mpi.log")
(cd "$OUT/peers" && build/ring_threads --ranks 2,4,8 --sizes $SIZES --sync block,yield --budget "$BUDGET" --min-iters 5 --csv "$PEERS" > /dev/null)
(cd "$OUT/peers" && build/ring_threads --no-header --ranks 2,4,8 --sizes $SIZES --sync block,yield --ops allreduce --fused --budget "$BUDGET" --min-iters 5 --csv "$PEERS" > /dev/null)

echo "[4/4] refx"
build/release/bench/bench_collectives --benchmark_format=json --benchmark_out="$OUT/refx.json" --benchmark_min_time="$BUDGET" > /dev/null

python3 bench/summarize_collectives.py "$PEERS" "$OUT/membw.csv" "$OUT/refx.json" | tee "$OUT/summary.md"
