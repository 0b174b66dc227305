#!/usr/bin/env python3
"""Turns bench/run_collectives.sh's measurements into the comparison table of
docs/performance.md: refx vs OpenMPI vs the best hand-written thread ring vs
the memcpy roofline, per collective, N and size.

usage: summarize_collectives.py CELL_DIR...

A cell directory holds one N and size measured back to back by every program
(peers.csv, membw.csv, refx.json). Ratios are taken within a cell, so both
sides saw the machine at the same speed; a row shows the median over the
cells of its N and size (one per round) and, with several rounds, the range of
its ratios.
"""
import collections
import csv
import json
import os
import statistics
import sys

# One round's measurement of a row: refx out of place (t, bus), in place (t,
# bus) or None, OpenMPI's (t, bus) or None, the best thread ring's (t, bus,
# variant) or None, the memcpy traffic rate (GB/s) at the size, the roofline
# fraction of refx's best time, and the most busbw out of place that the
# round shows reachable.
Meas = collections.namedtuple("Meas", "t bus inp mpi ring rate roof reach")
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


def measure(cell):
    """The rows one cell measured: {(op, n, size): Meas}."""
    mpi, ring = {}, {}
    with open(os.path.join(cell, "peers.csv")) as f:
        for r in csv.DictReader(f):
            key = (r["op"], int(r["N"]), int(r["size_bytes"]))
            t, bus = float(r["t_med_s"]), float(r["busbw_gbps"])
            if r["impl"].startswith("OpenMPI"):
                mpi[key] = (t, bus)
            elif r["impl"].startswith("threads"):
                if key not in ring or bus > ring[key][1]:
                    ring[key] = (t, bus, f'{r["impl"]}/{r["config"]}')
    with open(os.path.join(cell, "membw.csv")) as f:
        # memcpy reads and writes: traffic = 2x the copy rate.
        rate = {int(r["size_bytes"]): 2 * float(r["gbps_med"]) for r in csv.DictReader(f) if r["kernel"] == "memcpy"}
    refx = {}
    with open(os.path.join(cell, "refx.json")) as f:
        for b in json.load(f)["benchmarks"]:
            name, n, size, in_place = b["name"].split("/")[:4]
            t = b["median_us"] * 1e-6  # the median call, as the peers report
            refx[(OPS[name], int(n), int(size), int(in_place))] = (t, b["busbw_GBps"])
    rows = {}
    for (op, n, size, ip), (t, bus) in refx.items():
        if ip or size not in rate:
            continue
        inp = refx.get((op, n, size, 1))
        r = ring.get((op, n, size))
        best_in_place = inp is not None and inp[1] > bus
        best_t = inp[0] if best_in_place else t
        bytes_per_s = rate[size] * 1e9
        roof = traffic(op, n, size, best_in_place) / bytes_per_s / best_t
        # The out-of-place minimum traffic at the memcpy rate, or the best (in
        # place) ring's busbw scaled by the traffic out of place adds.
        tr_in, tr_out = traffic(op, n, size, True), traffic(op, n, size, False)
        reach = max(r[1] * tr_in / tr_out if r else 0, bus * t / (tr_out / bytes_per_s))
        rows[(op, n, size)] = Meas(t, bus, inp, mpi.get((op, n, size)), r, rate[size], roof, reach)
    return rows


def best_in_place(m):
    """refx's in-place (t, bus) of a measurement; out of place's where there is none."""
    return m.inp if m.inp else (m.t, m.bus)


class Row:
    """One N and size of one collective over every round that measured it."""

    def __init__(self, key, rounds):
        self.op, self.n, self.size = key
        self.rounds = rounds
        self.vs_mpi, self.vs_mpi_text = self.ratio(lambda m: m.mpi and m.bus / m.mpi[1])
        self.vs_ring, self.vs_ring_text = self.ratio(lambda m: m.ring and best_in_place(m)[1] / m.ring[1])
        self.roof = self.median(lambda m: m.roof)

    def median(self, f):
        values = [v for v in map(f, self.rounds) if v is not None]
        return statistics.median(values) if values else None

    def ratio(self, f):
        """The median of f over the rounds, with their range if there are several."""
        values = sorted(v for v in map(f, self.rounds) if v is not None)
        if not values:
            return None, "-"
        m = statistics.median(values)
        spread = f" ({values[0]:.2f}-{values[-1]:.2f})" if len(values) > 1 else ""
        return m, f"{m:.2f}x{spread}"

    def name(self):
        return f"{self.op} N = {self.n} {human(self.size)}"


def main():
    cells = sys.argv[1:]
    if not cells:
        sys.exit(__doc__)
    by_key = collections.defaultdict(list)
    for cell in cells:
        for key, m in measure(cell).items():
            by_key[key].append(m)
    order = list(OPS.values())
    rows = [Row(k, v) for k, v in sorted(by_key.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1:]))]
    rounds = max(len(r.rounds) for r in rows)

    rates = collections.defaultdict(list)
    for r in rows:
        rates[r.size] += [m.rate for m in r.rounds]
    print(f"{rounds} round(s); every figure is the median over them, a range in brackets the rounds' spread.\n")
    print("memcpy with 2 threads, GB/s of traffic (the roofline's rate): " +
          ", ".join(f"{human(s)} {statistics.median(g):.1f}" for s, g in sorted(rates.items())) + "\n")
    for op in order:
        print(f"#### {op}: busbw GB/s (median time per op)\n")
        print("| N | size | refx out-of-place | OpenMPI | refx/MPI | refx in-place | best thread ring | refx in-place / ring | roofline % |")
        print("|---|---|---|---|---|---|---|---|---|")
        for r in (r for r in rows if r.op == op):
            def cell(pick):
                bus, t = r.median(lambda m: pick(m) and pick(m)[1]), r.median(lambda m: pick(m) and pick(m)[0])
                return f"{bus:.3g} ({fmt_t(t)})" if bus is not None else "-"
            variants = collections.Counter(m.ring[2] for m in r.rounds if m.ring)
            ring = r.median(lambda m: m.ring and m.ring[1])
            cells_ = [str(r.n), human(r.size), cell(lambda m: (m.t, m.bus)), cell(lambda m: m.mpi), r.vs_mpi_text,
                      cell(lambda m: m.inp), f"{ring:.3g} ({variants.most_common(1)[0][0]})" if variants else "-",
                      r.vs_ring_text, f"{100 * r.roof:.0f}%"]
            print("| " + " | ".join(cells_) + " |")
        print()
    print_targets(rows)


def print_targets(rows):
    """The issue's targets, counted on the rows' medians."""
    large = [x for x in rows if x.size >= 1 << 20]
    print("#### Against the targets\n")
    vs_mpi = [x for x in large if x.vs_mpi is not None]
    missed = [x for x in vs_mpi if x.vs_mpi < 3]
    # 3x OpenMPI beyond what the rounds show reachable out of place.
    beyond = [x for x in missed if x.median(lambda m: m.mpi and 3 * m.mpi[1] / m.reach) > 1]
    print(f"- >= 1 MiB, busbw >= 3x OpenMPI (out of place): {len(vs_mpi) - len(missed)} of {len(vs_mpi)} rows; "
          f"missed in {len(missed)}; in the {len(beyond)} marked *, 3x OpenMPI is more than the run shows reachable "
          "(the thread ring scaled to the traffic out of place, and the roofline): " +
          ", ".join(f"{x.name()} {x.vs_mpi:.2f}x{'*' if x in beyond else ''}" for x in missed))
    vs_ring = [x for x in large if x.vs_ring is not None]
    below = [x for x in vs_ring if x.vs_ring < 1]
    print(f"- >= 1 MiB, in place >= 1.0x the best thread ring: {len(vs_ring) - len(below)} of {len(vs_ring)} rows; below: " +
          ", ".join(f"{x.name()} {x.vs_ring:.2f}x" for x in below))
    big = [x for x in rows if x.size == 64 << 20]
    print(f"- 64 MiB, >= 70% of the roofline: {sum(x.roof >= 0.7 for x in big)} of {len(big)} rows "
          f"({min(x.roof for x in big):.0%}-{max(x.roof for x in big):.0%})" if big else "- 64 MiB: no rows")
    for n, bound in ((2, 1.0), (8, 0.5)):
        for x in (x for x in rows if x.size == 4 << 10 and x.n == n):
            best = lambda m: min(m.t, m.inp[0]) if m.inp else m.t
            t, mpi = x.median(best), x.median(lambda m: m.mpi and m.mpi[0])
            _, ratio = x.ratio(lambda m: m.mpi and best(m) / m.mpi[0])
            if mpi is not None:
                print(f"- 4 KiB, N = {n}, {x.op}: {fmt_t(t)} against OpenMPI's {fmt_t(mpi)}: {ratio}, target <= {bound}x")
    print()


if __name__ == "__main__":
    main()
