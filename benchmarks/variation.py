"""Benchmark: run-to-run variation of the warm engine against the bare ``lighthouse`` CLI.

Serves the demo site on loopback, then for each demo page runs it N times through
:class:`pagelab.engine.Engine` and N times through the bare CLI of the same Lighthouse version
(see ``_lighthouse_cli.py``), interleaved, the order alternating every round, after one
untimed warm-up of each. Device ``mobile``: Lighthouse's own mobile defaults (simulated
throttling), as a user of either would run it.

Prints, per page and metric, the median, the coefficient of variation (stdev / mean) and the
range of both sides, and the difference of the medians. Targets (issue 13): the engine's LCP
CV no higher than the CLI's on every page and at most 3 % on ``fast`` and ``shift``, medians
within 5 % of the CLI's.

Alongside each run it records what may explain a jump: Lighthouse's benchmark index, the
observed (unthrottled) LCP and FCP, the main-thread work, the 1-minute load average when the
run started and how busy the machine's CPUs were during the run. ``--save DIR`` writes those
rows (``runs.json``) and every LHR for a closer look.

Usage: ``python benchmarks/variation.py [-n 10] [--pages fast shift heavy] [--save DIR]``
from the repository root, after ``pagelab setup``, on an otherwise quiet machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
# Compared metrics by registry label; "Score" is the performance score (0-100).
_METRICS = ("FCP", "LCP", "SI", "TBT", "CLS", "Score")
_SIDES = ("engine", "cli")


def _cpu_times() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs since boot, from /proc/stat."""
    with open("/proc/stat") as stat:
        fields = [int(v) for v in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    total = sum(fields[:8])
    return total - idle, total


def _row(lhr: dict[str, Any], load: float, busy: float, seconds: float) -> dict[str, Any]:
    """The compared metrics and the diagnostics of one LHR."""
    from pagelab.engine._mapping import summarize_lhr
    from pagelab.models import metric

    metrics = summarize_lhr(lhr).metrics
    if metrics is None:
        raise RuntimeError(f"the run failed: {lhr.get('runtimeError')}")
    row: dict[str, Any] = {}
    for label in _METRICS:
        value = getattr(metrics, metric(label).name)
        row[label] = float(value) if value is not None else float("nan")
    audits = lhr.get("audits", {})
    observed = (audits.get("metrics", {}).get("details", {}).get("items") or [{}])[0]
    row.update(
        benchmark_index=lhr.get("environment", {}).get("benchmarkIndex"),
        observed_fcp=observed.get("observedFirstContentfulPaint"),
        observed_lcp=observed.get("observedLargestContentfulPaint"),
        main_thread_ms=audits.get("mainthread-work-breakdown", {}).get("numericValue"),
        load_1m=load,
        cpu_busy=busy,
        seconds=seconds,
    )
    return row


def _cv(values: list[float]) -> float:
    mean = statistics.fmean(values)
    return statistics.stdev(values) / mean * 100 if mean else 0.0


def _print_page(page: str, rows: dict[str, list[dict[str, Any]]]) -> None:
    print(f"\nPage {page}")
    print(f"  {'metric':<6} {'side':<6} {'median':>9} {'CV %':>7} {'min':>9} {'max':>9}"
          f" {'diff %':>7}")
    for label in _METRICS:
        medians = {side: statistics.median(r[label] for r in rows[side]) for side in _SIDES}
        for side in _SIDES:
            values = [r[label] for r in rows[side]]
            diff = ""
            if side == "engine" and medians["cli"]:
                diff = f"{(medians['engine'] - medians['cli']) / medians['cli'] * 100:+7.1f}"
            print(f"  {label:<6} {side:<6} {medians[side]:9.1f} {_cv(values):7.2f}"
                  f" {min(values):9.1f} {max(values):9.1f} {diff:>7}")
    seconds = {side: statistics.fmean(r["seconds"] for r in rows[side]) for side in _SIDES}
    print(f"  time   engine {seconds['engine']:.2f} s/run, cli {seconds['cli']:.2f} s/run,"
          f" ratio {seconds['cli'] / seconds['engine']:.2f}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("-n", type=int, default=10, help="runs per side and page (default 10)")
    parser.add_argument("--pages", nargs="+", default=None,
                        help="demo pages (default: all of them)")
    parser.add_argument("--save", type=Path, default=None,
                        help="write runs.json and every LHR into this directory")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(_ROOT / "src"))
    from _lighthouse_cli import cli_run

    from pagelab.demo import PAGES, DemoServer
    from pagelab.engine import Engine, find_chromium, pinned_lighthouse_version
    from pagelab.engine._engine import CHROMIUM_FLAGS

    chromium = find_chromium()
    if chromium is None:
        print("Chromium is missing: run `pagelab setup`", file=sys.stderr)
        return 1
    pages = args.pages or list(PAGES)
    if args.save:
        args.save.mkdir(parents=True, exist_ok=True)
    saved: list[dict[str, Any]] = []

    with DemoServer() as site, Engine() as engine, tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cli.json"

        def engine_lhr(url: str) -> dict[str, Any]:
            result = engine.run(url, "mobile")
            if result.status != "success":
                raise RuntimeError(f"engine run failed: {result.error}")
            lhr: dict[str, Any] = json.loads(result.artifacts["lighthouse-json"])
            return lhr

        def cli_lhr(url: str) -> dict[str, Any]:
            return cli_run(url, chromium, CHROMIUM_FLAGS, out)

        sides = {"engine": engine_lhr, "cli": cli_lhr}
        print(f"Lighthouse {pinned_lighthouse_version()}, Chromium {engine.chrome_version}, "
              f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; device mobile, "
              f"{args.n} runs a side and page, interleaved")
        for page in pages:
            url = site.page_url(page)
            for run in sides.values():
                run(url)  # warm-ups: Chromium and Node started, the hero image drawn once
            rows: dict[str, list[dict[str, Any]]] = {side: [] for side in _SIDES}
            for index in range(args.n):
                order = _SIDES if index % 2 == 0 else _SIDES[::-1]
                for side in order:
                    load = os.getloadavg()[0]
                    busy0, total0 = _cpu_times()
                    started = time.perf_counter()
                    lhr = sides[side](url)
                    seconds = time.perf_counter() - started
                    busy1, total1 = _cpu_times()
                    busy = (busy1 - busy0) / max(1, total1 - total0)
                    row = _row(lhr, load, busy, seconds)
                    rows[side].append(row)
                    saved.append({"page": page, "side": side, "index": index, **row})
                    if args.save:
                        name = f"{page}-{side}-{index:02d}.json"
                        (args.save / name).write_text(json.dumps(lhr))
            _print_page(page, rows)
    if args.save:
        (args.save / "runs.json").write_text(json.dumps(saved, indent=1))
        print(f"\nruns and LHRs written to {args.save}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
