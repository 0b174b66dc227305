#!/usr/bin/env python3
"""Interleaved A/B runs of Google Benchmark binaries on a noisy machine.

Each benchmark the filter selects runs on its own, variant after variant,
`--reps` times over, so a burst of load hits every variant alike; the table
gives the best and the median time of each (and all of them, sorted).
docs/notes/performance-history.md says how to read it; to compare an old and a
new build:

    bench/interleave.py --reps 3 --filter 'BM_AllGather/2/1048576/1/' \\
        old=/tmp/bench_collectives_old new=build/release/bench/bench_collectives

A variant may set environment variables before its binary:
`small_chunks=REFX_BENCH_COPY_CHUNK_BYTES=262144 build/release/bench/bench_collectives`.
"""

import argparse
import collections
import os
import re
import statistics
import subprocess


def parse_variant(text):
    name, _, command = text.partition("=")
    words = command.split()
    env = dict(os.environ)
    while words and "=" in words[0]:
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    if not name or not words:
        raise SystemExit(f"interleave.py: variant '{text}' is not NAME=[VAR=VALUE ...] BINARY")
    return name, words, env


# A row's first time, after its name (which may hold spaces: BM_X<float, 512>).
ROW_TIME = re.compile(r"\s(\d+(?:\.\d+)?(?:e[+-]?\d+)?) (ns|us|ms|s)\s")


def time_us(line):
    found = ROW_TIME.search(line)
    if found is None:
        raise SystemExit(f"interleave.py: no time in the row '{line}'")
    return float(found.group(1)) * {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[found.group(2)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--filter", required=True, help="a --benchmark_filter regex")
    parser.add_argument("variants", nargs="+", help="NAME=[VAR=VALUE ...] BINARY")
    args = parser.parse_args()
    variants = [parse_variant(v) for v in args.variants]

    first = variants[0]
    listed = subprocess.run(first[1] + ["--benchmark_list_tests", f"--benchmark_filter={args.filter}"],
                            capture_output=True, text=True, env=first[2], check=True)
    for benchmark in (l for l in listed.stdout.splitlines() if l.startswith("BM_")):
        times = collections.defaultdict(list)
        for _ in range(args.reps):
            for name, command, env in variants:
                run = subprocess.run(command + [f"--benchmark_filter=^{re.escape(benchmark)}$"],
                                     capture_output=True, text=True, env=env, check=True)
                times[name] += [time_us(l) for l in run.stdout.splitlines() if l.startswith("BM_")]
        cells = [f"{name} {min(t):.1f} us, median {statistics.median(t):.1f} ({'/'.join(f'{x:.1f}' for x in sorted(t))})"
                 for name, t in times.items()]
        print(f"{benchmark.split('/min_time')[0]:36} " + "  ".join(cells), flush=True)


if __name__ == "__main__":
    main()
