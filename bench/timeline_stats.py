#!/usr/bin/env python3
"""Summarises a refx timeline (REFX_TRACE_FILE's Chrome Trace JSON) of many
launches of one program: the launch span, when each device started relative
to the first (quartiles over the launches), which thread ran the copies, how
long one copy took, and how many cores' worth of the launches' time went to
copying; around each launch's copies, the time before the first and after
the last, which threads ran them, how long two copies ran at once, and the
time between launches. docs/notes/performance-history.md ("Timelines") says
what it showed and where it misleads.

    REFX_TRACE_FILE=/tmp/t.json build/release/bench/bench_collectives \\
        --benchmark_filter='BM_AllGather/2/1048576/1' --benchmark_min_time=0.05
    bench/timeline_stats.py /tmp/t.json
"""
import bisect
import collections
import json
import statistics
import sys


def quartiles(v):
    return [round(q, 1) for q in statistics.quantiles(v, n=4)] if len(v) > 1 else v


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = json.load(open(sys.argv[1]))
    ev = d["traceEvents"] if isinstance(d, dict) else d
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in ev if e.get("name") == "thread_name"}
    kernels = collections.defaultdict(list)
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            kernels[(e["pid"], e["args"]["launch"])].append(e)
    # Each launch's window: from its first kernel's start to its last one's end.
    windows = sorted((min(k["ts"] for k in ks), max(k["ts"] + k["dur"] for k in ks)) for ks in kernels.values())
    spans = [end - start for start, end in windows]
    starts = [[t - ts[0] for t in ts] for ts in (sorted(k["ts"] for k in ks) for ks in kernels.values())]
    print(f"launches: {len(spans)}; span (us), quartiles: {quartiles(spans)}")
    for i in range(max(map(len, starts), default=0)):
        print(f"device started #{i + 1}, us after the first, quartiles: {quartiles([s[i] for s in starts if len(s) > i])}")
    copies = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "copy"]
    # Per thread: how many copies, and for how long (us).
    count, busy = collections.Counter(), collections.Counter()
    for e in copies:
        thread = names.get((e["pid"], e["tid"]), "?")
        count[thread] += 1
        busy[thread] += e["dur"]
    print("copies (and chunks) by thread:", dict(count))
    # Around the copies of each launch (launches one at a time, as in the
    # benchmarks: a copy belongs to the launch whose kernels' window holds its
    # start): how long before the first starts, how long the launch lasts
    # after the last lands, and the idle time from one launch to the next.
    starts_at = [w[0] for w in windows]
    per_launch = collections.defaultdict(list)
    for e in copies:
        i = bisect.bisect_right(starts_at, e["ts"]) - 1
        if i >= 0 and e["ts"] <= windows[i][1]:
            per_launch[i].append(e)
    if per_launch:
        before = [min(c["ts"] for c in cs) - windows[i][0] for i, cs in per_launch.items()]
        after = [windows[i][1] - max(c["ts"] + c["dur"] for c in cs) for i, cs in per_launch.items()]
        # Each thread once, with how many of the launch's copies (or chunks) it ran if more than one.
        who = collections.Counter(
            " + ".join(f"{t} x{k}" if k > 1 else t
                       for t, k in sorted(collections.Counter(names.get((c["pid"], c["tid"]), "?") for c in cs).items()))
            for cs in per_launch.values())
        print(f"first copy starts, us into the launch, quartiles: {quartiles(before)}")
        print(f"the launch ends, us after its last copy, quartiles: {quartiles(after)}")
        print("threads that ran a launch's copies:", dict(who.most_common(4)))
        pairs = [sorted(cs, key=lambda c: c["ts"]) for cs in per_launch.values() if len(cs) == 2]
        if pairs:
            print(f"launches of two copies: how long both ran at once (us), quartiles: "
                  f"{quartiles([max(0, min(a['ts'] + a['dur'], b['ts'] + b['dur']) - b['ts']) for a, b in pairs])}")
    print(f"from one launch's end to the next one's start (us), quartiles: "
          f"{quartiles([b[0] - a[1] for a, b in zip(windows, windows[1:])])}")
    print(f"one copy or chunk (us), quartiles: {quartiles([e['dur'] for e in copies])}")
    # How many cores' worth of the launches' time went to copying, per thread
    # and in all (2.0 on two cores would be both copying all the time).
    total = sum(spans)
    if total > 0:
        shares = {name: round(us / total, 2) for name, us in busy.items()}
        print(f"copying, cores' worth of the launches' time: {round(sum(busy.values()) / total, 2)} {shares}")


if __name__ == "__main__":
    main()
