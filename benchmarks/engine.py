"""Benchmark: pagelab's warm engine against the bare ``lighthouse`` CLI of the same version.

Serves the demo site on loopback, then, for each compared page (default: ``fast``, a trivial
page like the prototype's, and ``heavy``), runs it N times through
:class:`pagelab.engine.Engine` (device ``mobile``: Lighthouse's own mobile defaults) and N
times through ``<engine install>/node_modules/.bin/lighthouse`` (the pinned version, run with
the pinned Node, ``CHROME_PATH`` = Debian's Chromium, the engine's Chromium flags,
``--only-categories=performance``), interleaved, the order alternating every round. Every run
of either holds the machine-wide engine lock, so none overlaps another Lighthouse run.
One untimed warm-up run of each comes first (it draws the demo's hero image, fills the OS
file cache and, for the engine, starts Chromium and Node).

Prints runs per minute of both and their ratio (target >= 2.5x), the median FCP / LCP /
score of both (target: within 10 %), then, for 5 repeated engine runs of each demo page, the
coefficient of variation (stdev / mean) of LCP and score. Last, seconds per engine run with
the performance category only (the default) and with every category (performance,
accessibility, best practices, SEO: what a lighthouserc with ``lighthouse:recommended``
asks for), interleaved, and their ratio.

Then, per page, where the time of a run goes (``--phases-only``: this table alone): the
mean milliseconds of each phase over N runs made as a user makes them, through a
:class:`pagelab.LocalRunner` (a store in a temporary directory). Our own work before the
request (``prepare``), the driver's (a fresh browser context, the config, Lighthouse, the
JSON and HTML reports, the screenshots, the HAR, then closing the context), Python reading
the outputs (``result``) and the runner's storage before and after the run; Lighthouse's
part split by its own ``timing.entries`` (config, benchmark index, navigation, the rest of
gathering: stopping the trace and collecting artifacts, audits, report generation).

Usage: ``python benchmarks/engine.py [-n 10] [--pages fast heavy] [--repeats 5]
[--categories-only] [--phases-only]`` from the repository root, after ``pagelab setup``.
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
# Compared metrics, keyed by their registry labels (FCP, LCP); the score apart.
_METRICS = ("FCP", "LCP")


def _summary(lhr: dict[str, Any]) -> dict[str, float]:
    """The compared values of one LHR, read through the engine's own mapping."""
    from pagelab.engine._mapping import summarize_lhr
    from pagelab.models import metric

    metrics = summarize_lhr(lhr).metrics
    assert metrics is not None, lhr.get("runtimeError")
    out = {label: float(getattr(metrics, metric(label).name)) for label in _METRICS}
    out["score"] = float(metrics.performance_score or 0)
    return out


def _median_row(name: str, ours: list[dict[str, float]], cli: list[dict[str, float]]) -> str:
    a = statistics.median(r[name] for r in ours)
    b = statistics.median(r[name] for r in cli)
    diff = (a - b) / b * 100 if b else float("nan")
    return f"  {name:<8} engine {a:9.1f}   cli {b:9.1f}   diff {diff:+6.1f} %"


def _cv(values: list[float]) -> float:
    mean = statistics.fmean(values)
    return statistics.stdev(values) / mean * 100 if mean else float("nan")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("-n", type=int, default=10, help="runs per side (default 10)")
    parser.add_argument("--pages", nargs="+", default=["fast", "heavy"],
                        help="demo pages to compare (default: fast heavy)")
    parser.add_argument("--repeats", type=int, default=5,
                        help="engine runs per demo page for the variation (default 5)")
    parser.add_argument("--categories-only", action="store_true",
                        help="only the performance-only vs all-categories comparison")
    parser.add_argument("--phases-only", action="store_true",
                        help="only the time per phase of a run")
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

    with DemoServer() as site, Engine() as engine, tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cli.json"

        def ours(url: str) -> dict[str, float]:
            result = engine.run(url, "mobile")
            if result.status != "success":
                raise RuntimeError(f"engine run failed: {result.error}")
            return _summary(json.loads(result.artifacts["lighthouse-json"]))

        def cli(url: str) -> dict[str, float]:
            return _summary(cli_run(url, chromium, CHROMIUM_FLAGS, out))

        print(f"Lighthouse {pinned_lighthouse_version()}, Chromium {engine.chrome_version}, "
              f"{os.cpu_count()} cores; device mobile, {args.n} runs each, interleaved")
        if args.categories_only:
            _categories(engine, site, args.pages, args.n)
            return 0
        if args.phases_only:
            _phases(site, args.pages, args.n)
            return 0
        sides = {"engine": ours, "cli": cli}
        for page in args.pages:
            url = site.page_url(page)
            ours(url)
            cli(url)  # warm-ups, not timed
            results: dict[str, list[dict[str, float]]] = {"engine": [], "cli": []}
            seconds = {"engine": 0.0, "cli": 0.0}
            for index in range(args.n):
                order = ("engine", "cli") if index % 2 == 0 else ("cli", "engine")
                for side in order:
                    started = time.perf_counter()
                    results[side].append(sides[side](url))
                    seconds[side] += time.perf_counter() - started

            rate = {side: args.n / seconds[side] * 60 for side in seconds}
            print(f"\nPage {page}: throughput")
            for side in ("engine", "cli"):
                print(f"  {side:<6} {rate[side]:5.2f} runs/min   "
                      f"({seconds[side] / args.n:5.2f} s/run)")
            print(f"  ratio  {rate['engine'] / rate['cli']:5.2f}x  (target >= 2.5x)")
            print(f"Page {page}: medians (target: within 10 %)")
            for name in (*_METRICS, "score"):
                print(_median_row(name, results["engine"], results["cli"]))

        print(f"\nVariation over {args.repeats} engine runs per page (CV = stdev / mean)")
        for name in PAGES:
            runs = [engine.run(site.page_url(name), "mobile") for _ in range(args.repeats)]
            summaries = [_summary(json.loads(r.artifacts["lighthouse-json"])) for r in runs
                         if r.status == "success"]
            lcp = [s["LCP"] for s in summaries]
            score = [s["score"] for s in summaries]
            print(f"  {name:<6} LCP median {statistics.median(lcp):7.1f} ms  CV {_cv(lcp):5.2f} %"
                  f"   score median {statistics.median(score):5.1f}  CV {_cv(score):5.2f} %")
        _categories(engine, site, args.pages, args.n)
        # Inside: the demo site must still serve (it stopped before, and the table failed).
        _phases(site, args.pages, args.n)
    return 0


def _lighthouse_phases(lhr: dict[str, Any]) -> dict[str, float]:
    """Lighthouse's own phases of a run, ms, from the LHR's ``timing.entries``."""
    entries = lhr.get("timing", {}).get("entries", [])

    def total(name: str) -> float:
        return sum(float(e["duration"]) for e in entries if e["name"] == name)

    gather = total("lh:runner:gather")
    benchmark = total("lh:gather:getBenchmarkIndex")
    navigation = total("lh:driver:navigate")
    artifacts = sum(float(e["duration"]) for e in entries
                    if e["name"].startswith("lh:gather:getArtifact:"))
    return {
        "lh config": total("lh:config"),
        "lh benchmark index": benchmark,
        "lh navigation": navigation,
        "lh artifacts": artifacts,
        "lh gather, rest (trace stop)": gather - benchmark - navigation - artifacts,
        "lh audits": total("lh:runner:audit"),
        "lh report": total("lh:runner:generate"),
    }


def _phases(site: Any, pages: list[str], n: int) -> None:
    """Median milliseconds of each phase of a run, per page, runs made by a LocalRunner."""
    from pagelab import LocalRunner
    from pagelab.engine import Engine, RunResult

    class TimedEngine(Engine):
        """Keeps the last run's result, when its call began, when it held the engine lock
        and when it returned."""

        last: tuple[RunResult, float, float, float, float]

        def run(self, *args: Any, on_start: Any = None, **kwargs: Any) -> RunResult:
            called = time.perf_counter()
            locked: list[float] = []

            def started() -> None:
                locked.append(time.perf_counter())
                if on_start is not None:
                    on_start()  # the runner marks its test active, the lock held
                locked.append(time.perf_counter())

            result = super().run(*args, on_start=started, **kwargs)
            self.last = (result, called, locked[0], locked[1], time.perf_counter())
            return result

    # Means, not medians: they add up (the benchmark index, measured every 10th run, counts).
    print(f"\nWhere a run's time goes: mean ms per phase over {n} runs (LocalRunner)")
    with tempfile.TemporaryDirectory() as data, TimedEngine() as engine, \
            LocalRunner(data, engine=engine) as runner:
        for page in pages:
            url = site.page_url(page)
            runner.lighthouse(url, "mobile")  # warm-up, not counted
            rows: list[dict[str, float]] = []
            for _ in range(n):
                began = time.perf_counter()
                report = runner.lighthouse(url, "mobile")
                ended = time.perf_counter()
                result, called, locked, marked, returned = engine.last
                if report.status != "success":
                    raise RuntimeError(f"run of {page} failed: {report.error}")
                ours = dict(result.phases)
                lighthouse = _lighthouse_phases(json.loads(result.artifacts["lighthouse-json"]))
                ours["lighthouse_ms"] -= sum(lighthouse.values())
                # In the order they happen; the driver's before and after Lighthouse's.
                before = ("prepare_ms", "context_ms", "config_ms")
                rows.append({"store before the run": (called - began) * 1000,
                             "store, test marked active": (marked - locked) * 1000,
                             **{k.removesuffix("_ms"): ours[k] for k in before},
                             **lighthouse,
                             "lh other (our wrapper)": ours["lighthouse_ms"],
                             **{k.removesuffix("_ms"): v for k, v in ours.items()
                                if k not in (*before, "lighthouse_ms")},
                             "engine, outside these phases":
                                 (returned - marked) * 1000 - sum(result.phases.values()),
                             "store after the run": (ended - returned) * 1000,
                             "engine.run, lock held to return": (returned - locked) * 1000,
                             "runner, in all but the lock wait":
                                 (ended - began - (locked - called)) * 1000})
            print(f"  page {page}")
            for name in rows[0]:
                print(f"    {name:<32}{statistics.fmean(r[name] for r in rows):9.1f}")


def _categories(engine: Any, site: Any, pages: list[str], n: int) -> None:
    """Seconds per engine run, performance only vs every category, interleaved."""
    from pagelab.models import LighthouseConfig

    configs = {
        "performance": LighthouseConfig(),
        "all": LighthouseConfig(categories=["performance", "accessibility", "best-practices",
                                            "seo"]),
    }
    print(f"\nCategories: seconds per engine run ({n} runs each, interleaved)")
    for page in pages:
        url = site.page_url(page)
        for config in configs.values():
            engine.run(url, "mobile", config)  # warm-up: resolves each config once
        seconds = {name: 0.0 for name in configs}
        for index in range(n):
            order = list(configs) if index % 2 == 0 else list(reversed(configs))
            for name in order:
                started = time.perf_counter()
                result = engine.run(url, "mobile", configs[name])
                seconds[name] += time.perf_counter() - started
                if result.status != "success":
                    raise RuntimeError(f"engine run failed: {result.error}")
        per_run = {name: seconds[name] / n for name in seconds}
        print(f"  {page:<6} performance only {per_run['performance']:5.2f} s/run   "
              f"all categories {per_run['all']:5.2f} s/run   "
              f"ratio {per_run['all'] / per_run['performance']:4.2f}x")


if __name__ == "__main__":
    raise SystemExit(main())
