"""Benchmark: one warm engine over many runs (issue 35, point 3: days, not minutes).

Serves the demo site on loopback and runs its light pages (default ``fast`` and ``shift``,
alternating) N times through one :class:`pagelab.engine.Engine` (device ``mobile``). Every
``--every`` runs it prints a line: the resident memory (RSS, and PSS: shared pages counted
once) of the Python process, of Chromium's process tree and of the Node driver's tree, their
open file descriptors, the engine's recycles so far, the window's median run time (from the
moment the engine lock is held), its failures and the machine's load; then, per page, the
window's medians of FCP, LCP, TBT and score. At the end: the first 100 against the last 100
runs (run time and metric medians per page, their ratio) and the memory level.

The engine's recycling rule applies as configured (``PAGELAB_RECYCLE_RUNS``,
``PAGELAB_RECYCLE_MB``); ``--recycle-runs`` / ``--recycle-mb`` override it, ``0`` turning
that part of the rule off (``--recycle-runs 0 --recycle-mb 0``: the engine never recycles,
to see how its processes grow).

Usage: ``python benchmarks/soak.py [--runs 1000] [--every 50] [--pages fast shift]
[--recycle-runs N] [--recycle-mb M] [--max-minutes T] [--json out.json]`` from the repository root.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import psutil

_ROOT = Path(__file__).resolve().parent.parent
#: Metrics followed over the soak: (label, Metrics attribute).
_METRICS = (("FCP", "first_contentful_paint"), ("LCP", "largest_contentful_paint"),
            ("TBT", "total_blocking_time"), ("score", "performance_score"))
_MB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Tree:
    """A process tree's memory and file descriptors (zero when it is not running)."""

    rss_mb: float = 0.0
    pss_mb: float = 0.0
    fds: int = 0
    processes: int = 0
    root_pid: int | None = None


def tree(pids: Sequence[int]) -> Tree:
    rss = pss = 0.0
    fds = count = 0
    for pid in pids:
        try:
            process = psutil.Process(pid)
            memory = process.memory_full_info()
            fds += process.num_fds()
        except psutil.Error:  # ended between the listing and the reading
            continue
        rss += memory.rss
        pss += getattr(memory, "pss", memory.rss)
        count += 1
    return Tree(rss / _MB, pss / _MB, fds, count, pids[0] if pids else None)


@dataclass(frozen=True, slots=True)
class Run:
    index: int
    page: str
    #: The run proper (its result's start to finish).
    seconds: float
    #: From the moment the engine lock was held to the return: a recycle after the run too.
    wall: float
    ok: bool
    metrics: dict[str, float]
    #: The first run on a Chromium just (re)started by the recycling rule.
    after_recycle: bool


def _median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def _page_medians(runs: Sequence[Run], page: str) -> dict[str, float]:
    ok = [r for r in runs if r.ok and r.page == page]
    out = {label: _median([r.metrics[label] for r in ok]) for label, _ in _METRICS}
    out["seconds"] = _median([r.seconds for r in runs if r.page == page])
    return out


def _mark(into: list[float]) -> None:
    into.append(time.monotonic())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=1000, help="runs in all (default 1000)")
    parser.add_argument("--every", type=int, default=50, help="runs per window (default 50)")
    parser.add_argument("--pages", nargs="+", default=["fast", "shift"],
                        help="demo pages, run in turn (default: fast shift)")
    parser.add_argument("--recycle-runs", type=int, default=None,
                        help="restart Chromium after this many runs (0: never)")
    parser.add_argument("--recycle-mb", type=float, default=None,
                        help="restart Chromium when its tree's memory is over this (0: never)")
    parser.add_argument("--max-minutes", type=float, default=None,
                        help="stop after this many minutes, even before --runs (summary kept)")
    parser.add_argument("--json", type=Path, default=None, help="write every run and sample")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(_ROOT / "src"))
    from pagelab.demo import DemoServer
    from pagelab.engine import Engine

    options: dict[str, Any] = {}
    if args.recycle_runs is not None:
        options["recycle_after_runs"] = args.recycle_runs
    if args.recycle_mb is not None:
        options["recycle_above_mb"] = args.recycle_mb
    me = psutil.Process()
    runs: list[Run] = []
    samples: list[dict[str, Any]] = []
    with DemoServer() as site, Engine(**options) as engine:
        urls = {page: site.page_url(page) for page in args.pages}
        print(f"Chromium {engine.chrome_version}, {os.cpu_count()} cores, "
              f"load {os.getloadavg()[0]:.2f}; pages {' '.join(args.pages)}, "
              f"{args.runs} runs, recycling {engine.recycling}", flush=True)
        print(f"{'runs':>5} {'python':>7} {'browser rss/pss':>16} {'driver rss/pss':>15} "
              f"{'fds py/br/dr':>13} {'procs':>5} {'recyc':>5} {'s/run':>6} {'fail':>4} "
              f"{'load':>5}", flush=True)
        window_start = 0
        after_recycle = False
        deadline = time.monotonic() + (args.max_minutes or float("inf")) * 60
        for index in range(args.runs):
            if time.monotonic() > deadline:
                print(f"Stopped after {index} runs: --max-minutes {args.max_minutes}",
                      flush=True)
                if window_start < len(runs):
                    samples.append(_sample(engine, me, runs[window_start:], args.pages))
                    _print_sample(samples[-1])
                break
            page = args.pages[index % len(args.pages)]
            marks: list[float] = []
            recycles = engine.stats()["recycles"]
            result = engine.run(urls[page], "mobile", on_start=partial(_mark, marks))
            wall = time.monotonic() - marks[0] if marks else float("nan")
            ok = result.status == "success" and result.metrics is not None
            metrics = ({label: float(getattr(result.metrics, name) or 0)
                        for label, name in _METRICS} if ok else {})
            seconds = (result.finished_at - result.started_at).total_seconds()
            runs.append(Run(index + 1, page, seconds, wall, ok, metrics, after_recycle))
            after_recycle = engine.stats()["recycles"] > recycles
            if not ok:
                print(f"  run {index + 1} ({page}) failed: {result.error}", flush=True)
            if (index + 1) % args.every == 0 or index + 1 == args.runs:
                window = runs[window_start:]
                window_start = len(runs)
                samples.append(_sample(engine, me, window, args.pages))
                _print_sample(samples[-1])
        stats = engine.stats()
    _print_summary(runs, samples, args.pages, stats)
    if args.json:
        args.json.write_text(json.dumps({"runs": [asdict(r) for r in runs],
                                         "samples": samples, "stats": stats}, indent=1))
    return 0


def _sample(engine: Any, me: psutil.Process, window: Sequence[Run],
            pages: Sequence[str]) -> dict[str, Any]:
    with me.oneshot():
        python = Tree(me.memory_full_info().rss / _MB, me.memory_full_info().pss / _MB,
                      me.num_fds(), 1, me.pid)
    return {
        "runs": window[-1].index,
        "python": asdict(python),
        "browser": asdict(tree(engine.process_ids("browser"))),
        "driver": asdict(tree(engine.process_ids("driver"))),
        "recycles": engine.stats()["recycles"],
        "seconds": _median([r.seconds for r in window]),
        "failures": sum(not r.ok for r in window),
        "load": os.getloadavg()[0],
        "pages": {page: _page_medians(window, page) for page in pages},
    }


def _print_sample(s: dict[str, Any]) -> None:
    py, br, dr = s["python"], s["browser"], s["driver"]
    print(f"{s['runs']:>5} {py['rss_mb']:>7.0f} {br['rss_mb']:>8.0f}/{br['pss_mb']:<7.0f} "
          f"{dr['rss_mb']:>7.0f}/{dr['pss_mb']:<7.0f} "
          f"{py['fds']:>4}/{br['fds']:>3}/{dr['fds']:>3} {br['processes'] + dr['processes']:>5} "
          f"{s['recycles']:>5} {s['seconds']:>6.2f} {s['failures']:>4} {s['load']:>5.2f}",
          flush=True)
    for page, m in s["pages"].items():
        print(f"      {page:<6} FCP {m['FCP']:7.1f}  LCP {m['LCP']:7.1f}  TBT {m['TBT']:6.1f}"
              f"  score {m['score']:5.1f}  s/run {m['seconds']:5.2f}", flush=True)


def _print_summary(runs: Sequence[Run], samples: Sequence[dict[str, Any]],
                   pages: Sequence[str], stats: dict[str, Any]) -> None:
    span = min(100, len(runs) // 2)
    first, last = runs[:span], runs[-span:]
    print(f"\nFirst {span} runs against the last {span} (medians; ratio last / first)")
    for page in pages:
        a, b = _page_medians(first, page), _page_medians(last, page)
        for name in ("seconds", *(label for label, _ in _METRICS)):
            ratio = b[name] / a[name] if a[name] else float("nan")
            print(f"  {page:<6} {name:<8} first {a[name]:9.2f}   last {b[name]:9.2f}   "
                  f"ratio {ratio:5.3f}")
    recycled = [r for r in runs if r.after_recycle]
    if recycled:
        print(f"\nThe {len(recycled)} runs right after a recycle against the others (medians)")
        others = [r for r in runs if not r.after_recycle]
        for page in pages:
            a, b = _page_medians(others, page), _page_medians(recycled, page)
            cells = "  ".join(f"{name} {a[name]:.2f} / {b[name]:.2f}"
                              for name in ("seconds", *(label for label, _ in _METRICS)))
            print(f"  {page:<6} {cells}")
        triggering = [runs[r.index - 2] for r in recycled]
        print(f"  the restart itself, after the run, the lock held: median "
              f"{_median([r.wall - r.seconds for r in triggering]):.2f} s "
              f"(other runs {_median([r.wall - r.seconds for r in others]):.2f} s)")
    failures = sum(not r.ok for r in runs)
    print(f"Failures: {failures} of {len(runs)}; engine: {stats}")
    print("Memory (MB, PSS) at each sample:")
    for key in ("python", "browser", "driver"):
        levels = " ".join(f"{s[key]['pss_mb']:.0f}" for s in samples)
        print(f"  {key:<8} {levels}")
    last_rss = samples[-1]
    total = sum(last_rss[k]["rss_mb"] for k in ("python", "browser", "driver"))
    print(f"  at the end: {total:.0f} MB RSS in all "
          f"(python {last_rss['python']['rss_mb']:.0f}, browser "
          f"{last_rss['browser']['rss_mb']:.0f}, driver {last_rss['driver']['rss_mb']:.0f})")


if __name__ == "__main__":
    raise SystemExit(main())
