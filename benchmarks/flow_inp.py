"""Benchmark: is every interaction's INP measured, on a quiet machine and on a loaded one?

Serves the demo site on loopback and measures two flows of the demo shop, as issue 35 did:
a navigation to ``/shop?block=50`` (or ``?block=300``) and a timespan around a click on the
slow add-to-cart button, ended by ``wait_for("#cart-count")`` (already true when the click
returns: the step ends as early as a step can). ``pagelab.measure`` runs them interleaved,
N runs each (20 by default), under two conditions, one after the other:

- **quiet**: nothing added (other jobs on the machine may run: the load average is printed);
- **loaded**: one busy-loop process per core (``while True: pass``) for the whole condition.

Prints per condition and flow the timespan steps whose INP is missing or below the
handler's busy time (an earlier event's, not the click's), the median INP and
TBT, the seconds per flow run, and ``compare(by="flow")``'s verdict on INP (the 300 ms handler
should be "b is slower"). Not a test: nothing is asserted, figures go to docs/benchmarks.md.

Usage: ``python benchmarks/flow_inp.py [--runs 20] [--conditions quiet,loaded]`` from the
repository root, after ``pagelab setup``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
INP = "interaction_to_next_paint"
TBT = "total_blocking_time"
CONDITIONS = ("quiet", "loaded")
#: The slow button's busy time in each flow (``/shop?block=``), in ms.
HANDLER_MS = (50, 300)


def _busy_loop() -> None:
    while True:
        pass


@contextmanager
def _hogs(count: int) -> Iterator[None]:
    """``count`` busy-loop processes for the duration of the block (ended by their ids)."""
    hogs = [multiprocessing.Process(target=_busy_loop, daemon=True) for _ in range(count)]
    for hog in hogs:
        hog.start()
    try:
        yield
    finally:
        for hog in hogs:
            hog.terminate()
        for hog in hogs:
            hog.join()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=20, help="runs per flow (default 20)")
    parser.add_argument("--conditions", default=",".join(CONDITIONS),
                        help="comma-separated: quiet, loaded (default both)")
    args = parser.parse_args(argv)
    conditions = [c for c in args.conditions.split(",") if c]
    if args.runs < 1 or not conditions or set(conditions) - set(CONDITIONS):
        parser.error("--runs must be >= 1 and --conditions a list of quiet, loaded")

    sys.path.insert(0, str(_ROOT / "src"))
    import pagelab
    from pagelab import Flow, LocalRunner
    from pagelab.demo import DemoServer
    from pagelab.engine import Engine, pinned_lighthouse_version

    cores = os.cpu_count() or 1
    with DemoServer() as site, Engine() as engine:
        flows = [(Flow(f"{ms} ms").navigate(site.page_url(f"shop?block={ms}"), name="shop")
                  .start_timespan("add").click("#add-slow").wait_for("#cart-count")
                  .end_timespan()) for ms in HANDLER_MS]
        runner = LocalRunner(engine=engine)
        pagelab.measure(flows, runs=1, runner=runner, progress=False)  # warm-up, not counted
        print(f"Lighthouse {pinned_lighthouse_version()}, Chromium {engine.chrome_version}, "
              f"{cores} cores; demo shop, mobile, {args.runs} runs of each flow, interleaved")
        for condition in conditions:
            load_before = os.getloadavg()[0]
            with _hogs(cores if condition == "loaded" else 0):
                started = time.monotonic()
                results = pagelab.measure(flows, runs=args.runs, runner=runner, progress=False)
                seconds = time.monotonic() - started
            frame = results.frame
            add = frame[frame["step"] == "add"]
            hogs = f"{cores} busy loops" if condition == "loaded" else "no busy loop"
            print(f"\n{condition} ({hogs}; load average {load_before:.1f} before): "
                  f"{seconds / (2 * args.runs):.1f} s per flow run")
            for flow, handler_ms in zip(flows, HANDLER_MS, strict=True):
                steps = add[add["flow"] == flow.name]
                inp = steps[INP].dropna()
                failed = int((steps["status"] != "success").sum())
                # Below the handler's busy time: the trace held an earlier event only
                # (the pointerdown), not the click whose handler is the slow part.
                short = int((inp < handler_ms).sum())
                print(f"  {flow.name:<7} INP missing {int(steps[INP].isna().sum())} of "
                      f"{len(steps)}, under the handler's time {short} (failed runs "
                      f"{failed})   median INP "
                      f"{statistics.median(inp) if len(inp) else float('nan'):6.1f} ms   "
                      f"median TBT {steps[TBT].median():6.1f} ms")
            compared = results.compare("flow", flows[0].name, flows[1].name, INP).frame
            (verdict,) = compared.loc[compared["step"] == "add", "verdict"]
            print(f"  compare 50 ms vs 300 ms on INP: {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
