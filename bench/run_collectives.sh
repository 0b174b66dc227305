#!/usr/bin/env bash
# Runs refx's collectives next to OpenMPI (btl self,vader + cma) and the
# hand-written std::thread ring, measures the machine's rates on 2 threads
# for the two kinds of traffic the collectives do, copy (dst = src) and
# read-add-write (dst += src), each also by a kernel that does only its least
# part (write dst; update dst in place), sampled before every program and
# after the last, and prints one markdown comparison with ratios and each
# collective's floor (docs/performance.md, "Against the thread ring and Open
# MPI": "The floor"; written to $OUT/summary.md).
#
# Every program runs twice per cell: "warm" (the same buffers every call, as
# the peers and MPI's own suites do) and "cold" (every call takes the next
# buffer set of a pool of POOL_BYTES, larger than the last-level cache, so
# it starts from memory; refx, the peers and the rate kernels alike; the
# peers get the pool from bench/peers-cold.patch).
#
# This machine changes speed from minute to minute, so every row is measured
# in cells: one cell runs all four programs for one N and size back to back
# (their order rotating from round to round), and ROUNDS rounds of all cells
# are made. A ratio is taken within a cell, then the median over the rounds.
#
#   bench/run_collectives.sh                      # 3 rounds (~10 min on 2 cores)
#   ROUNDS=1 BUDGET=0.1 bench/run_collectives.sh  # quicker, noisier
#   NS="2 8" SIZES="1M" bench/run_collectives.sh   # some cells only
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-build/bench-collectives}
BUDGET=${BUDGET:-0.4}
ROUNDS=${ROUNDS:-3}
NS=${NS:-2 4 8}
SIZES=${SIZES:-4K 64K 1M 16M 64M}
# 256 MiB: 8x the 32 MiB of L3 a Zen 5 CCD has (this VM reports an "AMD
# EPYC" of family 26 and 508 MiB of L3 in getconf LEVEL3_CACHE_SIZE, the
# host's, not one CCD's; lscpu shows none). A 1 GiB pool took about a minute
# per program and cell to fault in on this VM.
POOL_BYTES=${POOL_BYTES:-268435456}
BUILD=${BUILD:-build/release}
declare -A BYTES=([4K]=4096 [64K]=65536 [1M]=1048576 [16M]=16777216 [64M]=67108864)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

echo "building the peers (../shared/peers) and refx's benchmark"
rm -rf "$OUT/peers" && cp -r "${PEERS_SRC:-../shared/peers}" "$OUT/peers"
(cd "$OUT/peers" && patch -p1 < "$OLDPWD/bench/peers-cold.patch" && ./setup.sh && ./build.sh) > "$OUT/peers-build.log" 2>&1
if [[ -z ${REFX:-} ]]; then  # REFX=path: that bench_collectives, not built here
  cmake --preset release -B "$BUILD" > "$OUT/refx-build.log" 2>&1
  cmake --build "$BUILD" --target bench_collectives >> "$OUT/refx-build.log" 2>&1
  REFX=$PWD/$BUILD/bench/bench_collectives
fi
PEERS=$OUT/peers

# One cell's programs, each writing into the cell's directory $cell, once
# warm ($pool = 0, files *.csv/json) and once cold ($pool = POOL_BYTES,
# files cold-*). The rate kernels work on at most the collective's
# footprint, all devices together: 2 threads x (source + destination) of
# N x size / 4 each; every call appends its samples to the cell's
# membw.csv, and the summary takes the fastest.
run_membw() {
  local per=$((n * BYTES[$size] / 4))
  (cd "$PEERS" && build/membw --sizes "$per" --threads 2 --samples 5 --kernels memcpy,copy,fill,memset,acc,inc \
    --pool-bytes "$pool" --csv "$cell/${tag}membw.csv" > /dev/null)
}
run_mpi() {
  (cd "$PEERS" && CSV=$cell/${tag}peers.csv scripts/run_mpi.sh openmpi "$n" --sizes "$size" --budget "$BUDGET" --min-iters 5 \
    --pool-bytes "$pool" > /dev/null 2>> "$OUT/mpi.log")
}
run_ring() {
  (cd "$PEERS" && build/ring_threads --ranks "$n" --sizes "$size" --sync block,yield --budget "$BUDGET" --min-iters 5 \
    --pool-bytes "$pool" --csv "$cell/${tag}peers.csv" > /dev/null)
  (cd "$PEERS" && build/ring_threads --no-header --ranks "$n" --sizes "$size" --sync block,yield --ops allreduce --fused \
    --budget "$BUDGET" --min-iters 5 --pool-bytes "$pool" --csv "$cell/${tag}peers.csv" > /dev/null)
}
run_refx() {
  REFX_BENCH_POOL_BYTES=$pool "$REFX" --benchmark_filter="^BM_(AllReduce|AllGather|ReduceScatter)/$n/${BYTES[$size]}/" --benchmark_min_time="$BUDGET" \
    --benchmark_format=json --benchmark_out="$cell/${tag}refx.json" > /dev/null
}

rm -rf "$OUT/cells"
programs=(run_mpi run_ring run_refx)
for ((round = 1; round <= ROUNDS; ++round)); do
  for n in $NS; do
    for size in $SIZES; do
      echo "round $round of $ROUNDS: N = $n, $size"
      cell=$OUT/cells/$round-$n-$size
      mkdir -p "$cell"
      for tag in "" cold-; do
        pool=0
        [[ -n $tag ]] && pool=$POOL_BYTES
        echo "suite,impl,config,N,op,size_bytes,iters,t_med_s,t_min_s,t_max_s,algbw_gbps,busbw_gbps,busbw_best_gbps,check" > "$cell/${tag}peers.csv"
        echo "suite,kernel,size_bytes,threads,t_med_s,t_min_s,t_max_s,gbps_med,gbps_min,gbps_max,inner_reps" > "$cell/${tag}membw.csv"
        # The rates are sampled between the programs (before each, and after
        # the last), so a limit is not taken at a slower moment than the runs.
        run_membw
        for ((k = 0; k < ${#programs[@]}; ++k)); do "${programs[(k + round) % ${#programs[@]}]}"; run_membw; done
      done
    done
  done
done

python3 bench/summarize_collectives.py "$OUT"/cells/* | tee "$OUT/summary.md"
