#!/usr/bin/env python3
"""Renders a refx timeline (Chrome Trace Event JSON, from REFX_TRACE_FILE or
Runtime::stop_timeline().write()) to a PNG: one launch of one runtime, a lane
per device (its ops) and per copy engine (copies and chunks, with bytes),
arrows from each copy's start to the wait that consumed it, and the
semaphores' values below.

    scripts/render_timeline.py trace.json out.png [--launch N] [--runtime PID]

Needs matplotlib (Debian: python3-matplotlib, installed by scripts/setup.sh;
run it with /usr/bin/python3 if another python3 comes first on PATH).
For the interactive view, open the JSON in https://ui.perfetto.dev.
"""

import argparse
import json
import re
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch
except ImportError:
    sys.exit(
        "render_timeline.py: matplotlib is missing: run scripts/setup.sh (it installs python3-matplotlib) "
        "and use /usr/bin/python3"
    )

COLOURS = {
    "dma_start": "#ff7f0e",
    "dma_wait": "#d62728",
    "semaphore_signal": "#2ca02c",
    "semaphore_wait": "#98df8a",
    "copy": "#9467bd",
    "kernel": "#eeeeee",
}
COMPUTE = "#1f77b4"
# "device 0 the dma semaphore allocated at f.hpp:65[0]" -> "device 0 dma sem @ f.hpp:65[0]"
SEMAPHORE = re.compile(r"the (\w+) semaphore allocated at (\S+)")


def pick_launch(events, runtime, launch):
    """The (pid, launch number) to draw: the first runtime and launch unless given."""
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    if not kernels:
        sys.exit("render_timeline.py: the file has no launches")
    pid = runtime if runtime is not None else min(e["pid"] for e in kernels)
    numbers = sorted({e["args"]["launch"] for e in kernels if e["pid"] == pid})
    if not numbers:
        sys.exit(f"render_timeline.py: runtime {pid} has no launches")
    if launch is None:
        launch = numbers[0]
    elif launch not in numbers:
        sys.exit(f"render_timeline.py: runtime {pid} has launches {numbers}, not {launch}")
    return pid, launch, [e for e in kernels if e["pid"] == pid and e["args"]["launch"] == launch]


def render(path, out, runtime=None, launch=None, width=14.0):
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    pid, launch, kernels = pick_launch(events, runtime, launch)
    t0 = min(k["ts"] for k in kernels)
    t1 = max(k["ts"] + k["dur"] for k in kernels)
    name = kernels[0]["name"]
    mesh = kernels[0]["args"].get("mesh", "")
    inside = lambda e: e.get("pid") == pid and t0 <= e["ts"] <= t1  # noqa: E731
    copy_name = lambda e: e.get("args", {}).get("kernel") == name  # noqa: E731

    lane_names = {
        e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name" and e.get("pid") == pid
    }
    slices = [e for e in events if e.get("ph") == "X" and e.get("cat") == "op" and inside(e)]
    copies = [e for e in events if e.get("ph") == "X" and e.get("cat") == "copy" and inside(e) and copy_name(e)]
    devices = sorted({k["tid"] for k in kernels})
    engines = sorted({c["tid"] for c in copies})
    lanes = devices + engines
    row = {tid: i for i, tid in enumerate(lanes)}
    counters = {e["name"] for e in events if e.get("ph") == "C" and inside(e) and e["args"]["value"]}

    fig, (ax, cx) = plt.subplots(
        2, 1, figsize=(width, 1.2 + 0.55 * len(lanes) + 0.22 * len(counters)), sharex=True,
        gridspec_kw={"height_ratios": [len(lanes), max(1.0, 0.4 * len(counters))]}
    )
    us = lambda t: t - t0  # noqa: E731
    span = max(t1 - t0, 1e-3)

    def bar(e, colour, hatch=None, label=None, alpha=1.0):
        y = row[e["tid"]]
        ax.broken_barh([(us(e["ts"]), e["dur"])], (y - 0.38, 0.76), facecolors=colour, edgecolor="black",
                       linewidth=0.3, hatch=hatch, alpha=alpha)
        if label and e["dur"] > 0.06 * span:
            ax.text(us(e["ts"]) + e["dur"] / 2, y, label, ha="center", va="center", fontsize=7, clip_on=True)

    for k in kernels:
        bar(k, COLOURS["kernel"], alpha=0.6)
    for s in slices:
        op = s["args"]["op"]
        parked = s["args"].get("parked", False)
        bar(s, COLOURS.get(op, COMPUTE), hatch="//" if parked else None, label=s["name"])
    for c in copies:
        bar(c, COLOURS["copy"], label=f'{c["name"]} {c["args"]["bytes"] // 1024} KiB')

    ends = {e["id"]: e for e in events if e.get("ph") == "f" and inside(e)}
    for s in (e for e in events if e.get("ph") == "s" and inside(e)):
        f = ends.get(s["id"])
        if f is None or s["tid"] not in row or f["tid"] not in row:
            continue
        ax.add_patch(FancyArrowPatch((us(s["ts"]), row[s["tid"]]), (us(f["ts"]), row[f["tid"]]),
                                     arrowstyle="-|>", mutation_scale=8, color="#444444", linewidth=0.7,
                                     connectionstyle="arc3,rad=0.15"))

    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels([lane_names.get(t, str(t)) for t in lanes], fontsize=8)
    ax.set_ylim(len(lanes) - 0.5, -0.5)
    fig.suptitle(f"refx timeline: kernel '{name}' on mesh {mesh}, launch {launch}: ops per device (// = parked), "
                 "copies per copy engine, arrows from a copy's start to the wait that consumed it", fontsize=9)
    ax.grid(axis="x", linewidth=0.3)
    legend = [plt.Rectangle((0, 0), 1, 1, facecolor=c) for c in
              (COMPUTE, COLOURS["dma_start"], COLOURS["dma_wait"], COLOURS["semaphore_signal"],
               COLOURS["semaphore_wait"], COLOURS["copy"])]
    ax.legend(legend, ["compute", "dma_start", "dma_wait", "semaphore_signal", "semaphore_wait", "copy / chunk"],
              fontsize=7, loc="lower left", bbox_to_anchor=(0.0, 1.0), ncol=6, frameon=False)

    # One row per semaphore that moved, scaled to its own maximum: DMA
    # semaphores count bytes, regular ones signals.
    series = {}
    for e in events:
        if e.get("ph") == "C" and inside(e):
            series.setdefault(e["name"], []).append((us(e["ts"]), e["args"]["value"]))
    rows = [(label, points) for label, points in sorted(series.items()) if any(v for _, v in points)]
    for i, (label, points) in enumerate(rows):
        top = max(v for _, v in points)
        xs = [0.0] + [x for x, _ in points] + [span]
        ys = [0.0] + [v for _, v in points] + [points[-1][1]]
        cx.step(xs, [i + 0.8 - 0.8 * v / top for v in ys], where="post", linewidth=0.8)  # rows run downwards
        rows[i] = SEMAPHORE.sub(r"\1 sem @ \2", label) + f" (max {top})"
    cx.set_yticks([i + 0.4 for i in range(len(rows))])
    cx.set_yticklabels(rows, fontsize=6)
    cx.set_ylim(len(rows) - 0.1 if rows else 1, -0.1)
    cx.set_xlabel("microseconds since the launch's first op", fontsize=8)
    cx.grid(axis="x", linewidth=0.3)
    ax.set_xlim(0, span)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"render_timeline.py: wrote {out} (runtime {pid}, launch {launch}, {len(slices)} ops, {len(copies)} copies)")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("trace", help="timeline JSON (REFX_TRACE_FILE)")
    p.add_argument("png", help="output PNG")
    p.add_argument("--launch", type=int, help="launch number (the 'launch' arg of its slices); default: the first")
    p.add_argument("--runtime", type=int, help="runtime (the trace's pid); default: the first")
    p.add_argument("--width", type=float, default=14.0, help="figure width in inches")
    a = p.parse_args()
    render(a.trace, a.png, a.runtime, a.launch, a.width)


if __name__ == "__main__":
    main()
