#!/usr/bin/env python3
"""Turns one session's measurements into the comparison table of
docs/performance.md: refx vs OpenMPI vs the best hand-written thread ring vs
the memcpy roofline, per collective, N and size.

usage: summarize_collectives.py peers.csv membw.csv refx.json
"""
import collections
import csv
import json
import sys

# One row of the table: refx out of place (t, bus), and the peers' (t, bus[, variant]).
Row = collections.namedtuple("Row", "op n size t bus mpi inp ring roof reach")
OPS = {"BM_AllReduce": "allreduce", "BM_AllGather": "allgather", "BM_ReduceScatter": "reduce_scatter"}


def human(b):
    return f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"


def fmt_t(t):
    return f"{t * 1e6:.1f} us" if t < 1e-3 else f"{t * 1e3:.2f} ms"


def traffic(op, n, m, in_place):
    """Bytes of memory traffic the algorithm must move per call, all devices
    together (a copy reads and writes: 2x; a combining copy reads two and
    writes one: 3x)."""
    part = (n - 1) / n * m
    if op == "allreduce":
        t = n * (part * 3 + part * 2)
        return t if in_place else t + n * m * 2
    if op == "allgather":
        return n * part * 2 if in_place else n * m * 2
    t = n * part * 3
    return t if in_place else t + n * m / n * 2


def main():
    peers_csv, membw_csv, refx_json = sys.argv[1:4]
    mpi, ring = {}, {}
    with open(peers_csv) as f:
        for r in csv.DictReader(f):
            key = (r["op"], int(r["N"]), int(r["size_bytes"]))
            t, bus = float(r["t_med_s"]), float(r["busbw_gbps"])
            if r["impl"].startswith("OpenMPI"):
                mpi[key] = (t, bus)
            elif r["impl"].startswith("threads"):
                if key not in ring or bus > ring[key][1]:
                    ring[key] = (t, bus, f'{r["impl"]}/{r["config"]}')
    with open(membw_csv) as f:
        # memcpy reads and writes: traffic = 2x the copy rate. Per size, so the
        # roofline of a cache-sized collective uses cache-speed copies.
        copy_traffic = {int(r["size_bytes"]): 2 * float(r["gbps_med"]) for r in csv.DictReader(f) if r["kernel"] == "memcpy"}

    def traffic_rate(size):
        return copy_traffic.get(size, copy_traffic[max(copy_traffic)])
    refx = {}
    with open(refx_json) as f:
        for b in json.load(f)["benchmarks"]:
            name, n, size, in_place = b["name"].split("/")[:4]
            t = b["median_us"] * 1e-6  # the median call, as the peers report
            refx[(OPS[name], int(n), int(size), int(in_place))] = (t, b["busbw_GBps"])

    print("memcpy with 2 threads, GB/s of traffic (the roofline's rate): " +
          ", ".join(f"{human(s)} {g:.1f}" for s, g in sorted(copy_traffic.items())) + "\n")
    rows = []
    for op in ("allreduce", "allgather", "reduce_scatter"):
        print(f"#### {op}: busbw GB/s (median time per op)\n")
        print("| N | size | refx out-of-place | OpenMPI | refx/MPI | refx in-place | best thread ring | refx in-place / ring | roofline % |")
        print("|---|---|---|---|---|---|---|---|---|")
        for (o, n, size, ip), (t, bus) in sorted(refx.items()):
            if o != op or ip:
                continue
            m = mpi.get((op, n, size))
            r = ring.get((op, n, size))
            inp = refx.get((op, n, size, 1))
            best = inp if inp and inp[1] > bus else (t, bus)
            roof_t = traffic(op, n, size, inp is not None and best is inp) / (traffic_rate(size) * 1e9)
            cells = [str(n), human(size), f"{bus:.3g} ({fmt_t(t)})",
                     f"{m[1]:.3g} ({fmt_t(m[0])})" if m else "-",
                     f"{bus / m[1]:.2f}x" if m else "-",
                     f"{inp[1]:.3g} ({fmt_t(inp[0])})" if inp else "-",
                     f"{r[1]:.3g} ({r[2]})" if r else "-",
                     f"{(inp or (t, bus))[1] / r[1]:.2f}x" if r else "-",
                     f"{100 * roof_t / best[0]:.0f}%"]
            print("| " + " | ".join(cells) + " |")
            # The most busbw out of place that this run shows reachable: the
            # out-of-place minimum traffic at the memcpy rate, or the best
            # (in-place) ring's scaled by the traffic out of place adds.
            tr_in, tr_out = traffic(op, n, size, True), traffic(op, n, size, False)
            reach = max(r[1] * tr_in / tr_out if r else 0, bus * t / (tr_out / (traffic_rate(size) * 1e9)))
            rows.append(Row(op, n, size, t, bus, m, inp, r, roof_t / best[0], reach))
        print()
    print_targets(rows)


def print_targets(rows):
    """The issue's targets, counted on this run's rows."""
    def name(x):
        return f"{x.op} N = {x.n} {human(x.size)}"
    large = [x for x in rows if x.size >= 1 << 20]
    print("#### Against the targets\n")
    vs_mpi = [x for x in large if x.mpi]
    missed = [x for x in vs_mpi if x.bus < 3 * x.mpi[1]]
    beyond = [x for x in missed if 3 * x.mpi[1] > x.reach]
    print(f"- >= 1 MiB, busbw >= 3x OpenMPI (out of place): {len(vs_mpi) - len(missed)} of {len(vs_mpi)} rows; "
          f"missed in {len(missed)}; in the {len(beyond)} marked *, 3x OpenMPI is more than this run shows reachable "
          "(the thread ring scaled to the traffic out of place, and the roofline): " +
          ", ".join(f"{name(x)} {x.bus / x.mpi[1]:.2f}x{'*' if x in beyond else ''}" for x in missed))
    vs_ring = [x for x in large if x.ring and x.inp]
    below = [x for x in vs_ring if x.inp[1] < x.ring[1]]
    print(f"- >= 1 MiB, in place >= 1.0x the best thread ring: {len(vs_ring) - len(below)} of {len(vs_ring)} rows; below: " +
          ", ".join(f"{name(x)} {x.inp[1] / x.ring[1]:.2f}x" for x in below))
    big = [x for x in rows if x.size == 64 << 20]
    print(f"- 64 MiB, >= 70% of the roofline: {sum(x.roof >= 0.7 for x in big)} of {len(big)} rows "
          f"({min(x.roof for x in big):.0%}-{max(x.roof for x in big):.0%})" if big else "- 64 MiB: no rows")
    for n, bound in ((2, 1.0), (8, 0.5)):
        for x in (x for x in rows if x.size == 4 << 10 and x.n == n and x.mpi):
            t = min(x.t, x.inp[0]) if x.inp else x.t
            print(f"- 4 KiB, N = {n}, {x.op}: {fmt_t(t)} against OpenMPI's {fmt_t(x.mpi[0])} ({t / x.mpi[0]:.2f}x, target <= {bound}x)")
    print()


if __name__ == "__main__":
    main()
