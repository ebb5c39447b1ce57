"""Benchmark: a user flow on pagelab's warm engine against the same steps driven by a bare
Node script with Lighthouse's ``startFlow`` in a fresh Chromium each time.

Serves the demo site on loopback; the flow is the demo shop's: a navigation to
``/shop?block=300``, a timespan around a click on the slow (300 ms) add-to-cart button,
waiting for the cart to update. Runs it N times on each side, interleaved, the order
alternating every round, after one untimed warm-up of each:

- **engine**: ``Engine.run_flow`` (device ``mobile``): the warm Chromium and Node, one fresh
  browser context per run;
- **bare**: ``node flow.mjs`` with the pinned Node and Lighthouse: puppeteer launches Debian's
  Chromium with the engine's flags, ``startFlow(page)`` with Lighthouse's default (mobile)
  config, the same steps, the FlowResult written to a file, the browser closed; as a user of
  Lighthouse's flow API would script it.

Both hold the machine-wide engine lock for each run, so no run overlaps another Lighthouse
run; seconds are counted from the moment the lock is held (other jobs' runs on the machine
do not count). Prints seconds per flow run (median, min-max) of both and their ratio, and
the medians of the navigation's FCP / LCP and of the timespan's INP and TBT on both sides
(the same measurement: they should agree).

Usage: ``python benchmarks/flows.py [-n 7]`` from the repository root, after
``pagelab setup``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

_ROOT = Path(__file__).resolve().parent.parent
ADDED = '#cart-count[data-count="1"]'
#: (step, metric) pairs compared.
_COMPARED = (("shop", "first_contentful_paint"), ("shop", "largest_contentful_paint"),
             ("add", "interaction_to_next_paint"), ("add", "total_blocking_time"))

# The bare side: the steps of the flow, as a user of Lighthouse's flow API scripts them.
_BARE_SCRIPT = """
import {writeFile} from 'node:fs/promises';
import path from 'node:path';
import {pathToFileURL} from 'node:url';

const [engineDir, chromium, flagsJson, url, out] = process.argv.slice(2);
const load = (rel) => import(pathToFileURL(path.join(engineDir, 'node_modules', rel)).href);
const {startFlow} = await load('lighthouse/core/index.js');
const {default: puppeteer} = await load('puppeteer-core/lib/puppeteer/puppeteer-core.js');
const browser = await puppeteer.launch({executablePath: chromium, args: JSON.parse(flagsJson),
  headless: true});
try {
  const page = await browser.newPage();
  const flow = await startFlow(page, {name: 'add to cart', flags: {logLevel: 'error'}});
  await flow.navigate(url, {name: 'shop'});
  await flow.startTimespan({name: 'add'});
  await page.click('#add-slow');
  await page.waitForSelector('ADDED');
  await flow.endTimespan();
  await writeFile(out, JSON.stringify(await flow.createFlowResult()));
} finally {
  await browser.close();
}
""".replace("ADDED", ADDED)


#: ``url -> (FlowResult, seconds from holding the engine lock)``: one run of a side.
Side = Callable[[str], tuple[dict[str, Any], float]]


def _bare_side(chromium: Path, flags: tuple[str, ...], workdir: Path) -> Side:
    from pagelab.engine import engine_install
    from pagelab.engine._lock import engine_lock

    install = engine_install()
    script = workdir / "flow.mjs"
    script.write_text(_BARE_SCRIPT)
    out = workdir / "flow.json"
    # puppeteer.launch adds its own --headless; the engine's flags bring theirs.
    launch_flags = [f for f in flags if not f.startswith("--headless")]

    def run(url: str) -> tuple[dict[str, Any], float]:
        command = [str(install.node), str(script), str(install.root), str(chromium),
                   json.dumps(launch_flags), url, str(out)]
        with engine_lock():
            started = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True, timeout=300)
            seconds = time.perf_counter() - started
        result: dict[str, Any] = json.loads(out.read_text())
        return result, seconds

    return run


def _values(flow_result: dict[str, Any]) -> dict[tuple[str, str], float]:
    """The compared values of a FlowResult, read through the engine's own mapping."""
    from pagelab.engine._flows import flow_steps

    values: dict[tuple[str, str], float] = {}
    for step in flow_steps(flow_result):
        for name, metric in _COMPARED:
            if step.name == name and step.metrics is not None:
                value = getattr(step.metrics, metric)
                if value is not None:
                    values[(name, metric)] = float(value)
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("-n", type=int, default=7, help="flow runs per side (default 7)")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(_ROOT / "src"))
    from pagelab import Flow
    from pagelab.demo import DemoServer
    from pagelab.engine import Engine, find_chromium, pinned_lighthouse_version
    from pagelab.engine._engine import CHROMIUM_FLAGS

    chromium = find_chromium()
    if chromium is None:
        print("Chromium is missing: run `pagelab setup`", file=sys.stderr)
        return 1
    with DemoServer() as site, Engine() as engine, tempfile.TemporaryDirectory() as tmp:
        url = site.page_url("shop?block=300")
        flow = (Flow("add to cart").navigate(url, name="shop")
                .start_timespan("add").click("#add-slow").wait_for(ADDED).end_timespan())
        bare = _bare_side(chromium, CHROMIUM_FLAGS, Path(tmp))

        def ours(url: str) -> tuple[dict[str, Any], float]:
            held: list[float] = []
            result = engine.run_flow(flow, "mobile",
                                     on_start=lambda: held.append(time.perf_counter()))
            seconds = time.perf_counter() - held[0]
            if result.status != "success":
                raise RuntimeError(f"engine flow failed: {result.error}")
            flow_result: dict[str, Any] = json.loads(result.resources["flow-json"])
            return flow_result, seconds

        sides: dict[str, Side] = {"engine": ours, "bare": bare}
        print(f"Lighthouse {pinned_lighthouse_version()}, Chromium {engine.chrome_version}, "
              f"{os.cpu_count()} cores; demo shop flow (navigation + 300 ms click timespan), "
              f"mobile, {args.n} runs each, interleaved")
        for side in sides.values():
            side(url)  # warm-ups, not timed
        seconds: dict[str, list[float]] = {name: [] for name in sides}
        values: dict[str, list[dict[tuple[str, str], float]]] = {name: [] for name in sides}
        for index in range(args.n):
            order = list(sides) if index % 2 == 0 else list(reversed(sides))
            for name in order:
                flow_result, taken = sides[name](url)
                seconds[name].append(taken)
                values[name].append(_values(flow_result))

    print("\nSeconds per flow run: median (min-max)")
    for name in sides:
        s = seconds[name]
        print(f"  {name:<7}{statistics.median(s):6.2f} s ({min(s):.2f}-{max(s):.2f})")
    ratio = statistics.median(seconds["bare"]) / statistics.median(seconds["engine"])
    print(f"  the warm engine is {ratio:.2f}x as fast (bare median / engine median)")
    print("\nMedians (the same measurement: they should agree)")
    for key in _COMPARED:
        medians = [statistics.median(v[key] for v in values[name] if key in v)
                   for name in sides]
        diff = (medians[0] - medians[1]) / medians[1] * 100 if medians[1] else float("nan")
        print(f"  {key[0]:<5}{key[1]:<27} engine {medians[0]:8.1f}   bare {medians[1]:8.1f}"
              f"   diff {diff:+6.1f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
